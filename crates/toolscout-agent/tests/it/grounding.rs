//! `ground_arguments`: a call whose required arguments the conversation did not give is
//! refused before it runs, and the model is free to ask the user instead.

use toolscout_agent::ErrorKind;
use toolscout_agent::{AgentEvent, Policy, RunOptions, StopReason, ToolChoice};

use crate::server::{Server, call, text};
use crate::{agent, assert_paired, config, render};

/// Retrieve one tool, require a call after it, check the arguments.
fn grounded() -> toolscout_agent::AgentConfigBuilder {
    config(Policy::Retrieve, false)
        .retrieve_top_k(1)
        .tool_choice(ToolChoice::RequiredAfterActivation)
        .ground_arguments(true)
}

/// Each finished call: tool, ok, and its error kind.
fn finished(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<AgentEvent>,
) -> Vec<(String, bool, Option<String>)> {
    let mut out = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let AgentEvent::ToolCallFinished {
            tool, ok, result, ..
        } = event
        {
            let kind = result
                .pointer("/error/kind")
                .and_then(|k| k.as_str())
                .map(str::to_owned);
            out.push((tool, ok, kind));
        }
    }
    out
}

/// Runs `message` with `config` against `server`: the report and each finished call.
async fn run(
    server: &Server,
    config: toolscout_agent::AgentConfigBuilder,
    message: &str,
) -> (
    toolscout_agent::RunReport,
    Vec<(String, bool, Option<String>)>,
) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let report = agent(server, config)
        .run(message, RunOptions::default().with_events(tx))
        .await;
    (report, finished(&mut rx))
}

/// Whether each request required a call.
fn choices(server: &Server) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|r| r["tool_choice"].as_str().unwrap_or("auto").to_owned())
        .collect()
}

#[tokio::test]
async fn a_made_up_argument_is_refused_and_the_model_may_then_answer() {
    let server = Server::start(vec![
        call("c1", "get_weather", r#"{"city":"Paris","units":"celsius"}"#),
        text("Which city would you like the weather for?"),
    ])
    .await;
    let (report, calls) = run(&server, grounded(), "What's the weather like right now?").await;
    assert_eq!(report.stop, StopReason::Answer);
    assert_paired(&report.messages);
    // The tool never ran: its call ended in the refusal, and nothing was forced after.
    assert_eq!(
        calls,
        [(
            "get_weather".to_owned(),
            false,
            Some(ErrorKind::UngroundedArguments.as_str().to_owned())
        )]
    );
    assert_eq!(choices(&server), ["required", "auto"]);
    insta::assert_snapshot!(render(&report), @r#"
    system: You are a test assistant.…
    user: What's the weather like right now?
    assistant: 
      → c1 get_weather({"city":"Paris","units":"celsius"})
    tool c1: {"ok":false,"error":{"kind":"ungrounded_arguments","message":"not run: the user has not given city (city=\"Paris\" is in neither the request nor a tool result). If the user did give it in other words (a name for what they described, a converted unit, a total), call again with the same arguments and the call will run; if not, do not guess: answer the user and ask for it"}}
    assistant: Which city would you like the weather for?
    stop: {"reason":"answer"} · steps: 2 · answer: Some("Which city would you like the weather for?")
    "#);
}

#[tokio::test]
async fn the_same_call_made_again_runs_and_a_changed_one_is_checked_again() {
    // "The capital of France" is Paris, which the model knows and the check cannot.
    let paris = r#"{"city":"Paris"}"#;
    let server = Server::start(vec![
        call("c1", "get_weather", paris),
        call("c2", "get_weather", r#"{"city":"Lyon"}"#),
        call("c3", "get_weather", paris),
        text("Sunny in Paris."),
    ])
    .await;
    let (report, calls) = run(
        &server,
        grounded(),
        "What's the weather in the capital of France?",
    )
    .await;
    assert_eq!(report.answer.as_deref(), Some("Sunny in Paris."));
    let ungrounded = Some(ErrorKind::UngroundedArguments.as_str().to_owned());
    assert_eq!(
        calls,
        [
            ("get_weather".to_owned(), false, ungrounded.clone()),
            ("get_weather".to_owned(), false, ungrounded),
            ("get_weather".to_owned(), true, None),
        ]
    );
}

#[tokio::test]
async fn a_given_argument_passes_however_it_is_written() {
    // "oslo's" and "OSLO, Norway" share a word; the unit is one the schema offers.
    let server = Server::start(vec![
        call(
            "c1",
            "get_weather",
            r#"{"city":"OSLO, Norway","units":"celsius"}"#,
        ),
        text("Sunny in Oslo."),
    ])
    .await;
    let (report, calls) = run(&server, grounded(), "How is oslo's weather today?").await;
    assert_eq!(report.answer.as_deref(), Some("Sunny in Oslo."));
    assert_eq!(calls, [("get_weather".to_owned(), true, None)]);
}

#[tokio::test]
async fn discover_tools_and_runs_without_the_option_are_not_checked() {
    // The model's own search words are not the user's, and need not be.
    let server = Server::start(vec![
        call(
            "c1",
            "discover_search",
            r#"{"query":"meteorology forecast"}"#,
        ),
        call("c2", "get_weather", r#"{"city":"Paris"}"#),
        text("Sunny in Paris."),
    ])
    .await;
    let (report, calls) = run(
        &server,
        grounded().ground_arguments(false),
        "What's the weather like?",
    )
    .await;
    assert_eq!(report.answer.as_deref(), Some("Sunny in Paris."));
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls.iter().all(|(_, ok, _)| *ok), "{calls:?}");

    let server = Server::start(vec![
        call(
            "c1",
            "discover_search",
            r#"{"query":"meteorology forecast"}"#,
        ),
        text("I could not find out."),
    ])
    .await;
    let (_, calls) = run(&server, grounded(), "What's the weather like?").await;
    assert_eq!(calls, [("discover_search".to_owned(), true, None)]);
}

#[tokio::test]
async fn a_value_a_tool_returned_grounds_a_later_call() {
    // "sunny" is not in the request, so the first forecast call is refused; get_weather
    // returns it, and the same call then runs.
    let forecast = r#"{"city":"sunny"}"#;
    let server = Server::start(vec![
        call("c1", "weather_forecast", forecast),
        call("c2", "get_weather", r#"{"city":"Oslo"}"#),
        call("c3", "weather_forecast", forecast),
        text("Done."),
    ])
    .await;
    let (report, calls) = run(
        &server,
        grounded().retrieve_top_k(2),
        "What's the weather in Oslo, and the forecast?",
    )
    .await;
    assert_eq!(report.answer.as_deref(), Some("Done."));
    let ungrounded = Some(ErrorKind::UngroundedArguments.as_str().to_owned());
    assert_eq!(
        calls,
        [
            ("weather.forecast".to_owned(), false, ungrounded),
            ("get_weather".to_owned(), true, None),
            ("weather.forecast".to_owned(), true, None),
        ]
    );
}

/// What the user implied is grounded (#41 item 4): "2 minutes" passed as 120 seconds, and
/// "English" as the code "en", run at the first call; the call is not refused and no
/// second one is needed.
#[tokio::test]
async fn a_converted_value_and_a_code_for_a_named_thing_run_at_once() {
    let timer = toolscout_spec::ToolSpec::builder(
        "set_timer",
        "Set a timer that rings after a while",
    )
    .parameters(serde_json::json!({
        "type": "object",
        "properties": {
            "seconds": {"type": "integer"},
            "language": {"type": "string", "description": "ISO 639-1 code of the spoken alert"}
        },
        "required": ["seconds", "language"]
    }))
    .build()
    .unwrap();
    let host = toolscout_agent::StaticHost::default()
        .tool(timer, |args: serde_json::Value| async move {
            Ok(serde_json::json!({"set": args["seconds"]}))
        });
    let server = Server::start(vec![
        call("c1", "set_timer", r#"{"seconds":120,"language":"en"}"#),
        text("Your timer rings in 2 minutes."),
    ])
    .await;
    let agent = toolscout_agent::Agent::new(
        grounded().build().unwrap(),
        toolscout_agent::ChatClient::new(&server.base_url, "test-key"),
        std::sync::Arc::new(host),
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let report = agent
        .run(
            "Set a timer for 2 minutes for the tea, with the alert spoken in English",
            RunOptions::default().with_events(tx),
        )
        .await;
    assert_eq!(report.stop, StopReason::Answer);
    assert_eq!(finished(&mut rx), [("set_timer".to_owned(), true, None)]);
    insta::assert_snapshot!(render(&report), @r#"
    system: You are a test assistant.…
    user: Set a timer for 2 minutes for the tea, with the alert spoken in English
    assistant: 
      → c1 set_timer({"seconds":120,"language":"en"})
    tool c1: {"ok":true,"value":{"set":120}}
    assistant: Your timer rings in 2 minutes.
    stop: {"reason":"answer"} · steps: 2 · answer: Some("Your timer rings in 2 minutes.")
    "#);
}

/// A refusal quotes the made-up value; a failed call's result is no ground, so the same
/// value sent to another tool is refused too (it ran before: the quote grounded it).
#[tokio::test]
async fn a_value_a_refusal_quoted_does_not_ground_another_tool() {
    let server = Server::start(vec![
        call("c1", "get_weather", r#"{"city":"Paris"}"#),
        call("c2", "weather.forecast", r#"{"city":"Paris"}"#),
        text("Which city?"),
    ])
    .await;
    let (report, calls) = run(&server, grounded(), "What's the weather like right now?").await;
    assert_eq!(report.stop, StopReason::Answer);
    let ungrounded = Some(ErrorKind::UngroundedArguments.as_str().to_owned());
    assert_eq!(
        calls,
        [
            ("get_weather".to_owned(), false, ungrounded.clone()),
            ("weather.forecast".to_owned(), false, ungrounded),
        ]
    );
}

/// Under `Upfront` the catalog's tools are in the array from the start; they are still
/// catalog tools, so a made-up argument is refused as under the browsing policies (they
/// were once taken for meta tools, and ran unchecked), and a call that ran is progress.
#[tokio::test]
async fn upfront_tools_are_checked_like_retrieved_ones() {
    let server = Server::start(vec![
        call("c1", "get_weather", r#"{"city":"Paris"}"#),
        text("Which city would you like the weather for?"),
        call("c2", "get_weather", r#"{"city":"Oslo"}"#),
        text("Sunny in Oslo."),
    ])
    .await;
    let upfront = || config(Policy::Upfront, false).ground_arguments(true);
    let (report, calls) = run(&server, upfront(), "What's the weather like right now?").await;
    assert_eq!(report.stop, StopReason::Answer);
    assert_eq!(
        calls,
        [(
            "get_weather".to_owned(),
            false,
            Some(ErrorKind::UngroundedArguments.as_str().to_owned())
        )]
    );
    let (report, calls) = run(&server, upfront(), "What's the weather in Oslo?").await;
    assert_eq!(report.answer.as_deref(), Some("Sunny in Oslo."));
    assert_eq!(calls, [("get_weather".to_owned(), true, None)]);
    // Every request offered the catalog's tools themselves, not the discover tools.
    for request in server.requests() {
        let names: Vec<&str> = request["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["function"]["name"].as_str())
            .collect();
        assert!(names.contains(&"get_weather"), "{names:?}");
        assert!(
            !names.iter().any(|n| n.starts_with("discover")),
            "{names:?}"
        );
    }
}
