//! Integration tests: the agent loop against a scripted OpenAI-compatible server.

#![allow(clippy::unwrap_used)]

mod browse;
mod builder;
mod calls;
mod endpoint;
mod grounding;
mod live;
mod retrieve;
mod schemas;
mod server;
mod servers;
mod subagent;
mod toolbox;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolscout_agent::{
    Agent, AgentConfig, AgentConfigBuilder, ChatClient, Message, Policy, RunReport, StaticHost,
};
use toolscout_spec::ToolSpec;

use crate::server::Server;

/// The sample catalog with implementations: `get_weather`, `weather.forecast` answer
/// at once; `read_file` and `web_search` take 350 ms; `search_files` hangs; `write_file`
/// requires approval; `spawn_coding_agent` fails; `legacy_export` is disabled.
pub(crate) fn host() -> StaticHost {
    let tools = toolscout_spec::sample::catalog();
    let get = |name: &str| {
        tools
            .iter()
            .find(|t| t.name.as_str() == name)
            .unwrap()
            .clone()
    };
    let legacy = ToolSpec::builder("legacy_export", "Export everything in the old format")
        .build()
        .unwrap();
    StaticHost::default()
        .tool(get("get_weather"), |args: Value| async move {
            Ok(json!({"city": args["city"], "celsius": 21, "conditions": "sunny"}))
        })
        .tool(get("weather.forecast"), |args: Value| async move {
            let days = args["days"].as_u64().unwrap_or(3);
            Ok(json!({"city": args["city"], "days": (1..=days).map(|d| json!({"day": d, "celsius": 20 + d})).collect::<Vec<_>>()}))
        })
        .tool(get("read_file"), |args: Value| async move {
            tokio::time::sleep(Duration::from_millis(350)).await;
            Ok(json!({"path": args["file_path"], "text": "hello"}))
        })
        .tool(get("web_search"), |args: Value| async move {
            tokio::time::sleep(Duration::from_millis(350)).await;
            Ok(json!({"query": args["query"], "results": ["https://example.com"]}))
        })
        .tool(get("search_files"), |_| async move {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(json!([]))
        })
        .tool(get("write_file"), |_| async move { Ok(json!({"written": true})) })
        .tool(get("spawn_coding_agent"), |_| async move {
            Err::<Value, _>("the runner crashed: exit status 137".to_owned())
        })
        .tool(legacy, |_| async move { Ok(json!("exported")) })
        .disable("legacy_export")
}

/// A config for tests: non-streaming unless `stream`, short tool timeout.
pub(crate) fn config(policy: Policy, stream: bool) -> AgentConfigBuilder {
    // The mechanisms under test, not the defaults: `auto`, five retrieved tools, no fit
    // check (which would take a scripted reply of its own; `retrieve.rs` tests it), no
    // argument check (`grounding.rs` tests it).
    AgentConfig::builder("assistant", "scripted-model")
        .system_prompt("You are a test assistant.")
        .policy(policy)
        .stream(stream)
        .tool_timeout(Duration::from_millis(400))
        .tool_choice(toolscout_agent::ToolChoice::Auto)
        .retrieve_top_k(5)
        .ground_arguments(false)
}

/// An agent over [`host`] talking to `server`.
pub(crate) fn agent(server: &Server, config: AgentConfigBuilder) -> Agent {
    Agent::new(
        config.build().unwrap(),
        ChatClient::new(&server.base_url, "test-key"),
        Arc::new(host()),
    )
}

/// Asserts that every assistant tool call is answered by exactly one following `tool`
/// message with its id, in order, before the next assistant turn.
pub(crate) fn assert_paired(messages: &[Message]) {
    let mut pending: Vec<String> = Vec::new();
    for m in messages {
        match m {
            Message::Assistant { tool_calls, .. } => {
                assert!(pending.is_empty(), "unanswered calls: {pending:?}");
                pending = tool_calls.iter().map(|c| c.id.clone()).collect();
            }
            Message::Tool { tool_call_id, .. } => {
                assert_eq!(
                    pending.first(),
                    Some(tool_call_id),
                    "tool result out of order"
                );
                pending.remove(0);
            }
            _ => assert!(pending.is_empty(), "unanswered calls: {pending:?}"),
        }
    }
    assert!(pending.is_empty(), "unanswered calls: {pending:?}");
}

/// The transcript as text, one line per message (the system prompt shortened), then the
/// outcome: what a snapshot should show.
pub(crate) fn render(report: &RunReport) -> String {
    let mut out = String::new();
    for m in &report.messages {
        let line = match m {
            Message::System { content } => {
                format!("system: {}…", content.lines().next().unwrap_or_default())
            }
            Message::User { content } => format!("user: {content}"),
            Message::Assistant {
                content,
                tool_calls,
            } => {
                let mut s = format!("assistant: {}", content.as_deref().unwrap_or(""));
                for c in tool_calls {
                    s.push_str(&format!(
                        "\n  → {} {}({})",
                        c.id, c.function.name, c.function.arguments
                    ));
                }
                s
            }
            Message::Tool {
                tool_call_id,
                content,
            } => format!("tool {tool_call_id}: {content}"),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out.push_str(&format!(
        "stop: {} · steps: {} · answer: {:?}\n",
        serde_json::to_string(&report.stop).unwrap(),
        report.steps,
        report.answer
    ));
    out
}
