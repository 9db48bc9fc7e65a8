//! `toolscout-server`: a toolscout catalog over HTTP, JSON-RPC and the Model Context
//! Protocol, and remote catalogs read from other servers.
//!
//! [`router`] builds an axum [`Router`] over an [`AppState`] (a
//! [`Toolbox`](toolscout_discover::Toolbox) plus [`ServerOptions`]):
//!
//! | route | what |
//! |---|---|
//! | `GET /api/v1/tools`, `GET /api/v1/tools/{name}` | the tool-discovery manifest ([`manifest`]), whole or in pages (`?limit=N&page_token=T`), gzip or br when accepted; `ETag` = catalog identity (a page's: identity, offset, limit), `Cache-Control: public, max-age=60`, 304, 503 |
//! | `POST /api/v1/tools/{name}/invoke` | call a tool by name with `{"args"}` (what [`RemoteCatalog`] calls) |
//! | `GET /api/v1/events` | the catalog's changes as Server-Sent Events ([`feed`]): names added, removed, enabled, disabled, changed; resumable with `Last-Event-ID` |
//! | `/tools/bundles…`, `/tools/tools`, `/tools/tools/search` | the REST API of the tools spec ([`rest`]) |
//! | `POST /rpc` | JSON-RPC 2.0: `tools/list`, `tools/call`, `tools/describe`, `tools/search`, `server/identity` ([`rpc`]) |
//! | `/mcp` | MCP over streamable HTTP (`mcp`, with the `mcp` feature, on by default); `serve_stdio` serves it over stdio, `serve_io` over any pipe |
//! | `/`, `/console/…` | the web console: Tools admin screen and chat ([`console`]) |
//!
//! Errors are JSON, `{"error": {"code", "message"}}`, through one type, [`AppError`].
//! Bodies are limited ([`ServerOptions::body_limit`], 413 beyond) and must be
//! `application/json` (415 otherwise). `Host` and `Origin` are checked on every route
//! ([`HostCheck`]; loopback names by default, 403 otherwise). When
//! [`ServerOptions::token`] is set, every request but the `GET`/`HEAD` reads of the
//! manifest and the listings needs `Authorization: Bearer <token>` (every `/rpc` and
//! `/mcp` request does). See `SECURITY.md` for the threat model.
//!
//! [`RemoteCatalog`] (from `toolscout-remote`, re-exported) is the consumer side of the
//! discovery protocol: it imports other servers' manifests into local bundles and calls
//! their tools remotely; [`AppState::with_remote`] serves them.
//!
//! Features: `mcp` (default) serves the Model Context Protocol through rmcp; without it
//! `/mcp` answers 404.
//!
//! ```
//! use tower::ServiceExt;
//! use toolscout_server::{AppState, ServerOptions, router};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(async {
//! let dir = tempfile::tempdir()?;
//! let catalog = toolscout_catalog::Catalog::open(dir.path(), &toolscout_catalog::builtin::NATIVE_FUNCTIONS)?;
//! let index = toolscout_search::SearchIndex::in_memory()?;
//! let toolbox = toolscout_discover::Toolbox::new(catalog, index, toolscout_invoke::Invoker::default())?;
//! let app = router(AppState::new(toolbox, ServerOptions::default()));
//!
//! let request = axum::http::Request::get("/api/v1/tools").body(axum::body::Body::empty())?;
//! let response = app.oneshot(request).await?;
//! assert_eq!(response.status(), 200);
//! assert_eq!(response.headers()["cache-control"], "public, max-age=60");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used))]

mod conn;
pub mod console;
mod error;
pub mod feed;
pub mod manifest;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod rest;
pub mod rpc;
mod state;

use std::net::SocketAddr;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use tower_http::compression::CompressionLayer;

pub use conn::{ConnectionLimits, DEFAULT_MAX_CONNECTIONS};
pub use error::{AppError, Error, Result};
#[cfg(feature = "mcp")]
pub use mcp::{McpServer, mcp_service, serve_io, serve_stdio};
pub use state::{
    AppState, DEFAULT_BODY_LIMIT, Expose, HostCheck, MAX_ACTIVATION_CAP, ServerOptions,
};
/// Remote catalogs: the consumer side, re-exported from `toolscout-remote`.
pub use toolscout_remote as remote;
pub use toolscout_remote::{RemoteCatalog, RemoteSource, SourceReport, SourceStatus};

/// The server's routes over `state` (see the crate documentation).
pub fn router(state: AppState) -> Router {
    let limit = state.options().body_limit;
    let tool_path = "/tools/bundles/{bundle}/tools/{slug}/version/{version}";
    let routes = Router::new()
        // Compressed when the client accepts it: a large catalog's manifest is large.
        // Only these routes: the console's chat and MCP stream their answers.
        .route(
            "/api/v1/tools",
            get(manifest::get_manifest).layer(CompressionLayer::new()),
        )
        .route(
            "/api/v1/tools/{name}",
            get(manifest::get_definition).layer(CompressionLayer::new()),
        )
        .route(
            "/api/v1/tools/{name}/invoke",
            post(manifest::invoke_by_name),
        )
        .route("/api/v1/events", get(feed::events))
        .route(
            "/tools/bundles/{bundle}",
            put(rest::put_bundle)
                .patch(rest::patch_bundle)
                .delete(rest::delete_bundle),
        )
        .route("/tools/bundles", get(rest::list_bundles))
        .route(
            tool_path,
            put(rest::put_tool)
                .patch(rest::patch_tool)
                .delete(rest::delete_tool)
                .get(rest::get_tool),
        )
        .route(&format!("{tool_path}/invoke"), post(rest::invoke_tool))
        .route("/tools/tools", get(rest::list_tools))
        .route("/tools/tools/search", get(rest::search_tools))
        .route("/rpc", post(rpc::handle));
    #[cfg(feature = "mcp")]
    let routes = routes.nest_service("/mcp", mcp_service(state.clone()));
    routes
        .merge(console::routes())
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            require_token,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard_browser,
        ))
        .with_state(state)
}

async fn not_found(method: Method, uri: axum::http::Uri) -> AppError {
    AppError::not_found(format!(
        "no route {method} {}; the routes are /api/v1/tools, /tools/bundles, /tools/tools, /tools/tools/search, /rpc and /mcp",
        uri.path()
    ))
}

/// Refuses requests without the bearer token, when one is set: everything but the
/// `GET`/`HEAD` reads of the manifest and the REST listings (every `/rpc` and `/mcp`
/// request needs it).
async fn require_token(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Some(token) = state.options().token.as_deref() else {
        return next.run(request).await;
    };
    let path = request.uri().path();
    let read = matches!(*request.method(), Method::GET | Method::HEAD)
        && !path.starts_with("/mcp")
        && path != "/rpc";
    if read {
        return next.run(request).await;
    }
    match bearer(request.headers()) {
        Some(g) if same(g.as_bytes(), token.as_bytes()) => next.run(request).await,
        Some(_) => AppError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the bearer token is wrong",
        )
        .into_response(),
        None => AppError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this server needs a token for everything but GET reads: send Authorization: Bearer <token>",
        )
        .into_response(),
    }
}

/// The bearer token a request carries: `Authorization: Bearer <token>`, the scheme in
/// any case (RFC 9110 §11.1).
fn bearer(headers: &header::HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Whether a request may do what needs the token: no token is set, or it carries it.
pub(crate) fn has_token(state: &AppState, headers: &header::HeaderMap) -> bool {
    match state.options().token.as_deref() {
        None => true,
        Some(token) => bearer(headers).is_some_and(|g| same(g.as_bytes(), token.as_bytes())),
    }
}

/// Refuses requests that a web page could have sent: a `Host` or `Origin` that is not
/// this server's (DNS rebinding, cross-site requests; see [`HostCheck`]), and bodies
/// that are not `application/json` (a page may POST `text/plain` anywhere without
/// asking).
async fn guard_browser(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let check = &state.options().host_check;
    let headers = request.headers();
    if let Some(host) = headers.get(header::HOST) {
        let host = host.to_str().unwrap_or_default();
        if !check.allows(host) {
            return AppError::new(
                StatusCode::FORBIDDEN,
                "forbidden_host",
                format!(
                    "Host {host:?} is not a name of this server; it answers to {} (a guard against DNS rebinding)",
                    check.describe()
                ),
            )
            .into_response();
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        let authority = origin_authority(origin).unwrap_or_default();
        if !check.allows_origin(&authority) {
            return AppError::new(
                StatusCode::FORBIDDEN,
                "forbidden_origin",
                format!(
                    "requests from web pages of {origin:?} are refused; this server answers to {}",
                    check.describe()
                ),
            )
            .into_response();
        }
    }
    let has_body = matches!(
        *request.method(),
        Method::POST | Method::PUT | Method::PATCH
    );
    if has_body && !is_accepted_body(headers) {
        return AppError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the body as JSON with Content-Type: application/json (a bundle import: application/zip)",
        )
        .into_response();
    }
    next.run(request).await
}

/// `name[:port]` of an `Origin` header (`scheme://name[:port]`); `None` for `null` and
/// anything that is no URL with a host.
fn origin_authority(origin: &str) -> Option<String> {
    let url = url::Url::parse(origin).ok()?;
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

/// Whether a request body's `Content-Type` is one this server reads: JSON, or a ZIP (the
/// console's bundle import).
///
/// **Rationale:** a web page can send `text/plain`, form and multipart bodies to any site
/// without asking; JSON and `application/zip` are not CORS-safelisted, so a page of another
/// origin must pass a preflight first, which this server never grants.
fn is_accepted_body(headers: &header::HeaderMap) -> bool {
    is_json(headers) || mime_of(headers).is_some_and(|m| m == "application/zip")
}

/// The `Content-Type`'s MIME type, lower case, without parameters.
fn mime_of(headers: &header::HeaderMap) -> Option<String> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    Some(
        value
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase(),
    )
}

/// Whether the `Content-Type` is JSON: `application/json` or `application/<x>+json`,
/// with any parameters.
fn is_json(headers: &header::HeaderMap) -> bool {
    mime_of(headers).is_some_and(|mime| {
        mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
    })
}

/// Compares without stopping at the first difference, so that timing tells nothing (but
/// the length).
fn same(a: &[u8], b: &[u8]) -> bool {
    subtle::ConstantTimeEq::ct_eq(a, b).into()
}

/// Binds `addr` and serves [`router`] over `state` until the process ends.
pub async fn serve(addr: SocketAddr, state: AppState) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::Io {
            context: format!("binding {addr}"),
            source: e,
        })?;
    serve_on(listener, state).await
}

/// Serves [`router`] over `state` on a bound listener (for port 0 and tests), within
/// the state's [`ServerOptions::connections`].
pub async fn serve_on(listener: tokio::net::TcpListener, state: AppState) -> Result<()> {
    let limits = state.options().connections;
    conn::serve(listener, router(state), limits, std::future::pending())
        .await
        .map_err(|e| Error::Io {
            context: "serving".to_owned(),
            source: e,
        })
}
