//! `toolscout-server`: a toolscout catalog over HTTP, JSON-RPC and the Model Context
//! Protocol, and remote catalogs read from other servers.
//!
//! [`router`] builds an axum [`Router`] over an [`AppState`] (a
//! [`Toolbox`](toolscout_discover::Toolbox) plus [`ServerOptions`]):
//!
//! | route | what |
//! |---|---|
//! | `GET /api/v1/tools`, `GET /api/v1/tools/{name}` | the tool-discovery manifest ([`manifest`]); `ETag` = catalog identity, `Cache-Control: public, max-age=60`, 304, 503 |
//! | `POST /api/v1/tools/{name}/invoke` | call a tool by name with `{"args"}` (what [`RemoteCatalog`] calls) |
//! | `/tools/bundles…`, `/tools/tools`, `/tools/tools/search` | the REST API of the tools spec ([`rest`]) |
//! | `POST /rpc` | JSON-RPC 2.0: `tools/list`, `tools/call`, `tools/describe`, `tools/search`, `server/identity` ([`rpc`]) |
//! | `/mcp` | MCP over streamable HTTP ([`mcp`]); [`serve_stdio`] serves it over stdio, [`serve_io`] over any pipe |
//! | `/`, `/console/…` | the web console: Tools admin screen and chat ([`console`]) |
//!
//! Errors are JSON, `{"error": {"code", "message"}}`, through one type, [`AppError`].
//! Bodies are limited ([`ServerOptions::body_limit`], 413 beyond). When
//! [`ServerOptions::token`] is set, every request but `GET`/`HEAD` (and every `/mcp`
//! request) needs `Authorization: Bearer <token>`; on `POST /rpc` only `tools/call`
//! does, the read methods are open.
//!
//! [`RemoteCatalog`] is the consumer side of the discovery protocol: it imports other
//! servers' manifests into local bundles and calls their tools remotely.
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

pub mod console;
mod error;
pub mod manifest;
pub mod mcp;
pub mod remote;
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

pub use error::{AppError, Error, Result};
pub use mcp::{McpServer, mcp_service, serve_io, serve_stdio};
pub use remote::{RemoteCatalog, RemoteSource, SourceReport, SourceStatus};
pub use state::{AppState, DEFAULT_BODY_LIMIT, Expose, MAX_ACTIVATION_CAP, ServerOptions};

/// The server's routes over `state` (see the crate documentation).
pub fn router(state: AppState) -> Router {
    let limit = state.options().body_limit;
    let tool_path = "/tools/bundles/{bundle}/tools/{slug}/version/{version}";
    Router::new()
        .route("/api/v1/tools", get(manifest::get_manifest))
        .route("/api/v1/tools/{name}", get(manifest::get_definition))
        .route(
            "/api/v1/tools/{name}/invoke",
            post(manifest::invoke_by_name),
        )
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
        .route("/rpc", post(rpc::handle))
        .nest_service("/mcp", mcp_service(state.clone()))
        .merge(console::routes())
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            require_token,
        ))
        .with_state(state)
}

async fn not_found(method: Method, uri: axum::http::Uri) -> AppError {
    AppError::not_found(format!(
        "no route {method} {}; the routes are /api/v1/tools, /tools/bundles, /tools/tools, /tools/tools/search, /rpc and /mcp",
        uri.path()
    ))
}

/// Refuses requests without the bearer token, when one is set.
async fn require_token(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let Some(token) = state.options().token.as_deref() else {
        return next.run(request).await;
    };
    let read = matches!(*request.method(), Method::GET | Method::HEAD)
        && !request.uri().path().starts_with("/mcp");
    // JSON-RPC reads are open; the handler asks for the token on `tools/call`.
    if read || request.uri().path() == "/rpc" {
        return next.run(request).await;
    }
    match bearer(request.headers()) {
        Some(g) if same(g.trim().as_bytes(), token.as_bytes()) => next.run(request).await,
        Some(_) => AppError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the bearer token is wrong",
        )
        .into_response(),
        None => AppError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "this server needs a token for everything but reads: send Authorization: Bearer <token>",
        )
        .into_response(),
    }
}

/// The bearer token a request carries.
fn bearer(headers: &header::HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// Whether a request may do what needs the token: no token is set, or it carries it.
pub(crate) fn has_token(state: &AppState, headers: &header::HeaderMap) -> bool {
    match state.options().token.as_deref() {
        None => true,
        Some(token) => bearer(headers).is_some_and(|g| same(g.trim().as_bytes(), token.as_bytes())),
    }
}

/// Compares without stopping at the first difference, so that timing tells nothing.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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

/// Serves [`router`] over `state` on a bound listener (for port 0 and tests).
pub async fn serve_on(listener: tokio::net::TcpListener, state: AppState) -> Result<()> {
    axum::serve(listener, router(state))
        .await
        .map_err(|e| Error::Io {
            context: "serving".to_owned(),
            source: e,
        })
}
