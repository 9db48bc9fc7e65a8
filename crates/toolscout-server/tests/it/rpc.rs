//! JSON-RPC 2.0 at `POST /rpc`: envelopes as clients see them.

use serde_json::{Value, json};
use toolscout_server::ServerOptions;

use crate::{fixture, fixture_with, names, redact, send, send_raw};

async fn rpc(app: &axum::Router, body: Value) -> Value {
    let r = send(app, "POST", "/rpc", Some(body)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    r.body
}

#[tokio::test]
async fn identity_and_list() {
    let f = fixture_with(ServerOptions::default().with_page_size(1), false);
    let identity = rpc(
        &f.app,
        json!({"jsonrpc": "2.0", "method": "server/identity", "id": 1}),
    )
    .await;
    assert_eq!(
        identity["result"]["server_id"],
        json!(f.state.toolbox().catalog().identity())
    );
    insta::assert_json_snapshot!("identity", redact(&identity));

    let first = rpc(
        &f.app,
        json!({"jsonrpc": "2.0", "method": "tools/list", "id": "a"}),
    )
    .await;
    assert_eq!(names(&first["result"]["tools"]), ["get_forecast"]);
    let cursor = first["result"]["nextCursor"].clone();
    let second = rpc(
        &f.app,
        json!({"jsonrpc": "2.0", "method": "tools/list", "params": {"cursor": cursor}, "id": "b"}),
    )
    .await;
    assert_eq!(names(&second["result"]["tools"]), ["spawn_agent"]);
    assert!(second["result"].get("nextCursor").is_none());
    insta::assert_json_snapshot!("tools_list_page", second);
}

#[tokio::test]
async fn call_describe_search() {
    let f = fixture();
    let call = rpc(
        &f.app,
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "json_query", "arguments": {"value": {"a": [1, 2]}, "path": "$.a[1]"}}, "id": 1}),
    )
    .await;
    insta::assert_json_snapshot!("call", call);

    let failed = rpc(
        &f.app,
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "read_file", "arguments": {"file_path": "missing.txt"}}, "id": 2}),
    )
    .await;
    assert_eq!(failed["result"]["ok"], false);

    let describe = rpc(
        &f.app,
        json!({"jsonrpc": "2.0", "method": "tools/describe", "params": {"name": "get_forecast", "level": 2}, "id": 3}),
    )
    .await;
    insta::assert_json_snapshot!("describe", describe);
    let parameter = rpc(
        &f.app,
        json!({"jsonrpc": "2.0", "method": "tools/describe", "params": {"name": "get_forecast", "parameter": "city"}, "id": 4}),
    )
    .await;
    assert_eq!(parameter["result"]["parameter"]["parameter"], "city");
    assert_eq!(parameter["result"]["parameter"]["required"], true);

    let search = rpc(
        &f.app,
        json!({"jsonrpc": "2.0", "method": "tools/search", "params": {"query": "forecast"}, "id": 5}),
    )
    .await;
    assert_eq!(search["result"]["tools"][0]["name"], "get_forecast");
}

#[tokio::test]
async fn errors_have_standard_codes_and_helpful_messages() {
    let f = fixture();
    let parse = send_raw(&f.app, "POST", "/rpc", b"{\"jsonrpc\": \"2.0\", ").await;
    let cases = [
        json!([]),
        json!(42),
        json!({"jsonrpc": "1.0", "method": "tools/list", "id": 1}),
        json!({"jsonrpc": "2.0", "id": 1}),
        json!({"jsonrpc": "2.0", "method": "tools/delete", "id": 1}),
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"arguments": {}}, "id": 1}),
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": [1], "id": 1}),
        json!({"jsonrpc": "2.0", "method": "tools/describe", "params": {"name": "get_forcast"}, "id": 1}),
        json!({"jsonrpc": "2.0", "method": "tools/describe", "params": {"name": "get_forecast", "level": 9}, "id": 1}),
    ];
    let mut replies = vec![parse.body];
    for c in cases {
        replies.push(rpc(&f.app, c).await);
    }
    insta::assert_json_snapshot!("errors", replies);
}

#[tokio::test]
async fn batches_and_notifications() {
    let f = fixture();
    let batch = rpc(
        &f.app,
        json!([
            {"jsonrpc": "2.0", "method": "server/identity", "id": 1},
            {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "clock", "arguments": {"action": "now"}}},
            {"jsonrpc": "2.0", "method": "nope", "id": 2},
            "junk"
        ]),
    )
    .await;
    let replies = batch.as_array().unwrap();
    assert_eq!(replies.len(), 3);
    assert_eq!(replies[0]["id"], 1);
    assert_eq!(replies[1]["error"]["code"], -32601);
    assert_eq!(replies[2]["error"]["code"], -32600);

    let only_notifications = send(
        &f.app,
        "POST",
        "/rpc",
        Some(json!([{"jsonrpc": "2.0", "method": "server/identity"}])),
    )
    .await;
    assert_eq!(only_notifications.status, 204);
}

/// A tool whose name OpenAI refuses (`weather.now`) answers to its alias (`weather_now`,
/// as `export --format openai` and the agent loop name it) on describe and call.
#[tokio::test]
async fn aliases_name_tools() {
    let f = fixture();
    let spec = toolscout_spec::ToolSpec::builder("weather.now", "The weather now in a city")
        .parameters(json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"]
        }))
        .build()
        .unwrap();
    f.state
        .toolbox()
        .catalog()
        .put_tool(
            f.weather,
            "weather-now",
            "1",
            &toolscout_catalog::ToolPut::http(
                spec,
                json!({"method": "GET", "urlTemplate": "https://api.example.com/now"}),
            ),
        )
        .unwrap();
    let described = rpc(
        &f.app,
        json!({"jsonrpc": "2.0", "method": "tools/describe", "params": {"name": "weather_now", "level": 1}, "id": 1}),
    )
    .await;
    assert_eq!(
        described["result"]["tool"]["name"], "weather.now",
        "{described}"
    );
    let called = rpc(
        &f.app,
        json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "weather_now", "arguments": {}}, "id": 2}),
    )
    .await;
    // Found, so the arguments are checked: `city` is missing.
    assert_eq!(
        called["result"]["error"]["kind"], "invalid_arguments",
        "{called}"
    );
    let unknown = rpc(
        &f.app,
        json!({"jsonrpc": "2.0", "method": "tools/describe", "params": {"name": "weather_later"}, "id": 3}),
    )
    .await;
    assert!(unknown["error"].is_object(), "{unknown}");
}
