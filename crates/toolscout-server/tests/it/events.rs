//! `GET /api/v1/events` over a real socket: what changed, by name; resuming with
//! `Last-Event-ID` without a gap or a duplicate; a reset when too much was missed; the
//! cap on streams; and replicas on one PostgreSQL database hearing each other's writes.

use std::time::Duration;

use serde_json::{Value, json};
use toolscout_catalog::{Catalog, CatalogOptions, ToolPut, builtin};
use toolscout_discover::Toolbox;
use toolscout_invoke::Invoker;
use toolscout_search::SearchIndex;
use toolscout_server::{AppState, ServerOptions};
use toolscout_spec::ToolSpec;
use uuid::Uuid;

use crate::socket::spawn;
use crate::{fixture, fixture_with};

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sse {
    pub(crate) id: Option<String>,
    pub(crate) event: String,
    pub(crate) data: Value,
}

/// Reads events off a response, a chunk at a time.
pub(crate) struct Reader {
    response: reqwest::Response,
    buf: String,
    /// Everything read so far.
    pub(crate) raw: String,
}

impl Reader {
    async fn open(url: &str, last: Option<&str>) -> Reader {
        Reader::open_with(url, last, None).await
    }

    /// A stream with `Last-Event-ID: last` and `Authorization: Bearer <token>` when
    /// given.
    pub(crate) async fn open_with(url: &str, last: Option<&str>, token: Option<&str>) -> Reader {
        let mut request = reqwest::Client::new().get(format!("{url}/api/v1/events"));
        if let Some(last) = last {
            request = request.header("last-event-id", last);
        }
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Reader {
            response,
            buf: String::new(),
            raw: String::new(),
        }
    }

    /// The next event that is not a heartbeat, within `wait`: `Ok(None)` when the stream
    /// ended, `Err` when nothing came.
    pub(crate) async fn next_within(&mut self, wait: Duration) -> Result<Option<Sse>, ()> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(e) = self.parse() {
                return Ok(Some(e));
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .map_err(|_| ())?
                .ok()
                .flatten();
            let Some(chunk) = chunk else {
                return Ok(None);
            };
            let text = String::from_utf8_lossy(&chunk);
            self.raw.push_str(&text);
            self.buf.push_str(&text);
        }
    }

    /// The next event that is not a heartbeat, within 5 s; `None` when the stream ended.
    pub(crate) async fn next(&mut self) -> Option<Sse> {
        self.next_within(Duration::from_secs(5))
            .await
            .expect("an event within 5 s")
    }

    /// The next whole event in what was read, but heartbeats.
    fn parse(&mut self) -> Option<Sse> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let (mut id, mut event, mut data) = (None, String::new(), String::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = Some(v.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("event:") {
                        event = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim());
                    }
                }
                if event.is_empty() || event == "heartbeat" {
                    continue;
                }
                let data = serde_json::from_str(&data).unwrap();
                return Some(Sse { id, event, data });
            }
            return None;
        }
    }
}

pub(crate) fn names(e: &Sse, key: &str) -> Vec<String> {
    e.data[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

pub(crate) fn sea_put() -> ToolPut {
    let spec = ToolSpec::builder("sea_temperature", "Water temperature at a beach")
        .parameters(json!({"type": "object", "properties": {"beach": {"type": "string"}}}))
        .build()
        .unwrap();
    ToolPut::http(
        spec,
        json!({"method": "GET", "urlTemplate": "https://api.example.com/s"}),
    )
}

#[tokio::test]
async fn events_name_what_changed_and_resume_without_a_gap() {
    let f = fixture();
    let url = spawn(f.state.clone()).await;
    let catalog = || f.state.toolbox().catalog();
    let mut stream = Reader::open(&url, None).await;
    let ready = stream.next().await.unwrap();
    assert_eq!(ready.event, "ready");
    assert_eq!(ready.data["generation"], json!(catalog().generation()));
    assert_eq!(ready.data["identity"], json!(catalog().identity()));

    catalog()
        .put_tool(f.weather, "sea", "1", &sea_put())
        .unwrap();
    let added = stream.next().await.unwrap();
    assert_eq!(added.event, "change");
    assert_eq!(names(&added, "added"), ["sea_temperature"]);
    assert_eq!(
        added.id.as_deref(),
        Some(catalog().generation().to_string().as_str())
    );
    assert_eq!(added.data["identity"], json!(catalog().identity()));

    catalog().patch_bundle(f.weather, false).unwrap();
    let disabled = stream.next().await.unwrap();
    assert_eq!(
        names(&disabled, "disabled"),
        ["get_forecast", "sea_temperature", "spawn_agent"]
    );
    let last = disabled.id.clone().unwrap();
    drop(stream);

    // Missed while away, then sent on resuming, in order, once.
    catalog().patch_bundle(f.weather, true).unwrap();
    catalog().delete_tool(f.weather, "sea", "1").unwrap();
    let mut stream = Reader::open(&url, Some(&last)).await;
    // (Each event names what moved as the feed read the catalog after that change: in
    // order, they bring a client to the catalog as it is.)
    let (first, second) = (stream.next().await.unwrap(), stream.next().await.unwrap());
    let id = |e: &Sse| e.id.as_deref().unwrap().parse::<u64>().unwrap();
    assert!(id(&first) > last.parse().unwrap() && id(&second) > id(&first));
    assert_eq!(id(&second), catalog().generation());
    let all = |key: &str| {
        let mut v = names(&first, key);
        v.extend(names(&second, key));
        v
    };
    assert!(
        all("enabled").contains(&"get_forecast".to_owned()),
        "{first:?} {second:?}"
    );
    assert!(all("enabled").contains(&"spawn_agent".to_owned()));
    assert_eq!(all("removed"), ["sea_temperature"]);
    // And live again after the backlog.
    let spec = ToolSpec::builder("get_forecast", "Weather forecast, now with wind")
        .build()
        .unwrap();
    catalog()
        .put_tool(
            f.weather,
            "get-forecast",
            "2",
            &ToolPut::http(
                spec,
                json!({"method": "GET", "urlTemplate": "https://api.example.com/x"}),
            ),
        )
        .unwrap();
    let changed = stream.next().await.unwrap();
    assert_eq!(names(&changed, "changed"), ["get_forecast"]);
    assert_eq!(names(&changed, "added"), Vec::<String>::new());

    // From before what the server holds: start again.
    let mut stream = Reader::open(&url, Some("0")).await;
    let reset = stream.next().await.unwrap();
    assert_eq!(reset.event, "reset");
    assert_eq!(reset.data["generation"], json!(catalog().generation()));
}

#[tokio::test]
async fn past_the_cap_a_stream_is_refused_with_retry_after() {
    let f = fixture_with(ServerOptions::default().with_event_streams(1), false);
    let url = spawn(f.state.clone()).await;
    let mut first = Reader::open(&url, None).await;
    assert_eq!(first.next().await.unwrap().event, "ready");
    let second = reqwest::get(format!("{url}/api/v1/events")).await.unwrap();
    assert_eq!(second.status(), 503);
    assert_eq!(second.headers()["retry-after"], "5");
    drop(first);
    // The permit goes with the stream (once the server notices the client left).
    let started = std::time::Instant::now();
    loop {
        let again = reqwest::get(format!("{url}/api/v1/events")).await.unwrap();
        if again.status() == 200 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the slot was not freed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A server over the catalog in `db`, following other processes' writes.
pub(crate) fn replica(
    db: &toolscout_pgtest::TestDatabase,
    dir: &std::path::Path,
) -> (AppState, toolscout_discover::Follower) {
    let catalog = Catalog::open_with(
        dir,
        CatalogOptions::default()
            .with_natives(&builtin::NATIVE_FUNCTIONS)
            .with_postgres(db.url()),
    )
    .unwrap();
    let toolbox = Toolbox::new(
        catalog,
        SearchIndex::in_memory().unwrap(),
        Invoker::default(),
    )
    .unwrap();
    let follower = toolbox.follow();
    (AppState::new(toolbox, ServerOptions::default()), follower)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_on_one_replica_is_an_event_and_a_search_hit_on_another() {
    let Some(db) = toolscout_pgtest::database(
        "a_write_on_one_replica_is_an_event_and_a_search_hit_on_another",
    ) else {
        return;
    };
    let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, _fa) = replica(&db, da.path());
    let (b, _fb) = replica(&db, dbb.path());
    let (url_a, url_b) = (spawn(a.clone()).await, spawn(b.clone()).await);
    let mut stream = Reader::open(&url_b, None).await;
    assert_eq!(stream.next().await.unwrap().event, "ready");
    let bundle = Uuid::now_v7();
    let client = reqwest::Client::new();
    let put = client
        .put(format!("{url_a}/tools/bundles/{bundle}"))
        .json(&json!({"slug": "sea"}))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200);
    let started = std::time::Instant::now();
    let put = client
        .put(format!(
            "{url_a}/tools/bundles/{bundle}/tools/sea/version/1"
        ))
        .json(&json!({
            "name": "sea_temperature",
            "description": "Water temperature at a beach.",
            "type": "http",
            "argSchema": {"type": "object", "properties": {"beach": {"type": "string"}}},
            "impl": {"method": "GET", "urlTemplate": "https://api.example.com/s"}
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200, "{}", put.text().await.unwrap());
    let event = loop {
        let e = stream.next().await.unwrap();
        if !names(&e, "added").is_empty() {
            break e;
        }
    };
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(names(&event, "added"), ["sea_temperature"]);
    // Found by search on the other replica, with the same identity and manifest ETag.
    // (Once, in a loaded CI run, the first search just after the event came back empty,
    // with no index error. A page whose tools could not be read from the database was
    // then shown as no hits; it is an error now. The search is asked again for up to
    // 5 s, and every answer before the hit is printed.)
    let searched = std::time::Instant::now();
    let hits = loop {
        let hits: Value = client
            .get(format!("{url_b}/tools/tools/search?q=sea%20temperature"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if hits["items"][0]["displayName"] == "sea_temperature"
            || searched.elapsed() > Duration::from_secs(5)
        {
            break hits;
        }
        eprintln!("no hit yet: {hits}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    if searched.elapsed() > Duration::from_millis(100) {
        eprintln!(
            "the search hit came {:?} after the event",
            searched.elapsed()
        );
    }
    assert_eq!(
        hits["items"][0]["displayName"],
        "sea_temperature",
        "{hits} (index: {:?})",
        b.toolbox().sync_error()
    );
    let etag = |url: String| {
        let client = client.clone();
        async move {
            client
                .get(format!("{url}/api/v1/tools?limit=1"))
                .send()
                .await
                .unwrap()
                .headers()["etag"]
                .to_str()
                .unwrap()
                .to_owned()
        }
    };
    assert_eq!(etag(url_a.clone()).await, etag(url_b.clone()).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_one_from_one_replica_and_page_two_from_another() {
    let Some(db) =
        toolscout_pgtest::database("page_one_from_one_replica_and_page_two_from_another")
    else {
        return;
    };
    let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, _fa) = replica(&db, da.path());
    let (b, _fb) = replica(&db, dbb.path());
    let bundle = Uuid::now_v7();
    let catalog = a.toolbox().catalog();
    catalog
        .put_bundle(bundle, &toolscout_catalog::BundlePut::new("sea"))
        .unwrap();
    for name in [
        "tide_times",
        "wave_height",
        "water_temperature",
        "sunset_time",
    ] {
        let spec = ToolSpec::builder(name, format!("The {name} at a beach"))
            .build()
            .unwrap();
        let put = ToolPut::http(
            spec,
            json!({"method": "GET", "urlTemplate": "https://api.example.com/x"}),
        );
        catalog
            .put_tool(bundle, &name.replace('_', "-"), "1", &put)
            .unwrap();
    }
    let (url_a, url_b) = (spawn(a.clone()).await, spawn(b.clone()).await);
    // B has followed A's writes: the same identity.
    let started = std::time::Instant::now();
    while b.toolbox().catalog().identity() != a.toolbox().catalog().identity() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "B did not follow A"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let client = reqwest::Client::new();
    let page = |url: String| {
        let client = client.clone();
        async move {
            let r = client.get(url).send().await.unwrap();
            let etag = r.headers()["etag"].to_str().unwrap().to_owned();
            let mut body = r.json::<Value>().await.unwrap();
            // When the page was written, which two servers never share.
            body.as_object_mut().unwrap().remove("generated_at");
            (etag, body)
        }
    };
    let (etag_a1, first) = page(format!("{url_a}/api/v1/tools?limit=3")).await;
    let (etag_b1, first_b) = page(format!("{url_b}/api/v1/tools?limit=3")).await;
    assert_eq!((&etag_a1, &first), (&etag_b1, &first_b));
    let token = first["next_page_token"].as_str().unwrap().to_owned();
    let (etag_b2, second) = page(format!("{url_b}/api/v1/tools?limit=3&page_token={token}")).await;
    let (etag_a2, second_a) =
        page(format!("{url_a}/api/v1/tools?limit=3&page_token={token}")).await;
    assert_eq!((&etag_b2, &second), (&etag_a2, &second_a));
    let names = |v: &Value| -> Vec<String> {
        v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let mut all = names(&first);
    all.extend(names(&second));
    // Page 2 (from B) goes on where page 1 (from A) stopped, in name order.
    let mut sorted = all.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(all, sorted, "the pages overlap or are out of order");
    assert_eq!(all.len(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_clients_over_three_replicas_race_one_pair_and_one_wins_each_round() {
    let Some(db) = toolscout_pgtest::database(
        "eight_clients_over_three_replicas_race_one_pair_and_one_wins_each_round",
    ) else {
        return;
    };
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut urls = Vec::new();
    let mut keep = Vec::new();
    for d in &dirs {
        let (state, follower) = replica(&db, d.path());
        urls.push(spawn(state.clone()).await);
        keep.push((state, follower));
    }
    let bundle = Uuid::now_v7();
    let put = reqwest::Client::new()
        .put(format!("{}/tools/bundles/{bundle}", urls[0]))
        .json(&json!({"slug": "race"}))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), 200);
    for round in 0..20 {
        let racers: Vec<_> =
            (0..8)
                .map(|c| {
                    let url = urls[c % 3].clone();
                    tokio::spawn(async move {
                        // A client of its own each, as separate processes have.
                        reqwest::Client::new()
                        .put(format!("{url}/tools/bundles/{bundle}/tools/pair-{round}/version/1"))
                        .json(&json!({
                            "name": format!("pair_{round}_by_{c}"),
                            "description": "Racing for one slug and version.",
                            "type": "http",
                            "argSchema": {"type": "object", "properties": {}},
                            "impl": {"method": "GET", "urlTemplate": "https://api.example.com/x"}
                        }))
                        .send()
                        .await
                        .unwrap()
                        .status()
                    })
                })
                .collect();
        let mut statuses = Vec::new();
        for r in racers {
            statuses.push(r.await.unwrap().as_u16());
        }
        assert_eq!(
            statuses.iter().filter(|s| **s == 200).count(),
            1,
            "round {round}: {statuses:?}"
        );
        assert!(
            statuses.iter().all(|s| *s == 200 || *s == 409),
            "round {round}: {statuses:?}"
        );
    }
    let catalog = keep[2].0.toolbox().catalog();
    catalog.reload().unwrap();
    assert_eq!(
        catalog
            .heads()
            .iter()
            .filter(|h| h.bundle_id == bundle)
            .count(),
        20
    );
}

#[tokio::test]
async fn a_change_reaches_a_subscriber_within_a_second_on_flat_files() {
    let f = fixture();
    let url = spawn(f.state.clone()).await;
    let mut stream = Reader::open(&url, None).await;
    assert_eq!(stream.next().await.unwrap().event, "ready");
    // Another process on the same directory writes; the server follows the directory.
    let _follower = f.state.toolbox().follow();
    let other = Catalog::open_with(
        f.state.toolbox().catalog().root(),
        CatalogOptions::default().with_natives(&builtin::NATIVE_FUNCTIONS),
    )
    .unwrap();
    let started = std::time::Instant::now();
    other.put_tool(f.weather, "sea", "1", &sea_put()).unwrap();
    let event = stream.next().await.unwrap();
    assert_eq!(names(&event, "added"), ["sea_temperature"]);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

/// The resident size of this process, in KiB (Linux).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_idle_subscribers_cost_under_a_hundred_megabytes() {
    use tokio::io::AsyncWriteExt;
    // Measured alone: in a copy of this binary running only this test, so that the
    // other tests' memory is not counted.
    const ALONE: &str = "TOOLSCOUT_MEASURE_ALONE";
    if std::env::var_os(ALONE).is_none() {
        let name = "events::a_thousand_idle_subscribers_cost_under_a_hundred_megabytes";
        let out = tokio::task::spawn_blocking(move || {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args([name, "--exact", "--nocapture", "--test-threads=1"])
                .env(ALONE, "1")
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(
            text.contains("1 passed"),
            "the test did not run alone: {text}"
        );
        for line in text.lines().filter(|l| l.contains("idle subscribers:")) {
            eprintln!("{line}");
        }
        return;
    }
    assert!(
        crate::connections::raise_open_files(4096),
        "this test holds 2,000 sockets and needs a hard limit of open files of at least 4,096"
    );
    let f = fixture_with(
        ServerOptions::default()
            .with_connection_limits(
                toolscout_server::ConnectionLimits::default().with_max_connections(4000),
            )
            .with_event_streams(1500),
        true,
    );
    let url = spawn(f.state.clone()).await;
    let addr = url.trim_start_matches("http://").to_owned();
    // Warm up: one stream, so that what is measured is what each further one costs.
    let _first = Reader::open(&url, None).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = rss_kib();
    let mut sockets = Vec::with_capacity(1000);
    for _ in 0..1000 {
        // Raw sockets that never read: the cheapest client, so that the growth is the
        // server's.
        let mut s = tokio::net::TcpStream::connect(&addr).await.unwrap();
        s.write_all(
            format!(
                "GET /api/v1/events HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
        sockets.push(s);
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Every stream is open: the next one is still served (1,001 of 1,500).
    let mut check = Reader::open(&url, None).await;
    assert_eq!(check.next().await.unwrap().event, "ready");
    let grown = rss_kib().saturating_sub(before);
    eprintln!("1,000 idle subscribers: +{} KiB resident", grown);
    assert!(
        grown < 100 * 1024,
        "1,000 idle subscribers cost {grown} KiB"
    );
    // And a write still reaches a subscriber at once.
    f.state
        .toolbox()
        .catalog()
        .put_tool(f.weather, "sea", "1", &sea_put())
        .unwrap();
    let e = check.next().await.unwrap();
    assert_eq!(names(&e, "added"), ["sea_temperature"]);
    drop(sockets);
}
