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

/// Issue #62: a write of this process and a reload of another's ran on two threads and
/// told their changes after letting the state go, so a subscriber could hear a change
/// after a later one (a feed then dropped it as already sent). Changes now come in
/// generation order, each once, whichever thread made them.
#[test]
fn changes_from_writes_and_reloads_on_two_threads_come_in_generation_order() {
    let dir = tempfile::tempdir().unwrap();
    let here = Arc::new(open_bare(dir.path()));
    let other = open_bare(dir.path());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let (mine, theirs) = (id(1), id(2));
    // A subscriber that takes time over the changes a reload brings, as an index update
    // does: the window in which the writer thread's change could overtake.
    here.subscribe(move |change| {
        let read = change
            .events
            .iter()
            .any(|e| matches!(e, CatalogEvent::ToolPut { bundle, .. } if *bundle == theirs));
        if read {
            std::thread::sleep(std::time::Duration::from_millis(3));
        }
        sink.lock().unwrap().push(change.generation);
    });
    here.put_bundle(mine, &BundlePut::new("mine")).unwrap();
    other.put_bundle(theirs, &BundlePut::new("theirs")).unwrap();
    const WRITES: usize = 150;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reloader = {
        let (here, stop) = (Arc::clone(&here), Arc::clone(&stop));
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                here.reload().unwrap();
            }
        })
    };
    let writer = {
        let here = Arc::clone(&here);
        std::thread::spawn(move || {
            for n in 0..WRITES {
                let slug = format!("m{n}");
                here.put_tool(mine, &slug, "1", &http_put(&slug)).unwrap();
            }
        })
    };
    for n in 0..WRITES {
        let slug = format!("t{n}");
        other
            .put_tool(theirs, &slug, "1", &http_put(&slug))
            .unwrap();
    }
    writer.join().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    reloader.join().unwrap();
    here.reload().unwrap();
    assert!(here.settle(std::time::Duration::from_secs(5)));
    let seen = seen.lock().unwrap();
    let out_of_order: Vec<(u64, u64)> = seen
        .windows(2)
        .filter(|w| w[1] <= w[0])
        .map(|w| (w[0], w[1]))
        .collect();
    assert!(
        out_of_order.is_empty(),
        "{} of {} changes came after a later one: {:?}",
        out_of_order.len(),
        seen.len(),
        &out_of_order[..out_of_order.len().min(5)]
    );
    assert_eq!(seen.last().copied(), Some(here.generation()));
}

/// A subscriber may write to the catalog: its change is told after the one it heard,
/// on the same thread, without waiting for itself.
#[test]
fn a_subscriber_that_writes_hears_its_own_change_next() {
    let dir = tempfile::tempdir().unwrap();
    let c = Arc::new(open_bare(dir.path()));
    let (first, echo) = (id(1), id(2));
    let heard = Arc::new(Mutex::new(Vec::new()));
    let (writer, sink) = (Arc::downgrade(&c), Arc::clone(&heard));
    c.subscribe(move |change| {
        sink.lock().unwrap().push(change.events.clone());
        if change.events == [CatalogEvent::BundlePut { bundle: first }]
            && let Some(c) = writer.upgrade()
        {
            c.put_bundle(echo, &BundlePut::new("echo")).unwrap();
        }
    });
    c.put_bundle(first, &BundlePut::new("first")).unwrap();
    assert_eq!(
        *heard.lock().unwrap(),
        [
            vec![CatalogEvent::BundlePut { bundle: first }],
            vec![CatalogEvent::BundlePut { bundle: echo }]
        ]
    );
}
