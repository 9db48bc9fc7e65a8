//! Replicas that all take writes (issue #62): three servers on one PostgreSQL catalog, a
//! writer on each at once, then an audit of every written tool on every replica: told
//! by its event feed exactly once, found by its exact name in its search, and the same
//! manifest ETag everywhere.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uuid::Uuid;

use crate::events::{Reader, names, replica};
use crate::socket::spawn;

/// Writes per writer; three writers.
const WRITES: usize = 100;

/// Reads `stream` until every name of `expected` was added, or `wait` passed; returns
/// how many times each name was told as added, and every event that is not a change.
async fn told(
    mut stream: Reader,
    expected: usize,
    wait: Duration,
) -> (HashMap<String, usize>, Vec<String>) {
    let deadline = Instant::now() + wait;
    let mut added: HashMap<String, usize> = HashMap::new();
    let mut other = Vec::new();
    while added.len() < expected {
        let left = deadline.saturating_duration_since(Instant::now());
        match stream.next_within(left).await {
            Ok(Some(e)) if e.event == "change" => {
                for n in names(&e, "added") {
                    *added.entry(n).or_default() += 1;
                }
            }
            Ok(Some(e)) => other.push(e.event),
            Ok(None) | Err(()) => break,
        }
    }
    // A little longer, for a name told twice.
    while let Ok(Some(e)) = stream.next_within(Duration::from_millis(300)).await {
        if e.event == "change" {
            for n in names(&e, "added") {
                *added.entry(n).or_default() += 1;
            }
        } else {
            other.push(e.event);
        }
    }
    (added, other)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn writers_on_three_replicas_at_once_lose_nothing_from_feed_or_search() {
    let Some(db) = toolscout_pgtest::database(
        "writers_on_three_replicas_at_once_lose_nothing_from_feed_or_search",
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
    let client = reqwest::Client::new();
    let mut bundles = Vec::new();
    for (i, url) in urls.iter().enumerate() {
        let bundle = Uuid::now_v7();
        let put = client
            .put(format!("{url}/tools/bundles/{bundle}"))
            .json(&json!({"slug": format!("writer-{i}")}))
            .send()
            .await
            .unwrap();
        assert_eq!(put.status(), 200);
        bundles.push(bundle);
    }
    // Every stream is read while the writes go on: a reader left behind by more than
    // the feed's buffer would be dropped.
    let mut readers = Vec::new();
    for url in &urls {
        let mut stream = Reader::open_with(url, None, None).await;
        assert_eq!(stream.next().await.unwrap().event, "ready");
        readers.push(tokio::spawn(told(
            stream,
            3 * WRITES,
            Duration::from_secs(120),
        )));
    }
    let writers: Vec<_> = (0..3)
        .map(|w| {
            let (url, bundle) = (urls[w].clone(), bundles[w]);
            tokio::spawn(async move {
                // A client of its own each, as separate processes have.
                let client = reqwest::Client::new();
                let mut written = Vec::new();
                for n in 0..WRITES {
                    let name = format!("w{w}_tool_{n}");
                    let put = client
                        .put(format!("{url}/tools/bundles/{bundle}/tools/t{n}/version/1"))
                        .json(&json!({
                            "name": name,
                            "description": format!("Tool {n} of writer {w}."),
                            "type": "http",
                            "argSchema": {"type": "object", "properties": {}},
                            "impl": {"method": "GET", "urlTemplate": "https://api.example.com/x"}
                        }))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(put.status(), 200, "{}", put.text().await.unwrap());
                    written.push(name);
                }
                written
            })
        })
        .collect();
    let mut written = Vec::new();
    for w in writers {
        written.extend(w.await.unwrap());
    }
    assert_eq!(written.len(), 3 * WRITES);

    let mut failures = Vec::new();
    for (r, reader) in readers.into_iter().enumerate() {
        let (added, other) = reader.await.unwrap();
        assert!(
            other.is_empty(),
            "replica {r}'s feed sent {other:?} (no reset or reconnect is expected)"
        );
        let missing: Vec<&String> = written.iter().filter(|n| !added.contains_key(*n)).collect();
        let twice: Vec<(&String, &usize)> = added.iter().filter(|(_, c)| **c > 1).collect();
        if !missing.is_empty() || !twice.is_empty() {
            failures.push(format!(
                "replica {r}'s feed: {} of {} writes never told ({:?}…), told more than once: {twice:?}",
                missing.len(),
                written.len(),
                missing.iter().take(5).collect::<Vec<_>>()
            ));
        }
    }
    // Every tool by its exact name, on every replica. A search answers from an index
    // that holds what the replica has read: a replica that lost an update to its index
    // misses the tool for good (the audit that would mend it runs every 30 s).
    for (r, url) in urls.iter().enumerate() {
        keep[r].0.toolbox().catalog().reload().unwrap();
        let mut missing = Vec::new();
        for name in &written {
            let hits: Value = client
                .get(format!("{url}/tools/tools/search?q={name}&limit=1"))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if hits["items"][0]["displayName"] != name.as_str() {
                missing.push(name.clone());
            }
        }
        if !missing.is_empty() {
            failures.push(format!(
                "replica {r}'s search misses {} of {} tools: {:?}… (index: {:?})",
                missing.len(),
                written.len(),
                missing.iter().take(5).collect::<Vec<_>>(),
                keep[r].0.toolbox().sync_error()
            ));
        }
    }
    let mut etags = Vec::new();
    for url in &urls {
        let response = client
            .get(format!("{url}/api/v1/tools?limit=1"))
            .send()
            .await
            .unwrap();
        etags.push(response.headers()["etag"].to_str().unwrap().to_owned());
    }
    if etags.iter().any(|e| *e != etags[0]) {
        failures.push(format!("the replicas' ETags differ: {etags:?}"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // No audit finds anything left to mend.
    for (r, (state, _)) in keep.iter().enumerate() {
        let audit = state.toolbox().audit().unwrap();
        assert!(!audit.mended(), "replica {r}: {audit:?}");
    }
}
