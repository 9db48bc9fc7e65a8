//! Recipes over every surface: authored with the REST API, called by REST (both invoke
//! routes), JSON-RPC and MCP (rmcp's client on a loopback socket), listed in the
//! manifest; `http_get` → `json_query` against a real local HTTP server, and a
//! three-step graph whose first two steps run side by side. Approval over MCP: one
//! question listing the steps.

use rmcp::model::ElicitationAction;
use serde_json::{Value, json};
use tempfile::TempDir;
use toolscout_catalog::{Catalog, CatalogOptions, builtin};
use toolscout_discover::Toolbox;
use toolscout_invoke::builtin::BuiltinConfig;
use toolscout_invoke::{AllowedHosts, HttpConfig, Invoker};
use toolscout_search::SearchIndex;
use toolscout_server::{AppState, ServerOptions, router};
use uuid::Uuid;

use crate::mcp_approval::{call as mcp_call, connect_with};
use crate::socket::spawn;
use crate::{names, send};

/// A server whose `http_get` may reach loopback, a `mine` bundle, and a local HTTP server
/// answering `{"city": "Oslo", "temp": {"c": 21}}`.
struct World {
    state: AppState,
    app: axum::Router,
    bundle: Uuid,
    weather_url: String,
    workspace: TempDir,
    _catalog_dir: TempDir,
}

async fn world() -> World {
    world_with(toolscout_invoke::SecretStore::default()).await
}

/// [`world`] whose invoker holds `secrets`; the loopback server also answers `/echo`
/// with its query string.
async fn world_with(secrets: toolscout_invoke::SecretStore) -> World {
    let catalog_dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let catalog = Catalog::open_with(
        catalog_dir.path(),
        CatalogOptions::default().with_natives(&builtin::NATIVE_FUNCTIONS),
    )
    .unwrap();
    let loopback = || AllowedHosts::new(["127.0.0.1:*"]).allow_private(true);
    let mut invoker = Invoker::default()
        .with_http_config(HttpConfig::with_allowed_hosts(loopback()))
        .with_secrets(secrets);
    toolscout_invoke::builtin::register(
        &mut invoker,
        &BuiltinConfig::new(workspace.path(), loopback()),
    )
    .unwrap();
    let toolbox = Toolbox::new(catalog, SearchIndex::in_memory().unwrap(), invoker).unwrap();
    let state = AppState::new(toolbox, ServerOptions::default());
    let app = router(state.clone());
    let bundle = Uuid::now_v7();
    let put = send(
        &app,
        "PUT",
        &format!("/tools/bundles/{bundle}"),
        Some(json!({"slug": "mine"})),
    )
    .await;
    assert_eq!(put.status, 200, "{}", put.body);
    let weather = axum::Router::new()
        .route(
            "/weather",
            axum::routing::get(|| async { axum::Json(json!({"city": "Oslo", "temp": {"c": 21}})) }),
        )
        .route(
            "/echo",
            axum::routing::get(|uri: axum::http::Uri| async move {
                axum::Json(json!({"query": uri.query().unwrap_or_default()}))
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let weather_url = format!("http://{}/weather", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, weather).await });
    World {
        state,
        app,
        bundle,
        weather_url,
        workspace,
        _catalog_dir: catalog_dir,
    }
}

impl World {
    async fn put(&self, slug: &str, body: Value) -> crate::Reply {
        let uri = format!("/tools/bundles/{}/tools/{slug}/version/1", self.bundle);
        send(&self.app, "PUT", &uri, Some(body)).await
    }
}

fn fetch_recipe() -> Value {
    json!({
        "name": "city_temperature",
        "description": "Fetches a weather document and selects its temperature in degrees Celsius.",
        "type": "recipe",
        "argSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
        "impl": {
            "steps": [
                {"id": "fetch", "tool": "http_get", "from": {"url": "$.args.url"}},
                {"id": "temp", "tool": "json_query", "args": {"path": "$.temp.c"},
                 "from": {"value": {"path": "$.steps.fetch.body", "parse": "json"}}}
            ],
            "result": {"status": "$.steps.fetch.status", "celsius": "$.steps.temp[0]"}
        }
    })
}

fn graph_recipe() -> Value {
    json!({
        "name": "tokyo_now_in_oslo",
        "description": "Reads the clock in Tokyo and in Oslo side by side, then converts Tokyo's time to Oslo's zone.",
        "type": "recipe",
        "impl": {
            "steps": [
                {"id": "tokyo", "tool": "clock", "args": {"action": "now", "time_zone": "Asia/Tokyo"}},
                {"id": "oslo", "tool": "clock", "args": {"action": "now", "time_zone": "Europe/Oslo"}},
                {"id": "convert", "tool": "clock", "args": {"action": "convert"},
                 "from": {"time": "$.steps.tokyo.time", "time_zone": "$.steps.oslo.time_zone"}}
            ],
            "result": {"tokyo": "$.steps.tokyo.unix_seconds", "in_oslo": "$.steps.convert.unix_seconds",
                       "zone": "$.steps.convert.time_zone"}
        }
    })
}

/// A recipe whose second step writes with `write_file`, which requires approval.
fn note_time() -> Value {
    json!({
        "name": "note_time",
        "description": "Writes the current UTC time to time.txt.",
        "type": "recipe",
        "impl": {"steps": [
            {"id": "now", "tool": "clock", "args": {"action": "now"}},
            {"id": "save", "tool": "write_file", "args": {"file_path": "time.txt"}, "from": {"content": "$.steps.now.time"}}
        ]}
    })
}

/// The graph's result is the same instant in Oslo's zone, whoever calls it.
fn check_graph(value: &Value) {
    assert_eq!(value["zone"], "Europe/Oslo", "{value}");
    assert_eq!(value["tokyo"], value["in_oslo"], "{value}");
}

#[tokio::test]
async fn recipes_are_put_over_rest_and_called_over_rest_rpc_mcp_and_listed_in_the_manifest() {
    let w = world().await;
    for (slug, body) in [
        ("city-temperature", fetch_recipe()),
        ("tokyo-now-in-oslo", graph_recipe()),
    ] {
        let put = w.put(slug, body).await;
        assert_eq!(put.status, 200, "{}", put.body);
        assert_eq!(put.body["type"], "recipe");
    }
    let args = json!({"url": w.weather_url});
    let want = json!({"status": 200, "celsius": 21});

    // REST: the version route and the manifest's route by name.
    let by_version = send(
        &w.app,
        "POST",
        &format!(
            "/tools/bundles/{}/tools/city-temperature/version/1/invoke",
            w.bundle
        ),
        Some(json!({"args": args})),
    )
    .await;
    assert_eq!(
        by_version.body,
        json!({"ok": true, "value": want}),
        "{}",
        by_version.body
    );
    let by_name = send(
        &w.app,
        "POST",
        "/api/v1/tools/tokyo_now_in_oslo/invoke",
        Some(json!({"args": {}})),
    )
    .await;
    assert_eq!(by_name.body["ok"], true, "{}", by_name.body);
    check_graph(&by_name.body["value"]);

    // JSON-RPC.
    let rpc = send(
        &w.app,
        "POST",
        "/rpc",
        Some(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "city_temperature", "arguments": args}})),
    )
    .await;
    let rpc_text = rpc.body.to_string();
    assert!(rpc_text.contains("\"celsius\":21"), "{rpc_text}");

    // The manifest lists both; level 3 (REST's tool document) holds the steps.
    let manifest = send(&w.app, "GET", "/api/v1/tools", None).await;
    let listed = names(&manifest.body["tools"]);
    assert!(
        listed.contains(&"city_temperature".to_owned()),
        "{listed:?}"
    );
    assert!(
        listed.contains(&"tokyo_now_in_oslo".to_owned()),
        "{listed:?}"
    );

    // MCP, rmcp's client over a socket.
    let url = spawn(w.state.clone()).await;
    let (client, _) = connect_with(&url, None, None).await;
    let result = mcp_call(
        &client,
        "call_tool",
        json!({"name": "city_temperature", "arguments": args}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(result.structured_content.as_ref().unwrap(), &want);
    let graph = mcp_call(
        &client,
        "call_tool",
        json!({"name": "tokyo_now_in_oslo", "arguments": {}}),
    )
    .await;
    check_graph(graph.structured_content.as_ref().unwrap());
    client.cancel().await.unwrap();

    // A failing step is named, over REST, with what it got.
    let bad = send(
        &w.app,
        "POST",
        "/api/v1/tools/city_temperature/invoke",
        Some(json!({"args": {"url": "http://127.0.0.1:9/nothing"}})),
    )
    .await;
    assert_eq!(bad.body["ok"], false, "{}", bad.body);
    let message = bad.body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("step 'fetch' (http_get) of recipe 'city_temperature' failed: "),
        "{message}"
    );
    assert_eq!(
        bad.body["error"]["details"]["arguments"]["url"],
        "http://127.0.0.1:9/nothing"
    );
}

#[tokio::test]
async fn a_bad_recipe_is_refused_over_rest_naming_the_step_and_nothing_is_stored() {
    let w = world().await;
    let before = w.state.toolbox().catalog().generation();
    let mut missing = graph_recipe();
    missing["impl"]["steps"][2]["tool"] = json!("clocks");
    let mut wrong_type = graph_recipe();
    wrong_type["impl"]["steps"][2]["from"]["time"] = json!("$.steps.tokyo.unix_seconds");
    let mut cycle = graph_recipe();
    cycle["impl"]["steps"][0]["after"] = json!(["convert"]);
    let mut answers = Vec::new();
    for body in [missing, wrong_type, cycle] {
        let r = w.put("bad", body).await;
        assert_eq!(r.status, 400, "{}", r.body);
        answers.push(r.body["error"]["message"].clone());
    }
    insta::assert_json_snapshot!(answers, @r#"
    [
      "recipe 'tokyo_now_in_oslo': step 'convert': calls 'clocks', which no tool of the catalog is named; did you mean: clock?",
      "recipe 'tokyo_now_in_oslo': step 'convert': from.time: $.steps.tokyo.unix_seconds gives integer, but 'clock' takes string for 'time'",
      "recipe 'tokyo_now_in_oslo': the steps tokyo, convert wait for each other (a cycle)"
    ]
    "#);
    assert_eq!(w.state.toolbox().catalog().generation(), before);
}

#[tokio::test]
async fn over_mcp_a_recipe_with_a_write_asks_once_listing_its_steps() {
    let w = world().await;
    assert_eq!(w.put("note-time", note_time()).await.status, 200);
    let url = spawn(w.state.clone()).await;
    for answer in [ElicitationAction::Decline, ElicitationAction::Accept] {
        let (client, asked) = connect_with(&url, Some(answer.clone()), None).await;
        let result = mcp_call(&client, "note_time", json!({})).await;
        let asked = asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 1, "{answer:?}: {asked:?}");
        let question = &asked[0].0;
        assert!(
            question.contains("- now: clock\n- save: write_file (asks for approval)"),
            "{question}"
        );
        let written = w.workspace.path().join("time.txt");
        if answer == ElicitationAction::Accept {
            assert_ne!(result.is_error, Some(true), "{result:?}");
            assert!(written.exists());
        } else {
            assert_eq!(result.is_error, Some(true), "{result:?}");
            assert!(!written.exists(), "a refused recipe wrote");
        }
        client.cancel().await.unwrap();
    }
}

/// The outcome event of a console try's server-sent events.
fn tried_outcome(r: &crate::Reply) -> Value {
    let text = r.body.as_str().unwrap_or_default();
    let block = text
        .split("\n\n")
        .find(|b| b.lines().any(|l| l.trim() == "event: outcome"))
        .unwrap_or_else(|| panic!("no outcome event in {text}"));
    let data: String = block
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim_start)
        .collect();
    serde_json::from_str(&data).unwrap()
}

#[tokio::test]
async fn the_console_tries_both_recipes_before_they_are_saved() {
    let w = world().await;
    let mut fetch = fetch_recipe();
    fetch["slug"] = json!("city-temperature");
    fetch["version"] = json!("1");
    let r = send(
        &w.app,
        "POST",
        "/console/api/recipes/try",
        Some(json!({"tool": fetch, "args": {"url": w.weather_url}})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        tried_outcome(&r),
        json!({"ok": true, "value": {"status": 200, "celsius": 21}})
    );
    let mut graph = graph_recipe();
    graph["slug"] = json!("tokyo-now-in-oslo");
    graph["version"] = json!("1");
    let r = send(
        &w.app,
        "POST",
        "/console/api/recipes/try",
        Some(json!({"tool": graph, "args": {}})),
    )
    .await;
    let outcome = tried_outcome(&r);
    assert_eq!(outcome["ok"], true, "{outcome}");
    check_graph(&outcome["value"]);
}

#[tokio::test]
async fn over_rest_and_json_rpc_a_recipe_with_a_write_is_refused_unapproved_and_runs_nothing() {
    let w = world().await;
    assert_eq!(w.put("note-time", note_time()).await.status, 200);
    let rest = send(
        &w.app,
        "POST",
        "/api/v1/tools/note_time/invoke",
        Some(json!({"args": {}})),
    )
    .await;
    assert_eq!(
        rest.body["error"]["kind"], "approval_refused",
        "{}",
        rest.body
    );
    let rpc = send(
        &w.app,
        "POST",
        "/rpc",
        Some(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "note_time", "arguments": {}}})),
    )
    .await;
    assert!(
        rpc.body.to_string().contains("approval_refused"),
        "{}",
        rpc.body
    );
    assert!(
        !w.workspace.path().join("time.txt").exists(),
        "an unapproved recipe wrote"
    );
    // Usage: the refused calls ran no step.
    let catalog = w.state.toolbox().catalog();
    let (clock, _) = catalog.name_holder("clock").unwrap();
    assert_eq!(catalog.tool(clock).unwrap().usage.call_count, 0);
}

#[tokio::test]
async fn each_step_gets_only_the_secrets_granted_to_its_tool_and_none_reach_the_result() {
    let mut secrets = toolscout_invoke::SecretStore::default();
    secrets.insert("API_KEY", "s3cr3t-value");
    secrets.grant_tool("API_KEY", "keyed_echo");
    let w = world_with(secrets).await;
    let echo = w.weather_url.replace("/weather", "/echo");
    for (slug, name) in [
        ("keyed-echo", "keyed_echo"),
        ("unkeyed-echo", "unkeyed_echo"),
    ] {
        let http = json!({
            "name": name, "description": "Echoes its query.", "type": "http",
            "impl": {"method": "GET", "urlTemplate": format!("{echo}?key=${{API_KEY}}")}
        });
        let put = w.put(slug, http).await;
        assert_eq!(put.status, 200, "{}", put.body);
    }
    let recipe = |name: &str, tool: &str| {
        json!({"name": name, "description": "Calls an echo.", "type": "recipe",
               "impl": {"steps": [{"id": "echo", "tool": tool}], "result": "$.steps.echo"}})
    };
    assert_eq!(
        w.put("granted", recipe("granted", "keyed_echo"))
            .await
            .status,
        200
    );
    assert_eq!(
        w.put("not-granted", recipe("not_granted", "unkeyed_echo"))
            .await
            .status,
        200
    );
    let ok = send(
        &w.app,
        "POST",
        "/api/v1/tools/granted/invoke",
        Some(json!({"args": {}})),
    )
    .await;
    assert_eq!(ok.body["ok"], true, "{}", ok.body);
    // The step sent the key (the echo holds it), and the answer has it redacted.
    assert_eq!(ok.body["value"]["query"], "key=[REDACTED]", "{}", ok.body);
    assert!(!ok.body.to_string().contains("s3cr3t-value"));
    let refused = send(
        &w.app,
        "POST",
        "/api/v1/tools/not_granted/invoke",
        Some(json!({"args": {}})),
    )
    .await;
    assert_eq!(refused.body["ok"], false, "{}", refused.body);
    let message = refused.body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("step 'echo' (unkeyed_echo) of recipe 'not_granted' failed: "),
        "{message}"
    );
    assert!(!refused.body.to_string().contains("s3cr3t-value"));
}
