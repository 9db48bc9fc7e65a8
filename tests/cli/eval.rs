//! `toolscout eval agent` against a scripted OpenAI-compatible server on loopback.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::Env;
use crate::chat::scripted;

/// `eval agent --policy offered` of `tasks` over `tools` against the scripted endpoint at
/// `url`, keeping each outcome in `results`: its standard output (JSON with `json`), once
/// it has succeeded.
fn eval_offered(url: &str, tools: &Path, tasks: &Path, results: &Path, json: bool) -> Vec<u8> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolscout"));
    cmd.env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model")
        .env_remove("OPENAI_API_KEY");
    if json {
        cmd.arg("--json");
    }
    let out = cmd
        .args([
            "eval",
            "agent",
            "--policy",
            "offered",
            "--model",
            "m",
            "--base-url",
            url,
        ])
        .arg("--tools")
        .arg(tools)
        .arg("--tasks")
        .arg(tasks)
        .arg("--results")
        .arg(results)
        .output()
        .unwrap();
    crate::succeeded(out)
}

/// A non-streamed chat completion: one tool call, or an answer.
fn completion(message: Value) -> String {
    json!({
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
    })
    .to_string()
}

fn call(name: &str, arguments: Value) -> String {
    completion(
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()}
        }]}),
    )
}

fn answer(text: &str) -> String {
    completion(json!({"role": "assistant", "content": text}))
}

const TOOLS: &str = r#"{"name": "get_weather", "description": "Get the current weather in a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city."}}, "required": ["city"]}}
{"name": "send_email", "description": "Send an email to a recipient.", "parameters": {"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}, "required": ["to", "body"]}}
{"name": "convert_currency", "description": "Convert an amount of money from one currency to another.", "parameters": {"type": "object", "properties": {"amount": {"type": "number"}, "from": {"type": "string"}, "to": {"type": "string"}}, "required": ["amount", "from", "to"]}}
"#;

/// One relevant task (retrieved, called with valid arguments) and two irrelevance tasks
/// over their own offered tool: in one the model declines, in the other it calls the tool
/// with a city it made up, which `--ground-arguments` refuses. The figures say so.
#[test]
fn eval_agent_runs_relevant_and_irrelevance_tasks() {
    let env = Env::new();
    let tools = env.path().join("tools.jsonl");
    let tasks = env.path().join("tasks.jsonl");
    std::fs::write(&tools, TOOLS).unwrap();
    std::fs::write(
        &tasks,
        [
            json!({"query": "What is the weather in Paris?", "expected": ["get_weather"], "offered": ["get_weather"]}),
            json!({"query": "Tell me a joke about cats.", "expected": [], "offered": ["convert_currency"]}),
            json!({"query": "Book me a hotel room.", "expected": [], "offered": ["get_weather"]}),
        ]
        .map(|v| v.to_string())
        .join("\n"),
    )
    .unwrap();
    let (url, server) = scripted(vec![
        call("get_weather", json!({"city": "Paris"})),
        answer("It is sunny in Paris."),
        answer("Why did the cat sit on the computer? To keep an eye on the mouse."),
        call("get_weather", json!({"city": "Rome"})),
        answer("Which city, and for which nights?"),
    ]);
    let out = Command::new(env!("CARGO_BIN_EXE_toolscout"))
        // Hermetic: rank by words, whatever model this machine has fetched.
        .env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model")
        .env_remove("OPENAI_API_KEY")
        .args([
            "--json",
            "eval",
            "agent",
            "--model",
            "m",
            "--base-url",
            &url,
        ])
        .arg("--tools")
        .arg(&tools)
        .arg("--tasks")
        .arg(&tasks)
        .args(["--ground-arguments", "true"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let figures: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(figures["policy"], "retrieve", "{figures}");
    assert_eq!(figures["follow_needs"], true, "{figures}");
    assert_eq!(figures["relevant"]["tasks"], 1, "{figures}");
    assert_eq!(figures["relevant"]["success_rate"], 1.0, "{figures}");
    assert_eq!(figures["relevant"]["retrieved_hit_rate"], 1.0, "{figures}");
    assert_eq!(figures["ground_arguments"], true, "{figures}");
    // The hotel task called get_weather, so it did not abstain, but the call never ran.
    assert_eq!(figures["irrelevance"]["abstention_rate"], 0.5, "{figures}");
    assert_eq!(figures["irrelevance"]["no_tool_ran_rate"], 1.0, "{figures}");
    let requests = server.join().unwrap();
    assert_eq!(requests.len(), 5);
    let refusal = requests[4]["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "tool"))
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(refusal.contains("ungrounded_arguments"), "{refusal}");
    let names = |request: &Value| -> Vec<String> {
        request["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    // The weather task's catalog is the whole file; the irrelevance task's is its own
    // offered tool only.
    assert!(names(&requests[0]).contains(&"get_weather".to_owned()));
    let own = names(&requests[2]);
    assert!(!own.contains(&"get_weather".to_owned()), "{own:?}");
    assert!(!own.contains(&"send_email".to_owned()), "{own:?}");
}

/// A task that calls a tool it was not asked for fails, and a missing data file is a
/// clear error, not a panic.
#[test]
fn eval_agent_counts_a_wrong_call_as_a_failure() {
    let env = Env::new();
    let tools = env.path().join("tools.jsonl");
    let tasks = env.path().join("tasks.jsonl");
    std::fs::write(&tools, TOOLS).unwrap();
    std::fs::write(
        &tasks,
        json!({"query": "Email bob that I am late.", "expected": ["send_email"]}).to_string(),
    )
    .unwrap();
    let (url, server) = scripted(vec![
        call("get_weather", json!({"city": "Paris"})),
        answer("Done."),
    ]);
    let out = Command::new(env!("CARGO_BIN_EXE_toolscout"))
        .env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model")
        .args([
            "--json",
            "eval",
            "agent",
            "--model",
            "m",
            "--base-url",
            &url,
        ])
        .args(["--policy", "offered"])
        .arg("--tools")
        .arg(&tools)
        .arg("--tasks")
        .arg(&tasks)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let figures: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(figures["relevant"]["success_rate"], 0.0, "{figures}");
    assert!(stderr.contains("FAIL"), "{stderr}");
    server.join().unwrap();

    let missing = env.path().join("missing.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_toolscout"))
        .args([
            "eval",
            "agent",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ])
        .arg("--tools")
        .arg(&missing)
        .arg("--tasks")
        .arg(&tasks)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("missing.jsonl"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// `eval retrieve` runs the agent's retrieve step without a model: how often the right
/// tool is retrieved, per twin setting, and the confidence figures.
#[test]
fn eval_retrieve_measures_the_retrieve_step_without_a_model() {
    let env = Env::new();
    let tools = env.path().join("tools.jsonl");
    let tasks = env.path().join("tasks.jsonl");
    std::fs::write(&tools, TOOLS).unwrap();
    std::fs::write(
        &tasks,
        [
            json!({"query": "What is the weather in Paris?", "expected": ["get_weather"]}),
            json!({"query": "Convert 20 euros to dollars, a currency conversion", "expected": ["convert_currency"]}),
            json!({"query": "Email my boss", "expected": ["get_weather"]}),
            // Two tools share its words.
            json!({"query": "Send an email about the weather in a city", "expected": ["send_email"]}),
            json!({"query": "Tell me a joke about cats.", "expected": []}),
        ]
        .map(|v| v.to_string())
        .join("\n"),
    )
    .unwrap();
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_toolscout"))
            // Hermetic: rank by words, whatever model this machine has fetched.
            .env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model")
            .args(["--json", "eval", "retrieve"])
            .arg("--tools")
            .arg(&tools)
            .arg("--tasks")
            .arg(&tasks)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&["--top-k", "3", "--twins", "0.9", "--margins", "0.1,1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("no sentence encoder"), "{stderr}");
    let figures: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(figures["tasks"], 5, "{figures}");
    let twins = figures["twins"].as_array().unwrap();
    let similarities: Vec<_> = twins.iter().map(|t| &t["twin_similarity"]).collect();
    // Kept, 0.9, and the agent's 0.8: the margins' baseline, though not asked for.
    assert_eq!(similarities.len(), 3, "{figures}");
    assert_eq!(similarities[0], &Value::Null, "{figures}");
    assert!((similarities[2].as_f64().unwrap() - 0.8).abs() < 1e-6);
    // A margin of 1 is none: that is the baseline, not a row of its own.
    let margins = figures["margins"].as_array().unwrap();
    assert_eq!(margins.len(), 1, "{figures}");
    assert_eq!(margins[0]["margin"].as_f64().map(|m| m as f32), Some(0.1));
    // Without a model no tool is known to be behind another: the margin leaves none out.
    let mean_tools = |row: &Value| row["mean_tools"].as_f64().unwrap();
    assert!(mean_tools(&twins[2]) > 1.0, "{figures}");
    assert_eq!(mean_tools(&margins[0]), mean_tools(&twins[2]), "{figures}");
    for setting in twins.iter().chain(margins) {
        assert_eq!(setting["tool_tasks"], 4, "{figures}");
        // Three of the four expected tools are retrieved; "Email my boss" expects the
        // wrong tool on purpose.
        let hit = setting["hit"].as_f64().unwrap();
        assert!((hit - 3.0 / 4.0).abs() < 1e-9, "{figures}");
    }
    // Without a model there is no confidence: as in the agent, a task where something was
    // found requires a call at every floor, and the joke finds nothing, so it is free.
    assert_eq!(
        figures["confidence"]["with_tool"],
        json!([0.0, 0.0, 0.0, 0.0, 0.0])
    );
    for floor in figures["floors"].as_array().unwrap() {
        assert_eq!(floor["tool_tasks_required"], 1.0, "{figures}");
        assert_eq!(floor["no_tool_tasks_free"], 1.0, "{figures}");
    }
    // `--each`: every task's retrieval, as the agent makes it.
    let out = run(&["--each", "--twins", "0.9", "--margins", "0.05"]);
    assert!(out.status.success());
    let figures: Value = serde_json::from_slice(&out.stdout).unwrap();
    let each = figures["each"].as_array().unwrap();
    assert_eq!(each.len(), 5, "{figures}");
    assert_eq!(
        each[3]["query"],
        "Send an email about the weather in a city"
    );
    let tools = each[3]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2, "{figures}");
    assert_eq!(tools[0], "send_email", "{figures}");
    // The agent's margin is measured too, beside the one asked for.
    assert_eq!(figures["margins"].as_array().unwrap().len(), 2, "{figures}");

    let out = run(&["--twins", "1.5"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("outside 0 to 1"));

    let out = run(&["--top-k", "0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--top-k must be at least 1"));
}

/// `eval search` says how sure its recall@5 is and compares the rankings query by query.
#[test]
fn eval_search_prints_the_margin_of_recall_and_a_query_by_query_comparison() {
    let env = Env::new();
    let tools = env.path().join("tools.jsonl");
    let queries = env.path().join("queries.jsonl");
    let names = [
        ("get_weather", "Get the current weather in a city."),
        ("send_email", "Send an email to a recipient."),
        ("read_file", "Read a text file from disk."),
        ("list_events", "List calendar events for a day."),
        ("convert_currency", "Convert an amount between currencies."),
        ("search_flights", "Search flights between two airports."),
        ("play_music", "Play a song or playlist."),
    ];
    let text: String = names
        .iter()
        .map(|(n, d)| format!("{}\n", json!({"name": n, "description": d})))
        .collect();
    std::fs::write(&tools, text).unwrap();
    // Both find the first; only toolscout the misspelled name; only the plain BM25
    // (which keeps "a") the last.
    let queries_text = [
        json!({"query": "weather in Paris", "expected": ["get_weather"]}),
        json!({"query": "wether", "expected": ["get_weather"]}),
        json!({"query": "translate a poem", "expected": ["send_email"]}),
    ]
    .map(|q| q.to_string())
    .join("\n");
    std::fs::write(&queries, queries_text).unwrap();
    let run = |json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolscout"));
        cmd.env("TOOLSCOUT_HOME", env.path().join("catalog"))
            .env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model");
        if json {
            cmd.arg("--json");
        }
        let out = cmd
            .args(["eval", "search", "--tools"])
            .arg(&tools)
            .output()
            .unwrap();
        String::from_utf8(crate::succeeded(out)).unwrap()
    };
    let figures: Value = serde_json::from_str(&run(true)).unwrap();
    assert_eq!(figures["toolscout"]["recall_at_5"], 0.667, "{figures}");
    assert_eq!(figures["bm25"]["recall_at_5"], 0.667, "{figures}");
    // 1.96 × √((2/3 − 4/9) / 3): the per-query recalls are 1, 1, 0.
    assert_eq!(
        figures["toolscout"]["recall_at_5_margin_95"], 0.533,
        "{figures}"
    );
    assert_eq!(
        figures["bm25"]["toolscout_vs_bm25"],
        json!({"better": 1, "worse": 1}),
        "{figures}"
    );
    let text = run(false);
    assert!(
        text.contains(
            "(toolscout's R@5 ±0.533 at 95 % over these 3 queries; against BM25: a higher R@5 on 1 query, a lower on 1)"
        ),
        "{text}"
    );
}

/// `eval calibrate` fits a model folder's cosines to search's scale and writes them
/// beside it. Calibrating the built-in model's own table, uncalibrated, against the
/// built-in model must give back the built-in model's knots; a later load applies the
/// file, and a broken one is an error that names it.
#[test]
fn eval_calibrate_fits_a_model_to_the_built_in_scale_and_writes_it() {
    let env = Env::new();
    let model = crate::potion_folder(&env.path().join("raw-potion"));
    let subjects = [
        ("get_weather", "Get the current weather in a city"),
        (
            "get_forecast",
            "Weather forecast for the next days in a city",
        ),
        ("send_email", "Send an email to a recipient"),
        ("read_inbox", "List the newest emails in the inbox"),
        (
            "convert_currency",
            "Convert an amount of money between currencies",
        ),
        ("stock_price", "The latest price of a company's stock"),
        ("book_flight", "Book a flight between two airports"),
        (
            "search_flights",
            "Find flights between two cities on a date",
        ),
        ("book_hotel", "Reserve a hotel room for some nights"),
        (
            "find_restaurant",
            "Find restaurants near a place by cuisine",
        ),
        ("translate_text", "Translate a text into another language"),
        (
            "detect_language",
            "Tell which language a text is written in",
        ),
        ("create_presentation", "Create a new slide deck"),
        ("add_slide", "Add a slide with a title and text to a deck"),
        ("resize_image", "Resize a picture to a width and height"),
        ("compress_file", "Compress files into a zip archive"),
        ("play_song", "Play a song by its title and artist"),
        (
            "movie_showtimes",
            "Show times of movies playing in a cinema",
        ),
        ("calculate_bmi", "Body mass index from weight and height"),
        ("count_calories", "Calories of a meal from its ingredients"),
        ("geocode", "Latitude and longitude of an address"),
        ("route_planner", "Driving directions between two places"),
        ("create_event", "Add an event to a calendar"),
        ("set_timer", "Start a countdown timer"),
        ("solve_equation", "Solve a quadratic equation"),
        ("unit_convert", "Convert a value between units of length"),
        ("news_headlines", "Top news headlines of a country"),
        ("wiki_summary", "Summary of a Wikipedia article"),
        ("github_issues", "List the open issues of a repository"),
        ("dns_lookup", "Look up the DNS records of a domain"),
    ];
    let tools = env.path().join("tools.jsonl");
    std::fs::write(
        &tools,
        subjects
            .iter()
            .map(|(name, description)| {
                json!({"name": name, "description": description}).to_string()
            })
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let queries = env.path().join("queries.jsonl");
    std::fs::write(
        &queries,
        [
            "will it rain in Paris tomorrow",
            "email my landlord about the leak",
            "how many yen is 20 euros",
            "a cheap flight to Rome next Friday",
            "a table for two at an Italian place",
            "what does this German sentence say in English",
            "make me a deck about our results",
            "how far is it by car from Lyon to Nice",
        ]
        .map(|q| json!({"query": q, "expected": ["get_weather"]}).to_string())
        .join("\n"),
    )
    .unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_toolscout"))
            .env("HOME", env.path())
            .env("XDG_CACHE_HOME", env.path().join("cache"))
            .env("TOOLSCOUT_HOME", env.path().join("catalog"))
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&[
        "--json",
        "eval",
        "calibrate",
        "--model",
        model.to_str().unwrap(),
        "--tools",
        tools.to_str().unwrap(),
        "--queries",
        queries.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let knots: Vec<(f32, f32)> = serde_json::from_value(report["knots"].clone()).unwrap();
    // The built-in model's calibration (toolscout-embed's `BUNDLED_CALIBRATION`).
    let bundled = [
        (0.165, 0.1),
        (0.277, 0.2),
        (0.384, 0.3),
        (0.48, 0.4),
        (0.573, 0.5),
    ];
    assert!(knots.len() >= 2, "{knots:?}");
    for (x, y) in &knots {
        if let Some((bx, _)) = bundled.iter().find(|(_, by)| (by - y).abs() < 1e-6) {
            assert!(
                (x - bx).abs() < 0.03,
                "knot ({x}, {y}) against {bx}: {knots:?}"
            );
        }
    }
    let file = model.join("calibration.json");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let written: Vec<(f32, f32)> = serde_json::from_value(written["knots"].clone()).unwrap();
    assert_eq!(written.len(), knots.len());
    for (w, k) in written.iter().zip(&knots) {
        assert!(
            (w.0 - k.0).abs() < 1e-4 && (w.1 - k.1).abs() < 1e-4,
            "{written:?} {knots:?}"
        );
    }
    // The model loads with it.
    let search = |model: &std::path::Path| {
        run(&[
            "--encoder",
            model.to_str().unwrap(),
            "eval",
            "search",
            "--tools",
            tools.to_str().unwrap(),
            "--queries",
            queries.to_str().unwrap(),
        ])
    };
    crate::succeeded(search(&model));
    // A broken file is an error that names it.
    std::fs::write(&file, r#"{"knots": [[0.5, 0.5], [0.4, 0.6]]}"#).unwrap();
    let out = search(&model);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("calibration.json") && stderr.contains("knot"),
        "{stderr}"
    );
}

/// `eval compare` reads the results files two real `eval agent --results` runs wrote and
/// judges them on the tasks both finished, the first run being the baseline.
#[test]
fn eval_compare_judges_two_runs_on_the_tasks_both_finished() {
    let env = Env::new();
    let tools = env.path().join("tools.jsonl");
    std::fs::write(&tools, TOOLS).unwrap();
    let weather = json!({"query": "What is the weather in Paris?", "expected": ["get_weather"], "offered": ["get_weather"]});
    let joke = json!({"query": "Tell me a joke about cats.", "expected": [], "offered": ["convert_currency"]});
    let money = json!({"query": "Convert 5 USD to EUR.", "expected": ["convert_currency"], "offered": ["convert_currency"]});
    let run = |name: &str, tasks: &[&Value], replies: Vec<String>| {
        let file = env.path().join(format!("{name}-tasks.jsonl"));
        let lines: Vec<String> = tasks.iter().map(|t| t.to_string()).collect();
        std::fs::write(&file, lines.join("\n")).unwrap();
        let expected_requests = replies.len();
        let (url, server) = scripted(replies);
        let results = env.path().join(format!("{name}.jsonl"));
        eval_offered(&url, &tools, &file, &results, false);
        assert_eq!(server.join().unwrap().len(), expected_requests);
    };
    // The oracle calls the weather tool, declines the joke, and converts the money.
    run(
        "oracle",
        &[&weather, &joke, &money],
        vec![
            call("get_weather", json!({"city": "Paris"})),
            answer("It is sunny in Paris."),
            answer("Why did the cat sit on the computer? To keep an eye on the mouse."),
            call(
                "convert_currency",
                json!({"amount": 5, "from": "USD", "to": "EUR"}),
            ),
            answer("5 USD is 4.60 EUR."),
        ],
    );
    // The other run has not reached the money task: it calls a currency tool for the
    // joke with amounts the user never gave (no abstention, and grounding refuses the
    // call, so no tool ran), and the weather tool twice.
    run(
        "default",
        &[&joke, &weather],
        vec![
            call(
                "convert_currency",
                json!({"amount": 3, "from": "GBP", "to": "JPY"}),
            ),
            answer("Why did the cat sit on the computer?"),
            call("get_weather", json!({"city": "Paris"})),
            call("get_weather", json!({"city": "Paris"})),
            answer("It is sunny in Paris."),
        ],
    );
    let oracle = format!("oracle={}", env.path().join("oracle.jsonl").display());
    let default = env.path().join("default.jsonl").display().to_string();
    let table = env.check(&["eval", "compare", &oracle, &default]);
    insta::assert_snapshot!(table);
    let figures: Value =
        serde_json::from_str(&env.check(&["--json", "eval", "compare", &oracle, &default]))
            .unwrap();
    assert_eq!(figures["paired"], 2, "{figures}");
    assert_eq!(figures["runs"][1]["name"], "default", "{figures}");
    assert_eq!(figures["runs"][0]["left_out"], 1, "{figures}");
    assert_eq!(
        figures["runs"][1]["irrelevance"]["abstention_rate"], 0.0,
        "{figures}"
    );
    assert_eq!(
        figures["runs"][1]["relevant"]["mean_steps"], 3.0,
        "{figures}"
    );

    // A file that is no run's results, and a run named twice, say what is wrong.
    std::fs::write(env.path().join("bad.jsonl"), "{\"query\": 1}\n").unwrap();
    let bad = env.path().join("bad.jsonl").display().to_string();
    let err = env.check(&["eval", "compare", &oracle, &bad]);
    assert!(
        err.contains("bad.jsonl line 1: not a result of `eval agent --results`"),
        "{err}"
    );
    let err = env.check(&["eval", "compare", &default, &default]);
    assert!(err.contains("two runs are named \"default\""), "{err}");
}

/// Of the calls nobody asked for, `eval agent` records those of another server than the
/// task's (the bundle a tool's line names; a tool in none is a server of its own), and
/// `eval compare` shows them; `--tools` tells them to results kept before they were
/// recorded, which otherwise read "—".
#[test]
fn stray_calls_of_other_servers_are_told_apart() {
    let env = Env::new();
    let tools = env.path().join("tools.jsonl");
    std::fs::write(
        &tools,
        [
            json!({"name": "get_weather", "bundle": "Weather", "description": "Get the current weather in a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}),
            json!({"name": "get_forecast", "bundle": "Weather", "description": "Get the forecast for a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}),
            json!({"name": "convert_currency", "bundle": "Money", "description": "Convert an amount of money from one currency to another.", "parameters": {"type": "object", "properties": {"amount": {"type": "number"}, "from": {"type": "string"}, "to": {"type": "string"}}, "required": ["amount", "from", "to"]}}),
        ]
        .map(|t| t.to_string())
        .join("\n"),
    )
    .unwrap();
    let tasks = env.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        json!({"query": "What is the weather in Paris? I have 5 USD to change to EUR.", "expected": ["get_weather"], "offered": ["get_weather", "get_forecast", "convert_currency"]}).to_string(),
    )
    .unwrap();
    // The model calls the asked-for tool, its server's other one and another server's.
    let (url, server) = scripted(vec![
        call("get_weather", json!({"city": "Paris"})),
        call("get_forecast", json!({"city": "Paris"})),
        call(
            "convert_currency",
            json!({"amount": 5, "from": "USD", "to": "EUR"}),
        ),
        answer("It is sunny in Paris; 5 USD is 4.60 EUR."),
    ]);
    let results = env.path().join("run.jsonl");
    let stdout = eval_offered(&url, &tools, &tasks, &results, true);
    assert_eq!(server.join().unwrap().len(), 4);
    let figures: Value = serde_json::from_slice(&stdout).unwrap();
    let relevant = &figures["relevant"];
    assert_eq!(relevant["unasked_calls_per_task"], 2.0, "{figures}");
    assert_eq!(
        relevant["unasked_calls_of_other_servers_per_task"], 1.0,
        "{figures}"
    );
    let kept: Value =
        serde_json::from_str(std::fs::read_to_string(&results).unwrap().trim()).unwrap();
    assert_eq!(
        kept["outcome"]["unasked_elsewhere"],
        json!(["convert_currency"]),
        "{kept}"
    );

    // The same outcome kept before the servers were recorded.
    let mut old = kept.clone();
    old["outcome"]
        .as_object_mut()
        .unwrap()
        .remove("unasked_elsewhere");
    let old_file = env.path().join("old.jsonl");
    std::fs::write(&old_file, format!("{old}\n")).unwrap();
    let old_run = format!("old={}", old_file.display());
    let new_run = format!("new={}", results.display());
    let table = env.check(&["eval", "compare", &new_run, &old_run]);
    assert!(table.contains("| new | 1 |"), "{table}");
    assert!(table.contains("| 2.00 (1.00) |"), "{table}");
    assert!(table.contains("| 2.00 (—) |"), "{table}");
    let tools_arg = tools.display().to_string();
    let told = env.check(&["eval", "compare", "--tools", &tools_arg, &new_run, &old_run]);
    assert_eq!(told.matches("| 2.00 (1.00) |").count(), 2, "{told}");
}
