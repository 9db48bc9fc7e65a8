//! A real HTTP server on 127.0.0.1 for the HTTP tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Bytes, to_bytes};
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use serde_json::{Value, json};

pub(crate) const SIGNING_KEY: &str = "hk-5Wd8Nq3Jx0Fv";

#[derive(Clone, Default)]
pub(crate) struct Counters {
    pub(crate) flaky: Arc<AtomicUsize>,
    pub(crate) tokens: Arc<AtomicUsize>,
    pub(crate) posts: Arc<AtomicUsize>,
}

pub(crate) struct TestServer {
    pub(crate) base: String,
    pub(crate) port: u16,
    pub(crate) counters: Counters,
}

pub(crate) async fn start() -> TestServer {
    let counters = Counters::default();
    let app = Router::new()
        .route("/echo", any(echo))
        .route("/mirror/{code}", post(mirror))
        .route("/weather", get(weather))
        .route("/status/{code}", get(status))
        .route("/flaky", any(flaky))
        .route("/slow", get(slow))
        .route("/big", get(big))
        .route("/redirect", get(redirect))
        .route("/text", get(|| async { "reading: temp=21C wind=5" }))
        .route("/token", post(token))
        .route("/protected", get(protected))
        .route("/signed", any(signed))
        .with_state(counters.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    TestServer {
        base: format!("http://127.0.0.1:{port}"),
        port,
        counters,
    }
}

async fn echo(req: Request) -> axum::Json<Value> {
    let (parts, body) = req.into_parts();
    let body = to_bytes(body, 1 << 20).await.unwrap_or_default();
    let headers: serde_json::Map<String, Value> = parts
        .headers
        .iter()
        .filter(|(k, _)| k.as_str() != "host")
        .map(|(k, v)| (k.to_string(), json!(v.to_str().unwrap_or(""))))
        .collect();
    axum::Json(json!({
        "method": parts.method.as_str(),
        "path": parts.uri.path(),
        "query": parts.uri.query(),
        "headers": headers,
        "body": String::from_utf8_lossy(&body),
    }))
}

/// Answers with the request's body, as JSON, under the status in the path.
async fn mirror(Path(code): Path<u16>, body: String) -> Response {
    let code = StatusCode::from_u16(code).unwrap_or(StatusCode::IM_A_TEAPOT);
    (code, [("content-type", "application/json")], body).into_response()
}

async fn weather(Query(q): Query<std::collections::HashMap<String, String>>) -> axum::Json<Value> {
    let city = q.get("q").cloned().unwrap_or_default();
    axum::Json(
        json!({"location": {"name": city}, "current": {"temp_c": 21.5, "condition": {"text": format!("Sunny in {city}")}}}),
    )
}

async fn status(
    Path(code): Path<u16>,
    Query(q): Query<std::collections::BTreeMap<String, String>>,
) -> Response {
    let code = StatusCode::from_u16(code).unwrap_or(StatusCode::IM_A_TEAPOT);
    // Echo the query back, as careless servers do: secrets in it must not reach the model.
    (code, format!("failed; you sent {q:?}")).into_response()
}

async fn flaky(State(c): State<Counters>) -> Response {
    let n = c.flaky.fetch_add(1, Ordering::SeqCst);
    if n < 2 {
        (StatusCode::SERVICE_UNAVAILABLE, "try later").into_response()
    } else {
        axum::Json(json!({"attempt": n + 1})).into_response()
    }
}

async fn slow() -> &'static str {
    tokio::time::sleep(Duration::from_secs(3)).await;
    "late"
}

async fn big() -> String {
    "x".repeat(10_000)
}

async fn redirect(Query(q): Query<std::collections::HashMap<String, String>>) -> Response {
    let to = q.get("to").cloned().unwrap_or_else(|| "/echo".to_owned());
    (StatusCode::FOUND, [(header::LOCATION, to)], "").into_response()
}

async fn token(State(c): State<Counters>, headers: HeaderMap, body: Bytes) -> Response {
    let n = c.tokens.fetch_add(1, Ordering::SeqCst) + 1;
    let auth = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    // "cid-Q7v3Xk2w:cs-9Lp4Zt8Rb6" in Basic.
    if auth != "Basic Y2lkLVE3djNYazJ3OmNzLTlMcDRadDhSYjY="
        || !body.starts_with(b"grant_type=client_credentials")
    {
        return (StatusCode::UNAUTHORIZED, "bad client").into_response();
    }
    axum::Json(json!({"access_token": format!("tok-{n}"), "token_type": "Bearer", "expires_in": 2}))
        .into_response()
}

async fn protected(headers: HeaderMap) -> Response {
    match headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        Some(v) if v.starts_with("Bearer tok-") => axum::Json(json!({"auth": v})).into_response(),
        _ => (StatusCode::UNAUTHORIZED, "no token").into_response(),
    }
}

async fn signed(State(c): State<Counters>, req: Request) -> axum::Json<Value> {
    c.posts.fetch_add(1, Ordering::SeqCst);
    let (parts, body) = req.into_parts();
    let body = to_bytes(body, 1 << 20).await.unwrap_or_default();
    let get = |h: &str| {
        parts
            .headers
            .get(h)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let ts: i64 = get("x-timestamp").parse().unwrap_or(0);
    let pq = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_default();
    let expected = toolscout_invoke::hmac_signature(
        SIGNING_KEY.as_bytes(),
        parts.method.as_str(),
        &pq,
        ts,
        &body,
    );
    axum::Json(json!({"valid": get("x-signature") == expected && ts > 0}))
}
