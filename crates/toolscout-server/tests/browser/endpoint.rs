//! A scripted OpenAI-compatible endpoint on 127.0.0.1: each
//! `POST /v1/chat/completions` gets the next scripted reply, streamed as server-sent
//! chunks when the request says `stream: true` (as the console's chat does), as one JSON
//! body otherwise. Every request is recorded.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};

/// One scripted model turn.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// A text answer.
    Text(String),
    /// One tool call: id, name, arguments text.
    Call(String, String, String),
    /// A refusal: the status and the error's message, as an OpenAI-compatible server
    /// answers a request it will not serve.
    Refuse(u16, String),
}

pub(crate) fn call(id: &str, name: &str, args: &str) -> Reply {
    Reply::Call(id.to_owned(), name.to_owned(), args.to_owned())
}

pub(crate) fn text(s: &str) -> Reply {
    Reply::Text(s.to_owned())
}

type Shared = Arc<Mutex<(VecDeque<Reply>, Vec<Value>)>>;

/// A running scripted endpoint.
#[derive(Clone)]
pub(crate) struct Endpoint {
    shared: Shared,
    /// `http://127.0.0.1:PORT/v1`.
    pub(crate) base_url: String,
}

impl Endpoint {
    pub(crate) async fn start(script: Vec<Reply>) -> Endpoint {
        let shared: Shared = Arc::new(Mutex::new((script.into(), Vec::new())));
        let app = Router::new()
            .route("/v1/chat/completions", post(completions))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Endpoint {
            shared,
            base_url: format!("http://{addr}/v1"),
        }
    }

    /// Appends replies to the script.
    pub(crate) fn push(&self, replies: Vec<Reply>) {
        self.shared.lock().unwrap().0.extend(replies);
    }

    /// The requests received so far.
    pub(crate) fn requests(&self) -> Vec<Value> {
        self.shared.lock().unwrap().1.clone()
    }

    /// The function names of a request's tools array.
    pub(crate) fn tool_names(request: &Value) -> Vec<String> {
        request["tools"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }
}

async fn completions(State(shared): State<Shared>, Json(body): Json<Value>) -> Response {
    let reply = {
        let mut s = shared.lock().unwrap();
        s.1.push(body.clone());
        s.0.pop_front()
    };
    let Some(reply) = reply else {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({"error": {"message": "the script is exhausted", "type": "server_error"}})),
        )
            .into_response();
    };
    if let Reply::Refuse(status, message) = &reply {
        let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::BAD_REQUEST);
        return (
            status,
            Json(json!({"error": {"message": message, "type": "invalid_request_error"}})),
        )
            .into_response();
    }
    let usage = json!({"prompt_tokens": 120, "completion_tokens": 12, "total_tokens": 132});
    let finish = match reply {
        Reply::Call(..) | Reply::Refuse(..) => "tool_calls",
        Reply::Text(_) => "stop",
    };
    if body["stream"] != json!(true) {
        let message = match &reply {
            Reply::Text(t) | Reply::Refuse(_, t) => json!({"role": "assistant", "content": t}),
            Reply::Call(id, name, args) => json!({"role": "assistant", "content": null,
                "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": args}}]}),
        };
        return Json(json!({
            "id": "chatcmpl-scripted", "object": "chat.completion", "created": 1_700_000_000,
            "model": body["model"], "usage": usage,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        }))
        .into_response();
    }
    let mut deltas = vec![json!({"role": "assistant", "content": ""})];
    match &reply {
        Reply::Text(t) | Reply::Refuse(_, t) => {
            let chars: Vec<char> = t.chars().collect();
            deltas.extend(
                chars
                    .chunks(6)
                    .map(|c| json!({"content": c.iter().collect::<String>()})),
            );
        }
        Reply::Call(id, name, args) => {
            deltas.push(json!({"tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}));
            deltas.push(json!({"tool_calls": [{"index": 0, "function": {"arguments": args}}]}));
        }
    }
    let chunk = |choices: Value| json!({"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": body["model"], "choices": choices});
    let mut sse = String::new();
    for d in deltas {
        let c = chunk(json!([{"index": 0, "delta": d, "finish_reason": null}]));
        sse.push_str(&format!("data: {c}\n\n"));
    }
    let last = chunk(json!([{"index": 0, "delta": {}, "finish_reason": finish}]));
    sse.push_str(&format!("data: {last}\n\n"));
    if body["stream_options"]["include_usage"] == json!(true) {
        let mut u = chunk(json!([]));
        u["usage"] = usage;
        sse.push_str(&format!("data: {u}\n\n"));
    }
    sse.push_str("data: [DONE]\n\n");
    ([(header::CONTENT_TYPE, "text/event-stream")], sse).into_response()
}
