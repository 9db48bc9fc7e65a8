//! `toolscout serve` on a loopback port: the manifest and a JSON-RPC call.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

use crate::Env;

/// A server, killed when dropped.
pub(crate) struct Server(pub(crate) Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `toolscout serve --addr 127.0.0.1:0 EXTRA` on `env`; returns it, its address
/// and what it printed before it was ready.
pub(crate) fn serve(env: &Env, extra: &[&str]) -> (Server, String, String) {
    serve_with_env(env, extra, &[])
}

/// [`serve`] with these environment variables set.
pub(crate) fn serve_with_env(
    env: &Env,
    extra: &[&str],
    vars: &[(&str, &str)],
) -> (Server, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolscout"))
        .envs(vars.iter().copied())
        // Hermetic: rank by words, whatever model this machine has fetched.
        .env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model")
        .env("TOOLSCOUT_HOME", env.path().join("catalog"))
        .env_remove("TOOLSCOUT_TOKEN")
        .env_remove("TOOLSCOUT_REMOTE_TOKEN")
        .env_remove("TOOLSCOUT_MODEL")
        .env_remove("OPENAI_API_KEY")
        .arg("--workspace")
        .arg(env.workspace())
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    // Owned before anything can fail, so that a failing test still ends the process.
    let server = Server(child);
    let mut before = String::new();
    loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the server ended before it was ready: {before}"
        );
        if let Some(rest) = line.strip_prefix("serving ") {
            let addr = rest
                .split("http://")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
                .unwrap_or_else(|| panic!("no address in {line:?}"))
                .to_owned();
            return (server, addr, before);
        }
        before.push_str(&line);
    }
}

/// One HTTP/1.1 request; returns the status and the body.
pub(crate) fn http(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[&str],
    body: &str,
) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for h in headers {
        request.push_str(h);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        unchunk(body)
    } else {
        body.to_owned()
    };
    (status, body)
}

fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap();
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        body = &rest[n + 2..];
    }
    out
}

#[test]
fn serve_answers_the_manifest_and_json_rpc() {
    let env = Env::new();
    std::fs::write(env.workspace().join("hello.txt"), "hello\n").unwrap();
    let (_server, addr, _) = serve(&env, &["--token", "s3cret"]);

    let (status, body) = http(&addr, "GET", "/api/v1/tools", &[], "");
    assert_eq!(status, 200, "{body}");
    let manifest: serde_json::Value = serde_json::from_str(&body).unwrap();
    let names: Vec<&str> = manifest["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // The manifest lists the built-ins by name.
    assert_eq!(
        names,
        [
            "clock",
            "http_get",
            "json_query",
            "read_file",
            "search_files",
            "write_file"
        ]
    );

    let call = r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"read_file","arguments":{"file_path":"hello.txt"}},"id":1}"#;
    let (status, body) = http(&addr, "POST", "/rpc", &[], call);
    assert_eq!(
        status, 401,
        "a request without the token is refused: {body}"
    );
    let identity = r#"{"jsonrpc":"2.0","method":"server/identity","id":2}"#;
    let (status, body) = http(&addr, "POST", "/rpc", &[], identity);
    assert_eq!(status, 401, "JSON-RPC reads need the token too: {body}");
    let (status, body) = http(
        &addr,
        "POST",
        "/rpc",
        &["Authorization: Bearer s3cret"],
        call,
    );
    assert_eq!(status, 200, "{body}");
    insta::assert_snapshot!(body);
}

#[test]
fn serve_serves_the_console_and_says_whether_its_chat_has_a_model() {
    let env = Env::new();
    let (_server, addr, _) = serve(&env, &[]);
    let (status, body) = http(&addr, "GET", "/", &[], "");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("<title>toolscout console</title>"), "{body}");
    let (_, body) = http(&addr, "GET", "/console/api/chat", &[], "");
    assert!(body.contains("\"configured\":false"), "{body}");

    let chat = [
        "--model",
        "qwen-small",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--api-key",
        "sk-never-shown",
    ];
    let (_server, addr, _) = serve(&env, &chat);
    let (_, body) = http(&addr, "GET", "/console/api/chat", &[], "");
    assert!(
        body.contains("\"configured\":true") && body.contains("qwen-small"),
        "{body}"
    );
    assert!(!body.contains("sk-never-shown"), "{body}");
}

#[test]
fn serve_makes_a_token_when_none_is_given() {
    // Regression: without --token every mutation was open to anyone on the port.
    let env = Env::new();
    let (_server, addr, said) = serve(&env, &[]);
    let token = said
        .lines()
        .find_map(|l| l.strip_prefix("token: "))
        .unwrap_or_else(|| panic!("no token printed: {said}"))
        .to_owned();
    assert_eq!(token.len(), 64, "{token}");
    let uri = "/tools/bundles/018faf50-b7b6-7a01-9a05-a22a6e0af101";
    let (status, body) = http(&addr, "PUT", uri, &[], r#"{"slug":"maps"}"#);
    assert_eq!(status, 401, "{body}");
    let auth = format!("Authorization: Bearer {token}");
    let (status, body) = http(&addr, "PUT", uri, &[&auth], r#"{"slug":"maps"}"#);
    assert_eq!(status, 200, "{body}");
    // Reads stay open.
    let (status, _) = http(&addr, "GET", "/api/v1/tools", &[], "");
    assert_eq!(status, 200);
    // Two runs, two tokens.
    let (_other, _, said_again) = serve(&Env::new(), &[]);
    assert!(!said_again.contains(&token));
}

#[test]
fn serve_no_auth_is_loud_and_not_public() {
    let env = Env::new();
    let (_server, addr, said) = serve(&env, &["--no-auth"]);
    assert!(!said.contains("token: "), "{said}");
    assert!(said.contains("warning: no token (--no-auth)"), "{said}");
    let uri = "/tools/bundles/018faf50-b7b6-7a01-9a05-a22a6e0af101";
    let (status, body) = http(&addr, "PUT", uri, &[], r#"{"slug":"maps"}"#);
    assert_eq!(status, 200, "{body}");
    let out = Env::new().check(&["serve", "--addr", "0.0.0.0:0", "--public", "--no-auth"]);
    assert!(out.contains("--public with --no-auth"), "{out}");
}

#[test]
fn serve_refuses_a_public_address_unless_told() {
    let out = Env::new().check(&["serve", "--addr", "0.0.0.0:7411"]);
    insta::assert_snapshot!(out);
}

/// SIGINT (Ctrl-C) and SIGTERM stop the server cleanly: it exits with success and the
/// usage counts of every call it answered are on disk.
#[cfg(unix)]
#[test]
fn serve_stops_on_a_signal_without_losing_usage_counts() {
    for signal in ["-INT", "-TERM"] {
        let env = Env::new();
        let (mut server, addr, _) = serve(&env, &["--token", "s3cret"]);
        let call = r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"clock","arguments":{"action":"now"}},"id":1}"#;
        for _ in 0..6 {
            let (status, body) = http(
                &addr,
                "POST",
                "/rpc",
                &["Authorization: Bearer s3cret"],
                call,
            );
            assert_eq!(status, 200, "{body}");
            assert!(body.contains(r#""ok":true"#), "{body}");
        }
        let pid = server.0.id().to_string();
        assert!(
            Command::new("kill")
                .args([signal, &pid])
                .status()
                .unwrap()
                .success()
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let status = loop {
            if let Some(status) = server.0.try_wait().unwrap() {
                break status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the server did not stop on {signal}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        assert!(status.success(), "{signal}: {status:?}");
        let listed: serde_json::Value =
            serde_json::from_str(&env.check(&["--json", "list", "--usage"])).unwrap();
        let clock = listed["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "clock")
            .unwrap();
        assert_eq!(clock["usage"]["callCount"], 6, "{signal}: {clock}");
    }
}

/// Findings 1 and 2 of the second security pass: one `json_query` argument aborted the
/// server (a thousand nested parentheses overflowed the parser's stack), nested filters
/// kept a core busy for minutes past the call's timeout, and SIGTERM then never ended
/// the process. Hostile calls now get an error, and the server stops promptly after
/// them.
#[cfg(unix)]
#[test]
fn serve_survives_hostile_json_query_calls_and_stops_on_sigterm() {
    let env = Env::new();
    let (mut server, addr, _) = serve(&env, &["--token", "s3cret"]);
    let filters = format!("$[?{}@.a{}]", "@[?".repeat(30), "]".repeat(30));
    let parens = format!("$[?{}@.a{}]", "(".repeat(1000), ")".repeat(1000));
    let items: Vec<String> = (0..20_000).map(|i| format!("item {i}")).collect();
    let calls: Vec<String> = [
        serde_json::json!({"value": [{"a": 1}], "path": filters}),
        serde_json::json!({"value": [{"a": 1}], "path": parens}),
        serde_json::json!({"value": items, "path": format!("$[?search(@, '{}')]", "(a|b)*c{1,100}".repeat(20))}),
    ]
    .iter()
    .map(|args| {
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "json_query", "arguments": args}})
        .to_string()
    })
    .collect();
    let threads: Vec<_> = (0..6)
        .map(|i| {
            let addr = addr.clone();
            let which = i % calls.len();
            let call = calls[which].clone();
            std::thread::spawn(move || {
                (
                    which,
                    http(
                        &addr,
                        "POST",
                        "/rpc",
                        &["Authorization: Bearer s3cret"],
                        &call,
                    ),
                )
            })
        })
        .collect();
    for thread in threads {
        let (which, (status, body)) = thread.join().unwrap();
        assert_eq!(status, 200, "{body}");
        if which == 2 {
            // The pattern is compiled once, not for each of the 20,000 items.
            assert!(body.contains(r#""ok":true"#), "{body}");
        } else {
            assert!(body.contains(r#""kind":"invalid_arguments""#), "{body}");
        }
    }
    // Still serving.
    let (status, body) = http(&addr, "GET", "/api/v1/tools?limit=1", &[], "");
    assert_eq!(status, 200, "{body}");
    let pid = server.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            assert!(status.success(), "{status:?}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not stop on SIGTERM"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn the_console_chat_browses_the_agents_of_agents_file() {
    use crate::chat::{last_message, tool_names};
    use crate::scripted::{chunk, scripted, streamed_call};

    let env = Env::new();
    let agents = env.path().join("agents.json");
    std::fs::write(
        &agents,
        serde_json::json!([{"name": "notes_agent", "description": "Reads the user's notes.", "category": "files"}])
            .to_string(),
    )
    .unwrap();
    let answer = format!(
        "{}data: [DONE]\n\n",
        chunk(
            serde_json::json!({"role": "assistant", "content": "One agent."}),
            Some("stop")
        )
    );
    let (url, model) = scripted(vec![streamed_call("discover_agents", "{}"), answer]);
    let (_server, addr, _) = serve(
        &env,
        &[
            "--token",
            "s3cret",
            "--model",
            "m",
            "--base-url",
            &url,
            "--agents",
            agents.to_str().unwrap(),
        ],
    );
    let turn = r#"{"messages":[{"role":"user","content":"Which agents are there?"}]}"#;
    let (status, body) = http(
        &addr,
        "POST",
        "/console/api/chat",
        &["Authorization: Bearer s3cret"],
        turn,
    );
    assert_eq!(status, 200, "{body}");
    let requests = model.join().unwrap();
    let tools = tool_names(&requests[0]);
    assert!(tools.contains(&"discover_agents".to_owned()), "{tools:?}");
    // The model's discover_agents call is answered from the agents file.
    insta::assert_snapshot!(last_message(&requests[1]), @r#"{"ok":true,"value":{"kind":"agents","agents":[{"name":"notes_agent","summary":"Reads the user's notes."}]}}"#);
    assert!(body.contains("One agent."), "{body}");
}

#[test]
fn serve_refuses_agents_without_a_chat_model() {
    let env = Env::new();
    let agents = env.path().join("agents.json");
    std::fs::write(&agents, "[]").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolscout"))
        .env("TOOLSCOUT_HOME", env.path().join("catalog"))
        .env_remove("TOOLSCOUT_MODEL")
        .args(["serve", "--addr", "127.0.0.1:0", "--agents"])
        .arg(&agents)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("needs --model"), "{stderr}");
}

/// `--anonymous-reads off`: a GET read without a token is 401, the server's token and a
/// tenant's are served; the start-up message says so and names the tenants.
#[test]
fn serve_anonymous_reads_off_refuses_reads_without_a_token() {
    let env = Env::new();
    let added = env.check(&["tenant", "add", "acme"]);
    let tenant = added
        .lines()
        .find_map(|l| l.strip_prefix("token: "))
        .unwrap_or_else(|| panic!("no token printed: {added}"))
        .to_owned();
    let (server, addr, said) = serve(&env, &["--token", "s3cret", "--anonymous-reads", "off"]);
    assert!(
        said.contains("1 tenant(s): each sends a token of its own")
            && said.contains("GET reads without a token need a token too"),
        "{said}"
    );
    let (status, body) = http(&addr, "GET", "/api/v1/tools", &[], "");
    assert_eq!(status, 401, "{body}");
    let tenant_auth = format!("Authorization: Bearer {tenant}");
    for auth in ["Authorization: Bearer s3cret", tenant_auth.as_str()] {
        let (status, body) = http(&addr, "GET", "/api/v1/tools", &[auth], "");
        assert_eq!(status, 200, "{auth}: {body}");
    }
    drop(server);

    // A token made at start-up: the message says that GET reads need it too.
    let (server, addr, said) = serve(&env, &["--anonymous-reads", "off"]);
    assert!(said.contains("with every request, GET reads too"), "{said}");
    let (status, body) = http(&addr, "GET", "/api/v1/tools", &[], "");
    assert_eq!(status, 401, "{body}");
    drop(server);

    // By default, once there is a tenant, a read without a token sees the public view.
    let (_server, addr, said) = serve(&env, &[]);
    assert!(
        said.contains("which without a token see only the shared and built-in tools"),
        "{said}"
    );
    let (status, body) = http(&addr, "GET", "/api/v1/tools", &[], "");
    assert_eq!(status, 200, "{body}");

    let out = env.check(&["serve", "--no-auth", "--anonymous-reads", "public"]);
    assert!(out.starts_with("exit 2\n"), "{out}");
}

/// `serve ARGS` that must refuse to start: its exit code and stderr, or a panic when it
/// is still running after 20 s (it started serving).
fn refused_to_serve(env: &Env, args: &[&str]) -> String {
    let mut child = env
        .command(&["serve"])
        .args(args)
        .env_remove("TOOLSCOUT_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            return format!("exit {}\n{stderr}", status.code().unwrap_or(-1));
        }
        if started.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`serve {}` started instead of refusing", args.join(" "));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Issue 61: a public server's token is its only guard, so a short or repetitive one is
/// refused (without being quoted); a long random one, or none (one is made), serves.
#[test]
fn serve_public_refuses_a_weak_token() {
    let env = Env::new();
    for weak in [
        "a",
        "hunter2-hunter2",
        &"ab".repeat(40),
        "0123456789abcdef0123456789abcdef",
    ] {
        let out = refused_to_serve(
            &env,
            &["--addr", "127.0.0.1:0", "--public", "--token", weak],
        );
        assert!(out.starts_with("exit 1\n"), "{weak}: {out}");
        assert!(
            out.contains("--public needs a token of at least 256 bits"),
            "{weak}: {out}"
        );
        if weak.len() > 3 {
            assert!(!out.contains(weak), "{out}");
        }
    }
    insta::assert_snapshot!(refused_to_serve(
        &env,
        &["--addr", "127.0.0.1:0", "--public", "--token", "a"]
    ));
    let strong = "3f9c1e0b7a5d48e2b6c4f0a19d7e3b52c8a6f4e1d0b9c7a5e3f1d2b4a6c8e0f7";
    let (_server, _addr, said) = serve(&env, &["--public", "--token", strong]);
    assert!(!said.contains("error"), "{said}");
    // A token made for the run is long enough.
    let (_server, _addr, said) = serve(&Env::new(), &["--public"]);
    let token = said
        .lines()
        .find_map(|l| l.strip_prefix("token: "))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(token.len() >= 64, "{token}");
}

/// Issue 61, item 6 (any flag that may hold a credential): a `--remote` URL with a
/// password in it is refused without quoting the password.
#[test]
fn a_remote_url_with_a_password_is_refused_without_it() {
    let env = Env::new();
    for url in [
        "http://ops:Zq9vW-hunter2@127.0.0.1:7411",
        "http://ops:Zq9vW-hunter2@127.0.0.1:7411/a b",
        "ftp://ops:Zq9vW-hunter2@127.0.0.1:7411",
    ] {
        let out = refused_to_serve(&env, &["--remote", url]);
        assert!(out.starts_with("exit 1\n"), "{out}");
        assert!(!out.contains("hunter2") && !out.contains("Zq9v"), "{out}");
        assert!(out.contains("--remote"), "{out}");
    }
}
