//! The REST API of the tools spec, under `/tools`: bundles, tool versions, invoke,
//! listing and search. Bodies use the spec's camelCase (`bundleID`, `displayName`,
//! `isEnabled`, `argSchema`, `impl`…).

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Extension, Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolscout_catalog::{AuthoredTool, Bundle, BundlePut, BundleQuery, Tool, ToolQuery};
use toolscout_search::SearchQuery;
use uuid::Uuid;

use crate::error::AppError;
use crate::manifest::{InvokeBody, outcome_response, ready};
use crate::{AppState, Principal};

type Body<T> = Result<Json<T>, JsonRejection>;
type Params<T> = Result<Query<T>, QueryRejection>;

/// A bundle as the API shows it (`isShared` when it is shared).
pub fn bundle_json(b: &Bundle) -> Value {
    let mut v = json!({
        "bundleID": b.id,
        "slug": b.slug,
        "displayName": b.display_name,
        "description": b.description,
        "isEnabled": b.is_enabled,
        "isBuiltIn": b.is_built_in,
        "createdAt": b.created_at,
        "modifiedAt": b.modified_at,
    });
    if let Some(at) = b.soft_deleted_at {
        v["softDeletedAt"] = json!(at);
    }
    if b.shared {
        v["isShared"] = json!(true);
    }
    v
}

/// [`bundle_json`] for `principal`: the operator also sees which tenant owns a bundle, a
/// tenant whether it is its own (`isOwn`: the bundles it may change; the shared and
/// built-in ones it only reads and calls).
fn bundle_json_for(b: &Bundle, principal: &Principal) -> Value {
    let mut v = bundle_json(b);
    match principal {
        Principal::Operator => {
            if let Some(owner) = b.owner {
                v["ownerTenantID"] = json!(owner);
            }
        }
        Principal::Tenant { id, .. } => v["isOwn"] = json!(b.owner == Some(*id)),
        Principal::Anonymous(_) => {}
    }
    v
}

/// A tool as the API shows it: its `tool.json`, plus `isCallable`, `disabledReason`,
/// `callCount` and `lastCalledAt`.
pub fn tool_json(t: &Tool) -> Value {
    let file = t.to_file();
    let mut v = serde_json::to_value(&file).unwrap_or_else(|_| json!({}));
    v["isCallable"] = json!(t.is_callable());
    if let Some(r) = &t.disabled_reason {
        v["disabledReason"] = json!(r.to_string());
    }
    v["callCount"] = json!(t.usage.call_count);
    if let Some(at) = t.usage.last_called_at {
        v["lastCalledAt"] = json!(at);
    }
    v
}

/// Runs catalog work off the async threads: a write takes a cross-process file lock,
/// fsyncs and commits the search index, and one slow write must not stall every other
/// request.
///
/// `f` gets the catalog as `principal` sees it: a bundle or tool outside the view is
/// answered as one that does not exist, and a tenant writes only its own bundles.
pub(crate) async fn blocking<T, F>(
    state: &AppState,
    principal: &Principal,
    f: F,
) -> Result<T, AppError>
where
    T: Send + 'static,
    F: FnOnce(toolscout_catalog::CatalogView<'_>) -> Result<T, toolscout_catalog::Error>
        + Send
        + 'static,
{
    let toolbox = state.toolbox().clone();
    let viewer = principal.viewer();
    tokio::task::spawn_blocking(move || f(toolbox.catalog().view(&viewer)))
        .await
        .map_err(|e| AppError::unavailable(format!("the catalog operation stopped: {e}")))?
        .map_err(AppError::from)
}

fn page_json(items: Vec<Value>, next: Option<String>) -> Value {
    let mut v = json!({ "items": items });
    if let Some(t) = next {
        v["nextPageToken"] = json!(t);
    }
    v
}

fn parse_id(what: &str, raw: &str) -> Result<Uuid, AppError> {
    Uuid::try_parse(raw).map_err(|_| {
        AppError::invalid(format!(
            "{what} {raw:?} is not a UUID; bundle ids are UUIDv7 like 018faf50-b7b6-7a01-9a05-a22a6e0af101"
        ))
    })
}

fn parse_ids(raw: Option<&str>) -> Result<Vec<Uuid>, AppError> {
    raw.unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| parse_id("bundleIDs entry", s))
        .collect()
}

fn page_size(size: Option<usize>) -> usize {
    size.unwrap_or(0)
        .min(toolscout_catalog::MAX_LISTING_PAGE_SIZE)
}

/// The body of a bundle PUT.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PutBundle {
    slug: String,
    #[serde(default)]
    display_name: String,
    #[serde(default)]
    description: String,
    #[serde(default = "yes")]
    is_enabled: bool,
}

fn yes() -> bool {
    true
}

/// The body of a tool PATCH: only the enabled flag changes.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Patch {
    is_enabled: bool,
}

/// The body of a bundle PATCH: any of the enabled flag, `shared` and `owner` (a tenant's
/// name or id, `null` for the operator), at least one. `shared` and `owner` are the
/// operator's ([`crate::admin::change_bundle`]).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PatchBundle {
    #[serde(default)]
    is_enabled: Option<bool>,
    #[serde(default)]
    shared: Option<bool>,
    /// `None`: not given; `Some(None)`: `"owner": null`.
    #[serde(default, deserialize_with = "given")]
    owner: Option<Option<String>>,
}

/// A field that was given, `null` included (`Some(None)`), apart from one left out
/// (`None`, by `#[serde(default)]`).
fn given<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// `PUT /tools/bundles/{bundleID}`.
pub(crate) async fn put_bundle(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    body: Body<PutBundle>,
) -> Result<Json<Value>, AppError> {
    let id = parse_id("bundleID", &id)?;
    let Json(b) = body?;
    let put = BundlePut::new(b.slug)
        .with_display_name(b.display_name)
        .with_description(b.description)
        .with_enabled(b.is_enabled);
    let bundle = blocking(&state, &principal, move |c| c.put_bundle(id, &put)).await?;
    Ok(Json(bundle_json_for(&bundle, &principal)))
}

/// `POST /tools/bundles`: a new bundle whose id the server makes (a UUIDv7), 201 with the
/// bundle and its `Location`; the body is a bundle PUT's. A slug the caller's bundles
/// already have is a conflict, as the PUT of a new id would be.
pub(crate) async fn create_bundle(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    body: Body<PutBundle>,
) -> Result<Response, AppError> {
    let Json(b) = body?;
    let id = Uuid::now_v7();
    let put = BundlePut::new(b.slug)
        .with_display_name(b.display_name)
        .with_description(b.description)
        .with_enabled(b.is_enabled);
    let bundle = blocking(&state, &principal, move |c| c.put_bundle(id, &put)).await?;
    let location = format!("/tools/bundles/{}", bundle.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(bundle_json_for(&bundle, &principal)),
    )
        .into_response())
}

/// `PATCH /tools/bundles/{bundleID}` with any of `isEnabled`, `shared` and `owner`.
/// `shared` and `owner` are the operator's: a tenant that sends them is refused (403
/// `forbidden`) before its bundle is looked at, and nothing changes.
pub(crate) async fn patch_bundle(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
    body: Body<PatchBundle>,
) -> Result<Json<Value>, AppError> {
    let id = parse_id("bundleID", &id)?;
    let Json(p) = body?;
    let bundle = match p {
        PatchBundle {
            is_enabled: None,
            shared: None,
            owner: None,
        } => {
            return Err(AppError::invalid(
                "a bundle PATCH changes isEnabled, shared or owner: send at least one",
            ));
        }
        PatchBundle {
            is_enabled: Some(on),
            shared: None,
            owner: None,
        } => blocking(&state, &principal, move |c| c.patch_bundle(id, on)).await?,
        PatchBundle { .. } if !principal.is_operator() => {
            return Err(AppError::new(
                axum::http::StatusCode::FORBIDDEN,
                "forbidden",
                "only the server's own token may share a bundle or change its owner",
            ));
        }
        PatchBundle {
            is_enabled,
            shared,
            owner,
        } => crate::admin::change_bundle(&state, id, is_enabled, shared, owner).await?,
    };
    Ok(Json(bundle_json_for(&bundle, &principal)))
}

/// `DELETE /tools/bundles/{bundleID}` (soft delete).
pub(crate) async fn delete_bundle(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Json<Value>, AppError> {
    let id = parse_id("bundleID", &id)?;
    let bundle = blocking(&state, &principal, move |c| c.delete_bundle(id)).await?;
    Ok(Json(bundle_json_for(&bundle, &principal)))
}

/// The query of `GET /tools/bundles`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListBundles {
    #[serde(rename = "bundleIDs")]
    bundle_ids: Option<String>,
    #[serde(default)]
    include_disabled: bool,
    #[serde(default)]
    include_deleted: bool,
    #[serde(alias = "recommendedPageSize")]
    page_size: Option<usize>,
    page_token: Option<String>,
}

/// `GET /tools/bundles`.
pub(crate) async fn list_bundles(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: Params<ListBundles>,
) -> Result<Json<Value>, AppError> {
    let Query(q) = query?;
    ready(&state).await?;
    let query = BundleQuery::default()
        .with_bundle_ids(&parse_ids(q.bundle_ids.as_deref())?)
        .with_include_disabled(q.include_disabled)
        .with_include_deleted(q.include_deleted)
        .with_page_size(page_size(q.page_size))
        .with_page_token(q.page_token.as_deref());
    let page = blocking(&state, &principal, move |c| c.list_bundles(&query)).await?;
    let items = page
        .items
        .iter()
        .map(|b| bundle_json_for(b, &principal))
        .collect();
    Ok(Json(page_json(items, page.next_page_token)))
}

/// The path of one tool version.
#[derive(Debug, Deserialize)]
pub(crate) struct ToolPath {
    bundle: String,
    slug: String,
    version: String,
}

/// `PUT /tools/bundles/{bundleID}/tools/{slug}/version/{v}` with a `tool.json`-like body.
/// `bundleID`, `slug` and `version` may be left out; when present they must match the
/// path. `type` is required (`"native"`/`"go"` or `"http"`).
pub(crate) async fn put_tool(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(p): Path<ToolPath>,
    body: Body<Map<String, Value>>,
) -> Result<Json<Value>, AppError> {
    let bundle = parse_id("bundleID", &p.bundle)?;
    let Json(mut body) = body?;
    for (key, expected) in [
        ("bundleID", bundle.to_string()),
        ("slug", p.slug.clone()),
        ("version", p.version.clone()),
    ] {
        match body.get(key) {
            None | Some(Value::Null) => {
                body.insert(key.to_owned(), json!(expected));
            }
            Some(v) if v.as_str().is_some_and(|s| s == expected) => {}
            Some(v)
                if key == "bundleID"
                    && v.as_str().and_then(|s| Uuid::try_parse(s).ok()) == Some(bundle) => {}
            Some(v) => {
                return Err(AppError::invalid(format!(
                    "the body's {key} {v} does not match the path's {expected:?}; leave it out or make them equal"
                )));
            }
        }
    }
    let AuthoredTool { put, .. } = AuthoredTool::from_json(body, Some(bundle))?;
    // A built-in tool's name is refused by the catalog itself (`Error::ReservedName`),
    // for this route and every other way in.
    let tool = blocking(&state, &principal, move |c| {
        c.put_tool(bundle, &p.slug, &p.version, &put)
    })
    .await?;
    Ok(Json(tool_json(&tool)))
}

/// `PATCH /tools/bundles/{bundleID}/tools/{slug}/version/{v}` with `{"isEnabled": …}`.
pub(crate) async fn patch_tool(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(p): Path<ToolPath>,
    body: Body<Patch>,
) -> Result<Json<Value>, AppError> {
    let bundle = parse_id("bundleID", &p.bundle)?;
    let Json(patch) = body?;
    let tool = blocking(&state, &principal, move |c| {
        c.patch_tool(bundle, &p.slug, &p.version, patch.is_enabled)
    })
    .await?;
    Ok(Json(tool_json(&tool)))
}

/// `DELETE /tools/bundles/{bundleID}/tools/{slug}/version/{v}` (hard delete).
pub(crate) async fn delete_tool(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(p): Path<ToolPath>,
) -> Result<Json<Value>, AppError> {
    let bundle = parse_id("bundleID", &p.bundle)?;
    let tool = blocking(&state, &principal, move |c| {
        c.delete_tool(bundle, &p.slug, &p.version)
    })
    .await?;
    Ok(Json(tool_json(&tool)))
}

/// `GET /tools/bundles/{bundleID}/tools/{slug}/version/{v}`.
pub(crate) async fn get_tool(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(p): Path<ToolPath>,
) -> Result<Json<Value>, AppError> {
    let bundle = parse_id("bundleID", &p.bundle)?;
    ready(&state).await?;
    let tool = state
        .toolbox()
        .catalog()
        .view(&principal.viewer())
        .get_tool(bundle, &p.slug, &p.version)?;
    Ok(Json(tool_json(&tool)))
}

/// `POST /tools/bundles/{bundleID}/tools/{slug}/version/{v}/invoke` with `{"args": …}`.
pub(crate) async fn invoke_tool(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(p): Path<ToolPath>,
    body: Body<InvokeBody>,
) -> Result<Response, AppError> {
    let bundle = parse_id("bundleID", &p.bundle)?;
    let Json(body) = body?;
    let approved = body.approval(&state, &principal)?;
    let tool = state
        .toolbox()
        .catalog()
        .view(&principal.viewer())
        .get_tool(bundle, &p.slug, &p.version)?;
    let outcome = state
        .call_tool_for(&principal.viewer(), &tool, body.args, approved)
        .await;
    Ok(outcome_response(&outcome))
}

/// The query of `GET /tools/tools`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListTools {
    tags: Option<String>,
    #[serde(rename = "bundleIDs")]
    bundle_ids: Option<String>,
    #[serde(default)]
    include_disabled: bool,
    #[serde(alias = "recommendedPageSize")]
    page_size: Option<usize>,
    page_token: Option<String>,
}

/// `GET /tools/tools`: tags (comma-separated, all required), bundleIDs, includeDisabled,
/// pageSize (or recommendedPageSize), pageToken.
pub(crate) async fn list_tools(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: Params<ListTools>,
) -> Result<Json<Value>, AppError> {
    let Query(q) = query?;
    ready(&state).await?;
    let tags: Vec<&str> = q
        .tags
        .as_deref()
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    let query = ToolQuery::default()
        .with_tags(&tags)
        .with_bundle_ids(&parse_ids(q.bundle_ids.as_deref())?)
        .with_include_disabled(q.include_disabled)
        .with_page_size(page_size(q.page_size))
        .with_page_token(q.page_token.as_deref());
    let page = blocking(&state, &principal, move |c| c.list_tools(&query)).await?;
    let items = page.items.iter().map(tool_json).collect();
    Ok(Json(page_json(items, page.next_page_token)))
}

/// The query of `GET /tools/tools/search`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SearchTools {
    q: Option<String>,
    #[serde(default)]
    include_disabled: bool,
    page_size: Option<usize>,
    page_token: Option<String>,
}

/// `GET /tools/tools/search`: q, includeDisabled, pageSize (1 to 100), pageToken.
pub(crate) async fn search_tools(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: Params<SearchTools>,
) -> Result<Json<Value>, AppError> {
    let Query(q) = query?;
    ready(&state).await?;
    let text = q.q.unwrap_or_default();
    if text.trim().is_empty() {
        return Err(AppError::invalid(
            "search needs words: pass them as ?q=…; to list tools use GET /tools/tools",
        ));
    }
    let query = SearchQuery::new(text)
        .with_include_disabled(q.include_disabled)
        .with_limit(
            q.page_size
                .unwrap_or(toolscout_search::DEFAULT_PAGE_SIZE)
                .clamp(1, toolscout_search::MAX_PAGE_SIZE),
        )
        .with_page_token(q.page_token);
    let toolbox = state.toolbox_for(principal.viewer());
    let hits = tokio::task::spawn_blocking(move || toolbox.search(&query))
        .await
        .map_err(|e| AppError::unavailable(format!("search failed: {e}")))?
        .map_err(|e| match e {
            toolscout_discover::Error::Search(s) => {
                AppError::invalid(format!("invalid search: {s}"))
            }
            other => other.into(),
        })?;
    let items: Vec<Value> = hits
        .hits
        .iter()
        .map(|(t, h)| {
            let mut v = tool_json(t);
            v["match"] = json!({"tier": h.tier.as_str(), "field": h.field.as_str()});
            // The score is BM25 over the whole index, whose statistics every tenant's
            // tools move: the operator's alone.
            if principal.is_operator() {
                v["match"]["score"] = json!(h.score);
            }
            v
        })
        .collect();
    let mut out = page_json(items, hits.next_page);
    if !hits.did_you_mean.is_empty() {
        out["didYouMean"] = json!(hits.did_you_mean);
    }
    Ok(Json(out))
}
