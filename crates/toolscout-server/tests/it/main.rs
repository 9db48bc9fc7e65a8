//! Integration tests of `toolscout-server`: every route through `oneshot` (no socket),
//! a few end-to-end tests over 127.0.0.1, and remote catalogs against a second server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod api_doc;
mod connections;
mod console;
mod console_recipes;
mod events;
mod hardening;
mod manifest;
#[cfg(feature = "mcp")]
mod mcp;
#[cfg(feature = "mcp")]
mod mcp_approval;
#[cfg(feature = "mcp")]
mod mcp_session;
mod props;
#[cfg(feature = "mcp")]
mod recipes;
mod remote;
mod replicas;
mod rest;
mod rpc;
mod security;
pub(crate) mod socket;
mod tenants;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use serde_json::{Value, json};
use tempfile::TempDir;
use toolscout_catalog::{BundlePut, Catalog, CatalogOptions, ToolPut, builtin};
use toolscout_discover::Toolbox;
use toolscout_invoke::builtin::BuiltinConfig;
use toolscout_invoke::{AllowedHosts, HttpConfig, Invoker};
use toolscout_search::SearchIndex;
use toolscout_server::{AppState, ServerOptions, router};
use toolscout_spec::ToolSpec;
use tower::ServiceExt;
use uuid::Uuid;

/// A server over a temporary catalog: the built-in bundles (unless `small`) and a
/// `weather` bundle with two HTTP tools, an invoker with the built-in tools on a
/// temporary workspace holding `hello.txt`.
struct Fixture {
    state: AppState,
    app: Router,
    weather: Uuid,
    _workspace: TempDir,
    _catalog_dir: TempDir,
}

fn fixture() -> Fixture {
    fixture_with(ServerOptions::default(), true)
}

fn fixture_with(options: ServerOptions, builtins: bool) -> Fixture {
    let catalog_dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("hello.txt"), "hello\nworld\n").unwrap();
    let catalog = Catalog::open_with(
        catalog_dir.path(),
        CatalogOptions::default()
            .with_builtins(builtins)
            .with_natives(&builtin::NATIVE_FUNCTIONS),
    )
    .unwrap();
    let weather = Uuid::now_v7();
    catalog
        .put_bundle(
            weather,
            &BundlePut::new("weather").with_display_name("Weather"),
        )
        .unwrap();
    let forecast = ToolSpec::builder("get_forecast", "Weather forecast for a city")
        .description("Returns the forecast for the next days in a city.")
        .parameters(json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"]
        }))
        .category("weather")
        .tag("weather")
        .build()
        .unwrap();
    let spawn = ToolSpec::builder("spawn_agent", "Start an agent on a task")
        .parameters(json!({
            "type": "object",
            "properties": {"task": {"type": "string"}},
            "required": ["task"]
        }))
        .category("agent_lifecycle")
        .with_metadata(|m| m.long_running = true)
        .build()
        .unwrap();
    for (slug, spec) in [("get-forecast", forecast), ("spawn-agent", spawn)] {
        let put = ToolPut::http(
            spec,
            json!({"method": "GET", "urlTemplate": "https://api.example.com/x"}),
        );
        catalog.put_tool(weather, slug, "1", &put).unwrap();
    }
    let mut invoker = Invoker::default().with_http_config(HttpConfig::with_allowed_hosts(
        AllowedHosts::new(["127.0.0.1:*"]).allow_private(true),
    ));
    toolscout_invoke::builtin::register(
        &mut invoker,
        &BuiltinConfig::new(workspace.path(), AllowedHosts::default()),
    )
    .unwrap();
    let toolbox = Toolbox::new(catalog, SearchIndex::in_memory().unwrap(), invoker).unwrap();
    let state = AppState::new(toolbox, options);
    Fixture {
        app: router(state.clone()),
        state,
        weather,
        _workspace: workspace,
        _catalog_dir: catalog_dir,
    }
}

/// One answer: status, headers, and the body as JSON (a string when it is not JSON,
/// `null` when empty).
#[derive(Debug)]
struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Value,
}

async fn send(app: &Router, method: &str, uri: &str, body: Option<Value>) -> Reply {
    send_with(app, method, uri, body, &[]).await
}

async fn send_with(
    app: &Router,
    method: &str,
    uri: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> Reply {
    let mut req = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = match body {
        Some(b) => req
            .header("content-type", "application/json")
            .body(Body::from(b.to_string())),
        None => req.body(Body::empty()),
    }
    .unwrap();
    reply(app.clone().oneshot(req).await.unwrap()).await
}

async fn send_raw(app: &Router, method: &str, uri: &str, body: &'static [u8]) -> Reply {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .body(Body::from(body))
        .unwrap();
    reply(app.clone().oneshot(req).await.unwrap()).await
}

async fn reply(resp: axum::response::Response) -> Reply {
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
    };
    Reply {
        status,
        headers,
        body,
    }
}

/// `value` with every UUID and timestamp-looking string replaced, for snapshots.
fn redact(value: &Value) -> Value {
    match value {
        Value::String(s) if Uuid::try_parse(s.trim_matches('"')).is_ok() => json!("[uuid]"),
        Value::String(s) if chrono::DateTime::parse_from_rfc3339(s).is_ok() => json!("[time]"),
        Value::String(s) => {
            let mut out = s.clone();
            for word in s.split(|c: char| !(c.is_ascii_hexdigit() || c == '-')) {
                if word.len() >= 32 && Uuid::try_parse(word).is_ok() {
                    out = out.replace(word, "[uuid]");
                }
            }
            json!(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), redact(v))).collect())
        }
        other => other.clone(),
    }
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}
