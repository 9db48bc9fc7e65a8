//! Snapshots of what a model sees: every level of every sample tool, as JSON and text.

use insta::{assert_json_snapshot, assert_snapshot};
use toolscout_spec::{Disclosure, Level, ToolSpec, sample};

use crate::tool;

/// Every sample tool at `level`, in text form, one block per tool.
fn check_text(level: Level) -> String {
    sample::catalog()
        .iter()
        .map(|t| t.disclose(level).to_text())
        .collect::<Vec<_>>()
        .join("\n---\n")
}

#[test]
fn level1_text() {
    assert_snapshot!(check_text(Level::L1));
}

#[test]
fn level2_text() {
    assert_snapshot!(check_text(Level::L2));
}

#[test]
fn level3_text() {
    assert_snapshot!(check_text(Level::L3));
}

#[test]
fn levels_json() {
    for level in Level::ALL {
        let all: Vec<_> = sample::catalog()
            .iter()
            .map(|t| t.disclose(level).to_json())
            .collect();
        assert_json_snapshot!(format!("level{}_json", level.number()), all);
    }
}

#[test]
fn parameter_detail() {
    let spec = tool("search_files");
    let detail = spec.parameter("max_results").unwrap();
    assert_json_snapshot!(detail, @r#"
    {
      "tool": "search_files",
      "parameter": "max_results",
      "type": "integer",
      "description": "Stop after this many matches",
      "required": false,
      "default": 100,
      "constraints": {
        "minimum": 1,
        "maximum": 10000
      }
    }
    "#);
    assert_snapshot!(Disclosure::Parameter(detail).to_text(), @r"
    search_files.max_results (integer, optional)
    Stop after this many matches
    Default: 100
    minimum: 1
    maximum: 10000
    ");
    let units = tool("get_weather").parameter("units").unwrap();
    assert_snapshot!(Disclosure::Parameter(units).to_text(), @r#"
    get_weather.units (string, optional)
    Temperature units
    Default: "celsius"
    One of: "celsius", "fahrenheit"
    "#);
}

#[test]
fn unknown_parameter_names_the_real_ones() {
    let err = tool("get_weather").parameter("town").unwrap_err();
    assert_snapshot!(err, @"tool 'get_weather' has no parameter 'town'; its parameters are: city, units");
    let no_params = toolscout_spec::ToolSpec::builder("ping", "Check the server is up")
        .build()
        .unwrap();
    assert_snapshot!(no_params.parameter("x").unwrap_err(), @"tool 'ping' has no parameter 'x'; its parameters are: (none)");
}

#[test]
fn deeper_levels_cost_more_tokens() {
    for spec in sample::catalog() {
        let [l1, l2, l3] = Level::ALL.map(|l| spec.disclose(l).tokens());
        assert!(
            l1 < l2 && l2 < l3,
            "{}: tokens per level {l1} {l2} {l3}",
            spec.name
        );
    }
}

#[test]
fn output_is_reproducible() {
    let a: Vec<String> = sample::catalog()
        .iter()
        .map(|t| t.disclose(Level::L3).to_json().to_string())
        .collect();
    let b: Vec<String> = sample::catalog()
        .iter()
        .map(|t| t.disclose(Level::L3).to_json().to_string())
        .collect();
    assert_eq!(a, b);
    // Schema order is kept: read_file's parameters come in the order they were written.
    assert_eq!(
        tool("read_file").level2().parameters,
        ["file_path", "offset", "limit"]
    );
}

#[test]
fn usage_is_generated_from_the_schema() {
    let usages: Vec<String> = sample::catalog().iter().map(|t| t.usage()).collect();
    assert_snapshot!(usages.join("\n"), @r#"
    read_file(file_path="…", offset=1)
    write_file(file_path="…", content="…", mode="overwrite")
    search_files(pattern="…", path=".", recursive=true, max_results=100)
    web_search(query="…", max_results=5, language="en")
    get_weather(city="…", units="celsius")
    weather.forecast(city="…", days=3)
    spawn_coding_agent(task="…", runner_type="claude-code", timeout_minutes=30)
    "#);
}

#[test]
fn regression_object_parameter_keeps_its_required_flag() {
    let spec = toolscout_spec::ToolSpec::builder("post_json", "Send a JSON body")
        .parameters(serde_json::json!({
            "type": "object",
            "properties": {
                "body": {
                    "type": "object",
                    "properties": {"id": {"type": "integer"}},
                    "required": ["id"]
                }
            },
            "required": ["body"]
        }))
        .build()
        .unwrap();
    let l3 = spec.level3();
    assert_eq!(l3.parameters["body"]["required"], true);
    assert_eq!(
        l3.parameters["body"]["required_fields"],
        serde_json::json!(["id"])
    );
    assert!(
        spec.disclose(Level::L3)
            .to_text()
            .contains("- body (object, required)")
    );
}

/// Regression (#63): an object parameter's fields, and an array's items' fields, are
/// listed at level 3 (an imported POST's `body` said only "object, required").
#[test]
fn level3_lists_an_object_parameter_s_fields() {
    let spec = ToolSpec::builder("createOrder", "Place an order")
        .parameters(serde_json::json!({
            "type": "object",
            "properties": {
                "body": {
                    "type": "object",
                    "description": "The order.",
                    "properties": {
                        "customer": {"type": "string", "description": "Who orders."},
                        "lines": {"type": "array", "items": {
                            "type": "object",
                            "properties": {
                                "sku": {"type": "string"},
                                "quantity": {"type": "integer", "minimum": 1}
                            },
                            "required": ["sku"]
                        }},
                        "delivery": {"type": "object", "properties": {
                            "date": {"type": "string", "format": "date"}
                        }}
                    },
                    "required": ["customer", "lines"]
                },
                "dry_run": {"type": "boolean"}
            },
            "required": ["body"]
        }))
        .build()
        .unwrap();
    insta::assert_snapshot!(spec.disclose(Level::L3).to_text(), @r#"
    # createOrder
    Place an order
    Usage: createOrder(body={…})
    Parameters:
    - body (object, required): The order.
      - customer (string, required): Who orders.
      - lines (array, required, items object)
        - sku (string, required)
        - quantity (integer, minimum 1)
      - delivery (object)
        - date (string, format "date")
    - dry_run (boolean)
    "#);
}

/// Fields past the budget are counted, not listed.
#[test]
fn level3_keeps_nested_fields_within_its_budget() {
    let fields: serde_json::Map<String, serde_json::Value> = (0..200)
        .map(|i| {
            (
                format!("field_{i}"),
                serde_json::json!({"type": "string", "description": "One of many fields of a large body."}),
            )
        })
        .collect();
    let spec = ToolSpec::builder("bulk", "Send a large body")
        .parameters(serde_json::json!({
            "type": "object",
            "properties": {"body": {"type": "object", "properties": fields}}
        }))
        .build()
        .unwrap();
    let text = spec.disclose(Level::L3).to_text();
    let listed = text.lines().filter(|l| l.starts_with("  - field_")).count();
    assert!((10..200).contains(&listed), "{text}");
    assert!(
        text.contains(&format!(
            "  - … {} more field(s): describe the parameter 'body' for them",
            200 - listed
        )),
        "{text}"
    );
    assert!(spec.disclose(Level::L3).tokens() < 600, "{text}");
}
