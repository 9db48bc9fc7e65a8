//! Writers killed with SIGKILL in the middle of their work: every write they
//! acknowledged is there, and the catalog loads without a single bad file.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use toolscout_catalog::ToolPut;

use crate::{bundle, id, open_bare, spec};

const WRITERS: usize = 4;
const ROUNDS: usize = 8;

/// A tool with a large description, so that a kill often lands inside a write.
fn big_put(name: &str) -> ToolPut {
    let mut s = spec(name);
    s.description = format!("{name}: ").repeat(1500);
    ToolPut::http(
        s,
        serde_json::json!({"urlTemplate": "https://api.example.com/${q}"}),
    )
}

/// One writer: PUTs tools until it is killed, and disables every third one it wrote.
/// Each acknowledged write is logged with one `write` call after it returned.
pub(crate) fn writer() {
    let dir = PathBuf::from(std::env::var("CRASH_DIR").unwrap());
    let tag = std::env::var("CRASH_TAG").unwrap();
    let catalog = open_bare(&dir.join("catalog"));
    let mut acks = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(format!("acks-{tag}")))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut n = 0;
    while Instant::now() < deadline {
        let slug = format!("{tag}-{n}");
        let t = catalog
            .put_tool(id(1), &slug, "1", &big_put(&format!("t_{tag}_{n}")))
            .unwrap();
        acks.write_all(format!("put {slug} {}\n", t.id).as_bytes())
            .unwrap();
        if n % 3 == 0 {
            catalog.patch_tool(id(1), &slug, "1", false).unwrap();
            acks.write_all(format!("off {slug} -\n").as_bytes())
                .unwrap();
        }
        n += 1;
    }
}

/// Acknowledged puts (slug → id) and disables, from the complete lines of every log.
fn acks(dir: &Path) -> (BTreeMap<String, String>, Vec<String>) {
    let (mut puts, mut offs) = (BTreeMap::new(), Vec::new());
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if !path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("acks-")
        {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        for line in text.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
            let mut parts = line.split_whitespace();
            let (op, slug, id) = (
                parts.next().unwrap(),
                parts.next().unwrap(),
                parts.next().unwrap(),
            );
            match op {
                "put" => {
                    puts.insert(slug.to_owned(), id.to_owned());
                }
                _ => offs.push(slug.to_owned()),
            }
        }
    }
    (puts, offs)
}

/// Temporary files anywhere under `dir`: each is a write a kill interrupted.
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

#[cfg(unix)]
#[test]
fn writers_killed_mid_write_lose_no_acknowledged_write() {
    crate::files_only!();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("catalog");
    bundle(&open_bare(&root), 1, "crash");
    let mut leftovers = 0;
    let mut kills = 0;
    for round in 0..ROUNDS {
        let mut children: Vec<_> = (0..WRITERS)
            .map(|w| {
                crate::spawn_child(
                    "crash",
                    &[
                        ("CRASH_DIR", dir.path().display().to_string()),
                        ("CRASH_TAG", format!("r{round}w{w}")),
                    ],
                )
            })
            .collect();
        // Let them write for a while, then kill them the moment a tool file is being
        // written (its temporary file exists), or at the deadline.
        // (Wait for a first acknowledged write of this round, however slow the machine.)
        let acked = acks(dir.path()).0.len();
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline && acks(dir.path()).0.len() == acked {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300 + 97 * round as u64));
        let tools_dir = root.join("bundles").join(id(1).to_string()).join("tools");
        let deadline = Instant::now() + Duration::from_secs(2);
        let before = temp_files(&tools_dir);
        while Instant::now() < deadline && temp_files(&tools_dir) <= before {}
        for child in &mut children {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
        }
        for mut child in children {
            let status = child.wait().unwrap();
            assert!(!status.success(), "a writer ended by itself: {status}");
        }

        let c = open_bare(&root);
        assert!(c.issues().is_empty(), "round {round}: {:?}", c.issues());
        let (puts, offs) = acks(dir.path());
        assert!(!puts.is_empty(), "round {round}: no write was acknowledged");
        for (slug, tool_id) in &puts {
            let t = c.get_tool(id(1), slug, "1").unwrap();
            assert_eq!(&t.id.to_string(), tool_id);
        }
        for slug in &offs {
            assert!(!c.get_tool(id(1), slug, "1").unwrap().is_enabled, "{slug}");
        }
        let tools_dir = root.join("bundles").join(id(1).to_string()).join("tools");
        leftovers = fs::read_dir(&tools_dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with('.')
            })
            .count();
        eprintln!(
            "round {round}: {} tools, {} acknowledged, {} disabled, {leftovers} temporary files left by kills",
            c.tools().len(),
            puts.len(),
            offs.len()
        );
    }
    eprintln!("{kills} writers killed, {leftovers} of them inside a file write");
    // The reaper clears what the killed writers left behind.
    open_bare(&root).reap(chrono::Utc::now()).unwrap();
    assert_eq!(temp_files(&root), 0);
}
