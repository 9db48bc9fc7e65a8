//! Imports interrupted by SIGKILL: a catalog opened afterwards holds all of the bundle or
//! none of it, and the same import then runs again.

use std::fs;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use toolscout_catalog::Catalog;

use crate::{bundle, http_put, id, open_bare};

/// The number of tools of the archive: large enough that an import takes a while.
const TOOLS: usize = 3000;

/// The bundle of the archive.
fn bundle_id() -> uuid::Uuid {
    id(7)
}

/// A ZIP of one bundle of `n` HTTP tools.
fn archive(n: usize) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 7, "big");
    let puts: Vec<_> = (0..n)
        .map(|i| (format!("t{i}"), "1", http_put(&format!("t_{i}"))))
        .collect();
    c.put_tools(b, puts).unwrap();
    let mut buf = Cursor::new(Vec::new());
    c.export_bundle(b, &mut buf).unwrap();
    buf.into_inner()
}

/// The child: imports the archive `IMPORT_ZIP` into the catalog `IMPORT_ROOT` until it
/// is killed (or done).
pub(crate) fn importer() {
    let zip = PathBuf::from(std::env::var("IMPORT_ZIP").unwrap());
    let root = PathBuf::from(std::env::var("IMPORT_ROOT").unwrap());
    let c = open_bare(&root);
    let file = fs::File::open(zip).unwrap();
    c.import_bundle(std::io::BufReader::new(file)).unwrap();
}

/// The names in `dir` (none when it is missing): (visible tool files, hidden ones).
fn files_in(dir: &Path) -> (usize, usize) {
    let Ok(entries) = fs::read_dir(dir) else {
        return (0, 0);
    };
    let mut counts = (0, 0);
    for entry in entries {
        if entry
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with('.')
        {
            counts.1 += 1;
        } else {
            counts.0 += 1;
        }
    }
    counts
}

/// Temporary files anywhere under `dir`.
fn temp_files(dir: &Path) -> usize {
    let mut n = 0;
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            n += temp_files(&entry.path());
        } else if entry.file_name().to_string_lossy().ends_with(".tmp") {
            n += 1;
        }
    }
    n
}

/// When the parent kills the importer.
#[derive(Debug, Clone, Copy)]
enum KillAt {
    /// As soon as the tool files start to take their places (a journal is there, or a
    /// first tool file): in the middle of the renames.
    FirstToolFile,
    /// Once half the tools are written to their temporary files: before the journal.
    HalfWritten,
}

#[cfg(unix)]
#[test]
fn an_import_killed_mid_write_leaves_all_or_nothing_and_runs_again() {
    crate::files_only!();
    let work = tempfile::tempdir().unwrap();
    let zip_path = work.path().join("big.zip");
    let zip = archive(TOOLS);
    fs::write(&zip_path, &zip).unwrap();
    for (round, kill_at) in [KillAt::FirstToolFile, KillAt::HalfWritten]
        .into_iter()
        .enumerate()
    {
        let root = work.path().join(format!("catalog-{round}"));
        drop(open_bare(&root));
        let tools_dir = root
            .join("bundles")
            .join(bundle_id().to_string())
            .join("tools");
        let journal = root.join("batch-journal.json");
        let mut child = crate::spawn_child(
            "import",
            &[
                ("IMPORT_ZIP", zip_path.display().to_string()),
                ("IMPORT_ROOT", root.display().to_string()),
            ],
        );
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut finished = false;
        while Instant::now() < deadline {
            let due = match kill_at {
                KillAt::FirstToolFile => journal.exists() || files_in(&tools_dir).0 > 0,
                KillAt::HalfWritten => files_in(&tools_dir).1 >= TOOLS / 2,
            };
            if due {
                break;
            }
            if child.try_wait().unwrap().is_some() {
                finished = true;
                break;
            }
        }
        child.kill().unwrap(); // SIGKILL
        let status = child.wait().unwrap();
        let journal_left = journal.exists();
        let (placed, hidden) = files_in(&tools_dir);

        let c = open_bare(&root);
        assert!(c.issues().is_empty(), "{kill_at:?}: {:?}", c.issues());
        let found = c.tools().len();
        eprintln!(
            "{kill_at:?}: killed {} ({status}); on disk {placed} tool files, {hidden} hidden, \
             journal left: {journal_left}; opened: {found} of {TOOLS} tools",
            if finished {
                "after it finished"
            } else {
                "mid-import"
            },
        );
        assert!(
            found == 0 || found == TOOLS,
            "{kill_at:?}: a part of the bundle was imported: {found} of {TOOLS} tools"
        );
        if found == 0 {
            assert!(
                c.bundle(bundle_id()).is_err(),
                "{kill_at:?}: an empty bundle"
            );
        }

        // The same import again: it completes what is missing.
        let started = Instant::now();
        let again = c.import_bundle(Cursor::new(&zip));
        eprintln!(
            "{kill_at:?}: import again: {:?} in {:?}",
            again.as_ref().map(|i| i.tools.len()),
            started.elapsed()
        );
        again.unwrap();
        let reopened = open_bare(&root);
        assert!(reopened.issues().is_empty(), "{:?}", reopened.issues());
        assert_eq!(reopened.tools().len(), TOOLS);
        reopened.reap(chrono::Utc::now()).unwrap();
        assert_eq!(temp_files(&root), 0);
    }
}

/// The time of one import of a [`TOOLS`]-tool archive into a new catalog. Run by hand:
/// `cargo test -p toolscout-catalog --test it -- --ignored import_timing --nocapture`.
#[test]
#[ignore = "a measurement, not a check: run by hand"]
fn import_timing() {
    crate::files_only!();
    let zip = archive(TOOLS);
    for _ in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let c: Catalog = open_bare(dir.path());
        let started = Instant::now();
        let imported = c.import_bundle(Cursor::new(&zip)).unwrap();
        eprintln!(
            "imported {} tools in {:?}",
            imported.tools.len(),
            started.elapsed()
        );
    }
}

#[cfg(unix)]
#[test]
fn a_journal_that_leads_out_of_the_catalog_is_refused_whole() {
    crate::files_only!();
    // Regression guard: the journal is read back from disk, so its paths are hostile
    // input; a rename it names must never reach a file outside the catalog.
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    drop(open_bare(root.path()));
    fs::write(outside.path().join(".evil.tmp"), "{}").unwrap();
    fs::write(outside.path().join("victim.json"), "precious").unwrap();
    std::os::unix::fs::symlink(outside.path(), root.path().join("bundles").join("away")).unwrap();
    let inside = root.path().join("bundles");
    fs::write(inside.join(".fine.tmp"), "{}").unwrap();
    let journal = root.path().join("batch-journal.json");
    let mut said = String::new();
    for renames in [
        // Through a symbolic link, after a harmless entry.
        serde_json::json!({"bundles": [[".fine.tmp", "fine.json"]], "bundles/away": [[".evil.tmp", "victim.json"]]}),
        serde_json::json!({"bundles/..": [[".fine.tmp", "victim.json"]]}),
        serde_json::json!({outside.path().display().to_string(): [[".evil.tmp", "victim.json"]]}),
        serde_json::json!({"bundles": [[".fine.tmp", "../../victim.json"]]}),
    ] {
        let text = serde_json::json!({"format": "toolscout.batch-journal/1", "renames": renames});
        fs::write(&journal, text.to_string()).unwrap();
        let err = Catalog::open_with(
            root.path(),
            toolscout_catalog::CatalogOptions::default().with_builtins(false),
        )
        .unwrap_err();
        assert!(
            matches!(err, toolscout_catalog::Error::Journal { .. }),
            "{err}"
        );
        let text = err
            .to_string()
            .replace(&root.path().display().to_string(), "[root]")
            .replace(&outside.path().display().to_string(), "[outside]");
        said.push_str(&text);
        said.push('\n');
    }
    insta::assert_snapshot!(said, @r#"
    [root]/batch-journal.json: directory "bundles/away" leads out of the catalog root; nothing of it was applied: check the catalog directory, then remove the file
    [root]/batch-journal.json: directory "bundles/.." is not a plain path under the root; nothing of it was applied: check the catalog directory, then remove the file
    [root]/batch-journal.json: directory "[outside]" is not a plain path under the root; nothing of it was applied: check the catalog directory, then remove the file
    [root]/batch-journal.json: "bundles": "../../victim.json" is not a catalog file's name; nothing of it was applied: check the catalog directory, then remove the file
    "#);
    // Nothing of any of them was applied.
    assert_eq!(
        fs::read_to_string(outside.path().join("victim.json")).unwrap(),
        "precious"
    );
    assert!(outside.path().join(".evil.tmp").exists());
    assert!(inside.join(".fine.tmp").exists() && !inside.join("fine.json").exists());
    // Once the file is removed (by someone who checked), the catalog opens again.
    fs::remove_file(&journal).unwrap();
    fs::remove_file(root.path().join("bundles").join("away")).unwrap();
    let c = open_bare(root.path());
    assert!(c.issues().is_empty(), "{:?}", c.issues());
}
