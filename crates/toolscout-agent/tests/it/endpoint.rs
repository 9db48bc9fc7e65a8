//! Endpoint errors, limits, cancellation and usage.

use std::time::Duration;

use toolscout_agent::{CancellationToken, Policy, RunOptions, StopReason};

use crate::server::{Reply, Server, call, text};
use crate::{agent, assert_paired, config};

#[tokio::test]
async fn a_rejected_request_ends_the_run_with_an_endpoint_error() {
    for stream in [false, true] {
        let server = Server::start(vec![
            call("c1", "get_weather", r#"{"city":"Oslo"}"#),
            Reply::Error(
                400,
                "This model's maximum context length is 128000 tokens.".to_owned(),
            ),
        ])
        .await;
        let agent = agent(&server, config(Policy::Upfront, stream));
        let report = agent.run("Weather?", RunOptions::default()).await;
        assert_paired(&report.messages);
        assert_eq!(report.steps, 2);
        let StopReason::EndpointError { status, message } = &report.stop else {
            panic!("expected an endpoint error, got {:?}", report.stop);
        };
        assert_eq!(*status, Some(400));
        assert!(message.contains("maximum context length"), "{message}");
        insta::assert_snapshot!(format!("rejected_stream_{stream}"), message);
    }
}

/// An agent whose client retries `retries` times, 10 ms apart.
fn retrying_agent(server: &Server, stream: bool, retries: u32) -> toolscout_agent::Agent {
    toolscout_agent::Agent::new(
        config(Policy::Upfront, stream).build().unwrap(),
        toolscout_agent::ChatClient::new(&server.base_url, "k")
            .with_retries(retries, Duration::from_millis(10)),
        std::sync::Arc::new(crate::host()),
    )
}

/// `n` answers of 503 "Loading model" (llama.cpp's while it starts), then `then`.
fn loading(n: usize, then: Reply) -> Vec<Reply> {
    let mut script = vec![Reply::Error(503, "Loading model".to_owned()); n];
    script.push(then);
    script
}

#[tokio::test]
async fn a_starting_endpoint_is_asked_again_until_it_answers() {
    // More 503s than the HTTP client's own quick retries (three within a second) absorb.
    for stream in [false, true] {
        let server = Server::start(loading(6, text("Ready."))).await;
        let report = retrying_agent(&server, stream, 2)
            .run("Hello?", RunOptions::default())
            .await;
        assert_eq!(report.stop, StopReason::Answer, "stream {stream}");
        assert_eq!(report.answer.as_deref(), Some("Ready."));
        assert_eq!(server.remaining(), 0);
        assert_eq!(report.steps, 1, "a retry is not another step");
    }
}

#[tokio::test]
async fn retries_end_and_the_last_failure_is_reported() {
    let server = Server::start(loading(6, text("too late"))).await;
    let report = retrying_agent(&server, false, 0)
        .run("Hello?", RunOptions::default())
        .await;
    let StopReason::EndpointError { status, message } = &report.stop else {
        panic!("expected an endpoint error, got {:?}", report.stop);
    };
    assert_eq!(*status, Some(503));
    assert!(message.contains("Loading model"), "{message}");
    assert!(server.remaining() > 0, "gave up before the answer");
}

#[tokio::test]
async fn an_unreachable_endpoint_is_an_error_value() {
    let server = Server::start(vec![]).await;
    let mut agent_server = server.clone();
    agent_server.base_url = "http://127.0.0.1:9/v1".to_owned();
    let agent = agent(&agent_server, config(Policy::Browse, true));
    let report = agent.run("Hello?", RunOptions::default()).await;
    assert!(matches!(
        report.stop,
        StopReason::EndpointError { status: None, .. }
    ));
}

#[tokio::test]
async fn max_steps_stops_the_loop() {
    let server = Server::start(vec![
        call("c1", "discover_search", r#"{"query":"a"}"#),
        call("c2", "discover_search", r#"{"query":"b"}"#),
    ])
    .await;
    let agent = agent(&server, config(Policy::Browse, false).max_steps(2));
    let report = agent.run("Loop.", RunOptions::default()).await;
    assert_eq!(report.stop, StopReason::MaxSteps);
    assert_eq!(report.steps, 2);
    assert_paired(&report.messages);
}

#[tokio::test]
async fn max_tokens_stops_the_loop() {
    let server = Server::start(vec![
        call("c1", "discover_search", r#"{"query":"a"}"#),
        call("c2", "discover_search", r#"{"query":"b"}"#),
    ])
    .await;
    let agent = agent(&server, config(Policy::Browse, true).max_tokens(150));
    let report = agent.run("Loop.", RunOptions::default()).await;
    assert_eq!(report.stop, StopReason::MaxTokens);
    assert_eq!(report.steps, 2);
    assert_eq!(report.usage.total(), 220);
    assert_paired(&report.messages);
}

#[tokio::test]
async fn usage_is_estimated_when_the_endpoint_omits_it() {
    for stream in [false, true] {
        let server = Server::start_with(vec![text("Hello there.")], false).await;
        let agent = agent(&server, config(Policy::Browse, stream));
        let report = agent.run("Hi", RunOptions::default()).await;
        assert_eq!(report.stop, StopReason::Answer);
        assert!(report.usage.estimated);
        assert!(report.usage.prompt_tokens > 100, "{:?}", report.usage);
        assert_eq!(report.usage.completion_tokens, 3);
    }
}

#[tokio::test]
async fn cancelling_stops_a_running_tool_call() {
    let server = Server::start(vec![
        call("c1", "read_file", r#"{"file_path":"a"}"#),
        text("never sent"),
    ])
    .await;
    let agent = agent(&server, config(Policy::Upfront, false));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        trigger.cancel();
    });
    let report = agent
        .run("Read.", RunOptions::default().with_cancel(cancel))
        .await;
    assert_eq!(report.stop, StopReason::Cancelled);
    assert_paired(&report.messages);
    assert_eq!(server.remaining(), 1);
    assert!(
        report
            .messages
            .last()
            .unwrap()
            .text()
            .unwrap()
            .contains("cancelled")
    );
}

#[tokio::test]
async fn malformed_responses_are_error_values() {
    let cases = [
        (false, "{\"choices\": 42}"),
        (false, "{\"choices\": []}"),
        (
            true,
            "data: {\"choices\": [{\"delta\": {\"content\": 7}}]}\n\ndata: [DONE]\n\n",
        ),
        (true, "data: [DONE]\n\n"),
    ];
    for (stream, raw) in cases {
        let server = Server::start(vec![Reply::Raw(raw.to_owned())]).await;
        let agent = agent(&server, config(Policy::Browse, stream));
        let report = agent.run("Hi", RunOptions::default()).await;
        assert!(
            matches!(report.stop, StopReason::EndpointError { status: None, .. }),
            "{raw}: {:?}",
            report.stop
        );
    }
}
