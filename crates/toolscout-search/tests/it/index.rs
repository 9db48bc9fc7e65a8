//! Writes, snapshots and persistence.

use toolscout_search::{IndexDoc, SearchIndex, SearchQuery, Tier};
use toolscout_spec::ToolSpec;

use crate::fixture::{feed, render, tools};

#[test]
fn upsert_replaces_and_delete_removes_after_commit() {
    let index = SearchIndex::in_memory().unwrap();
    feed(&index, &tools());
    let n = index.len();
    let spec = ToolSpec::builder("get_weather", "Tide tables for a harbour.")
        .build()
        .unwrap();
    index.upsert(&IndexDoc::new(&spec)).unwrap();
    // Not committed yet: readers still see the old snapshot.
    let before = index.search(&SearchQuery::new("tide")).unwrap();
    assert!(before.hits.is_empty());
    index.commit().unwrap();
    assert_eq!(index.len(), n);
    let after = index.search(&SearchQuery::new("tide")).unwrap();
    assert_eq!(after.hits[0].id, "get_weather");

    index.delete("get_weather").unwrap();
    index.commit().unwrap();
    assert_eq!(index.len(), n - 1);
    let gone = index.search(&SearchQuery::new("get_weather")).unwrap();
    assert!(gone.hits.iter().all(|h| h.tier != Tier::Exact));
}

#[test]
fn reopens_from_disk_without_reindexing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    let expected = {
        let index = SearchIndex::open_or_create(&path).unwrap();
        feed(&index, &tools());
        render(&index.search(&SearchQuery::new("weather in Tokyo")).unwrap())
    };
    let index = SearchIndex::open_or_create(&path).unwrap();
    assert_eq!(index.len() as usize, tools().len());
    let again = render(&index.search(&SearchQuery::new("weather in Tokyo")).unwrap());
    assert_eq!(again, expected);
}

#[test]
fn ids_are_the_callers_keys() {
    let index = SearchIndex::in_memory().unwrap();
    let spec = ToolSpec::builder("read_file", "Read a file.")
        .build()
        .unwrap();
    let docs = [
        IndexDoc::new(&spec).with_id("bundle-a/read_file"),
        IndexDoc::new(&spec)
            .with_id("bundle-b/read_file")
            .with_bundle(Some("b")),
    ];
    index.extend(docs, &mut |_| {}).unwrap();
    let found = index
        .search(&SearchQuery::new("read_file").with_bundle("b"))
        .unwrap();
    let ids: Vec<&str> = found.hits.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, ["bundle-b/read_file"]);
}

fn spec(name: &str, summary: &str) -> ToolSpec {
    ToolSpec::builder(name, summary).build().unwrap()
}

#[test]
fn fingerprints_are_kept_on_disk_and_replaced_with_their_tool() {
    use toolscout_search::Opened;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    let (a, b) = (spec("alpha", "First."), spec("beta", "Second."));
    {
        let index = SearchIndex::open_or_rebuild(&path).unwrap();
        assert_eq!(index.opened(), &Opened::Created);
        let docs = [
            IndexDoc::new(&a).with_fingerprint(1),
            IndexDoc::new(&b).with_fingerprint(2),
        ];
        index.extend(docs, &mut |_| {}).unwrap();
    }
    let index = SearchIndex::open_or_rebuild(&path).unwrap();
    assert_eq!(index.opened(), &Opened::Reopened);
    let fps = index.fingerprints().unwrap();
    assert_eq!(fps.len(), 2);
    assert_eq!((fps["alpha"], fps["beta"]), (1, 2));

    index
        .upsert(&IndexDoc::new(&a).with_fingerprint(9))
        .unwrap();
    index.delete("beta").unwrap();
    index.commit().unwrap();
    let fps = index.fingerprints().unwrap();
    assert_eq!(
        fps.into_iter().collect::<Vec<_>>(),
        [("alpha".to_owned(), 9)]
    );
}

/// Rewrites the payload of the index's `meta.json`, as another version would have.
fn set_payload(path: &std::path::Path, payload: &str) {
    let meta = path.join("meta.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&meta).unwrap()).unwrap();
    v["payload"] = serde_json::json!(payload);
    std::fs::write(&meta, v.to_string()).unwrap();
}

#[test]
fn an_index_of_another_format_or_damaged_is_rebuilt_empty() {
    use toolscout_search::Opened;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    let a = spec("alpha", "First.");
    let fill = || {
        let index = SearchIndex::open_or_rebuild(&path).unwrap();
        index.extend([IndexDoc::new(&a)], &mut |_| {}).unwrap();
        assert_eq!(index.len(), 1);
    };

    fill();
    set_payload(&path, "toolscout-search/0");
    let index = SearchIndex::open_or_rebuild(&path).unwrap();
    match index.opened() {
        Opened::Rebuilt(why) => assert!(why.contains("toolscout-search/0"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(index.is_empty());
    drop(index);

    fill();
    std::fs::write(path.join("meta.json"), "{ not json").unwrap();
    let index = SearchIndex::open_or_rebuild(&path).unwrap();
    assert!(
        matches!(index.opened(), Opened::Rebuilt(_)),
        "{:?}",
        index.opened()
    );
    assert!(index.is_empty());
    // Rebuilt indexes work as new ones.
    index.extend([IndexDoc::new(&a)], &mut |_| {}).unwrap();
    let found = index.search(&SearchQuery::new("alpha")).unwrap();
    assert_eq!(found.hits[0].id, "alpha");
}

#[test]
fn a_directory_that_is_no_index_is_never_emptied() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("meta.json"), "{ not json").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let err = SearchIndex::open_or_rebuild(dir.path()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("notes.txt") && msg.contains("left alone"),
        "{msg}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn a_second_writer_waits_for_the_first_and_both_writes_land() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index");
    // Two handles on one directory behave as two processes do: one writer lock.
    let first = SearchIndex::open_or_rebuild(&path).unwrap();
    let second = SearchIndex::open_or_rebuild(&path).unwrap();
    let (a, b) = (spec("alpha", "First."), spec("beta", "Second."));
    assert!(first.fingerprints_for_update().unwrap().is_empty());
    let (second_done, first_began) = std::thread::scope(|s| {
        let t = s.spawn(|| {
            second.upsert(&IndexDoc::new(&b)).unwrap();
            second.commit().unwrap();
            std::time::Instant::now()
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        let began = std::time::Instant::now();
        first.upsert(&IndexDoc::new(&a)).unwrap();
        first.commit().unwrap();
        (t.join().unwrap(), began)
    });
    // The second write could not commit while the first held the lock.
    assert!(second_done > first_began);
    let third = SearchIndex::open_or_rebuild(&path).unwrap();
    let mut ids: Vec<String> = third.fingerprints().unwrap().into_keys().collect();
    ids.sort();
    assert_eq!(ids, ["alpha", "beta"]);
}

/// Issue #62: `commit` committed under one hold of the writer and let it go under
/// another, so a tool another thread added in between was dropped with the writer and
/// never committed. Two threads that each add and commit lose nothing.
#[test]
fn two_threads_that_add_and_commit_lose_no_tool() {
    let index = std::sync::Arc::new(SearchIndex::in_memory().unwrap());
    const EACH: usize = 200;
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let index = std::sync::Arc::clone(&index);
            std::thread::spawn(move || {
                for n in 0..EACH {
                    let spec = ToolSpec::builder(format!("t{t}_tool_{n}"), "A tool")
                        .build()
                        .unwrap();
                    index.upsert(&IndexDoc::new(&spec)).unwrap();
                    index.commit().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let held = index.fingerprints().unwrap();
    let missing: Vec<String> = (0..2)
        .flat_map(|t| (0..EACH).map(move |n| format!("t{t}_tool_{n}")))
        .filter(|name| !held.contains_key(name))
        .collect();
    assert!(
        missing.is_empty(),
        "{} of {} tools lost: {:?}",
        missing.len(),
        2 * EACH,
        &missing[..missing.len().min(5)]
    );
}
