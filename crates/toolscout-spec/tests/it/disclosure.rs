//! Snapshots of what a model sees: every level of every sample tool, as JSON and text.

use insta::{assert_json_snapshot, assert_snapshot};
use toolscout_spec::{Disclosure, Level, sample};

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
