//! Building and validating specs, and the typed path.

use insta::assert_snapshot;
use schemars::JsonSchema;
use serde_json::json;
use toolscout_spec::{Level, ToolSpec};

fn build_err(schema: serde_json::Value) -> String {
    ToolSpec::builder("t", "A tool")
        .parameters(schema)
        .build()
        .unwrap_err()
        .to_string()
}

#[test]
fn schema_errors_say_what_is_wrong() {
    assert_snapshot!(build_err(json!([1])), @"tool 't': invalid parameters: expected a JSON Schema object, found an array");
    assert_snapshot!(build_err(json!({"type": "string"})), @r#"tool 't': invalid parameters: the top-level "type" must be "object", found "string""#);
    assert_snapshot!(build_err(json!({"type": "object", "properties": []})), @r#"tool 't': invalid parameters: "properties" must be an object, found an array"#);
    assert_snapshot!(build_err(json!({"type": "object", "properties": {"a": {}}, "required": ["b"]})), @r#"tool 't': invalid parameters: "required" names 'b', which is not in "properties""#);
    assert_snapshot!(build_err(json!({"type": "object", "required": "a"})), @r#"tool 't': invalid parameters: "required" must be an array of names, found a string"#);
}

#[test]
fn summaries_must_be_one_non_empty_line() {
    let empty = ToolSpec::builder("t", "  ").build().unwrap_err();
    assert_snapshot!(empty, @"tool 't': summary must not be empty");
    let two = ToolSpec::builder("t", "one\ntwo").build().unwrap_err();
    assert_snapshot!(two, @"tool 't': summary must be a single line (put the rest in the description)");
}

#[test]
fn utterances_are_short_single_lines_and_few() {
    let build = |utterances: Vec<String>| {
        let mut b = ToolSpec::builder("t", "A tool");
        for u in utterances {
            b = b.utterance(u);
        }
        b.build()
    };
    let ok = build(vec!["will it rain in Paris tomorrow?".into()]).unwrap();
    assert_eq!(ok.utterances, ["will it rain in Paris tomorrow?"]);
    // Absent from the JSON when there are none; read back when there are.
    let json = serde_json::to_value(&ok).unwrap();
    assert_eq!(
        json["utterances"],
        json!(["will it rain in Paris tomorrow?"])
    );
    let plain = serde_json::to_value(build(vec![]).unwrap()).unwrap();
    assert!(plain.get("utterances").is_none(), "{plain}");

    let err = |u: Vec<String>| build(u).unwrap_err().to_string();
    assert_snapshot!(err(vec!["fine".into(), " ".into()]), @"tool 't': utterances must each hold a request: #1 is blank");
    assert_snapshot!(err(vec!["two\nlines".into()]), @"tool 't': utterances must each be one line: #0 is not");
    assert_snapshot!(err(vec!["x".repeat(301)]), @"tool 't': utterances must each be at most 300 characters: #0 has 301");
    assert_snapshot!(err(vec!["ask".into(); 33]), @"tool 't': utterances must be at most 32, found 33");
}

#[test]
fn canonical_json_round_trips() {
    for spec in toolscout_spec::sample::catalog() {
        let text = serde_json::to_string(&spec).unwrap();
        let back: ToolSpec = serde_json::from_str(&text).unwrap();
        assert_eq!(back, spec);
    }
}

/// Reads lines of a text file in the workspace.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct ReadLines {
    /// Path of the file, relative to the workspace root.
    file_path: String,
    /// First line to read (1-indexed).
    #[schemars(range(min = 1))]
    offset: Option<u32>,
    /// How lines are returned.
    format: Format,
}

/// Output format.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum Format {
    Plain,
    Numbered,
}

#[test]
fn typed_path_takes_schema_and_docs_from_the_type() {
    let spec = ToolSpec::from_args::<ReadLines>("read_lines", "Read lines of a file")
        .returns("string")
        .build()
        .unwrap();
    assert_eq!(
        spec.description,
        "Reads lines of a text file in the workspace."
    );
    assert_snapshot!(spec.disclose(Level::L3).to_text(), @r#"
    # read_lines
    Reads lines of a text file in the workspace.
    Usage: read_lines(file_path="…", format="plain")
    Returns: string
    Parameters:
    - file_path (string, required): Path of the file, relative to the workspace root.
    - offset (integer, format "uint32", minimum 1): First line to read (1-indexed).
    - format (string, required, one of: "plain"|"numbered"): How lines are returned.
    "#);
    insta::assert_json_snapshot!(spec.parameters);
}
