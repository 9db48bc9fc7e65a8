//! Regressions of the third security pass (issue 61) that need no tenant's tools: the
//! `Host` check, MCP's parse errors, and what a tenant is told over JSON-RPC.

use serde_json::json;
use toolscout_catalog::TenantLimits;
use toolscout_server::{HostCheck, ServerOptions};

use crate::{fixture, fixture_with, send_with};

#[tokio::test]
async fn a_host_that_is_more_than_a_name_and_port_is_refused() {
    // Regression: `localhost#.attacker.com` read as `localhost` (the rest a fragment),
    // so a name that a resolver sends to the attacker passed as loopback.
    let f = fixture();
    for host in [
        "localhost#.attacker.com",
        "localhost?.attacker.com",
        "127.0.0.1#x.attacker.com",
        "localhost/.attacker.com",
        "localhost\\.attacker.com",
        "localhost:7411#.attacker.com",
        "localhost%23.attacker.com",
    ] {
        assert!(!HostCheck::Loopback.allows(host), "{host}");
        let r = send_with(&f.app, "GET", "/tools/bundles", None, &[("host", host)]).await;
        assert_eq!(r.status, 403, "{host}: {}", r.body);
        assert_eq!(r.body["error"]["code"], "forbidden_host", "{host}");
    }
    for host in ["localhost", "localhost:7411", "127.0.0.1:1", "[::1]:7411"] {
        assert!(HostCheck::Loopback.allows(host), "{host}");
    }
}

#[cfg(feature = "mcp")]
#[tokio::test]
async fn an_mcp_body_that_is_not_json_rpc_is_a_json_rpc_error() {
    // Regression: rmcp answered 415 in plain text ("fail to deserialize request body").
    let f = fixture();
    let headers = [
        ("accept", "application/json, text/event-stream"),
        ("host", "localhost"),
    ];
    let post = |body: &'static [u8]| {
        let app = f.app.clone();
        async move {
            let req = axum::http::Request::builder()
                .method("POST")
                .uri("/mcp")
                .header("content-type", "application/json")
                .header(headers[0].0, headers[0].1)
                .header(headers[1].0, headers[1].1)
                .body(axum::body::Body::from(body))
                .unwrap();
            crate::reply(tower::ServiceExt::oneshot(app, req).await.unwrap()).await
        }
    };
    let r = post(b"{\"jsonrpc\": \"2.0\", \"method\": ").await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        r.headers["content-type"], "application/json",
        "{:?}",
        r.headers
    );
    assert_eq!(r.body["jsonrpc"], "2.0");
    assert_eq!(r.body["id"], serde_json::Value::Null);
    assert_eq!(r.body["error"]["code"], -32700, "{}", r.body);
    // JSON, but no JSON-RPC message: an invalid request.
    let r = post(b"{\"hello\": 1}").await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.body["error"]["code"], -32600, "{}", r.body);
    insta::assert_json_snapshot!(r.body, @r#"
    {
      "jsonrpc": "2.0",
      "id": null,
      "error": {
        "code": -32600,
        "message": "invalid request: the body is no MCP client message (unrecognized JSON-RPC message)"
      }
    }
    "#);
    // A valid message still reaches rmcp.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let r = send_with(&f.app, "POST", "/mcp", Some(init), &headers).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn a_tenant_approving_over_json_rpc_is_told_why_it_may_not() {
    // Regression: JSON-RPC said the server has no token (it has one); REST said why.
    let f = fixture_with(ServerOptions::default().with_token(Some("s3cret")), true);
    let (_, token) = f
        .state
        .toolbox()
        .catalog()
        .add_tenant("acme", TenantLimits::default())
        .unwrap();
    let auth = format!("Bearer {}", token.reveal());
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "write_file", "arguments": {"file_path": "x.txt", "content": "x"},
        "approved": true}});
    let r = send_with(
        &f.app,
        "POST",
        "/rpc",
        Some(call),
        &[("authorization", &auth)],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let message = r.body["error"]["message"].as_str().unwrap_or_default();
    assert!(!message.contains("has none"), "{message}");
    assert!(
        message.contains("a tenant's token approves nothing"),
        "{message}"
    );
    insta::assert_json_snapshot!(r.body["error"], @r#"
    {
      "code": -32001,
      "message": "unauthorized: only a client with the server's token may approve a call, and this request does not carry it (a tenant's token approves nothing); ask the operator, or call without \"approved\""
    }
    "#);
}

#[tokio::test]
async fn a_json_rpc_batch_counts_each_request_against_the_tenant_s_rate() {
    // Regression: a tenant limited to 1 request a second ran 100 `tools/call` in one
    // batch.
    let f = fixture_with(ServerOptions::default().with_token(Some("s3cret")), true);
    let slow = TenantLimits {
        requests_per_second: 1,
        burst: 3,
        ..TenantLimits::default()
    };
    let (_, token) = f
        .state
        .toolbox()
        .catalog()
        .add_tenant("acme", slow)
        .unwrap();
    let auth = format!("Bearer {}", token.reveal());
    let batch: Vec<serde_json::Value> = (0..10)
        .map(|i| {
            json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "clock", "arguments": {"action": "now"}}})
        })
        .collect();
    let r = send_with(
        &f.app,
        "POST",
        "/rpc",
        Some(json!(batch)),
        &[("authorization", &auth)],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let replies = r.body.as_array().unwrap();
    assert_eq!(replies.len(), 10);
    let served = replies.iter().filter(|r| r["result"]["ok"] == true).count();
    let limited: Vec<&serde_json::Value> = replies
        .iter()
        .filter(|r| r["error"]["code"] == -32003)
        .collect();
    assert_eq!(served, 3, "{}", r.body);
    assert_eq!(limited.len(), 7, "{}", r.body);
    assert_eq!(limited[0]["id"], 3);
    assert_eq!(limited[0]["error"]["data"]["retry_after_seconds"], 1);
    // The operator's batches are not limited.
    let r = send_with(
        &f.app,
        "POST",
        "/rpc",
        Some(json!(batch)),
        &[("authorization", "Bearer s3cret")],
    )
    .await;
    let served = r
        .body
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["result"]["ok"] == true)
        .count();
    assert_eq!(served, 10, "{}", r.body);
}

/// A service on 127.0.0.1 whose `/slow` answers after 200 ms; returns its port and how
/// many requests it has answered.
async fn slow_service() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let hits = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&hits);
    let app = axum::Router::new().route(
        "/slow",
        axum::routing::get(move || {
            let counted = std::sync::Arc::clone(&counted);
            async move {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                counted.fetch_add(1, Ordering::SeqCst);
                axum::Json(json!({"ok": 1}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (port, hits)
}

/// A fixture with `sweep`, a recipe that calls the slow service once per item of its
/// `items`, served on a loopback socket; its address and the service's count.
async fn sweep_server() -> (
    crate::Fixture,
    String,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    let f = fixture();
    let (port, hits) = slow_service().await;
    let catalog = f.state.toolbox().catalog();
    let spec = toolscout_spec::ToolSpec::builder("slow_get", "A slow request")
        .parameters(json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
        .build()
        .unwrap();
    let put = toolscout_catalog::ToolPut::http(
        spec,
        json!({"method": "GET", "urlTemplate": format!("http://127.0.0.1:{port}/slow")}),
    );
    catalog.put_tool(f.weather, "slow-get", "1", &put).unwrap();
    let spec = toolscout_spec::ToolSpec::builder("sweep", "Many slow requests")
        .parameters(json!({"type": "object", "properties": {
            "items": {"type": "array", "maxItems": 100}}}))
        .build()
        .unwrap();
    let block = json!({"steps": [{"id": "each", "tool": "slow_get",
        "forEach": "$.args.items", "from": {"n": "$.index"}}]});
    catalog
        .put_tool(
            f.weather,
            "sweep",
            "1",
            &toolscout_catalog::ToolPut::recipe(spec, block),
        )
        .unwrap();
    let url = crate::socket::spawn(f.state.clone()).await;
    let addr = url.trim_start_matches("http://").to_owned();
    (f, addr, hits)
}

/// Sends `request` (head and body) on a new connection, and drops the connection once
/// the slow service has been called; then asserts that no new call is made.
async fn disconnect_and_check(addr: &str, request: String, hits: &std::sync::atomic::AtomicUsize) {
    use std::sync::atomic::Ordering;
    use tokio::io::AsyncWriteExt as _;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    let before = hits.load(Ordering::SeqCst);
    assert!(before > 0, "the run did not start");
    drop(stream);
    // Requests already sent may still be answered; no new one is made.
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    let settled = hits.load(Ordering::SeqCst);
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    let after = hits.load(Ordering::SeqCst);
    assert_eq!(
        after, settled,
        "the run went on after its client left: {before} -> {after}"
    );
    assert!(after < 100, "{after}");
}

fn sweep_arguments() -> serde_json::Value {
    let items: Vec<u32> = (0..100).collect();
    json!({"items": items})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_disconnects_cancels_its_run() {
    let (_f, addr, hits) = sweep_server().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "sweep", "arguments": sweep_arguments()}})
    .to_string();
    let request = format!(
        "POST /rpc HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    disconnect_and_check(&addr, request, &hits).await;
}

#[cfg(feature = "mcp")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_that_disconnects_cancels_its_run() {
    // Regression: an MCP session ran the call in a task of its own, which went on after
    // the client's request was gone (2.8 CPU-s per 3 s).
    let (_f, addr, hits) = sweep_server().await;
    let client = reqwest::Client::new();
    let url = format!("http://{addr}");
    let init = client
        .post(format!("{url}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        )
        .send()
        .await
        .unwrap();
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    drop(init.text().await);
    let ready = client
        .post(format!("{url}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 202);
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "call_tool", "arguments": {"name": "sweep", "arguments": sweep_arguments()}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    disconnect_and_check(&addr, request, &hits).await;
}
