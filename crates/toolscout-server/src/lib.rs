//! `toolscout-server`: a toolscout catalog over HTTP, JSON-RPC and the Model Context
//! Protocol, and remote catalogs read from other servers.
//!
//! [`router`] builds an axum [`Router`] over an [`AppState`] (a
//! [`Toolbox`](toolscout_discover::Toolbox) plus [`ServerOptions`]), one route per row of
//! [`routes()`], the table of every route with who may use it ([`Access`]):
//!
//! | route | what |
//! |---|---|
//! | `GET /api/v1/tools`, `GET /api/v1/tools/{name}` | the tool-discovery manifest ([`manifest`]), whole or in pages (`?limit=N&page_token=T`), gzip or br when accepted; `ETag` = catalog identity (a page's: identity, offset, limit), `Cache-Control: public, max-age=60` (`private` to a request with `Authorization`), `Vary: Authorization`, 304, 503 |
//! | `POST /api/v1/tools/{name}/invoke` | call a tool by name with `{"args"}` (what [`RemoteCatalog`] calls) |
//! | `GET /api/v1/events` | the catalog's changes as Server-Sent Events ([`feed`]): names added, removed, enabled, disabled, changed; resumable with `Last-Event-ID` |
//! | `GET /api/v1/openapi.json` | this table in full: every route with an example, an OpenAPI 3.1 document ([`api_document`]) |
//! | `GET /api/v1/whoami` | who the server takes the sender for ([`Principal`]): `{"kind": "operator" \| "tenant" \| "anonymous"}`, with a tenant's name and limits |
//! | `/tools/bundles…`, `/tools/tools`, `/tools/tools/search` | the REST API of the tools spec ([`rest`]); `POST /tools/bundles` makes a bundle with an id of the server's (201), a bundle `PATCH` also takes the operator's `shared` and `owner` |
//! | `POST /rpc` | JSON-RPC 2.0: `tools/list`, `tools/call`, `tools/describe`, `tools/search`, `server/identity` ([`rpc`]) |
//! | `/mcp` | MCP over streamable HTTP (`mcp`, with the `mcp` feature, on by default); `serve_stdio` serves it over stdio, `serve_io` over any pipe |
//! | `/`, `/console/…` | the web console: Tools admin screen and chat ([`console`]) |
//! | `GET`, `POST /admin/tenants`; `GET`, `PATCH`, `DELETE /admin/tenants/{tenant}`; `POST /admin/tenants/{tenant}/tokens`; `DELETE /admin/tenants/{tenant}/tokens/{token}` | the operator's API for tenants ([`admin`]): list, add (the first token's text shown once), show, change limits, remove (every token revoked, bundles kept); add a token (shown once), revoke one. The server's own token only: 403 for a tenant |
//!
//! Errors are JSON, `{"error": {"code", "message"}}`, through one type, [`AppError`].
//! Bodies are limited ([`ServerOptions::body_limit`], 413 beyond) and must be
//! `application/json` (415 otherwise). `Host` and `Origin` are checked on every route
//! ([`HostCheck`]; loopback names by default, 403 otherwise).
//!
//! Every request to a route but the console's static files is authenticated: the
//! `authenticate` middleware puts a [`Principal`] in its extensions.
//! `Authorization: Bearer <token>` with [`ServerOptions::token`] (the server's own) is the
//! operator; a live tenant's token
//! ([`Catalog::add_tenant`](toolscout_catalog::Catalog::add_tenant)) is that tenant; any
//! other token is 401, one answer for an unknown, a revoked and a removed tenant's token,
//! on reads too. Without a token, a server with no token of its own serves everyone as
//! the operator; one with a token refuses writes and calls (every `/rpc` and `/mcp`
//! request) with 401 and serves the `GET`/`HEAD` reads as [`AnonymousReads`] says: in
//! the operator's view while the catalog has no tenant (by default), in the public view
//! (the shared bundles and the built-ins) once it has one. Every handler reads and calls
//! in the principal's view. The `/admin` routes are the operator's alone: 403
//! `forbidden` for a tenant's token. See `SECURITY.md` for the threat model.
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

pub mod admin;
mod api_doc;
mod auth;
mod conn;
pub mod console;
mod error;
mod events;
pub mod feed;
mod limit;
pub mod manifest;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod rest;
mod routes;
pub mod rpc;
mod state;

use std::net::SocketAddr;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, patch, post, put};
use tower_http::compression::CompressionLayer;

pub use api_doc::api_document;
pub use auth::Principal;
pub use conn::{ConnectionLimits, DEFAULT_MAX_CONNECTIONS};
pub use error::{AppError, Error, Result};
#[cfg(feature = "mcp")]
pub use mcp::{McpServer, mcp_service, serve_io, serve_stdio};
pub use routes::{Access, Route, routes};
pub use state::{
    AnonymousReads, AppState, DEFAULT_BODY_LIMIT, Expose, HostCheck, MAX_ACTIVATION_CAP,
    ServerOptions,
};
/// Remote catalogs: the consumer side, re-exported from `toolscout-remote`.
pub use toolscout_remote as remote;
pub use toolscout_remote::{RemoteCatalog, RemoteSource, SourceReport, SourceStatus};

/// The server's routes over `state` (see the crate documentation): one per row of
/// [`routes()`], behind the `authenticate` middleware ([`Principal`]).
///
/// # Panics
///
/// When [`routes()`] lists a route it has no handler for (a programming error, caught by
/// every test that builds a router).
pub fn router(state: AppState) -> Router {
    let limit = state.options().body_limit;
    let mut app = Router::new();
    for route in routes() {
        if route.path != routes::MCP_PATH && !routes::is_console(route.path) {
            app = app.route(route.path, handler(route));
        }
    }
    // The `/mcp` rows are one nested service: rmcp answers each of their methods.
    #[cfg(feature = "mcp")]
    if routes().iter().any(|r| r.path == routes::MCP_PATH) {
        app = app.nest_service(routes::MCP_PATH, mcp_service(state.clone()));
    }
    app.merge(console::routes())
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(limit))
        .layer(axum::middleware::from_fn_with_state(
            (
                state.clone(),
                std::sync::Arc::new(limit::Limiter::default()),
            ),
            auth::authenticate,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard_browser,
        ))
        .with_state(state)
}

/// The handler of a row outside the console and `/mcp`.
///
/// # Panics
///
/// On a row it has no handler for: a programming error, caught when the router is built
/// (by every test).
fn handler(route: &Route) -> MethodRouter<AppState> {
    // Compressed when the client accepts it: a large catalog's manifest is large. Only
    // these routes: the console's chat and MCP stream their answers.
    match (route.method.as_str(), route.path) {
        ("GET", "/api/v1/tools") => get(manifest::get_manifest).layer(CompressionLayer::new()),
        ("GET", "/api/v1/tools/{name}") => {
            get(manifest::get_definition).layer(CompressionLayer::new())
        }
        ("POST", "/api/v1/tools/{name}/invoke") => post(manifest::invoke_by_name),
        ("GET", "/api/v1/events") => get(events::events),
        ("GET", "/api/v1/whoami") => get(auth::whoami),
        ("GET", "/api/v1/openapi.json") => get(api_doc::get),
        ("GET", "/tools/bundles") => get(rest::list_bundles),
        ("POST", "/tools/bundles") => post(rest::create_bundle),
        ("PUT", "/tools/bundles/{bundle}") => put(rest::put_bundle),
        ("PATCH", "/tools/bundles/{bundle}") => patch(rest::patch_bundle),
        ("DELETE", "/tools/bundles/{bundle}") => axum::routing::delete(rest::delete_bundle),
        ("GET", "/tools/bundles/{bundle}/tools/{slug}/version/{version}") => get(rest::get_tool),
        ("PUT", "/tools/bundles/{bundle}/tools/{slug}/version/{version}") => put(rest::put_tool),
        ("PATCH", "/tools/bundles/{bundle}/tools/{slug}/version/{version}") => {
            patch(rest::patch_tool)
        }
        ("DELETE", "/tools/bundles/{bundle}/tools/{slug}/version/{version}") => {
            axum::routing::delete(rest::delete_tool)
        }
        ("POST", "/tools/bundles/{bundle}/tools/{slug}/version/{version}/invoke") => {
            post(rest::invoke_tool)
        }
        ("GET", "/tools/tools") => get(rest::list_tools),
        ("GET", "/tools/tools/search") => get(rest::search_tools),
        ("POST", "/rpc") => post(rpc::handle),
        ("GET", "/admin/tenants") => get(admin::list_tenants),
        ("POST", "/admin/tenants") => post(admin::add_tenant),
        ("GET", "/admin/tenants/{tenant}") => get(admin::get_tenant),
        ("PATCH", "/admin/tenants/{tenant}") => patch(admin::patch_tenant),
        ("DELETE", "/admin/tenants/{tenant}") => axum::routing::delete(admin::remove_tenant),
        ("POST", "/admin/tenants/{tenant}/tokens") => post(admin::add_token),
        ("DELETE", "/admin/tenants/{tenant}/tokens/{token}") => {
            axum::routing::delete(admin::revoke_token)
        }
        (method, path) => {
            panic!("routes() lists {method} {path}, which router() has no handler for")
        }
    }
}

async fn not_found(method: Method, uri: axum::http::Uri) -> AppError {
    AppError::not_found(format!(
        "no route {method} {}; the routes are /api/v1/tools, /tools/bundles, /tools/tools, /tools/tools/search, /rpc and /mcp",
        uri.path()
    ))
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
