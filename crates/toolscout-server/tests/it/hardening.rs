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
