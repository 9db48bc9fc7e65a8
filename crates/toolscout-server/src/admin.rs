//! `/admin/tenants`: the operator's REST API for tenants and their tokens.
//!
//! Every route here is [`Access::Operator`](crate::Access::Operator): the server's own
//! token only (a tenant's token gets 403 `forbidden`, no token 401, before any handler
//! runs; a server without a token of its own, `--no-auth`, takes every request for the
//! operator's, these included). Each one is a call of the operator's handle
//! ([`Operator::add_tenant`](toolscout_catalog::Operator::add_tenant) and its siblings),
//! after catching up with other processes' writes (a `toolscout tenant` command beside the
//! server).
//!
//! | route | body | answer |
//! |---|---|---|
//! | `GET /admin/tenants` | | `{"items": [tenant…]}`, removed tenants too (with `removedAt`), oldest first |
//! | `POST /admin/tenants` | `{"name", "limits"?}` | 201 `{"tenant", "token"}`: the token's text (`token.text`), shown this once |
//! | `GET /admin/tenants/{tenant}` | | the tenant |
//! | `PATCH /admin/tenants/{tenant}` | `{"limits"}` | the tenant with the limits given replaced (the others stay); they hold from its next request |
//! | `DELETE /admin/tenants/{tenant}` | | the removed tenant: every token of it revoked; its bundles stay its own, seen by the operator only |
//! | `POST /admin/tenants/{tenant}/tokens` | `{"label"?}` | 201 `{"tenant", "token"}`: another token, its text shown this once |
//! | `DELETE /admin/tenants/{tenant}/tokens/{token}` | | the token revoked (`revokedAt`); a token id of another tenant is 404 |
//!
//! `{tenant}` is a live tenant's name or any tenant's id (`tenantID`); `{token}` a
//! token's id (`tokenID`), never its text. `limits` is
//! `{"maxTools", "maxBundles", "requestsPerSecond", "burst"}`, each optional (a new
//! tenant's defaults: 10,000, 100, 50, 100), the last two at least 1. Bodies refuse
//! unknown fields.
//!
//! A tenant as answered: `{"tenantID", "name", "limits", "createdAt", "removedAt"?,
//! "tokens": [{"tokenID", "prefix", "label", "createdAt", "revokedAt"?}]}`. A token's
//! text is in the answer that makes it and nowhere else: the catalog keeps only its
//! SHA-256 digest, so no later answer can hold it. Every answer here is
//! `Cache-Control: no-store`.
//!
//! Errors, as the catalog words them ([`AppError`]): a name that breaks
//! [`check_tenant_name`], a bad limit, an unknown field or a query string on a `DELETE`
//! is 400 `invalid` naming the rule, a live tenant's name 409 `conflict`, an unknown
//! tenant or token 404 `not_found`; nothing is written then.
//!
//! Sharing a bundle and giving it an owner are also the operator's:
//! `PATCH /tools/bundles/{bundle}` with `shared` (a bool) or `owner` (a tenant's name or
//! id, `null` for the operator), beside `isEnabled`, at least one of the three. Each is
//! the catalog's own operation, run in an order that meets any refusal before the first
//! write, so a refused request changes nothing. A tenant that sends `shared` or `owner`
//! is refused with 403 `forbidden` before its bundle is looked at.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolscout_catalog::{Bundle, NewToken, Operator, Tenant, TenantLimits, check_tenant_name};
use uuid::Uuid;

use crate::{AppError, AppState};

type Body<T> = Result<Json<T>, JsonRejection>;

/// Limits as a body gives them: each one given replaces that limit.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Limits {
    max_tools: Option<u32>,
    max_bundles: Option<u32>,
    requests_per_second: Option<u32>,
    burst: Option<u32>,
}

impl Limits {
    /// Refuses a rate or a burst of 0.
    ///
    /// **Rationale:** a tenant that may send nothing is one to remove; a rate of 0
    /// would make every one of its requests wait forever for a token of its bucket.
    fn check(&self) -> Result<(), AppError> {
        for (field, value) in [
            ("requestsPerSecond", self.requests_per_second),
            ("burst", self.burst),
        ] {
            if value == Some(0) {
                return Err(AppError::invalid(format!(
                    "invalid limits: {field} must be at least 1 (to stop a tenant, remove it or revoke its tokens)"
                )));
            }
        }
        Ok(())
    }

    /// `base` with the limits given here.
    fn apply(&self, base: TenantLimits) -> TenantLimits {
        TenantLimits {
            max_tools: self.max_tools.unwrap_or(base.max_tools),
            max_bundles: self.max_bundles.unwrap_or(base.max_bundles),
            requests_per_second: self.requests_per_second.unwrap_or(base.requests_per_second),
            burst: self.burst.unwrap_or(base.burst),
        }
    }
}

/// The body of `POST /admin/tenants`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct NewTenant {
    name: String,
    #[serde(default)]
    limits: Limits,
}

/// The body of `PATCH /admin/tenants/{tenant}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PatchTenant {
    limits: Limits,
}

/// The body of `POST /admin/tenants/{tenant}/tokens`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct NewTokenBody {
    #[serde(default)]
    label: String,
}

/// A token just made, as answered: what the catalog keeps of it, and its text.
#[derive(Serialize)]
struct Revealed<'a> {
    #[serde(flatten)]
    info: &'a toolscout_catalog::TokenInfo,
    text: &'a str,
}

fn made(tenant: &Tenant, token: &NewToken) -> Value {
    json!({
        "tenant": tenant,
        "token": Revealed { info: token.info(), text: token.reveal() },
    })
}

/// An answer that no cache keeps: it may hold a token's text, and holds the operator's
/// view of the tenants.
fn answer(status: StatusCode, body: &impl Serialize) -> Response {
    let mut response = (status, Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Runs `f` on the operator's handle ([`Operator`]; the `/admin` routes are the operator's
/// alone) off the async threads (a write takes a cross-process lock and
/// fsyncs), after reading what other processes wrote: a tenant the CLI added a moment
/// ago is found by name.
async fn on_catalog<T, F>(state: &AppState, f: F) -> Result<T, AppError>
where
    T: Send + 'static,
    F: FnOnce(Operator<'_>) -> Result<T, AppError> + Send + 'static,
{
    let toolbox = state.toolbox().clone();
    tokio::task::spawn_blocking(move || {
        let catalog = toolbox.catalog();
        catalog.catch_up()?;
        f(catalog.operator())
    })
    .await
    .map_err(|e| AppError::unavailable(format!("the catalog operation stopped: {e}")))?
}

/// `GET /admin/tenants`.
pub(crate) async fn list_tenants(State(state): State<AppState>) -> Result<Response, AppError> {
    let tenants = on_catalog(&state, |c| Ok(c.tenants())).await?;
    Ok(answer(StatusCode::OK, &json!({ "items": tenants })))
}

/// `POST /admin/tenants`.
pub(crate) async fn add_tenant(
    State(state): State<AppState>,
    body: Body<NewTenant>,
) -> Result<Response, AppError> {
    let Json(body) = body?;
    check_tenant_name(&body.name)?;
    body.limits.check()?;
    let limits = body.limits.apply(TenantLimits::default());
    let made = on_catalog(&state, move |c| {
        let (tenant, token) = c.add_tenant(&body.name, limits)?;
        Ok(made(&tenant, &token))
    })
    .await?;
    Ok(answer(StatusCode::CREATED, &made))
}

/// `GET /admin/tenants/{tenant}`.
pub(crate) async fn get_tenant(
    State(state): State<AppState>,
    Path(key): Path<String>,
) -> Result<Response, AppError> {
    let tenant = on_catalog(&state, move |c| Ok(c.tenant(&key)?)).await?;
    Ok(answer(StatusCode::OK, &tenant))
}

/// `PATCH /admin/tenants/{tenant}`.
pub(crate) async fn patch_tenant(
    State(state): State<AppState>,
    Path(key): Path<String>,
    body: Body<PatchTenant>,
) -> Result<Response, AppError> {
    let Json(body) = body?;
    body.limits.check()?;
    let tenant = on_catalog(&state, move |c| {
        let tenant = c.tenant(&key)?;
        Ok(c.set_tenant_limits(tenant.id, body.limits.apply(tenant.limits))?)
    })
    .await?;
    Ok(answer(StatusCode::OK, &tenant))
}

/// `DELETE /admin/tenants/{tenant}`: the tenant is removed; its bundles stay.
///
/// A query string is refused rather than ignored: the plan's `?purge=true` (deleting the
/// tenant's bundles too) does not exist, and a client asking for it must not be told
/// it happened.
pub(crate) async fn remove_tenant(
    State(state): State<AppState>,
    Path(key): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    if query.is_some_and(|q| !q.is_empty()) {
        return Err(AppError::invalid(
            "DELETE /admin/tenants/{tenant} takes no query parameters: removing a tenant revokes its tokens and keeps its bundles; delete those with DELETE /tools/bundles/{bundle}",
        ));
    }
    let tenant = on_catalog(&state, move |c| {
        let tenant = c.tenant(&key)?;
        Ok(c.remove_tenant(tenant.id)?)
    })
    .await?;
    Ok(answer(StatusCode::OK, &tenant))
}

/// `POST /admin/tenants/{tenant}/tokens`.
pub(crate) async fn add_token(
    State(state): State<AppState>,
    Path(key): Path<String>,
    body: Body<NewTokenBody>,
) -> Result<Response, AppError> {
    let Json(body) = body?;
    let made = on_catalog(&state, move |c| {
        let tenant = c.tenant(&key)?;
        let token = c.add_token(tenant.id, &body.label)?;
        // The tenant as it is now: its new token listed (without its text).
        let tenant = c.tenant(&tenant.id.to_string())?;
        Ok(made(&tenant, &token))
    })
    .await?;
    Ok(answer(StatusCode::CREATED, &made))
}

/// `DELETE /admin/tenants/{tenant}/tokens/{token}`: the token, revoked. Revoking a
/// revoked token changes nothing and answers it as it is.
pub(crate) async fn revoke_token(
    State(state): State<AppState>,
    Path((key, token)): Path<(String, String)>,
) -> Result<Response, AppError> {
    // The segment is not echoed: it could be a token's text, pasted where its id goes.
    let token = Uuid::try_parse(&token).map_err(|_| {
        AppError::invalid(
            "a token is revoked by its id (tokenID, as GET /admin/tenants/{tenant} lists them), never by its text",
        )
    })?;
    let info = on_catalog(&state, move |c| {
        let tenant = c.tenant(&key)?;
        // Another tenant's token is not this tenant's to revoke: as if it did not exist.
        if !tenant.tokens.iter().any(|k| k.id == token) {
            return Err(toolscout_catalog::Error::TokenNotFound { token }.into());
        }
        Ok(c.revoke_token(token)?)
    })
    .await?;
    Ok(answer(StatusCode::OK, &info))
}

/// The operator's part of `PATCH /tools/bundles/{bundle}`: the bundle's owner (`Some(None)`
/// gives it back to the operator; a tenant by name or id), its sharing and its enabled
/// flag, each through the catalog's own operation
/// ([`Operator::set_bundle_owner`], [`Operator::set_bundle_shared`],
/// [`CatalogView::patch_bundle`](toolscout_catalog::CatalogView::patch_bundle)).
///
/// Each change is its own write. They run in the order that meets any refusal first, so a
/// refused request changes nothing: owner and sharing are refused for a built-in bundle,
/// the enabled flag for a deleted one, and an owner whose live bundle has the slug
/// before anything else is written. Each operation leaves a bundle that already is as
/// asked untouched, so a request may be sent again.
pub(crate) async fn change_bundle(
    state: &AppState,
    id: Uuid,
    is_enabled: Option<bool>,
    shared: Option<bool>,
    owner: Option<Option<String>>,
) -> Result<Bundle, AppError> {
    on_catalog(state, move |c| {
        let mut bundle = c.bundle(id)?;
        let owner = match owner {
            Some(Some(key)) => Some(Some(c.tenant(&key)?.id)),
            Some(None) => Some(None),
            None => None,
        };
        let deleted = bundle.soft_deleted_at.is_some();
        if let (true, Some(on)) = (deleted, is_enabled) {
            bundle = c.patch_bundle(id, on)?;
        }
        if let Some(owner) = owner {
            bundle = c.set_bundle_owner(id, owner)?;
        }
        if let Some(shared) = shared {
            bundle = c.set_bundle_shared(id, shared)?;
        }
        if let (false, Some(on)) = (deleted, is_enabled) {
            bundle = c.patch_bundle(id, on)?;
        }
        Ok(bundle)
    })
    .await
}
