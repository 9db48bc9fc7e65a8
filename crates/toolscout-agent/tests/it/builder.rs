//! `Agent::builder` and `Agent::ask`: the answer, a run that stops without one, events
//! seen through `on_event`, and what a builder without tools or endpoint says.

use std::sync::{Arc, Mutex};

use toolscout_agent::{Agent, AgentEvent, Error, Policy};

use crate::host;
use crate::server::{Server, call, text};

fn builder(server: &Server) -> toolscout_agent::AgentBuilder {
    Agent::builder("assistant", "scripted-model")
        .endpoint(&server.base_url, "none")
        .host(Arc::new(host()))
        .policy(Policy::Upfront)
        .config(|c| c.stream(false).ground_arguments(false))
}

#[tokio::test]
async fn ask_answers_and_on_event_sees_the_calls() {
    let server = Server::start(vec![
        call("c1", "get_weather", r#"{"city": "Paris"}"#),
        text("Sunny in Paris."),
    ])
    .await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let agent = builder(&server)
        .on_event(move |event| {
            if let AgentEvent::ToolCallFinished { tool, ok, .. } = event {
                sink.lock().unwrap().push(format!("{tool}: {ok}"));
            }
        })
        .build()
        .unwrap();
    assert_eq!(
        agent.ask("Weather in Paris?").await.unwrap(),
        "Sunny in Paris."
    );
    assert_eq!(*seen.lock().unwrap(), ["get_weather: true"]);
}

#[tokio::test]
async fn ask_without_an_answer_is_an_error_that_says_why() {
    let server = Server::start(vec![call("c1", "get_weather", r#"{"city": "Paris"}"#)]).await;
    let agent = builder(&server)
        .config(|c| c.stream(false).max_steps(1))
        .build()
        .unwrap();
    let err = agent.ask("Weather in Paris?").await.unwrap_err();
    assert!(matches!(err, Error::Stopped { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "agent 'assistant' stopped without an answer: the step limit (max_steps) was reached"
    );
}

#[test]
fn a_builder_without_endpoint_or_tools_says_which() {
    let no_endpoint = Agent::builder("assistant", "m")
        .host(Arc::new(host()))
        .build();
    assert_eq!(
        no_endpoint.unwrap_err().to_string(),
        "invalid agent configuration 'assistant': no endpoint: call AgentBuilder::endpoint"
    );
    let no_tools = Agent::builder("assistant", "m")
        .endpoint("http://127.0.0.1:1/v1", "none")
        .build();
    assert_eq!(
        no_tools.unwrap_err().to_string(),
        "invalid agent configuration 'assistant': no toolbox: call AgentBuilder::toolbox"
    );
}

/// A config cannot skip its builder's checks: a serialized one is checked as it is read,
/// a built one changes only through `to_builder`, and options missing from a file take
/// their defaults.
#[test]
fn a_config_read_from_json_is_checked_like_a_built_one() {
    use toolscout_agent::{AgentConfig, AgentOptions};

    let zero_steps = serde_json::json!({"name": "helper", "model": "m", "max_steps": 0});
    let err = serde_json::from_value::<AgentConfig>(zero_steps).unwrap_err();
    assert!(
        err.to_string().contains("max_steps must be at least 1"),
        "{err}"
    );
    let bad_name = serde_json::json!({"name": "a helper", "model": "m"});
    assert!(serde_json::from_value::<AgentConfig>(bad_name).is_err());

    let read: AgentConfig =
        serde_json::from_value(serde_json::json!({"name": "helper", "model": "m", "max_steps": 4}))
            .unwrap();
    assert_eq!(read.options().max_steps, 4);
    assert_eq!(
        read.options().activation_cap,
        AgentOptions::default().activation_cap
    );
    // Round trip: what is written reads back the same.
    let again: AgentConfig = serde_json::from_value(serde_json::to_value(&read).unwrap()).unwrap();
    assert_eq!(again, read);

    let changed = read.to_builder().max_steps(0).build();
    assert!(changed.is_err(), "{changed:?}");
    let changed = read.to_builder().max_steps(2).build().unwrap();
    assert_eq!((changed.name(), changed.options().max_steps), ("helper", 2));
}
