//! Tool calls: parallel, timeouts, failures, invalid arguments, approvals.

use std::sync::Arc;
use std::time::Duration;

use toolscout_agent::{
    AgentEvent, Approval, ApprovalRequest, AutoApprove, Message, Policy, RunOptions, StopReason,
};

use crate::server::{Server, call, calls, text};
use crate::{agent, assert_paired, config, render};

fn tool_results(messages: &[Message]) -> Vec<serde_json::Value> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { content, .. } => Some(serde_json::from_str(content).unwrap()),
            _ => None,
        })
        .collect()
}

/// `read_file` and `web_search` each wait for the other to have started (so they finish
/// only when run concurrently: one after the other, the first would wait until its
/// timeout), and `search_files` never finishes.
fn rendezvous_host() -> toolscout_agent::StaticHost {
    let tools = toolscout_spec::sample::catalog();
    let get = |name: &str| tools.iter().find(|t| t.name == name).unwrap().clone();
    let both = Arc::new(tokio::sync::Barrier::new(2));
    let (a, b) = (both.clone(), both);
    toolscout_agent::StaticHost::default()
        .tool(get("read_file"), move |args: serde_json::Value| {
            let both = a.clone();
            async move {
                both.wait().await;
                Ok(serde_json::json!({"path": args["file_path"], "text": "hello"}))
            }
        })
        .tool(get("web_search"), move |args: serde_json::Value| {
            let both = b.clone();
            async move {
                both.wait().await;
                Ok(serde_json::json!({"query": args["query"], "results": ["https://example.com"]}))
            }
        })
        .tool(get("search_files"), |_| async move {
            std::future::pending::<()>().await;
            Ok(serde_json::json!([]))
        })
}

#[tokio::test]
async fn parallel_calls_run_concurrently_each_with_its_own_timeout() {
    let server = Server::start(vec![
        calls(&[
            ("c1", "read_file", r#"{"file_path":"README.md"}"#),
            ("c2", "web_search", r#"{"query":"rust"}"#),
            ("c3", "search_files", r#"{"pattern":"*.rs"}"#),
        ]),
        text("Done."),
    ])
    .await;
    // No wall-clock bound: the first two calls can only both succeed concurrently, and
    // the timeout is long enough that a loaded machine still meets it.
    let agent = toolscout_agent::Agent::new(
        config(Policy::Upfront, false)
            .tool_timeout(Duration::from_secs(2))
            .build()
            .unwrap(),
        toolscout_agent::ChatClient::new(&server.base_url, "test-key"),
        Arc::new(rendezvous_host()),
    );
    let report = agent
        .run("Read, search and list.", RunOptions::default())
        .await;
    assert_eq!(report.stop, StopReason::Answer);
    assert_paired(&report.messages);
    let results = tool_results(&report.messages);
    assert_eq!(results[0]["ok"], true);
    assert_eq!(results[1]["ok"], true);
    assert_eq!(results[2]["error"]["kind"], "timeout");
    // The second request carries the three results, paired with the calls.
    let sent = &server.requests()[1]["messages"];
    assert_eq!(sent[2]["tool_calls"].as_array().unwrap().len(), 3);
    for (i, id) in ["c1", "c2", "c3"].iter().enumerate() {
        assert_eq!(sent[3 + i]["role"], "tool");
        assert_eq!(sent[3 + i]["tool_call_id"], *id);
    }
    insta::assert_snapshot!(render(&report));
}

#[tokio::test]
async fn failures_go_back_to_the_model() {
    let server = Server::start(vec![
        calls(&[
            ("c1", "teleport", r#"{"to":"Mars"}"#),
            (
                "c2",
                "call_tool",
                r#"{"name":"legacy_export","arguments":{}}"#,
            ),
            (
                "c3",
                "call_tool",
                r#"{"name":"spawn_coding_agent","arguments":{"task":"fix the build"}}"#,
            ),
        ]),
        text("I could not do it: the coding agent crashed."),
    ])
    .await;
    let agent = agent(&server, config(Policy::Browse, true)).with_approver(Arc::new(AutoApprove));
    let report = agent.run("Fix the build.", RunOptions::default()).await;
    assert_eq!(report.stop, StopReason::Answer);
    assert_paired(&report.messages);
    let kinds: Vec<_> = tool_results(&report.messages)
        .iter()
        .map(|r| r["error"]["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["unknown_tool", "disabled", "tool_failed"]);
    insta::assert_snapshot!(render(&report));
}

#[tokio::test]
async fn invalid_arguments_are_explained_and_the_retry_succeeds() {
    let server = Server::start(vec![
        call("c1", "get_weather", r#"{"city": "Oslo""#),
        call("c2", "get_weather", r#"{"city": 42, "units": "kelvin"}"#),
        call("c3", "get_weather", r#"[]"#),
        call("c4", "get_weather", r#"{"city": "Oslo"}"#),
        text("21 °C and sunny."),
    ])
    .await;
    let agent = agent(&server, config(Policy::Upfront, true));
    let report = agent.run("Weather in Oslo?", RunOptions::default()).await;
    assert_eq!(report.stop, StopReason::Answer);
    assert_paired(&report.messages);
    let results = tool_results(&report.messages);
    assert_eq!(
        results
            .iter()
            .map(|r| r["ok"].as_bool().unwrap())
            .collect::<Vec<_>>(),
        [false, false, false, true]
    );
    insta::assert_snapshot!(render(&report));
}

#[tokio::test]
async fn refused_approval_is_reported_and_approved_calls_run() {
    let server = Server::start(vec![
        calls(&[
            (
                "c1",
                "write_file",
                r#"{"file_path":"notes.txt","content":"hi"}"#,
            ),
            (
                "c2",
                "write_file",
                r#"{"file_path":"ok.txt","content":"hi"}"#,
            ),
        ]),
        text("I wrote ok.txt; notes.txt was refused."),
    ])
    .await;
    let approver = |req: &ApprovalRequest| {
        if req.arguments["file_path"] == "notes.txt" {
            Approval::Refused(Some("notes.txt is read-only".to_owned()))
        } else {
            Approval::Approved
        }
    };
    let agent = agent(&server, config(Policy::Upfront, false)).with_approver(Arc::new(approver));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let report = agent
        .run("Write two files.", RunOptions::default().with_events(tx))
        .await;
    let mut asked = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let AgentEvent::ApprovalRequested { call_id, tool, .. } = e {
            asked.push(format!("{call_id} {tool}"));
        }
    }
    asked.sort();
    assert_eq!(asked, ["c1 write_file", "c2 write_file"]);
    assert_eq!(report.stop, StopReason::Answer);
    let results = tool_results(&report.messages);
    assert_eq!(results[0]["error"]["kind"], "approval_refused");
    assert_eq!(results[1]["ok"], true);
    insta::assert_snapshot!(render(&report));
}

#[tokio::test]
async fn without_an_approver_calls_that_need_one_are_refused() {
    let server = Server::start(vec![
        call("c1", "write_file", r#"{"file_path":"a.txt","content":"x"}"#),
        text("Refused."),
    ])
    .await;
    let agent = agent(&server, config(Policy::Upfront, false));
    let report = agent.run("Write.", RunOptions::default()).await;
    let results = tool_results(&report.messages);
    assert_eq!(results[0]["error"]["kind"], "approval_refused");
    assert!(
        results[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no approver")
    );
}
