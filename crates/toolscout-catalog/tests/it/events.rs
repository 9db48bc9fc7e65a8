use std::sync::{Arc, Mutex};

use toolscout_catalog::{BundlePut, Catalog, CatalogChange, CatalogEvent};

use crate::{http_put, id, open_bare};

fn record(c: &Catalog) -> Arc<Mutex<Vec<CatalogChange>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    c.subscribe(move |change| sink.lock().unwrap().push(change.clone()));
    seen
}

#[test]
fn every_committed_change_is_announced_with_the_new_identity() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let seen = record(&c);
    let b = id(1);
    let empty = c.identity();
    c.put_bundle(b, &BundlePut::new("b")).unwrap();
    let t = c.put_tool(b, "t", "1", &http_put("t")).unwrap();
    let with_t = c.identity();
    assert_ne!(with_t, empty);
    c.patch_tool(b, "t", "1", false).unwrap();
    assert_eq!(c.identity(), empty, "a disabled tool leaves the tool set");
    c.patch_tool(b, "t", "1", false).unwrap(); // no change, no event
    assert!(c.put_tool(b, "t", "1", &http_put("t")).is_err()); // refused, no event
    c.patch_tool(b, "t", "1", true).unwrap();
    assert_eq!(c.identity(), with_t);
    c.patch_bundle(b, false).unwrap();
    c.patch_bundle(b, true).unwrap();
    c.delete_tool(b, "t", "1").unwrap();
    c.delete_bundle(b).unwrap();

    let seen = seen.lock().unwrap();
    let events: Vec<CatalogEvent> = seen.iter().flat_map(|c| c.events.clone()).collect();
    assert_eq!(
        events,
        [
            CatalogEvent::BundlePut { bundle: b },
            CatalogEvent::ToolPut {
                tool: t.id,
                bundle: b
            },
            CatalogEvent::ToolEnabled {
                tool: t.id,
                bundle: b,
                enabled: false
            },
            CatalogEvent::ToolEnabled {
                tool: t.id,
                bundle: b,
                enabled: true
            },
            CatalogEvent::BundleEnabled {
                bundle: b,
                enabled: false
            },
            CatalogEvent::BundleEnabled {
                bundle: b,
                enabled: true
            },
            CatalogEvent::ToolDeleted {
                tool: t.id,
                bundle: b
            },
            CatalogEvent::BundleDeleted { bundle: b },
        ]
    );
    assert_eq!(seen[1].identity, with_t);
    let generations: Vec<u64> = seen.iter().map(|c| c.generation).collect();
    assert_eq!(generations, (1..=8).collect::<Vec<u64>>());
}

#[test]
fn reload_sees_other_processes_writes_and_announces_them() {
    let dir = tempfile::tempdir().unwrap();
    let reader = open_bare(dir.path());
    let seen = record(&reader);
    assert!(!reader.reload().unwrap(), "nothing to read yet");

    let writer = open_bare(dir.path());
    let b = id(1);
    writer.put_bundle(b, &BundlePut::new("b")).unwrap();
    let t = writer.put_tool(b, "t", "1", &http_put("t")).unwrap();
    assert!(reader.tool(t.id).is_err(), "not seen before a reload");
    assert!(reader.reload().unwrap());
    assert_eq!(reader.tool(t.id).unwrap(), t);
    assert_eq!(reader.identity(), writer.identity());
    assert_eq!(reader.generation(), writer.generation());

    writer.patch_tool(b, "t", "1", false).unwrap();
    let t2 = writer.put_tool(b, "t", "2", &http_put("t")).unwrap();
    writer.delete_tool(b, "t", "2").unwrap();
    writer.delete_tool(b, "t", "1").unwrap();
    let again = writer.put_tool(b, "u", "1", &http_put("u")).unwrap();
    assert!(reader.reload().unwrap());
    assert!(!reader.reload().unwrap());

    let seen = std::mem::take(&mut *seen.lock().unwrap());
    assert_eq!(seen.len(), 2);
    assert_eq!(
        seen[0].events,
        [
            CatalogEvent::BundlePut { bundle: b },
            CatalogEvent::ToolPut {
                tool: t.id,
                bundle: b
            },
        ]
    );
    // Only the net change: t2 came and went.
    assert_eq!(
        seen[1].events,
        [
            CatalogEvent::ToolPut {
                tool: again.id,
                bundle: b
            },
            CatalogEvent::ToolDeleted {
                tool: t.id,
                bundle: b
            },
        ]
    );
    assert_ne!(t2.id, again.id);
    // A write catches up first, so the writer's own view never goes stale.
    reader.put_tool(b, "v", "1", &http_put("v")).unwrap();
    assert!(reader.put_tool(b, "u", "1", &http_put("u")).is_err());
}

#[test]
fn unsubscribe_stops_notifications_and_subscribers_may_read_the_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let c = Arc::new(open_bare(dir.path()));
    let counts = Arc::new(Mutex::new(Vec::new()));
    let (c2, sink) = (Arc::downgrade(&c), Arc::clone(&counts));
    let sub = c.subscribe(move |_| {
        if let Some(c) = c2.upgrade() {
            sink.lock().unwrap().push(c.tools().len());
        }
    });
    let b = id(1);
    c.put_bundle(b, &BundlePut::new("b")).unwrap();
    c.put_tool(b, "t", "1", &http_put("t")).unwrap();
    assert!(c.unsubscribe(sub));
    assert!(!c.unsubscribe(sub));
    c.put_tool(b, "t", "2", &http_put("t")).unwrap();
    assert_eq!(*counts.lock().unwrap(), [0, 1]);
}
