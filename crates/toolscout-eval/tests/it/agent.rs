//! The agent evaluation without a model: the catalog it builds, the oracle host, what a
//! run's events say, and the figures of hand-built outcomes.

use std::collections::HashSet;

use serde_json::{Value, json};
use toolscout_agent::host::ToolHost as _;
use toolscout_agent::{AgentEvent, ErrorKind, Policy, StopReason, TokenUsage, ToolboxHost};
use toolscout_discover::Lookup;
use toolscout_eval::agent::{self, OfferedHost, Outcome, Totals};
use toolscout_eval::read::{ExpectedCall, Task, tool_lines_of};

fn outcome(called_ok: &[&str], retrieved: &[&str]) -> Outcome {
    let mut o = Outcome::default();
    o.called_ok = called_ok.iter().map(|t| (*t).to_owned()).collect();
    o.expected_called = !called_ok.is_empty();
    o.catalog_called = !called_ok.is_empty();
    o.catalog_ran = !called_ok.is_empty();
    o.retrieved = retrieved.iter().map(|t| (*t).to_owned()).collect();
    o.steps = 2;
    o.usage = TokenUsage {
        prompt_tokens: 100,
        completion_tokens: 10,
        estimated: false,
    };
    o.first_prompt_tokens = Some(60);
    o.seconds = 1.5;
    o
}

/// Three relevant tasks of two tools each: one complete; one half done with a call of
/// the other refused as ungrounded, though the benchmark's answer makes the same call
/// (a false refusal); one with a wrong call refused. Tool recall is the share of each
/// task's tools called.
#[test]
fn totals_of_hand_built_outcomes() {
    let calls = vec![
        ExpectedCall::new("weather", json!({"city": "Paris"})),
        ExpectedCall::new("email", json!({"to": "bob", "days": 3})),
    ];
    let task = Task::new(
        "Weather in Paris, then mail it to bob",
        &["weather", "email"],
    )
    .with_calls(calls);
    let mut totals = Totals::default();

    let complete = outcome(&["weather", "email"], &["weather", "email"]);
    assert!(totals.add(&task, &complete));

    let mut half = outcome(&["weather"], &["weather"]);
    half.refused = vec![("email".to_owned(), json!({"to": "Bob ", "days": "3"}))];
    half.stop = Some(StopReason::MaxSteps);
    assert!(totals.add(&task, &half), "an expected tool was called");

    let mut wrong = outcome(&[], &[]);
    wrong.refused = vec![("email".to_owned(), json!({"to": "alice"}))];
    wrong.stop = Some(StopReason::EndpointError {
        status: Some(500),
        message: "down".to_owned(),
    });
    wrong.needs = 2;
    assert!(!totals.add(&task, &wrong));

    assert_eq!(totals.tasks, 3);
    assert_eq!(totals.successes, 2);
    assert_eq!(totals.complete, 1);
    assert_eq!(totals.refusals, 2);
    assert_eq!(totals.refused_tasks, 2);
    assert_eq!(totals.refused_expected, 2);
    assert_eq!(totals.false_refusals, 1);
    assert_eq!(totals.hits, 2);
    assert_eq!(totals.needs, 1 + 1 + 2);

    let figures = totals.figures(true);
    let third = 1.0 / 3.0;
    assert_eq!(figures.tasks, 3);
    assert_eq!(figures.success_rate, 2.0 * third);
    assert_eq!(figures.complete_success_rate, third);
    assert_eq!(figures.tool_recall, (1.0 + 0.5 + 0.0) / 3.0);
    assert_eq!(figures.false_refusals, 1);
    assert_eq!(figures.refusals_of_expected_tools, 2);
    assert_eq!(figures.grounding_refusals_per_task, 2.0 * third);
    assert_eq!(figures.max_steps_rate, third);
    assert_eq!(figures.endpoint_error_rate, third);
    assert_eq!(figures.mean_steps, 2.0);
    assert_eq!(figures.mean_first_turn_prompt_tokens, 60.0);
    let retrieval = figures.retrieval.clone().unwrap();
    assert_eq!(retrieval.retrieved_hit_rate, Some(2.0 * third));
    assert_eq!(retrieval.pre_activation_recall, (1.0 + 0.5 + 0.0) / 3.0);
    // Nothing offered compactly or activated later in these outcomes.
    assert_eq!(
        retrieval.first_array_recall,
        retrieval.pre_activation_recall
    );
    assert_eq!(retrieval.success_given_hit, Some(1.0));
    assert_eq!(retrieval.success_given_miss, Some(0.0));
    assert_eq!(figures.abstention, None);
    // Without the retrieve policy there are no retrieval figures.
    assert_eq!(totals.figures(false).retrieval, None);

    // What `eval agent --json` prints, in this order.
    let v = serde_json::to_value(&figures).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "tasks",
            "success_rate",
            "complete_success_rate",
            "tool_recall",
            "unasked_calls_per_task",
            "tasks_with_an_unasked_call_rate",
            "mean_needs",
            "grounding_refusals_per_task",
            "tasks_with_a_refusal_rate",
            "refusals_of_expected_tools",
            "false_refusals",
            "mean_steps",
            "mean_prompt_tokens",
            "mean_completion_tokens",
            "mean_first_turn_prompt_tokens",
            "seconds_per_task",
            "max_steps_rate",
            "endpoint_error_rate",
            "tokens_estimated",
            "retrieved_hit_rate",
            "pre_activation_recall",
            "first_array_recall",
            "end_activation_recall",
            "success_given_hit",
            "success_given_miss",
        ]
    );
}

/// An irrelevance task succeeds when no catalog tool is called; one called and refused
/// before it ran did not abstain, but no tool ran.
#[test]
fn irrelevance_figures_count_abstentions_and_tools_that_never_ran() {
    let task = Task::new("Tell me a joke", &[]).with_offered(&["weather"]);
    let mut totals = Totals::default();
    assert!(totals.add(&task, &Outcome::default()));
    let mut refused = Outcome::default();
    refused.catalog_called = true;
    refused.refused = vec![("weather".to_owned(), json!({"city": "Rome"}))];
    assert!(!totals.add(&task, &refused));
    let figures = totals.irrelevance_figures();
    assert_eq!(figures.success_rate, 0.5);
    assert_eq!(figures.complete_success_rate, 0.0);
    let abstention = figures.abstention.clone().unwrap();
    assert_eq!(abstention.abstention_rate, 0.5);
    assert_eq!(abstention.no_tool_ran_rate, 1.0);
    let v = serde_json::to_value(&figures).unwrap();
    assert_eq!(v["no_tool_ran_rate"], 1.0);
    assert_eq!(v.get("retrieved_hit_rate"), None);
}

fn finished(call_id: &str, tool: &str, ok: bool, kind: Option<ErrorKind>) -> AgentEvent {
    AgentEvent::ToolCallFinished {
        agent: "eval".to_owned(),
        depth: 0,
        call_id: call_id.to_owned(),
        tool: tool.to_owned(),
        ok,
        result: match kind {
            Some(k) => json!({"error": {"kind": k.as_str(), "message": "no"}}),
            None => json!({"status": "success"}),
        },
    }
}

fn started(call_id: &str, tool: &str, arguments: Value) -> AgentEvent {
    AgentEvent::ToolCallStarted {
        agent: "eval".to_owned(),
        depth: 0,
        call_id: call_id.to_owned(),
        tool: tool.to_owned(),
        arguments: arguments.to_string(),
    }
}

#[test]
fn an_outcome_reads_a_run_s_events() {
    let task = Task::new("Weather in Paris, then mail it", &["weather", "email"]);
    let catalog: HashSet<String> = ["weather", "email", "joke"].map(str::to_owned).into();
    let events = [
        AgentEvent::Retrieved {
            agent: "eval".to_owned(),
            depth: 0,
            tools: vec!["weather".to_owned(), "joke".to_owned()],
            confidence: Some(0.5),
            needs: vec!["weather in Paris".to_owned(), "mail it".to_owned()],
        },
        AgentEvent::Offered {
            agent: "eval".to_owned(),
            depth: 0,
            tools: vec!["forecast".to_owned()],
        },
        AgentEvent::StepStarted {
            agent: "eval".to_owned(),
            depth: 0,
            step: 1,
        },
        AgentEvent::StepFinished {
            agent: "eval".to_owned(),
            depth: 0,
            step: 1,
            usage: TokenUsage {
                prompt_tokens: 321,
                completion_tokens: 5,
                estimated: false,
            },
        },
        started("1", "weather", json!({"city": "Paris"})),
        finished("1", "weather", true, None),
        started("2", "email", json!({"to": "carol"})),
        finished("2", "email", false, Some(ErrorKind::UngroundedArguments)),
        started("3", "nope", json!({})),
        finished("3", "nope", false, Some(ErrorKind::UnknownTool)),
        AgentEvent::Activated {
            agent: "eval".to_owned(),
            depth: 0,
            tool: "email".to_owned(),
            alias: "email".to_owned(),
            evicted: None,
        },
        AgentEvent::Offered {
            agent: "eval".to_owned(),
            depth: 0,
            tools: vec!["sms".to_owned()],
        },
        AgentEvent::StepFinished {
            agent: "eval".to_owned(),
            depth: 0,
            step: 2,
            usage: TokenUsage::default(),
        },
    ];
    let seen = Outcome::from_events(&events, &task, &catalog);
    assert_eq!(
        seen.calls,
        [
            "weather",
            "email(ungrounded_arguments)",
            "nope(unknown_tool)"
        ]
    );
    assert!(seen.expected_called && seen.catalog_called && seen.catalog_ran);
    assert_eq!(seen.retrieved, ["weather", "joke"]);
    // In the first array: retrieved, or offered before the first request; by the end,
    // everything activated or offered.
    assert_eq!(seen.first_offered, ["forecast"]);
    assert_eq!(
        seen.ever_offered,
        ["weather", "joke", "forecast", "email", "sms"]
            .map(str::to_owned)
            .into()
    );
    assert!(seen.retrieved_hit(&task));
    assert_eq!(seen.needs, 2);
    assert_eq!(seen.first_prompt_tokens, Some(321));
    assert_eq!(seen.called_ok, HashSet::from(["weather".to_owned()]));
    assert_eq!(seen.refused, [("email".to_owned(), json!({"to": "carol"}))]);
    assert!(seen.success(&task));

    // A catalog tool refused before it ran does not count as run.
    let refused_only = Outcome::from_events(&events[6..8], &task, &catalog);
    assert!(refused_only.catalog_called && !refused_only.catalog_ran);
    assert!(!refused_only.success(&task));
}

/// A call nobody asked for is a call of a catalog tool outside the task's `expected`
/// that ran: a flight search and a TV show's cast in a task about a route between
/// parks. A refused call did nothing, and a discover tool is no catalog tool.
#[test]
fn calls_nobody_asked_for_are_counted_per_task_and_in_the_figures() {
    let task = Task::new(
        "A route between two national parks",
        &["find_parks", "route"],
    );
    let catalog: HashSet<String> = [
        "find_parks",
        "route",
        "search_flights",
        "tv_cast",
        "weather",
    ]
    .map(str::to_owned)
    .into();
    let events = [
        finished("1", "discover_tools", true, None),
        finished("2", "find_parks", true, None),
        finished("3", "search_flights", true, None),
        finished("4", "tv_cast", false, Some(ErrorKind::ToolFailed)),
        finished("5", "weather", false, Some(ErrorKind::UngroundedArguments)),
        finished("6", "weather", false, Some(ErrorKind::InvalidArguments)),
        finished("7", "search_flights", true, None),
        // A recipe's step of a tool nobody asked for ran too.
        AgentEvent::ToolProgress {
            agent: "eval".to_owned(),
            depth: 0,
            call_id: "8".to_owned(),
            tool: "parks_then_weather".to_owned(),
            progress: json!({"event": "step_finished", "step": "w", "tool": "weather", "ok": true}),
        },
    ];
    let seen = Outcome::from_events(&events, &task, &catalog);
    assert_eq!(
        seen.unasked,
        ["search_flights", "tv_cast", "search_flights", "weather"]
    );
    // The oracle's run of the same task: only what was asked.
    let oracle = Outcome::from_events(&events[1..2], &task, &catalog);
    assert!(oracle.unasked.is_empty());

    let mut totals = Totals::default();
    totals.add(&task, &seen);
    totals.add(&task, &oracle);
    assert_eq!(totals.unasked_calls, 4);
    assert_eq!(totals.unasked_tasks, 1);
    let figures = totals.figures(true);
    assert_eq!(figures.unasked_calls_per_task, 2.0);
    assert_eq!(figures.tasks_with_an_unasked_call_rate, 0.5);
    let v = serde_json::to_value(&figures).unwrap();
    assert_eq!(v["unasked_calls_per_task"], 2.0);
}

#[test]
fn the_toolbox_groups_tools_by_the_bundle_their_line_names() {
    let tools = tool_lines_of(concat!(
        r#"{"name": "get_weather", "description": "Current weather.", "bundle": "Weather API", "bundle_description": "Forecasts."}"#,
        "\n",
        r#"{"name": "get_forecast", "description": "The forecast.", "bundle": "Weather API"}"#,
        "\n",
        r#"{"name": "send_email", "description": "Send an email."}"#,
        "\n",
    ));
    let toolbox = agent::build_toolbox(&tools, None).unwrap();
    let bundle_of = |name: &str| match toolbox.lookup(name) {
        Lookup::Found(t) => toolbox.catalog().bundle(t.bundle_id).unwrap(),
        _ => panic!("{name} is not callable"),
    };
    let weather = bundle_of("get_weather");
    assert_eq!(weather.display_name, "Weather API");
    assert_eq!(weather.description, "Forecasts.");
    assert_eq!(bundle_of("get_forecast").id, weather.id);
    assert_eq!(bundle_of("send_email").slug, "eval");

    // The oracle offers the task's tools alone, up front, and knows every tool.
    let host = ToolboxHost::new(toolbox);
    let oracle = OfferedHost::for_task(
        host.clone(),
        &Task::new("Mail it", &["send_email"]).with_offered(&["send_email", "unknown"]),
    );
    let offered: Vec<String> = oracle
        .initial_tools(Policy::Upfront)
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(offered, ["send_email"]);
    assert!(oracle.spec("get_weather").is_some());

    // An irrelevance task with tools of its own gets a catalog of those; others none.
    let joke = Task::new("Tell me a joke", &[]).with_offered(&["get_forecast"]);
    let own = agent::own_toolbox(&joke, &tools, None).unwrap().unwrap();
    assert!(matches!(own.lookup("get_forecast"), Lookup::Found(_)));
    assert!(!matches!(own.lookup("get_weather"), Lookup::Found(_)));
    let relevant = Task::new("Weather", &["get_weather"]).with_offered(&["get_forecast"]);
    assert!(
        agent::own_toolbox(&relevant, &tools, None)
            .unwrap()
            .is_none()
    );
}

#[test]
fn first_turn_tokens_grow_with_the_tools_array() {
    let tools = tool_lines_of(
        "{\"name\": \"get_weather\", \"description\": \"Current weather in a city.\"}\n",
    );
    let system = "You are a helpful assistant.";
    let none = agent::first_turn_tokens(system, &[]);
    let one = agent::first_turn_tokens(system, &tools.specs);
    assert!(none > 0 && one > none, "{none} {one}");
}

/// Stray calls of another server than the task's are counted per task, but only when
/// every task's outcome tells them: a run that mixes outcomes kept before they were
/// recorded gives no figure rather than a low one.
#[test]
fn stray_calls_of_other_servers_count_only_when_every_outcome_tells_them() {
    let task = Task::new("Weather in Paris", &["weather"]);
    let server_of = |tool: &str| match tool {
        "weather" | "forecast" => Some("Weather"),
        "convert" => Some("Money"),
        _ => None,
    };
    let mut strays = outcome(&["weather", "forecast", "convert", "joke"], &["weather"]);
    strays.unasked = vec!["forecast".into(), "convert".into(), "joke".into()];
    // `joke` is in no server: a server of its own.
    let strays = strays.with_servers(&task, server_of);
    assert_eq!(
        strays.unasked_elsewhere,
        Some(vec!["convert".to_owned(), "joke".to_owned()])
    );
    let mut none = outcome(&["weather"], &["weather"]).with_servers(&task, server_of);
    assert_eq!(none.unasked_elsewhere, Some(Vec::new()));

    let mut totals = Totals::default();
    totals.add(&task, &strays);
    totals.add(&task, &none);
    let figures = totals.figures(true);
    assert_eq!(figures.unasked_calls_per_task, 1.5);
    assert_eq!(figures.unasked_calls_of_other_servers_per_task, Some(1.0));

    none.unasked_elsewhere = None;
    let mut mixed = Totals::default();
    mixed.add(&task, &strays);
    mixed.add(&task, &none);
    assert_eq!(
        mixed.figures(true).unasked_calls_of_other_servers_per_task,
        None
    );
}
