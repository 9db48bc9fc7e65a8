//! Eight processes PUT the same `<slug, version>` pairs at once: exactly one PUT wins
//! each pair, and every file reads back.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use toolscout_catalog::Error;

use crate::{bundle, http_put, id, open_bare, spawn_child};

const PROCESSES: usize = 8;
const PAIRS: usize = 20;
const BUNDLES: u128 = 2;
const ROUNDS: usize = 3;

fn pair(i: usize) -> (String, String) {
    (format!("tool-{}", i / 2), format!("v{}", i % 2))
}

/// One writer: waits for the start signal, then PUTs every pair in every bundle
/// `ROUNDS` times, starting at a different pair than the others. Writes one line per
/// PUT that succeeded.
pub(crate) fn writer() {
    let dir = PathBuf::from(std::env::var("RACE_DIR").unwrap());
    let me: usize = std::env::var("RACE_ME").unwrap().parse().unwrap();
    let catalog = open_bare(&dir.join("catalog"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !dir.join("go").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut wins = fs::File::create(dir.join(format!("wins-{me}"))).unwrap();
    for round in 0..ROUNDS {
        for k in 0..PAIRS {
            let (slug, version) = pair((k + me * 3 + round) % PAIRS);
            for n in 1..=BUNDLES {
                let put = http_put(&format!("p{me}_{slug}"));
                match catalog.put_tool(id(n), &slug, &version, &put) {
                    Ok(t) => writeln!(wins, "{n} {slug} {version} {}", t.id).unwrap(),
                    Err(Error::Conflict { .. }) => {}
                    Err(e) => panic!("writer {me}: unexpected error: {e}"),
                }
            }
        }
    }
}

fn wins(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for me in 0..PROCESSES {
        let text = fs::read_to_string(dir.join(format!("wins-{me}"))).unwrap();
        for line in text.lines() {
            let (key, id) = line.rsplit_once(' ').unwrap();
            out.push((key.to_owned(), id.to_owned()));
        }
    }
    out
}

#[test]
fn eight_processes_put_the_same_pairs_exactly_one_wins_each() {
    crate::files_only!();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("catalog");
    {
        let c = open_bare(&root);
        for n in 1..=BUNDLES {
            bundle(&c, n, &format!("b{n}"));
        }
    }
    let children: Vec<_> = (0..PROCESSES)
        .map(|me| {
            spawn_child(
                "race",
                &[
                    ("RACE_DIR", dir.path().display().to_string()),
                    ("RACE_ME", me.to_string()),
                ],
            )
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    fs::write(dir.path().join("go"), b"").unwrap();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a writer failed");
    }

    let wins = wins(dir.path());
    let attempts = PROCESSES * ROUNDS * PAIRS * BUNDLES as usize;
    let mut per_pair: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (key, id) in &wins {
        per_pair.entry(key).or_default().push(id);
    }
    assert_eq!(per_pair.len(), PAIRS * BUNDLES as usize);
    for (key, ids) in &per_pair {
        assert_eq!(
            ids.len(),
            1,
            "{key} won {} times out of {attempts} PUTs",
            ids.len()
        );
    }

    let c = open_bare(&root);
    assert!(c.issues().is_empty(), "{:?}", c.issues());
    let tools = c.tools();
    assert_eq!(tools.len(), PAIRS * BUNDLES as usize);
    for t in &tools {
        let key = format!("{} {} {}", t.bundle_id.as_u128() & 0xff, t.slug, t.version);
        assert_eq!(per_pair[key.as_str()], [t.id.to_string().as_str()]);
    }
    // Every winning PUT moved the generation once, and no losing one did.
    assert_eq!(
        u128::from(c.generation()),
        BUNDLES + (PAIRS as u128) * BUNDLES
    );
    // No temporary file is left behind.
    for t in &tools {
        let dir = t.path.as_ref().unwrap().parent().unwrap();
        for entry in fs::read_dir(dir).unwrap() {
            let name = entry.unwrap().file_name();
            assert!(!name.to_string_lossy().starts_with('.'), "{name:?}");
        }
    }
}
