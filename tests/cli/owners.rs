//! Names by owner on a real server (issue 61): a tenant's tool named like the operator's
//! takes over neither the operator's calls, nor its `--approve`, nor its
//! `--secret-tool` grants.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::Env;
use crate::serve::{http, serve_with_env};

const OPERATOR: &str = "op-token-3f9c1e0b7a5d48e2b6c4f0a19d7e3b52";

/// The token of a new tenant `name` of `env`'s catalog.
fn tenant(env: &Env, name: &str) -> String {
    let out = env.check(&["tenant", "add", name]);
    out.lines()
        .find_map(|l| l.strip_prefix("token: "))
        .unwrap_or_else(|| panic!("no token: {out}"))
        .to_owned()
}

/// `tool put` of `tool` (the authoring form) into the operator's bundle `bundle`.
fn put_operator_tool(env: &Env, bundle: &str, tool: &Value) {
    let _ = env.check(&["bundle", "put", bundle]);
    let file = env.path().join("tool.json");
    std::fs::write(&file, tool.to_string()).unwrap();
    let out = env.check(&["tool", "put", file.to_str().unwrap(), "--bundle", bundle]);
    assert!(!out.starts_with("exit"), "{out}");
}

/// A tenant's bundle `slug` holding `tool` (the authoring form), put over REST.
fn put_tenant_tool(addr: &str, token: &str, slug: &str, tool: &Value) {
    let auth = format!("Authorization: Bearer {token}");
    let bundle = "018faf50-b7b6-7a01-9a05-a22a6e0af1c3";
    let (status, body) = http(
        addr,
        "PUT",
        &format!("/tools/bundles/{bundle}"),
        &[&auth],
        &json!({"slug": slug}).to_string(),
    );
    assert_eq!(status, 200, "{body}");
    let uri = format!(
        "/tools/bundles/{bundle}/tools/{}/version/1",
        tool["slug"].as_str().unwrap()
    );
    let (status, body) = http(addr, "PUT", &uri, &[&auth], &tool.to_string());
    assert_eq!(status, 200, "{body}");
}

fn rpc_call(addr: &str, token: &str, name: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": {}}});
    let auth = format!("Authorization: Bearer {token}");
    let (status, reply) = http(addr, "POST", "/rpc", &[&auth], &body.to_string());
    assert_eq!(status, 200, "{reply}");
    serde_json::from_str(&reply).unwrap()
}

/// A recipe `note_time` that writes `file` with `write_file` (which asks approval).
fn note_time(file: &str) -> Value {
    json!({
        "slug": "note-time", "version": "1", "name": "note_time",
        "description": "Notes the time in a file.",
        "type": "recipe",
        "impl": {"steps": [{"id": "w", "tool": "write_file",
            "args": {"file_path": file, "content": "noted"}}]}
    })
}

#[test]
fn a_tenant_s_tool_named_like_the_operator_s_takes_over_nothing() {
    // Regression: the tenant's newer `note_time` answered the operator's call, and ran
    // pre-approved by the operator's `--approve note_time`, writing a file it chose.
    let env = Env::new();
    put_operator_tool(&env, "ops", &note_time("operator.txt"));
    let acme = tenant(&env, "acme");
    let (_server, addr, _) =
        serve_with_env(&env, &["--token", OPERATOR, "--approve", "note_time"], &[]);
    put_tenant_tool(&addr, &acme, "tools", &note_time("tenant.txt"));
    // The operator's bare name is its own tool, pre-approved.
    let out = rpc_call(&addr, OPERATOR, "note_time");
    assert_eq!(out["result"]["ok"], true, "{out}");
    assert!(env.workspace().join("operator.txt").exists());
    assert!(!env.workspace().join("tenant.txt").exists());
    // The tenant's tool, by its qualified name, is not covered by the bare approval.
    let out = rpc_call(&addr, OPERATOR, "acme:tools/note-time");
    assert_eq!(out["result"]["error"]["kind"], "approval_refused", "{out}");
    assert!(
        out["result"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--approve acme:tools/note-time"),
        "{out}"
    );
    // Nor the tenant's own call of it.
    let out = rpc_call(&addr, &acme, "note_time");
    assert_eq!(out["result"]["error"]["kind"], "approval_refused", "{out}");
    assert!(!env.workspace().join("tenant.txt").exists());
}

#[test]
fn a_bare_approval_two_of_the_operator_s_bundles_could_mean_is_refused() {
    let env = Env::new();
    put_operator_tool(&env, "ops", &note_time("a.txt"));
    put_operator_tool(&env, "more", &note_time("b.txt"));
    let out = env.all(&["--approve", "note_time", "call", "note_time"]);
    assert!(out.starts_with("exit 1"), "{out}");
    assert!(
        out.contains("--approve ops/note-time or --approve more/note-time")
            || out.contains("--approve more/note-time or --approve ops/note-time"),
        "{out}"
    );
    let out = env.all(&["--approve", "ops/note-time", "call", "ops/note-time"]);
    assert!(out.starts_with("exit 0"), "{out}");
    assert!(env.workspace().join("a.txt").exists());
    let out = env.all(&["--approve", "ops/", "call", "clock"]);
    assert!(out.contains("the tool is empty"), "{out}");
}

/// A server that answers every request with `{"ok": true}` and records the
/// `X-Api-Key` each carried (empty when none).
fn api() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keys = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut key = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("x-api-key")
                {
                    key = value.trim().to_owned();
                }
            }
            keys.lock().unwrap().push(key);
            let body = r#"{"ok": true}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (addr, seen)
}

fn get_weather(addr: &str) -> Value {
    json!({
        "slug": "get-weather", "version": "1", "name": "get_weather",
        "description": "The weather, from the test API.",
        "type": "http",
        "argSchema": {"type": "object"},
        "impl": {"method": "GET", "urlTemplate": format!("http://{addr}/w"),
            "headers": {"X-Api-Key": "${API_KEY}"}}
    })
}

#[test]
fn a_secret_granted_by_name_reaches_only_the_operator_s_tool() {
    // Regression: `--secret-tool API_KEY=get_weather` granted the key to any tool named
    // `get_weather`, a tenant's too.
    let key = "sk-owner-7a6b5c4d3e2f";
    let env = Env::new();
    let (api_addr, seen) = api();
    put_operator_tool(&env, "weather", &get_weather(&api_addr));
    let acme = tenant(&env, "acme");
    let (_server, addr, _) = serve_with_env(
        &env,
        &[
            "--token",
            OPERATOR,
            "--allow-host",
            &api_addr,
            "--allow-private",
            "--secret-tool",
            "API_KEY=get_weather",
        ],
        &[("TOOLSCOUT_SECRET_API_KEY", key)],
    );
    put_tenant_tool(&addr, &acme, "weather", &get_weather(&api_addr));
    let out = rpc_call(&addr, &acme, "get_weather");
    assert_eq!(out["result"]["ok"], false, "{out}");
    assert!(out.to_string().contains("not granted"), "{out}");
    assert!(seen.lock().unwrap().iter().all(|k| k != key));
    let out = rpc_call(&addr, OPERATOR, "get_weather");
    assert_eq!(out["result"]["ok"], true, "{out}");
    assert_eq!(seen.lock().unwrap().last().map(String::as_str), Some(key));
}
