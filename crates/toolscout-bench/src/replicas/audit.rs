//! `toolscout-bench replicas`, its concurrent phase: a writer on every replica at once,
//! at full speed, optionally disturbed half-way (one replica killed with SIGKILL and
//! started again on its directory, or a command such as a database restart), then an
//! audit of every acknowledged write on every replica:
//!
//! * **feed**: announced as added by the replica's event feed exactly once, or covered
//!   by a `reset` (after which a client re-reads the list, as this one does);
//! * **search**: found by its exact name as the first hit of the replica's search;
//! * **ETag**: the manifest's ETag is the same on every replica;
//! * **lag**: from the start of the write to its announcement by each other replica
//!   (by the replica itself when there is one), p50 and p99.
//!
//! It is what the sequential lag of `toolscout-bench replicas` could not see (issue #62): changes
//! lost only when every replica takes writes at once.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde_json::{Value, json};

use super::{TOKEN, put_tool, start};
use crate::Target;
use crate::harness::{Server, pct};

/// How to disturb the replicas half-way through the writes.
#[derive(Debug, Clone)]
pub(crate) enum Disruption {
    /// SIGKILL the last replica, then start it again on its directory.
    Kill,
    /// Run a shell command (`sh -c`), e.g. a restart of the database server.
    Command(String),
}

impl Disruption {
    pub(crate) fn parse(text: &str) -> Disruption {
        if text == "kill" {
            Disruption::Kill
        } else {
            Disruption::Command(text.to_owned())
        }
    }
}

/// What one replica's feed told, as a client that follows it sees it.
#[derive(Default)]
struct Told {
    /// Names announced as added, with how often and when first.
    added: HashMap<String, (usize, Instant)>,
    /// Names the client learned by re-reading the list after a `reset` (or a `ready`
    /// after a reconnect: a new process).
    reread: HashSet<String>,
    resets: usize,
    reconnects: usize,
}

/// The replicas' addresses, which change when one is started again.
type Addrs = Arc<Mutex<Vec<String>>>;

fn addr_of(addrs: &Addrs, i: usize) -> String {
    addrs.lock().unwrap_or_else(|e| e.into_inner())[i].clone()
}

/// Every tool name of the manifest of `addr` (every page).
async fn list_names(client: &reqwest::Client, addr: &str) -> Result<HashSet<String>, String> {
    let mut names = HashSet::new();
    let mut token: Option<String> = None;
    loop {
        let mut url = format!("http://{addr}/api/v1/tools?limit=1000");
        if let Some(t) = &token {
            url.push_str("&page_token=");
            url.push_str(t);
        }
        let page: Value = client
            .get(&url)
            .send()
            .await
            .map_err(|e| e.to_string())?
            .json()
            .await
            .map_err(|e| e.to_string())?;
        for t in page["tools"].as_array().into_iter().flatten() {
            if let Some(n) = t["name"].as_str() {
                names.insert(n.to_owned());
            }
        }
        match page["next_page_token"].as_str() {
            Some(t) if !t.is_empty() => token = Some(t.to_owned()),
            _ => return Ok(names),
        }
    }
}

/// Follows replica `i`'s feed until `stop`, reconnecting with `Last-Event-ID` when the
/// stream ends (a replica killed and started again), and re-reading the list after a
/// `reset`.
async fn follow(i: usize, addrs: Addrs, told: Arc<Mutex<Told>>, stop: Arc<AtomicBool>) {
    let client = reqwest::Client::new();
    let mut last: Option<String> = None;
    let mut first = true;
    while !stop.load(Ordering::Relaxed) {
        let addr = addr_of(&addrs, i);
        let mut request = client
            .get(format!("http://{addr}/api/v1/events"))
            .bearer_auth(TOKEN);
        if let Some(l) = &last {
            request = request.header("last-event-id", l.as_str());
        }
        let Ok(mut response) = request.send().await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        if !first {
            told.lock().unwrap_or_else(|e| e.into_inner()).reconnects += 1;
        }
        let mut buf = String::new();
        loop {
            let chunk = tokio::select! {
                c = response.chunk() => c,
                () = tokio::time::sleep(Duration::from_millis(200)) => {
                    if stop.load(Ordering::Relaxed) { return; }
                    continue;
                }
            };
            let Ok(Some(chunk)) = chunk else {
                break;
            };
            let now = Instant::now();
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find("\n\n") {
                let block: String = buf.drain(..end + 2).collect();
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
                if id.is_some() {
                    last = id;
                }
                let reread = event == "reset" || (event == "ready" && !first);
                if event == "change" {
                    let v: Value = serde_json::from_str(&data).unwrap_or(Value::Null);
                    let mut t = told.lock().unwrap_or_else(|e| e.into_inner());
                    for n in v["added"].as_array().into_iter().flatten() {
                        if let Some(n) = n.as_str() {
                            t.added.entry(n.to_owned()).or_insert((0, now)).0 += 1;
                        }
                    }
                } else if reread {
                    // What a client does on a reset: read the list again.
                    let names = list_names(&client, &addr).await.unwrap_or_default();
                    let mut t = told.lock().unwrap_or_else(|e| e.into_inner());
                    t.resets += usize::from(event == "reset");
                    t.reread.extend(names);
                }
                if event == "ready" || event == "reset" {
                    first = false;
                }
            }
        }
    }
}

/// One concurrent phase over `k` fresh replicas of the catalog at `url`: `writes` in
/// all, `disrupt` half-way. Its figures.
pub(crate) async fn run(
    k: usize,
    url: &str,
    writes: usize,
    disrupt: Option<&Disruption>,
    target: &Target,
) -> Result<Value> {
    let dirs: Vec<tempfile::TempDir> = (0..k)
        .map(|_| tempfile::tempdir())
        .collect::<std::io::Result<_>>()?;
    let mut servers: Vec<Server> = Vec::new();
    let mut list = Vec::new();
    for d in &dirs {
        let (s, a) = start(url, d.path(), target)?;
        servers.push(s);
        list.push(a);
    }
    let addrs: Addrs = Arc::new(Mutex::new(list));
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()?;
    let run_id = uuid::Uuid::now_v7().simple().to_string();
    let mut bundles = Vec::new();
    for i in 0..k {
        let bundle = uuid::Uuid::now_v7();
        let r = client
            .put(format!(
                "http://{}/tools/bundles/{bundle}",
                addr_of(&addrs, i)
            ))
            .bearer_auth(TOKEN)
            .json(&json!({"slug": format!("audit-{}-w{i}", &run_id[20..])}))
            .send()
            .await?;
        if !r.status().is_success() {
            bail!("creating a bundle: {}", r.text().await.unwrap_or_default());
        }
        bundles.push(bundle);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let told: Vec<Arc<Mutex<Told>>> = (0..k).map(|_| Arc::default()).collect();
    let followers: Vec<_> = (0..k)
        .map(|i| {
            tokio::spawn(follow(
                i,
                Arc::clone(&addrs),
                Arc::clone(&told[i]),
                Arc::clone(&stop),
            ))
        })
        .collect();
    // Every feed is open (its `ready` read) before the first write.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let acknowledged = Arc::new(AtomicUsize::new(0));
    let started_all = Instant::now();
    let writers: Vec<_> = (0..k)
        .map(|w| {
            let (addrs, bundle, acknowledged) =
                (Arc::clone(&addrs), bundles[w], Arc::clone(&acknowledged));
            let client = client.clone();
            let mine = writes / k + usize::from(w < writes % k);
            let tag = run_id[20..].to_owned();
            tokio::spawn(async move {
                let (mut done, mut failed) = (Vec::new(), Vec::new());
                for n in 0..mine {
                    let name = format!("audit_{tag}_w{w}_{n}");
                    let at = Instant::now();
                    match put_tool(&client, &addr_of(&addrs, w), bundle, &name).await {
                        Ok(()) => {
                            acknowledged.fetch_add(1, Ordering::Relaxed);
                            done.push((name, at));
                        }
                        Err(e) => {
                            failed.push(e);
                            // The replica or the database is away: a moment, then on.
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                    }
                }
                (done, failed)
            })
        })
        .collect();
    let mut disrupted = None;
    if let Some(d) = disrupt {
        while acknowledged.load(Ordering::Relaxed) < writes / 2
            && !writers.iter().all(tokio::task::JoinHandle::is_finished)
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let at = acknowledged.load(Ordering::Relaxed);
        match d {
            Disruption::Kill => {
                let last = k - 1;
                eprintln!("killing replica {last} (SIGKILL) after {at} writes…");
                // SIGKILL, as `kill -9`: no shutdown of any kind.
                drop(servers.pop());
                let (s, a) = start(url, dirs[last].path(), target)?;
                servers.push(s);
                addrs.lock().unwrap_or_else(|e| e.into_inner())[last] = a;
                disrupted = Some(format!("replica {last} killed after {at} writes"));
            }
            Disruption::Command(cmd) => {
                eprintln!("running `{cmd}` after {at} writes…");
                let status = tokio::process::Command::new("sh")
                    .args(["-c", cmd])
                    .status()
                    .await?;
                disrupted = Some(format!("`{cmd}` ({status}) after {at} writes"));
            }
        }
    }
    let mut written: Vec<(String, Instant, usize)> = Vec::new();
    let mut failures = Vec::new();
    for (w, handle) in writers.into_iter().enumerate() {
        let (done, failed) = handle.await?;
        written.extend(done.into_iter().map(|(n, at)| (n, at, w)));
        failures.extend(failed);
    }
    let write_s = started_all.elapsed().as_secs_f64();
    // Until every feed told every write (or re-read a list that holds it), at most 30 s.
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let all = told.iter().all(|t| {
            let t = t.lock().unwrap_or_else(|e| e.into_inner());
            written
                .iter()
                .all(|(n, _, _)| t.added.contains_key(n) || t.reread.contains(n))
        });
        if all {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for f in followers {
        let _ = f.await;
    }

    // The audit.
    let mut lags = Vec::new();
    let mut feeds = Vec::new();
    for (i, t) in told.iter().enumerate() {
        let t = t.lock().unwrap_or_else(|e| e.into_inner());
        let missing = written
            .iter()
            .filter(|(n, _, _)| !t.added.contains_key(n) && !t.reread.contains(n))
            .count();
        let twice = t.added.values().filter(|(c, _)| *c > 1).count();
        for (n, at, w) in &written {
            if (k == 1 || *w != i)
                && let Some((_, first)) = t.added.get(n)
            {
                lags.push(first.saturating_duration_since(*at).as_secs_f64() * 1000.0);
            }
        }
        feeds.push(json!({"missing": missing, "told_twice": twice, "resets": t.resets, "reconnects": t.reconnects}));
    }
    lags.sort_by(f64::total_cmp);
    let mut searches = Vec::new();
    for i in 0..k {
        let addr = addr_of(&addrs, i);
        let names: Vec<String> = written.iter().map(|(n, _, _)| n.clone()).collect();
        let missing = missing_from_search(&client, &addr, names).await?;
        searches.push(json!({"missing": missing.len(), "first": missing.first()}));
    }
    let mut etags = HashSet::new();
    for i in 0..k {
        let r = client
            .get(format!(
                "http://{}/api/v1/tools?limit=1",
                addr_of(&addrs, i)
            ))
            .send()
            .await?;
        etags.insert(
            r.headers()
                .get("etag")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned(),
        );
    }
    let mended: usize = servers.iter().map(Server::audit_mends).sum();
    drop(servers);
    Ok(json!({
        "replicas": k,
        "writes": written.len(),
        "writes_failed": failures.len(),
        "first_failure": failures.first(),
        "writes_per_s": (written.len() as f64 / write_s.max(1e-9)).round(),
        "disrupted": disrupted,
        "feed_missing_max": feeds.iter().filter_map(|f| f["missing"].as_u64()).max().unwrap_or(0),
        "feed_told_twice_max": feeds.iter().filter_map(|f| f["told_twice"].as_u64()).max().unwrap_or(0),
        "search_missing_max": searches.iter().filter_map(|s| s["missing"].as_u64()).max().unwrap_or(0),
        "etags_agree": etags.len() == 1,
        "lag_ms_p50": (pct(&lags, 0.5) * 10.0).round() / 10.0,
        "lag_ms_p99": (pct(&lags, 0.99) * 10.0).round() / 10.0,
        "index_audit_mends": mended,
        "feeds": feeds,
        "searches": searches,
    }))
}

/// The names of `names` that are not the first hit of their exact-name search on `addr`.
async fn missing_from_search(
    client: &reqwest::Client,
    addr: &str,
    names: Vec<String>,
) -> Result<Vec<String>> {
    let mut missing = Vec::new();
    // Eight searches at a time.
    for chunk in names.chunks(8) {
        let asks: Vec<_> = chunk
            .iter()
            .map(|n| {
                let (client, url, n) = (
                    client.clone(),
                    format!("http://{addr}/tools/tools/search?q={n}&limit=1"),
                    n.clone(),
                );
                tokio::spawn(async move {
                    let hit: Value = client.get(url).send().await.ok()?.json().await.ok()?;
                    (hit["items"][0]["displayName"] == json!(n)).then_some(())
                })
            })
            .collect();
        for (n, ask) in chunk.iter().zip(asks) {
            if !matches!(ask.await, Ok(Some(()))) {
                missing.push(n.clone());
            }
        }
    }
    Ok(missing)
}

/// The table of the concurrent phase's rows.
pub(crate) fn table(rows: &[Value]) -> String {
    let mut out = String::from(
        "| replicas | writes (failed) | writes/s | disrupted | missing from a feed | told twice | missing from a search | ETags agree | lag p50 | lag p99 | index mends |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} ({}) | {} | {} | {} | {} | {} | {} | {:.1} ms | {:.1} ms | {} |\n",
            r["replicas"],
            r["writes"],
            r["writes_failed"],
            r["writes_per_s"],
            r["disrupted"].as_str().unwrap_or("no"),
            r["feed_missing_max"],
            r["feed_told_twice_max"],
            r["search_missing_max"],
            r["etags_agree"],
            r["lag_ms_p50"].as_f64().unwrap_or(0.0),
            r["lag_ms_p99"].as_f64().unwrap_or(0.0),
            r["index_audit_mends"],
        ));
    }
    out
}
