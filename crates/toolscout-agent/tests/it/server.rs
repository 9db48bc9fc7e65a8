//! A scripted OpenAI-compatible server on 127.0.0.1: it answers each
//! `POST /v1/chat/completions` with the next scripted reply, as JSON or as server-sent
//! events (`stream: true` in the request decides), and records every request.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// One scripted model turn.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// A text answer.
    Text(String),
    /// Tool calls: (id, name, arguments text), with optional text before them.
    Calls(Option<String>, Vec<(String, String, String)>),
    /// An error status with an OpenAI error body.
    Error(u16, String),
    /// An error status with exactly this JSON body (llama.cpp's error bodies differ from
    /// OpenAI's: their `code` is the status, a number).
    Body(u16, Value),
    /// A raw body (sent as server-sent events when the request streams, JSON otherwise).
    Raw(String),
}

/// A text answer.
pub(crate) fn text(s: &str) -> Reply {
    Reply::Text(s.to_owned())
}

/// One turn of tool calls: `(id, name, arguments)`.
pub(crate) fn calls(list: &[(&str, &str, &str)]) -> Reply {
    Reply::Calls(
        None,
        list.iter()
            .map(|(i, n, a)| ((*i).to_owned(), (*n).to_owned(), (*a).to_owned()))
            .collect(),
    )
}

/// One call.
pub(crate) fn call(id: &str, name: &str, args: &str) -> Reply {
    calls(&[(id, name, args)])
}

struct Inner {
    script: VecDeque<Reply>,
    requests: Vec<Value>,
    usage: bool,
}

/// A running scripted server.
#[derive(Clone)]
pub(crate) struct Server {
    inner: Arc<Mutex<Inner>>,
    /// `http://127.0.0.1:PORT/v1`.
    pub(crate) base_url: String,
}

impl Server {
    /// Starts a server that will play `script`, reporting usage.
    pub(crate) async fn start(script: Vec<Reply>) -> Server {
        Self::start_with(script, true).await
    }

    /// Starts a server; `usage: false` omits `usage` from every response.
    pub(crate) async fn start_with(script: Vec<Reply>, usage: bool) -> Server {
        let inner = Arc::new(Mutex::new(Inner {
            script: script.into(),
            requests: Vec::new(),
            usage,
        }));
        let app = Router::new()
            .route("/v1/chat/completions", post(completions))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Server {
            inner,
            base_url: format!("http://{addr}/v1"),
        }
    }

    /// The requests received so far.
    pub(crate) fn requests(&self) -> Vec<Value> {
        self.inner.lock().unwrap().requests.clone()
    }

    /// How many scripted replies are left.
    pub(crate) fn remaining(&self) -> usize {
        self.inner.lock().unwrap().script.len()
    }

    /// The tool names of each request's tools array.
    pub(crate) fn tool_arrays(&self) -> Vec<Vec<String>> {
        self.requests()
            .iter()
            .map(|r| {
                r["tools"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .map(|t| t["function"]["name"].as_str().unwrap_or("?").to_owned())
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect()
    }
}

async fn completions(State(inner): State<Arc<Mutex<Inner>>>, Json(body): Json<Value>) -> Response {
    let stream = body["stream"] == json!(true);
    let include_usage = body["stream_options"]["include_usage"] == json!(true);
    let (reply, usage) = {
        let mut inner = inner.lock().unwrap();
        inner.requests.push(body.clone());
        (inner.script.pop_front(), inner.usage)
    };
    let Some(reply) = reply else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "the script is exhausted").into_response();
    };
    if let Reply::Error(status, message) = &reply {
        let body = json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": "context_length_exceeded"}});
        return (StatusCode::from_u16(*status).unwrap(), Json(body)).into_response();
    }
    if let Reply::Body(status, body) = &reply {
        return (StatusCode::from_u16(*status).unwrap(), Json(body.clone())).into_response();
    }
    if let Reply::Raw(raw) = reply {
        let kind = if stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        return ([(header::CONTENT_TYPE, kind)], raw).into_response();
    }
    let usage_value = json!({"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110});
    if !stream {
        let mut response = json!({
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body["model"],
            "choices": [{"index": 0, "message": message(&reply), "finish_reason": finish(&reply)}],
        });
        if usage {
            response["usage"] = usage_value;
        }
        return Json(response).into_response();
    }
    let mut events: Vec<Value> = chunks(&reply)
        .into_iter()
        .map(|delta| {
            chunk(
                &body,
                json!([{"index": 0, "delta": delta, "finish_reason": null}]),
            )
        })
        .collect();
    events.push(chunk(
        &body,
        json!([{"index": 0, "delta": {}, "finish_reason": finish(&reply)}]),
    ));
    if usage && include_usage {
        let mut last = chunk(&body, json!([]));
        last["usage"] = usage_value;
        events.push(last);
    }
    let mut sse = String::new();
    for e in events {
        sse.push_str(&format!("data: {e}\n\n"));
    }
    sse.push_str("data: [DONE]\n\n");
    ([(header::CONTENT_TYPE, "text/event-stream")], sse).into_response()
}

fn chunk(body: &Value, choices: Value) -> Value {
    json!({
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": body["model"],
        "choices": choices,
    })
}

fn finish(reply: &Reply) -> &'static str {
    match reply {
        Reply::Calls(..) => "tool_calls",
        _ => "stop",
    }
}

fn message(reply: &Reply) -> Value {
    match reply {
        Reply::Text(t) => json!({"role": "assistant", "content": t}),
        Reply::Calls(t, list) => json!({
            "role": "assistant",
            "content": t,
            "tool_calls": list.iter().map(|(id, name, args)| json!({
                "id": id, "type": "function", "function": {"name": name, "arguments": args}
            })).collect::<Vec<_>>(),
        }),
        Reply::Error(..) | Reply::Body(..) | Reply::Raw(_) => Value::Null,
    }
}

/// The deltas of a reply, the way OpenAI streams them: text in small pieces; each
/// call's id and name first, then its arguments in two pieces.
fn chunks(reply: &Reply) -> Vec<Value> {
    let mut out = vec![json!({"role": "assistant", "content": ""})];
    let text_pieces = |t: &str| -> Vec<Value> {
        let chars: Vec<char> = t.chars().collect();
        chars
            .chunks(8)
            .map(|c| json!({"content": c.iter().collect::<String>()}))
            .collect()
    };
    match reply {
        Reply::Text(t) => out.extend(text_pieces(t)),
        Reply::Calls(t, list) => {
            if let Some(t) = t {
                out.extend(text_pieces(t));
            }
            for (i, (id, name, args)) in list.iter().enumerate() {
                out.push(json!({"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}));
                let mid = args
                    .char_indices()
                    .nth(args.chars().count() / 2)
                    .map_or(0, |(i, _)| i);
                for piece in [&args[..mid], &args[mid..]] {
                    out.push(
                        json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                    );
                }
            }
        }
        Reply::Error(..) | Reply::Body(..) | Reply::Raw(_) => {}
    }
    out
}
