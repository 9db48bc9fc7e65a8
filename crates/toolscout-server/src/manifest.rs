//! The tool-discovery manifest: `GET /api/v1/tools`, `GET /api/v1/tools/{name}`, and
//! `POST /api/v1/tools/{name}/invoke` (the route remote catalogs call tools through).
//!
//! # Pages
//!
//! `GET /api/v1/tools` without a query answers the whole manifest. With `?limit=N` (1 to
//! [`MAX_PAGE_LIMIT`]) it answers one page: the same [`ToolManifest`] shape holding at
//! most N tools, plus `next_page_token` when more follow. `?page_token=T` asks for the
//! page after the one that gave `T`, with any `limit` ([`DEFAULT_PAGE_LIMIT`] when none;
//! an empty `page_token` is the first page).
//!
//! * Tools are ordered by name, in the whole manifest and in pages alike, so the pages of
//!   one catalog concatenate to exactly its whole manifest's tools.
//! * The first page carries every category of the catalog, as the whole manifest does;
//!   later pages carry none.
//! * A page token holds the catalog identity it was issued for. Once the catalog changes
//!   the token is stale: 400 with the code [`STALE_PAGE_TOKEN`], and the client starts
//!   again from the first page, so that pages never mix two versions of the catalog. A
//!   token this server did not issue is a 400 `invalid`, as is a `limit` out of bounds.
//! * The whole manifest's `ETag` is the catalog identity, as before; a page's is the
//!   identity, the position of its first tool and its limit (`"<identity>.<offset>.<limit>"`),
//!   so each page revalidates on its own (`If-None-Match` → 304) and every page's `ETag`
//!   changes whenever the catalog does: a 304 for the first page means that no page
//!   changed.
//! * Answers are compressed (gzip or br) when the request's `Accept-Encoding` allows it
//!   (the router's `CompressionLayer`); a client that sends none gets plain JSON.
//!
//! **Rationale:** a catalog of 90,000 tools is a manifest of over 100 MB; a consumer reads
//! it a page at a time, compressed, instead of in one answer.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Extension, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use toolscout_catalog::{Tool, ToolHead};
use toolscout_discover::{Lookup, Toolbox};
use toolscout_invoke::{ErrorKind, Outcome};
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::manifest::{
    PROTOCOL_VERSION, ToolCategory, ToolDefinition, ToolManifest, to_definition,
};
use uuid::Uuid;

use crate::error::AppError;
use crate::{AppState, Principal};

/// The `Cache-Control` of manifest answers to requests without `Authorization`.
pub const CACHE_CONTROL: &str = "public, max-age=60";

/// The `Cache-Control` of manifest answers to requests with `Authorization`.
///
/// **Rationale:** a shared cache may store an answer to an authorized request when it is
/// marked `public` (RFC 9111 §3.5), and would then hand one principal's manifest to
/// another.
pub const CACHE_CONTROL_PRIVATE: &str = "private, max-age=60";

/// The `Vary` of every manifest answer, errors too: what a cache must key it by. One
/// value naming both, since the compression layer adds `Accept-Encoding` only to a
/// response whose `Vary` does not name it yet.
const VARY: &str = "Authorization, Accept-Encoding";

pub use toolscout_spec::adapters::manifest::{
    DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, STALE_PAGE_TOKEN,
};

/// The whole manifest of the callable tools of `state`, ordered by name, generated now.
pub fn build_manifest(state: &AppState) -> ToolManifest {
    let mut heads = state.toolbox().callable_heads();
    sort_by_name(&mut heads);
    let tools = definitions_of(state.toolbox(), &heads);
    manifest_of(state, &heads, tools, true, None)
}

/// The definitions of `heads`, read from the catalog (a tool deleted meanwhile is left
/// out).
fn definitions_of(toolbox: &Toolbox, heads: &[ToolHead]) -> Vec<ToolDefinition> {
    heads
        .iter()
        .filter_map(|h| toolbox.view().tool(h.id).ok())
        .map(|t| definition(&t))
        .collect()
}

/// The manifest definition of a catalog tool: its spec's, marked `spec_only` when it
/// has no implementation.
fn definition(tool: &Tool) -> ToolDefinition {
    let mut def = to_definition(&tool.spec);
    def.metadata.spec_only = tool.is_spec_only();
    def
}

/// A manifest of `tools` (a run of `all`, the catalog's callable tools); with the
/// categories of `all` when `with_categories`.
fn manifest_of(
    state: &AppState,
    all: &[ToolHead],
    tools: Vec<ToolDefinition>,
    with_categories: bool,
    next_page_token: Option<String>,
) -> ToolManifest {
    let categories = if !with_categories {
        Vec::new()
    } else if state.options().categories.is_empty() {
        categories_of(all.iter().map(|h| h.category.as_deref()))
    } else {
        state.options().categories.clone()
    };
    ToolManifest {
        protocol_version: PROTOCOL_VERSION.to_owned(),
        scenario: state.options().scenario.clone(),
        tools,
        categories,
        generated_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        next_page_token,
    }
}

/// Orders tools by name: the order of the manifest and of its pages.
fn sort_by_name(heads: &mut [ToolHead]) {
    heads.sort_unstable_by(|a, b| a.name.cmp(&b.name));
}

/// One category per distinct `category` of `specs`, sorted by id; the name is the id
/// title-cased (`agent_lifecycle` → `Agent Lifecycle`).
pub fn derive_categories(specs: &[ToolSpec]) -> Vec<ToolCategory> {
    categories_of(specs.iter().map(|s| s.category.as_deref()))
}

/// [`derive_categories`] over the tools' categories.
fn categories_of<'a>(categories: impl Iterator<Item = Option<&'a str>>) -> Vec<ToolCategory> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for c in categories.flatten() {
        *counts.entry(c).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(id, n)| ToolCategory {
            id: id.to_owned(),
            name: title_case(id),
            description: Some(format!("{n} tool{}", if n == 1 { "" } else { "s" })),
            icon: None,
        })
        .collect()
}

fn title_case(id: &str) -> String {
    id.split(['_', '-', ' '])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            chars.next().map_or_else(String::new, |c| {
                c.to_uppercase().chain(chars).collect::<String>()
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Catches up with other processes' writes; 503 while the catalog cannot be served.
pub(crate) async fn ready(state: &AppState) -> Result<(), AppError> {
    if !state.is_serving() {
        return Err(AppError::unavailable(
            "the catalog is not being served right now; try again shortly",
        ));
    }
    let toolbox = state.toolbox().clone();
    match tokio::task::spawn_blocking(move || toolbox.catalog().catch_up()).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(AppError::unavailable(format!(
            "the catalog cannot be read: {e}"
        ))),
        Err(e) => Err(AppError::unavailable(format!(
            "the catalog cannot be read: {e}"
        ))),
    }
}

/// The `ETag` of what `toolbox`'s viewer can call: its view's identity, so two
/// principals share one only when they are served the same tools.
fn etag(toolbox: &Toolbox) -> String {
    format!("\"{}\"", toolbox.view().identity())
}

fn not_modified(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == "*" || t == etag)
}

/// `response` with its `ETag` and `Cache-Control` (private when the request carried
/// `Authorization`).
fn cached(mut response: Response, etag: &str, headers: &HeaderMap) -> Response {
    let h = response.headers_mut();
    let control = if headers.contains_key(header::AUTHORIZATION) {
        CACHE_CONTROL_PRIVATE
    } else {
        CACHE_CONTROL
    };
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(control));
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    response
}

/// A manifest answer, error or not, with its `Vary`.
fn varied(answer: Result<Response, AppError>) -> Response {
    let mut response = answer.unwrap_or_else(IntoResponse::into_response);
    response
        .headers_mut()
        .insert(header::VARY, HeaderValue::from_static(VARY));
    response
}

/// The query of `GET /api/v1/tools`: neither for the whole manifest. Both are read as
/// text so that a bad value gets an error naming its parameter.
#[derive(Debug, Deserialize)]
pub(crate) struct ManifestQuery {
    limit: Option<String>,
    page_token: Option<String>,
}

/// The page a request asks for.
#[derive(Debug, Clone)]
struct PageRequest {
    /// The catalog identity the page token was issued for, and the token as sent; `None`
    /// for the first page.
    token: Option<(Uuid, String)>,
    /// The position of the page's first tool in the name order.
    offset: usize,
    /// At most this many tools.
    limit: usize,
}

impl ManifestQuery {
    /// `None` for the whole manifest, else the page asked for; a 400 naming the bad
    /// parameter.
    fn page(&self) -> Result<Option<PageRequest>, AppError> {
        let token = self.page_token.as_deref().filter(|t| !t.is_empty());
        if self.limit.is_none() && self.page_token.is_none() {
            return Ok(None);
        }
        let limit = match self.limit.as_deref() {
            None => DEFAULT_PAGE_LIMIT,
            Some(raw) => parse_limit(raw)?,
        };
        let (token, offset) = match token {
            None => (None, 0),
            Some(raw) => {
                let (identity, offset) = parse_page_token(raw)?;
                (Some((identity, raw.to_owned())), offset)
            }
        };
        Ok(Some(PageRequest {
            token,
            offset,
            limit,
        }))
    }
}

fn parse_limit(raw: &str) -> Result<usize, AppError> {
    match raw.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_PAGE_LIMIT).contains(&n) => Ok(n),
        _ => Err(AppError::invalid(format!(
            "limit {raw:?} is not a page size: give a whole number of tools from 1 to {MAX_PAGE_LIMIT}, or leave limit out for the whole manifest"
        ))
        .with_details(json!({"parameter": "limit", "value": raw, "max": MAX_PAGE_LIMIT}))),
    }
}

/// The token of the page that starts at `offset` of the catalog `identity`:
/// `<identity, 32 hex digits>.<offset>`. Clients treat it as opaque.
fn page_token(identity: Uuid, offset: usize) -> String {
    format!("{}.{offset}", identity.simple())
}

fn parse_page_token(raw: &str) -> Result<(Uuid, usize), AppError> {
    raw.split_once('.')
        .and_then(|(id, offset)| {
            let id = Uuid::try_parse(id).ok()?;
            let offset = offset.parse::<usize>().ok()?;
            Some((id, offset))
        })
        .ok_or_else(|| bad_page_token(raw))
}

fn bad_page_token(raw: &str) -> AppError {
    AppError::invalid(format!(
        "page_token {raw:?} was not issued by this server: pass the next_page_token of the previous page, or leave page_token out for the first page"
    ))
    .with_details(json!({"parameter": "page_token", "value": raw}))
}

fn stale_page_token(raw: &str) -> AppError {
    AppError::new(
        StatusCode::BAD_REQUEST,
        STALE_PAGE_TOKEN,
        "page_token was issued for an earlier version of the catalog, which has changed since: start again from the first page (without page_token)",
    )
    .with_details(json!({"parameter": "page_token", "value": raw}))
}

impl PageRequest {
    /// A 400 when the token was issued for another catalog than `identity`.
    fn check(&self, identity: Uuid) -> Result<(), AppError> {
        match &self.token {
            Some((issued, raw)) if *issued != identity => Err(stale_page_token(raw)),
            _ => Ok(()),
        }
    }

    /// The page's `ETag` in the catalog `identity`.
    fn etag(&self, identity: Uuid) -> String {
        format!("\"{identity}.{}.{}\"", self.offset, self.limit)
    }
}

/// The callable tools' heads and the catalog identity they belong to, read so that the
/// two agree: a write between the reads is read again.
fn snapshot(toolbox: &Toolbox) -> Result<(Uuid, Vec<ToolHead>), AppError> {
    let view = toolbox.view();
    for _ in 0..3 {
        let identity = view.identity();
        let heads = toolbox.callable_heads();
        if view.identity() == identity {
            return Ok((identity, heads));
        }
    }
    Err(AppError::unavailable(
        "the catalog kept changing while the manifest was read; try again",
    ))
}

/// How many bytes of the whole manifest are written before they are sent on.
const STREAM_CHUNK: usize = 256 * 1024;

/// How long the writer of a streamed manifest waits for a client that does not read.
const STREAM_STALL: std::time::Duration = std::time::Duration::from_secs(60);

/// The whole manifest's `ETag` and body: the body is written a tool at a time, off the
/// async threads, and sent as it is written.
///
/// **Rationale:** built whole, the manifest of 92,589 tools held every spec, every
/// definition and 114 MB of JSON at once, and took a server from 300 MB to 1.7 GB;
/// streamed, it holds the tools' ids, one tool and one chunk.
async fn whole(
    state: &AppState,
    toolbox: &Toolbox,
) -> Result<(String, axum::body::Body), AppError> {
    let state_c = state.clone();
    let toolbox_c = toolbox.clone();
    let (identity, envelope, ids) = tokio::task::spawn_blocking(move || {
        let (identity, mut heads) = snapshot(&toolbox_c)?;
        sort_by_name(&mut heads);
        let envelope = manifest_of(&state_c, &heads, Vec::new(), true, None);
        let ids: Vec<Uuid> = heads.iter().map(|h| h.id).collect();
        Ok::<_, AppError>((identity, envelope, ids))
    })
    .await
    .map_err(|e| AppError::unavailable(format!("the manifest could not be built: {e}")))??;
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<axum::body::Bytes, std::io::Error>>(4);
    let toolbox_c = toolbox.clone();
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let mut out = Stream {
            tx,
            runtime,
            done: false,
        };
        write_whole(&toolbox_c, identity, &envelope, &ids, &mut out);
    });
    // Fused: the compression layer may ask again after the end.
    let chunks =
        futures_util::StreamExt::fuse(futures_util::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|chunk| (chunk, rx))
        }));
    Ok((
        format!("\"{identity}\""),
        axum::body::Body::from_stream(chunks),
    ))
}

/// The sending end of a streamed manifest. Unless it was [`finish`](Stream::finish)ed,
/// dropping it (a panic, an early return) ends the body with an error, so that a client
/// never takes a cut manifest for a whole one.
struct Stream {
    tx: tokio::sync::mpsc::Sender<Result<axum::body::Bytes, std::io::Error>>,
    runtime: tokio::runtime::Handle,
    done: bool,
}

impl Stream {
    /// Sends `buf` on (emptying it); `false` when the client is gone or stalled.
    fn send(&self, buf: &mut Vec<u8>) -> bool {
        let chunk = axum::body::Bytes::from(std::mem::take(buf));
        self.runtime
            .block_on(self.tx.send_timeout(Ok(chunk), STREAM_STALL))
            .is_ok()
    }

    fn finish(&mut self, buf: &mut Vec<u8>) {
        self.done = self.send(buf);
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.tx.try_send(Err(std::io::Error::other(
                "the manifest could not be written whole",
            )));
        }
    }
}

/// Writes the whole manifest (the `envelope` with the tools `ids`, ordered by name) down
/// `out`, a chunk at a time; stops when the client has gone. A tool deleted meanwhile is
/// left out; a catalog that changed while it was written ends the body with an error,
/// since the body would not be the manifest of its `ETag`.
fn write_whole(
    toolbox: &Toolbox,
    identity: Uuid,
    envelope: &ToolManifest,
    ids: &[Uuid],
    out: &mut Stream,
) {
    // The envelope with no tools, split where they go: `"tools":[]` is a key of the
    // manifest (a string holding it would be escaped), and comes before the categories.
    let Ok(json) = serde_json::to_vec(envelope) else {
        return;
    };
    let marker = br#""tools":[]"#;
    let Some(at) = json.windows(marker.len()).position(|w| w == marker) else {
        return;
    };
    let split = at + marker.len() - 1;
    let mut buf = Vec::with_capacity(STREAM_CHUNK + 64 * 1024);
    buf.extend_from_slice(&json[..split]);
    let mut first = true;
    let view = toolbox.view();
    for id in ids {
        let Ok(tool) = view.tool(*id) else {
            continue;
        };
        if !first {
            buf.push(b',');
        }
        first = false;
        if serde_json::to_writer(&mut buf, &definition(&tool)).is_err() {
            return;
        }
        if buf.len() >= STREAM_CHUNK && !out.send(&mut buf) {
            return;
        }
    }
    if view.identity() != identity {
        return;
    }
    buf.extend_from_slice(&json[split..]);
    out.finish(&mut buf);
}

/// A page of the manifest, as JSON with its `ETag`.
fn render(
    state: &AppState,
    toolbox: &Toolbox,
    page: &PageRequest,
) -> Result<(String, Vec<u8>), AppError> {
    let (identity, mut heads) = snapshot(toolbox)?;
    sort_by_name(&mut heads);
    page.check(identity)?;
    if page.offset > heads.len() {
        let raw = page.token.as_ref().map_or("", |(_, raw)| raw.as_str());
        return Err(bad_page_token(raw));
    }
    // Only the tools of the page are read whole.
    let end = page.offset.saturating_add(page.limit).min(heads.len());
    let next = (end < heads.len()).then(|| page_token(identity, end));
    let tools = definitions_of(toolbox, &heads[page.offset..end]);
    let etag = page.etag(identity);
    let manifest = manifest_of(state, &heads, tools, page.offset == 0, next);
    let body = serde_json::to_vec(&manifest).map_err(|e| {
        AppError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("the manifest could not be written as JSON: {e}"),
        )
    })?;
    Ok((etag, body))
}

/// `GET /api/v1/tools`, `?limit=N&page_token=T` for a page (see the module
/// documentation).
pub(crate) async fn get_manifest(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: Result<Query<ManifestQuery>, QueryRejection>,
    headers: HeaderMap,
) -> Response {
    let toolbox = state.toolbox_for(principal.viewer());
    varied(manifest_answer(state, toolbox, query, headers).await)
}

async fn manifest_answer(
    state: AppState,
    toolbox: Toolbox,
    query: Result<Query<ManifestQuery>, QueryRejection>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let Query(query) = query?;
    let page = query.page()?;
    ready(&state).await?;
    let identity = toolbox.view().identity();
    let etag = match &page {
        None => format!("\"{identity}\""),
        Some(page) => {
            page.check(identity)?;
            page.etag(identity)
        }
    };
    if not_modified(&headers, &etag) {
        return Ok(cached(
            StatusCode::NOT_MODIFIED.into_response(),
            &etag,
            &headers,
        ));
    }
    // Reading, ordering and writing a large catalog's manifest takes a while: off the
    // async threads.
    let (etag, body) = match page {
        None => whole(&state, &toolbox).await?,
        Some(page) => {
            let state_c = state.clone();
            let (etag, body) =
                tokio::task::spawn_blocking(move || render(&state_c, &toolbox, &page))
                    .await
                    .map_err(|e| {
                        AppError::unavailable(format!("the manifest could not be built: {e}"))
                    })??;
            (etag, axum::body::Body::from(body))
        }
    };
    let response = (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response();
    Ok(cached(response, &etag, &headers))
}

/// `GET /api/v1/tools/{name}`.
pub(crate) async fn get_definition(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    let toolbox = state.toolbox_for(principal.viewer());
    varied(definition_answer(&state, &toolbox, &name, &headers).await)
}

async fn definition_answer(
    state: &AppState,
    toolbox: &Toolbox,
    name: &str,
    headers: &HeaderMap,
) -> Result<Response, AppError> {
    ready(state).await?;
    let etag = etag(toolbox);
    match toolbox.lookup(name) {
        Lookup::Found(tool) => {
            if not_modified(headers, &etag) {
                return Ok(cached(
                    StatusCode::NOT_MODIFIED.into_response(),
                    &etag,
                    headers,
                ));
            }
            Ok(cached(
                Json(definition(&tool)).into_response(),
                &etag,
                headers,
            ))
        }
        Lookup::Disabled { reason, .. } => Err(AppError::not_found(format!(
            "tool '{name}' is not available: {reason}"
        ))
        .with_details(json!({"tool": name, "reason": reason}))),
        Lookup::NotFound { did_you_mean } => Err(unknown_tool(name, did_you_mean)),
    }
}

/// The 404 of an unknown tool name, with the closest names.
pub(crate) fn unknown_tool(name: &str, did_you_mean: Vec<String>) -> AppError {
    let hint = if did_you_mean.is_empty() {
        String::new()
    } else {
        format!("; did you mean: {}?", did_you_mean.join(", "))
    };
    AppError::not_found(format!("no tool named '{name}'{hint}"))
        .with_details(json!({"tool": name, "did_you_mean": did_you_mean}))
}

/// The body of an invoke request: `{"args": {…}, "approved": true}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct InvokeBody {
    #[serde(default)]
    pub(crate) args: Value,
    /// The client approves the call of a tool that requires approval; honoured only from
    /// a client with the server's token.
    #[serde(default)]
    pub(crate) approved: bool,
}

impl InvokeBody {
    /// Whether the call is approved: refused (403) when the client asked for it without
    /// proving it holds the server's token (a tenant's does not count), or the server has
    /// none.
    pub(crate) fn approval(
        &self,
        state: &AppState,
        principal: &Principal,
    ) -> Result<bool, AppError> {
        approval(self.approved, state, principal)
    }
}

/// Whether a call whose request says `approved` is approved: refused (403) when the
/// client asked for it without proving it holds the server's token (a tenant's does not
/// count), or the server has none. The invoke routes and the console's recipe try.
pub(crate) fn approval(
    approved: bool,
    state: &AppState,
    principal: &Principal,
) -> Result<bool, AppError> {
    if !approved {
        return Ok(false);
    }
    if principal.may_approve(state.options()) {
        return Ok(true);
    }
    Err(AppError::new(
        StatusCode::FORBIDDEN,
        "forbidden",
        why_not_approved(state),
    ))
}

/// Why a request's `"approved": true` does not count, for REST and JSON-RPC alike: the
/// server has no token, or the request does not carry it.
pub(crate) fn why_not_approved(state: &AppState) -> &'static str {
    if state.options().token.is_none() {
        "only a client with the server's token may approve a call, and this server has none (--no-auth); start it with a token, or pre-approve the tool with --approve TOOL"
    } else {
        "only a client with the server's token may approve a call, and this request does not carry it (a tenant's token approves nothing); ask the operator, or call without \"approved\""
    }
}

/// The status of an invoke answer. The body is always the outcome; the status says
/// whether the request itself was wrong (400, 404, 423) or the call was made (200, even
/// when the tool failed: a failure is data).
pub(crate) fn outcome_response(outcome: &Outcome) -> Response {
    let status = match outcome.error().map(|e| e.kind) {
        Some(ErrorKind::InvalidArguments) => StatusCode::BAD_REQUEST,
        Some(ErrorKind::UnknownTool) => StatusCode::NOT_FOUND,
        // The tool exists and cannot run here (a 5xx would invite retries).
        Some(ErrorKind::Disabled | ErrorKind::NotRegistered | ErrorKind::SpecOnly) => {
            StatusCode::LOCKED
        }
        _ => StatusCode::OK,
    };
    (status, Json(outcome.to_json())).into_response()
}

/// `POST /api/v1/tools/{name}/invoke` with `{"args": {…}}`.
pub(crate) async fn invoke_by_name(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(name): Path<String>,
    body: Result<Json<InvokeBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, AppError> {
    let Json(body) = body?;
    let approved = body.approval(&state, &principal)?;
    let outcome = state
        .call_for(&principal.viewer(), &name, body.args, approved)
        .await;
    Ok(outcome_response(&outcome))
}
