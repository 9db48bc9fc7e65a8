//! A scripted OpenAI-compatible server on loopback, shared by the test binaries: it
//! answers each request with the next scripted reply and hands back what it received.

#![allow(dead_code)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;

use serde_json::{Value, json};

/// Serves `replies` (chat-completion bodies, or SSE bodies when a string starts with
/// `data:`) one per request; returns the base URL and the requests' JSON bodies.
pub(crate) fn scripted(replies: Vec<String>) -> (String, std::thread::JoinHandle<Vec<Value>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for reply in replies {
            let (mut stream, _) = listener.accept().unwrap();
            seen.push(read_request(&stream));
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

/// Reads one HTTP request from `stream` and returns its JSON body.
pub(crate) fn read_request(stream: &std::net::TcpStream) -> Value {
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
    serde_json::from_slice(&body).unwrap()
}

pub(crate) fn chunk(delta: Value, finish: Option<&str>) -> String {
    let c = json!({
        "id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
    });
    format!("data: {c}\n\n")
}

/// A streamed reply in which the model calls `name` with `arguments` (JSON text), then ends.
pub(crate) fn streamed_call(name: &str, arguments: &str) -> String {
    let delta = json!({"role": "assistant", "tool_calls": [{
        "index": 0, "id": "call_1", "type": "function",
        "function": {"name": name, "arguments": arguments}
    }]});
    format!("{}data: [DONE]\n\n", chunk(delta, Some("tool_calls")))
}
