//! Reading tools (with bundles, plain and gzip-compressed), tasks and labelled queries.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::json;
use toolscout_eval::Error;
use toolscout_eval::read::{self, ExpectedCall};

const TOOLS: &str = r#"{"name": "get_weather", "description": "Get the current weather in a city.", "bundle": "Weather API", "bundle_description": "Forecasts and current conditions."}
{"name": "send_email", "description": "Send an email to a recipient."}

{"description": "A line without a name."}
not json
{"name": "get_forecast", "description": "The forecast for the next days.", "bundle": "Weather API"}
"#;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn gzip(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    let file = std::fs::File::create(&path).unwrap();
    let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    gz.finish().unwrap();
    path
}

#[test]
fn tool_lines_keep_each_line_s_bundle_and_skip_bad_lines_by_number() {
    let dir = tempfile::tempdir().unwrap();
    let lines = read::tool_lines(&write(dir.path(), "tools.jsonl", TOOLS)).unwrap();
    let names: Vec<&str> = lines.specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["get_weather", "send_email", "get_forecast"]);
    let bundles: Vec<Option<(&str, Option<&str>)>> = lines
        .bundles
        .iter()
        .map(|b| {
            b.as_ref()
                .map(|b| (b.name.as_str(), b.description.as_deref()))
        })
        .collect();
    assert_eq!(
        bundles,
        [
            Some(("Weather API", Some("Forecasts and current conditions."))),
            None,
            Some(("Weather API", None)),
        ]
    );
    // The blank line is not counted as bad; the two bad ones are, with their numbers.
    let skipped: Vec<usize> = lines.skipped.iter().map(|s| s.line).collect();
    assert_eq!(skipped, [4, 5]);
    assert!(lines.skipped[1].reason.contains("expected"), "{lines:?}");
}

#[test]
fn a_gz_file_reads_as_the_plain_one() {
    let dir = tempfile::tempdir().unwrap();
    let plain = read::tool_lines(&write(dir.path(), "tools.jsonl", TOOLS)).unwrap();
    let gz = read::tool_lines(&gzip(dir.path(), "tools.jsonl.gz", TOOLS)).unwrap();
    assert_eq!(gz.specs, plain.specs);
    assert_eq!(gz.bundles, plain.bundles);
    assert_eq!(gz.skipped, plain.skipped);
    assert_eq!(
        read::text(&gzip(dir.path(), "q.jsonl.gz", "{\"query\": \"hi\"}\n")).unwrap(),
        "{\"query\": \"hi\"}\n"
    );
}

#[test]
fn extend_new_adds_only_tools_whose_names_are_free() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = read::tool_lines(&write(dir.path(), "tools.jsonl", TOOLS)).unwrap();
    let more = read::tool_lines(&write(
        dir.path(),
        "more.jsonl",
        "{\"name\": \"send_email\", \"description\": \"Another one.\"}\n{\"name\": \"read_file\", \"description\": \"Read a file.\", \"bundle\": \"Files\"}\n",
    ))
    .unwrap();
    lines.extend_new(more);
    assert_eq!(lines.len(), 4);
    assert_eq!(lines.specs[1].description, "Send an email to a recipient.");
    assert_eq!(lines.specs[3].name.as_str(), "read_file");
    assert_eq!(lines.bundles[3].as_ref().unwrap().name, "Files");
}

#[test]
fn tasks_read_expected_offered_and_calls_with_sanitized_names() {
    let dir = tempfile::tempdir().unwrap();
    let text = [
        json!({"query": "Weather in Paris?", "expected": ["get_weather"], "offered": ["get_weather", "send_email"],
               "calls": [{"tool": "get_weather", "arguments": {"city": "Paris"}}, {"tool": "no_arguments"}, {"arguments": {}}]}),
        json!({"query": "Tell me a joke.", "expected": []}),
        json!({"query": "Convert PDF&URL", "expected": ["PDF&URLTool"]}),
    ]
    .map(|v| v.to_string())
    .join("\n\n");
    let tasks = read::tasks(&write(dir.path(), "tasks.jsonl", &text), None).unwrap();
    assert_eq!(tasks.len(), 3);
    assert_eq!(tasks[0].query, "Weather in Paris?");
    assert_eq!(tasks[0].offered, ["get_weather", "send_email"]);
    // A call without a tool is left out; one without arguments has null.
    assert_eq!(
        tasks[0].calls,
        [
            ExpectedCall::new("get_weather", json!({"city": "Paris"})),
            ExpectedCall::new("no_arguments", serde_json::Value::Null),
        ]
    );
    assert!(!tasks[0].irrelevant());
    assert!(tasks[1].irrelevant());
    assert!(tasks[1].offered.is_empty());
    assert_eq!(tasks[2].expected, ["PDF_URLTool"]);
}

#[test]
fn a_limit_keeps_tasks_spread_over_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..10)
        .map(|i| format!("{}\n", json!({"query": format!("q{i}"), "expected": ["t"]})))
        .collect();
    let tasks = read::tasks(&write(dir.path(), "tasks.jsonl", &text), Some(5)).unwrap();
    let queries: Vec<&str> = tasks.iter().map(|t| t.query.as_str()).collect();
    assert_eq!(queries, ["q1", "q3", "q5", "q7", "q9"]);
}

#[test]
fn a_bad_task_line_is_an_error_naming_the_file_and_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "tasks.jsonl",
        "{\"query\": \"ok\", \"expected\": []}\n{\"expected\": [\"t\"]}\n",
    );
    let err = read::tasks(&path, None).unwrap_err();
    assert!(
        matches!(&err, Error::Line { path: p, line: 2, .. } if p == &path),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}, line 2: a task needs \"query\", a string",
            path.display()
        )
    );

    let path = write(dir.path(), "broken.jsonl", "\n\n{\"query\": \n");
    let err = read::tasks(&path, None).unwrap_err();
    assert!(matches!(err, Error::Line { line: 3, .. }), "{err:?}");
    assert!(err.to_string().contains("broken.jsonl, line 3: "), "{err}");
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    for err in [
        read::tool_lines(&missing).unwrap_err(),
        read::tasks(&missing, None).unwrap_err(),
        read::labelled_queries(&missing).unwrap_err(),
    ] {
        match &err {
            Error::Io { path, source } => {
                assert_eq!(path, &missing);
                assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
            }
            other => panic!("{other:?}"),
        }
        assert!(err.to_string().contains("missing.jsonl"), "{err}");
    }
}

#[test]
fn labelled_queries_pass_over_lines_without_a_query_or_an_expected_tool() {
    let dir = tempfile::tempdir().unwrap();
    let text = [
        json!({"query": "weather", "expected": ["get_weather"], "source": "bfcl"}),
        json!({"query": "a joke", "expected": []}),
        json!({"expected": ["send_email"]}),
        json!({"query": "mail bob", "expected": ["send_email"]}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let path = write(dir.path(), "queries.jsonl", &text);
    let queries = read::labelled_queries(&path).unwrap();
    assert_eq!(
        queries,
        [
            read::LabelledQuery::new("weather", &["get_weather"]).with_source("bfcl"),
            read::LabelledQuery::new("mail bob", &["send_email"]),
        ]
    );
    // The texts alone: every line with a query.
    assert_eq!(
        read::query_texts(&path).unwrap(),
        ["weather", "a joke", "mail bob"]
    );
}
