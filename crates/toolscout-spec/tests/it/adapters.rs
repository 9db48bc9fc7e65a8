//! Each adapter's output for the sample catalog, and its round trip.

use chrono::{TimeZone, Utc};
use insta::{assert_json_snapshot, assert_snapshot};
use serde_json::{Value, json};
use toolscout_spec::adapters::tool_file::{FileInfo, ToolFile, ToolType};
use toolscout_spec::adapters::{jsonl, manifest, mcp, openai};
use toolscout_spec::{ToolSpec, sample};
use uuid::Uuid;

use crate::tool;

#[test]
fn openai_output() {
    let tools = sample::catalog();
    let names = openai::NameMap::new(tools.iter().map(|t| t.name.as_str()));
    let out: Vec<Value> = tools
        .iter()
        .map(|t| openai::to_openai_named(t, names.alias(&t.name).unwrap(), false))
        .collect();
    assert_json_snapshot!(out);
}

#[test]
fn openai_strict_schema() {
    let out = openai::to_openai(&tool("write_file"), true).unwrap();
    assert_json_snapshot!(out["function"]["parameters"], @r#"
    {
      "type": "object",
      "properties": {
        "file_path": {
          "type": "string",
          "description": "Path of the file, relative to the workspace root"
        },
        "content": {
          "type": "string",
          "description": "Text to write"
        },
        "mode": {
          "type": [
            "string",
            "null"
          ],
          "description": "Overwrite the file or append to it",
          "enum": [
            "overwrite",
            "append"
          ]
        }
      },
      "required": [
        "file_path",
        "content",
        "mode"
      ],
      "additionalProperties": false
    }
    "#);
}

#[test]
fn openai_round_trip() {
    for spec in sample::catalog() {
        let names = openai::NameMap::new([spec.name.as_str()]);
        let alias = names.alias(&spec.name).unwrap();
        let back = openai::from_openai(&openai::to_openai_named(&spec, alias, false)).unwrap();
        assert_eq!(names.original(&back.name), Some(spec.name.as_str()));
        assert_eq!(back.description, spec.description);
        assert_eq!(back.parameters, spec.parameters);
    }
}

#[test]
fn openai_gives_untyped_schemas_an_explicit_any_type() {
    let any = json!([
        "string", "number", "integer", "boolean", "object", "array", "null"
    ]);
    let spec = ToolSpec::builder("set_value", "Set a value")
        .parameters(json!({
            "type": "object",
            "properties": {
                "key": {"type": "string"},
                "value": {"description": "Any value", "x-bfcl-type": "any"},
                "choice": {"enum": ["a", "b"]},
                "nested": {"type": "object", "properties": {"inner": {"description": "Any"}}},
                "list": {"type": "array", "items": {"description": "Any item"}}
            },
            "required": ["key"]
        }))
        .build()
        .unwrap();
    let params = &openai::to_openai(&spec, false).unwrap()["function"]["parameters"];
    assert_eq!(params["properties"]["key"]["type"], "string");
    assert_eq!(params["properties"]["value"]["type"], any);
    assert_eq!(params["properties"]["value"]["description"], "Any value");
    assert!(
        params["properties"]["choice"].get("type").is_none(),
        "an enum says enough"
    );
    assert_eq!(
        params["properties"]["nested"]["properties"]["inner"]["type"],
        any
    );
    assert_eq!(params["properties"]["list"]["items"]["type"], any);
    // The spec itself is unchanged.
    assert!(spec.parameters["properties"]["value"].get("type").is_none());
}

#[test]
fn openai_rejects_illegal_names_without_a_map() {
    let err = openai::to_openai(&tool("weather.forecast"), false).unwrap_err();
    assert_snapshot!(err, @"openai: 'weather.forecast' is not a legal OpenAI function name (a-z, A-Z, 0-9, '_', '-', at most 64); map it with NameMap");
    let err = openai::from_openai(&json!({"type": "function", "function": {"description": "x"}}))
        .unwrap_err();
    assert_snapshot!(err, @"openai: function.name is missing");
}

#[test]
fn openai_aliases_are_legal_unique_and_reversible() {
    // Names from real catalogs: dots, collisions after mapping, 200-character ids.
    let long_a = format!("vtex_{}", "a".repeat(120));
    let long_b = format!("vtex_{}b", "a".repeat(120));
    let names = [
        "math.factorial",
        "math_factorial",
        "math-factorial",
        "a.b.c",
        "a_b.c",
        "a_b_c",
        long_a.as_str(),
        long_b.as_str(),
    ];
    let map = openai::NameMap::new(names);
    let mut seen = std::collections::HashSet::new();
    for n in names {
        let alias = map.alias(n).unwrap();
        assert!(openai::is_legal(alias), "{alias}");
        assert!(seen.insert(alias.to_owned()), "duplicate alias {alias}");
        assert_eq!(map.original(alias), Some(n));
    }
    // Legal names keep themselves; the mapping does not depend on order.
    assert_eq!(map.alias("math_factorial"), Some("math_factorial"));
    let reversed = openai::NameMap::new(names.iter().rev());
    for n in names {
        assert_eq!(map.alias(n), reversed.alias(n));
    }
}

#[test]
fn mcp_output() {
    let out: Vec<Value> = sample::catalog().iter().map(mcp::to_mcp).collect();
    assert_json_snapshot!(out);
}

#[test]
fn mcp_round_trip() {
    for spec in sample::catalog() {
        let back = mcp::from_mcp(&mcp::to_mcp(&spec)).unwrap();
        assert_eq!(back.name, spec.name);
        assert_eq!(back.title, spec.title);
        assert_eq!(back.description, spec.description);
        assert_eq!(back.parameters, spec.parameters);
        assert_eq!(back.output_schema, spec.output_schema);
        assert_eq!(back.metadata.read_only, spec.metadata.read_only);
        assert_eq!(back.metadata.destructive, spec.metadata.destructive);
        assert_eq!(back.metadata.idempotent, spec.metadata.idempotent);
        assert_eq!(back.metadata.open_world, spec.metadata.open_world);
    }
}

#[test]
fn manifest_output() {
    let out: Vec<manifest::ToolDefinition> = sample::catalog()
        .iter()
        .map(manifest::to_definition)
        .collect();
    assert_json_snapshot!(out);
}

#[test]
fn manifest_round_trip() {
    for spec in sample::catalog() {
        let def = manifest::to_definition(&spec);
        let text = serde_json::to_string(&def).unwrap();
        let back = manifest::from_definition(&serde_json::from_str(&text).unwrap()).unwrap();
        assert_eq!(back.name, spec.name);
        assert_eq!(back.category, spec.category);
        assert_eq!(back.tags, spec.tags);
        assert_eq!(back.examples, spec.examples);
        assert_eq!(back.parameters, spec.parameters);
        let (m, b) = (&spec.metadata, &back.metadata);
        assert_eq!(
            (
                m.enabled_by_default,
                m.requires_approval,
                m.timeout_seconds,
                m.rate_limit_per_minute,
                m.cost_estimate,
                m.long_running,
                m.idempotent
            ),
            (
                b.enabled_by_default,
                b.requires_approval,
                b.timeout_seconds,
                b.rate_limit_per_minute,
                b.cost_estimate,
                b.long_running,
                b.idempotent
            ),
        );
    }
}

#[test]
fn manifest_reads_the_protocol_example() {
    let def: manifest::ToolDefinition = serde_json::from_value(json!({
        "name": "spawn_coding_agent",
        "description": "Spawn a coding agent to execute a software engineering task",
        "category": "agent_lifecycle",
        "parameters": {"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]},
        "metadata": {"enabled_by_default": true, "requires_approval": false, "timeout_seconds": 30,
                     "rate_limit_per_minute": 10, "cost_estimate": "high", "long_running": true,
                     "idempotent": false, "tags": ["coding"],
                     "examples": [{"description": "Fix a bug", "input": {"task": "Fix it"}}]}
    }))
    .unwrap();
    let spec = manifest::from_definition(&def).unwrap();
    assert_eq!(
        spec.summary,
        "Spawn a coding agent to execute a software engineering task"
    );
    assert_eq!(spec.metadata.cost_estimate, toolscout_spec::Cost::High);
    assert!(spec.metadata.long_running);
}

fn file_info() -> FileInfo {
    let at = Utc.with_ymd_and_hms(2024, 5, 14, 13, 44, 0).unwrap();
    FileInfo {
        bundle_id: Uuid::from_u128(0x018f_af50_b7b6_7a01_9a05_a22a_6e0a_f101),
        tool_id: Some(Uuid::from_u128(0x018f_af50_b7b6_7a01_9a05_a22a_6e0a_f102)),
        tool_type: ToolType::Native,
        implementation: json!({"func": "read_file"}),
        is_enabled: true,
        is_built_in: true,
        created_at: at,
        modified_at: at,
    }
}

#[test]
fn tool_file_output() {
    let file = ToolFile::from_spec(&tool("read_file"), file_info());
    assert_json_snapshot!(file);
}

#[test]
fn tool_file_round_trip() {
    for spec in sample::catalog() {
        let file = ToolFile::from_spec(&spec, file_info());
        let text = serde_json::to_string_pretty(&file).unwrap();
        let back: ToolFile = serde_json::from_str(&text).unwrap();
        let mut expected = spec.clone();
        expected.version = Some("1".to_owned());
        assert_eq!(back.to_spec().unwrap(), expected);
    }
}

#[test]
fn tool_file_reads_the_spec_example() {
    // The example of the tools spec, as written there (type "go" reads as native).
    let file: ToolFile = serde_json::from_value(json!({
        "schemaVersion": "xyz",
        "bundleID": "018faf50-b7b6-7a01-9a05-a22a6e0af101",
        "slug": "weather",
        "version": "v2",
        "displayName": "Weather report",
        "description": "Fetch current weather for a city",
        "type": "go",
        "isEnabled": true,
        "isBuiltIn": false,
        "argSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
        "outputSchema": {"type": "object"},
        "impl": {"goFunc": "github.com/acme/agent/tools.Weather"},
        "createdAt": "2024-05-14T13:44:00Z",
        "modifiedAt": "2024-06-01T09:17:10Z"
    }))
    .unwrap();
    assert_eq!(file.tool_type, ToolType::Native);
    let spec = file.to_spec().unwrap();
    assert_eq!(spec.name, "weather");
    assert_eq!(spec.summary, "Fetch current weather for a city");
    assert_eq!(spec.title.as_deref(), Some("Weather report"));
    assert_eq!(spec.version.as_deref(), Some("v2"));
}

#[test]
fn tool_file_bad_labels() {
    let mut file = ToolFile::from_spec(&tool("read_file"), file_info());
    file.slug = "read_file".into();
    assert_snapshot!(file.to_spec().unwrap_err(), @r#"invalid slug "read_file": character '_' at position 5 is not allowed (use letters, digits and '-')"#);
    file.slug = "read-file".into();
    file.version = "v 2".into();
    assert_snapshot!(file.to_spec().unwrap_err(), @r#"invalid version "v 2": character ' ' at position 2 is not allowed (use letters, digits, '-' and '.')"#);
}

#[test]
fn jsonl_output() {
    let lines: Vec<String> = sample::catalog().iter().map(jsonl::to_line).collect();
    assert_snapshot!(lines.join("\n"));
}

/// A line says which API its tool belongs to (#41): written with `to_value_in`, read back
/// by `bundle_of`; a blank `bundle` is none.
#[test]
fn jsonl_bundle_round_trip() {
    use toolscout_spec::adapters::jsonl::{LineBundle, bundle_of, to_value_in};
    let spec = ToolSpec::builder("get_trivia", "A fact about a number.")
        .build()
        .unwrap();
    let bundle = LineBundle {
        name: "Numbers API".to_owned(),
        description: Some("Facts about numbers and dates".to_owned()),
    };
    let line = to_value_in(&spec, &bundle);
    assert_snapshot!(line.to_string(), @r#"{"name":"get_trivia","description":"A fact about a number.","parameters":{"type":"object","properties":{}},"bundle":"Numbers API","bundle_description":"Facts about numbers and dates"}"#);
    assert_eq!(bundle_of(&line), Some(bundle));
    assert_eq!(jsonl::from_value(&line).unwrap().name, spec.name);
    assert_eq!(
        bundle_of(&serde_json::json!({"name": "x", "bundle": "  "})),
        None
    );
    let bare = LineBundle {
        name: "github".to_owned(),
        description: None,
    };
    assert_eq!(bundle_of(&to_value_in(&spec, &bare)), Some(bare));
}

#[test]
fn jsonl_round_trip() {
    for spec in sample::catalog() {
        let back = jsonl::from_line(&jsonl::to_line(&spec), 1).unwrap();
        assert_eq!(back.name, spec.name);
        assert_eq!(back.description, spec.description);
        assert_eq!(back.parameters, spec.parameters);
        assert_eq!(back.utterances, spec.utterances);
    }
    let asked = ToolSpec::builder("get_weather", "Current weather for a city.")
        .utterance("will it rain in Paris tomorrow?")
        .utterance("how cold is it in Oslo")
        .build()
        .unwrap();
    let line = jsonl::to_line(&asked);
    assert!(
        line.ends_with(
            r#""utterances":["will it rain in Paris tomorrow?","how cold is it in Oslo"]}"#
        ),
        "{line}"
    );
    assert_eq!(
        jsonl::from_line(&line, 1).unwrap().utterances,
        asked.utterances
    );
}

#[test]
fn jsonl_reads_real_lines() {
    let text = concat!(
        r#"{"name": "math.hypot", "description": "Calculate the Euclidean norm, sqrt(sum(squares)), the length of the vector from the origin to point (x, y) which is the hypotenuse of the right triangle.", "parameters": {"type": "dict", "properties": {"x": {"type": "integer"}}, "required": ["x"]}, "source": "bfcl_v4:simple_python"}"#,
        "\n\n",
        r#"{"name": "PDF&URLTool", "description": "Interact with PDFs. Ask questions.", "parameters": {"type": "object", "properties": {}}, "source": "metatool:plugin_des"}"#,
        "\n",
        r#"{"name": "1forge_com__get__quotes", "description": "Get quotes for all symbols. Get quotes", "parameters": {"type": "object", "properties": {}}, "meta": {"api": "1Forge Finance APIs", "tags": ["forex", "finance"]}}"#,
        "\n",
        r#"{"name": "broken", "description": 1, "parameters": {"type": "object", "properties": {"a": {}}, "required": ["b"]}}"#,
        "\n",
        "{not json\n",
        r#"{"name": "天气查询", "description": "查询城市天气。返回温度。", "parameters": {"type": "object", "properties": {}}}"#,
        "\n",
    );
    let (specs, errors) = jsonl::from_str(text);
    let summary: Vec<String> = specs
        .iter()
        .map(|s| {
            format!(
                "{} | {} | {:?} | {:?}",
                s.name, s.summary, s.category, s.tags
            )
        })
        .collect();
    assert_snapshot!(summary.join("\n"), @r#"
    math.hypot | Calculate the Euclidean norm, sqrt(sum(squares)), the length of the vector from the origin to point (x, y) which is the hypotenuse of the right triangle. | None | []
    PDF_URLTool | Interact with PDFs. | None | []
    1forge_com__get__quotes | Get quotes for all symbols. | Some("1Forge Finance APIs") | ["forex", "finance"]
    ____ | 查询城市天气。 | None | []
    "#);
    let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_snapshot!(errors.join("\n"), @r#"
    jsonl line 5: tool 'broken': invalid parameters: "required" names 'b', which is not in "properties"
    jsonl line 6: key must be a string at line 1 column 2
    "#);
    assert_eq!(specs[0].parameters["type"], "object");
}

#[test]
fn every_format_keeps_the_name() {
    let spec: ToolSpec = tool("get_weather");
    assert_eq!(mcp::to_mcp(&spec)["name"], "get_weather");
    assert_eq!(manifest::to_definition(&spec).name, "get_weather");
    assert_eq!(
        openai::to_openai(&spec, false).unwrap()["function"]["name"],
        "get_weather"
    );
    assert_eq!(jsonl::to_value(&spec)["name"], "get_weather");
}

#[test]
fn a_manifest_tool_with_fifty_thousand_required_properties_reads_in_linear_time() {
    // Each property was looked up in the `required` list: quadratic, so a 1 MB manifest
    // took over a minute to show one tool's usage line (#36, timed with fuzz/manifest).
    let names: Vec<String> = (0..50_000).map(|i| format!("p{i}")).collect();
    let properties: serde_json::Map<String, Value> =
        names.iter().map(|n| (n.clone(), json!({}))).collect();
    let def: manifest::ToolDefinition = serde_json::from_value(json!({
        "name": "wide",
        "description": "A tool with many parameters.",
        "parameters": {"type": "object", "properties": properties, "required": names},
    }))
    .unwrap();
    let start = std::time::Instant::now();
    let spec = manifest::from_definition(&def).unwrap();
    assert!(spec.usage().starts_with("wide(p0=…, p1=…, "));
    assert_eq!(spec.level3().parameters["p49999"]["required"], true);
    let strict = openai::to_openai(&spec, true).unwrap();
    assert_eq!(
        strict["function"]["parameters"]["properties"]["p7"],
        json!({})
    );
    let elapsed = start.elapsed();
    assert!(elapsed.as_secs() < 10, "{elapsed:?}");
}
