//! Who sent a request: the `authenticate` middleware, which puts a [`Principal`] in
//! every request's extensions, and `GET /api/v1/whoami`, which tells it.
//!
//! In this order, for each request:
//!
//! 1. Its row of [`routes`](crate::routes()), by method (`HEAD` as `GET`) and
//!    `MatchedPath` (`/mcp` and everything under it: the `/mcp` rows). A request no route
//!    matched is the fallback's (404), answered as an [`Access::Asset`]; a path of the
//!    table asked with a method the table does not list is 405; a matched route the table
//!    does not list is 500 `unlisted_route` (fail closed). [`Access::Asset`] rows run
//!    without looking at any token.
//! 2. A bearer token: the server's own ([`ServerOptions::token`]) is
//!    [`Principal::Operator`]; any other is looked up with
//!    [`Catalog::authenticate`](toolscout_catalog::Catalog::authenticate) after a
//!    [`Catalog::catch_up`](toolscout_catalog::Catalog::catch_up) (off the async threads,
//!    so that a token revoked by another process is refused at the next request):
//!    [`Principal::Tenant`]. Anything else is 401 with one message, whether the token is
//!    unknown, revoked, or of a removed tenant, on every route but the assets, reads
//!    included: a wrong token is never read as no token.
//! 3. No token: a server without a token serves everyone as the operator (`--no-auth`);
//!    an [`Access::Read`] row serves [`Principal::Anonymous`] as [`AnonymousReads`]
//!    says; any other row is 401.
//! 4. An [`Access::Operator`] row is 403 `forbidden` for a tenant.
//! 5. A tenant over its request rate gets 429 `rate_limited` with `Retry-After`
//!    (`limit.rs`).
//!
//! [`ServerOptions::token`]: crate::ServerOptions::token

use axum::Json;
use axum::extract::{Extension, MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use toolscout_catalog::{TOKEN_PREFIX, TenantId, TenantLimits, Viewer};
use uuid::Uuid;

use crate::routes::{MCP_PATH, Row, row_of};
use crate::state::AnonymousReads;
use crate::{Access, AppError, AppState, Route, ServerOptions};

/// Who sent a request. The `authenticate` middleware of [`crate::router`] puts one in
/// the extensions of every request it lets through (but the console's static files);
/// handlers read it with `Extension<Principal>`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Principal {
    /// The server's own token; any request to a server without a token (`--no-auth`).
    Operator,
    /// A live token of a live tenant.
    #[non_exhaustive]
    Tenant {
        /// The tenant.
        id: TenantId,
        /// Its name.
        name: String,
        /// The token's id.
        token: Uuid,
        /// The tenant's limits when the request came.
        limits: TenantLimits,
    },
    /// No token, on an [`Access::Read`] route: the view [`AnonymousReads`] gives,
    /// [`Viewer::Operator`] or [`Viewer::Public`].
    Anonymous(Viewer),
}

impl Principal {
    /// The catalog as this principal may see it.
    pub fn viewer(&self) -> Viewer {
        match self {
            Principal::Operator => Viewer::Operator,
            Principal::Tenant { id, .. } => Viewer::Tenant(*id),
            Principal::Anonymous(viewer) => viewer.clone(),
        }
    }

    /// Whether the request may do what only the server's token may (a server without a
    /// token lets everyone): the operator's, not a tenant's nor an anonymous one.
    pub(crate) fn is_operator(&self) -> bool {
        matches!(self, Principal::Operator)
    }

    /// Whether the request may approve the call of a tool that requires approval: only
    /// a client that proved it holds the server's token, so never on a server without
    /// one (where anyone could).
    pub(crate) fn may_approve(&self, options: &ServerOptions) -> bool {
        self.is_operator() && options.token.is_some()
    }
}

/// The `authenticate` middleware (see the module documentation).
pub(crate) async fn authenticate(
    State((state, limiter)): State<(AppState, std::sync::Arc<crate::limit::Limiter>)>,
    mut request: Request,
    next: Next,
) -> Response {
    let route = match route_of(&request) {
        None => return next.run(request).await,
        Some(Row::Listed(route)) => route,
        Some(Row::OtherMethods(methods)) => return method_not_allowed(&methods),
        Some(Row::Unlisted) => return unlisted(&request).into_response(),
    };
    if route.access == Access::Asset {
        return next.run(request).await;
    }
    let principal = match principal_of(&state, request.headers(), route).await {
        Ok(principal) => principal,
        Err(e) => return e.into_response(),
    };
    if let Err(e) = admit(&principal, route) {
        return e.into_response();
    }
    // 6. A tenant over its rate (`limit.rs`).
    if let Principal::Tenant { id, limits, .. } = &principal
        && let Err(wait) = limiter.take(*id, limits, std::time::Instant::now())
    {
        limiter.hold(*id, wait).await;
        return rate_limited(limits, wait);
    }
    // The handlers that do several requests' work in one (a JSON-RPC batch) take the
    // others from the same bucket.
    request
        .extensions_mut()
        .insert(std::sync::Arc::clone(&limiter));
    request.extensions_mut().insert(principal);
    next.run(request).await
}

/// The request's row; `None` for a request no route matched (the fallback's).
fn route_of(request: &Request) -> Option<Row> {
    let uri = request.uri().path();
    // The MCP service is nested: under it axum sets no `MatchedPath`, and `/mcp/` is a
    // path of its own.
    let nested = uri == MCP_PATH || uri.starts_with("/mcp/");
    if nested && crate::routes().iter().any(|r| r.path == MCP_PATH) {
        return Some(row_of(request.method(), MCP_PATH));
    }
    let matched = request.extensions().get::<MatchedPath>()?;
    Some(row_of(request.method(), matched.as_str()))
}

/// The 500 of a route the router matched that the table does not list (fail closed).
fn unlisted(request: &Request) -> AppError {
    let method = request.method();
    let path = request.extensions().get::<MatchedPath>().map_or_else(
        || request.uri().path().to_owned(),
        |m| m.as_str().to_owned(),
    );
    tracing::error!(%method, path, "a route without a row in routes() was refused");
    AppError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "unlisted_route",
        format!("{method} {path} is not in the server's route table, so nobody may use it"),
    )
}

/// The 405 of a path asked with a method it does not answer, as axum words it (no body,
/// the methods in `Allow`).
fn method_not_allowed(methods: &[&Method]) -> Response {
    let mut allow: Vec<&str> = Vec::new();
    for m in methods {
        allow.push(m.as_str());
        if **m == Method::GET {
            allow.push(Method::HEAD.as_str());
        }
    }
    let mut response = StatusCode::METHOD_NOT_ALLOWED.into_response();
    if let Ok(v) = HeaderValue::from_str(&allow.join(",")) {
        response.headers_mut().insert(header::ALLOW, v);
    }
    response
}

/// Who sent the request (steps 2 and 3 of the module documentation).
async fn principal_of(
    state: &AppState,
    headers: &HeaderMap,
    route: &Route,
) -> Result<Principal, AppError> {
    let own = state.options().token.as_deref();
    if let Some(presented) = bearer(headers) {
        if own.is_some_and(|t| same(presented.as_bytes(), t.as_bytes())) {
            return Ok(Principal::Operator);
        }
        return match tenant_of(state, presented).await? {
            Some(who) => Ok(Principal::Tenant {
                id: who.tenant,
                name: who.name,
                token: who.token,
                limits: who.limits,
            }),
            None => Err(wrong_token()),
        };
    }
    if own.is_none() {
        return Ok(Principal::Operator);
    }
    if route.access != Access::Read {
        return Err(no_token());
    }
    match anonymous_view(state).await? {
        Some(viewer) => Ok(Principal::Anonymous(viewer)),
        None => Err(no_token_for_reads()),
    }
}

/// The tenant of a presented token, after catching up with other processes' writes (a
/// revocation among them).
async fn tenant_of(
    state: &AppState,
    presented: &str,
) -> Result<Option<toolscout_catalog::Authenticated>, AppError> {
    // Only a tenant token is worth reading the store for.
    if !presented.starts_with(TOKEN_PREFIX) {
        return Ok(None);
    }
    let toolbox = state.toolbox().clone();
    let presented = presented.to_owned();
    let found = tokio::task::spawn_blocking(move || {
        let catalog = toolbox.catalog();
        catalog.catch_up().map(|_| catalog.authenticate(&presented))
    })
    .await;
    match found {
        Ok(Ok(who)) => Ok(who),
        Ok(Err(e)) => Err(unreadable(&e)),
        Err(e) => Err(unreadable(&e)),
    }
}

/// The view of a request without a token on a read, `None` when there is none.
async fn anonymous_view(state: &AppState) -> Result<Option<Viewer>, AppError> {
    match state.options().anonymous_reads {
        AnonymousReads::Off => Ok(None),
        AnonymousReads::Public => Ok(Some(Viewer::Public)),
        AnonymousReads::Auto => {
            let catalog = state.toolbox().catalog();
            // Once there is a tenant, the public view; until then, a tenant another
            // process added must count at this request, as a revocation does.
            if catalog.has_tenants() {
                return Ok(Some(Viewer::Public));
            }
            let toolbox = state.toolbox().clone();
            let tenants = tokio::task::spawn_blocking(move || {
                let catalog = toolbox.catalog();
                catalog.catch_up().map(|_| catalog.has_tenants())
            })
            .await;
            let tenants = match tenants {
                Ok(Ok(tenants)) => tenants,
                Ok(Err(e)) => return Err(unreadable(&e)),
                Err(e) => return Err(unreadable(&e)),
            };
            Ok(Some(if tenants {
                Viewer::Public
            } else {
                Viewer::Operator
            }))
        }
    }
}

/// Whether the principal may use the route (step 4 of the module documentation).
fn admit(principal: &Principal, route: &Route) -> Result<(), AppError> {
    match principal {
        Principal::Tenant { .. } if route.access == Access::Operator => Err(AppError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "only the server's own token may use this route",
        )),
        _ => Ok(()),
    }
}

/// The 429 of a tenant over its rate: it names only the tenant's own limits.
fn rate_limited(limits: &TenantLimits, wait: std::time::Duration) -> Response {
    let seconds = crate::limit::retry_after(wait);
    let mut response = AppError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
        format!(
            "this tenant may send {} requests a second (bursts of {}): try again in {seconds} s",
            limits.requests_per_second, limits.burst
        ),
    )
    .with_details(json!({
        "requestsPerSecond": limits.requests_per_second,
        "burst": limits.burst,
        "retryAfter": seconds,
    }))
    .into_response();
    if let Ok(v) = HeaderValue::from_str(&seconds.to_string()) {
        response.headers_mut().insert(header::RETRY_AFTER, v);
    }
    response
}

/// The one answer to a token that is not the server's nor a live tenant token: the same
/// whether it is unknown, revoked, or of a removed tenant.
fn wrong_token() -> AppError {
    AppError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "the bearer token is not valid here: send the server's token or a live tenant token",
    )
}

fn no_token() -> AppError {
    AppError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "this server needs a token for everything but GET reads: send Authorization: Bearer <token>",
    )
}

fn no_token_for_reads() -> AppError {
    AppError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "this server needs a token for this read: send Authorization: Bearer <token>",
    )
}

fn unreadable(e: &dyn std::fmt::Display) -> AppError {
    AppError::unavailable(format!(
        "the catalog cannot be read to check the request's token: {e}"
    ))
}

/// The bearer token a request carries: `Authorization: Bearer <token>`, the scheme in
/// any case (RFC 9110 §11.1).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Compares without stopping at the first difference, so that timing tells nothing (but
/// the length).
fn same(a: &[u8], b: &[u8]) -> bool {
    subtle::ConstantTimeEq::ct_eq(a, b).into()
}

/// `GET /api/v1/whoami`: who the server takes the request's sender for,
/// `{"kind": "operator" | "tenant" | "anonymous"}`, with a tenant's name and limits.
pub(crate) async fn whoami(Extension(principal): Extension<Principal>) -> Json<Value> {
    Json(match principal {
        Principal::Operator => json!({"kind": "operator"}),
        Principal::Tenant { name, limits, .. } => {
            json!({"kind": "tenant", "tenant": name, "limits": limits})
        }
        Principal::Anonymous(_) => json!({"kind": "anonymous"}),
    })
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::routing::get;
    use tower::ServiceExt;

    use super::*;

    fn state() -> (tempfile::TempDir, AppState) {
        let dir = tempfile::tempdir().unwrap();
        let catalog = toolscout_catalog::Catalog::open(dir.path(), &[]).unwrap();
        let index = toolscout_search::SearchIndex::in_memory().unwrap();
        let toolbox =
            toolscout_discover::Toolbox::new(catalog, index, toolscout_invoke::Invoker::default())
                .unwrap();
        (dir, AppState::new(toolbox, ServerOptions::default()))
    }

    async fn get_status(app: &Router, uri: &str) -> (StatusCode, Value) {
        let request = Request::get(uri).body(Body::empty()).unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    #[tokio::test]
    async fn a_route_without_a_row_is_refused() {
        let (_dir, state) = state();
        // A route registered beside the table, as a slip would: nobody may use it.
        let app = Router::new()
            .route("/api/v1/whoami", get(whoami))
            .route("/unlisted", get(|| async { "reached" }))
            .layer(axum::middleware::from_fn_with_state(
                (
                    state.clone(),
                    std::sync::Arc::new(crate::limit::Limiter::default()),
                ),
                authenticate,
            ))
            .with_state(state);
        let (status, body) = get_status(&app, "/unlisted").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["error"]["code"], "unlisted_route");
        let (status, body) = get_status(&app, "/api/v1/whoami").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, json!({"kind": "operator"}));
    }

    #[test]
    fn principals_see_their_view() {
        let id = Uuid::now_v7();
        let tenant = Principal::Tenant {
            id,
            name: "acme".to_owned(),
            token: Uuid::now_v7(),
            limits: TenantLimits::default(),
        };
        assert_eq!(tenant.viewer(), Viewer::Tenant(id));
        assert_eq!(Principal::Operator.viewer(), Viewer::Operator);
        assert_eq!(
            Principal::Anonymous(Viewer::Public).viewer(),
            Viewer::Public
        );
        let options = ServerOptions::default().with_token(Some("t"));
        assert!(Principal::Operator.may_approve(&options));
        assert!(!tenant.may_approve(&options));
        assert!(!Principal::Operator.may_approve(&ServerOptions::default()));
    }
}
