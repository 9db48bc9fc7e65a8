//! The README's recipe, taken as it is by `tool put` and run by `call` with no arguments.

use crate::Env;

/// The first ```json block after the `### Recipes` heading of the README.
fn readme_recipe() -> String {
    let readme = include_str!("../../README.md");
    let section = readme
        .split_once("### Recipes")
        .expect("the README has a Recipes section")
        .1;
    let block = section
        .split_once("```json\n")
        .expect("a json block")
        .1
        .split_once("```")
        .expect("a closed block")
        .0;
    block.to_owned()
}

#[test]
fn the_readme_recipe_is_put_and_runs_with_no_arguments() {
    let env = Env::new();
    let file = env.path().join("tokyo-offset.json");
    std::fs::write(&file, readme_recipe()).unwrap();
    assert!(env.check(&["bundle", "put", "mine"]).contains("mine"));
    assert_eq!(
        env.check(&["tool", "put", file.to_str().unwrap(), "--bundle", "mine"]),
        "added tokyo_offset (tokyo-offset@1)\n"
    );
    let out = env.check(&["call", "tokyo_offset"]);
    let outcome: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(outcome, serde_json::json!({"ok": true, "value": "+09:00"}));
    let level3 = env.check(&["describe", "tokyo_offset", "--level", "3"]);
    assert!(
        level3.contains(
            "Steps (one call runs them all):\n- now: clock\n- offset: json_query (after now)"
        ),
        "{level3}"
    );
    // Usage counts the recipe and each step.
    let usage = env.check(&["list", "--usage", "--json"]);
    let usage: serde_json::Value = serde_json::from_str(&usage).unwrap();
    for name in ["tokyo_offset", "clock", "json_query"] {
        let count = usage["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["usage"]["callCount"].clone());
        assert_eq!(count, Some(serde_json::json!(1)), "{name}: {usage}");
    }
}

#[test]
fn a_bad_recipe_is_a_clear_error_and_nothing_is_added() {
    let env = Env::new();
    env.check(&["bundle", "put", "mine"]);
    let mut recipe: serde_json::Value = serde_json::from_str(&readme_recipe()).unwrap();
    recipe["impl"]["steps"][1]["tool"] = serde_json::json!("json_qeury");
    let file = env.path().join("bad.json");
    std::fs::write(&file, recipe.to_string()).unwrap();
    let out = env.output(&["tool", "put", file.to_str().unwrap(), "--bundle", "mine"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("recipe 'tokyo_offset': step 'offset': calls 'json_qeury', which no tool of the catalog is named"),
        "{err}"
    );
    assert!(
        !env.check(&["list", "--bundle", "mine"])
            .contains("tokyo_offset")
    );
}

/// A one-thread HTTP server on loopback answering every request with `body` (JSON).
fn serve_json(body: &'static str) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    addr.to_string()
}

#[test]
fn http_get_then_json_query_and_a_graph_with_a_parallel_pair_run_from_the_cli() {
    let env = Env::new();
    env.check(&["bundle", "put", "mine"]);
    let host = serve_json(r#"{"city": "Oslo", "temp": {"c": 21}}"#);
    let fetch = serde_json::json!({
        "slug": "city-temperature", "version": "1", "name": "city_temperature",
        "description": "Fetches a weather document and selects its temperature in degrees Celsius.",
        "type": "recipe",
        "argSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
        "impl": {
            "steps": [
                {"id": "fetch", "tool": "http_get", "from": {"url": "$.args.url"}},
                {"id": "temp", "tool": "json_query", "args": {"path": "$.temp.c"},
                 "from": {"value": {"path": "$.steps.fetch.body", "parse": "json"}}}
            ],
            "result": "$.steps.temp[0]"
        }
    });
    let graph = serde_json::json!({
        "slug": "tokyo-now-in-oslo", "version": "1", "name": "tokyo_now_in_oslo",
        "description": "Reads the clock in Tokyo and in Oslo side by side, then converts Tokyo's time to Oslo's zone.",
        "type": "recipe",
        "impl": {
            "steps": [
                {"id": "tokyo", "tool": "clock", "args": {"action": "now", "time_zone": "Asia/Tokyo"}},
                {"id": "oslo", "tool": "clock", "args": {"action": "now", "time_zone": "Europe/Oslo"}},
                {"id": "convert", "tool": "clock", "args": {"action": "convert"},
                 "from": {"time": "$.steps.tokyo.time", "time_zone": "$.steps.oslo.time_zone"}}
            ],
            "result": {"tokyo": "$.steps.tokyo.unix_seconds", "in_oslo": "$.steps.convert.unix_seconds", "zone": "$.steps.convert.time_zone"}
        }
    });
    for (name, body) in [("fetch.json", &fetch), ("graph.json", &graph)] {
        let file = env.path().join(name);
        std::fs::write(&file, body.to_string()).unwrap();
        env.check(&["tool", "put", file.to_str().unwrap(), "--bundle", "mine"]);
    }
    let url = format!("http://{host}/weather");
    let out = env.check(&[
        "--allow-host",
        &host,
        "--allow-private",
        "call",
        "city_temperature",
        "--url",
        &url,
    ]);
    let outcome: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(outcome, serde_json::json!({"ok": true, "value": 21}));
    let out = env.check(&["call", "tokyo_now_in_oslo"]);
    let outcome: serde_json::Value = serde_json::from_str(&out).unwrap();
    let value = &outcome["value"];
    assert_eq!(value["zone"], "Europe/Oslo", "{outcome}");
    assert_eq!(value["tokyo"], value["in_oslo"], "{outcome}");
}

#[test]
fn a_recipe_with_a_write_asks_once_and_refused_runs_nothing() {
    let env = Env::new();
    env.check(&["bundle", "put", "mine"]);
    let body = serde_json::json!({
        "slug": "note-time", "version": "1", "name": "note_time",
        "description": "Writes the current UTC time to time.txt.",
        "type": "recipe",
        "impl": {"steps": [
            {"id": "now", "tool": "clock", "args": {"action": "now"}},
            {"id": "save", "tool": "write_file", "args": {"file_path": "time.txt"}, "from": {"content": "$.steps.now.time"}}
        ]}
    });
    let file = env.path().join("note.json");
    std::fs::write(&file, body.to_string()).unwrap();
    env.check(&["tool", "put", file.to_str().unwrap(), "--bundle", "mine"]);
    // No terminal, no --yes: refused, and no step ran.
    let out = env.output(&["call", "note_time"]);
    assert!(!out.status.success());
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcome["error"]["kind"], "approval_refused", "{outcome}");
    assert!(!env.workspace().join("time.txt").exists());
    // Approving the recipe approves its steps, once.
    let out = env.check(&["--approve", "note_time", "call", "note_time"]);
    let outcome: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(outcome["ok"], true, "{outcome}");
    assert!(env.workspace().join("time.txt").exists());
}

/// Regression (issue 63): each error said once, named as the recipe's, and a misspelt
/// step tool offered its closest names.
#[test]
fn recipe_errors_are_said_once_with_one_prefix_and_a_did_you_mean() {
    let env = Env::new();
    env.check(&["bundle", "put", "mine"]);
    let recipe: serde_json::Value = serde_json::from_str(&readme_recipe()).unwrap();
    let mut out = String::new();
    let cases: [(&str, serde_json::Value); 5] = [
        ("a misspelt tool", serde_json::json!({"tool": "clokc"})),
        (
            "an unknown parameter",
            serde_json::json!({"args": {"action": "now", "zone": "Asia/Tokyo"}}),
        ),
        (
            "a literal of the wrong type",
            serde_json::json!({"args": {"action": 3}}),
        ),
        (
            "an undeclared argument",
            serde_json::json!({"args": {"action": "now"}, "from": {"time_zone": "$.args.zone"}}),
        ),
        (
            "a step waiting for itself",
            serde_json::json!({"after": ["now"]}),
        ),
    ];
    for (what, change) in cases {
        let mut bad = recipe.clone();
        for (k, v) in change.as_object().unwrap() {
            bad["impl"]["steps"][0][k] = v.clone();
        }
        let file = env.path().join("bad.json");
        std::fs::write(&file, bad.to_string()).unwrap();
        out.push_str(&format!("# {what}\n"));
        out.push_str(&env.check(&["tool", "put", file.to_str().unwrap(), "--bundle", "mine"]));
    }
    insta::assert_snapshot!(out, @r#"
    # a misspelt tool
    exit 1
    error: recipe 'tokyo_offset': step 'now': calls 'clokc', which no tool of the catalog is named; did you mean: clock?
    # an unknown parameter
    exit 1
    error: recipe 'tokyo_offset': step 'now': args.zone: 'clock' has no parameter 'zone'; its parameters are: action, time_zone, time
    # a literal of the wrong type
    exit 1
    error: recipe 'tokyo_offset': step 'now': args.action: 3 is integer, but the parameter takes string for 'clock'
    # an undeclared argument
    exit 1
    error: recipe 'tokyo_offset': step 'now': from.time_zone: $.args.zone reads the argument 'zone', which is not a parameter of the recipe (it declares none); declare it in the recipe's "argSchema": "properties": {"zone":{"type":"string"}}
    # a step waiting for itself
    exit 1
    error: recipe 'tokyo_offset': step 'now': "after" names the step itself
    "#);
}

/// The README's second recipe: its argument declared, given as a flag.
#[test]
fn the_readme_recipe_with_an_argument_takes_it_as_a_flag() {
    let readme = include_str!("../../README.md");
    let section = readme.split_once("### Recipes").unwrap().1;
    let block = section
        .split("```json\n")
        .nth(2)
        .expect("a second json block")
        .split_once("```")
        .unwrap()
        .0;
    let env = Env::new();
    env.check(&["bundle", "put", "mine"]);
    let file = env.path().join("utc-offset.json");
    std::fs::write(&file, block).unwrap();
    env.check(&["tool", "put", file.to_str().unwrap(), "--bundle", "mine"]);
    let out = env.check(&["call", "utc_offset", "--zone", "Asia/Kolkata"]);
    let outcome: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(outcome, serde_json::json!({"ok": true, "value": "+05:30"}));
    let level3 = env.check(&["describe", "utc_offset", "--level", "3"]);
    assert!(level3.contains("zone (string, required)"), "{level3}");
}
