//! `GET /api/v1/tools`, `GET /api/v1/tools/{name}`, `POST /api/v1/tools/{name}/invoke`.

use serde_json::json;
use toolscout_server::ServerOptions;

use crate::{fixture, fixture_with, names, redact, send, send_with};

#[tokio::test]
async fn manifest_lists_tools_and_derived_categories() {
    let f = fixture_with(
        ServerOptions::default()
            .with_scenario("weather-station", "2.1.0", "Weather tools")
            .with_base_url(Some("http://127.0.0.1:7411")),
        false,
    );
    let r = send(&f.app, "GET", "/api/v1/tools", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["cache-control"], "public, max-age=60");
    assert_eq!(
        r.headers["etag"].to_str().unwrap(),
        format!("\"{}\"", f.state.toolbox().catalog().identity())
    );
    insta::assert_json_snapshot!("manifest", redact(&r.body));
}

#[tokio::test]
async fn if_none_match_with_the_etag_is_304_and_a_change_is_a_new_etag() {
    let f = fixture();
    let first = send(&f.app, "GET", "/api/v1/tools", None).await;
    let etag = first.headers["etag"].to_str().unwrap().to_owned();
    let again = send_with(
        &f.app,
        "GET",
        "/api/v1/tools",
        None,
        &[("if-none-match", &etag)],
    )
    .await;
    assert_eq!(again.status, 304);
    assert_eq!(again.body, serde_json::Value::Null);
    assert_eq!(again.headers["etag"].to_str().unwrap(), etag);

    f.state
        .toolbox()
        .catalog()
        .patch_tool(f.weather, "get-forecast", "1", false)
        .unwrap();
    let changed = send_with(
        &f.app,
        "GET",
        "/api/v1/tools",
        None,
        &[("if-none-match", &etag)],
    )
    .await;
    assert_eq!(changed.status, 200);
    assert_ne!(changed.headers["etag"].to_str().unwrap(), etag);
    assert!(!names(&changed.body["tools"]).contains(&"get_forecast".to_owned()));
}

#[tokio::test]
async fn configured_categories_replace_derived_ones() {
    let category = toolscout_spec::adapters::manifest::ToolCategory {
        id: "weather".to_owned(),
        name: "Weather".to_owned(),
        description: Some("Forecasts".to_owned()),
        icon: Some("cloud".to_owned()),
    };
    let f = fixture_with(
        ServerOptions::default().with_categories(vec![category]),
        false,
    );
    let r = send(&f.app, "GET", "/api/v1/tools", None).await;
    assert_eq!(
        r.body["categories"],
        json!([{"id": "weather", "name": "Weather", "description": "Forecasts", "icon": "cloud"}])
    );
}

#[tokio::test]
async fn one_definition_and_unknown_names() {
    let f = fixture();
    let r = send(&f.app, "GET", "/api/v1/tools/get_forecast", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["name"], "get_forecast");
    assert_eq!(r.body["category"], "weather");

    let missing = send(&f.app, "GET", "/api/v1/tools/get_forcast", None).await;
    assert_eq!(missing.status, 404);
    insta::assert_json_snapshot!("unknown_tool", missing.body);

    f.state
        .toolbox()
        .catalog()
        .patch_bundle(f.weather, false)
        .unwrap();
    let disabled = send(&f.app, "GET", "/api/v1/tools/get_forecast", None).await;
    assert_eq!(disabled.status, 404);
    insta::assert_json_snapshot!("disabled_tool", disabled.body);
}

#[tokio::test]
async fn not_serving_is_503_with_a_json_error() {
    let f = fixture();
    f.state.set_serving(false);
    let r = send(&f.app, "GET", "/api/v1/tools", None).await;
    assert_eq!(r.status, 503);
    assert_eq!(r.headers["retry-after"], "5");
    insta::assert_json_snapshot!("unavailable", r.body);
    f.state.set_serving(true);
    assert_eq!(send(&f.app, "GET", "/api/v1/tools", None).await.status, 200);
}

#[tokio::test]
async fn invoke_by_name() {
    let f = fixture();
    let ok = send(
        &f.app,
        "POST",
        "/api/v1/tools/read_file/invoke",
        Some(json!({"args": {"file_path": "hello.txt"}})),
    )
    .await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.body["ok"], true);
    assert!(ok.body["value"].to_string().contains("hello"));

    let bad = send(
        &f.app,
        "POST",
        "/api/v1/tools/read_file/invoke",
        Some(json!({"args": {"file_path": 7}})),
    )
    .await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.body["error"]["kind"], "invalid_arguments");

    let unknown = send(
        &f.app,
        "POST",
        "/api/v1/tools/nope/invoke",
        Some(json!({"args": {}})),
    )
    .await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.body["ok"], false);
}
