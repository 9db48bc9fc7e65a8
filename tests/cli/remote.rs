//! `toolscout serve --remote`: one server (A) serves its tools, a second (B) serves them
//! too and calls them through A's invoke route.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::Command;

use crate::Env;
use crate::serve::serve;

/// One HTTP/1.1 POST of a JSON body; returns the status and the body as JSON.
fn post(addr: &str, path: &str, body: &serde_json::Value) -> (u16, serde_json::Value) {
    let body = body.to_string();
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(
        !head.to_ascii_lowercase().contains("chunked"),
        "unexpected chunked answer: {head}"
    );
    (status, serde_json::from_str(body).unwrap())
}

#[test]
fn serve_with_a_remote_serves_and_calls_its_tools() {
    let a = Env::new();
    std::fs::write(a.workspace().join("hello.txt"), "hello from A\n").unwrap();
    let (_server_a, addr_a, _) = serve(&a, &["--token", "s3cret"]);

    // B's own file tools are off: `read_file` can only be A's.
    let b = Env::new();
    assert!(
        b.check(&["bundle", "disable", "files"])
            .starts_with("disabled bundle 'files'")
    );
    let remote = format!("http://{addr_a}");
    let (_server_b, addr_b, said) = serve(
        &b,
        &["--remote", &remote, "--remote-token", "s3cret", "--no-auth"],
    );
    assert!(
        said.starts_with(&format!("remote {remote}: 6 tools\n")),
        "{said}"
    );

    let (status, reply) = post(
        &addr_b,
        "/api/v1/tools/read_file/invoke",
        &serde_json::json!({"args": {"file_path": "hello.txt"}}),
    );
    assert_eq!(status, 200, "{reply}");
    assert_eq!(
        reply,
        serde_json::json!({"ok": true, "value": "hello from A\n"})
    );

    // JSON-RPC on B reaches A too, and A's errors come back as A said them.
    let (status, reply) = post(
        &addr_b,
        "/rpc",
        &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "read_file", "arguments": {"file_path": "missing.txt"}}}),
    );
    assert_eq!(status, 200, "{reply}");
    insta::assert_snapshot!(reply["result"].to_string(), @r#"{"ok":false,"error":{"kind":"not_found","message":"'missing.txt' does not exist","details":{"path":"missing.txt"}}}"#);
}

#[test]
fn serve_with_a_remote_that_does_not_answer_starts_with_a_warning() {
    let b = Env::new();
    let (_server_b, _, said) = serve(&b, &["--remote", "http://127.0.0.1:1", "--no-auth"]);
    assert!(
        said.starts_with(
            "warning: remote http://127.0.0.1:1: no answer from http://127.0.0.1:1/api/v1/tools"
        ),
        "{said}"
    );
    assert!(
        said.contains("; its tools are unavailable until it answers\n"),
        "{said}"
    );
}

#[test]
fn a_bad_remote_url_is_a_clear_error() {
    let env = Env::new();
    insta::assert_snapshot!(env.check(&["serve", "--remote", "ftp://example.com"]), @r#"
    exit 1
    error: --remote "ftp://example.com": expected an http:// or https:// URL, e.g. http://127.0.0.1:7411
    "#);
    insta::assert_snapshot!(env.check(&["serve", "--remote", "http://h:x"]), @r#"
    exit 1
    error: --remote "http://h:x": "x" is not a port number
    "#);
    insta::assert_snapshot!(env.check(&["serve", "--remote", "http://127.0.0.1:7411/?a=1"]), @r#"
    exit 1
    error: --remote "http://127.0.0.1:7411/?a=1": expected the server's base URL, without a query or fragment (the manifest is read from <URL>/api/v1/tools)
    "#);
    insta::assert_snapshot!(env.check(&["serve", "--addr", "127.0.0.1:7411", "--remote", "http://localhost:7411/"]), @"
    exit 1
    error: --remote http://localhost:7411/ is this server's own address (127.0.0.1:7411): its tools would call themselves; give another server's URL
    ");
    let no_remote = env.check(&["serve", "--remote-token", "t"]);
    assert!(no_remote.starts_with("exit 2\n"), "{no_remote}");
    assert!(no_remote.contains("--remote <URL>"), "{no_remote}");
}

fn completion(message: serde_json::Value, finish: &str) -> serde_json::Value {
    serde_json::json!({
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}]
    })
}

#[test]
fn chat_with_a_remote_calls_its_tools_through_the_catalog() {
    let a = Env::new();
    std::fs::write(a.workspace().join("hello.txt"), "hello from A\n").unwrap();
    let (_server_a, addr_a, _) = serve(&a, &["--token", "s3cret"]);
    let b = Env::new();
    b.check(&["bundle", "disable", "files"]);

    let call = completion(
        serde_json::json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "call_tool", "arguments": serde_json::json!({
                "name": "read_file", "arguments": {"file_path": "hello.txt"}
            }).to_string()}
        }]}),
        "tool_calls",
    );
    let answer = completion(
        serde_json::json!({"role": "assistant", "content": "It says hello."}),
        "stop",
    );
    let (model, requests) = crate::chat::scripted(vec![call.to_string(), answer.to_string()]);
    let out = Command::new(env!("CARGO_BIN_EXE_toolscout"))
        // Hermetic: rank by words, whatever model this machine has fetched.
        .env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model")
        .env("TOOLSCOUT_HOME", b.path().join("catalog"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("TOOLSCOUT_REMOTE_TOKEN")
        .arg("--workspace")
        .arg(b.workspace())
        .args(["chat", "--model", "m", "--base-url", &model, "--no-stream"])
        .args([
            "--remote",
            &format!("http://{addr_a}"),
            "--remote-token",
            "s3cret",
        ])
        .args(["--prompt", "What does hello.txt say?"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "It says hello.\n");

    let requests = requests.join().unwrap();
    let result = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("no tool result in {}", requests[1]));
    let content = result["content"].as_str().unwrap();
    assert!(content.contains("hello from A"), "{content}");
}
