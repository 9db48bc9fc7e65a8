//! The web console at `/`: a Tools admin screen (search, levels, create, enable/disable,
//! a live tester), a Recipes screen (a recipe built from catalog tools, tried before it
//! is saved) and a chat over the agent loop with a "+" tool palette.
//!
//! The console is static HTML, CSS and JavaScript compiled into the binary
//! (`assets/console/`), a client of the public APIs like any other: it lists, searches,
//! creates and calls tools through the REST API and sends the server's bearer token,
//! which the person types into it and which stays in the tab's `sessionStorage`. These
//! routes exist for it alone:
//!
//! | route | what |
//! |---|---|
//! | `GET /console/api/levels/{bundleID}/{slug}/{version}` | what a model sees of a tool at each level and of each parameter, with token counts |
//! | `GET /console/api/bundles/{bundleID}/export` | the bundle as a ZIP archive (`Catalog::export_bundle`) |
//! | `POST /console/api/bundles/import` | a ZIP archive (the body) imported as a bundle |
//! | `GET /console/api/chat` | whether an OpenAI-compatible endpoint is configured, and its model |
//! | `POST /console/api/chat` | one chat turn over the agent loop, as server-sent events ([`chat`]) |
//! | `POST /console/api/chat/approve` | the person's decision on a call waiting for approval |
//! | `POST /console/api/recipes/try` | a recipe that is not saved, checked as its put would be, then run with its steps' progress as server-sent events ([`recipes`]) |
//!
//! [`router`] is [`crate::router`] with a [`Console`] (the chat endpoint); a server built
//! with [`crate::router`] alone serves the console with the chat switched off, and the
//! chat says so.

pub mod chat;
pub mod recipes;

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use axum::{Extension, Json, Router};
use serde_json::{Value, json};
use toolscout_spec::{Level, tokens};

use crate::error::AppError;
use crate::rest::{bundle_json, tool_json};
use crate::{AppState, Error, Principal, Result};

pub use chat::ChatSettings;

const INDEX_HTML: &str = include_str!("../../assets/console/index.html");
const CONSOLE_CSS: &str = include_str!("../../assets/console/console.css");
const CONSOLE_JS: &str = include_str!("../../assets/console/console.js");
const FORM_JS: &str = include_str!("../../assets/console/form.js");
const CHAT_JS: &str = include_str!("../../assets/console/chat.js");
const RECIPES_JS: &str = include_str!("../../assets/console/recipes.js");

/// The console's content security policy: nothing inline, nothing from elsewhere.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/// What the console needs beyond the [`AppState`]: the chat's endpoint, and the calls
/// waiting for a person's approval.
#[derive(Debug, Clone, Default)]
pub struct Console {
    pub(crate) chat: Option<ChatSettings>,
    /// The chat's one client of its endpoint, shared by every turn: what it learns of
    /// the endpoint (that it refuses some tool schemas) holds for the next turn too.
    pub(crate) client: Option<toolscout_agent::ChatClient>,
    pub(crate) approvals: chat::Approvals,
}

impl Console {
    /// A console whose chat talks to `settings`' endpoint; without one the chat says
    /// that no endpoint is configured.
    pub fn with_chat(mut self, settings: Option<ChatSettings>) -> Self {
        self.client = settings
            .as_ref()
            .map(|s| toolscout_agent::ChatClient::new(&s.base_url, &s.api_key));
        self.chat = settings;
        self
    }

    /// The chat endpoint, when one is configured.
    pub fn chat(&self) -> Option<&ChatSettings> {
        self.chat.as_ref()
    }
}

/// [`crate::router`] over `state`, with the console's chat set up by `console`.
pub fn router(state: AppState, console: Console) -> Router {
    crate::router(state).layer(Extension(Arc::new(console)))
}

/// Serves [`router`] on a bound listener until the process ends.
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    state: AppState,
    console: Console,
) -> Result<()> {
    serve_until(listener, state, console, std::future::pending()).await
}

pub use crate::conn::SHUTDOWN_GRACE;

/// Serves [`router`] on a bound listener until `shutdown` completes (e.g. on SIGINT or
/// SIGTERM), then shuts down without loss: it stops accepting connections, lets the
/// requests in flight finish (for at most the connections' shutdown grace, by default
/// [`SHUTDOWN_GRACE`]; then they are cancelled), and writes the pending
/// usage counts ([`toolscout_catalog::Catalog::flush_usage`]) before it returns.
///
/// ```no_run
/// # async fn run(state: toolscout_server::AppState) -> toolscout_server::Result<()> {
/// use toolscout_server::console::{Console, serve_until};
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:7411").await.unwrap();
/// let stop = async { tokio::time::sleep(std::time::Duration::from_secs(60)).await };
/// serve_until(listener, state, Console::default(), stop).await
/// # }
/// ```
pub async fn serve_until(
    listener: tokio::net::TcpListener,
    state: AppState,
    console: Console,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let toolbox = state.toolbox().clone();
    let limits = state.options().connections;
    let stop = Arc::new(tokio::sync::Notify::new());
    let stopping = Arc::clone(&stop);
    let server = crate::conn::serve(listener, router(state, console), limits, async move {
        shutdown.await;
        // A stored permit: the grace timer starts even if it waits later.
        stopping.notify_one();
    });
    let served = tokio::select! {
        served = server => served.map_err(|e| Error::Io {
            context: "serving".to_owned(),
            source: e,
        }),
        () = async {
            stop.notified().await;
            // The connections close themselves at the grace; this is the backstop.
            tokio::time::sleep(limits.shutdown_grace + std::time::Duration::from_millis(500)).await;
        } => {
            tracing::warn!(
                "requests were still in flight {} s after the shutdown signal; stopping anyway",
                limits.shutdown_grace.as_secs()
            );
            Ok(())
        }
    };
    let flushed = tokio::task::spawn_blocking(move || toolbox.catalog().flush_usage())
        .await
        .map_err(|e| Error::Io {
            context: "writing usage counts".to_owned(),
            source: std::io::Error::other(e.to_string()),
        })?;
    served?;
    Ok(flushed?)
}

/// The console's routes, merged into [`crate::router`]: its rows of
/// [`crate::routes()`].
///
/// # Panics
///
/// On a console row it has no handler for (a programming error, caught by every test
/// that builds a router).
pub(crate) fn routes() -> Router<AppState> {
    let mut router = Router::new();
    for route in crate::routes()
        .iter()
        .filter(|r| crate::routes::is_console(r.path))
    {
        router = router.route(route.path, handler(route));
    }
    router
}

fn handler(route: &crate::Route) -> MethodRouter<AppState> {
    match (route.method.as_str(), route.path) {
        ("GET", "/") => get(index),
        ("GET", "/console/console.css") => get(css),
        ("GET", "/console/console.js") => get(js),
        ("GET", "/console/form.js") => get(form_js),
        ("GET", "/console/chat.js") => get(chat_js),
        ("GET", "/console/recipes.js") => get(recipes_js),
        ("GET", "/console/api/levels/{bundle}/{slug}/{version}") => get(levels),
        ("GET", "/console/api/bundles/{bundle}/export") => get(export_bundle),
        ("POST", "/console/api/bundles/import") => post(import_bundle),
        ("GET", "/console/api/chat") => get(chat::status),
        ("POST", "/console/api/chat") => post(chat::turn),
        ("POST", "/console/api/chat/approve") => post(chat::approve),
        ("POST", "/console/api/recipes/try") => post(recipes::try_recipe),
        (method, path) => {
            panic!("routes() lists {method} {path}, which the console has no handler for")
        }
    }
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    let mut response = ([(header::CONTENT_TYPE, kind)], body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX_HTML)
}

async fn css() -> Response {
    asset("text/css; charset=utf-8", CONSOLE_CSS)
}

async fn js() -> Response {
    asset("text/javascript; charset=utf-8", CONSOLE_JS)
}

async fn form_js() -> Response {
    asset("text/javascript; charset=utf-8", FORM_JS)
}

async fn chat_js() -> Response {
    asset("text/javascript; charset=utf-8", CHAT_JS)
}

async fn recipes_js() -> Response {
    asset("text/javascript; charset=utf-8", RECIPES_JS)
}

/// `GET /console/api/levels/{bundleID}/{slug}/{version}`: each level's text with its
/// token count (o200k), and each parameter's detail.
async fn levels(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path((bundle, slug, version)): Path<(String, String, String)>,
) -> Result<Json<Value>, AppError> {
    let bundle = uuid::Uuid::try_parse(&bundle)
        .map_err(|_| AppError::invalid(format!("bundleID {bundle:?} is not a UUID")))?;
    let tool = state
        .toolbox()
        .catalog()
        .view(&principal.viewer())
        .get_tool(bundle, &slug, &version)?;
    let spec = &tool.spec;
    let levels: Vec<Value> = Level::ALL
        .iter()
        .map(|level| {
            let d = spec.disclose(*level);
            json!({
                "level": level.number(),
                "text": d.to_text(),
                "tokens": d.tokens(),
                "jsonTokens": d.json_tokens(),
            })
        })
        .collect();
    let parameters: Vec<Value> = spec
        .parameter_names()
        .iter()
        .filter_map(|name| {
            let detail = spec.parameter(name).ok()?;
            let value = serde_json::to_value(&detail).ok()?;
            let text = serde_json::to_string_pretty(&value).ok()?;
            Some(json!({"name": name, "text": text, "tokens": tokens::count(&text)}))
        })
        .collect();
    Ok(Json(json!({
        "name": spec.name.as_str(),
        "levels": levels,
        "parameters": parameters,
    })))
}

fn parse_bundle_id(raw: &str) -> Result<uuid::Uuid, AppError> {
    uuid::Uuid::try_parse(raw)
        .map_err(|_| AppError::invalid(format!("bundleID {raw:?} is not a UUID")))
}

/// `GET /console/api/bundles/{bundleID}/export`: the bundle as a ZIP archive.
async fn export_bundle(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    Path(bundle): Path<String>,
) -> Result<Response, AppError> {
    let id = parse_bundle_id(&bundle)?;
    let toolbox = state.toolbox().clone();
    let viewer = principal.viewer();
    let (slug, bytes) = tokio::task::spawn_blocking(move || {
        let catalog = toolbox.catalog();
        let view = catalog.view(&viewer);
        // A bundle outside the view is one that does not exist.
        if !view.sees(id) {
            return Err(toolscout_catalog::Error::BundleNotFound { bundle: id });
        }
        let query = toolscout_catalog::BundleQuery::default()
            .with_bundle_ids(&[id])
            .with_include_disabled(true);
        let slug = view
            .list_bundles(&query)?
            .items
            .first()
            .map_or_else(|| id.to_string(), |b| b.slug.clone());
        let mut out = std::io::Cursor::new(Vec::new());
        catalog.export_bundle(id, &mut out)?;
        Ok::<_, toolscout_catalog::Error>((slug, out.into_inner()))
    })
    .await
    .map_err(|e| AppError::unavailable(format!("export failed: {e}")))??;
    let disposition = format!("attachment; filename=\"{slug}.zip\"");
    let mut response = ([(header::CONTENT_TYPE, "application/zip")], bytes).into_response();
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        response
            .headers_mut()
            .insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(response)
}

/// `POST /console/api/bundles/import` with a ZIP archive as the body.
async fn import_bundle(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, AppError> {
    let body = body?;
    if body.is_empty() {
        return Err(AppError::invalid(
            "the body is empty: send a bundle's ZIP archive (as written by export)",
        ));
    }
    let toolbox = state.toolbox().clone();
    let viewer = principal.viewer();
    // A tenant imports into its own bundle, with ids of its own (`CatalogView::import_bundle`).
    let imported = tokio::task::spawn_blocking(move || {
        toolbox
            .catalog()
            .view(&viewer)
            .import_bundle(std::io::Cursor::new(body.to_vec()))
    })
    .await
    .map_err(|e| AppError::unavailable(format!("import failed: {e}")))??;
    Ok(Json(json!({
        "bundle": bundle_json(&imported.bundle),
        "created": imported.created,
        "tools": imported.tools.iter().map(tool_json).collect::<Vec<_>>(),
    })))
}
