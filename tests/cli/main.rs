//! End-to-end tests of the `toolscout` binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use insta::assert_snapshot;

/// Runs `toolscout ARGS`; returns stdout on success, `error: …` (stderr) on failure.
fn check(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_toolscout"))
        .args(args)
        .output()
        .expect("the toolscout binary runs");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    if out.status.success() {
        stdout
    } else {
        assert!(
            stdout.is_empty(),
            "a failing command printed to stdout: {stdout}"
        );
        format!("exit {}\n{stderr}", out.status.code().unwrap_or(-1))
    }
}

#[test]
fn describe_level3() {
    assert_snapshot!(check(&["describe", "get_weather", "--level", "3"]), @r#"
    # get_weather
    Returns the current temperature, conditions and wind for a city.
    Usage: get_weather(city="…", units="celsius")
    Returns: object: temperature, conditions, wind_kph
    Parameters:
    - city (string, required): City name, optionally with a country code, e.g. Tokyo or Paris,FR
    - units (string, default "celsius", one of: "celsius"|"fahrenheit"): Temperature units
    Examples:
    - get_weather(city="Tokyo") — Weather in Tokyo
    Errors:
    - unknown_city: the city is not found
    "#);
}

#[test]
fn describe_levels_as_json() {
    assert_snapshot!(check(&["describe", "weather.forecast", "--level", "1", "--json"]), @r#"
    {
      "name": "weather.forecast",
      "summary": "Daily weather forecast for a city, up to 14 days"
    }
    "#);
    let l2: serde_json::Value =
        serde_json::from_str(&check(&["--json", "describe", "read_file"])).unwrap();
    assert_eq!(
        l2["parameters"],
        serde_json::json!(["file_path", "offset", "limit"])
    );
}

#[test]
fn describe_parameter() {
    assert_snapshot!(check(&["describe", "read_file", "--parameter", "offset"]), @r"
    read_file.offset (integer, optional)
    Line to start reading from (1-indexed)
    Default: 1
    minimum: 1
    ");
}

#[test]
fn errors_are_clear_and_exit_non_zero() {
    assert_snapshot!(check(&["describe", "get_wether"]), @r"
    exit 1
    error: no tool named 'get_wether'; did you mean: get_weather?
    ");
    assert_snapshot!(check(&["describe", "read_file", "-p", "ofset"]), @r"
    exit 1
    error: tool 'read_file' has no parameter 'ofset'; its parameters are: file_path, offset, limit
    ");
    assert_snapshot!(check(&["describe", "zzzz"]), @r"
    exit 1
    error: no tool named 'zzzz' (try `toolscout list`)
    ");
    let bad_level = check(&["describe", "read_file", "--level", "4"]);
    assert!(bad_level.starts_with("exit 2\n"), "{bad_level}");
    assert!(bad_level.contains("4 is not in 1..=3"), "{bad_level}");
}

#[test]
fn list_and_identity() {
    assert_snapshot!(check(&["list", "--tag", "weather"]), @r"
    get_weather — Current weather conditions for a city
    weather.forecast — Daily weather forecast for a city, up to 14 days
    ");
    let id: serde_json::Value = serde_json::from_str(&check(&["identity", "--json"])).unwrap();
    assert_eq!(id["tools_count"], 7);
    assert_eq!(id["protocol_version"], "1.0");
    let expected = toolscout_spec_id();
    assert_eq!(id["server_id"], expected);
}

fn toolscout_spec_id() -> String {
    toolscout::spec::identity::toolset_id(&toolscout::spec::sample::catalog()).to_string()
}

#[test]
fn export_openai_maps_dotted_names() {
    let out: serde_json::Value =
        serde_json::from_str(&check(&["export", "--format", "openai"])).unwrap();
    let names: Vec<&str> = out
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"weather_forecast"), "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| toolscout::spec::adapters::openai::is_legal(n))
    );
}
