//! Specialist agents as tools, and the depth limit.

use toolscout_agent::{
    AgentConfig, AgentConfigBuilder, AgentEvent, Policy, RunOptions, StopReason, ToolScope,
};

use crate::server::{Server, call, text};
use crate::{agent, assert_paired, config, render};

/// A specialist on the small model, upfront, with one tool and a system prompt.
fn specialist(name: &str, description: &str, tool: &str, prompt: &str) -> AgentConfigBuilder {
    AgentConfig::builder(name, "scripted-small-model")
        .description(description)
        .system_prompt(prompt)
        .policy(Policy::Upfront)
        .tool_scope(ToolScope::Only(vec![tool.to_owned()]))
        .stream(false)
}

fn weather_agent() -> AgentConfig {
    specialist(
        "weather_agent",
        "A weather specialist: give it a weather question, it answers.",
        "get_weather",
        "You answer weather questions with the weather tools.",
    )
    .build()
    .unwrap()
}

#[tokio::test]
async fn a_subagent_runs_a_nested_loop_and_returns_its_answer() {
    let server = Server::start(vec![
        // The assistant delegates.
        call(
            "c1",
            "weather_agent",
            r#"{"task":"Current weather in Oslo?"}"#,
        ),
        // The specialist's loop: its own tools, one call, an answer.
        call("s1", "get_weather", r#"{"city":"Oslo"}"#),
        text("Oslo: 21 °C, sunny."),
        // Back in the assistant.
        text("The weather agent says Oslo is 21 °C and sunny."),
    ])
    .await;
    let agent = agent(&server, config(Policy::Browse, true)).with_subagent(weather_agent());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let report = agent
        .run(
            "How is the weather in Oslo?",
            RunOptions::default().with_events(tx),
        )
        .await;
    let mut answers = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let AgentEvent::FinalAnswer { agent, depth, .. } = e {
            answers.push((agent, depth));
        }
    }
    // The specialist's events come tagged with its name and depth.
    assert_eq!(
        answers,
        [("weather_agent".to_owned(), 1), ("assistant".to_owned(), 0)]
    );
    assert_eq!(report.stop, StopReason::Answer);
    assert_paired(&report.messages);
    assert_eq!(report.steps, 2);
    // Usage includes the specialist's two requests.
    assert_eq!(report.usage.total(), 4 * 110);

    let requests = server.requests();
    let arrays = server.tool_arrays();
    // Browsing, the model meets its sub-agents through discover_agents; one called by
    // name runs all the same.
    assert_eq!(
        arrays[0],
        [
            "discover_search",
            "discover_describe",
            "call_tool",
            "discover_agents"
        ]
    );
    // The specialist: its own model and prompt, only its scoped tool, and (depth 1 of 2)
    // the sub-agent tool again.
    assert_eq!(requests[1]["model"], "scripted-small-model");
    assert_eq!(arrays[1], ["get_weather", "weather_agent"]);
    assert_eq!(
        requests[1]["messages"][1]["content"],
        "Current weather in Oslo?"
    );
    insta::assert_snapshot!(render(&report));
}

#[tokio::test]
async fn the_depth_limit_stops_runaway_delegation() {
    let server = Server::start(vec![
        call("c1", "weather_agent", r#"{"task":"Weather?"}"#),
        // Depth 1: the specialist delegates to itself.
        call("s1", "weather_agent", r#"{"task":"Weather?"}"#),
        // Depth 2 = the limit: no sub-agent tool is offered; it tries anyway.
        call("t1", "weather_agent", r#"{"task":"Weather?"}"#),
        text("I will answer myself: sunny."),
        text("Sunny."),
        text("Sunny, says the specialist."),
    ])
    .await;
    let agent =
        agent(&server, config(Policy::Upfront, false).max_depth(2)).with_subagent(weather_agent());
    let report = agent.run("Weather?", RunOptions::default()).await;
    assert_eq!(report.stop, StopReason::Answer);
    assert_eq!(server.remaining(), 0);
    let arrays = server.tool_arrays();
    assert!(arrays[1].contains(&"weather_agent".to_owned()));
    assert!(!arrays[2].contains(&"weather_agent".to_owned()));
    let third = &server.requests()[3]["messages"];
    let refusal = third.as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(refusal.contains("depth_limit"), "{refusal}");
    insta::assert_snapshot!(refusal);
}

fn research_agent() -> AgentConfig {
    specialist(
        "research_agent",
        "Finds and summarises sources on a topic.\nUse it for questions that need several sources.",
        "web_search",
        "You research.",
    )
    .category("research")
    .build()
    .unwrap()
}

#[tokio::test]
async fn a_browsing_agent_finds_its_subagents_with_discover_agents_and_calls_one() {
    let server = Server::start(vec![
        call("c1", "discover_agents", r#"{"category":"weather"}"#),
        call("c2", "discover_agents", r#"{"agent":"weather_agent"}"#),
        call(
            "c3",
            "weather_agent",
            r#"{"task":"Current weather in Oslo?"}"#,
        ),
        call("s1", "get_weather", r#"{"city":"Oslo"}"#),
        text("Oslo: 21 °C, sunny."),
        text("Oslo is 21 °C and sunny."),
    ])
    .await;
    let weather = weather_agent()
        .to_builder()
        .category("weather")
        .build()
        .unwrap();
    let agent = toolscout_agent::Agent::builder("assistant", "scripted-model")
        .client(toolscout_agent::ChatClient::new(
            &server.base_url,
            "test-key",
        ))
        .host(std::sync::Arc::new(crate::host()))
        .policy(Policy::Browse)
        .config(|c| c.stream(false))
        .subagent(weather)
        .subagent(research_agent())
        .build()
        .unwrap();
    let report = agent
        .run("How is the weather in Oslo?", RunOptions::default())
        .await;
    assert_eq!(report.stop, StopReason::Answer);
    assert_eq!(server.remaining(), 0);
    let arrays = server.tool_arrays();
    // The sub-agents are not in the first tools array: discover_agents lists them.
    assert!(
        arrays[0].contains(&"discover_agents".to_owned()),
        "{:?}",
        arrays[0]
    );
    assert!(
        !arrays[0].iter().any(|t| t.ends_with("_agent")),
        "{:?}",
        arrays[0]
    );
    // Described at level 2, the weather agent is activated like a tool.
    assert!(!arrays[1].contains(&"weather_agent".to_owned()));
    assert_eq!(arrays[2].last().map(String::as_str), Some("weather_agent"));
    // The specialist ran its own loop.
    assert_eq!(server.requests()[3]["model"], "scripted-small-model");
    insta::assert_snapshot!(render(&report));
}

#[tokio::test]
async fn without_subagents_no_discover_agents_is_offered() {
    let server = Server::start(vec![text("Hello.")]).await;
    let agent = agent(&server, config(Policy::Browse, false));
    let report = agent.run("Hi", RunOptions::default()).await;
    assert_eq!(report.stop, StopReason::Answer);
    let arrays = server.tool_arrays();
    assert!(
        !arrays[0].contains(&"discover_agents".to_owned()),
        "{:?}",
        arrays[0]
    );
}
