//! A server's tools offered together (#66 item 2): the retrieved tool's server's other
//! tools join the first array compactly (name, summary, parameters' names and types); a
//! call of one is checked against its full schema and offers it whole from then on.

use std::sync::Arc;

use serde_json::json;
use toolscout_agent::{Agent, AgentEvent, ChatClient, Policy, RunOptions, ToolboxHost};
use toolscout_catalog::{BundlePut, Catalog, CatalogOptions, ToolPut};
use toolscout_discover::Toolbox;
use toolscout_invoke::Invoker;
use toolscout_search::SearchIndex;
use toolscout_spec::ToolSpec;

use crate::config;
use crate::server::{Reply, Server, call, text};

/// A catalog of two servers: a slide-deck server of six tools, and a weather server.
fn servers_toolbox(dir: &std::path::Path) -> Toolbox {
    let catalog = Catalog::open_with(
        dir,
        CatalogOptions::default()
            .with_natives(&["clock"])
            .with_builtins(false),
    )
    .unwrap();
    let put = |bundle: uuid::Uuid, name: &str, summary: &str, parameters: serde_json::Value| {
        let spec = ToolSpec::builder(name, summary)
            .description(format!(
                "{summary}. A long description the compact offer leaves out."
            ))
            .parameters(parameters)
            .build()
            .unwrap();
        catalog
            .put_tool(
                bundle,
                &name.replace('_', "-"),
                "1",
                &ToolPut::native(spec, "clock"),
            )
            .unwrap();
    };
    let slides = uuid::Uuid::now_v7();
    catalog
        .put_bundle(
            slides,
            &BundlePut::new("slides").with_description("Slide decks: make, fill and save them"),
        )
        .unwrap();
    let path = json!({"type": "object", "properties": {"path": {
        "type": "string", "pattern": "^/.+\\.pptx$",
        "description": "Where the deck is, an absolute path ending in .pptx"}},
        "required": ["path"]});
    put(
        slides,
        "create_presentation",
        "Create a new, empty slide deck",
        json!({"type": "object", "properties": {"title": {"type": "string", "description": "The deck's title"}}}),
    );
    put(
        slides,
        "add_slide",
        "Add a slide with a title and text to a deck",
        json!({"type": "object", "properties": {
            "title": {"type": "string", "description": "The slide's title"},
            "text": {"type": "string", "description": "The slide's text"},
            "layout": {"type": "string", "enum": ["title", "bullets", "blank"]}},
            "required": ["title"]}),
    );
    put(slides, "save_presentation", "Save a deck to a file", path);
    put(
        slides,
        "list_templates",
        "List the templates a deck can use",
        json!({"type": "object", "properties": {}}),
    );
    put(
        slides,
        "add_image",
        "Add a picture to a slide",
        json!({"type": "object", "properties": {
            "slide": {"type": "integer", "description": "The slide's number, from 1"},
            "image": {"type": "string", "pattern": "^/.+\\.png$", "description": "An absolute path to a PNG file"}},
            "required": ["slide", "image"]}),
    );
    put(
        slides,
        "delete_slide",
        "Delete a slide from a deck",
        json!({"type": "object", "properties": {"slide": {"type": "integer"}}, "required": ["slide"]}),
    );
    let weather = uuid::Uuid::now_v7();
    catalog
        .put_bundle(weather, &BundlePut::new("weather"))
        .unwrap();
    put(
        weather,
        "get_forecast",
        "Weather forecast for a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    );
    let mut invoker = Invoker::default();
    invoker.register_dyn(Arc::new(Stub)).unwrap();
    Toolbox::new(catalog, SearchIndex::in_memory().unwrap(), invoker).unwrap()
}

/// The native function behind every tool here: a success, whatever the arguments.
struct Stub;

impl toolscout_invoke::DynTool for Stub {
    fn name(&self) -> &str {
        "clock"
    }

    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        ToolSpec::builder("clock", "Answer any call with a success").build()
    }

    fn call_json(
        &self,
        _args: serde_json::Value,
    ) -> toolscout_invoke::BoxFuture<'_, Result<serde_json::Value, toolscout_invoke::ToolError>>
    {
        Box::pin(async { Ok(json!("done")) })
    }
}

#[tokio::test]
async fn a_servers_tools_are_offered_together_and_a_called_one_whole() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        // A tool offered compactly, called without an argument its schema requires...
        call("c1", "add_slide", r#"{"text": "My notes"}"#),
        // ...and again, seeing the whole schema.
        call(
            "c2",
            "add_slide",
            r#"{"title": "Notes", "text": "My notes"}"#,
        ),
        text("Saved."),
    ])
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let agent = Agent::new(
        config(Policy::Retrieve, false)
            .retrieve_top_k(1)
            .split_needs(false)
            .server_tools(4)
            .build()
            .unwrap(),
        ChatClient::new(&server.base_url, "test-key"),
        Arc::new(ToolboxHost::new(servers_toolbox(dir.path()))),
    );
    agent
        .run(
            "Make a new slide deck of my notes with the chart /tmp/chart.png and save it as /tmp/deck.pptx",
            RunOptions::default().with_events(tx),
        )
        .await;
    let mut offered = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let AgentEvent::Offered { tools, .. } = e {
            offered.push(tools);
        }
    }
    let requests = server.requests();
    let first = serde_json::to_string_pretty(&requests[0]["tools"]).unwrap();
    let seen = format!(
        "offered: {offered:?}\nrequest 1 tools:\n{first}\nthe first call answered: {}\nrequest 2 tools: {}\nrequest 2's add_slide:\n{}",
        requests[1]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rfind(|m| m["role"] == "tool")
            .unwrap()["content"],
        server.tool_arrays()[1].join(", "),
        serde_json::to_string_pretty(
            requests[1]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["function"]["name"] == "add_slide")
                .unwrap()
        )
        .unwrap(),
    );
    insta::assert_snapshot!(seen);
}

#[tokio::test]
async fn only_other_tools_of_the_best_tools_server_are_offered_and_none_when_turned_off() {
    use toolscout_agent::host::ToolHost as _;
    let dir = tempfile::tempdir().unwrap();
    let host = ToolboxHost::new(servers_toolbox(dir.path()));
    let message = "Make a new slide deck of my notes";
    // The best tool, and its siblings (at most two) as retrieval adds them.
    let found = host.retrieve(message, 1).tools;
    assert_eq!(found.len(), 3, "{found:?}");
    // The rest of its server, best first for the message, never a found tool, at most
    // the limit; nothing of the other server.
    let more = host.server_tools(message, &found, 10);
    assert_eq!(more.len(), 3, "{more:?}");
    assert!(
        more.iter()
            .all(|t| !found.contains(t) && t != "get_forecast")
    );
    assert_eq!(host.server_tools(message, &found, 2), more[..2]);
    assert!(host.server_tools(message, &found, 0).is_empty());
    assert!(host.server_tools(message, &[], 5).is_empty());
    // A server of one tool has no other.
    assert!(
        host.server_tools("weather in Oslo", &["get_forecast".to_owned()], 5)
            .is_empty()
    );
    // Turned off: the array is the retrieved tool and the finder.
    let server = Server::start(vec![text("Done.")]).await;
    let agent = Agent::new(
        config(Policy::Retrieve, false)
            .retrieve_top_k(1)
            .split_needs(false)
            .server_tools(0)
            .build()
            .unwrap(),
        ChatClient::new(&server.base_url, "test-key"),
        Arc::new(host),
    );
    agent.run(message, RunOptions::default()).await;
    let mut expected = vec!["discover_tools".to_owned()];
    expected.extend(found);
    assert_eq!(server.tool_arrays()[0], expected);
}

/// Retrieval between steps (#66 item 3): a task of two servers whose request found the
/// first server's tools; once a tool of the second has run (called by name, as a
/// model that knows it does), that server's other tools are offered for the next step.
#[tokio::test]
async fn once_a_tool_of_another_server_ran_its_siblings_are_offered_for_the_next_step() {
    let dir = tempfile::tempdir().unwrap();
    let catalog_dir = dir.path().join("catalog");
    let toolbox = servers_toolbox(&catalog_dir);
    let stocks = uuid::Uuid::now_v7();
    let catalog = toolbox.catalog();
    catalog
        .put_bundle(stocks, &BundlePut::new("stocks"))
        .unwrap();
    for (name, summary) in [
        ("get_stock_history", "Daily prices of a stock over a period"),
        ("get_stock_quote", "The latest price of a stock"),
        (
            "get_company_profile",
            "A listed company's sector, size and officers",
        ),
        ("compare_stocks", "Compare the returns of several stocks"),
    ] {
        let spec = ToolSpec::builder(name, summary)
            .parameters(json!({"type": "object", "properties": {"symbol": {"type": "string"}}}))
            .build()
            .unwrap();
        catalog
            .put_tool(
                stocks,
                &name.replace('_', "-"),
                "1",
                &ToolPut::native(spec, "clock"),
            )
            .unwrap();
    }
    let server = Server::start(vec![
        call("c1", "create_presentation", r#"{"title": "Apple"}"#),
        text("Done."),
    ])
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let agent = Agent::new(
        config(Policy::Retrieve, false)
            .retrieve_top_k(1)
            .split_needs(false)
            // Not closed after the first call, as a request of one need is.
            .follow_needs(false)
            .server_tools(2)
            .build()
            .unwrap(),
        ChatClient::new(&server.base_url, "test-key"),
        Arc::new(ToolboxHost::new(toolbox)),
    );
    agent
        .run(
            "How did Apple's share price do over the last year?",
            RunOptions::default().with_events(tx),
        )
        .await;
    let mut seen = Vec::new();
    while let Ok(e) = rx.try_recv() {
        match e {
            AgentEvent::StepStarted { step, .. } => seen.push(format!("step {step}")),
            AgentEvent::Offered { tools, .. } => seen.push(format!("  offered {tools:?}")),
            AgentEvent::Activated { tool, .. } => seen.push(format!("  activated {tool}")),
            AgentEvent::ToolCallFinished { tool, ok, .. } => {
                seen.push(format!("  called {tool} (ok: {ok})"));
            }
            _ => {}
        }
    }
    let arrays = server.tool_arrays();
    insta::assert_snapshot!(format!(
        "{}\nrequest 1 tools: {}\nrequest 2 tools: {}",
        seen.join("\n"),
        arrays[0].join(", "),
        arrays[1].join(", ")
    ));
}

/// The model says what it needs in tool terms (#66 item 1): asked before its first
/// request for the tools a request of several needs takes, its lines are the needs that
/// are searched (each one's best tool activated) and followed up.
#[tokio::test]
async fn the_tools_the_model_lists_for_a_request_are_its_needs() {
    let dir = tempfile::tempdir().unwrap();
    let toolbox = servers_toolbox(dir.path());
    let server = Server::start(vec![
        // The plan.
        text("1. get a weather forecast\n2. create a slide deck\n3. save the deck to a file"),
        text("Done."),
    ])
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let agent = Agent::new(
        config(Policy::Retrieve, false)
            .retrieve_top_k(1)
            .server_tools(0)
            .plan_needs(true)
            .build()
            .unwrap(),
        ChatClient::new(&server.base_url, "test-key"),
        Arc::new(ToolboxHost::new(toolbox)),
    );
    agent
        .run(
            "I'm off to Oslo next week. Put what I should pack, by the weather there, into a presentation at /tmp/pack.pptx.",
            RunOptions::default().with_events(tx),
        )
        .await;
    let mut seen = Vec::new();
    while let Ok(e) = rx.try_recv() {
        match e {
            AgentEvent::Planned { steps, .. } => seen.push(format!("planned {steps:?}")),
            AgentEvent::Retrieved { tools, needs, .. } => {
                seen.push(format!("retrieved {tools:?} for the needs {needs:?}"));
            }
            _ => {}
        }
    }
    let requests = server.requests();
    let plan = &requests[0];
    insta::assert_snapshot!(format!(
        "{}\nthe plan request: tools {}, max_tokens {}, messages:\n{}\nrequest 2 tools: {}",
        seen.join("\n"),
        plan.get("tools").is_some(),
        plan["max_tokens"],
        serde_json::to_string_pretty(&plan["messages"]).unwrap(),
        server.tool_arrays()[1].join(", ")
    ));
}

/// The model asks for a tool it lacks, in tool terms, as the work unfolds (#66 items 1
/// and 3): its `NEED:` line is searched, the best tools are activated with a note saying
/// so, and the next request requires a call of one of them; the call runs.
#[tokio::test]
async fn a_tool_the_model_asks_for_mid_run_is_found_and_called_next() {
    let dir = tempfile::tempdir().unwrap();
    let toolbox = servers_toolbox(dir.path());
    let server = Server::start(vec![
        call("c1", "get_forecast", r#"{"city": "Oslo"}"#),
        text("The forecast is in. NEED: save a deck to a file"),
        call("c2", "save_presentation", r#"{"path": "/tmp/oslo.pptx"}"#),
        text("Saved to /tmp/oslo.pptx."),
    ])
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let agent = Agent::new(
        config(Policy::Retrieve, false)
            .tool_choice(toolscout_agent::ToolChoice::RequiredAfterActivation)
            .retrieve_top_k(1)
            .split_needs(false)
            .follow_needs(false)
            .server_tools(0)
            .tool_requests(true)
            .build()
            .unwrap(),
        ChatClient::new(&server.base_url, "test-key"),
        Arc::new(ToolboxHost::new(toolbox)),
    );
    let report = agent
        .run(
            "What will the weather be in Oslo? Keep it in a deck at /tmp/oslo.pptx.",
            RunOptions::default().with_events(tx),
        )
        .await;
    let mut seen = Vec::new();
    while let Ok(e) = rx.try_recv() {
        match e {
            AgentEvent::StepStarted { step, .. } => seen.push(format!("step {step}")),
            AgentEvent::Activated { tool, .. } => seen.push(format!("  activated {tool}")),
            AgentEvent::ToolRequested { need, tools, .. } => {
                seen.push(format!("  asked for {need:?}: {tools:?}"));
            }
            AgentEvent::ToolCallFinished { tool, ok, .. } => {
                seen.push(format!("  called {tool} (ok: {ok})"));
            }
            _ => {}
        }
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "{seen:#?} {:?}", report.stop);
    // The first request requires a call and leaves the guidance out; the second has it.
    let system = requests[1]["messages"][0]["content"].as_str().unwrap();
    let third = &requests[2];
    let messages = third["messages"].as_array().unwrap();
    insta::assert_snapshot!(format!(
        "{}\nanswer: {:?}\nrequest 2's system prompt ends: {}\nrequest 3: tools {}, tool_choice {}, last message: {}",
        seen.join("\n"),
        report.answer,
        system.lines().last().unwrap(),
        server.tool_arrays()[2].join(", "),
        third["tool_choice"],
        messages.last().unwrap()
    ));
}

/// Off (the default), a `NEED:` line is text like any other: the answer.
#[tokio::test]
async fn without_tool_requests_a_need_line_is_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let toolbox = servers_toolbox(dir.path());
    let server = Server::start(vec![text("NEED: save a deck to a file")]).await;
    let agent = Agent::new(
        config(Policy::Retrieve, false)
            .retrieve_top_k(1)
            .server_tools(0)
            .build()
            .unwrap(),
        ChatClient::new(&server.base_url, "test-key"),
        Arc::new(ToolboxHost::new(toolbox)),
    );
    let report = agent
        .run("What will the weather be in Oslo?", RunOptions::default())
        .await;
    assert_eq!(
        report.answer.as_deref(),
        Some("NEED: save a deck to a file")
    );
    assert_eq!(server.requests().len(), 1);
    let system = server.requests()[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!system.contains("NEED:"), "{system}");
}

/// The agent of the translation tests: retrieval of one tool, no server's tools beside it,
/// translation of requests on or off.
fn forecast_agent(server: &Server, toolbox: Toolbox, translate: bool) -> Agent {
    Agent::new(
        config(Policy::Retrieve, false)
            .retrieve_top_k(1)
            .server_tools(0)
            .translate_requests(translate)
            .build()
            .unwrap(),
        ChatClient::new(&server.base_url, "test-key"),
        Arc::new(ToolboxHost::new(toolbox)),
    )
}

/// The texts of the `Translated` events a run sent.
fn translations(mut rx: tokio::sync::mpsc::UnboundedReceiver<AgentEvent>) -> Vec<String> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let AgentEvent::Translated { text, .. } = e {
            out.push(text);
        }
    }
    out
}

/// A request in another language than the catalog's (#65): the model writes it in
/// English first, the catalog is searched with that, and the conversation keeps the
/// user's own words. Searched as the user wrote it, the same request finds nothing.
#[tokio::test]
async fn a_request_not_in_english_is_searched_as_the_model_writes_it_in_english() {
    let spanish = "¿Qué tiempo hará en Oslo la semana que viene? Lo necesito para hacer la maleta.";
    let dir = tempfile::tempdir().unwrap();
    let toolbox = servers_toolbox(dir.path());
    let server = Server::start(vec![
        // The request in English.
        text("\"What will the weather be in Oslo next week? I need it to pack my suitcase.\""),
        call("c1", "get_forecast", r#"{"city": "Oslo"}"#),
        text("Lloverá: lleva un impermeable."),
    ])
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let agent = forecast_agent(&server, toolbox.clone(), true);
    let report = agent
        .run(spanish, RunOptions::default().with_events(tx))
        .await;
    let mut seen = Vec::new();
    while let Ok(e) = rx.try_recv() {
        match e {
            AgentEvent::Translated { language, text, .. } => {
                seen.push(format!("in English (from {language}): {text}"));
            }
            AgentEvent::Retrieved { tools, .. } => seen.push(format!("retrieved {tools:?}")),
            AgentEvent::ToolCallFinished { tool, ok, .. } => {
                seen.push(format!("called {tool} (ok: {ok})"));
            }
            AgentEvent::TextDelta { text, .. } => seen.push(format!("streamed {text:?}")),
            _ => {}
        }
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{seen:#?}");
    let ask = &requests[0];
    let second = &requests[1];
    let user: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    insta::assert_snapshot!(format!(
        "{}\nanswer: {:?}\nthe request for English: tools {}, max_tokens {}, messages:\n{}\nrequest 2 tools: {}\nrequest 2 user messages: {user:?}",
        seen.join("\n"),
        report.answer,
        ask.get("tools").is_some(),
        ask["max_tokens"],
        serde_json::to_string_pretty(&ask["messages"]).unwrap(),
        server.tool_arrays()[1].join(", "),
    ));

    // Without it, the Spanish words find no tool of this English catalog.
    let server = Server::start(vec![text("No lo sé.")]).await;
    let agent = forecast_agent(&server, toolbox, false);
    agent.run(spanish, RunOptions::default()).await;
    let arrays = server.tool_arrays();
    assert_eq!(server.requests().len(), 1);
    assert!(!arrays[0].iter().any(|t| t == "get_forecast"), "{arrays:?}");
}

/// A request in English costs no request more: the first one the endpoint gets is the
/// agent's own, with its tools.
#[tokio::test]
async fn a_request_in_english_is_searched_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let toolbox = servers_toolbox(dir.path());
    let server = Server::start(vec![
        call("c1", "get_forecast", r#"{"city": "Oslo"}"#),
        text("Rain: take a raincoat."),
    ])
    .await;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let agent = forecast_agent(&server, toolbox, true);
    agent
        .run(
            "What will the weather be in Oslo next week? I need it to pack my suitcase.",
            RunOptions::default().with_events(tx),
        )
        .await;
    let translated = translations(rx);
    assert!(translated.is_empty(), "{translated:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        server.tool_arrays()[0].contains(&"get_forecast".to_owned()),
        "{:?}",
        server.tool_arrays()
    );
}

/// A model that answers the request instead of writing it in English ("Sure, please
/// provide the request.") is asked again with the request put as a text to translate;
/// when that fails too, the run searches with the user's own words.
#[tokio::test]
async fn an_answer_for_a_translation_is_asked_again_as_a_text_to_translate() {
    let spanish = "¿Qué tiempo hará en Oslo el 12 de mayo? Lo necesito para el vuelo IB3456.";
    let dir = tempfile::tempdir().unwrap();
    let toolbox = servers_toolbox(dir.path());
    let run = |replies: Vec<Reply>| {
        let toolbox = toolbox.clone();
        async move {
            let server = Server::start(replies).await;
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            let agent = forecast_agent(&server, toolbox, true);
            agent
                .run(spanish, RunOptions::default().with_events(tx))
                .await;
            (server, translations(rx))
        }
    };

    let (server, translated) = run(vec![
        text("Sure, please provide the request."),
        text(
            "Here is the translation:\n\nWhat will the weather be in Oslo on May 12? I need it for flight IB3456.",
        ),
        call("c1", "get_forecast", r#"{"city": "Oslo"}"#),
        text("Lloverá."),
    ])
    .await;
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(
        translated,
        ["What will the weather be in Oslo on May 12? I need it for flight IB3456."]
    );
    assert!(requests[1].get("tools").is_none());
    insta::assert_snapshot!(serde_json::to_string_pretty(&requests[1]["messages"]).unwrap());
    assert!(
        server.tool_arrays()[2].contains(&"get_forecast".to_owned()),
        "{:?}",
        server.tool_arrays()
    );

    // Answered twice: no request in English, the Spanish words are searched.
    let (server, translated) = run(vec![
        text("Sure, please provide the request."),
        text("The weather in Oslo will be sunny."),
        text("No lo sé."),
    ])
    .await;
    assert!(translated.is_empty(), "{translated:?}");
    assert_eq!(server.requests().len(), 3);
    assert!(
        !server.tool_arrays()[2].contains(&"get_forecast".to_owned()),
        "{:?}",
        server.tool_arrays()
    );
}

/// A tool of a bundle of a server's size names its server (a bundle of one tool is
/// none), and a search kept within servers finds only their tools.
#[test]
fn a_tool_names_its_server_and_a_search_keeps_within_servers() {
    use toolscout_agent::host::ToolHost as _;
    let dir = tempfile::tempdir().unwrap();
    let host = ToolboxHost::new(servers_toolbox(dir.path()));
    assert_eq!(host.server_of("add_slide").as_deref(), Some("slides"));
    assert_eq!(host.server_of("get_forecast"), None, "a bundle of one tool");
    assert_eq!(host.server_of("no_such_tool"), None);
    let anywhere = host.retrieve("the forecast and a slide deck", 3);
    assert!(
        anywhere.tools.iter().any(|t| t == "get_forecast"),
        "{anywhere:?}"
    );
    let within = host.retrieve_within("the forecast and a slide deck", &["slides".to_owned()], 3);
    assert!(!within.tools.is_empty(), "{within:?}");
    assert!(
        within
            .tools
            .iter()
            .all(|t| host.server_of(t).as_deref() == Some("slides")),
        "{within:?}"
    );
    assert_eq!(
        host.retrieve_within("the forecast", &[], 3),
        Default::default()
    );
}
