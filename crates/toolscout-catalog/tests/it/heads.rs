//! The heads snapshot: a catalog reopened at the generation it was written at reads no
//! tool file, and one that is stale, damaged or missing reads what changed.

use std::fs;

use toolscout_catalog::ToolHead;

use crate::{bundle, http_put, open_bare};

/// Names of the heads, sorted.
fn names(heads: &[ToolHead]) -> Vec<String> {
    let mut n: Vec<String> = heads.iter().map(|h| h.name.clone()).collect();
    n.sort();
    n
}

/// Copies the tool file at `path` beside it under a new id, slug and name `name`, as a
/// person editing the directory would (no generation moves); returns the new id.
fn copy_by_hand(path: &std::path::Path, name: &str) -> uuid::Uuid {
    let mut v: serde_json::Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    let new_id = uuid::Uuid::now_v7();
    v["toolID"] = serde_json::json!(new_id);
    v["slug"] = serde_json::json!(name);
    v["displayName"] = serde_json::json!(name);
    v["name"] = serde_json::json!(name);
    fs::write(
        path.with_file_name(format!("{new_id}.json")),
        serde_json::to_vec(&v).unwrap(),
    )
    .unwrap();
    new_id
}

#[test]
fn a_current_snapshot_is_opened_without_reading_tool_files() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "b");
    let t = c.put_tool(b, "alpha", "1", &http_put("alpha")).unwrap();
    c.put_tool(b, "beta", "1", &http_put("beta")).unwrap();
    let identity = c.identity();
    drop(c);
    assert!(dir.path().join("heads.bin").is_file());

    // Overwritten in place, which changes no directory: only a read of the file would
    // notice.
    // The rest edits the tool's file by hand.
    crate::files_only!();
    let path = t.path.clone().unwrap();
    fs::write(&path, b"not json").unwrap();
    let c = open_bare(dir.path());
    assert_eq!(names(&c.heads()), ["alpha", "beta"]);
    assert!(c.issues().is_empty(), "{:?}", c.issues());
    assert_eq!(c.identity(), identity);
    let head = c.head(t.id).unwrap();
    assert_eq!(head.summary, "Does alpha");
    assert_eq!(head.tags, ["test"]);
    // The whole tool is read when asked for, and the damage is then an error.
    let err = c.tool(t.id).unwrap_err().to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    // A rescan reads every file and reports it.
    c.rescan().unwrap();
    assert_eq!(c.issues().len(), 1, "{:?}", c.issues());
    assert_eq!(names(&c.heads()), ["beta"]);
}

#[test]
fn a_file_added_by_hand_makes_the_snapshot_stale() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "b");
    let t = c.put_tool(b, "alpha", "1", &http_put("alpha")).unwrap();
    drop(c);

    // A copy of alpha under a new id and slug, written into the bundle's directory.
    crate::files_only!();
    let new_id = copy_by_hand(&t.path.clone().unwrap(), "gamma");

    let c = open_bare(dir.path());
    assert_eq!(names(&c.heads()), ["alpha", "gamma"]);
    assert_eq!(c.tool(new_id).unwrap().slug, "gamma");
}

#[test]
fn a_generation_moved_without_a_snapshot_reads_the_changed_files() {
    // What a writer killed after moving the generation on, but before writing the
    // snapshot, leaves behind.
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "b");
    let t = c.put_tool(b, "alpha", "1", &http_put("alpha")).unwrap();
    drop(c);
    let snapshot = fs::read(dir.path().join("heads.bin")).unwrap();

    let c = open_bare(dir.path());
    c.patch_tool(b, "alpha", "1", false).unwrap();
    c.put_tool(b, "beta", "1", &http_put("beta")).unwrap();
    drop(c);
    fs::write(dir.path().join("heads.bin"), &snapshot).unwrap();

    let c = open_bare(dir.path());
    assert_eq!(names(&c.heads()), ["alpha", "beta"]);
    let alpha = c.head(t.id).unwrap();
    assert!(!alpha.is_enabled);
    assert!(!alpha.is_callable());
}

#[test]
fn a_damaged_or_missing_snapshot_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "b");
    c.put_tool(b, "alpha", "1", &http_put("alpha")).unwrap();
    drop(c);
    let good = fs::read(dir.path().join("heads.bin")).unwrap();

    // Any one byte changed (a string that still decodes, a count, a time) is caught.
    for at in (0..good.len()).step_by(7) {
        let mut flipped = good.clone();
        flipped[at] ^= 0x5a;
        fs::write(dir.path().join("heads.bin"), &flipped).unwrap();
        let c = open_bare(dir.path());
        assert_eq!(names(&c.heads()), ["alpha"], "byte {at}");
        drop(c);
        assert_eq!(fs::read(dir.path().join("heads.bin")).unwrap(), good);
    }
    let truncated = &good[..good.len() - 3];
    let mut longer = good.clone();
    longer.push(0);
    let mut wrong_count = good.clone();
    // The count of entries follows the magic line and the header.
    let header_len = u64::from_le_bytes(good[18..26].try_into().unwrap()) as usize;
    wrong_count[26 + header_len] += 1;
    for damage in [
        &b"{\"format\": \"toolscout.heads/1\", \"stam"[..],
        b"",
        truncated,
        &longer,
        &wrong_count,
    ] {
        fs::write(dir.path().join("heads.bin"), damage).unwrap();
        let c = open_bare(dir.path());
        assert_eq!(names(&c.heads()), ["alpha"]);
        assert!(c.issues().is_empty(), "{:?}", c.issues());
        drop(c);
        assert_eq!(fs::read(dir.path().join("heads.bin")).unwrap(), good);
    }
    fs::remove_file(dir.path().join("heads.bin")).unwrap();
    let c = open_bare(dir.path());
    assert_eq!(names(&c.heads()), ["alpha"]);
    assert!(dir.path().join("heads.bin").is_file());
}

#[test]
fn heads_say_what_the_whole_tool_says() {
    let dir = tempfile::tempdir().unwrap();
    let c = crate::open(dir.path());
    let b = bundle(&c, 1, "b");
    c.put_tool(b, "alpha", "1", &http_put("alpha")).unwrap();
    c.put_tool(b, "beta", "1", &http_put("beta")).unwrap();
    c.patch_tool(b, "beta", "1", false).unwrap();
    for tool in c.tools() {
        assert_eq!(
            c.head(tool.id).unwrap(),
            ToolHead::of(&tool),
            "{}",
            tool.slug
        );
    }
    assert_eq!(c.heads().len(), c.tools().len());
    assert_eq!(c.len(), c.tools().len());
    // The identity from the heads' digests is the identity of the callable specs.
    let callable: Vec<_> = c
        .tools()
        .into_iter()
        .filter(|t| t.is_callable())
        .map(|t| t.spec)
        .collect();
    assert_eq!(
        c.identity(),
        toolscout_spec::identity::toolset_id(&callable)
    );
    // Reopened from the snapshot alone, the heads are the same to the nanosecond.
    let before = c.heads();
    drop(c);
    let again = crate::open(dir.path());
    assert_eq!(again.heads(), before);
}

#[test]
fn a_snapshot_larger_than_a_read_chunk_is_read_whole() {
    // About 1.5 MB of heads, read a MiB at a time: entries cross the chunk's end, and one
    // whose summary is larger than a chunk is read whole.
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "b");
    let puts: Vec<(String, String, toolscout_catalog::ToolPut)> = (0..5_000)
        .map(|i| {
            let name = format!("tool_{i:05}");
            (name.replace('_', "-"), "1".to_owned(), http_put(&name))
        })
        .collect();
    c.put_tools(b, puts).unwrap();
    let mut long = crate::spec("long_summary");
    long.summary = "word ".repeat(300_000).trim_end().to_owned();
    let long_put = toolscout_catalog::ToolPut::http(
        long.clone(),
        serde_json::json!({"method": "GET", "urlTemplate": "https://api.example.com/${q}"}),
    );
    let t = c.put_tool(b, "long-summary", "1", &long_put).unwrap();
    let heads = c.heads();
    let token = c.content_token();
    drop(c);
    assert!(fs::metadata(dir.path().join("heads.bin")).unwrap().len() > 1 << 21);

    // Overwritten in place: only a reopen that reads the snapshot keeps its head.
    crate::files_only!();
    fs::write(t.path.clone().unwrap(), b"not json").unwrap();
    let c = open_bare(dir.path());
    assert!(c.issues().is_empty(), "{:?}", c.issues());
    assert_eq!(c.heads(), heads);
    assert_eq!(c.head(t.id).unwrap().summary, long.summary);
    assert_eq!(c.content_token(), token);
}

#[test]
fn the_content_token_names_what_the_catalog_holds() {
    let dir = tempfile::tempdir().unwrap();
    let c = open_bare(dir.path());
    let b = bundle(&c, 1, "b");
    let t = c.put_tool(b, "alpha", "1", &http_put("alpha")).unwrap();
    let token = c
        .content_token()
        .expect("a catalog just written has a token");
    // Another handle, as another process: the same catalog, the same token.
    let other = open_bare(dir.path());
    assert_eq!(other.content_token().as_ref(), Some(&token));

    // A write anywhere moves it, in the writer and in a reader that catches up.
    other.patch_tool(b, "alpha", "1", false).unwrap();
    let moved = other.content_token().unwrap();
    assert_ne!(moved, token);
    c.reload().unwrap();
    assert_eq!(c.content_token().as_ref(), Some(&moved));
    drop((c, other));

    // A file added by hand moves no generation, but the snapshot read again differs.
    crate::files_only!();
    copy_by_hand(&t.path.clone().unwrap(), "gamma");
    let c = open_bare(dir.path());
    let by_hand = c.content_token().unwrap();
    assert_ne!(by_hand, moved);
    assert_eq!(open_bare(dir.path()).content_token(), Some(by_hand));

    // Other native functions make other tools callable: another token.
    let natives = crate::open_with(
        dir.path(),
        toolscout_catalog::CatalogOptions::default()
            .with_builtins(false)
            .with_natives(&["some_function"]),
    )
    .unwrap();
    assert_ne!(natives.content_token(), c.content_token());
}
