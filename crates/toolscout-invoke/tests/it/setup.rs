//! Building blocks: outcomes on the wire, secrets, tools from `tool.json`.

use serde_json::json;
use toolscout_invoke::{ErrorKind, Implementation, InvokableTool, Outcome, SecretStore, ToolError};
use toolscout_spec::adapters::tool_file::ToolFile;
use toolscout_spec::name::QualifiedName;

#[test]
fn outcomes_round_trip() {
    for o in [
        Outcome::Ok(json!({"a": 1})),
        Outcome::Ok(json!(null)),
        Outcome::Err(
            ToolError::new(ErrorKind::RateLimited, "slow down")
                .with_details(json!({"retry_after_seconds": 3})),
        ),
    ] {
        let text = serde_json::to_string(&o).unwrap();
        assert_eq!(serde_json::from_str::<Outcome>(&text).unwrap(), o, "{text}");
    }
    assert_eq!(
        serde_json::to_string(&Outcome::Ok(json!(null))).unwrap(),
        r#"{"ok":true,"value":null}"#
    );
    assert!(serde_json::from_str::<Outcome>(r#"{"ok":false}"#).is_err());
}

#[test]
fn secrets_from_vars_and_file() {
    let vars = [
        ("TS_SECRET_API_KEY".to_owned(), "k1".to_owned()),
        ("OTHER".to_owned(), "x".to_owned()),
    ];
    let s = SecretStore::from_vars("TS_SECRET_", vars);
    assert_eq!(s.names().collect::<Vec<_>>(), ["API_KEY"]);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secrets.json");
    std::fs::write(&path, r#"{"TOKEN": "tok-very-secret"}"#).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        // A file others may read is refused (and its content not shown).
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = SecretStore::from_file(&path).unwrap_err().to_string();
        assert!(err.contains("chmod 600"), "{err}");
        assert!(!err.contains("tok-very-secret"), "{err}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let s = SecretStore::from_file(&path).unwrap();
    assert_eq!(s.get("TOKEN"), Some("tok-very-secret"));
    assert!(!format!("{s:?}").contains("tok-very-secret"));

    std::fs::write(&path, r#"{"TOKEN": "tok-very-secret", "N": 5}"#).unwrap();
    let err = SecretStore::from_file(&path).unwrap_err().to_string();
    assert!(err.contains("the value of 'N' is not a string"), "{err}");
    std::fs::write(&path, r#"{"TOKEN": "tok-very-secret""#).unwrap();
    let err = SecretStore::from_file(&path).unwrap_err().to_string();
    assert!(!err.contains("tok-very-secret"), "{err}");
}

#[test]
fn a_secrets_file_grants_tools_and_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secrets.json");
    std::fs::write(
        &path,
        r#"{"K": {"value": "v", "hosts": ["api.example.com"], "tools": ["t1"]}, "FREE": "f"}"#,
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let s = SecretStore::from_file(&path).unwrap();
    assert!(s.may_use("K", "t1", None, "elsewhere.test", 443));
    assert!(s.may_use("K", "t2", None, "api.example.com", 443));
    assert!(!s.may_use("K", "t2", None, "api.example.com", 8443));
    assert!(!s.may_use("K", "t2", None, "evil.test", 443));
    assert!(s.may_use("FREE", "t2", None, "evil.test", 443));
    // A grant by bare name is for the operator's tools of that name, never a tenant's
    // (issue 61); a qualified one for that one tool.
    let ops = QualifiedName::new(None, "lib", "t1");
    let acme = QualifiedName::new(Some("acme"), "lib", "t1");
    assert!(s.may_use("K", "t1", Some(&ops), "elsewhere.test", 443));
    assert!(!s.may_use("K", "t1", Some(&acme), "elsewhere.test", 443));
    let mut q = SecretStore::default();
    q.insert("K", "v");
    q.grant_tool("K", "acme:lib/t1");
    assert!(q.may_use("K", "t1", Some(&acme), "elsewhere.test", 443));
    assert!(!q.may_use("K", "t1", Some(&ops), "elsewhere.test", 443));
    assert!(!q.may_use("K", "t1", None, "elsewhere.test", 443));
    std::fs::write(&path, r#"{"K": {"value": "v", "host": ["x"]}}"#).unwrap();
    let err = SecretStore::from_file(&path).unwrap_err().to_string();
    assert!(err.contains("unknown member \"host\""), "{err}");
}

#[test]
fn redaction_covers_encoded_forms() {
    let mut s = SecretStore::default();
    s.insert("K", "a b/\"c\"");
    assert_eq!(
        s.redact("raw a b/\"c\" url a%20b%2F%22c%22 json a b/\\\"c\\\""),
        "raw [REDACTED] url [REDACTED] json [REDACTED]"
    );
}

#[test]
fn tools_from_tool_files() {
    let file: ToolFile = serde_json::from_value(json!({
        "bundleID": "018faf50-b7b6-7a01-9a05-a22a6e0af101",
        "slug": "weather",
        "version": "v2",
        "displayName": "Weather report",
        "description": "Fetch current weather for a city",
        "type": "http",
        "isEnabled": false,
        "argSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "impl": {
            "method": "GET",
            "urlTemplate": "https://api.weatherapi.com/v1/current.json?q=${city}&key=${WEATHER_API_KEY}",
            "headers": {"User-Agent": "MyApp/${version}"},
            "bodyTemplate": "",
            "successCodes": [200],
            "timeoutMs": 10000,
            "responseEncoding": "json",
            "extractExpr": "$.current.condition.text",
            "errorMode": "fail"
        },
        "createdAt": "2024-05-14T13:44:00Z",
        "modifiedAt": "2024-06-01T09:17:10Z"
    }))
    .unwrap();
    let tool = InvokableTool::from_tool_file(&file).unwrap();
    assert_eq!(tool.name(), "weather");
    assert!(!tool.enabled);
    let Implementation::Http(http) = &tool.implementation else {
        panic!("expected an HTTP tool");
    };
    assert_eq!(http.timeout_ms, Some(10_000));
    assert_eq!(
        tool.implementation.to_json()["urlTemplate"],
        file.implementation["urlTemplate"]
    );

    let mut native = file.clone();
    native.tool_type = toolscout_spec::adapters::tool_file::ToolType::Native;
    native.implementation = json!({"func": "weather"});
    let tool = InvokableTool::from_tool_file(&native).unwrap();
    assert_eq!(tool.implementation.to_json(), json!({"func": "weather"}));
    native.implementation = json!({"method": "GET"});
    let err = InvokableTool::from_tool_file(&native)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("tool 'weather': invalid impl block: expected {\"func\": \"<name>\"}"),
        "{err}"
    );
}
