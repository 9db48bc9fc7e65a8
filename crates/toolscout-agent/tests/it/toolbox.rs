//! The loop over the real host: discover_tools over a flat-file catalog with its search
//! index, and built-in tools called through the invoker.

use std::sync::Arc;

use toolscout_agent::{Agent, ChatClient, Policy, RunOptions, StopReason, ToolboxHost};
use toolscout_catalog::{Catalog, builtin};
use toolscout_discover::Toolbox;
use toolscout_invoke::Invoker;
use toolscout_invoke::builtin::BuiltinConfig;
use toolscout_search::SearchIndex;

use crate::server::{Server, call, text};
use crate::{assert_paired, config, render};

/// A catalog folder with the built-in tools and a workspace holding `todo.txt`.
struct Fixture {
    catalog_dir: tempfile::TempDir,
    workspace: tempfile::TempDir,
}

impl Fixture {
    fn new(todo: &str) -> Fixture {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::write(workspace.path().join("todo.txt"), todo).unwrap();
        Fixture {
            catalog_dir: tempfile::tempdir().unwrap(),
            workspace,
        }
    }

    fn catalog(&self) -> Catalog {
        Catalog::open(self.catalog_dir.path(), &builtin::NATIVE_FUNCTIONS).unwrap()
    }

    /// A toolbox over `catalog` whose invoker runs the built-ins in the workspace.
    fn toolbox(&self, catalog: Catalog) -> Toolbox {
        let mut invoker = Invoker::default();
        toolscout_invoke::builtin::register(
            &mut invoker,
            &BuiltinConfig::new(
                self.workspace.path(),
                toolscout_invoke::AllowedHosts::default(),
            ),
        )
        .unwrap();
        Toolbox::new(catalog, SearchIndex::in_memory().unwrap(), invoker).unwrap()
    }
}

/// What the model read back, call by call: each tool message's JSON.
fn tool_results(report: &toolscout_agent::RunReport) -> Vec<serde_json::Value> {
    report
        .messages
        .iter()
        .filter_map(|m| match m {
            toolscout_agent::Message::Tool { content, .. } => serde_json::from_str(content).ok(),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn search_describe_activate_and_call_a_builtin_tool() {
    let f = Fixture::new("buy milk\ncall mum\n");
    let host = ToolboxHost::new(f.toolbox(f.catalog()));

    let server = Server::start(vec![
        call(
            "c1",
            "discover_tools",
            r#"{"query":"read the lines of a text file"}"#,
        ),
        call("c2", "discover_tools", r#"{"tool":"read_file"}"#),
        call("c3", "read_file", r#"{"file_path":"todo.txt","offset":2}"#),
        call("c4", "read_file", r#"{"file_path":"../etc/passwd"}"#),
        text("The second line is: call mum."),
    ])
    .await;
    // Search hits are not activated here: this test is about activation by describing.
    let agent = Agent::new(
        config(Policy::Browse, true)
            .activate_hits(0)
            .build()
            .unwrap(),
        ChatClient::new(&server.base_url, "test-key"),
        Arc::new(host),
    );
    let report = agent
        .run("What is on line 2 of todo.txt?", RunOptions::default())
        .await;
    assert_eq!(report.stop, StopReason::Answer, "{}", render(&report));
    assert_paired(&report.messages);

    let arrays = server.tool_arrays();
    assert_eq!(arrays[0], ["discover_tools", "call_tool"]);
    assert_eq!(
        arrays[2],
        ["discover_tools", "call_tool", "read_file"],
        "activated after level 2"
    );

    let results = tool_results(&report);
    assert_eq!(
        results[0]["value"]["tools"][0]["name"], "read_file",
        "{}",
        results[0]
    );
    assert_eq!(results[1]["value"]["level"], 2);
    assert_eq!(results[2]["ok"], true, "{}", results[2]);
    assert!(
        results[2].to_string().contains("call mum"),
        "{}",
        results[2]
    );
    assert_eq!(results[3]["ok"], false);
    assert_eq!(
        results[3]["error"]["kind"], "outside_workspace",
        "{}",
        results[3]
    );
}

#[tokio::test]
async fn a_guessed_tool_name_is_answered_with_real_tools_to_use_instead() {
    let f = Fixture::new("buy milk\n");
    let toolbox = f.toolbox(f.catalog());
    let server = Server::start(vec![
        // A typo of a real name, then a name made up from the task's words.
        call("c1", "read_fil", r#"{"file_path":"todo.txt"}"#),
        call(
            "c2",
            "call_tool",
            r#"{"name":"write_text_file","arguments":{}}"#,
        ),
        call("c3", "read_file", r#"{"file_path":"todo.txt"}"#),
        text("It says: buy milk."),
    ])
    .await;
    let agent = Agent::new(
        config(Policy::Browse, false).build().unwrap(),
        ChatClient::new(&server.base_url, "test-key"),
        Arc::new(ToolboxHost::new(toolbox)),
    );
    let report = agent
        .run("What is in todo.txt?", RunOptions::default())
        .await;
    assert_eq!(report.stop, StopReason::Answer, "{}", render(&report));
    let results = tool_results(&report);
    let suggested = |i: usize| -> Vec<String> {
        assert_eq!(
            results[i]["error"]["kind"], "unknown_tool",
            "{}",
            results[i]
        );
        results[i]["error"]["did_you_mean"]
            .as_array()
            .unwrap_or_else(|| panic!("no suggestions in {}", results[i]))
            .iter()
            .map(|s| s.as_str().unwrap().split('(').next().unwrap().to_owned())
            .collect()
    };
    assert_eq!(suggested(0)[0], "read_file", "{}", results[0]);
    assert!(
        suggested(1).contains(&"write_file".to_owned()),
        "{}",
        results[1]
    );
    insta::assert_snapshot!(results[0]["error"]["message"].as_str().unwrap());
    assert_eq!(results[2]["ok"], true, "{}", results[2]);
    // The suggestions were activated: the retry calls a native tool.
    let arrays = server.tool_arrays();
    assert!(
        arrays[1].contains(&"read_file".to_owned()),
        "{:?}",
        arrays[1]
    );
    assert!(
        !arrays[0].contains(&"read_file".to_owned()),
        "{:?}",
        arrays[0]
    );
}

#[tokio::test]
async fn retrieve_searches_the_catalog_with_the_users_message() {
    let f = Fixture::new("buy milk\ncall mum\n");
    let host = ToolboxHost::new(f.toolbox(f.catalog()));
    for (message, expect_read_file) in [
        ("Show me the lines of the text file todo.txt", true),
        // Words of no tool: neither the word tier nor (as a fit) the fuzzy one.
        ("xqzv wkpj", false),
    ] {
        let server = Server::start(vec![text("Done.")]).await;
        let agent = Agent::new(
            config(Policy::Retrieve, false)
                .retrieve_top_k(3)
                .build()
                .unwrap(),
            ChatClient::new(&server.base_url, "test-key"),
            Arc::new(host.clone()),
        );
        agent.run(message, RunOptions::default()).await;
        let tools = &server.tool_arrays()[0];
        assert_eq!(tools[0], "discover_tools", "{tools:?}");
        assert!(tools.len() <= 4, "{tools:?}");
        assert_eq!(
            tools.contains(&"read_file".to_owned()),
            expect_read_file,
            "{message}: {tools:?}"
        );
        if !expect_read_file {
            assert_eq!(tools.len(), 1, "{tools:?}");
        }
    }
}

#[tokio::test]
async fn the_alias_of_a_tool_not_yet_activated_calls_that_tool() {
    let f = Fixture::new("");
    let catalog = f.catalog();
    // A dotted name, whose OpenAI alias is `time_now`, run by the built-in clock.
    let mut spec = match catalog
        .tools()
        .into_iter()
        .find(|t| t.spec.name.as_str() == "clock")
    {
        Some(t) => t.spec,
        None => panic!("no built-in clock"),
    };
    spec.name = toolscout_spec::ToolName::new("time.now").unwrap();
    let bundle = uuid::Uuid::now_v7();
    catalog
        .put_bundle(bundle, &toolscout_catalog::BundlePut::new("extra"))
        .unwrap();
    catalog
        .put_tool(
            bundle,
            "time-now",
            "1",
            &toolscout_catalog::ToolPut::native(spec, "clock"),
        )
        .unwrap();
    let toolbox = f.toolbox(catalog);
    let server = Server::start(vec![
        call("c1", "time_now", r#"{"action":"now","time_zone":"UTC"}"#),
        call(
            "c2",
            "call_tool",
            r#"{"name":"time_now","arguments":{"action":"now"}}"#,
        ),
        call("c3", "clock_now", r#"{"action":"now"}"#),
        text("Done."),
    ])
    .await;
    let agent = Agent::new(
        config(Policy::Browse, false).build().unwrap(),
        ChatClient::new(&server.base_url, "test-key"),
        Arc::new(ToolboxHost::new(toolbox)),
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let report = agent
        .run("What time is it?", RunOptions::default().with_events(tx))
        .await;
    assert_eq!(report.stop, StopReason::Answer, "{}", render(&report));
    let mut finished = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let toolscout_agent::AgentEvent::ToolCallFinished { tool, ok, .. } = event {
            finished.push((tool, ok));
        }
    }
    assert_eq!(
        finished,
        [
            ("time.now".to_owned(), true),
            ("time.now".to_owned(), true),
            // Not an alias of any tool: still unknown.
            ("clock_now".to_owned(), false),
        ]
    );
}

/// A toy sentence encoder: one dimension per topic, counting the topic's words.
struct Topics;

const TOPICS: [&[&str]; 4] = [
    &["weather", "temperature", "current"],
    &["rain", "forecast", "coming", "days"],
    &["email", "mail", "send", "inbox"],
    &["poem", "haiku", "verse"],
];

impl toolscout_search::Embedder for Topics {
    fn model(&self) -> &str {
        "topics"
    }

    fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        texts
            .iter()
            .map(|t| {
                let t = t.to_lowercase();
                let words: Vec<&str> = t.split(|c: char| !c.is_alphanumeric()).collect();
                let mut v: Vec<f32> = TOPICS
                    .iter()
                    .map(|topic| words.iter().filter(|w| topic.contains(w)).count() as f32)
                    .collect();
                v.push(0.3);
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.iter().map(|x| x / n).collect()
            })
            .collect()
    }
}

/// A toolbox of two weather tools that are twins, a forecast and an email tool, ranked
/// with [`Topics`] when `meaning`.
fn twins_toolbox(dir: &std::path::Path, meaning: bool) -> Toolbox {
    let embedder: Option<Arc<dyn toolscout_search::Embedder>> =
        meaning.then(|| Arc::new(Topics) as Arc<dyn toolscout_search::Embedder>);
    twins_toolbox_with(dir, embedder)
}

/// [`twins_toolbox`] ranked with `embedder`.
fn twins_toolbox_with(
    dir: &std::path::Path,
    embedder: Option<Arc<dyn toolscout_search::Embedder>>,
) -> Toolbox {
    let catalog = Catalog::open_with(
        dir,
        toolscout_catalog::CatalogOptions::default()
            .with_natives(&["clock"])
            .with_builtins(false),
    )
    .unwrap();
    let bundle = uuid::Uuid::now_v7();
    catalog
        .put_bundle(bundle, &toolscout_catalog::BundlePut::new("weather"))
        .unwrap();
    for (slug, name, summary) in [
        (
            "a",
            "get_weather",
            "Current weather and temperature for a city",
        ),
        (
            "b",
            "weather.current",
            "The current weather and temperature in a city",
        ),
        (
            "c",
            "rain_forecast",
            "Chance of rain, a forecast for the coming days",
        ),
        ("d", "send_email", "Send an email to an inbox"),
    ] {
        let spec = toolscout_spec::ToolSpec::builder(name, summary)
            .build()
            .unwrap();
        catalog
            .put_tool(
                bundle,
                slug,
                "1",
                &toolscout_catalog::ToolPut::native(spec, "clock"),
            )
            .unwrap();
    }
    let mut index = SearchIndex::in_memory().unwrap();
    if let Some(embedder) = embedder {
        index = index.with_embedder(embedder);
    }
    Toolbox::new(catalog, index, Invoker::default()).unwrap()
}

/// [`Topics`], taking `delay` for every text once `slow` is set: a search whose query
/// must be encoded is as slow as a large catalog's.
/// An encoder that, once `slow` is set, does not answer until the test's ticker has
/// ticked `TICKS` times (or `GIVE_UP` has passed): it blocks its thread until the rest of
/// the runtime has visibly made progress.
struct Slow {
    slow: Arc<std::sync::atomic::AtomicBool>,
    ticks: Arc<std::sync::atomic::AtomicUsize>,
    waited: Arc<std::sync::atomic::AtomicBool>,
}

/// The ticks a slow encoder waits for.
const TICKS: usize = 5;

/// How long a slow encoder waits for them at most: only reached when the ticker cannot
/// tick at all (the search runs on the runtime's one thread), never by load alone.
const GIVE_UP: std::time::Duration = std::time::Duration::from_secs(10);

impl toolscout_search::Embedder for Slow {
    fn model(&self) -> &str {
        "topics"
    }

    fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        use std::sync::atomic::Ordering;
        if self.slow.load(Ordering::SeqCst) {
            self.waited.store(true, Ordering::SeqCst);
            let started = std::time::Instant::now();
            while self.ticks.load(Ordering::SeqCst) < TICKS && started.elapsed() < GIVE_UP {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
        Topics.embed(texts)
    }
}

/// A discover answer is search work: it runs off the async threads, so while one is slow
/// the loop's other work (other calls, streaming, timers) goes on. On a runtime of one
/// thread, a ticker must keep ticking while a search waits on a slow encoder.
#[tokio::test(flavor = "current_thread")]
async fn a_slow_discover_answer_does_not_stall_the_runtime() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use toolscout_agent::host::{CallContext, ToolHost};

    let slow = Arc::new(AtomicBool::new(false));
    let ticks = Arc::new(AtomicUsize::new(0));
    let waited = Arc::new(AtomicBool::new(false));
    let dir = tempfile::tempdir().unwrap();
    let embedder = Slow {
        slow: slow.clone(),
        ticks: ticks.clone(),
        waited: waited.clone(),
    };
    let host = ToolboxHost::new(twins_toolbox_with(dir.path(), Some(Arc::new(embedder))));
    slow.store(true, Ordering::SeqCst);

    let ticker = tokio::spawn({
        let ticks = ticks.clone();
        async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                ticks.fetch_add(1, Ordering::SeqCst);
            }
        }
    });
    let ctx = CallContext {
        agent: "main".to_owned(),
        depth: 0,
        call_id: "call_1".to_owned(),
        cancel: Default::default(),
        progress: Default::default(),
    };
    let outcome = host
        .call(
            "discover_tools",
            serde_json::json!({"query": "the weather and temperature in a city"}),
            ctx,
        )
        .await;
    let during = ticks.load(Ordering::SeqCst);
    ticker.abort();

    assert!(
        waited.load(Ordering::SeqCst),
        "the search did not ask the encoder"
    );
    assert_eq!(
        outcome.result["value"]["kind"], "search",
        "{}",
        outcome.result
    );
    // Inline, the one runtime thread would block in the encoder, the ticker could not
    // tick, and the encoder would give up after GIVE_UP with (at most) a tick or two.
    assert!(during >= TICKS, "{during} ticks");
}

#[test]
fn retrieve_drops_near_twins_and_says_how_sure_it_is() {
    use toolscout_agent::host::ToolHost;
    let dir = tempfile::tempdir().unwrap();
    let host = ToolboxHost::new(twins_toolbox(dir.path(), true));
    let message = "What is the weather and temperature in Oslo, any rain in the forecast?";

    // The two current-weather tools are one tool under two names: one is dropped.
    let weather = ["get_weather", "weather.current"];
    let count = |tools: &[String]| {
        tools
            .iter()
            .filter(|t| weather.contains(&t.as_str()))
            .count()
    };
    let found = host.retrieve(message, 3);
    assert_eq!(count(&found.tools), 1, "{found:?}");
    assert!(
        found.tools.contains(&"rain_forecast".to_owned()),
        "{found:?}"
    );
    let sure = found.confidence.unwrap();
    assert!(sure > 0.5, "{found:?}");

    // Twins kept when asked.
    let kept = host.clone().with_twin_similarity(None).retrieve(message, 3);
    assert_eq!(count(&kept.tools), 2, "{kept:?}");

    // A clear best tool: the forecast, far behind in meaning, is not offered beside it,
    // unless every tool up to the limit is asked for.
    let mostly_weather = "What is the current weather and temperature in Oslo? Any rain?";
    let clear = host.retrieve(mostly_weather, 3);
    assert_eq!(clear.tools.len(), 1, "{clear:?}");
    assert_eq!(count(&clear.tools), 1, "{clear:?}");
    let all = host.clone().with_margin(None).retrieve(mostly_weather, 3);
    assert!(all.tools.contains(&"rain_forecast".to_owned()), "{all:?}");
    assert_eq!(all.confidence, clear.confidence);

    // A message far from every tool: whatever its words find, retrieval is unsure.
    let unsure = host.retrieve("Write a haiku, a short poem in verse, about the weather", 2);
    assert!(!unsure.tools.is_empty(), "{unsure:?}");
    assert!(unsure.is_below(0.5), "{unsure:?}");

    // A tool's name is certain, the start of one as sure as the share it spells;
    // without an embedder there is no measure at all.
    assert_eq!(host.retrieve("send_email", 1).confidence, Some(1.0));
    let start = host.retrieve("send_em", 1);
    assert_eq!(start.tools, ["send_email"]);
    assert_eq!(start.confidence, Some(0.7));
    let dir = tempfile::tempdir().unwrap();
    let words_only = ToolboxHost::new(twins_toolbox(dir.path(), false));
    let found = words_only.retrieve(message, 2);
    assert!(!found.tools.is_empty());
    assert_eq!(found.confidence, None);
}

/// The margin is measured from a first tool found by meaning: a tool named in the
/// message comes first without a cosine to fall behind, so nothing is cut. NaN is no
/// margin, and a negative margin is none either (it would cut a tool as good as the
/// first).
#[test]
fn the_margin_needs_a_first_tool_found_by_meaning_and_is_never_negative() {
    use toolscout_agent::host::ToolHost;
    let dir = tempfile::tempdir().unwrap();
    let host = ToolboxHost::new(twins_toolbox(dir.path(), true)).with_twin_similarity(None);
    let mostly_weather = "What is the current weather and temperature in Oslo? Any rain?";
    let all = host.clone().with_margin(None).retrieve(mostly_weather, 3);
    assert_eq!(all.tools.len(), 3, "{all:?}");
    // At 0 a tool as good as the first (its twin) stays and the forecast goes.
    let tight = host
        .clone()
        .with_margin(Some(0.0))
        .retrieve(mostly_weather, 3);
    assert_eq!(tight.tools, all.tools[..2], "{tight:?}");
    let negative = host
        .clone()
        .with_margin(Some(-0.5))
        .retrieve(mostly_weather, 3);
    assert_eq!(negative.tools, tight.tools);
    let nan = host
        .clone()
        .with_margin(Some(f32::NAN))
        .retrieve(mostly_weather, 3);
    assert_eq!(nan.tools, all.tools);

    // Named: the first tool is certain, not near, and the email tool, far behind in
    // meaning, is still offered; so is the forecast past the top 3, a tool of the same
    // small bundle (a sibling).
    let named = host
        .clone()
        .with_margin(Some(0.0))
        .retrieve("get_weather", 3);
    assert_eq!(named.confidence, Some(1.0));
    assert_eq!(
        named.tools,
        [
            "get_weather",
            "weather.current",
            "send_email",
            "rain_forecast"
        ],
        "{named:?}"
    );
}

#[test]
fn a_search_lists_near_twins_under_the_better_hit() {
    let dir = tempfile::tempdir().unwrap();
    let discover = toolscout_discover::DiscoverTools::new(twins_toolbox(dir.path(), true));
    let reply = |d: &toolscout_discover::DiscoverTools| {
        serde_json::to_string_pretty(
            &d.answer(&serde_json::json!({"query": "current weather"}))
                .reply,
        )
        .unwrap()
    };
    let grouped = reply(&discover);
    insta::assert_snapshot!(grouped);
    assert!(grouped.contains("\"similar\""), "{grouped}");
    // Turned off, the twin is a hit of its own.
    let flat = reply(&discover.clone().with_twin_similarity(None));
    assert!(!flat.contains("\"similar\""), "{flat}");
    // Without a sentence encoder nothing is grouped.
    let dir = tempfile::tempdir().unwrap();
    let words = toolscout_discover::DiscoverTools::new(twins_toolbox(dir.path(), false));
    assert!(!reply(&words).contains("\"similar\""));
}

/// A catalog of one small API (two tools: find a number, then its details) and a large
/// bundle of loose functions, one of which also speaks of phone numbers.
fn siblings_toolbox(dir: &std::path::Path) -> Toolbox {
    let catalog = Catalog::open_with(
        dir,
        toolscout_catalog::CatalogOptions::default()
            .with_natives(&["clock"])
            .with_builtins(false),
    )
    .unwrap();
    let put = |bundle: uuid::Uuid, slug: &str, name: &str, summary: &str| {
        let spec = toolscout_spec::ToolSpec::builder(name, summary)
            .build()
            .unwrap();
        catalog
            .put_tool(
                bundle,
                slug,
                "1",
                &toolscout_catalog::ToolPut::native(spec, "clock"),
            )
            .unwrap();
    };
    let api = uuid::Uuid::now_v7();
    catalog
        .put_bundle(
            api,
            &toolscout_catalog::BundlePut::new("acme-voice")
                .with_description("Phone numbers to rent, by country"),
        )
        .unwrap();
    put(
        api,
        "list",
        "list_numbers_for_a_country_for_acme_voice",
        "List the phone numbers available to rent in a country",
    );
    put(
        api,
        "details",
        "number_details_for_acme_voice",
        "The price, features and region of one phone number",
    );
    let loose = uuid::Uuid::now_v7();
    catalog
        .put_bundle(loose, &toolscout_catalog::BundlePut::new("loose"))
        .unwrap();
    put(
        loose,
        "phone-book",
        "phone_book_lookup",
        "Look up the phone number of a person in a phone book",
    );
    for i in 0..30 {
        put(
            loose,
            &format!("garden-{i}"),
            &format!("garden_tip_{i}"),
            &format!("Gardening tip number {i} for a season"),
        );
    }
    Toolbox::new(
        catalog,
        SearchIndex::in_memory().unwrap(),
        Invoker::default(),
    )
    .unwrap()
}

/// A request the first tool of a small API serves, whose second tool it also matches
/// (#41 item 2): the sibling comes with the hit, beyond the top-k; a tool of a large
/// bundle that the request matches as well does not.
#[tokio::test]
async fn a_hit_brings_its_sibling_from_a_small_bundle() {
    use toolscout_agent::host::ToolHost as _;
    let dir = tempfile::tempdir().unwrap();
    let host = ToolboxHost::new(siblings_toolbox(dir.path()));
    let message = "Which phone numbers can I rent in a country like Japan, and at what price?";
    // The search finds all three.
    let wide = host.retrieve(message, 3).tools;
    for name in [
        "list_numbers_for_a_country_for_acme_voice",
        "number_details_for_acme_voice",
        "phone_book_lookup",
    ] {
        assert!(wide.contains(&name.to_owned()), "{wide:?}");
    }
    let server = Server::start(vec![text("Done.")]).await;
    let agent = Agent::new(
        config(Policy::Retrieve, false)
            .retrieve_top_k(1)
            .split_needs(false)
            .build()
            .unwrap(),
        ChatClient::new(&server.base_url, "test-key"),
        Arc::new(host),
    );
    agent.run(message, RunOptions::default()).await;
    insta::assert_snapshot!(server.tool_arrays()[0].join(", "), @r#"discover_tools, list_numbers_for_a_country_for_acme_voice, number_details_for_acme_voice"#);
}

/// A request that names the API, not a tool (#41 item 2): the retrieval ranks the API's
/// tools by its name, and `discover_tools` asked for the API by name lists its tools
/// rather than answering `unknown_tool`. What the model sees, request by request.
#[tokio::test]
async fn a_request_naming_a_bundle_finds_the_bundles_tools() {
    let dir = tempfile::tempdir().unwrap();
    let host = ToolboxHost::new(siblings_toolbox(dir.path()));
    let server = Server::start(vec![
        call("c1", "discover_tools", r#"{"tool": "Acme Voice"}"#),
        text("Done."),
    ])
    .await;
    let agent = Agent::new(
        config(Policy::Retrieve, false)
            .retrieve_top_k(1)
            .build()
            .unwrap(),
        ChatClient::new(&server.base_url, "test-key"),
        Arc::new(host),
    );
    let report = agent
        .run("What can I do with Acme Voice?", RunOptions::default())
        .await;
    assert_eq!(report.stop, StopReason::Answer, "{}", render(&report));
    let arrays = server.tool_arrays();
    let seen = format!(
        "request 1 tools: {}\ndiscover_tools {{\"tool\": \"Acme Voice\"}} answered:\n{}\nrequest 2 tools: {}",
        arrays[0].join(", "),
        serde_json::to_string_pretty(&tool_results(&report)[0]).unwrap(),
        arrays[1].join(", "),
    );
    insta::assert_snapshot!(seen, @r#"
request 1 tools: discover_tools, number_details_for_acme_voice, list_numbers_for_a_country_for_acme_voice
discover_tools {"tool": "Acme Voice"} answered:
{
  "ok": true,
  "value": {
    "kind": "tools",
    "total": 2,
    "tools": [
      {
        "name": "list_numbers_for_a_country_for_acme_voice",
        "summary": "List the phone numbers available to rent in a country"
      },
      {
        "name": "number_details_for_acme_voice",
        "summary": "The price, features and region of one phone number"
      }
    ],
    "bundle": "acme-voice",
    "bundle_description": "Phone numbers to rent, by country",
    "message": "'Acme Voice' is not a tool but the API its tools belong to; these are its tools: describe one with `tool`"
  }
}
request 2 tools: discover_tools, number_details_for_acme_voice, list_numbers_for_a_country_for_acme_voice
"#);
}

#[tokio::test]
async fn a_recipe_call_asks_one_approval_listing_its_steps_and_tells_its_progress() {
    let f = Fixture::new("");
    let catalog = f.catalog();
    let bundle = uuid::Uuid::now_v7();
    catalog
        .put_bundle(bundle, &toolscout_catalog::BundlePut::new("mine"))
        .unwrap();
    let spec =
        toolscout_spec::ToolSpec::builder("note_time", "Write the current UTC time to time.txt")
            .build()
            .unwrap();
    let block = serde_json::json!({"steps": [
        {"id": "now", "tool": "clock", "args": {"action": "now"}},
        {"id": "save", "tool": "write_file", "args": {"file_path": "time.txt"}, "from": {"content": "$.steps.now.time"}}
    ], "result": "$.steps.now.time"});
    catalog
        .put_tool(
            bundle,
            "note-time",
            "1",
            &toolscout_catalog::ToolPut::recipe(spec, block),
        )
        .unwrap();
    let host = ToolboxHost::new(f.toolbox(catalog));
    let server = Server::start(vec![call("c1", "note_time", "{}"), text("Done.")]).await;
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let approver = move |r: &toolscout_agent::ApprovalRequest| {
        seen.lock().unwrap().push(r.clone());
        toolscout_agent::Approval::Approved
    };
    let agent = Agent::new(
        config(Policy::Upfront, true).build().unwrap(),
        ChatClient::new(&server.base_url, "test-key"),
        Arc::new(host),
    )
    .with_approver(Arc::new(approver));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let report = agent
        .run("Note the time.", RunOptions::default().with_events(tx))
        .await;
    assert_eq!(report.stop, StopReason::Answer, "{}", render(&report));
    let results = tool_results(&report);
    assert_eq!(results[0]["ok"], true, "{}", results[0]);
    let written = std::fs::read_to_string(f.workspace.path().join("time.txt")).unwrap();
    assert_eq!(serde_json::json!(written), results[0]["value"]);

    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "one approval for the recipe: {asked:?}");
    let steps: Vec<String> = asked[0]
        .steps
        .iter()
        .map(|s| format!("{}:{}:{}", s.step, s.tool, s.requires_approval))
        .collect();
    assert_eq!(steps, ["now:clock:false", "save:write_file:true"]);
    let mut progress = Vec::new();
    let mut approval_steps = 0;
    while let Ok(e) = rx.try_recv() {
        match e {
            toolscout_agent::AgentEvent::ToolProgress {
                tool, progress: p, ..
            } => {
                assert_eq!(tool, "note_time");
                progress.push(format!(
                    "{} {}",
                    p["event"].as_str().unwrap(),
                    p["step"].as_str().unwrap()
                ));
            }
            toolscout_agent::AgentEvent::ApprovalRequested { steps, .. } => {
                approval_steps = steps.len()
            }
            _ => {}
        }
    }
    assert_eq!(approval_steps, 2);
    assert_eq!(
        progress,
        [
            "step_started now",
            "step_finished now",
            "step_started save",
            "step_finished save"
        ]
    );
}
