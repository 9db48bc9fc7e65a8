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
    let config = BuiltinConfig::new(&root, AllowedHosts::new(["127.0.0.1"]).allow_private(true));
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
