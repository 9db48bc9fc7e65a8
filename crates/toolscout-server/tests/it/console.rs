//! The web console's own routes: the page and its assets, level texts with token
//! counts, bundle export/import, and the chat's answers when it cannot run.

use axum::body::Body;
use axum::http::Request;
use serde_json::json;
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
