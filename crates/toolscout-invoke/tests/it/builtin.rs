//! The built-in tools.

use serde_json::{Value, json};
use toolscout_invoke::builtin::{self, BuiltinConfig};
use toolscout_invoke::{AllowedHosts, Approval, ApprovalRequest, ErrorKind, Invoker, Outcome};

use crate::{server, show};

struct Fixture {
    dir: tempfile::TempDir,
    inv: Invoker,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join("src/nested")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "line 1\nline 2\r\nline 3\n").unwrap();
    std::fs::write(root.join("src/nested/mod.rs"), "// mod\n").unwrap();
    std::fs::write(root.join("Cargo.toml"), "[package]\n").unwrap();
    std::fs::write(dir.path().join("secret.txt"), "outside\n").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("escape.txt")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("escape_dir")).unwrap();
    }
    let mut inv = Invoker::default().with_approver(|_: &ApprovalRequest| Approval::Approved);
    let config = BuiltinConfig::new(
        &root,
        AllowedHosts::new(["127.0.0.1:*"]).allow_private(true),
    );
    builtin::register(&mut inv, &config).unwrap();
    Fixture { dir, inv }
}

impl Fixture {
    async fn call(&self, tool: &str, args: Value) -> Outcome {
        self.inv.invoke_native(tool, args).await
    }
}

fn kind(o: &Outcome) -> ErrorKind {
    o.error()
        .unwrap_or_else(|| panic!("expected an error: {}", show(o)))
        .kind
}

#[test]
fn schemas_match_the_catalog() {
    let inv = fixture().inv;
    let schemas: serde_json::Map<String, Value> = inv
        .native_specs()
        .into_iter()
        .map(|s| (s.name.to_string(), s.parameters))
        .collect();
    insta::assert_json_snapshot!(schemas);
}

#[tokio::test]
async fn read_file_whole_and_range() {
    let f = fixture();
    let whole = f
        .call("read_file", json!({"file_path": "src/lib.rs"}))
        .await;
    assert_eq!(whole.value().unwrap(), "line 1\nline 2\r\nline 3\n");
    let range = f
        .call(
            "read_file",
            json!({"file_path": "./src/../src/lib.rs", "offset": 2, "limit": 1}),
        )
        .await;
    assert_eq!(range.value().unwrap(), "line 2\r\n");
    let past = f
        .call("read_file", json!({"file_path": "src/lib.rs", "offset": 9}))
        .await;
    assert_eq!(kind(&past), ErrorKind::InvalidArguments);
    let zero = f
        .call("read_file", json!({"file_path": "src/lib.rs", "offset": 0}))
        .await;
    insta::assert_snapshot!(show(&zero));
    let missing = f.call("read_file", json!({"file_path": "nope.txt"})).await;
    assert_eq!(kind(&missing), ErrorKind::NotFound);
}

#[tokio::test]
async fn file_tools_stay_in_the_workspace() {
    let f = fixture();
    let climb = f
        .call("read_file", json!({"file_path": "../secret.txt"}))
        .await;
    insta::assert_snapshot!(show(&climb));
    let abs = f.dir.path().join("secret.txt");
    let out = f
        .call("read_file", json!({"file_path": abs.to_str().unwrap()}))
        .await;
    assert_eq!(kind(&out), ErrorKind::OutsideWorkspace);
    let out = f
        .call(
            "write_file",
            json!({"file_path": "a/../../x.txt", "content": "x"}),
        )
        .await;
    assert_eq!(kind(&out), ErrorKind::OutsideWorkspace);
    #[cfg(unix)]
    {
        let link = f
            .call("read_file", json!({"file_path": "escape.txt"}))
            .await;
        assert_eq!(kind(&link), ErrorKind::OutsideWorkspace, "{}", show(&link));
        let through = f
            .call(
                "write_file",
                json!({"file_path": "escape_dir/new.txt", "content": "x"}),
            )
            .await;
        assert_eq!(
            kind(&through),
            ErrorKind::OutsideWorkspace,
            "{}",
            show(&through)
        );
        assert!(!f.dir.path().join("new.txt").exists());
        let found = f.call("search_files", json!({"pattern": "**/*.txt"})).await;
        assert_eq!(found.value().unwrap(), &json!([]));
    }
}

/// Finding 9 of the second security pass: a hard link inside the workspace to a file
/// outside it could be read and appended to.
#[cfg(unix)]
#[tokio::test]
async fn hard_links_are_not_read_or_appended_to() {
    let f = fixture();
    let outside = f.dir.path().join("secret.txt");
    let root = f.dir.path().join("ws");
    std::fs::hard_link(&outside, root.join("linked.txt")).unwrap();
    let read = f
        .call("read_file", json!({"file_path": "linked.txt"}))
        .await;
    assert_eq!(kind(&read), ErrorKind::OutsideWorkspace, "{}", show(&read));
    insta::assert_snapshot!(read.error().unwrap().message, @r#"'linked.txt' is a hard link (the file has 2 names, which may be outside the workspace); it is not read or appended to"#);
    let append = f
        .call(
            "write_file",
            json!({"file_path": "linked.txt", "content": "more", "mode": "append"}),
        )
        .await;
    assert_eq!(
        kind(&append),
        ErrorKind::OutsideWorkspace,
        "{}",
        show(&append)
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside\n");
    // Overwriting replaces the name inside only; the file outside keeps its content.
    let replaced = f
        .call(
            "write_file",
            json!({"file_path": "linked.txt", "content": "new"}),
        )
        .await;
    assert!(replaced.is_ok(), "{}", show(&replaced));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside\n");
    let read = f
        .call("read_file", json!({"file_path": "linked.txt"}))
        .await;
    assert_eq!(read.value(), Some(&json!("new")), "{}", show(&read));
}

/// Finding 9: `read_file "a.txt/"` read the file `a.txt`; a trailing '/' names a
/// directory.
#[tokio::test]
async fn a_trailing_slash_names_a_directory() {
    let f = fixture();
    for path in ["Cargo.toml/", "Cargo.toml/.", "src/lib.rs//"] {
        let out = f.call("read_file", json!({"file_path": path})).await;
        assert_eq!(kind(&out), ErrorKind::NotFound, "{path}: {}", show(&out));
        let out = f
            .call("write_file", json!({"file_path": path, "content": "x"}))
            .await;
        assert_eq!(
            kind(&out),
            ErrorKind::InvalidArguments,
            "{path}: {}",
            show(&out)
        );
    }
    assert_eq!(
        std::fs::read_to_string(f.dir.path().join("ws/Cargo.toml")).unwrap(),
        "[package]\n"
    );
    let listed = f
        .call("search_files", json!({"pattern": "*.rs", "path": "src/"}))
        .await;
    assert_eq!(
        listed.value(),
        Some(&json!(["src/lib.rs"])),
        "{}",
        show(&listed)
    );
}

/// Finding 9: a glob of nested alternatives panicked inside globset, and the panic's
/// message (the whole pattern) and a backtrace went to the answer and the log.
#[tokio::test]
async fn search_files_refuses_deep_or_long_globs_without_a_panic() {
    let f = fixture();
    let nested = format!("{}x{}", "{a,".repeat(120), "}".repeat(120));
    let long = "*".repeat(5000);
    for pattern in [nested, long] {
        let out = f.call("search_files", json!({"pattern": pattern})).await;
        assert_eq!(kind(&out), ErrorKind::InvalidArguments, "{}", show(&out));
        assert!(out.error().unwrap().message.len() < 300, "{}", show(&out));
    }
    let out = f
        .call(
            "search_files",
            json!({"pattern": "{src,other}/{lib,x}.{rs,md}"}),
        )
        .await;
    assert_eq!(out.value(), Some(&json!(["src/lib.rs"])), "{}", show(&out));
}

#[tokio::test]
async fn write_file_overwrites_appends_and_creates_dirs() {
    let f = fixture();
    let out = f
        .call(
            "write_file",
            json!({"file_path": "out/deep/r.txt", "content": "héllo"}),
        )
        .await;
    assert_eq!(
        out.value().unwrap(),
        &json!({"path": "out/deep/r.txt", "bytes": 6, "bytes_written": 6})
    );
    let out = f
        .call(
            "write_file",
            json!({"file_path": "out/deep/r.txt", "content": "!\n", "mode": "append"}),
        )
        .await;
    assert!(out.is_ok(), "{}", show(&out));
    let read = f
        .call("read_file", json!({"file_path": "out/deep/r.txt"}))
        .await;
    assert_eq!(read.value().unwrap(), "héllo!\n");
    let out = f
        .call(
            "write_file",
            json!({"file_path": "out/deep/r.txt", "content": "new"}),
        )
        .await;
    assert!(out.is_ok());
    let read = f
        .call("read_file", json!({"file_path": "out/deep/r.txt"}))
        .await;
    assert_eq!(read.value().unwrap(), "new");
    let leftovers: Vec<_> = std::fs::read_dir(f.dir.path().join("ws/out/deep"))
        .unwrap()
        .collect();
    assert_eq!(leftovers.len(), 1, "the temporary file was renamed away");
}

#[tokio::test]
async fn search_files_by_glob() {
    let f = fixture();
    let all = f.call("search_files", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(
        all.value().unwrap(),
        &json!(["src/lib.rs", "src/nested/mod.rs"])
    );
    let top = f
        .call("search_files", json!({"pattern": "*.rs", "path": "src"}))
        .await;
    assert_eq!(top.value().unwrap(), &json!(["src/lib.rs"]));
    let one = f
        .call(
            "search_files",
            json!({"pattern": "**/*.rs", "max_results": 1}),
        )
        .await;
    assert_eq!(one.value().unwrap(), &json!(["src/lib.rs"]));
    let bad = f.call("search_files", json!({"pattern": "[a-"})).await;
    assert_eq!(kind(&bad), ErrorKind::InvalidArguments);
}

#[tokio::test]
async fn json_query() {
    let f = fixture();
    let v = json!({"items": [{"name": "a", "n": 1}, {"name": "b", "n": 5}]});
    let out = f
        .call(
            "json_query",
            json!({"value": v, "path": "$.items[?@.n > 2].name"}),
        )
        .await;
    assert_eq!(out.value().unwrap(), &json!(["b"]));
    let bad = f
        .call("json_query", json!({"value": v, "path": "items"}))
        .await;
    assert_eq!(kind(&bad), ErrorKind::InvalidArguments);
}

/// An array nested 100 deep: `[[[…]]]`.
fn deep_array(depth: usize) -> Value {
    let mut v = json!([]);
    for _ in 0..depth {
        v = json!([v]);
    }
    v
}

#[tokio::test]
async fn json_query_descendant_blowup_is_refused_not_an_abort() {
    // Regression: this query over this value made the server allocate 5.5 GB and abort.
    let f = fixture();
    let out = f
        .call(
            "json_query",
            json!({"value": deep_array(100), "path": "$..*..*..*..*"}),
        )
        .await;
    assert_eq!(kind(&out), ErrorKind::TooLarge, "{}", show(&out));
    assert!(
        out.error().unwrap().message.contains("'..' (descendant)"),
        "{}",
        show(&out)
    );
    // One level less passes the estimate, and is stopped by the number of matches.
    let out = f
        .call(
            "json_query",
            json!({"value": deep_array(100), "path": "$..*..*..*"}),
        )
        .await;
    assert_eq!(kind(&out), ErrorKind::TooLarge, "{}", show(&out));
    // A small descendant query still works.
    let out = f
        .call(
            "json_query",
            json!({"value": {"a": {"b": {"name": 1}}, "c": [{"name": 2}]}, "path": "$..name"}),
        )
        .await;
    assert_eq!(out.value().unwrap(), &json!([1, 2]));
}

#[tokio::test]
async fn json_query_large_matches_are_refused_before_copying() {
    let f = fixture();
    // 300 copies of a 20 KB string, each matched 30 times by the union: 180 MB of JSON.
    let big = "x".repeat(20_000);
    let value = json!({"items": vec![big; 300]});
    let union = vec!["*"; 30].join(",");
    let out = f
        .call(
            "json_query",
            json!({"value": value, "path": format!("$.items[{union}]")}),
        )
        .await;
    assert_eq!(kind(&out), ErrorKind::TooLarge, "{}", show(&out));
}

/// Finding 1 of the second security pass: a thousand nested parentheses or filters
/// overflowed the parser's stack and aborted the process.
#[tokio::test]
async fn json_query_deeply_nested_path_is_refused_not_an_abort() {
    let f = fixture();
    let parens = format!("$[?{}@.a{}]", "(".repeat(1000), ")".repeat(1000));
    let filters = format!("$[?{}@.a{}]", "@[?".repeat(1000), "]".repeat(1000));
    let brackets = format!("$.a{}0{}", "[".repeat(100_000), "]".repeat(100_000));
    for path in [parens, filters, brackets] {
        let out = f
            .call("json_query", json!({"value": [{"a": 1}], "path": path}))
            .await;
        assert_eq!(kind(&out), ErrorKind::InvalidArguments, "{}", show(&out));
        let message = &out.error().unwrap().message;
        // The refused path is quoted by its start only.
        assert!(message.len() < 1000, "{message}");
    }
    let nested = format!("$[?{}@.a{}]", "(".repeat(16), ")".repeat(16));
    let out = f
        .call("json_query", json!({"value": [{"a": 1}], "path": nested}))
        .await;
    insta::assert_snapshot!(out.error().unwrap().message, @r#"path "$[?((((((((((((((((@.a))))))))))))))))]" was refused: brackets and parentheses nest more than 16 deep (at byte 18); write a flatter path"#);
}

/// Finding 2: nested filters parsed in exponential time (30 levels, 160 bytes: about 20
/// minutes of a core), past the call's timeout.
#[tokio::test]
async fn json_query_nested_filters_are_refused_before_parsing() {
    let f = fixture();
    let path = format!("$[?{}@.a{}]", "@[?".repeat(30), "]".repeat(30));
    let out = f
        .call("json_query", json!({"value": [{"a": 1}], "path": path}))
        .await;
    assert_eq!(kind(&out), ErrorKind::InvalidArguments, "{}", show(&out));
    insta::assert_snapshot!(out.error().unwrap().message, @r#"path "$[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@[?@.a]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]" was refused: filters ([?…]) nest more than 4 deep (at byte 14); query in steps instead"#);
    // Four levels, the most real queries nest, still run.
    let path = "$[?@.a[?@.b[?@.c[?@.d == 1]]]]";
    let value = json!([{"a": [{"b": [{"c": [{"d": 1}]}]}]}, {"a": []}]);
    let out = f
        .call("json_query", json!({"value": value, "path": path}))
        .await;
    assert_eq!(
        out.value().unwrap().as_array().map(Vec::len),
        Some(1),
        "{}",
        show(&out)
    );
}

/// Finding 2: the pattern of `search()` was compiled again for every node, outside the
/// cost estimate (a 115 KB request: 48 s of CPU).
#[tokio::test]
async fn json_query_patterns_are_compiled_once_and_bounded() {
    let f = fixture();
    // 5,000 strings and a pattern that takes about 6 ms to compile: compiled per node,
    // 30 s of CPU; compiled once, milliseconds.
    let items: Vec<String> = (0..5000).map(|i| format!("item {i}")).collect();
    let pattern = "(a|b)*c{1,100}".repeat(8);
    let out = f
        .call(
            "json_query",
            json!({"value": items, "path": format!("$[?search(@, '{pattern}')]")}),
        )
        .await;
    assert_eq!(out.value(), Some(&json!([])), "{}", show(&out));
    // A pattern that compiles to megabytes is refused, whatever the value.
    let out = f
        .call(
            "json_query",
            json!({"value": ["a"], "path": "$[?match(@, '\\\\w{1,1000}')]"}),
        )
        .await;
    assert_eq!(kind(&out), ErrorKind::TooLarge, "{}", show(&out));
    // Patterns taken from the value count too: at most 16 different ones a query.
    let items: Vec<Value> = (0..100)
        .map(|i| json!({"s": "x", "p": format!("x{i}?")}))
        .collect();
    let out = f
        .call(
            "json_query",
            json!({"value": items, "path": "$[?search(@.s, @.p)]"}),
        )
        .await;
    assert_eq!(kind(&out), ErrorKind::TooLarge, "{}", show(&out));
    insta::assert_snapshot!(out.error().unwrap().message, @r#"the path "$[?search(@.s, @.p)]" was not run: the query compiles more than 16 different patterns of match() or search(); use fewer"#);
}

#[test]
fn json_query_cost_estimate() {
    use toolscout_invoke::builtin::query_cost;
    assert_eq!(query_cost("$.a.b[0]", 1000, 10), 1);
    assert_eq!(query_cost("$..a", 1000, 10), 1000);
    assert_eq!(query_cost("$..*..*", 1000, 10), 1_000_000);
    assert_eq!(query_cost("$.a[*]", 1000, 10), 10);
    assert_eq!(query_cost("$.a[0,1,2]", 1000, 10), 3);
    assert_eq!(query_cost("$.a[*,*]", 1000, 10), 20);
    assert_eq!(query_cost("$.a[1:5]", 1000, 10), 10);
    // A filter runs its own query once per member.
    assert_eq!(query_cost("$[?@..x]", 1000, 10), 10_000);
    // Quoted names count for nothing, whatever they hold.
    assert_eq!(query_cost("$['..*..*']", 1000, 10), 1);
}

#[tokio::test]
async fn clock() {
    let f = fixture();
    let out = f
        .call("clock", json!({"action": "convert", "time": "2024-05-14T13:44:00Z", "time_zone": "Europe/Paris"}))
        .await;
    assert_eq!(
        out.value().unwrap(),
        &json!({"time": "2024-05-14T15:44:00+02:00", "time_zone": "Europe/Paris", "utc_offset": "+02:00", "unix_seconds": 1_715_694_240i64})
    );
    let now = f.call("clock", json!({"action": "now"})).await;
    assert_eq!(now.value().unwrap()["time_zone"], "UTC");
    let bad = f
        .call(
            "clock",
            json!({"action": "now", "time_zone": "Mars/Olympus"}),
        )
        .await;
    insta::assert_snapshot!(show(&bad));
}

#[tokio::test]
async fn http_get_respects_allowed_hosts_and_limits() {
    let s = server::start().await;
    let f = fixture();
    let out = f
        .call(
            "http_get",
            json!({"url": format!("{}/weather?q=Lima", s.base), "headers": {"X-Test": "1"}}),
        )
        .await;
    let v = out.value().unwrap();
    assert_eq!(v["status"], 200);
    assert!(v["body"].as_str().unwrap().contains("Sunny in Lima"));
    let far = f
        .call(
            "http_get",
            json!({"url": format!("http://localhost:{}/echo", s.port)}),
        )
        .await;
    assert_eq!(kind(&far), ErrorKind::HostNotAllowed);
    let big = f
        .call(
            "http_get",
            json!({"url": format!("{}/big", s.base), "max_bytes": 100}),
        )
        .await;
    let v = big.value().unwrap();
    assert_eq!(v["body"].as_str().unwrap().len(), 100);
    assert_eq!(v["truncated"], true);
    let unknown = f
        .call(
            "http_get",
            json!({"url": format!("{}/big", s.base), "max_size": 100}),
        )
        .await;
    assert_eq!(kind(&unknown), ErrorKind::InvalidArguments);
}

#[tokio::test]
async fn read_file_stops_within_a_huge_line() {
    // Regression: a file without line breaks was read whole before the size check.
    let f = fixture();
    let root = f.dir.path().join("ws");
    let file = std::fs::File::create(root.join("one_line.txt")).unwrap();
    // Sparse: 64 MiB of zero bytes, no newline, costing no disk.
    file.set_len(64 << 20).unwrap();
    let out = f
        .call("read_file", json!({"file_path": "one_line.txt"}))
        .await;
    assert_eq!(kind(&out), ErrorKind::TooLarge, "{}", show(&out));
    // Skipped lines are not kept either: an offset past a huge line still reads.
    let mut text = vec![b'x'; 12 << 20];
    text.extend_from_slice(b"\nsecond\n");
    std::fs::write(root.join("long_first.txt"), text).unwrap();
    let out = f
        .call(
            "read_file",
            json!({"file_path": "long_first.txt", "offset": 2}),
        )
        .await;
    assert_eq!(out.value().unwrap(), &json!("second\n"), "{}", show(&out));
}

#[cfg(unix)]
#[tokio::test]
async fn read_file_refuses_a_fifo_without_blocking() {
    // Regression: opening a FIFO blocked a thread for ever after the timeout.
    let f = fixture();
    let fifo = f.dir.path().join("ws/pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    // A call that does not block returns in milliseconds; one that blocks on the FIFO
    // never returns. 30 s tells them apart however loaded the machine is.
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        f.call("read_file", json!({"file_path": "pipe"})),
    )
    .await
    .expect("read_file blocked on a FIFO");
    assert_eq!(kind(&out), ErrorKind::InvalidArguments, "{}", show(&out));
    assert!(show(&out).contains("not a regular file"), "{}", show(&out));
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        f.call(
            "write_file",
            json!({"file_path": "pipe", "content": "x", "mode": "append"}),
        ),
    )
    .await
    .expect("write_file blocked on a FIFO");
    assert!(out.error().is_some(), "{}", show(&out));
}

#[cfg(unix)]
#[tokio::test]
async fn write_file_keeps_permissions() {
    use std::os::unix::fs::PermissionsExt as _;
    // Regression: overwrite made every file 0600.
    let f = fixture();
    let path = f.dir.path().join("ws/script.sh");
    std::fs::write(&path, "old\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = f
        .call(
            "write_file",
            json!({"file_path": "script.sh", "content": "new\n"}),
        )
        .await;
    assert!(out.is_ok(), "{}", show(&out));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
    let out = f
        .call(
            "write_file",
            json!({"file_path": "fresh.txt", "content": "x"}),
        )
        .await;
    assert!(out.is_ok(), "{}", show(&out));
    let mode = std::fs::metadata(f.dir.path().join("ws/fresh.txt"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o644);
}

#[cfg(unix)]
#[tokio::test]
async fn write_file_append_does_not_follow_a_symlink() {
    // A link inside the workspace to a file inside it: checked as inside, but append
    // opens without following, so a link swapped in after the check cannot redirect it.
    let f = fixture();
    let root = f.dir.path().join("ws");
    std::os::unix::fs::symlink(root.join("Cargo.toml"), root.join("link.toml")).unwrap();
    let out = f
        .call(
            "write_file",
            json!({"file_path": "link.toml", "content": "x", "mode": "append"}),
        )
        .await;
    assert!(out.error().is_some(), "{}", show(&out));
    assert_eq!(
        std::fs::read_to_string(root.join("Cargo.toml")).unwrap(),
        "[package]\n"
    );
}
