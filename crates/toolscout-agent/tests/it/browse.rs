//! Browse → describe → activate → call → answer, and the tools array over a run.

use serde_json::json;
use tokio::sync::mpsc;
use toolscout_agent::{AgentEvent, Policy, RunOptions, StopReason};

use crate::server::{Server, call, text};
use crate::{agent, assert_paired, config, render};

/// Each tools array starts with the previous one: activation only appends.
fn assert_append_only(arrays: &[Vec<String>]) {
    for pair in arrays.windows(2) {
        assert!(
            pair[1].starts_with(&pair[0]),
            "reordered: {:?} → {:?}",
            pair[0],
            pair[1]
        );
    }
}

#[tokio::test]
async fn browse_describe_activate_call_answer_streaming() {
    let server = Server::start(vec![
        call("c1", "discover_search", r#"{"query":"weather"}"#),
        call(
            "c2",
            "discover_describe",
            r#"{"name":"weather.forecast","level":3}"#,
        ),
        call("c3", "weather_forecast", r#"{"city":"Oslo","days":2}"#),
        call(
            "c4",
            "call_tool",
            r#"{"name":"get_weather","arguments":{"city":"Oslo"}}"#,
        ),
        text("Oslo is sunny at 21 °C; the next two days bring 21 and 22 °C."),
    ])
    .await;
    // Search hits are not activated here: this test is about activation by describing.
    let agent = agent(&server, config(Policy::Browse, true).activate_hits(0));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let report = agent
        .run(
            "Weather in Oslo, now and the next two days?",
            RunOptions::default().with_events(tx),
        )
        .await;

    assert_eq!(report.stop, StopReason::Answer);
    assert_paired(&report.messages);
    assert_eq!(report.steps, 5);
    assert_eq!(report.usage.total(), 5 * 110);
    assert!(!report.usage.estimated);

    let arrays = server.tool_arrays();
    assert_append_only(&arrays);
    assert_eq!(
        arrays[0],
        ["discover_search", "discover_describe", "call_tool"]
    );
    assert_eq!(
        arrays[2],
        [
            "discover_search",
            "discover_describe",
            "call_tool",
            "weather_forecast"
        ]
    );
    assert_eq!(arrays[4], arrays[2]);
    let requests = server.requests();
    assert_eq!(requests[0]["stream"], json!(true));
    assert_eq!(requests[0]["stream_options"]["include_usage"], json!(true));
    // The activated tool carries its full schema under its OpenAI alias.
    assert_eq!(
        requests[2]["tools"][3]["function"]["parameters"]["required"],
        json!(["city"])
    );

    insta::assert_snapshot!(render(&report));
    insta::assert_json_snapshot!("browse_transcript_json", report, {
        ".messages[].tool_calls[].id" => "[call_id]",
        ".messages[].tool_call_id" => "[call_id]",
    });

    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    let deltas: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(Some(deltas), report.answer);
    let kinds: Vec<String> = events
        .iter()
        .filter(|e| !matches!(e, AgentEvent::TextDelta { .. }))
        .map(|e| {
            let v = serde_json::to_value(e).unwrap();
            let mut s = v["type"].as_str().unwrap().to_owned();
            for key in ["tool", "step", "ok", "evicted"] {
                if let Some(x) = v.get(key) {
                    s.push_str(&format!(" {key}={x}"));
                }
            }
            s
        })
        .collect();
    insta::assert_snapshot!("browse_events", kinds.join("\n"));
}

#[tokio::test]
async fn activation_cap_evicts_the_least_recently_used_tool() {
    let server = Server::start(vec![
        call(
            "c1",
            "discover_describe",
            r#"{"name":"get_weather","level":2}"#,
        ),
        call("c2", "discover_describe", r#"{"name":"weather.forecast"}"#),
        // get_weather was evicted from the array, but its alias still resolves.
        call("c3", "get_weather", r#"{"city":"Oslo"}"#),
        text("21 °C"),
    ])
    .await;
    let agent = agent(&server, config(Policy::Browse, false).activation_cap(1));
    let report = agent.run("Weather?", RunOptions::default()).await;
    assert_eq!(report.stop, StopReason::Answer);
    assert_paired(&report.messages);
    let arrays = server.tool_arrays();
    let meta = ["discover_search", "discover_describe", "call_tool"];
    assert_eq!(arrays[0], meta);
    assert_eq!(arrays[1], [&meta[..], &["get_weather"]].concat());
    assert_eq!(arrays[2], [&meta[..], &["weather_forecast"]].concat());
    assert_eq!(arrays[3], arrays[2]);
    insta::assert_snapshot!(render(&report));
}

#[tokio::test]
async fn upfront_offers_every_enabled_tool() {
    let server = Server::start(vec![
        call("c1", "weather_forecast", r#"{"city":"Oslo","days":1}"#),
        text("21 °C"),
    ])
    .await;
    let config = config(Policy::Upfront, false)
        .request_param("temperature", json!(0))
        .request_param("stream", json!(true));
    let agent = agent(&server, config);
    let report = agent.run("Weather?", RunOptions::default()).await;
    assert_eq!(report.stop, StopReason::Answer);
    // Extra request fields are sent; the loop's own fields win.
    assert_eq!(server.requests()[0]["temperature"], json!(0));
    assert_eq!(server.requests()[0]["stream"], json!(false));
    let arrays = server.tool_arrays();
    assert_eq!(
        arrays[0],
        [
            "get_weather",
            "weather_forecast",
            "read_file",
            "web_search",
            "search_files",
            "write_file",
            "spawn_coding_agent"
        ]
    );
    assert_eq!(arrays[1], arrays[0]);
    // No browse guidance in the system prompt.
    let system = server.requests()[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(system, "You are a test assistant.");
    assert!(report.messages[3].text().unwrap().contains(r#""ok":true"#));
}
