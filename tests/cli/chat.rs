//! `toolscout chat` against a scripted OpenAI-compatible server on loopback.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::process::Command;

use serde_json::{Value, json};

use crate::Env;

/// Serves `replies` (chat-completion bodies, or SSE bodies when a string starts with
/// `data:`) one per request; returns the base URL and the requests' JSON bodies.
pub(crate) fn scripted(replies: Vec<String>) -> (String, std::thread::JoinHandle<Vec<Value>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for reply in replies {
            let (mut stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            seen.push(serde_json::from_slice(&body).unwrap());
            let kind = if reply.starts_with("data:") {
                "text/event-stream"
            } else {
                "application/json"
            };
            write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
                reply.len()
            )
            .unwrap();
        }
        seen
    });
    (url, handle)
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let c = json!({
        "id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
    });
    format!("data: {c}\n\n")
}

#[test]
fn chat_finds_a_tool_then_streams_the_answer() {
    let env = Env::new();
    let discover = format!(
        "{}data: [DONE]\n\n",
        chunk(
            json!({"role": "assistant", "tool_calls": [{
                "index": 0, "id": "call_1", "type": "function",
                "function": {"name": "discover_tools", "arguments": "{\"query\": \"read a file\"}"}
            }]}),
            Some("tool_calls")
        )
    );
    let answer = format!(
        "{}{}data: [DONE]\n\n",
        chunk(json!({"role": "assistant", "content": "Use "}), None),
        chunk(json!({"content": "read_file."}), Some("stop"))
    );
    let (url, server) = scripted(vec![discover, answer]);
    let out = Command::new(env!("CARGO_BIN_EXE_toolscout"))
        // Hermetic: rank by words, whatever model this machine has fetched.
        .env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model")
        .env("TOOLSCOUT_HOME", env.path().join("catalog"))
        .env_remove("OPENAI_API_KEY")
        .args(["chat", "--model", "m", "--base-url", &url])
        .args(["--prompt", "How do I read notes.txt?"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{stderr}");
    insta::assert_snapshot!(format!("stdout:\n{stdout}stderr:\n{stderr}"));
    let requests = server.join().unwrap();
    let tools: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    // The retrieve policy: the message's best tools follow the discover tools.
    assert_eq!(tools[..2], ["discover_tools", "call_tool"]);
    assert_eq!(tools.get(2), Some(&"read_file"), "{tools:?}");
}
