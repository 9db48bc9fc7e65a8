//! Importing tools and managing bundles and tools.

use insta::assert_snapshot;

use crate::Env;

const TOOLS: &str = r#"{"name": "math.factorial", "description": "Calculate the factorial of a given number.", "parameters": {"type": "object", "properties": {"number": {"type": "integer", "description": "The number."}}, "required": ["number"]}}
{"name": "get_weather", "description": "Current weather for a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
"#;

fn imported() -> Env {
    let env = Env::new();
    let file = env.path().join("tools.jsonl");
    std::fs::write(&file, TOOLS).unwrap();
    let out = env.check(&[
        "import",
        "jsonl",
        file.to_str().unwrap(),
        "--bundle",
        "demo",
    ]);
    assert_eq!(
        out,
        "imported 2 tool(s) into bundle 'demo' (new) (spec only: found and described, not called)\n"
    );
    env
}

#[test]
fn imported_tools_are_found_described_and_not_called() {
    let env = imported();
    assert_snapshot!(env.check(&["list", "--bundle", "demo"]));
    assert_snapshot!(env.check(&["search", "factorial"]));
    assert_snapshot!(env.check(&["describe", "math.factorial", "--level", "3"]));
    assert_snapshot!(env.all(&["call", "math.factorial", "--number", "5"]));
    assert_snapshot!(env.all(&["call", "math.factorial", "--args", r#"{"number": "five"}"#]));
    let again = env.path().join("tools.jsonl");
    assert_snapshot!(env.check(&[
        "import",
        "jsonl",
        again.to_str().unwrap(),
        "--bundle",
        "demo"
    ]));
}

#[test]
fn bundles_are_listed_disabled_exported_and_imported() {
    let env = imported();
    assert_snapshot!(
        env.check(&["bundle", "list"])
            .replace(env.path().to_str().unwrap(), "[TMP]")
    );
    assert!(
        env.check(&["bundle", "disable", "demo"])
            .starts_with("disabled bundle 'demo'")
    );
    assert_snapshot!(env.check(&["list", "--include-disabled", "--bundle", "demo"]));
    assert!(
        env.check(&["bundle", "enable", "demo"])
            .starts_with("enabled bundle 'demo'")
    );
    let zip = env.path().join("demo.zip");
    env.check(&[
        "bundle",
        "export",
        "demo",
        "--output",
        zip.to_str().unwrap(),
    ]);
    let other = Env::new();
    assert_snapshot!(other.check(&["bundle", "import", zip.to_str().unwrap()]));
    assert_snapshot!(other.check(&["list", "--bundle", "demo"]));
    assert!(
        env.check(&["bundle", "delete", "demo"])
            .starts_with("deleted bundle 'demo'")
    );
    assert_snapshot!(env.check(&["describe", "get_weather", "--level", "1"]));
    assert_snapshot!(env.check(&["bundle", "delete", "files"]));
}

#[test]
fn tools_round_trip_through_tool_json() {
    let env = imported();
    let file = env.path().join("tool.json");
    let json = env.check(&["tool", "get", "get_weather"]);
    std::fs::write(
        &file,
        json.replace(r#""version": "1""#, r#""version": "2""#),
    )
    .unwrap();
    assert_snapshot!(env.check(&["tool", "put", file.to_str().unwrap()]));
    let current: serde_json::Value =
        serde_json::from_str(&env.check(&["tool", "get", "get_weather"])).unwrap();
    assert_eq!(current["version"], "2");
    assert_snapshot!(env.check(&["tool", "delete", "get_weather", "--tool-version", "1"]));
    assert_snapshot!(env.check(&["tool", "disable", "clock"]));
    assert_snapshot!(env.all(&["call", "clock", "--action", "now"]));
    assert_snapshot!(env.check(&["tool", "delete", "clock"]));
}
