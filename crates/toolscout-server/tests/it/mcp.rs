//! The Model Context Protocol over streamable HTTP at `/mcp`, through `oneshot`.

use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use toolscout_server::{Expose, ServerOptions};
use tower::ServiceExt;

use crate::{fixture, fixture_with, names};

/// A client session over a router.
pub(crate) struct Mcp {
    app: Router,
    session: Option<String>,
    next_id: u64,
}

impl Mcp {
    pub(crate) async fn connect(app: &Router) -> (Mcp, Value) {
        let mut mcp = Mcp {
            app: app.clone(),
            session: None,
            next_id: 0,
        };
        let init = mcp
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "it", "version": "1"}
                }),
            )
            .await;
        let (status, _) = mcp
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(status, StatusCode::ACCEPTED);
        (mcp, init)
    }

    fn builder(&self, method: &str) -> axum::http::request::Builder {
        let mut b = Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", "127.0.0.1")
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        if let Some(s) = &self.session {
            b = b
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-06-18");
        }
        b
    }

    async fn post(&mut self, body: Value) -> (StatusCode, Body) {
        let req = self
            .builder("POST")
            .body(Body::from(body.to_string()))
            .unwrap();
        let resp = self.app.clone().oneshot(req).await.unwrap();
        if let Some(s) = resp.headers().get("mcp-session-id") {
            self.session = Some(s.to_str().unwrap().to_owned());
        }
        (resp.status(), resp.into_body())
    }

    /// Sends a request; returns its response message (`result` or `error`).
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let (status, body) = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        assert_eq!(status, StatusCode::OK);
        next_message(body, |m| m["id"] == id).await
    }

    /// Opens the server-to-client stream (GET).
    pub(crate) async fn listen(&self) -> Body {
        let req = self.builder("GET").body(Body::empty()).unwrap();
        let resp = self.app.clone().oneshot(req).await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        resp.into_body()
    }
}

/// Reads server-sent events (or a JSON body) until a message that `want` accepts.
pub(crate) async fn next_message(mut body: Body, want: impl Fn(&Value) -> bool) -> Value {
    let mut text = String::new();
    let read = async {
        while let Some(frame) = body.frame().await {
            if let Ok(data) = frame.unwrap().into_data() {
                text.push_str(&String::from_utf8_lossy(&data));
            }
            if let Ok(v) = serde_json::from_str::<Value>(&text)
                && want(&v)
            {
                return Some(v);
            }
            for line in text.lines() {
                if let Some(data) = line.strip_prefix("data:")
                    && let Ok(v) = serde_json::from_str::<Value>(data.trim())
                    && want(&v)
                {
                    return Some(v);
                }
            }
        }
        None
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("no message within 10 s")
        .expect("the stream ended without the message")
}

#[tokio::test]
async fn discover_mode_lists_two_tools_that_reach_everything() {
    let f = fixture();
    let (mut mcp, init) = Mcp::connect(&f.app).await;
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(init["result"]["serverInfo"]["name"], "toolscout");

    let list = mcp.request("tools/list", json!({})).await;
    assert_eq!(
        names(&list["result"]["tools"]),
        ["discover_tools", "call_tool"]
    );
    insta::assert_json_snapshot!("mcp_call_tool_definition", list["result"]["tools"][1]);

    let found = mcp
        .request(
            "tools/call",
            json!({"name": "discover_tools", "arguments": {"query": "read a file"}}),
        )
        .await;
    assert_eq!(
        found["result"]["structuredContent"]["tools"][0]["name"],
        "read_file"
    );

    let called = mcp
        .request(
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": "json_query", "arguments": {"value": [1, 2, 3], "path": "$[2]"}}}),
        )
        .await;
    insta::assert_json_snapshot!("mcp_call_ok", called["result"]);

    let failed = mcp
        .request(
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": "read_fil", "arguments": {}}}),
        )
        .await;
    assert_eq!(failed["result"]["isError"], true);
    insta::assert_json_snapshot!("mcp_call_error", failed["result"]);
}

#[tokio::test]
async fn all_mode_pages_every_tool_with_annotations() {
    let f = fixture_with(
        ServerOptions::default()
            .with_expose(Expose::All)
            .with_page_size(5),
        true,
    );
    let (mut mcp, _) = Mcp::connect(&f.app).await;
    let first = mcp.request("tools/list", json!({})).await;
    let mut all = names(&first["result"]["tools"]);
    assert_eq!(all.len(), 5);
    let cursor = first["result"]["nextCursor"].clone();
    let second = mcp.request("tools/list", json!({"cursor": cursor})).await;
    all.extend(names(&second["result"]["tools"]));
    assert_eq!(all.len(), 8);
    assert!(second["result"].get("nextCursor").is_none());
    let read_file = first["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read_file")
        .unwrap();
    assert_eq!(read_file["annotations"]["readOnlyHint"], true);

    let called = mcp
        .request(
            "tools/call",
            json!({"name": "read_file", "arguments": {"file_path": "hello.txt"}}),
        )
        .await;
    assert_eq!(called["result"]["isError"], false);
    assert!(called["result"]["structuredContent"].is_object());
}

#[tokio::test]
async fn a_catalog_change_notifies_tools_list_changed() {
    // Every tool is listed: a change of any of them is a change of the list.
    let f = fixture_with(ServerOptions::default().with_expose(Expose::All), true);
    let (mcp, _) = Mcp::connect(&f.app).await;
    let stream = mcp.listen().await;
    // Keep changing the catalog until the stream carries a notification: the stream may
    // attach after the first change on a loaded machine.
    let state = f.state.clone();
    let weather = f.weather;
    let changer = tokio::spawn(async move {
        for i in 0..40 {
            state
                .toolbox()
                .catalog()
                .patch_bundle(weather, i % 2 == 1)
                .unwrap();
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    });
    let note = next_message(stream, |m| {
        m["method"] == "notifications/tools/list_changed"
    })
    .await;
    changer.abort();
    assert_eq!(note["jsonrpc"], "2.0");
}

#[tokio::test]
async fn stdio_style_pipes_speak_newline_delimited_json_rpc() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let f = fixture();
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server);
    let task = tokio::spawn(toolscout_server::serve_io(
        f.state.clone(),
        server_read,
        server_write,
    ));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "pipe", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        client_write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut list = Value::Null;
    while let Some(line) = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .unwrap()
        .unwrap()
    {
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 2 {
            list = v;
            break;
        }
    }
    assert_eq!(
        names(&list["result"]["tools"]),
        ["discover_tools", "call_tool"]
    );
    drop(client_write);
    drop(lines);
    let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
}

#[tokio::test]
async fn other_hosts_are_refused_unless_allowed() {
    let request = |host: &str| {
        Request::builder()
            .method("POST")
            .uri("/mcp")
            .header("host", host)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(Body::from(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "it", "version": "1"}}}).to_string(),
            ))
            .unwrap()
    };
    let f = fixture();
    let refused = f
        .app
        .clone()
        .oneshot(request("tools.example.com"))
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let g = fixture_with(
        ServerOptions::default().with_mcp_allowed_hosts(&["tools.example.com"]),
        true,
    );
    let allowed = g
        .app
        .clone()
        .oneshot(request("tools.example.com"))
        .await
        .unwrap();
    assert_eq!(allowed.status(), StatusCode::OK);
}
