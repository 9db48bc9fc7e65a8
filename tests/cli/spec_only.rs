//! Spec-only tools (imported from a JSONL tool list: a spec, no implementation): every
//! listing says so, and a call fails with its own kind, `spec_only`.

use insta::assert_snapshot;
use serde_json::{Value, json};

use crate::Env;
use crate::serve::{http, serve};

/// Imports one spec-only tool, `get_weather {city}`, into the bundle `bfcl`.
fn import_weather(env: &Env) {
    let file = env.path().join("tools.jsonl");
    let line = json!({
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    });
    std::fs::write(&file, format!("{line}\n")).unwrap();
    let out = env.check(&[
        "import",
        "jsonl",
        file.to_str().unwrap(),
        "--bundle",
        "bfcl",
    ]);
    assert!(out.starts_with("imported 1 tool(s)"), "{out}");
}

#[test]
fn the_cli_says_a_tool_is_spec_only_and_a_call_fails_with_spec_only() {
    let env = Env::new();
    import_weather(&env);
    assert_snapshot!(env.check(&["list", "--bundle", "bfcl"]), @"get_weather — Current weather for a city.  [spec only]");
    let listed: Value =
        serde_json::from_str(&env.check(&["--json", "list", "--bundle", "bfcl"])).unwrap();
    assert_eq!(listed["tools"][0]["spec_only"], json!(true), "{listed}");
    assert!(
        env.check(&["search", "weather for a city"])
            .lines()
            .any(|l| l.starts_with("get_weather") && l.ends_with("[spec only]"))
    );
    let described: Value =
        serde_json::from_str(&env.check(&["--json", "describe", "get_weather"])).unwrap();
    assert_eq!(described["spec_only"], json!(true), "{described}");
    let noted = env.output(&["describe", "get_weather"]);
    let stderr = String::from_utf8(noted.stderr).unwrap();
    assert!(stderr.contains("'get_weather' is spec only"), "{stderr}");
    // The arguments are still checked first.
    let bad = env.all(&["call", "get_weather", "--args", "{}"]);
    assert!(bad.contains("invalid_arguments"), "{bad}");
    assert_snapshot!(env.all(&["call", "get_weather", "--args", r#"{"city": "Paris"}"#]));
}

#[test]
fn serve_lists_spec_only_tools_as_such_over_http_and_json_rpc() {
    let env = Env::new();
    import_weather(&env);
    let (_server, addr, _) = serve(&env, &["--token", "s3cret"]);
    let auth = ["Authorization: Bearer s3cret"];

    let (status, body) = http(&addr, "GET", "/api/v1/tools", &[], "");
    assert_eq!(status, 200, "{body}");
    let manifest: Value = serde_json::from_str(&body).unwrap();
    let tool = |name: &str, tools: &Value| {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {tools}"))
    };
    let weather = tool("get_weather", &manifest["tools"]);
    assert_eq!(weather["metadata"]["spec_only"], json!(true), "{weather}");
    let read = tool("read_file", &manifest["tools"]);
    assert!(read["metadata"].get("spec_only").is_none(), "{read}");

    let list = r#"{"jsonrpc":"2.0","method":"tools/list","id":1}"#;
    let (status, body) = http(&addr, "POST", "/rpc", &auth, list);
    assert_eq!(status, 200, "{body}");
    let listed: Value = serde_json::from_str(&body).unwrap();
    let weather = tool("get_weather", &listed["result"]["tools"]);
    assert_snapshot!(serde_json::to_string_pretty(&weather).unwrap());

    let call = r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris"}},"id":2}"#;
    let (status, body) = http(&addr, "POST", "/rpc", &auth, call);
    assert_eq!(status, 200, "{body}");
    let called: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        called["result"]["error"]["kind"],
        json!("spec_only"),
        "{body}"
    );
}

#[test]
fn an_mcp_client_of_serve_expose_all_sees_a_spec_only_tool_as_such() {
    use rmcp::ServiceExt as _;
    use rmcp::model::CallToolRequestParams;

    let env = Env::new();
    import_weather(&env);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let transport = crate::mcp::stdio_server(&env, &["--expose", "all"]);
        let client = ().serve(transport).await.unwrap();
        let tools = client.list_all_tools().await.unwrap();
        let weather = tools
            .iter()
            .find(|t| t.name == "get_weather")
            .expect("get_weather is listed");
        let description = weather.description.as_deref().unwrap_or_default();
        assert!(description.starts_with("Spec only:"), "{description}");
        let meta = serde_json::to_value(&weather.meta).unwrap();
        assert_eq!(meta["toolscout/spec_only"], json!(true), "{meta}");
        let read = tools.iter().find(|t| t.name == "read_file").unwrap();
        assert!(read.meta.is_none());

        let mut params = CallToolRequestParams::new("get_weather");
        params.arguments = json!({"city": "Paris"}).as_object().cloned();
        let called = client.call_tool(params).await.unwrap();
        assert_eq!(called.is_error, Some(true));
        assert_eq!(
            called.structured_content.unwrap()["error"]["kind"],
            json!("spec_only")
        );
        client.cancel().await.unwrap();
    });
}
