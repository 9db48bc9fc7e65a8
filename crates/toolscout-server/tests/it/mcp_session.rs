//! MCP sessions activate tools: rmcp's own client over streamable HTTP on a real loopback
//! socket. A search or a description adds tools to that session's `tools/list`, and the
//! session is sent `notifications/tools/list_changed`.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::watch;
use toolscout_server::ServerOptions;

use crate::fixture_with;
use crate::socket::spawn;

/// A client that counts the `notifications/tools/list_changed` it receives.
#[derive(Clone)]
pub(crate) struct Watcher {
    changes: watch::Sender<usize>,
}

impl ClientHandler for Watcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes.send_modify(|n| *n += 1);
    }
}

/// One client session and its notification count.
pub(crate) struct Session {
    pub(crate) client: RunningService<RoleClient, Watcher>,
    changes: watch::Receiver<usize>,
}

impl Session {
    async fn connect(url: &str) -> Session {
        Session::connect_with(url, None).await
    }

    /// A session opened with `Authorization: Bearer <token>` on every request, when
    /// given.
    pub(crate) async fn connect_with(url: &str, token: Option<&str>) -> Session {
        let (tx, changes) = watch::channel(0);
        let mut config = StreamableHttpClientTransportConfig::with_uri(format!("{url}/mcp"));
        if let Some(token) = token {
            config = config.auth_header(token);
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        let client = Watcher { changes: tx }.serve(transport).await.unwrap();
        Session { client, changes }
    }

    pub(crate) async fn tools(&self) -> Vec<Tool> {
        self.client.list_all_tools().await.unwrap()
    }

    pub(crate) async fn names(&self) -> Vec<String> {
        self.tools()
            .await
            .into_iter()
            .map(|t| t.name.to_string())
            .collect()
    }

    pub(crate) async fn call(&self, name: &str, args: Value) -> CallToolResult {
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = args.as_object().cloned();
        self.client.call_tool(params).await.unwrap()
    }

    /// Waits until `count` notifications have arrived.
    pub(crate) async fn changed(&mut self, count: usize) {
        tokio::time::timeout(
            Duration::from_secs(10),
            self.changes.wait_for(|n| *n >= count),
        )
        .await
        .unwrap_or_else(|_| panic!("no {count} list_changed notifications within 10 s"))
        .unwrap();
    }

    /// The notifications received so far, after a pause in which a stray one would land.
    pub(crate) async fn settled(&self) -> usize {
        tokio::time::sleep(Duration::from_millis(300)).await;
        *self.changes.borrow()
    }
}

pub(crate) fn value(result: &CallToolResult) -> Value {
    result.structured_content.clone().unwrap()
}

#[tokio::test]
async fn a_search_activates_its_best_hits_and_notifies_the_session() {
    let f = fixture_with(ServerOptions::default(), true);
    let url = spawn(f.state.clone()).await;
    let mut s = Session::connect(&url).await;
    assert_eq!(s.names().await, ["discover_tools", "call_tool"]);

    let found = s
        .call("discover_tools", json!({"query": "read a file"}))
        .await;
    let hits: Vec<String> = value(&found)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .take(3)
        .map(|h| h["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(hits[0], "read_file");
    s.changed(1).await;
    let tools = s.tools().await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names[..2], ["discover_tools", "call_tool"]);
    assert_eq!(names[2..], hits);
    // What the client hands its model: the meta-tools, then the activated tools' schemas.
    let listed: Vec<Value> = tools
        .iter()
        .skip(2)
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    insta::assert_json_snapshot!("mcp_tools_after_search_activation", listed);

    // The activated tool is called directly, under its own name.
    let read = s.call("read_file", json!({"file_path": "hello.txt"})).await;
    assert_eq!(read.is_error, Some(false));
    assert!(value(&read).to_string().contains("hello"));

    // The same search again changes nothing, so it sends nothing.
    s.call("discover_tools", json!({"query": "read a file"}))
        .await;
    assert_eq!(s.settled().await, 1);
    assert_eq!(s.names().await.len(), 5);
}

#[tokio::test]
async fn describing_a_tool_activates_it_for_that_session_only() {
    let f = fixture_with(ServerOptions::default(), true);
    let url = spawn(f.state.clone()).await;
    let mut first = Session::connect(&url).await;
    let second = Session::connect(&url).await;

    let usage = first
        .call("discover_tools", json!({"tool": "json_query"}))
        .await;
    assert_eq!(value(&usage)["level"], 2);
    first.changed(1).await;
    assert_eq!(
        first.names().await,
        ["discover_tools", "call_tool", "json_query"]
    );
    let called = first
        .call("json_query", json!({"value": [1, 2, 3], "path": "$[2]"}))
        .await;
    assert_eq!(called.is_error, Some(false));
    assert_eq!(value(&called)["value"], json!([3]));

    // Level 3 of a tool the session already has is no change; level 1 activates nothing.
    first
        .call(
            "discover_tools",
            json!({"tool": "json_query", "detail": "full"}),
        )
        .await;
    first.call("discover_tools", json!({})).await;
    assert_eq!(first.settled().await, 1);

    assert_eq!(second.names().await, ["discover_tools", "call_tool"]);
    assert_eq!(second.settled().await, 0);
}

#[tokio::test]
async fn the_cap_evicts_the_least_recently_used_tool() {
    let f = fixture_with(
        ServerOptions::default()
            .with_activation_cap(2)
            .with_search_activations(0),
        true,
    );
    let url = spawn(f.state.clone()).await;
    let mut s = Session::connect(&url).await;
    s.call("discover_tools", json!({"query": "read a file"}))
        .await;
    assert_eq!(s.settled().await, 0, "search activations are off");

    s.call("discover_tools", json!({"tool": "read_file"})).await;
    s.call("discover_tools", json!({"tool": "json_query"}))
        .await;
    s.changed(2).await;
    // A call is a use: read_file is now more recent than json_query.
    s.call("read_file", json!({"file_path": "hello.txt"})).await;
    s.call("discover_tools", json!({"tool": "get_forecast"}))
        .await;
    s.changed(3).await;
    assert_eq!(
        s.names().await,
        ["discover_tools", "call_tool", "read_file", "get_forecast"]
    );
}

#[tokio::test]
async fn a_cap_of_zero_keeps_the_two_meta_tools() {
    let f = fixture_with(ServerOptions::default().with_activation_cap(0), true);
    let url = spawn(f.state.clone()).await;
    let s = Session::connect(&url).await;
    s.call("discover_tools", json!({"query": "read a file"}))
        .await;
    s.call("discover_tools", json!({"tool": "read_file"})).await;
    assert_eq!(s.settled().await, 0);
    assert_eq!(s.names().await, ["discover_tools", "call_tool"]);
}

#[tokio::test]
async fn session_less_requests_activate_nothing_and_announce_nothing() {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    let f = fixture_with(ServerOptions::default(), true);
    let url = spawn(f.state.clone()).await;
    let (tx, changes) = watch::channel(0);
    let transport = StreamableHttpClientTransport::from_uri(format!("{url}/mcp"));
    // Protocol 2026-07-28 has no `initialize`: every request stands alone.
    let client = Watcher { changes: tx }
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .unwrap();
    let s = Session { client, changes };
    let found = s
        .call("discover_tools", json!({"query": "read a file"}))
        .await;
    assert_eq!(value(&found)["tools"][0]["name"], "read_file");
    assert_eq!(s.settled().await, 0);
    assert_eq!(s.names().await, ["discover_tools", "call_tool"]);
}

#[tokio::test]
async fn a_change_notifies_only_the_sessions_whose_tools_it_moves() {
    let f = fixture_with(ServerOptions::default(), true);
    let url = spawn(f.state.clone()).await;
    let mut reader = Session::connect(&url).await;
    let other = Session::connect(&url).await;
    reader
        .call("discover_tools", json!({"tool": "read_file"}))
        .await;
    reader.changed(1).await;
    let catalog = f.state.toolbox().catalog();
    // Tools no session activated: nobody is told.
    catalog.patch_bundle(f.weather, false).unwrap();
    assert_eq!(reader.settled().await, 1);
    // read_file's bundle: the session that activated it is told, the other is not.
    let files = toolscout_catalog::builtin::bundles()
        .into_iter()
        .find(|b| b.slug == "files")
        .unwrap()
        .id;
    catalog.patch_bundle(files, false).unwrap();
    reader.changed(2).await;
    assert!(!reader.names().await.contains(&"read_file".to_owned()));
    assert_eq!(other.settled().await, 0);
}
