//! The search index kept in the catalog directory: reopened, caught up with what other
//! processes wrote, and usable after a process is killed while it updates it.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::Env;

/// Writes `count` tools `{prefix}_{i}` about `topic` to a JSONL file, and imports them
/// into the bundle `prefix`.
fn import(env: &Env, prefix: &str, topic: &str, count: usize) {
    let mut lines = String::new();
    for i in 0..count {
        let line = serde_json::json!({
            "name": format!("{prefix}_{i}"),
            "description": format!("Tool {i} of the {topic} family: reads the {topic} gauge number {i}."),
            "parameters": {"type": "object", "properties": {"gauge": {"type": "integer"}}},
        });
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    let file = env.path().join(format!("{prefix}.jsonl"));
    std::fs::write(&file, lines).unwrap();
    let out = env.check(&[
        "import",
        "jsonl",
        file.to_str().unwrap(),
        "--bundle",
        prefix,
    ]);
    assert!(
        out.starts_with(&format!("imported {count} tool(s)")),
        "{out}"
    );
}

/// The first tool `search TEXT` lists.
fn first_hit(env: &Env, text: &str) -> String {
    let out = env.check(&["search", text]);
    out.split_whitespace().next().unwrap_or_default().to_owned()
}

fn index_dir(env: &Env) -> std::path::PathBuf {
    env.path().join("catalog").join("index").join("words")
}

#[test]
fn the_index_is_kept_with_the_catalog_and_sees_every_process_s_writes() {
    let env = Env::new();
    import(&env, "tide", "tide", 30);
    assert_eq!(first_hit(&env, "tide_7"), "tide_7");
    assert!(index_dir(&env).join("meta.json").exists());
    // Another process adds tools; the next search (another process again) finds them.
    import(&env, "zebra", "zebra", 3);
    assert_eq!(first_hit(&env, "zebra_2"), "zebra_2");
    // Another process deletes a bundle; its tools are no longer found.
    env.check(&["bundle", "delete", "zebra"]);
    assert_ne!(first_hit(&env, "zebra_2"), "zebra_2");
    assert_eq!(first_hit(&env, "tide_7"), "tide_7");
}

#[test]
fn a_damaged_index_is_rebuilt_and_says_so() {
    let env = Env::new();
    import(&env, "tide", "tide", 5);
    assert_eq!(first_hit(&env, "tide_3"), "tide_3");
    std::fs::write(index_dir(&env).join("meta.json"), "{ damaged").unwrap();
    let out = env.output(&["search", "tide_3"]);
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("rebuilding the search index"), "{stderr}");
    assert!(String::from_utf8(out.stdout).unwrap().starts_with("tide_3"));
}

/// Starts `toolscout search TEXT` on `env` and kills it (SIGKILL) after `after`.
fn search_killed_after(env: &Env, text: &str, after: Duration) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolscout"))
        .env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model")
        .env("TOOLSCOUT_HOME", env.path().join("catalog"))
        .env_remove("XDG_DATA_HOME")
        .args([
            "--workspace",
            env.workspace().to_str().unwrap(),
            "search",
            text,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let _ = child.kill();
    let _ = child.wait();
}

/// `search NAME` lists NAME first, and did not have to rebuild the index.
fn found_without_rebuild(env: &Env, name: &str) {
    let out = env.output(&["search", name]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains("rebuilding"), "{stderr}");
    assert!(String::from_utf8(out.stdout).unwrap().starts_with(name));
}

#[test]
fn a_process_killed_while_it_updates_the_index_leaves_one_the_next_can_use() {
    let env = Env::new();
    import(&env, "tide", "tide", 1500);
    assert_eq!(first_hit(&env, "tide_1499"), "tide_1499");
    // A change the index has not seen, then searches killed at several points of catching
    // up with it (before, during, after the commit, whichever the timing hits).
    import(&env, "moon", "moon", 1500);
    for ms in [20, 60, 150, 300, 600] {
        search_killed_after(&env, "moon", Duration::from_millis(ms));
    }
    // The next process opens what the killed ones committed: no rebuild is needed.
    found_without_rebuild(&env, "moon_1234");
    assert_eq!(first_hit(&env, "tide_1234"), "tide_1234");
    // The same from scratch: killed while building the whole index.
    std::fs::remove_dir_all(index_dir(&env)).unwrap();
    for ms in [20, 100, 300] {
        search_killed_after(&env, "tide", Duration::from_millis(ms));
    }
    found_without_rebuild(&env, "moon_77");
    assert_eq!(first_hit(&env, "tide_77"), "tide_77");
}
