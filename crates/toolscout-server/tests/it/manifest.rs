//! `GET /api/v1/tools`, `GET /api/v1/tools/{name}`, `POST /api/v1/tools/{name}/invoke`.

use serde_json::json;
use toolscout_server::ServerOptions;
use toolscout_spec::ToolSpec;
use uuid::Uuid;

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

/// Follows `next_page_token` from `?limit=N`; returns every page's body and `ETag`.
async fn pages(app: &axum::Router, limit: usize) -> Vec<(serde_json::Value, String)> {
    let mut out = Vec::new();
    let mut uri = format!("/api/v1/tools?limit={limit}");
    loop {
        let r = send(app, "GET", &uri, None).await;
        assert_eq!(r.status, 200, "{uri}: {}", r.body);
        let etag = r.headers["etag"].to_str().unwrap().to_owned();
        let next = r.body.get("next_page_token").cloned();
        out.push((r.body, etag));
        match next {
            Some(t) => {
                uri = format!(
                    "/api/v1/tools?limit={limit}&page_token={}",
                    t.as_str().unwrap()
                )
            }
            None => return out,
        }
        assert!(out.len() < 100, "pages never end");
    }
}

#[tokio::test]
async fn pages_concatenate_to_exactly_the_whole_manifest() {
    let f = fixture();
    let whole = send(&f.app, "GET", "/api/v1/tools", None).await;
    assert_eq!(whole.status, 200);
    assert!(whole.body.get("next_page_token").is_none());
    let tools = whole.body["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 8);
    let mut sorted = names(&whole.body["tools"]);
    sorted.sort();
    assert_eq!(names(&whole.body["tools"]), sorted, "ordered by name");

    let pages = pages(&f.app, 3).await;
    let sizes: Vec<usize> = pages
        .iter()
        .map(|(p, _)| p["tools"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, [3, 3, 2]);
    let joined: Vec<serde_json::Value> = pages
        .iter()
        .flat_map(|(p, _)| p["tools"].as_array().unwrap().clone())
        .collect();
    assert_eq!(&joined, tools);
    // The same shape: every field of the whole manifest, and the categories (of the whole
    // catalog) on the first page only.
    for (i, (page, _)) in pages.iter().enumerate() {
        assert_eq!(page["protocol_version"], whole.body["protocol_version"]);
        assert_eq!(page["scenario"], whole.body["scenario"]);
        assert!(page["generated_at"].is_string());
        let categories = if i == 0 {
            whole.body["categories"].clone()
        } else {
            json!([])
        };
        assert_eq!(page["categories"], categories, "page {i}");
    }
    assert!(!whole.body["categories"].as_array().unwrap().is_empty());

    // A limit of the whole catalog or more is one page, without a next token.
    let one = send(&f.app, "GET", "/api/v1/tools?limit=1000", None).await;
    assert_eq!(&one.body["tools"], &whole.body["tools"]);
    assert!(one.body.get("next_page_token").is_none());
}

#[tokio::test]
async fn each_page_has_its_own_etag_and_revalidates_on_its_own() {
    let f = fixture();
    let identity = f.state.toolbox().catalog().identity();
    let whole = send(&f.app, "GET", "/api/v1/tools", None).await;
    // The catalog identity is still the whole manifest's ETag.
    assert_eq!(
        whole.headers["etag"].to_str().unwrap(),
        format!("\"{identity}\"")
    );
    let pages = pages(&f.app, 3).await;
    let mut etags: Vec<&str> = pages.iter().map(|(_, e)| e.as_str()).collect();
    etags.push(whole.headers["etag"].to_str().unwrap());
    let mut distinct = etags.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), etags.len(), "{etags:?}");

    let second = format!(
        "/api/v1/tools?limit=3&page_token={}",
        pages[0].0["next_page_token"].as_str().unwrap()
    );
    for (uri, own, other) in [
        ("/api/v1/tools?limit=3", &pages[0].1, &pages[1].1),
        (second.as_str(), &pages[1].1, &pages[0].1),
    ] {
        let same = send_with(&f.app, "GET", uri, None, &[("if-none-match", own)]).await;
        assert_eq!(same.status, 304, "{uri}");
        assert_eq!(same.headers["etag"].to_str().unwrap(), own);
        assert_eq!(same.body, serde_json::Value::Null);
        let another = send_with(&f.app, "GET", uri, None, &[("if-none-match", other)]).await;
        assert_eq!(another.status, 200, "{uri}");
    }

    // A change of the catalog is a new ETag for every page, and the old tokens are stale.
    f.state
        .toolbox()
        .catalog()
        .patch_tool(f.weather, "get-forecast", "1", false)
        .unwrap();
    let first = send_with(
        &f.app,
        "GET",
        "/api/v1/tools?limit=3",
        None,
        &[("if-none-match", &pages[0].1)],
    )
    .await;
    assert_eq!(first.status, 200);
    assert_ne!(first.headers["etag"].to_str().unwrap(), pages[0].1);
    let stale = send_with(
        &f.app,
        "GET",
        &second,
        None,
        &[("if-none-match", &pages[1].1)],
    )
    .await;
    assert_eq!(stale.status, 400);
    assert_eq!(stale.body["error"]["code"], "stale_page_token");
    let token = pages[0].0["next_page_token"].as_str().unwrap().to_owned();
    insta::assert_snapshot!(stale.body.to_string().replace(&token, "[token]"), @r#"{"error":{"code":"stale_page_token","message":"page_token was issued for an earlier version of the catalog, which has changed since: start again from the first page (without page_token)","details":{"parameter":"page_token","value":"[token]"}}}"#);
}

#[tokio::test]
async fn bad_limits_and_page_tokens_are_400_naming_the_parameter() {
    let f = fixture();
    for limit in ["0", "1001", "abc", "", "-1", "2.5"] {
        let r = send(&f.app, "GET", &format!("/api/v1/tools?limit={limit}"), None).await;
        assert_eq!(r.status, 400, "limit={limit}");
        assert_eq!(r.body["error"]["code"], "invalid");
        assert_eq!(r.body["error"]["details"]["parameter"], "limit");
        assert!(
            r.body["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with(&format!("limit {limit:?} is not a page size")),
            "{}",
            r.body
        );
    }
    let r = send(&f.app, "GET", "/api/v1/tools?limit=0", None).await;
    insta::assert_snapshot!(r.body.to_string(), @r#"{"error":{"code":"invalid","message":"limit \"0\" is not a page size: give a whole number of tools from 1 to 1000, or leave limit out for the whole manifest","details":{"parameter":"limit","value":"0","max":1000}}}"#);

    let identity = f.state.toolbox().catalog().identity().simple().to_string();
    for token in [
        "garbage".to_owned(),
        format!("{identity}.x"),
        identity.clone(),
        // The current catalog, but past its end: not a token this server issued.
        format!("{identity}.9"),
    ] {
        let r = send(
            &f.app,
            "GET",
            &format!("/api/v1/tools?limit=3&page_token={token}"),
            None,
        )
        .await;
        assert_eq!(r.status, 400, "page_token={token}: {}", r.body);
        assert_eq!(r.body["error"]["code"], "invalid");
        assert_eq!(r.body["error"]["details"]["parameter"], "page_token");
    }
    let r = send(&f.app, "GET", "/api/v1/tools?page_token=garbage", None).await;
    insta::assert_snapshot!(r.body.to_string(), @r#"{"error":{"code":"invalid","message":"page_token \"garbage\" was not issued by this server: pass the next_page_token of the previous page, or leave page_token out for the first page","details":{"parameter":"page_token","value":"garbage"}}}"#);

    // A token of another catalog (or of this one before a change) is stale.
    let other = uuid::Uuid::now_v7().simple().to_string();
    let r = send(
        &f.app,
        "GET",
        &format!("/api/v1/tools?page_token={other}.3"),
        None,
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.body["error"]["code"], "stale_page_token");

    // A page token without a limit gets the default page size; an empty one is the first
    // page.
    let r = send(&f.app, "GET", "/api/v1/tools?page_token=", None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["tools"].as_array().unwrap().len(), 8);
}

/// The status, headers and raw body of a `GET` with `headers`.
async fn get_raw(
    app: &axum::Router,
    uri: &str,
    headers: &[(&str, &str)],
) -> (axum::http::StatusCode, axum::http::HeaderMap, Vec<u8>) {
    use tower::ServiceExt;
    let mut req = axum::http::Request::get(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = app
        .clone()
        .oneshot(req.body(axum::body::Body::empty()).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    (status, headers, bytes.to_vec())
}

/// A manifest without its `generated_at`, which moves with the clock.
fn timeless(bytes: &[u8]) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
    v.as_object_mut().unwrap().remove("generated_at").unwrap();
    v
}

#[tokio::test]
async fn manifests_are_compressed_when_the_client_accepts_it() {
    use std::io::Read;
    let f = fixture();
    let (status, headers, plain) = get_raw(&f.app, "/api/v1/tools", &[]).await;
    assert_eq!(status, 200);
    assert!(headers.get("content-encoding").is_none());
    assert_eq!(headers["content-type"], "application/json");
    let expected = timeless(&plain);

    for (encoding, uri) in [
        ("gzip", "/api/v1/tools"),
        ("br", "/api/v1/tools"),
        ("gzip", "/api/v1/tools?limit=4"),
    ] {
        let (status, headers, packed) =
            get_raw(&f.app, uri, &[("accept-encoding", encoding)]).await;
        assert_eq!(status, 200);
        assert_eq!(headers["content-encoding"], encoding, "{uri}");
        assert!(
            headers["vary"]
                .to_str()
                .unwrap()
                .to_ascii_lowercase()
                .contains("accept-encoding")
        );
        let mut unpacked = Vec::new();
        match encoding {
            "gzip" => flate2::read::GzDecoder::new(packed.as_slice())
                .read_to_end(&mut unpacked)
                .unwrap(),
            _ => brotli_decompressor::Decompressor::new(packed.as_slice(), 4096)
                .read_to_end(&mut unpacked)
                .unwrap(),
        };
        if uri == "/api/v1/tools" {
            assert_eq!(timeless(&unpacked), expected, "{encoding}");
            assert!(
                packed.len() * 3 < plain.len(),
                "{encoding}: {} bytes of {}",
                packed.len(),
                plain.len()
            );
        } else {
            assert_eq!(timeless(&unpacked)["tools"].as_array().unwrap().len(), 4);
        }
    }
    // The preferred encoding the client lists; none it refuses.
    let (_, headers, body) =
        get_raw(&f.app, "/api/v1/tools", &[("accept-encoding", "identity")]).await;
    assert!(headers.get("content-encoding").is_none());
    assert_eq!(timeless(&body), expected);
    // A 304 has no body to compress.
    let etag = format!("\"{}\"", f.state.toolbox().catalog().identity());
    let (status, headers, body) = get_raw(
        &f.app,
        "/api/v1/tools",
        &[("accept-encoding", "gzip"), ("if-none-match", &etag)],
    )
    .await;
    assert_eq!(status, 304);
    assert!(headers.get("content-encoding").is_none());
    assert!(body.is_empty());
    // One definition is compressed too.
    let (_, headers, _) = get_raw(
        &f.app,
        "/api/v1/tools/get_forecast",
        &[("accept-encoding", "gzip")],
    )
    .await;
    assert_eq!(headers["content-encoding"], "gzip");
}

#[tokio::test]
async fn a_whole_manifest_larger_than_a_chunk_streams_every_tool_once() {
    let f = fixture();
    let catalog = f.state.toolbox().catalog();
    let bundle = Uuid::now_v7();
    catalog
        .put_bundle(bundle, &toolscout_catalog::BundlePut::new("many"))
        .unwrap();
    // About 1 MB of JSON: several of the stream's 256 KiB chunks.
    let long = "A tool among many, described at length so that the manifest is large. ".repeat(8);
    let puts: Vec<(String, toolscout_catalog::ToolPut)> = (0..1500)
        .map(|i| {
            let spec = ToolSpec::builder(format!("many_{i:04}"), "One of many.")
                .description(long.clone())
                .build()
                .unwrap();
            let put = toolscout_catalog::ToolPut::http(
                spec,
                json!({"method": "GET", "urlTemplate": "https://api.example.com/t"}),
            );
            (format!("many-{i:04}"), put)
        })
        .collect();
    catalog
        .put_tools(
            bundle,
            puts.iter().map(|(slug, put)| (slug.as_str(), "1", put)),
        )
        .unwrap();

    let whole = send(&f.app, "GET", "/api/v1/tools", None).await;
    assert_eq!(whole.status, 200);
    let tools = whole.body["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1508);
    let joined: Vec<serde_json::Value> = pages(&f.app, 1000)
        .await
        .iter()
        .flat_map(|(p, _)| p["tools"].as_array().unwrap().clone())
        .collect();
    assert_eq!(&joined, tools);
}
