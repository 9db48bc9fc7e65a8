//! The retrieve policy, activation of search hits, and `tool_choice` switching: what
//! the model is sent, request by request.

use serde_json::Value;
use toolscout_agent::BoxFuture;
use toolscout_agent::host::{CallContext, CallOutcome, ToolHost};
use toolscout_agent::{
    AgentEvent, Message, Policy, Retrieval, RunOptions, StopReason, ToolChoice, ToolScope,
};

use crate::server::{Reply, Server, call, calls, text};
use crate::{agent, assert_paired, config, render};

/// Each request as the model sees it: `tool_choice`, then the tools array by name.
fn requests_seen(server: &Server) -> String {
    server
        .requests()
        .iter()
        .zip(server.tool_arrays())
        .enumerate()
        .map(|(i, (request, tools))| {
            let choice = match &request["tool_choice"] {
                Value::Null => "auto".to_owned(),
                other => other.as_str().unwrap_or("?").to_owned(),
            };
            format!(
                "request {}: tool_choice={choice} tools=[{}]\n",
                i + 1,
                tools.join(", ")
            )
        })
        .collect()
}

/// The retrieve policy with one tool retrieved and a call required after activation:
/// the set-up of the tests of forcing, needs and answers.
fn forced(stream: bool) -> toolscout_agent::AgentConfigBuilder {
    config(Policy::Retrieve, stream)
        .retrieve_top_k(1)
        .tool_choice(ToolChoice::RequiredAfterActivation)
}

/// The tools of each `Retrieved` event the run sent, best first.
fn retrieved(rx: &mut tokio::sync::mpsc::UnboundedReceiver<AgentEvent>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let AgentEvent::Retrieved { tools, .. } = event {
            out.push(tools);
        }
    }
    out
}

fn system_prompt(server: &Server) -> String {
    server.requests()[0]["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn retrieve_activates_the_best_tools_before_the_first_request() {
    for stream in [false, true] {
        let server = Server::start(vec![
            call("c1", "get_weather", r#"{"city":"Oslo"}"#),
            text("It is sunny in Oslo, 21 °C."),
        ])
        .await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let agent = agent(&server, config(Policy::Retrieve, stream).retrieve_top_k(2));
        let report = agent
            .run(
                "What's the weather in Oslo today?",
                RunOptions::default().with_events(tx),
            )
            .await;
        assert_eq!(report.stop, StopReason::Answer);
        assert_paired(&report.messages);
        let retrieved = retrieved(&mut rx);
        assert_eq!(retrieved, [["get_weather", "weather.forecast"]]);
        // Activated tools come after the meta tools, in the order retrieval ranked them.
        insta::allow_duplicates! {
            insta::assert_snapshot!(requests_seen(&server), @r"
            request 1: tool_choice=auto tools=[discover_search, discover_describe, get_weather, weather_forecast]
            request 2: tool_choice=auto tools=[]
            ");
        }
    }
}

#[tokio::test]
async fn the_retrieve_prompt_replaces_the_browse_prompt() {
    let server = Server::start(vec![text("Hello.")]).await;
    let agent = agent(&server, config(Policy::Retrieve, false));
    agent.run("Hello?", RunOptions::default()).await;
    let prompt = system_prompt(&server);
    assert!(
        prompt.starts_with("You are a test assistant.\n\n"),
        "{prompt}"
    );
    assert!(prompt.contains(toolscout_agent::prompts::RETRIEVE.trim()));
    assert!(!prompt.contains(toolscout_agent::prompts::BROWSE.trim()));
}

#[tokio::test]
async fn a_message_that_matches_nothing_activates_nothing() {
    let server = Server::start(vec![text("4")]).await;
    let agent = agent(&server, config(Policy::Retrieve, false));
    let report = agent.run("2+2?", RunOptions::default()).await;
    assert_eq!(report.answer.as_deref(), Some("4"));
    assert_eq!(
        server.tool_arrays(),
        [["discover_search", "discover_describe"]]
    );
}

#[tokio::test]
async fn later_user_messages_search_again_and_append() {
    let server = Server::start(vec![text("Done.")]).await;
    let agent = agent(&server, config(Policy::Retrieve, false).retrieve_top_k(1));
    let conversation = vec![
        Message::user("What's the weather in Oslo?"),
        Message::Assistant {
            content: Some("Sunny.".to_owned()),
            tool_calls: Vec::new(),
        },
        Message::user("Now read the file notes.txt"),
    ];
    agent
        .run_messages(conversation, RunOptions::default())
        .await;
    // The first message's tool keeps its place; the new message's is appended.
    assert_eq!(
        server.tool_arrays(),
        [[
            "discover_search",
            "discover_describe",
            "get_weather",
            "read_file"
        ]]
    );
}

#[tokio::test]
async fn retrieval_respects_the_tool_scope_and_disabled_tools() {
    let server = Server::start(vec![text("Done.")]).await;
    let agent = agent(
        &server,
        config(Policy::Retrieve, false)
            .tool_scope(ToolScope::Only(vec!["weather.forecast".to_owned()])),
    );
    agent
        .run(
            "Weather forecast, and export everything in the legacy format",
            RunOptions::default(),
        )
        .await;
    let tools = &server.tool_arrays()[0];
    assert!(tools.contains(&"weather_forecast".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"get_weather".to_owned()), "{tools:?}");
    assert!(!tools.contains(&"legacy_export".to_owned()), "{tools:?}");
}

#[tokio::test]
async fn a_search_activates_its_best_hits() {
    for (hits, expected) in [
        (
            0usize,
            vec!["discover_search", "discover_describe", "call_tool"],
        ),
        (
            1,
            vec![
                "discover_search",
                "discover_describe",
                "call_tool",
                "get_weather",
            ],
        ),
    ] {
        let server = Server::start(vec![
            call("c1", "discover_search", r#"{"query":"weather"}"#),
            text("Found them."),
        ])
        .await;
        let agent = agent(&server, config(Policy::Browse, false).activate_hits(hits));
        let report = agent.run("Weather?", RunOptions::default()).await;
        assert_eq!(report.stop, StopReason::Answer);
        assert_eq!(server.tool_arrays()[1], expected, "activate_hits = {hits}");
    }
}

#[tokio::test]
async fn tool_choice_is_required_after_activation_then_auto() {
    let server = Server::start(vec![
        call("c1", "get_weather", r#"{"city":"Oslo"}"#),
        text("Sunny, 21 °C."),
    ])
    .await;
    let agent = agent(&server, forced(false));
    let report = agent
        .run("What's the weather in Oslo?", RunOptions::default())
        .await;
    assert_eq!(report.answer.as_deref(), Some("Sunny, 21 °C."));
    insta::assert_snapshot!(requests_seen(&server), @r#"
    request 1: tool_choice=required tools=[answer, get_weather]
    request 2: tool_choice=auto tools=[]
    "#);
}

/// A request of one thing, once a call serves it, is closed: the next request shows no
/// tools and asks for the answer, whether the call was required or not (`auto`). Not when
/// a call of that step failed: the model may make it again. Only a request that requires
/// no call and shows tools carries the guidance on calling them.
#[tokio::test]
async fn a_request_of_one_need_closes_after_its_call_unless_a_call_failed() {
    let cases: [(&str, ToolChoice, bool); 3] = [
        ("served", ToolChoice::RequiredAfterActivation, false),
        ("served, not required", ToolChoice::Auto, false),
        ("a call failed", ToolChoice::RequiredAfterActivation, true),
    ];
    let mut seen = Vec::new();
    for (case, choice, fail) in cases {
        let mut first = vec![("c1", "get_weather", r#"{"city":"Oslo"}"#)];
        if fail {
            first.push(("c2", "get_wether", r#"{"city":"Oslo"}"#));
        }
        let server = Server::start(vec![calls(&first), text("Sunny, 21 °C.")]).await;
        let agent = agent(&server, forced(false).tool_choice(choice));
        let report = agent
            .run("What's the weather in Oslo?", RunOptions::default())
            .await;
        assert_eq!(report.answer.as_deref(), Some("Sunny, 21 °C."), "{case}");
        assert_paired(&report.messages);
        // A request that requires a call, and the request with no tools, leave the
        // guidance on tools out of the system prompt; the latter ends by asking for the
        // answer.
        let requests = server.requests();
        let prompts: Vec<String> = requests
            .iter()
            .map(|r| {
                r["messages"][0]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .replace(toolscout_agent::prompts::RETRIEVE.trim(), "<guidance>")
            })
            .collect();
        let last = &requests.last().unwrap()["messages"];
        let end = last.as_array().and_then(|m| m.last()).cloned();
        let end = match end.unwrap_or_default() {
            end if end["role"] == "system" => format!("system {}", end["content"]),
            end => end["role"].as_str().unwrap_or_default().to_owned(),
        };
        seen.push(format!(
            "{case}\n{}system prompts: {prompts:?}\nlast message: {end}\n",
            requests_seen(&server),
        ));
    }
    insta::assert_snapshot!(seen.join("\n"), @r#"
    served
    request 1: tool_choice=required tools=[answer, get_weather]
    request 2: tool_choice=auto tools=[]
    system prompts: ["You are a test assistant.", "You are a test assistant."]
    last message: system "Now answer the user in plain text, from the results above; make no more calls."

    served, not required
    request 1: tool_choice=auto tools=[discover_search, discover_describe, get_weather]
    request 2: tool_choice=auto tools=[]
    system prompts: ["You are a test assistant.\n\n<guidance>", "You are a test assistant."]
    last message: system "Now answer the user in plain text, from the results above; make no more calls."

    a call failed
    request 1: tool_choice=required tools=[answer, get_weather]
    request 2: tool_choice=auto tools=[discover_search, discover_describe, answer, get_weather]
    system prompts: ["You are a test assistant.", "You are a test assistant.\n\n<guidance>"]
    last message: tool
    "#);
}

/// An endpoint that refuses a forced request (llama.cpp: 400 "Failed to parse grammar"
/// for the grammar of some schemas) gets the same request unforced, and no forcing after;
/// the run goes on instead of ending on the error.
#[tokio::test]
async fn a_refused_forced_request_is_made_again_unforced() {
    for stream in [false, true] {
        let server = Server::start(vec![
            Reply::Error(400, "Failed to parse grammar".to_owned()),
            call("c1", "get_weather", r#"{"city":"Oslo"}"#),
            text("Sunny, 21 °C."),
        ])
        .await;
        let agent = agent(&server, forced(stream));
        let report = agent
            .run("What's the weather in Oslo?", RunOptions::default())
            .await;
        assert_eq!(report.stop, StopReason::Answer, "stream {stream}");
        assert_eq!(report.answer.as_deref(), Some("Sunny, 21 °C."));
        insta::allow_duplicates! {
            insta::assert_snapshot!(requests_seen(&server), @r#"
            request 1: tool_choice=required tools=[answer, get_weather]
            request 2: tool_choice=auto tools=[discover_search, discover_describe, answer, get_weather]
            request 3: tool_choice=auto tools=[]
            "#);
        }
    }
}

/// How sure a retrieval is of a message.
type Confidence = fn(&str) -> Option<f32>;

/// The forced set-up over the test host, with each message's retrieval as sure as
/// `confidence` says.
fn sure_agent(server: &Server, confidence: Confidence) -> toolscout_agent::Agent {
    toolscout_agent::Agent::new(
        forced(false).build().unwrap(),
        toolscout_agent::ChatClient::new(&server.base_url, "test-key"),
        std::sync::Arc::new(Sure {
            inner: crate::host(),
            confidence,
        }),
    )
}

/// The test host, with each message's retrieval as sure as `confidence` says.
struct Sure {
    inner: toolscout_agent::StaticHost,
    confidence: Confidence,
}

impl ToolHost for Sure {
    fn initial_tools(&self, policy: Policy) -> Vec<toolscout_spec::ToolSpec> {
        self.inner.initial_tools(policy)
    }
    fn spec(&self, name: &str) -> Option<toolscout_spec::ToolSpec> {
        self.inner.spec(name)
    }
    fn retrieve(&self, message: &str, limit: usize) -> Retrieval {
        Retrieval {
            confidence: (self.confidence)(message),
            ..self.inner.retrieve(message, limit)
        }
    }
    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
        ctx: CallContext,
    ) -> BoxFuture<'a, CallOutcome> {
        self.inner.call(name, arguments, ctx)
    }
}

/// However sure or unsure the host is of what it retrieved, a call is required after
/// it (the model may decline with the answer tool), and the `Retrieved` event reports
/// the host's confidence.
#[tokio::test]
async fn every_retrieval_requires_a_call_and_reports_its_confidence() {
    let cases: [(Confidence, Option<f32>); 4] = [
        (|_| Some(0.0), Some(0.0)),
        (|_| Some(0.29), Some(0.29)),
        (|_| Some(0.9), Some(0.9)),
        (|_| None, None),
    ];
    for (sure, confidence) in cases {
        let server = Server::start(vec![text("Once upon a rainy day…")]).await;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let agent = sure_agent(&server, sure);
        let report = agent
            .run(
                "Tell me a story about the weather",
                RunOptions::default().with_events(tx),
            )
            .await;
        assert_eq!(report.stop, StopReason::Answer);
        // A forced request leaves out the tools that only find tools.
        assert_eq!(
            requests_seen(&server),
            "request 1: tool_choice=required tools=[answer, get_weather]\n",
            "confidence {confidence:?}"
        );
        let mut seen = Vec::new();
        while let Ok(event) = rx.try_recv() {
            if let AgentEvent::Retrieved { confidence, .. } = event {
                seen.push(confidence);
            }
        }
        assert_eq!(seen, [confidence]);
    }
}

/// An unsure retrieval requires a call too: the model declines with the answer tool
/// rather than in text.
#[tokio::test]
async fn an_unsure_retrieval_requires_a_call() {
    let server = Server::start(vec![call(
        "c1",
        "answer",
        r#"{"text":"Once upon a rainy day…"}"#,
    )])
    .await;
    let agent = sure_agent(&server, |_| Some(0.05));
    let report = agent
        .run("Tell me a story about the weather", RunOptions::default())
        .await;
    assert_eq!(report.stop, StopReason::Answer);
    assert_eq!(report.answer.as_deref(), Some("Once upon a rainy day…"));
    assert_eq!(
        requests_seen(&server),
        "request 1: tool_choice=required tools=[answer, get_weather]\n"
    );
    // What the model reads of the way to decline, on every forced request.
    let tools = server.requests()[0]["tools"].clone();
    let answer = tools
        .as_array()
        .and_then(|t| t.iter().find(|t| t["function"]["name"] == "answer"))
        .expect("the forced request offers answer");
    insta::assert_snapshot!(serde_json::to_string_pretty(answer).unwrap(), @r#"
    {
      "type": "function",
      "function": {
        "name": "answer",
        "description": "Reply to the user in text, when you are done or no tool fits.",
        "parameters": {
          "type": "object",
          "properties": {
            "text": {
              "type": "string"
            }
          },
          "required": [
            "text"
          ]
        },
        "strict": false
      }
    }
    "#);
}

#[tokio::test]
async fn only_the_last_message_decides_whether_a_call_is_required() {
    // A replayed conversation: the first question finds a tool, the last turn none.
    let server = Server::start(vec![text("You're welcome.")]).await;
    let agent = agent(&server, forced(false));
    let conversation = vec![
        Message::user("What's the weather in Oslo?"),
        Message::Assistant {
            content: Some("Sunny.".to_owned()),
            tool_calls: Vec::new(),
        },
        Message::user("Thanks, bye"),
    ];
    let report = agent
        .run_messages(conversation, RunOptions::default())
        .await;
    assert_eq!(report.stop, StopReason::Answer);
    assert!(
        requests_seen(&server).starts_with("request 1: tool_choice=auto"),
        "{}",
        requests_seen(&server)
    );
}

#[tokio::test]
async fn a_search_under_required_forces_the_next_request_too() {
    let server = Server::start(vec![
        call("c1", "discover_search", r#"{"query":"forecast"}"#),
        call("c2", "weather_forecast", r#"{"city":"Oslo","days":2}"#),
        text("Two sunny days."),
    ])
    .await;
    let agent = agent(&server, forced(false));
    let report = agent
        .run("What's the weather in Oslo?", RunOptions::default())
        .await;
    assert_eq!(report.stop, StopReason::Answer);
    assert_paired(&report.messages);
    insta::assert_snapshot!(requests_seen(&server), @r#"
    request 1: tool_choice=required tools=[answer, get_weather]
    request 2: tool_choice=required tools=[answer, get_weather, weather_forecast]
    request 3: tool_choice=auto tools=[]
    "#);
}

#[tokio::test]
async fn the_answer_tool_lets_a_forced_model_decline() {
    for stream in [false, true] {
        let server = Server::start(vec![call(
            "c1",
            "answer",
            r#"{"text":"None of my tools can book a table; call the restaurant."}"#,
        )])
        .await;
        let agent = agent(
            &server,
            config(Policy::Retrieve, stream).tool_choice(ToolChoice::RequiredAfterActivation),
        );
        let report = agent
            .run(
                "Book a table for two and check the weather",
                RunOptions::default(),
            )
            .await;
        assert_eq!(report.stop, StopReason::Answer);
        assert_eq!(report.steps, 1);
        assert_eq!(
            report.answer.as_deref(),
            Some("None of my tools can book a table; call the restaurant.")
        );
        assert_paired(&report.messages);
        assert_eq!(server.remaining(), 0);
        insta::assert_snapshot!(format!("answer_tool_stream_{stream}"), render(&report));
    }
}

#[tokio::test]
async fn an_answer_without_text_is_an_error_the_model_can_fix() {
    let server = Server::start(vec![
        call("c1", "answer", r#"{"reply":"Sunny."}"#),
        call("c2", "answer", r#"{"text":"Sunny."}"#),
    ])
    .await;
    let agent = agent(
        &server,
        config(Policy::Retrieve, false).tool_choice(ToolChoice::RequiredAfterActivation),
    );
    let report = agent.run("Weather in Oslo?", RunOptions::default()).await;
    assert_eq!(report.answer.as_deref(), Some("Sunny."));
    assert_eq!(report.steps, 2);
    let first_result = report.messages.iter().find_map(|m| match m {
        Message::Tool { content, .. } => Some(content.clone()),
        _ => None,
    });
    insta::assert_snapshot!(first_result.unwrap_or_default(), @r#"{"ok":false,"error":{"kind":"invalid_arguments","message":"answer needs 'text': the answer as a string. Usage: answer(text=\"…\")"}}"#);
}

#[tokio::test]
async fn forcing_stops_after_a_few_requests() {
    let searches: Vec<_> = ["weather", "file", "web", "agent", "forecast"]
        .iter()
        .enumerate()
        .map(|(i, q)| {
            call(
                &format!("c{i}"),
                "discover_search",
                &format!(r#"{{"query":"{q}"}}"#),
            )
        })
        .chain([text("Gave up.")])
        .collect();
    let server = Server::start(searches).await;
    let agent = agent(
        &server,
        config(Policy::Browse, false).tool_choice(ToolChoice::RequiredAfterActivation),
    );
    let report = agent.run("Do something.", RunOptions::default()).await;
    assert_eq!(report.stop, StopReason::Answer);
    let required = server
        .requests()
        .iter()
        .filter(|r| r["tool_choice"] == "required")
        .count();
    assert_eq!(required, 3, "{}", requests_seen(&server));
}

#[tokio::test]
async fn without_activations_nothing_is_forced() {
    let server = Server::start(vec![text("4")]).await;
    let agent = agent(
        &server,
        config(Policy::Retrieve, false).tool_choice(ToolChoice::RequiredAfterActivation),
    );
    let report = agent.run("2+2?", RunOptions::default()).await;
    assert_eq!(report.stop, StopReason::Answer);
    assert!(
        server.requests().iter().all(|r| r["tool_choice"].is_null()),
        "{}",
        requests_seen(&server)
    );
}

/// The defaults are the measured best (see `ToolChoice` and `DEFAULT_RETRIEVE_TOP_K`):
/// retrieve 3 tools, then require a call, with the answer tool to decline.
#[tokio::test]
async fn the_default_config_retrieves_three_tools_and_requires_a_call() {
    let server = Server::start(vec![
        call("c1", "get_weather", r#"{"city":"Oslo"}"#),
        text("Sunny."),
    ])
    .await;
    let config = toolscout_agent::AgentConfig::builder("assistant", "scripted-model")
        .stream(false)
        .build()
        .unwrap();
    assert_eq!(config.options().policy, Policy::Retrieve);
    assert_eq!(config.options().retrieve_top_k, 3);
    assert_eq!(
        config.options().tool_choice,
        ToolChoice::RequiredAfterActivation
    );
    assert!(config.options().ground_arguments);
    let agent = toolscout_agent::Agent::new(
        config,
        toolscout_agent::ChatClient::new(&server.base_url, "test-key"),
        std::sync::Arc::new(crate::host()),
    );
    let report = agent
        .run("What's the weather in Oslo today?", RunOptions::default())
        .await;
    assert_eq!(report.stop, StopReason::Answer);
    insta::assert_snapshot!(requests_seen(&server), @r#"
    request 1: tool_choice=required tools=[answer, get_weather, weather_forecast]
    request 2: tool_choice=auto tools=[]
    "#);
}

#[tokio::test]
async fn call_tool_is_not_offered_under_retrieve_but_still_understood() {
    let server = Server::start(vec![
        call(
            "c1",
            "call_tool",
            r#"{"name":"weather.forecast","arguments":{"city":"Oslo","days":2}}"#,
        ),
        text("Two sunny days."),
    ])
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let agent = agent(&server, config(Policy::Retrieve, false).retrieve_top_k(1));
    let report = agent
        .run(
            "What's the weather in Oslo?",
            RunOptions::default().with_events(tx),
        )
        .await;
    assert_eq!(report.answer.as_deref(), Some("Two sunny days."));
    assert!(!server.tool_arrays()[0].contains(&"call_tool".to_owned()));
    let mut ran = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let AgentEvent::ToolCallFinished { tool, ok, .. } = event {
            ran.push((tool, ok));
        }
    }
    assert_eq!(
        ran,
        [("weather.forecast".to_owned(), true)],
        "{:?}",
        report.messages
    );
}

/// A host of tools for three unrelated needs, and a few others.
fn needs_host() -> toolscout_agent::StaticHost {
    let tool = |name: &str, summary: &str| {
        toolscout_spec::ToolSpec::builder(name, summary)
            .parameters(
                serde_json::json!({"type": "object", "properties": {"what": {"type": "string"}}}),
            )
            .build()
            .unwrap()
    };
    let ok = |_: Value| async move { Ok(serde_json::json!("done")) };
    toolscout_agent::StaticHost::default()
        .tool(
            tool(
                "get_planting_instructions",
                "Planting instructions for a crop in a soil",
            ),
            ok,
        )
        .tool(
            tool(
                "get_timber_resources",
                "Timber resources available in an area",
            ),
            ok,
        )
        .tool(
            tool("get_crypto_price", "The current price of a cryptocurrency"),
            ok,
        )
        .tool(tool("get_soil_report", "A report on a soil sample"), ok)
        .tool(
            tool("convert_currency", "Convert an amount between currencies"),
            ok,
        )
}

/// A request for several things (#41 item 1): each need is searched, so each has a tool
/// in the array of the first request; searched as one text, the best tool of the whole
/// serves one need only.
#[tokio::test]
async fn a_request_of_several_needs_retrieves_a_tool_for_each() {
    let message = "How do I plant tomatoes in loam soil? Also check the timber resources of the area, \
                   and then tell me the current price of Bitcoin.";
    let mut seen = String::new();
    for split in [true, false] {
        let server = Server::start(vec![text("Done.")]).await;
        let agent = toolscout_agent::Agent::new(
            config(Policy::Retrieve, false)
                .retrieve_top_k(1)
                .split_needs(split)
                .build()
                .unwrap(),
            toolscout_agent::ChatClient::new(&server.base_url, "test-key"),
            std::sync::Arc::new(needs_host()),
        );
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        agent
            .run(message, RunOptions::default().with_events(tx))
            .await;
        let mut needs = Vec::new();
        while let Ok(event) = rx.try_recv() {
            if let AgentEvent::Retrieved { needs: n, .. } = event {
                needs = n;
            }
        }
        seen.push_str(&format!(
            "split_needs={split}: needs {needs:?}\n{}",
            requests_seen(&server)
        ));
    }
    insta::assert_snapshot!(seen, @r#"
    split_needs=true: needs ["How do I plant tomatoes in loam soil?", "check the timber resources of the area", "tell me the current price of Bitcoin."]
    request 1: tool_choice=auto tools=[discover_search, discover_describe, get_timber_resources, get_planting_instructions, get_crypto_price]
    split_needs=false: needs []
    request 1: tool_choice=auto tools=[discover_search, discover_describe, get_timber_resources]
    "#);
}

/// A request of two needs, the model calling one tool a turn (#41): once its first call
/// has served one need, the need left is put to it at once, in a forced request that
/// shows only that need's tools (and `answer`), and its call for that need follows;
/// without `follow_needs` it answers after the first call.
#[tokio::test]
async fn an_answer_that_leaves_a_need_unserved_is_followed_up() {
    let message =
        "Check the timber resources of the area, and then tell me the current price of Bitcoin.";
    let mut seen = String::new();
    for follow in [true, false] {
        let script = if follow {
            vec![
                call("c1", "get_timber_resources", r#"{"what":"the area"}"#),
                call("c2", "get_crypto_price", r#"{"what":"Bitcoin"}"#),
                text("Oak and pine; Bitcoin is at 1 dollar."),
            ]
        } else {
            vec![
                call("c1", "get_timber_resources", r#"{"what":"the area"}"#),
                text("The area has oak and pine."),
            ]
        };
        let server = Server::start(script).await;
        let agent = toolscout_agent::Agent::new(
            forced(false).follow_needs(follow).build().unwrap(),
            toolscout_agent::ChatClient::new(&server.base_url, "test-key"),
            std::sync::Arc::new(needs_host()),
        );
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let report = agent
            .run(message, RunOptions::default().with_events(tx))
            .await;
        assert_eq!(report.stop, StopReason::Answer);
        assert_paired(&report.messages);
        let mut followed = Vec::new();
        while let Ok(event) = rx.try_recv() {
            if let AgentEvent::NeedFollowedUp { need, tools, .. } = event {
                followed.push(format!("{need} -> {tools:?}"));
            }
        }
        let requests = server.requests();
        let last = requests.last().unwrap()["messages"].as_array().unwrap();
        let said: Vec<String> = last[1..]
            .iter()
            .map(|m| {
                let content = m["content"].as_str().unwrap_or("");
                let calls: Vec<&str> = m["tool_calls"]
                    .as_array()
                    .map(|c| {
                        c.iter()
                            .filter_map(|c| c["function"]["name"].as_str())
                            .collect()
                    })
                    .unwrap_or_default();
                format!(
                    "  {}: {content}{}",
                    m["role"].as_str().unwrap_or("?"),
                    if calls.is_empty() {
                        String::new()
                    } else {
                        format!(" calls {calls:?}")
                    }
                )
            })
            .collect();
        seen.push_str(&format!(
            "follow_needs={follow}: answer {:?}, followed up {followed:?}\n{}last request's messages:\n{}\n",
            report.answer.unwrap_or_default(),
            requests_seen(&server),
            said.join("\n")
        ));
    }
    insta::assert_snapshot!(seen, @r#"
follow_needs=true: answer "Oak and pine; Bitcoin is at 1 dollar.", followed up ["tell me the current price of Bitcoin. -> [\"get_crypto_price\"]"]
request 1: tool_choice=required tools=[answer, get_timber_resources, get_crypto_price]
request 2: tool_choice=required tools=[answer, get_crypto_price]
request 3: tool_choice=auto tools=[]
last request's messages:
  user: Check the timber resources of the area, and then tell me the current price of Bitcoin.
  assistant:  calls ["get_timber_resources"]
  tool: {"ok":true,"value":"done"}
  system: The request also asks: "tell me the current price of Bitcoin". If a tool in your list does that and you have not called it yet, call it now with the values from the request. If it is done already, or no tool fits, give the user your final answer.
  assistant:  calls ["get_crypto_price"]
  tool: {"ok":true,"value":"done"}
  system: Now answer the user in plain text, from the results above; make no more calls.
follow_needs=false: answer "The area has oak and pine.", followed up []
request 1: tool_choice=required tools=[answer, get_timber_resources, get_crypto_price]
request 2: tool_choice=auto tools=[discover_search, discover_describe, answer, get_timber_resources, get_crypto_price]
last request's messages:
  user: Check the timber resources of the area, and then tell me the current price of Bitcoin.
  assistant:  calls ["get_timber_resources"]
  tool: {"ok":true,"value":"done"}
"#);
}

/// Runs `message` over `host` against `server` (one tool retrieved for the whole
/// message, a call required after activation, arguments checked when `ground`); the run
/// must end in an answer with its calls paired. What it shows: the needs followed up, as
/// "need -> tools", each call and whether it ran, and the requests.
async fn run_followed(
    server: &Server,
    host: impl ToolHost + 'static,
    ground: bool,
    message: &str,
) -> String {
    let agent = toolscout_agent::Agent::new(
        forced(false).ground_arguments(ground).build().unwrap(),
        toolscout_agent::ChatClient::new(&server.base_url, "test-key"),
        std::sync::Arc::new(host),
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let report = agent
        .run(message, RunOptions::default().with_events(tx))
        .await;
    assert_eq!(report.stop, StopReason::Answer);
    assert_paired(&report.messages);
    let (mut followed, mut ran) = (Vec::new(), Vec::new());
    while let Ok(event) = rx.try_recv() {
        match event {
            AgentEvent::NeedFollowedUp { need, tools, .. } => {
                followed.push(format!("{need} -> {tools:?}"));
            }
            AgentEvent::ToolCallFinished { tool, ok, .. } => {
                ran.push(format!("{tool} {}", if ok { "ran" } else { "failed" }));
            }
            _ => {}
        }
    }
    format!(
        "followed up {followed:#?}\nran {ran:?}\n{}",
        requests_seen(server)
    )
}

/// The model calls the price tool, then the timber tool, then answers.
fn price_then_timber() -> Vec<Reply> {
    vec![
        call("c1", "get_crypto_price", r#"{"what":"Bitcoin"}"#),
        call("c2", "get_timber_resources", r#"{"what":"the area"}"#),
        text("Bitcoin is at 1 dollar; the area has oak."),
    ]
}

/// A tool found for two needs: its call serves the need it ranks highest for, and the
/// other is followed up only with a tool that has not run.
#[tokio::test]
async fn a_call_serves_one_need_and_a_tool_that_ran_is_not_offered_again() {
    let server = Server::start(price_then_timber()).await;
    let seen = run_followed(
        &server,
        needs_host(),
        false,
        "Tell me the current price of Bitcoin. Then check the timber resources available in the area, at that price.",
    )
    .await;
    insta::assert_snapshot!(
        seen,
        @r#"
followed up [
    "check the timber resources available in the area, at that price. -> [\"get_timber_resources\"]",
]
ran ["get_crypto_price ran", "get_timber_resources ran"]
request 1: tool_choice=required tools=[answer, get_timber_resources, get_crypto_price]
request 2: tool_choice=required tools=[answer, get_timber_resources]
request 3: tool_choice=auto tools=[]
"#
    );
}

/// A need that restates one already served ("the price of Bitcoin. Please retrieve the
/// current cryptocurrency price of Bitcoin"): its best tool has run, so it is not
/// followed up with its next tool, a near-twin the request does not ask for.
#[tokio::test]
async fn a_need_whose_best_tool_ran_is_served_by_it() {
    let server = Server::start(price_then_timber()).await;
    let stats = toolscout_spec::ToolSpec::builder(
        "get_crypto_market_data",
        "Market data of a cryptocurrency: its current price history and volume",
    )
    .parameters(serde_json::json!({"type": "object", "properties": {"what": {"type": "string"}}}))
    .build()
    .unwrap();
    let host = needs_host().tool(
        stats,
        |_: Value| async move { Ok(serde_json::json!("done")) },
    );
    let seen = run_followed(
        &server,
        host,
        false,
        "Tell me the current price of Bitcoin. Please retrieve the current cryptocurrency price of Bitcoin. Also check the timber resources.",
    )
    .await;
    insta::assert_snapshot!(
        seen,
        @r#"
followed up [
    "check the timber resources. -> [\"get_timber_resources\"]",
]
ran ["get_crypto_price ran", "get_timber_resources ran"]
request 1: tool_choice=required tools=[answer, get_crypto_price, get_timber_resources]
request 2: tool_choice=required tools=[answer, get_timber_resources]
request 3: tool_choice=auto tools=[]
"#
    );
}

/// Timber (any `what`), planting instructions (a `crop`) and a soil report (a
/// `sample_id`), each argument required: a made-up crop or sample is refused.
fn refusing_host() -> toolscout_agent::StaticHost {
    let tool = |name: &str, summary: &str, param: &str| {
        toolscout_spec::ToolSpec::builder(name, summary)
            .parameters(serde_json::json!({
                "type": "object",
                "properties": {param: {"type": "string"}},
                "required": [param]
            }))
            .build()
            .unwrap()
    };
    let ok = |_: Value| async move { Ok(serde_json::json!("done")) };
    toolscout_agent::StaticHost::default()
        .tool(
            tool(
                "get_timber_resources",
                "Timber resources available in an area",
                "what",
            ),
            ok,
        )
        .tool(
            tool(
                "get_planting_instructions",
                "Planting instructions for a crop in a soil",
                "crop",
            ),
            ok,
        )
        .tool(
            tool("get_soil_report", "A report on a soil sample", "sample_id"),
            ok,
        )
}

/// A need is followed up with its best tool; when that call is refused for a value the
/// request does not give (the tool did not fit and the model made the value up), the
/// need is asked for again at once with its next tool (not in the first request's array:
/// it joins then), and that one runs.
#[tokio::test]
async fn a_need_is_asked_for_with_its_best_tool_then_its_next_if_refused() {
    let host = refusing_host();
    let server = Server::start(vec![
        call("c1", "get_timber_resources", r#"{"what":"the area"}"#),
        call("c2", "get_planting_instructions", r#"{"crop":"potatoes"}"#),
        call("c3", "get_soil_report", r#"{"sample_id":"this soil"}"#),
        text("Oak; the soil is loam."),
    ])
    .await;
    let seen = run_followed(
        &server,
        host,
        true,
        "Check the timber resources of the area, and then tell me how to plant tomatoes in this soil.",
    )
    .await;
    insta::assert_snapshot!(
        seen,
        @r#"
followed up [
    "tell me how to plant tomatoes in this soil. -> [\"get_planting_instructions\"]",
    "tell me how to plant tomatoes in this soil. -> [\"get_soil_report\"]",
]
ran ["get_timber_resources ran", "get_planting_instructions failed", "get_soil_report ran"]
request 1: tool_choice=required tools=[answer, get_timber_resources, get_planting_instructions]
request 2: tool_choice=required tools=[answer, get_planting_instructions]
request 3: tool_choice=required tools=[answer, get_soil_report]
request 4: tool_choice=auto tools=[]
"#
    );
}

/// Once the last need is served, the request that closes the run shows no tools; not
/// when a call of that step failed, which the model may make again.
#[tokio::test]
async fn the_request_after_the_last_need_shows_no_tools_unless_a_call_failed() {
    let message =
        "Check the timber resources of the area, and then tell me the current price of Bitcoin.";
    let mut seen = Vec::new();
    for fail in [false, true] {
        let mut second = vec![("c2", "get_crypto_price", r#"{"what":"Bitcoin"}"#)];
        if fail {
            second.push(("c3", "get_bitcoin_prize", r#"{"what":"Bitcoin"}"#));
        }
        let server = Server::start(vec![
            call("c1", "get_timber_resources", r#"{"what":"the area"}"#),
            calls(&second),
            text("Oak; Bitcoin is at 1 dollar."),
        ])
        .await;
        let run = run_followed(&server, needs_host(), false, message).await;
        seen.push(format!("a call failed: {fail}\n{run}"));
    }
    insta::assert_snapshot!(seen.join("\n"), @r#"
a call failed: false
followed up [
    "tell me the current price of Bitcoin. -> [\"get_crypto_price\"]",
]
ran ["get_timber_resources ran", "get_crypto_price ran"]
request 1: tool_choice=required tools=[answer, get_timber_resources, get_crypto_price]
request 2: tool_choice=required tools=[answer, get_crypto_price]
request 3: tool_choice=auto tools=[]

a call failed: true
followed up [
    "tell me the current price of Bitcoin. -> [\"get_crypto_price\"]",
]
ran ["get_timber_resources ran", "get_crypto_price ran", "get_bitcoin_prize failed"]
request 1: tool_choice=required tools=[answer, get_timber_resources, get_crypto_price]
request 2: tool_choice=required tools=[answer, get_crypto_price]
request 3: tool_choice=auto tools=[discover_search, discover_describe, answer, get_timber_resources, get_crypto_price]
"#);
}

/// A call of the first request refused for a value the request does not give: the need
/// its tool ranks highest for is asked for at once with its next tool, and the run goes
/// on to the other needs (before, the model asked for the value and the run ended with
/// no need served).
#[tokio::test]
async fn a_refused_first_call_brings_its_need_next_tool() {
    let server = Server::start(vec![
        call("c1", "get_planting_instructions", r#"{"crop":"potatoes"}"#),
        call("c2", "get_soil_report", r#"{"sample_id":"this soil"}"#),
        call("c3", "get_timber_resources", r#"{"what":"the area"}"#),
        text("The soil is loam; oak."),
    ])
    .await;
    let seen = run_followed(
        &server,
        refusing_host(),
        true,
        "Tell me how to plant tomatoes in this soil, and then check the timber resources of the area.",
    )
    .await;
    insta::assert_snapshot!(seen, @r#"
followed up [
    "Tell me how to plant tomatoes in this soil -> [\"get_soil_report\"]",
    "check the timber resources of the area. -> [\"get_timber_resources\"]",
]
ran ["get_planting_instructions failed", "get_soil_report ran", "get_timber_resources ran"]
request 1: tool_choice=required tools=[answer, get_timber_resources, get_planting_instructions]
request 2: tool_choice=required tools=[answer, get_soil_report]
request 3: tool_choice=required tools=[answer, get_timber_resources]
request 4: tool_choice=auto tools=[]
"#);
}

/// A need followed up that the model declines with the answer tool ("no tool fits"):
/// the run goes on to the next need, as after a declining text, rather than ending on
/// the decline.
#[tokio::test]
async fn a_need_declined_with_the_answer_tool_moves_on_to_the_next() {
    let server = Server::start(vec![
        call("c1", "get_timber_resources", r#"{"what":"the area"}"#),
        call("c2", "answer", r#"{"text":"No tool gives prices."}"#),
        call("c3", "get_soil_report", r#"{"what":"a soil sample"}"#),
        text("Oak; the soil is loam."),
    ])
    .await;
    let seen = run_followed(
        &server,
        needs_host(),
        false,
        "Check the timber resources of the area, then tell me the current price of Bitcoin, and finally give me a report on a soil sample.",
    )
    .await;
    insta::assert_snapshot!(seen, @r#"
followed up [
    "tell me the current price of Bitcoin -> [\"get_crypto_price\"]",
    "give me a report on a soil sample. -> [\"get_soil_report\"]",
]
ran ["get_timber_resources ran", "answer ran", "get_soil_report ran"]
request 1: tool_choice=required tools=[answer, get_timber_resources, get_crypto_price, get_soil_report]
request 2: tool_choice=required tools=[answer, get_crypto_price]
request 3: tool_choice=required tools=[answer, get_soil_report]
request 4: tool_choice=auto tools=[]
"#);
}

/// A request of several sure needs that the first request declines with the answer tool
/// and no call (a small model writes a made-up account of the work): each need is put to
/// the model with its tool, as after a declined need. A request of one need declined so
/// ends on the answer: that is how a request no tool serves is declined.
#[tokio::test]
async fn a_request_of_several_needs_declined_at_once_is_put_need_by_need() {
    let server = Server::start(vec![
        call(
            "c1",
            "answer",
            r#"{"text":"I have checked the timber and the soil."}"#,
        ),
        call("c2", "get_timber_resources", r#"{"what":"the area"}"#),
        call("c3", "get_soil_report", r#"{"what":"a soil sample"}"#),
        text("Oak; the soil is loam."),
    ])
    .await;
    let several = run_followed(
        &server,
        needs_host(),
        false,
        "Check the timber resources of the area, and then give me a report on a soil sample.",
    )
    .await;
    let server = Server::start(vec![call(
        "c1",
        "answer",
        r#"{"text":"I have a report on the soil."}"#,
    )])
    .await;
    let one = run_followed(
        &server,
        needs_host(),
        false,
        "Give me a report on a soil sample.",
    )
    .await;
    insta::assert_snapshot!(format!("{several}\n{one}"), @r#"
followed up [
    "Check the timber resources of the area -> [\"get_timber_resources\"]",
    "give me a report on a soil sample. -> [\"get_soil_report\"]",
]
ran ["answer ran", "get_timber_resources ran", "get_soil_report ran"]
request 1: tool_choice=required tools=[answer, get_timber_resources, get_soil_report]
request 2: tool_choice=required tools=[answer, get_timber_resources]
request 3: tool_choice=required tools=[answer, get_soil_report]
request 4: tool_choice=auto tools=[]

followed up []
ran ["answer ran"]
request 1: tool_choice=required tools=[answer, get_soil_report]
"#);
}

/// A need put to the model is said once: a later request leaves out the needs put
/// before the last (answered since, by the calls that follow each), while the
/// transcript keeps every one.
#[tokio::test]
async fn a_request_leaves_out_the_needs_put_before_the_last() {
    let server = Server::start(vec![
        call("c1", "get_timber_resources", r#"{"what":"the area"}"#),
        call("c2", "get_crypto_price", r#"{"what":"Bitcoin"}"#),
        call("c3", "get_soil_report", r#"{"what":"a soil sample"}"#),
        text("Oak; 1 dollar; loam."),
    ])
    .await;
    let agent = toolscout_agent::Agent::new(
        forced(false).build().unwrap(),
        toolscout_agent::ChatClient::new(&server.base_url, "test-key"),
        std::sync::Arc::new(needs_host()),
    );
    let report = agent
        .run(
            "Check the timber resources of the area, then tell me the current price of Bitcoin, \
             and finally give me a report on a soil sample.",
            RunOptions::default(),
        )
        .await;
    assert_eq!(report.stop, StopReason::Answer);
    assert_paired(&report.messages);
    let system = |messages: &[Value]| -> Vec<String> {
        messages
            .iter()
            .filter(|m| m["role"] == "system")
            .filter_map(|m| m["content"].as_str())
            .filter(|c| c.starts_with("The request also asks"))
            .map(|c| c.split('.').next().unwrap_or(c).to_owned())
            .collect()
    };
    let mut seen: Vec<String> = server
        .requests()
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let messages = r["messages"].as_array().unwrap();
            format!(
                "request {}: {} messages, needs said {:?}",
                i + 1,
                messages.len(),
                system(messages)
            )
        })
        .collect();
    let transcript: Vec<Value> = report
        .messages
        .iter()
        .map(|m| serde_json::to_value(m).unwrap())
        .collect();
    seen.push(format!("transcript: needs said {:?}", system(&transcript)));
    insta::assert_snapshot!(seen.join("\n"), @r#"
request 1: 2 messages, needs said []
request 2: 5 messages, needs said ["The request also asks: \"tell me the current price of Bitcoin\""]
request 3: 7 messages, needs said ["The request also asks: \"give me a report on a soil sample\""]
request 4: 10 messages, needs said ["The request also asks: \"give me a report on a soil sample\""]
transcript: needs said ["The request also asks: \"tell me the current price of Bitcoin\"", "The request also asks: \"give me a report on a soil sample\""]
"#);
}

/// The messages of request `n` (from 1) as the model reads them: role, then content or
/// the calls made.
fn conversation(server: &Server, n: usize) -> String {
    let request = &server.requests()[n - 1];
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    messages
        .iter()
        .map(|m| {
            let role = m["role"].as_str().unwrap_or("?");
            let calls: Vec<String> = m["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    format!(
                        "{} {}",
                        c["function"]["name"].as_str().unwrap_or("?"),
                        c["function"]["arguments"].as_str().unwrap_or("?")
                    )
                })
                .collect();
            match m["content"].as_str() {
                _ if role == "system" && m == &messages[0] => {
                    "system: (the system prompt)\n".to_owned()
                }
                Some(content) if calls.is_empty() => format!("{role}: {content}\n"),
                _ => format!("{role}: calls {}\n", calls.join("; ")),
            }
        })
        .collect()
}

/// An answer that reports work no call did ("I found…"), given before any call to a
/// request that required one, is made up: the model is told that no tool has run and
/// required once more to call one (here it then does). A second such answer is final,
/// and so is a plain decline at once.
#[tokio::test]
async fn a_made_up_account_of_work_is_questioned_once() {
    let run = |replies: Vec<Reply>| async move {
        let server = Server::start(replies).await;
        let agent = toolscout_agent::Agent::new(
            forced(false).build().unwrap(),
            toolscout_agent::ChatClient::new(&server.base_url, "test-key"),
            std::sync::Arc::new(needs_host()),
        );
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let report = agent
            .run(
                "Give me a report on a soil sample.",
                RunOptions::default().with_events(tx),
            )
            .await;
        assert_eq!(report.stop, StopReason::Answer);
        assert_paired(&report.messages);
        assert_eq!(server.remaining(), 0);
        let mut questioned = Vec::new();
        while let Ok(event) = rx.try_recv() {
            if let AgentEvent::AnswerQuestioned { answer, .. } = event {
                questioned.push(answer);
            }
        }
        (server, report, questioned)
    };
    let claim = |id: &str| {
        call(
            id,
            "answer",
            r#"{"text":"I found a soil report: the sample is loam."}"#,
        )
    };
    let (server, report, questioned) = run(vec![
        claim("c1"),
        call("c2", "get_soil_report", r#"{"what":"a soil sample"}"#),
        text("The sample is loam."),
    ])
    .await;
    assert_eq!(report.answer.as_deref(), Some("The sample is loam."));
    assert_eq!(questioned, ["I found a soil report: the sample is loam."]);
    insta::assert_snapshot!(
        format!("{}\n{}", requests_seen(&server), conversation(&server, 2)),
        @r#"
    request 1: tool_choice=required tools=[answer, get_soil_report]
    request 2: tool_choice=required tools=[answer, get_soil_report]
    request 3: tool_choice=auto tools=[]

    system: (the system prompt)
    user: Give me a report on a soil sample.
    assistant: calls answer {"text":"I found a soil report: the sample is loam."}
    tool: {"ok":true,"value":"delivered"}
    assistant: I found a soil report: the sample is loam.
    system: No tool has run yet, so nothing has been found or done: call `get_soil_report` now with the values from the request, or, if it does not do what the user asked, say so.
    "#
    );

    // The tool is named as the model sees it in the array: `weather.forecast` is
    // `weather_forecast` there.
    let server = Server::start(vec![
        call(
            "c1",
            "answer",
            r#"{"text":"I have checked the forecast: rain in Paris."}"#,
        ),
        call("c2", "weather_forecast", r#"{"city":"Paris"}"#),
        text("Rain in Paris."),
    ])
    .await;
    let report = agent(&server, forced(false))
        .run(
            "What is the weather forecast for Paris?",
            RunOptions::default(),
        )
        .await;
    assert_eq!(report.answer.as_deref(), Some("Rain in Paris."));
    let said = conversation(&server, 2);
    assert!(said.contains("call `weather_forecast` now"), "{said}");

    let (server, report, questioned) = run(vec![claim("c1"), claim("c2")]).await;
    assert_eq!(
        report.answer.as_deref(),
        Some("I found a soil report: the sample is loam.")
    );
    assert_eq!(questioned.len(), 1);
    assert_eq!(server.requests().len(), 2);

    let (server, report, questioned) = run(vec![call(
        "c1",
        "answer",
        r#"{"text":"None of my tools reports on soil."}"#,
    )])
    .await;
    assert_eq!(
        report.answer.as_deref(),
        Some("None of my tools reports on soil.")
    );
    assert!(questioned.is_empty());
    assert_eq!(server.requests().len(), 1);
}

/// A host of two servers whose searches are scripted: each text finds one tool at a set
/// confidence, across every server or within the ones asked for.
struct TwoServers;

impl TwoServers {
    /// (text, tool found across every server, its confidence, tool found within the
    /// `specs` server, its confidence).
    const SEARCHES: [(&'static str, &'static str, f32, &'static str, f32); 4] = [
        (
            "Check two services' API specs. For each create call, how many fields? How many inputs do the repo routes take?",
            "get_api_overview",
            0.55,
            "get_api_overview",
            0.55,
        ),
        (
            "Check two services' API specs.",
            "get_api_overview",
            0.6,
            "get_api_overview",
            0.6,
        ),
        (
            "For each create call, how many fields?",
            "think",
            0.3,
            "get_api_operation",
            0.28,
        ),
        (
            "How many inputs do the repo routes take?",
            "maps_directions",
            0.45,
            "get_api_operation",
            0.3,
        ),
    ];

    fn search(message: &str, within: bool) -> Retrieval {
        let found = Self::SEARCHES.iter().find(|s| s.0 == message);
        let Some(&(_, any, c, specs, w)) = found else {
            return Retrieval::default();
        };
        let (tool, confidence) = if within { (specs, w) } else { (any, c) };
        Retrieval {
            tools: vec![tool.to_owned()],
            confidence: Some(confidence),
        }
    }
}

impl ToolHost for TwoServers {
    fn initial_tools(&self, _: Policy) -> Vec<toolscout_spec::ToolSpec> {
        Vec::new()
    }
    fn spec(&self, _: &str) -> Option<toolscout_spec::ToolSpec> {
        None
    }
    fn retrieve(&self, message: &str, _: usize) -> Retrieval {
        Self::search(message, false)
    }
    fn server_of(&self, tool: &str) -> Option<String> {
        let server = match tool {
            "get_api_overview" | "get_api_operation" => "specs",
            "think" => "biomed",
            _ => "maps",
        };
        Some(server.to_owned())
    }
    fn retrieve_within(&self, message: &str, servers: &[String], _: usize) -> Retrieval {
        assert_eq!(servers, ["specs"], "searched within the message's servers");
        Self::search(message, true)
    }
    fn call<'a>(&'a self, _: &'a str, _: Value, _: CallContext) -> BoxFuture<'a, CallOutcome> {
        Box::pin(async { CallOutcome::ok(Value::Null) })
    }
}

/// A need whose own search leads off the server of the whole message's best tool,
/// unsure, is searched within it; a need sure of its tool elsewhere keeps it (a task
/// may span servers).
#[test]
fn an_unsure_need_off_the_messages_servers_is_searched_within_them() {
    let config = config(Policy::Retrieve, false).build().unwrap();
    let message = TwoServers::SEARCHES[0].0;
    let (found, needs) = toolscout_agent::retrieve_for(&TwoServers, &config, message);
    assert_eq!(needs.len(), 3, "{needs:?}");
    assert_eq!(
        found.tools,
        ["get_api_overview", "get_api_operation", "maps_directions"],
        "the second need's tool found within the specs server, the third's sure elsewhere"
    );
}
