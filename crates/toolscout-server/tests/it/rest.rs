//! The REST API of the tools spec under `/tools`.

use serde_json::{Value, json};
use toolscout_catalog::builtin;
use toolscout_server::ServerOptions;
use uuid::Uuid;

use crate::{fixture, fixture_with, redact, send, send_raw, send_with};

fn tool_body() -> Value {
    json!({
        "displayName": "Sea temperature",
        "description": "Water temperature at a beach. Updated hourly.",
        "type": "http",
        "argSchema": {"type": "object", "properties": {"beach": {"type": "string"}}, "required": ["beach"]},
        "impl": {"method": "GET", "urlTemplate": "https://api.example.com/sea?b=${beach}"},
        "name": "sea_temperature",
        "category": "weather",
        "tags": ["sea"]
    })
}

#[tokio::test]
async fn bundle_lifecycle() {
    let f = fixture();
    let id = Uuid::now_v7();
    let uri = format!("/tools/bundles/{id}");
    let put = send(
        &f.app,
        "PUT",
        &uri,
        Some(json!({"slug": "maps", "displayName": "Maps", "description": "Map tools", "isEnabled": true})),
    )
    .await;
    assert_eq!(put.status, 200);
    insta::assert_json_snapshot!("bundle", redact(&put.body));

    let off = send(&f.app, "PATCH", &uri, Some(json!({"isEnabled": false}))).await;
    assert_eq!(off.body["isEnabled"], false);
    let listed = send(&f.app, "GET", "/tools/bundles", None).await;
    let slugs: Vec<&str> = listed.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["slug"].as_str().unwrap())
        .collect();
    assert!(!slugs.contains(&"maps"));
    let all = send(
        &f.app,
        "GET",
        &format!("/tools/bundles?includeDisabled=true&bundleIDs={id}"),
        None,
    )
    .await;
    assert_eq!(all.body["items"][0]["slug"], "maps");

    let deleted = send(&f.app, "DELETE", &uri, None).await;
    assert_eq!(deleted.status, 200);
    assert!(deleted.body["softDeletedAt"].is_string());
}

#[tokio::test]
async fn bundle_errors_say_what_is_wrong() {
    let f = fixture();
    let bad_id = send(
        &f.app,
        "PUT",
        "/tools/bundles/not-a-uuid",
        Some(json!({"slug": "x"})),
    )
    .await;
    assert_eq!(bad_id.status, 400);
    let bad_slug = send(
        &f.app,
        "PUT",
        &format!("/tools/bundles/{}", Uuid::now_v7()),
        Some(json!({"slug": "no spaces"})),
    )
    .await;
    assert_eq!(bad_slug.status, 400);
    let missing = send(
        &f.app,
        "PATCH",
        &format!("/tools/bundles/{}", Uuid::now_v7()),
        Some(json!({"isEnabled": true})),
    )
    .await;
    assert_eq!(missing.status, 404);
    let builtin_id = builtin::bundles()[0].id;
    let built_in = send(
        &f.app,
        "PUT",
        &format!("/tools/bundles/{builtin_id}"),
        Some(json!({"slug": "files", "displayName": "Mine now"})),
    )
    .await;
    assert_eq!(built_in.status, 409);
    insta::assert_json_snapshot!(
        "bundle_errors",
        json!({
            "bad_id": bad_id.body,
            "bad_slug": bad_slug.body,
            "missing": redact(&missing.body),
            "built_in": built_in.body,
        })
    );
}

#[tokio::test]
async fn tool_lifecycle_and_invoke() {
    let f = fixture();
    let uri = format!("/tools/bundles/{}/tools/sea-temp/version/v1", f.weather);
    let put = send(&f.app, "PUT", &uri, Some(tool_body())).await;
    assert_eq!(put.status, 200, "{}", put.body);
    insta::assert_json_snapshot!("tool", redact(&put.body));

    let again = send(&f.app, "PUT", &uri, Some(tool_body())).await;
    assert_eq!(again.status, 409);
    assert_eq!(again.body["error"]["code"], "conflict");

    let got = send(&f.app, "GET", &uri, None).await;
    assert_eq!(got.body["slug"], "sea-temp");
    assert_eq!(got.body["version"], "v1");
    let off = send(&f.app, "PATCH", &uri, Some(json!({"isEnabled": false}))).await;
    assert_eq!(off.body["isCallable"], false);
    assert_eq!(off.body["disabledReason"], "the tool is disabled");
    let invoked = send(
        &f.app,
        "POST",
        &format!("{uri}/invoke"),
        Some(json!({"args": {"beach": "x"}})),
    )
    .await;
    assert_eq!(invoked.status, 423);
    assert_eq!(invoked.body["error"]["kind"], "disabled");

    let gone = send(&f.app, "DELETE", &uri, None).await;
    assert_eq!(gone.status, 200);
    assert_eq!(send(&f.app, "GET", &uri, None).await.status, 404);
}

#[tokio::test]
async fn invoke_a_built_in_version() {
    let f = fixture();
    let read_file = builtin::tool("read_file").unwrap();
    let bundle = builtin::bundles()
        .into_iter()
        .find(|b| b.tools.iter().any(|t| t.id == read_file.id))
        .unwrap();
    let uri = format!(
        "/tools/bundles/{}/tools/read-file/version/1/invoke",
        bundle.id
    );
    let ok = send(
        &f.app,
        "POST",
        &uri,
        Some(json!({"args": {"file_path": "hello.txt"}})),
    )
    .await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.body["ok"], true);
    let bad = send(&f.app, "POST", &uri, Some(json!({"args": {}}))).await;
    assert_eq!(bad.status, 400);
    insta::assert_json_snapshot!("invoke_invalid_arguments", bad.body);
}

#[tokio::test]
async fn writes_to_disabled_bundles_and_built_ins_are_refused() {
    let f = fixture();
    send(
        &f.app,
        "PATCH",
        &format!("/tools/bundles/{}", f.weather),
        Some(json!({"isEnabled": false})),
    )
    .await;
    let locked = send(
        &f.app,
        "PUT",
        &format!("/tools/bundles/{}/tools/sea-temp/version/v1", f.weather),
        Some(tool_body()),
    )
    .await;
    assert_eq!(locked.status, 423);
    let builtin_id = builtin::bundles()[0].id;
    let built_in = send(
        &f.app,
        "DELETE",
        &format!("/tools/bundles/{builtin_id}/tools/read-file/version/1"),
        None,
    )
    .await;
    assert_eq!(built_in.status, 409);
    insta::assert_json_snapshot!(
        "write_refusals",
        json!({"disabled_bundle": redact(&locked.body), "built_in": built_in.body})
    );
}

#[tokio::test]
async fn tool_bodies_are_checked() {
    let f = fixture();
    let uri = format!("/tools/bundles/{}/tools/sea-temp/version/v1", f.weather);
    let mut no_type = tool_body();
    no_type.as_object_mut().unwrap().remove("type");
    let mut wrong_slug = tool_body();
    wrong_slug["slug"] = json!("other");
    let mut bad_schema = tool_body();
    bad_schema["argSchema"] = json!({"type": "array"});
    let mut bad_url = tool_body();
    bad_url["impl"] = json!({"urlTemplate": "ftp://x"});
    let mut out = serde_json::Map::new();
    for (name, body) in [
        ("no_type", no_type),
        ("wrong_slug", wrong_slug),
        ("bad_schema", bad_schema),
        ("bad_url", bad_url),
    ] {
        let r = send(&f.app, "PUT", &uri, Some(body)).await;
        assert_eq!(r.status, 400, "{name}: {}", r.body);
        out.insert(name.to_owned(), r.body);
    }
    insta::assert_json_snapshot!("tool_body_errors", out);
}

#[tokio::test]
async fn list_tools_with_filters_and_pages() {
    let f = fixture();
    let weather = send(&f.app, "GET", "/tools/tools?tags=weather", None).await;
    assert_eq!(names_of(&weather.body), ["get_forecast"]);
    let in_bundle = send(
        &f.app,
        "GET",
        &format!("/tools/tools?bundleIDs={}", f.weather),
        None,
    )
    .await;
    assert_eq!(names_of(&in_bundle.body), ["get_forecast", "spawn_agent"]);

    let mut seen = Vec::new();
    let mut uri = "/tools/tools?pageSize=3".to_owned();
    loop {
        let page = send(&f.app, "GET", &uri, None).await;
        assert!(page.body["items"].as_array().unwrap().len() <= 3);
        seen.extend(names_of(&page.body));
        match page.body["nextPageToken"].as_str() {
            Some(t) => uri = format!("/tools/tools?pageSize=3&pageToken={t}"),
            None => break,
        }
    }
    assert_eq!(seen.len(), 8);
    let huge = send(
        &f.app,
        "GET",
        "/tools/tools?pageSize=18446744073709551615",
        None,
    )
    .await;
    assert_eq!(huge.status, 200);

    let bad_token = send(&f.app, "GET", "/tools/tools?pageToken=zzz", None).await;
    assert_eq!(bad_token.status, 400);
    let bad_flag = send(&f.app, "GET", "/tools/tools?includeDisabled=maybe", None).await;
    assert_eq!(bad_flag.status, 400);
    assert_eq!(bad_flag.body["error"]["code"], "invalid");
}

fn names_of(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn search_tools() {
    let f = fixture();
    let r = send(
        &f.app,
        "GET",
        "/tools/tools/search?q=forecast&pageSize=5",
        None,
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(names_of(&r.body)[0], "get_forecast");
    assert!(r.body["items"][0]["match"]["tier"].as_str().is_some());
    let empty = send(&f.app, "GET", "/tools/tools/search", None).await;
    assert_eq!(empty.status, 400);
}

#[tokio::test]
async fn malformed_and_oversized_bodies() {
    let f = fixture_with(ServerOptions::default().with_body_limit(1024), true);
    let uri = format!("/tools/bundles/{}", Uuid::now_v7());
    let malformed = send_raw(&f.app, "PUT", &uri, b"{\"slug\": ").await;
    assert_eq!(malformed.status, 400);
    let huge = vec![b'a'; 4096];
    let big = json!({"slug": String::from_utf8(huge).unwrap()});
    let too_large = send(&f.app, "PUT", &uri, Some(big)).await;
    assert_eq!(too_large.status, 413);
    let no_type = send_with(&f.app, "PATCH", &uri, None, &[]).await;
    assert_eq!(no_type.status, 415);
    let route = send(&f.app, "GET", "/nowhere", None).await;
    assert_eq!(route.status, 404);
    insta::assert_json_snapshot!(
        "body_errors",
        json!({
            "malformed": malformed.body,
            "too_large": too_large.body,
            "no_content_type": no_type.body,
            "no_route": route.body,
        })
    );
}

#[tokio::test]
async fn a_token_guards_everything_but_get_reads() {
    let f = fixture_with(ServerOptions::default().with_token(Some("s3cret")), true);
    let uri = format!("/tools/bundles/{}", Uuid::now_v7());
    let body = Some(json!({"slug": "maps"}));
    let refused = send(&f.app, "PUT", &uri, body.clone()).await;
    assert_eq!(refused.status, 401);
    assert_eq!(refused.headers["www-authenticate"], "Bearer");
    insta::assert_json_snapshot!("unauthorized", refused.body);
    let wrong = send_with(
        &f.app,
        "PUT",
        &uri,
        body.clone(),
        &[("authorization", "Bearer nope")],
    )
    .await;
    assert_eq!(wrong.status, 401);
    let ok = send_with(
        &f.app,
        "PUT",
        &uri,
        body,
        &[("authorization", "Bearer s3cret")],
    )
    .await;
    assert_eq!(ok.status, 200);
    assert_eq!(
        send(&f.app, "GET", "/tools/bundles", None).await.status,
        200
    );
    assert_eq!(send(&f.app, "GET", "/api/v1/tools", None).await.status, 200);
    // JSON-RPC: every request needs the token, reads too (regression: reads were open).
    let batch = json!([
        {"jsonrpc": "2.0", "method": "server/identity", "id": 1},
        {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "clock", "arguments": {"action": "now"}}, "id": 2}
    ]);
    let rpc = send(&f.app, "POST", "/rpc", Some(batch.clone())).await;
    assert_eq!(rpc.status, 401, "{}", rpc.body);
    let wrong = send_with(
        &f.app,
        "POST",
        "/rpc",
        Some(batch.clone()),
        &[("authorization", "Bearer nope")],
    )
    .await;
    assert_eq!(wrong.status, 401, "{}", wrong.body);
    let allowed = send_with(
        &f.app,
        "POST",
        "/rpc",
        Some(batch),
        // The scheme is case-insensitive (regression: `bearer` was refused).
        &[("authorization", "bearer s3cret")],
    )
    .await;
    assert!(
        allowed.body[0]["result"]["server_id"].is_string(),
        "{}",
        allowed.body
    );
    assert_eq!(allowed.body[1]["result"]["ok"], true, "{}", allowed.body);
}
