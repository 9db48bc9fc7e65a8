//! The PostgreSQL store against a real server (see `toolscout-pgtest`): every catalog
//! opened on one database is one catalog, whichever process or directory opens it.

use std::path::Path;
use std::sync::{Arc, Barrier};

use chrono::{SubsecRound, TimeDelta, Utc};
use toolscout_catalog::{
    BundlePut, Catalog, CatalogEvent, CatalogOptions, Error, ToolPut, builtin,
};
use toolscout_pgtest::{TestDatabase, database, database_on_own_server};

use crate::{http_put, id};

/// A catalog on `db`, keeping its local files in `local`.
fn open_pg(db: &TestDatabase, local: &Path) -> Catalog {
    Catalog::open_with(
        local,
        CatalogOptions::default()
            .with_natives(&builtin::NATIVE_FUNCTIONS)
            .with_postgres(db.url()),
    )
    .unwrap()
}

/// The heads of two catalogs agree, and so do their identities.
fn same(a: &Catalog, b: &Catalog) {
    assert_eq!(a.heads(), b.heads());
    assert_eq!(a.identity(), b.identity());
    assert_eq!(a.generation(), b.generation());
}

#[test]
fn every_catalog_on_one_database_is_one_catalog() {
    let Some(db) = database("every_catalog_on_one_database_is_one_catalog") else {
        return;
    };
    let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open_pg(&db, da.path());
    assert!(a.issues().is_empty(), "{:?}", a.issues());
    let b_id = id(1);
    a.put_bundle(b_id, &BundlePut::new("weather")).unwrap();
    let one = a
        .put_tool(b_id, "forecast", "v1", &http_put("forecast"))
        .unwrap();
    assert_eq!(one.path, None, "a tool in a database has no file");
    let many = a
        .put_tools(
            b_id,
            [
                ("radar", "v1", http_put("radar")),
                ("alerts", "v1", http_put("alerts")),
            ],
        )
        .unwrap();
    a.patch_tool(b_id, "radar", "v1", false).unwrap();

    // Another process (another directory) reads the same catalog, whole tools too.
    let b = open_pg(&db, dbb.path());
    same(&a, &b);
    assert_eq!(b.tool(one.id).unwrap(), a.tool(one.id).unwrap());
    assert_eq!(b.tool(one.id).unwrap().spec, one.spec);
    assert!(!b.tool(many[0].id).unwrap().is_enabled);

    // <bundle, slug, version> has one holder, whoever writes.
    let err = b
        .put_tool(b_id, "forecast", "v1", &http_put("other"))
        .unwrap_err();
    assert!(matches!(err, Error::Conflict { existing, .. } if existing == one.id));

    // A delete on one is an event on the other.
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let _sub = b.subscribe(move |c| seen.lock().unwrap().extend(c.events.clone()));
    a.delete_tool(b_id, "alerts", "v1").unwrap();
    assert!(b.reload().unwrap());
    assert_eq!(
        events.lock().unwrap().as_slice(),
        [CatalogEvent::ToolDeleted {
            tool: many[1].id,
            bundle: b_id
        }]
    );
    same(&a, &b);

    // A third, opened in the first one's directory, starts from its heads snapshot.
    let token = a.content_token();
    assert!(token.is_some());
    drop(a);
    let c = open_pg(&db, da.path());
    same(&b, &c);
    assert_eq!(c.content_token(), token, "opened from the heads snapshot");
}

#[test]
fn the_built_ins_flags_are_shared() {
    let Some(db) = database("the_built_ins_flags_are_shared") else {
        return;
    };
    let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open_pg(&db, da.path());
    let b = open_pg(&db, dbb.path());
    let files = builtin::bundles()
        .into_iter()
        .find(|x| x.slug == "files")
        .unwrap()
        .id;
    a.patch_bundle(files, false).unwrap();
    b.reload().unwrap();
    assert!(!b.bundle(files).unwrap().is_enabled);
    same(&a, &b);
}

#[test]
fn usage_counts_add_up_across_processes() {
    let Some(db) = database("usage_counts_add_up_across_processes") else {
        return;
    };
    let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open_pg(&db, da.path());
    a.put_bundle(id(1), &BundlePut::new("b")).unwrap();
    let t = a.put_tool(id(1), "t", "1", &http_put("t")).unwrap();
    let b = open_pg(&db, dbb.path());
    let t0 = Utc::now();
    for i in 0..3 {
        a.record_call(t.id, t0 + TimeDelta::seconds(i)).unwrap();
    }
    b.record_call(t.id, t0 - TimeDelta::days(1)).unwrap();
    // Counted where they were made at once, and in the database once flushed.
    assert_eq!(a.tool(t.id).unwrap().usage.call_count, 3);
    a.flush_usage().unwrap();
    drop(b);
    let c = open_pg(&db, tempfile::tempdir().unwrap().path());
    let u = c.tool(t.id).unwrap().usage;
    assert_eq!(u.call_count, 4);
    // Kept to the microsecond, as every store keeps times.
    assert_eq!(
        u.last_called_at,
        Some((t0 + TimeDelta::seconds(2)).trunc_subsecs(6))
    );
}

#[test]
fn racing_writers_on_one_database_leave_one_winner() {
    let Some(db) = database("racing_writers_on_one_database_leave_one_winner") else {
        return;
    };
    let setup = tempfile::tempdir().unwrap();
    open_pg(&db, setup.path())
        .put_bundle(id(1), &BundlePut::new("race"))
        .unwrap();
    const WRITERS: usize = 6;
    let start = Arc::new(Barrier::new(WRITERS));
    let db = Arc::new(db);
    let handles: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (start, db) = (Arc::clone(&start), Arc::clone(&db));
            std::thread::spawn(move || {
                let dir = tempfile::tempdir().unwrap();
                let c = open_pg(&db, dir.path());
                start.wait();
                let mut won = 0;
                for round in 0..5 {
                    let put: ToolPut = http_put(&format!("t{round}_{w}"));
                    match c.put_tool(id(1), &format!("t{round}"), "1", &put) {
                        Ok(_) => won += 1,
                        Err(Error::Conflict { .. }) => {}
                        Err(e) => panic!("writer {w}: {e}"),
                    }
                }
                won
            })
        })
        .collect();
    let won: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(won, 5, "one winner a round");
    let c = open_pg(&db, tempfile::tempdir().unwrap().path());
    assert_eq!(c.heads().iter().filter(|h| h.bundle_id == id(1)).count(), 5);
}

#[test]
fn the_reaper_runs_once_across_processes() {
    let Some(db) = database("the_reaper_runs_once_across_processes") else {
        return;
    };
    let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open_pg(&db, da.path());
    a.put_bundle(id(1), &BundlePut::new("old")).unwrap();
    a.put_tool(id(1), "t", "1", &http_put("t")).unwrap();
    a.delete_bundle(id(1)).unwrap();
    let b = open_pg(&db, dbb.path());
    let later = Utc::now() + TimeDelta::days(3);
    // A bundle that still holds a tool stays.
    assert!(b.reap(later).unwrap().is_empty());
    a.delete_tool(id(1), "t", "1").unwrap();
    let (ra, rb) = std::thread::scope(|s| {
        let ra = s.spawn(|| a.reap(later).unwrap());
        let rb = s.spawn(|| b.reap(later).unwrap());
        (ra.join().unwrap(), rb.join().unwrap())
    });
    assert_eq!(ra.len() + rb.len(), 1, "{ra:?} {rb:?}");
    b.reload().unwrap();
    assert!(matches!(b.bundle(id(1)), Err(Error::BundleNotFound { .. })));
    same(&a, &b);
}

#[test]
fn a_write_the_database_refuses_half_way_leaves_nothing() {
    let Some(db) = database("a_write_the_database_refuses_half_way_leaves_nothing") else {
        return;
    };
    let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open_pg(&db, da.path());
    a.put_bundle(id(1), &BundlePut::new("b")).unwrap();
    let before = a.generation();
    // Another party makes the database refuse one of the rows.
    db.admin("ALTER TABLE tools ADD CONSTRAINT no_evil CHECK (slug <> 'evil')")
        .unwrap();
    let err = a
        .put_tools(
            id(1),
            [
                ("good", "1", http_put("good")),
                ("evil", "1", http_put("evil")),
            ],
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::Database { reason, .. } if reason.contains("no_evil")),
        "{err}"
    );
    // Neither this process nor another sees any of it.
    assert!(a.heads().iter().all(|h| h.slug != "good"), "a phantom tool");
    let b = open_pg(&db, dbb.path());
    assert_eq!(b.generation(), before);
    same(&a, &b);
    // And the next write goes through.
    a.put_tool(id(1), "good", "1", &http_put("good")).unwrap();
    b.reload().unwrap();
    same(&a, &b);
}

#[test]
fn a_restarted_server_is_reconnected_to() {
    let Some(db) = database_on_own_server("a_restarted_server_is_reconnected_to") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let a = open_pg(&db, dir.path());
    a.put_bundle(id(1), &BundlePut::new("b")).unwrap();
    match db.restart_server() {
        Ok(()) => {}
        Err(e) => {
            eprintln!("skipped: {e}");
            return;
        }
    }
    a.put_tool(id(1), "t", "1", &http_put("t")).unwrap();
    assert!(a.reload().is_ok());
    // Connections an administrator ends are replaced too.
    db.admin(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .unwrap();
    a.put_tool(id(1), "u", "1", &http_put("u")).unwrap();
    assert_eq!(a.heads().iter().filter(|h| h.bundle_id == id(1)).count(), 2);
}

#[test]
fn bad_urls_and_newer_schemas_are_clear_errors_without_the_password() {
    let Some(db) = database("bad_urls_and_newer_schemas_are_clear_errors_without_the_password")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let open = |url: &str| {
        Catalog::open_with(dir.path(), CatalogOptions::default().with_postgres(url)).unwrap_err()
    };
    let err = open("not a url at all ://").to_string();
    assert!(err.contains("not a PostgreSQL connection URL"), "{err}");

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = open(&format!(
        "postgres://someone:s3cret-pw@127.0.0.1:{port}/catalog"
    ))
    .to_string();
    assert!(
        err.starts_with(&format!(
            "PostgreSQL at postgres://someone@127.0.0.1:{port}/catalog: connecting"
        )),
        "{err}"
    );
    assert!(err.contains("is the server running?"), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
    let options = CatalogOptions::default().with_postgres("postgres://u:s3cret-pw@h/d");
    assert!(!format!("{options:?}").contains("s3cret"));

    // A database migrated by a newer toolscout.
    drop(open_pg(&db, dir.path()));
    db.admin(
        "INSERT INTO toolscout_schema_history (version, name, applied_on, checksum) \
         VALUES (999, 'from_the_future', '2030-01-01T00:00:00Z', '0')",
    )
    .unwrap();
    let err = Catalog::open_with(
        dir.path(),
        CatalogOptions::default().with_postgres(db.url()),
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            Error::SchemaTooNew {
                database: 999,
                binary: 2,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().ends_with("upgrade toolscout"), "{err}");
}

#[test]
fn another_process_s_write_is_followed_within_a_second() {
    let Some(db) = database("another_process_s_write_is_followed_within_a_second") else {
        return;
    };
    let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open_pg(&db, da.path());
    let b = open_pg(&db, dbb.path());
    a.put_bundle(id(1), &BundlePut::new("b")).unwrap();
    let follow = |what: &str| {
        let started = std::time::Instant::now();
        while !b
            .follow_once(std::time::Duration::from_millis(250))
            .unwrap()
        {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(10),
                "{what}: not followed"
            );
        }
        started.elapsed()
    };
    let took = follow("a bundle");
    assert!(took < std::time::Duration::from_secs(1), "{took:?}");
    same(&a, &b);
    // Nothing new: catching up is free, and says so.
    assert!(!b.catch_up().unwrap());
    // Every connection cut (the listener's too): the next write is still followed.
    db.admin(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .unwrap();
    a.put_tool(id(1), "t", "1", &http_put("t")).unwrap();
    follow("a tool after the connections were cut");
    same(&a, &b);
}

#[test]
fn a_connection_dropped_mid_transaction_fails_the_write_and_leaves_nothing() {
    let Some(db) =
        database("a_connection_dropped_mid_transaction_fails_the_write_and_leaves_nothing")
    else {
        return;
    };
    let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open_pg(&db, da.path());
    a.put_bundle(id(1), &BundlePut::new("b")).unwrap();
    let before = a.generation();
    // Another party holds the write lock: the write begins its transaction and waits.
    let held = db.hold_lock(0x7473, 1).unwrap();
    let err = std::thread::scope(|s| {
        let writer = s.spawn(|| a.put_tool(id(1), "t", "1", &http_put("t")));
        // Its connection is ended while it waits inside its transaction.
        let started = std::time::Instant::now();
        loop {
            std::thread::sleep(std::time::Duration::from_millis(100));
            db.admin(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event_type = 'Lock' \
                 AND pid <> pg_backend_pid()",
            )
            .unwrap();
            if writer.is_finished() || started.elapsed() > std::time::Duration::from_secs(20) {
                break;
            }
        }
        writer.join().unwrap().unwrap_err()
    });
    drop(held);
    assert!(
        matches!(&err, Error::Database { reason, .. } if reason.contains("terminat")),
        "{err}"
    );
    // Nothing of it anywhere, and the next write goes through on a new connection.
    assert!(a.heads().iter().all(|h| h.slug != "t"));
    let b = open_pg(&db, dbb.path());
    assert_eq!(b.generation(), before);
    assert!(b.heads().iter().all(|h| h.slug != "t"));
    a.put_tool(id(1), "t", "1", &http_put("t")).unwrap();
    b.reload().unwrap();
    same(&a, &b);
}

#[test]
fn a_database_restarted_during_a_burst_keeps_every_acknowledged_write() {
    let Some(db) = database_on_own_server(
        "a_database_restarted_during_a_burst_keeps_every_acknowledged_write",
    ) else {
        return;
    };
    let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open_pg(&db, da.path());
    let b = open_pg(&db, dbb.path());
    a.put_bundle(id(1), &BundlePut::new("burst")).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (acked, failed) = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let (mut acked, mut failed) = (Vec::new(), 0);
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let slug = format!("t{n}");
                match a.put_tool(id(1), &slug, "1", &http_put(&format!("t_{n}"))) {
                    Ok(t) => acked.push(t.id),
                    Err(_) => failed += 1,
                }
                n += 1;
            }
            (acked, failed)
        });
        std::thread::sleep(std::time::Duration::from_millis(500));
        if let Err(e) = db.restart_server() {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            panic!("restarting the server: {e}");
        }
        std::thread::sleep(std::time::Duration::from_millis(1500));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writer.join().unwrap()
    });
    assert!(acked.len() > 10, "{} writes acknowledged", acked.len());
    eprintln!(
        "{} writes acknowledged, {failed} refused while the server restarted",
        acked.len()
    );
    // Every acknowledged write is there, for a new process and for the writer.
    let c = open_pg(&db, tempfile::tempdir().unwrap().path());
    for t in &acked {
        assert!(c.head(*t).is_ok(), "acknowledged tool {t} is missing");
    }
    same(&a, &c);
    // The other process catches up without a restart of its own.
    let started = std::time::Instant::now();
    while b.generation() != c.generation() {
        let _ = b.follow_once(std::time::Duration::from_millis(250));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "the other process did not catch up"
        );
    }
    same(&b, &c);
}

#[test]
fn a_read_that_fails_is_an_error_not_a_shorter_list() {
    let Some(db) = database("a_read_that_fails_is_an_error_not_a_shorter_list") else {
        return;
    };
    let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = open_pg(&db, da.path());
    a.put_bundle(id(1), &BundlePut::new("b")).unwrap();
    a.put_tool(id(1), "t", "1", &http_put("t")).unwrap();
    // A second process, which has read the heads but no definition yet.
    let b = open_pg(&db, dbb.path());
    let ids: Vec<_> = b
        .heads()
        .iter()
        .filter(|h| h.bundle_id == id(1))
        .map(|h| h.id)
        .collect();
    assert_eq!(ids.len(), 1);
    // The definitions cannot be read now (another party moved the table away): the
    // page is an error, not a page without the tool, which a search would show as no hit.
    db.admin("ALTER TABLE tools RENAME TO tools_away").unwrap();
    let err = b.tools_of(&ids).unwrap_err();
    assert!(matches!(err, Error::Database { .. }), "{err}");
    db.admin("ALTER TABLE tools_away RENAME TO tools").unwrap();
    let tools = b.tools_of(&ids).unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].spec.name.as_str(), "t");
}
