//! The web console's own routes: the page and its assets, level texts with token
//! counts, bundle export/import, and the chat's answers when it cannot run.

use axum::body::Body;
use axum::http::Request;
use serde_json::{Value, json};
use toolscout_server::ServerOptions;
use tower::ServiceExt;
use uuid::Uuid;

use crate::{fixture, fixture_with, send, send_with};

#[tokio::test]
async fn the_page_and_its_assets_are_served_with_a_strict_policy() {
    let f = fixture();
    for (uri, kind, needle) in [
        ("/", "text/html", "/console/console.js"),
        (
            "/console/console.js",
            "text/javascript",
            "/tools/tools/search",
        ),
        ("/console/form.js", "text/javascript", "SchemaForm"),
        ("/console/chat.js", "text/javascript", "/console/api/chat"),
        (
            "/console/recipes.js",
            "text/javascript",
            "/console/api/recipes/try",
        ),
        ("/console/console.css", "text/css", "--accent"),
    ] {
        let r = send(&f.app, "GET", uri, None).await;
        assert_eq!(r.status, 200, "{uri}");
        let content_type = r.headers["content-type"].to_str().unwrap();
        assert!(content_type.starts_with(kind), "{uri}: {content_type}");
        let csp = r.headers["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("script-src 'self'") && csp.contains("default-src 'none'"),
            "{csp}"
        );
        assert_eq!(r.headers["x-content-type-options"], "nosniff");
        assert!(
            r.body.as_str().unwrap().contains(needle),
            "{uri} lacks {needle}"
        );
    }
}

#[tokio::test]
async fn levels_come_with_token_counts_that_grow_with_the_level() {
    let f = fixture();
    let uri = format!("/console/api/levels/{}/get-forecast/1", f.weather);
    let r = send(&f.app, "GET", &uri, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], "get_forecast");
    let levels = r.body["levels"].as_array().unwrap();
    let tokens: Vec<u64> = levels
        .iter()
        .map(|l| l["tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(levels.len(), 3);
    assert!(
        0 < tokens[0] && tokens[0] < tokens[1] && tokens[1] < tokens[2],
        "{tokens:?}"
    );
    assert!(levels[0]["text"].as_str().unwrap().contains("get_forecast"));
    // The description appears from level 2 on.
    assert!(!levels[0]["text"].as_str().unwrap().contains("next days"));
    assert!(levels[1]["text"].as_str().unwrap().contains("next days"));
    assert_eq!(r.body["parameters"][0]["name"], "city");
    assert!(r.body["parameters"][0]["tokens"].as_u64().unwrap() > 0);

    let missing = send(
        &f.app,
        "GET",
        &format!("/console/api/levels/{}/nope/1", f.weather),
        None,
    )
    .await;
    assert_eq!(missing.status, 404);
    let bad = send(&f.app, "GET", "/console/api/levels/not-a-uuid/x/1", None).await;
    assert_eq!(bad.status, 400);
    assert!(
        bad.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not-a-uuid")
    );
}

#[tokio::test]
async fn a_chat_without_an_endpoint_says_so() {
    let f = fixture();
    let status = send(&f.app, "GET", "/console/api/chat", None).await;
    assert_eq!(status.body["configured"], false);
    let body = json!({"messages": [{"role": "user", "content": "hi"}]});
    let r = send(&f.app, "POST", "/console/api/chat", Some(body)).await;
    assert_eq!(r.status, 503);
    insta::assert_snapshot!(r.body["error"]["message"].as_str().unwrap(), @"no OpenAI-compatible endpoint is configured for the chat: start the server with --model (or $TOOLSCOUT_MODEL) and --base-url (or $OPENAI_BASE_URL), e.g. a local llama.cpp server at http://127.0.0.1:8080/v1");
    assert_eq!(r.body["error"]["code"], "no_endpoint");
}

#[tokio::test]
async fn the_chat_and_imports_need_the_token_when_one_is_set() {
    let f = fixture_with(ServerOptions::default().with_token(Some("s3cret")), true);
    let body = json!({"messages": [{"role": "user", "content": "hi"}]});
    let r = send(&f.app, "POST", "/console/api/chat", Some(body.clone())).await;
    assert_eq!(r.status, 401);
    let r = send(
        &f.app,
        "POST",
        "/console/api/bundles/import",
        Some(json!({})),
    )
    .await;
    assert_eq!(r.status, 401);
    // The page itself is a read.
    assert_eq!(send(&f.app, "GET", "/", None).await.status, 200);
    let r = send_with(
        &f.app,
        "POST",
        "/console/api/chat/approve",
        Some(json!({"run": "r", "callId": "c", "approve": true})),
        &[("authorization", "Bearer s3cret")],
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.body);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("waiting for approval")
    );
}

#[tokio::test]
async fn a_bundle_exported_as_zip_imports_into_another_server() {
    let from = fixture();
    let sea = Uuid::now_v7();
    let r = send(
        &from.app,
        "PUT",
        &format!("/tools/bundles/{sea}"),
        Some(json!({"slug": "sea"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let tool = json!({
        "type": "http",
        "name": "sea_temperature",
        "description": "Water temperature at a beach.",
        "argSchema": {"type": "object", "properties": {"beach": {"type": "string"}}, "required": ["beach"]},
        "impl": {"method": "GET", "urlTemplate": "https://api.example.com/sea?b=${beach}"}
    });
    let r = send(
        &from.app,
        "PUT",
        &format!("/tools/bundles/{sea}/tools/sea-temp/version/1"),
        Some(tool),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);

    let request = Request::get(format!("/console/api/bundles/{sea}/export"))
        .body(Body::empty())
        .unwrap();
    let response = from.app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/zip");
    assert_eq!(
        response.headers()["content-disposition"],
        "attachment; filename=\"sea.zip\""
    );
    let zip = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    assert!(zip.starts_with(b"PK"), "not a ZIP archive");

    let to = fixture();
    let request = Request::post("/console/api/bundles/import")
        .header("content-type", "application/zip")
        .body(Body::from(zip.clone()))
        .unwrap();
    let r = crate::reply(to.app.clone().oneshot(request).await.unwrap()).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["created"], true);
    assert_eq!(r.body["bundle"]["slug"], "sea");
    assert_eq!(r.body["tools"][0]["name"], "sea_temperature");
    let found = send(
        &to.app,
        "GET",
        "/tools/tools/search?q=sea_temperature",
        None,
    )
    .await;
    assert_eq!(found.body["items"][0]["name"], "sea_temperature");

    let request = Request::post("/console/api/bundles/import")
        .header("content-type", "application/zip")
        .body(Body::from("not a zip"))
        .unwrap();
    let r = crate::reply(to.app.clone().oneshot(request).await.unwrap()).await;
    assert_eq!(r.status, 400, "{}", r.body);
    // Without a content type a web page could send it cross-site: refused first.
    let request = Request::post("/console/api/bundles/import")
        .body(Body::from(zip))
        .unwrap();
    let r = crate::reply(to.app.clone().oneshot(request).await.unwrap()).await;
    assert_eq!(r.status, 415, "{}", r.body);
}

/// A model endpoint on 127.0.0.1 that answers llama.cpp's 400 to any request whose
/// tools carry a `pattern` (as llama.cpp does for `http_get`'s `^https?://`), and a
/// streamed "Hello." otherwise; it records each request's `http_get` `url` schema.
async fn pattern_refusing_endpoint() -> (String, std::sync::Arc<std::sync::Mutex<Vec<Value>>>) {
    use axum::response::IntoResponse;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
            let record = record.clone();
            async move {
                let url = body["tools"]
                    .as_array()
                    .and_then(|tools| {
                        tools
                            .iter()
                            .find(|t| t["function"]["name"] == "http_get")
                            .map(|t| t["function"]["parameters"]["properties"]["url"].clone())
                    })
                    .unwrap_or(Value::Null);
                record.lock().unwrap().push(url.clone());
                if url.get("pattern").is_some() {
                    let error = json!({"error": {"code": 400, "message": "JSON schema conversion failed: Pattern must start with '^' and end with '$'", "type": "invalid_request_error"}});
                    return (axum::http::StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
                }
                let chunk = |delta: Value, finish: Value| {
                    json!({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
                };
                let sse = format!(
                    "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
                    chunk(json!({"role": "assistant", "content": "Hello."}), Value::Null),
                    chunk(json!({}), json!("stop"))
                );
                ([(axum::http::header::CONTENT_TYPE, "text/event-stream")], sse).into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

/// The `done` event of a chat turn's server-sent events.
fn done_event(body: &Value) -> Value {
    let text = body.as_str().unwrap();
    let block = text
        .split("\n\n")
        .find(|b| b.starts_with("event: done"))
        .unwrap_or_else(|| panic!("no done event in {text}"));
    let data = block
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap();
    serde_json::from_str(data).unwrap()
}

/// The console chat over llama.cpp with `http_get` pinned: the endpoint refuses its
/// `pattern`, the turn is answered with the schemas relaxed, and the next turn sends
/// them relaxed from its first request (one client of the endpoint for every turn).
#[tokio::test]
async fn the_chat_answers_an_endpoint_that_refuses_a_pattern_and_remembers_it() {
    let f = fixture();
    let (base_url, seen) = pattern_refusing_endpoint().await;
    let console = toolscout_server::console::Console::default().with_chat(Some(
        toolscout_server::console::ChatSettings::new(&base_url, "", "scripted-model"),
    ));
    let app = toolscout_server::console::router(f.state.clone(), console);
    let mut messages = vec![json!({"role": "user", "content": "Fetch https://example.com"})];
    for turn in 1..=2 {
        let body = json!({"messages": messages, "pinned": ["http_get"]});
        let r = send(&app, "POST", "/console/api/chat", Some(body)).await;
        assert_eq!(r.status, 200, "turn {turn}: {}", r.body);
        let done = done_event(&r.body);
        assert_eq!(done["stop"]["reason"], "answer", "turn {turn}: {done}");
        assert_eq!(done["answer"], "Hello.");
        messages = done["messages"].as_array().unwrap().clone();
        messages.push(json!({"role": "user", "content": "And again?"}));
    }
    let seen: Vec<String> = seen.lock().unwrap().iter().map(Value::to_string).collect();
    // Turn 1: refused, then relaxed; turn 2: relaxed from its first request.
    insta::assert_snapshot!(seen.join("\n"), @r#"
    {"type":"string","description":"Absolute http:// or https:// URL","format":"uri","pattern":"^https?://"}
    {"type":"string","description":"Absolute http:// or https:// URL"}
    {"type":"string","description":"Absolute http:// or https:// URL"}
    "#);
}
