//! MCP sessions per tenant, with rmcp's client over streamable HTTP and each tenant's
//! token: `tools/list`, `discover_tools`, activations and calls in the tenant's view;
//! `list_changed` only for what moved in it; a session id used with another token is an
//! unknown one; approvals are asked of the operator's sessions only.

use rmcp::model::ElicitationAction;
use serde_json::{Value, json};
use toolscout_server::{Expose, ServerOptions};

use super::OPERATOR;
use super::two::Two;
use crate::mcp_approval::{call, connect_with, write_args};
use crate::mcp_session::{Session, value};

/// `text` without the words a request itself carried (an echoed input), for the check
/// that nothing of the other tenant's is in it.
fn without(text: &str, echoed: &[&str]) -> String {
    echoed
        .iter()
        .fold(text.to_owned(), |t, e| t.replace(e, "<asked>"))
}

fn assert_nothing_of_bravo(text: &str, echoed: &[&str]) {
    let text = without(text, echoed);
    assert!(!text.contains("bravo"), "{text}");
}

#[tokio::test]
async fn a_tenants_session_lists_finds_and_calls_only_its_view() {
    // Searches activate nothing here: only the description below does.
    let w = Two::start(ServerOptions::default().with_search_activations(0)).await;
    let mut s = Session::connect_with(&w.url, Some(&w.alpha.token)).await;
    assert_eq!(s.names().await, ["discover_tools", "call_tool"]);

    let found = s
        .call("discover_tools", json!({"query": "crm lookup customer"}))
        .await;
    let hits: Vec<String> = value(&found)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(hits.contains(&"alpha_crm_lookup".to_owned()), "{hits:?}");
    assert_nothing_of_bravo(&value(&found).to_string(), &[]);
    // The other tenant's name, a near miss of it, and its marker word: as names nobody
    // holds.
    for asked in [
        json!({"tool": "bravo_crm_lookup"}),
        json!({"tool": "bravo_crm_lookpu"}),
        json!({"query": "bravomark"}),
        json!({"query": "bravo"}),
    ] {
        let answer = s.call("discover_tools", asked.clone()).await;
        let echoed: Vec<&str> = asked
            .as_object()
            .unwrap()
            .values()
            .filter_map(Value::as_str)
            .collect();
        assert_nothing_of_bravo(&value(&answer).to_string(), &echoed);
    }
    // Its own `crm_lookup_customer`, described and so activated: alpha's, never bravo's.
    let described = s
        .call("discover_tools", json!({"tool": "crm_lookup_customer"}))
        .await;
    let text = value(&described).to_string();
    assert!(text.contains("alphamark"), "{text}");
    assert!(!text.contains("bravomark"), "{text}");
    s.changed(1).await;
    let tools = s.tools().await;
    let listed: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        listed,
        ["discover_tools", "call_tool", "crm_lookup_customer"]
    );
    let listed = serde_json::to_string(&tools).unwrap();
    assert!(
        listed.contains("alphamark") && !listed.contains("bravo"),
        "{listed}"
    );

    // Calling the other tenant's tool: the answer to a name nobody holds.
    for (name, args) in [
        ("bravo_crm_lookup", json!({})),
        (
            "call_tool",
            json!({"name": "bravo_crm_lookup", "arguments": {}}),
        ),
    ] {
        let r = s.call(name, args).await;
        assert_eq!(r.is_error, Some(true), "{r:?}");
        let error = &value(&r)["error"];
        assert_eq!(error["kind"], "unknown_tool", "{error}");
        assert_nothing_of_bravo(&error.to_string(), &["bravo_crm_lookup"]);
    }
}

#[tokio::test]
async fn with_every_tool_listed_a_tenant_lists_its_view() {
    let w = Two::start(ServerOptions::default().with_expose(Expose::All)).await;
    let alpha = Session::connect_with(&w.url, Some(&w.alpha.token)).await;
    let names = alpha.names().await;
    assert!(names.contains(&"alpha_crm_lookup".to_owned()), "{names:?}");
    assert!(names.contains(&"read_file".to_owned()), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("bravo")), "{names:?}");
    // The operator's own (unshared) bundle is not in it either.
    assert!(!names.contains(&"get_forecast".to_owned()), "{names:?}");
    let listed = serde_json::to_string(&alpha.tools().await).unwrap();
    assert!(!listed.contains("bravomark"));
    // The operator's list is what it calls by name: its own and the built-in tools; a
    // tenant's unshared tool answers only to its qualified name (issue 61).
    let operator = Session::connect_with(&w.url, Some(OPERATOR)).await;
    let all = operator.names().await;
    assert!(all.contains(&"get_forecast".to_owned()), "{all:?}");
    for name in ["alpha_crm_lookup", "bravo_crm_lookup"] {
        assert!(!all.contains(&name.to_owned()), "{name}: {all:?}");
    }
}

#[tokio::test]
async fn another_tenants_writes_send_no_list_changed() {
    let w = Two::start(ServerOptions::default()).await;
    let mut alpha = Session::connect_with(&w.url, Some(&w.alpha.token)).await;
    alpha
        .call("discover_tools", json!({"tool": "crm_lookup_customer"}))
        .await;
    alpha.changed(1).await;
    // The operator's session reaches a tenant's tool by its qualified name only, and a
    // bare name it holds no tool of activates nothing (issue 61).
    let operator = Session::connect_with(&w.url, Some(OPERATOR)).await;
    operator
        .call("discover_tools", json!({"tool": "crm_lookup_customer"}))
        .await;
    assert_eq!(operator.settled().await, 0);
    let described = operator
        .call(
            "discover_tools",
            json!({"tool": "bravo:crm/lookup-customer"}),
        )
        .await;
    assert!(
        value(&described).to_string().contains("bravomark"),
        "{described:?}"
    );
    // Bravo's new version of a name alpha's session activated: alpha's is not told.
    w.put(
        &w.bravo,
        "lookup-customer",
        "2",
        "crm_lookup_customer",
        "Find a customer, faster (bravomark)",
    );
    assert_eq!(alpha.settled().await, 1);
    // Alpha's own: told.
    w.put(
        &w.alpha,
        "lookup-customer",
        "2",
        "crm_lookup_customer",
        "Find a customer, faster (alphamark)",
    );
    alpha.changed(2).await;

    // With every tool listed, a tool bravo adds is not alpha's news either.
    let w = Two::start(ServerOptions::default().with_expose(Expose::All)).await;
    let mut alpha = Session::connect_with(&w.url, Some(&w.alpha.token)).await;
    w.put(&w.bravo, "new", "1", "bravo_new", "New");
    assert_eq!(alpha.settled().await, 0);
    w.put(&w.alpha, "new", "1", "alpha_new", "New");
    alpha.changed(1).await;
    assert!(alpha.names().await.contains(&"alpha_new".to_owned()));
}

/// One raw MCP request with `token`: status, content type and body.
async fn raw(
    url: &str,
    method: reqwest::Method,
    token: &str,
    session: Option<&str>,
    body: Option<Value>,
) -> (u16, String, String) {
    let mut request = reqwest::Client::new()
        .request(method, format!("{url}/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream");
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-06-18");
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let kind = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    // An answer that is a stream is judged by its head.
    if kind.starts_with("text/event-stream") {
        return (status, kind, String::new());
    }
    (status, kind, response.text().await.unwrap())
}

#[tokio::test]
async fn a_session_id_with_another_token_is_answered_as_an_unknown_one() {
    let w = Two::start(ServerOptions::default()).await;
    // Alpha's session, opened by hand to hold its id.
    let session = {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}
        }});
        let response = reqwest::Client::new()
            .post(format!("{}/mcp", w.url))
            .bearer_auth(&w.alpha.token)
            .header("accept", "application/json, text/event-stream")
            .json(&init)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned()
    };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _, _) = raw(
        &w.url,
        reqwest::Method::POST,
        &w.alpha.token,
        Some(&session),
        Some(initialized),
    )
    .await;
    assert_eq!(status, 202);
    let second = w
        .catalog()
        .add_token(w.alpha.id, "second laptop")
        .unwrap()
        .reveal()
        .to_owned();
    let made_up = uuid::Uuid::now_v7().to_string();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    for token in [w.bravo.token.as_str(), second.as_str(), OPERATOR] {
        for (method, body) in [
            (reqwest::Method::POST, Some(list.clone())),
            (reqwest::Method::GET, None),
            (reqwest::Method::DELETE, None),
        ] {
            let stolen = raw(&w.url, method.clone(), token, Some(&session), body.clone()).await;
            let unknown = raw(&w.url, method.clone(), token, Some(&made_up), body).await;
            assert_eq!(stolen, unknown, "{method}");
            assert_ne!(stolen.0, 200, "{method}: {stolen:?}");
        }
    }
    // Nothing another token sent closed or used the session: alpha's goes on.
    let (status, kind, _) = raw(
        &w.url,
        reqwest::Method::POST,
        &w.alpha.token,
        Some(&session),
        Some(list),
    )
    .await;
    assert_eq!((status, kind.as_str()), (200, "text/event-stream"));
}

#[tokio::test]
async fn a_tenant_is_never_asked_to_approve_a_call() {
    let w = Two::start(ServerOptions::default()).await;
    let (alpha, asked) = connect_with(
        &w.url,
        Some(ElicitationAction::Accept),
        Some(&w.alpha.token),
    )
    .await;
    let result = call(&alpha, "write_file", write_args("tenant.txt")).await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let error = &result.structured_content.as_ref().unwrap()["error"];
    assert_eq!(error["kind"], "approval_refused", "{error}");
    assert!(asked.lock().unwrap().is_empty());
    assert!(!w.f._workspace.path().join("tenant.txt").exists());
    // The operator's session is asked, as before.
    let (operator, asked) =
        connect_with(&w.url, Some(ElicitationAction::Accept), Some(OPERATOR)).await;
    let result = call(&operator, "write_file", write_args("operator.txt")).await;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(asked.lock().unwrap().len(), 1);
    alpha.cancel().await.unwrap();
    operator.cancel().await.unwrap();
}
