//! Secrets for HTTP tools: from a private file, granted to hosts or tools, never in the
//! output.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;

use crate::Env;

const KEY: &str = "sk-cli-7a6b5c4d";

/// A server that answers one request with the `X-Api-Key` it received; returns it.
fn api() -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let handle = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut key = String::new();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("x-api-key")
            {
                key = value.trim().to_owned();
            }
        }
        let body = serde_json::json!({"got": key}).to_string();
        write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        key
    });
    (addr, handle)
}

fn put_tool(env: &Env, name: &str, addr: &str) {
    env.check(&["bundle", "put", "keyed"]);
    let file = env.path().join(format!("{name}.json"));
    let tool = serde_json::json!({
        "bundleID": "018faf50-b7b6-7a01-9a05-a22a6e0af101",
        "createdAt": "2024-01-01T00:00:00Z",
        "modifiedAt": "2024-01-01T00:00:00Z",
        "name": name,
        "slug": name.replace('_', "-"),
        "version": "1",
        "type": "http",
        "description": "Calls the test API with a key",
        "argSchema": {"type": "object"},
        "impl": {"method": "GET", "urlTemplate": format!("http://{addr}/x"), "headers": {"X-Api-Key": "${API_KEY}"}}
    });
    std::fs::write(&file, tool.to_string()).unwrap();
    let out = env.check(&["tool", "put", file.to_str().unwrap(), "--bundle", "keyed"]);
    assert!(!out.starts_with("exit"), "{out}");
}

fn secrets_file(env: &Env, content: &serde_json::Value, mode: u32) -> String {
    let path = env.path().join("secrets.json");
    std::fs::write(&path, content.to_string()).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    path.to_str().unwrap().to_owned()
}

#[test]
fn call_uses_a_granted_secret_and_never_prints_it() {
    // Regression: secrets could not be supplied at all; `${API_KEY}` always failed.
    let env = Env::new();
    let (addr, server) = api();
    put_tool(&env, "keyed_call", &addr);
    let file = secrets_file(
        &env,
        &serde_json::json!({"API_KEY": {"value": KEY, "tools": ["keyed_call"]}}),
        0o600,
    );
    let out = env.all(&[
        "--allow-host",
        &addr,
        "--allow-private",
        "--secrets-file",
        &file,
        "call",
        "keyed_call",
    ]);
    assert_eq!(server.join().unwrap(), KEY, "the API did not get the key");
    assert!(out.starts_with("exit 0"), "{out}");
    assert!(!out.contains(KEY), "{out}");
    assert!(out.contains("[REDACTED]"), "{out}");
}

#[test]
fn secrets_need_a_private_file_and_a_grant() {
    let env = Env::new();
    let open = secrets_file(&env, &serde_json::json!({"API_KEY": KEY}), 0o644);
    let out = env.all(&["--secrets-file", &open, "call", "clock", "--action", "now"]);
    assert!(out.contains("chmod 600"), "{out}");
    assert!(!out.contains(KEY), "{out}");
    let ungranted = secrets_file(&env, &serde_json::json!({"API_KEY": KEY}), 0o600);
    let out = env.all(&[
        "--secrets-file",
        &ungranted,
        "call",
        "clock",
        "--action",
        "now",
    ]);
    assert!(out.contains("granted to no tool or host"), "{out}");
    let out = env.all(&[
        "--secrets-file",
        &ungranted,
        "--secret-host",
        "API_KEY=api.example.com",
        "call",
        "clock",
        "--action",
        "now",
    ]);
    assert!(out.starts_with("exit 0"), "{out}");
    let out = env.all(&[
        "--secret-tool",
        "NOPE=t",
        "call",
        "clock",
        "--action",
        "now",
    ]);
    assert!(out.contains("there is no secret 'NOPE'"), "{out}");
}
