//! `toolscout lint` on the built-in tools and on a catalog with mistakes.

use insta::assert_snapshot;

use crate::Env;

#[test]
fn builtin_tools_are_clean() {
    assert_snapshot!(Env::new().check(&["lint"]), @"6 tools checked; no issue");
}

#[test]
fn lint_reports_clashes_duplicates_and_bad_schemas() {
    let env = Env::new();
    let long = "a".repeat(70);
    let tools = [
        r#"{"name": "get_weather", "description": "Current weather conditions for a city, with temperature and wind.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}"#.to_owned(),
        r#"{"name": "weather.get", "description": "Current weather conditions for a city, with temperature and wind speed.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}"#.to_owned(),
        r#"{"name": "Get_Weather", "description": "Something else entirely.", "parameters": {"type": "object", "properties": {"days": {"type": "array"}}}}"#.to_owned(),
        format!(r#"{{"name": "{long}", "description": "A tool with a long name.", "parameters": {{"type": "object", "properties": {{}}}}}}"#),
        r#"{"name": "petrol_emissions", "description": "Estimate a car's CO2 output. Uses EPA factors for petrol engines and the distance driven.", "parameters": {"type": "object", "properties": {}}}"#.to_owned(),
        r#"{"name": "ev_emissions", "description": "Estimate a car's CO2 output. For electric cars: grid mix data, battery size and charging losses.", "parameters": {"type": "object", "properties": {}}}"#.to_owned(),
    ];
    let file = env.path().join("tools.jsonl");
    std::fs::write(&file, tools.join("\n")).unwrap();
    env.check(&["import", "jsonl", file.to_str().unwrap()]);
    // The same name in another bundle (an import would qualify it: `other_get_weather`).
    let other = env.path().join("other.json");
    std::fs::write(
        &other,
        serde_json::json!({
            "slug": "get-weather", "version": "1", "name": "get_weather",
            "description": "Current weather conditions for a city, with temperature and wind.",
            "type": "http",
            "argSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            "impl": {"method": "GET", "urlTemplate": "https://weather.example.com/now"}
        })
        .to_string(),
    )
    .unwrap();
    env.check(&["bundle", "put", "other"]);
    env.check(&["tool", "put", other.to_str().unwrap(), "--bundle", "other"]);
    assert_snapshot!(env.all(&["lint"]));
    let json: serde_json::Value = serde_json::from_str(
        &env.output(&["lint", "--json"])
            .stdout
            .iter()
            .map(|b| *b as char)
            .collect::<String>(),
    )
    .unwrap();
    assert_eq!(json["errors"], 3);
}

#[test]
fn lint_warns_when_only_some_tools_have_utterances() {
    let env = Env::new();
    let tool = |name: &str, utterances: &str| {
        format!(
            r#"{{"name": "{name}", "description": "The {name} tool does one thing.", "parameters": {{"type": "object", "properties": {{}}}}{utterances}}}"#
        )
    };
    let asked = r#", "utterances": ["do the thing for me"]"#;
    let all = env.path().join("all.jsonl");
    std::fs::write(
        &all,
        [tool("weather_now", asked), tool("weather_week", asked)].join("\n"),
    )
    .unwrap();
    env.check(&["import", "jsonl", all.to_str().unwrap()]);
    // Every tool of the user's has them (the built-in ones never do): no warning.
    assert_snapshot!(env.check(&["lint"]), @"8 tools checked; missing-examples: 2");
    let some = env.path().join("some.jsonl");
    std::fs::write(
        &some,
        [tool("stock_price", ""), tool("stock_news", "")].join("\n"),
    )
    .unwrap();
    env.check(&["import", "jsonl", some.to_str().unwrap()]);
    assert_snapshot!(env.check(&["lint"]), @r"
    warning[partial-utterances] stock_news, stock_price: 2 of 4 tools have no sample requests while the rest have: search ranks them below the others for requests in a user's words; have `toolscout enrich` write theirs too
    10 tools checked; missing-examples: 4, partial-utterances: 1
    ");
}
