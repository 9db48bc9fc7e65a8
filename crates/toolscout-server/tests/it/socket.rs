//! End to end over a real 127.0.0.1 socket: manifest with ETag and 304, a JSON-RPC call,
//! and MCP over streamable HTTP.

#[cfg(feature = "mcp")]
use std::time::Duration;

use serde_json::{Value, json};
use toolscout_server::{AppState, serve_on};

use crate::fixture;
#[cfg(feature = "mcp")]
use crate::names;

/// Serves `state` on a free loopback port; returns its base URL.
pub(crate) async fn spawn(state: AppState) -> String {
    // Every client of these tests talks to a server spawned here, and reqwest is built
    // without a TLS provider: install ring, as the library does (an error means one is).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(serve_on(listener, state));
    url
}

#[tokio::test]
async fn manifest_etag_and_304_over_a_socket() {
    let f = fixture();
    let url = spawn(f.state.clone()).await;
    let client = reqwest::Client::new();
    let first = client
        .get(format!("{url}/api/v1/tools"))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["cache-control"], "public, max-age=60");
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    let body: Value = first.json().await.unwrap();
    assert_eq!(body["protocol_version"], "1.0");
    assert_eq!(body["tools"].as_array().unwrap().len(), 8);

    let again = client
        .get(format!("{url}/api/v1/tools"))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
}

#[tokio::test]
async fn json_rpc_call_over_a_socket() {
    let f = fixture();
    let url = spawn(f.state.clone()).await;
    let reply: Value = reqwest::Client::new()
        .post(format!("{url}/rpc"))
        .json(&json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "read_file", "arguments": {"file_path": "hello.txt"}}, "id": 7}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(reply["id"], 7);
    assert_eq!(reply["result"]["ok"], true);
}

#[cfg(feature = "mcp")]
/// Posts one MCP message and returns the first JSON-RPC message with `id` in the answer
/// (JSON or server-sent events).
async fn mcp_post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: Value,
) -> (Option<String>, Option<Value>) {
    let mut req = client
        .post(format!("{url}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(s) = session {
        req = req
            .header("mcp-session-id", s)
            .header("mcp-protocol-version", "2025-06-18");
    }
    let mut resp = req.send().await.unwrap();
    let session = resp
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let Some(id) = body.get("id").cloned() else {
        assert_eq!(resp.status(), 202);
        return (session, None);
    };
    let mut text = String::new();
    let read = async {
        while let Some(chunk) = resp.chunk().await.unwrap() {
            text.push_str(&String::from_utf8_lossy(&chunk));
            for line in text.lines() {
                let data = line.strip_prefix("data:").unwrap_or(line);
                if let Ok(v) = serde_json::from_str::<Value>(data.trim())
                    && v["id"] == id
                {
                    return Some(v);
                }
            }
        }
        None
    };
    let message = tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .unwrap();
    (session, message)
}

#[cfg(feature = "mcp")]
#[tokio::test]
async fn mcp_over_streamable_http() {
    let f = fixture();
    let url = spawn(f.state.clone()).await;
    let client = reqwest::Client::new();
    let (session, init) = mcp_post(
        &client,
        &url,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}
        }}),
    )
    .await;
    let session = session.expect("a session id");
    assert_eq!(init.unwrap()["result"]["protocolVersion"], "2025-06-18");
    mcp_post(
        &client,
        &url,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    let (_, list) = mcp_post(
        &client,
        &url,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    assert_eq!(
        names(&list.unwrap()["result"]["tools"]),
        ["discover_tools", "call_tool"]
    );
    let (_, call) = mcp_post(
        &client,
        &url,
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "call_tool", "arguments": {"name": "read_file", "arguments": {"file_path": "hello.txt"}}
        }}),
    )
    .await;
    let call = call.unwrap();
    assert_eq!(call["result"]["isError"], false);
    assert!(
        call["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("hello")
    );
}
