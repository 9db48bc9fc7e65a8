//! Remote catalogs against a second server on loopback.

use axum::routing::get;
use serde_json::json;
use toolscout_discover::Lookup;
use toolscout_server::{AppState, RemoteCatalog, RemoteSource, ServerOptions, SourceStatus};

use crate::socket::spawn;
use crate::{fixture, fixture_with};

fn status(reports: &[toolscout_server::SourceReport]) -> SourceStatus {
    assert_eq!(reports.len(), 1);
    reports[0].status.clone()
}

#[tokio::test]
async fn remote_tools_are_imported_cached_revalidated_and_called() {
    let remote = fixture();
    let url = spawn(remote.state.clone()).await;
    let local = fixture_with(ServerOptions::default(), false);
    let source = RemoteSource::new(format!("{url}/"));
    let rc = RemoteCatalog::new(local.state.toolbox().clone(), vec![source.clone()]).unwrap();

    assert_eq!(
        status(&rc.refresh().await),
        SourceStatus::Fetched { tools: 8 }
    );
    assert_eq!(status(&rc.refresh().await), SourceStatus::Cached);
    assert_eq!(status(&rc.revalidate().await), SourceStatus::NotModified);

    let Lookup::Found(tool) = local.state.toolbox().lookup("json_query") else {
        panic!("json_query was not imported");
    };
    assert_eq!(tool.bundle_id, source.bundle_id());
    assert_eq!(
        tool.implementation["urlTemplate"],
        format!("{url}/api/v1/tools/json_query/invoke")
    );
    let hits = local
        .state
        .toolbox()
        .search(&toolscout_search::SearchQuery::new("jsonpath"))
        .unwrap();
    assert_eq!(hits.hits[0].0.spec.name.as_str(), "json_query");

    let state = AppState::with_remote(
        local.state.toolbox().clone(),
        ServerOptions::default(),
        rc.clone(),
    );
    let outcome = state
        .call("json_query", json!({"value": {"a": 1}, "path": "$.a"}))
        .await;
    assert!(outcome.is_ok(), "{outcome:?}");
    let bad = state.call("json_query", json!({"value": 1})).await;
    assert_eq!(bad.error().unwrap().kind.as_str(), "invalid_arguments");

    // A change on the remote is a new ETag: the next revalidation imports it.
    remote
        .state
        .toolbox()
        .catalog()
        .patch_bundle(remote.weather, false)
        .unwrap();
    assert_eq!(
        status(&rc.revalidate().await),
        SourceStatus::Fetched { tools: 6 }
    );
    assert!(matches!(
        local.state.toolbox().lookup("spawn_agent"),
        Lookup::Found(t) if t.bundle_id == local.weather
    ));
}

#[tokio::test]
async fn a_source_that_answers_503_or_nothing_is_unavailable() {
    let remote = fixture();
    let url = spawn(remote.state.clone()).await;
    let local = fixture_with(ServerOptions::default(), false);
    let rc =
        RemoteCatalog::new(local.state.toolbox().clone(), vec![RemoteSource::new(url)]).unwrap();
    rc.refresh().await;

    remote.state.set_serving(false);
    assert!(matches!(
        status(&rc.revalidate().await),
        SourceStatus::Unavailable { reason } if reason.contains("503")
    ));
    match local.state.toolbox().lookup("clock") {
        Lookup::Disabled { reason, .. } => assert_eq!(reason, "its bundle is disabled"),
        other => panic!("expected disabled, got {other:?}"),
    }
    remote.state.set_serving(true);
    assert_eq!(status(&rc.revalidate().await), SourceStatus::NotModified);
    assert!(matches!(
        local.state.toolbox().lookup("clock"),
        Lookup::Found(_)
    ));

    let dead = RemoteCatalog::new(
        local.state.toolbox().clone(),
        vec![RemoteSource::new("http://127.0.0.1:1")],
    )
    .unwrap();
    assert!(matches!(
        status(&dead.refresh().await),
        SourceStatus::Unavailable { .. }
    ));
}

#[tokio::test]
async fn unknown_major_versions_are_skipped_and_unknown_minor_fields_ignored() {
    fn manifest(version: &'static str) -> axum::Router {
        axum::Router::new().route(
            "/api/v1/tools",
            get(move || async move {
                axum::Json(json!({
                    "protocol_version": version,
                    "scenario": {"name": "future", "version": "9.0.0", "description": "From the future", "rating": 5},
                    "tools": [{
                        "name": "teleport",
                        "description": "Move someone somewhere.",
                        "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
                        "metadata": {"enabled_by_default": true, "quantum": true},
                        "colour": "blue"
                    }],
                    "generated_at": "2030-01-01T00:00:00Z",
                    "signature": "abc"
                }))
            }),
        )
    }
    let local = fixture_with(ServerOptions::default(), false);
    for (version, expected_found) in [("2.0", false), ("1.7", true)] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, manifest(version)).await });
        let rc = RemoteCatalog::new(local.state.toolbox().clone(), vec![RemoteSource::new(url)])
            .unwrap();
        let s = status(&rc.refresh().await);
        if expected_found {
            assert_eq!(s, SourceStatus::Fetched { tools: 1 });
            assert!(matches!(
                local.state.toolbox().lookup("teleport"),
                Lookup::Found(_)
            ));
        } else {
            insta::assert_debug_snapshot!("skipped_major_version", s);
            assert!(matches!(
                local.state.toolbox().lookup("teleport"),
                Lookup::NotFound { .. }
            ));
        }
    }
}

#[tokio::test]
async fn local_overrides_beat_the_manifest_and_survive_refreshes() {
    let remote = fixture();
    let url = spawn(remote.state.clone()).await;
    let local = fixture_with(ServerOptions::default(), false);
    let prefs = tempfile::tempdir().unwrap();
    let path = prefs.path().join("prefs.json");
    let rc = RemoteCatalog::with_preferences(
        local.state.toolbox().clone(),
        vec![RemoteSource::new(url.clone())],
        &path,
    )
    .unwrap();
    rc.refresh().await;
    rc.set_override("clock", Some(false)).await.unwrap();
    assert!(matches!(
        local.state.toolbox().lookup("clock"),
        Lookup::Disabled { .. }
    ));
    // A new manifest (another tool changed) keeps the override.
    remote
        .state
        .toolbox()
        .catalog()
        .patch_tool(remote.weather, "spawn-agent", "1", false)
        .unwrap();
    assert_eq!(
        status(&rc.revalidate().await),
        SourceStatus::Fetched { tools: 7 }
    );
    assert!(matches!(
        local.state.toolbox().lookup("clock"),
        Lookup::Disabled { .. }
    ));

    // The preferences file carries the override to the next process.
    let again = RemoteCatalog::with_preferences(
        local.state.toolbox().clone(),
        vec![RemoteSource::new(url)],
        &path,
    )
    .unwrap();
    assert_eq!(again.overrides().get("clock"), Some(&false));
    rc.set_override("clock", None).await.unwrap();
    assert!(matches!(
        local.state.toolbox().lookup("clock"),
        Lookup::Found(_)
    ));
}

#[tokio::test]
async fn remote_calls_carry_the_source_token() {
    let remote = fixture_with(ServerOptions::default().with_token(Some("t0ken")), true);
    let url = spawn(remote.state.clone()).await;
    let args = json!({"value": [1], "path": "$[0]"});
    for (token, ok) in [(Some("t0ken"), true), (None, false)] {
        let local = fixture_with(ServerOptions::default(), false);
        let rc = RemoteCatalog::new(
            local.state.toolbox().clone(),
            vec![RemoteSource::new(url.clone()).with_token(token)],
        )
        .unwrap();
        // The manifest is a read: no token needed.
        assert_eq!(
            status(&rc.refresh().await),
            SourceStatus::Fetched { tools: 8 }
        );
        let state =
            AppState::with_remote(local.state.toolbox().clone(), ServerOptions::default(), rc);
        let outcome = state.call("json_query", args.clone()).await;
        assert_eq!(outcome.is_ok(), ok, "{outcome:?}");
        if !ok {
            insta::assert_snapshot!(
                "remote_call_without_token",
                outcome.error().unwrap().to_string().replace(&url, "[url]")
            );
        }
    }
}

/// A consumer with no tools of its own, whose invoker may reach loopback and holds the
/// tokens of `sources`; its catalog lives in `dir`.
fn consumer(dir: &std::path::Path, sources: &[RemoteSource]) -> toolscout_discover::Toolbox {
    use toolscout_catalog::{Catalog, CatalogOptions};
    use toolscout_invoke::{AllowedHosts, HttpConfig, Invoker};
    let catalog = Catalog::open_with(dir, CatalogOptions::default().with_builtins(false)).unwrap();
    let invoker = Invoker::default()
        .with_http_config(HttpConfig::with_allowed_hosts(
            AllowedHosts::new(["127.0.0.1:*"]).allow_private(true),
        ))
        .with_secrets(RemoteSource::secrets(sources));
    toolscout_discover::Toolbox::new(
        catalog,
        toolscout_search::SearchIndex::in_memory().unwrap(),
        invoker,
    )
    .unwrap()
}

#[tokio::test]
async fn a_remote_tool_is_called_through_the_toolbox_and_the_consumers_invoke_route() {
    // The producer needs a token for calls; its `read_file` reads its own workspace,
    // which the consumer does not have: the text can only come from the producer.
    let producer = fixture_with(ServerOptions::default().with_token(Some("t0ken")), true);
    let url = spawn(producer.state.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let sources = vec![RemoteSource::new(url.clone()).with_token(Some("t0ken"))];
    let toolbox = consumer(dir.path(), &sources);
    let rc = RemoteCatalog::new(toolbox.clone(), sources.clone()).unwrap();
    assert_eq!(
        status(&rc.refresh().await),
        SourceStatus::Fetched { tools: 8 }
    );
    let Lookup::Found(tool) = toolbox.lookup("read_file") else {
        panic!("read_file was not imported");
    };
    assert!(
        !tool.implementation.to_string().contains("t0ken"),
        "the token is not stored in the catalog: {}",
        tool.implementation
    );

    // Toolbox::call: the imported HTTP tool posts {"args": …} to the producer.
    let outcome = toolbox
        .call("read_file", json!({"file_path": "hello.txt", "limit": 1}))
        .await;
    assert_eq!(outcome.value(), Some(&json!("hello\n")), "{outcome:?}");

    // The consumer's own invoke route, served without a RemoteCatalog: the same HTTP tool.
    let consumer_url = spawn(AppState::new(toolbox.clone(), ServerOptions::default())).await;
    let reply: serde_json::Value = reqwest::Client::new()
        .post(format!("{consumer_url}/api/v1/tools/read_file/invoke"))
        .json(&json!({"args": {"file_path": "hello.txt"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(reply["ok"], true, "{reply}");
    assert_eq!(reply["value"], "hello\nworld\n");

    // A failure on the producer comes back as the producer's own error: its kind,
    // message and details, plus the status it answered with.
    let missing = toolbox
        .call("read_file", json!({"file_path": "missing.txt"}))
        .await;
    insta::assert_snapshot!(
        crate::redact(&missing.to_json()).to_string().replace(&url, "[url]"),
        @r#"{"ok":false,"error":{"kind":"not_found","message":"'missing.txt' does not exist","details":{"path":"missing.txt","remote_status":200}}}"#
    );
}

#[tokio::test]
async fn a_remote_tool_without_the_token_says_the_credentials_were_refused() {
    let producer = fixture_with(ServerOptions::default().with_token(Some("t0ken")), true);
    let url = spawn(producer.state.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let sources = vec![RemoteSource::new(url.clone())];
    let toolbox = consumer(dir.path(), &sources);
    let rc = RemoteCatalog::new(toolbox.clone(), sources).unwrap();
    rc.refresh().await;
    let outcome = toolbox
        .call("json_query", json!({"value": [1], "path": "$[0]"}))
        .await;
    insta::assert_snapshot!(
        outcome.error().unwrap().to_string().replace(&url, "[url]"),
        @"http_status: POST [url]/api/v1/tools/json_query/invoke answered 401, expected a 2xx status. The credentials were refused; this is not fixable by changing arguments."
    );
}

/// A manifest over [`MAX_MANIFEST_BYTES`](toolscout_server::remote::MAX_MANIFEST_BYTES)
/// is refused whether it says its length up front or streams without one.
#[tokio::test]
async fn a_manifest_over_the_size_limit_is_refused() {
    use toolscout_server::remote::MAX_MANIFEST_BYTES;
    const CHUNK: usize = 1 << 20;
    let chunks = MAX_MANIFEST_BYTES / CHUNK + 2;
    let streamed = axum::Router::new().route(
        "/api/v1/tools",
        get(move || async move {
            // `[` then spaces: valid JSON so far, never finished, no Content-Length.
            let body = futures_util::stream::iter((0..chunks).map(|i| {
                let mut chunk = vec![b' '; CHUNK];
                if i == 0 {
                    chunk[0] = b'[';
                }
                Ok::<_, std::io::Error>(axum::body::Bytes::from(chunk))
            }));
            axum::body::Body::from_stream(body)
        }),
    );
    let declared = axum::Router::new().route(
        "/api/v1/tools",
        get(|| async { vec![b' '; MAX_MANIFEST_BYTES + 1] }),
    );
    let local = fixture_with(ServerOptions::default(), false);
    for router in [streamed, declared] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await });
        let rc = RemoteCatalog::new(local.state.toolbox().clone(), vec![RemoteSource::new(url)])
            .unwrap();
        match status(&rc.refresh().await) {
            SourceStatus::Unavailable { reason } => assert!(
                reason.contains(&format!("larger than {MAX_MANIFEST_BYTES} bytes")),
                "{reason}"
            ),
            other => panic!("expected unavailable, got {other:?}"),
        }
    }
}

/// One request a recorded server saw.
#[derive(Debug, Clone)]
struct Asked {
    /// Path and query.
    uri: String,
    accept_encoding: String,
    content_encoding: String,
}

type Seen = std::sync::Arc<std::sync::Mutex<Vec<Asked>>>;

/// Serves `app` on loopback, recording every request; `hook` sees each request's URI
/// before `app` does. Returns the base URL.
async fn spawn_recorded(
    app: axum::Router,
    hook: impl Fn(&str) + Clone + Send + Sync + 'static,
) -> (String, Seen) {
    let seen = Seen::default();
    let record = seen.clone();
    let app = app.layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            let record = record.clone();
            let hook = hook.clone();
            async move {
                let uri = req.uri().to_string();
                let header = |h: &axum::http::HeaderMap, name: &str| {
                    h.get(name)
                        .map(|v| v.to_str().unwrap().to_owned())
                        .unwrap_or_default()
                };
                let accept_encoding = header(req.headers(), "accept-encoding");
                hook(&uri);
                let resp = next.run(req).await;
                record.lock().unwrap().push(Asked {
                    uri,
                    accept_encoding,
                    content_encoding: header(resp.headers(), "content-encoding"),
                });
                resp
            }
        },
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

fn take(seen: &Seen) -> Vec<Asked> {
    std::mem::take(&mut *seen.lock().unwrap())
}

/// The names of the tools `toolbox` holds in `bundle`.
fn names_in(toolbox: &toolscout_discover::Toolbox, bundle: uuid::Uuid) -> Vec<String> {
    let mut names: Vec<String> = toolbox
        .catalog()
        .tools()
        .into_iter()
        .filter(|t| t.bundle_id == bundle)
        .map(|t| t.spec.name.to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_paged_source_is_read_page_by_page_and_revalidated_by_its_first_page() {
    let remote = fixture();
    let mut expected: Vec<String> = remote
        .state
        .toolbox()
        .callable_specs()
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    expected.sort();
    assert_eq!(expected.len(), 8);
    let (url, seen) = spawn_recorded(toolscout_server::router(remote.state.clone()), |_| {}).await;
    let (_dir, sources, toolbox, rc) = paged_consumer(url);

    assert_eq!(
        status(&rc.refresh().await),
        SourceStatus::Fetched { tools: 8 }
    );
    assert_eq!(names_in(&toolbox, sources[0].bundle_id()), expected);
    let asked = take(&seen);
    let uris: Vec<&str> = asked.iter().map(|a| a.uri.as_str()).collect();
    assert_eq!(uris.len(), 3, "{uris:?}");
    assert_eq!(uris[0], "/api/v1/tools?limit=3");
    for uri in &uris[1..] {
        assert!(
            uri.starts_with("/api/v1/tools?limit=3&page_token="),
            "{uri}"
        );
    }
    assert_ne!(uris[1], uris[2]);
    // Every page travelled gzip-compressed.
    for a in &asked {
        assert!(a.accept_encoding.contains("gzip"), "{a:?}");
        assert_eq!(a.content_encoding, "gzip", "{a:?}");
    }

    // Revalidation asks for the first page only.
    assert_eq!(status(&rc.revalidate().await), SourceStatus::NotModified);
    let uris: Vec<String> = take(&seen).into_iter().map(|a| a.uri).collect();
    assert_eq!(uris, ["/api/v1/tools?limit=3"]);

    // A change is a new first page: every page is read again.
    remote
        .state
        .toolbox()
        .catalog()
        .patch_bundle(remote.weather, false)
        .unwrap();
    assert_eq!(
        status(&rc.revalidate().await),
        SourceStatus::Fetched { tools: 6 }
    );
    assert_eq!(take(&seen).len(), 2);
    expected.retain(|n| n != "get_forecast" && n != "spawn_agent");
    assert_eq!(names_in(&toolbox, sources[0].bundle_id()), expected);
}

#[tokio::test]
async fn a_change_between_two_pages_starts_the_read_again() {
    let remote = fixture();
    let changed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hook = {
        let state = remote.state.clone();
        let weather = remote.weather;
        let changed = changed.clone();
        move |uri: &str| {
            if uri.contains("page_token=")
                && !changed.swap(true, std::sync::atomic::Ordering::SeqCst)
            {
                state
                    .toolbox()
                    .catalog()
                    .patch_tool(weather, "spawn-agent", "1", false)
                    .unwrap();
            }
        }
    };
    let (url, seen) = spawn_recorded(toolscout_server::router(remote.state.clone()), hook).await;
    let (_dir, sources, toolbox, rc) = paged_consumer(url);
    assert_eq!(
        status(&rc.refresh().await),
        SourceStatus::Fetched { tools: 7 }
    );
    assert!(changed.load(std::sync::atomic::Ordering::SeqCst));
    let uris: Vec<String> = take(&seen).into_iter().map(|a| a.uri).collect();
    // The first page, the second (stale), then the new catalog's three pages.
    assert_eq!(uris.len(), 5, "{uris:?}");
    assert_eq!(uris[0], "/api/v1/tools?limit=3");
    assert_eq!(uris[2], "/api/v1/tools?limit=3");
    assert!(!names_in(&toolbox, sources[0].bundle_id()).contains(&"spawn_agent".to_owned()));
    assert!(matches!(toolbox.lookup("get_forecast"), Lookup::Found(_)));
}

/// A manifest of one tool whose description is `description`, with `next` as its
/// `next_page_token`.
fn page_of(name: &str, description: &str, next: Option<&str>) -> serde_json::Value {
    let mut page = json!({
        "protocol_version": "1.0",
        "scenario": {"name": "pages", "version": "1.0.0"},
        "tools": [{
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": {}},
        }],
        "generated_at": "2030-01-01T00:00:00Z",
    });
    if let Some(next) = next {
        page["next_page_token"] = json!(next);
    }
    page
}

/// A consumer of the server at `url` that reads its manifest three tools a page: its
/// directory, sources, toolbox and remote catalog.
fn paged_consumer(
    url: String,
) -> (
    tempfile::TempDir,
    Vec<RemoteSource>,
    toolscout_discover::Toolbox,
    RemoteCatalog,
) {
    let dir = tempfile::tempdir().unwrap();
    let sources = vec![RemoteSource::new(url)];
    let toolbox = consumer(dir.path(), &sources);
    let rc = RemoteCatalog::new(toolbox.clone(), sources.clone())
        .unwrap()
        .with_page_size(3);
    (dir, sources, toolbox, rc)
}

async fn refresh_against(router: axum::Router) -> SourceStatus {
    let (url, _) = spawn_recorded(router, |_| {}).await;
    let dir = tempfile::tempdir().unwrap();
    let sources = vec![RemoteSource::new(url)];
    let rc = RemoteCatalog::new(consumer(dir.path(), &sources), sources).unwrap();
    status(&rc.refresh().await)
}

#[tokio::test]
async fn pages_that_never_end_are_refused() {
    let endless = axum::Router::new().route(
        "/api/v1/tools",
        get(|| async { axum::Json(page_of("again", "Again.", Some("more"))) }),
    );
    match refresh_against(endless).await {
        SourceStatus::Unavailable { reason } => {
            assert_eq!(reason, "the manifest has more than 1000 pages");
        }
        other => panic!("expected unavailable, got {other:?}"),
    }
}

/// [`MAX_MANIFEST_BYTES`](toolscout_server::remote::MAX_MANIFEST_BYTES) holds for all the
/// pages of a manifest together, each under it.
#[tokio::test]
async fn the_size_limit_holds_for_all_pages_together() {
    use toolscout_server::remote::MAX_MANIFEST_BYTES;
    let third = "x".repeat(MAX_MANIFEST_BYTES / 3);
    let pages = axum::Router::new().route(
        "/api/v1/tools",
        get(
            move |axum::extract::RawQuery(query): axum::extract::RawQuery| {
                let third = third.clone();
                async move {
                    let query = query.unwrap_or_default();
                    let page: usize = query
                        .split_once("page_token=")
                        .map_or(0, |(_, t)| t.parse().unwrap());
                    let next = (page + 1).to_string();
                    axum::Json(page_of(&format!("tool_{page}"), &third, Some(&next)))
                }
            },
        ),
    );
    match refresh_against(pages).await {
        SourceStatus::Unavailable { reason } => assert_eq!(
            reason,
            format!(
                "page 3 of the manifest could not be read: the manifest's pages are larger than {MAX_MANIFEST_BYTES} bytes together"
            )
        ),
        other => panic!("expected unavailable, got {other:?}"),
    }
}

/// The limit counts a compressed manifest's bytes once decompressed.
#[tokio::test]
async fn a_compressed_manifest_is_limited_by_its_decompressed_size() {
    use std::io::Write;
    use toolscout_server::remote::MAX_MANIFEST_BYTES;
    let mut body = vec![b' '; MAX_MANIFEST_BYTES + 1];
    body[0] = b'[';
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&body).unwrap();
    let packed = gz.finish().unwrap();
    assert!(packed.len() < MAX_MANIFEST_BYTES / 100, "{}", packed.len());
    let bomb = axum::Router::new().route(
        "/api/v1/tools",
        get(move || {
            let packed = packed.clone();
            async move {
                (
                    [
                        ("content-type", "application/json"),
                        ("content-encoding", "gzip"),
                    ],
                    packed,
                )
            }
        }),
    );
    match refresh_against(bomb).await {
        SourceStatus::Unavailable { reason } => assert_eq!(
            reason,
            format!(
                "the manifest could not be read: the answer is larger than {MAX_MANIFEST_BYTES} bytes"
            )
        ),
        other => panic!("expected unavailable, got {other:?}"),
    }
}

#[tokio::test]
async fn a_followed_source_s_change_arrives_without_waiting_for_its_max_age() {
    let remote = fixture();
    let url = spawn(remote.state.clone()).await;
    let local = fixture_with(ServerOptions::default(), false);
    let source = RemoteSource::new(format!("{url}/"));
    let rc = RemoteCatalog::new(local.state.toolbox().clone(), vec![source.clone()]).unwrap();
    assert_eq!(
        status(&rc.refresh().await),
        SourceStatus::Fetched { tools: 8 }
    );
    let callable = || {
        local
            .state
            .toolbox()
            .catalog()
            .heads()
            .iter()
            .filter(|h| h.bundle_id == source.bundle_id() && h.is_callable())
            .count()
    };
    assert_eq!(callable(), 8);
    // The periodic refresh would not come for an hour (and the manifest is fresh for a
    // minute): only the change feed can bring what follows.
    let follower = rc.spawn_follow(std::time::Duration::from_secs(3600));
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    remote
        .state
        .toolbox()
        .catalog()
        .patch_bundle(remote.weather, false)
        .unwrap();
    let started = std::time::Instant::now();
    while callable() != 6 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "the change did not arrive"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    follower.abort();
}
