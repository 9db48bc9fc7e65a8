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
