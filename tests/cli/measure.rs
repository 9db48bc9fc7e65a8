//! The README's "measure retrieval on your catalog": an OpenAPI document imported,
//! exported as JSONL, measured with `eval search`; and the eval commands' own help.

use serde_json::json;

use crate::Env;

/// Regression (issue 63): `eval * --help` listed a dozen global flags among the
/// command's own.
#[test]
fn eval_help_lists_its_own_flags_and_only_the_globals_it_reads() {
    let env = Env::new();
    for command in ["search", "retrieve", "agent"] {
        let help = env.check(&["eval", command, "--help"]);
        for hidden in [
            "--catalog",
            "--store",
            "--workspace",
            "--allow-host",
            "--approve",
            "--secret-host",
        ] {
            assert!(!help.contains(hidden), "eval {command}: {hidden}\n{help}");
        }
        assert!(
            help.contains("Ranking and output:") && help.contains("--words-only"),
            "eval {command}\n{help}"
        );
    }
    // Still accepted, as before.
    let out = env.all(&[
        "eval",
        "search",
        "--catalog",
        "/nonexistent",
        "--tools",
        "/nonexistent/tools.jsonl",
    ]);
    assert!(out.contains("not found"), "{out}");
}

#[test]
fn an_imported_api_is_measured_from_its_exported_jsonl() {
    let env = Env::new();
    let doc = json!({
        "openapi": "3.0.0",
        "info": {"title": "Weather API", "version": "1"},
        "servers": [{"url": "https://api.weather.example"}],
        "paths": {
            "/forecast": {"get": {"operationId": "getForecast", "summary": "Daily weather forecast for a city",
                "parameters": [{"name": "city", "in": "query", "required": true, "schema": {"type": "string"}}]}},
            "/alerts": {"get": {"operationId": "listAlerts", "summary": "Severe weather warnings for a region",
                "parameters": [{"name": "region", "in": "query", "required": true, "schema": {"type": "string"}}]}}
        }
    });
    let api = env.path().join("weather.json");
    std::fs::write(&api, doc.to_string()).unwrap();
    env.check(&["import", "openapi", api.to_str().unwrap()]);
    let tools = env.check(&["export", "--format", "jsonl", "--bundle", "weather-api"]);
    let tools_file = env.path().join("tools.jsonl");
    std::fs::write(&tools_file, tools).unwrap();
    // The default queries file: `queries.jsonl` beside the tools.
    std::fs::write(
        env.path().join("queries.jsonl"),
        [
            json!({"query": "weather forecast for Lyon", "expected": ["getForecast"]}),
            json!({"query": "severe weather warnings in Brittany", "expected": ["listAlerts"]}),
        ]
        .map(|q| q.to_string())
        .join("\n"),
    )
    .unwrap();
    let out = env.check(&[
        "eval",
        "search",
        "--tools",
        tools_file.to_str().unwrap(),
        "--words-only",
        "--json",
    ]);
    let figures: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (&figures["queries"], &figures["tools"]),
        (&json!(2), &json!(2)),
        "{figures}"
    );
    assert_eq!(figures["toolscout"]["recall_at_5"], 1.0, "{figures}");
    assert!(figures["model"].is_null(), "words only: {figures}");
}
