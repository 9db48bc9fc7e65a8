//! One request, bounded work (issue 61): a recipe's run ends within the shutdown grace
//! on SIGTERM, and one stopped by the result cap leaves no memory behind.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::Env;
use crate::serve::{http, serve};

const TOKEN: &str = "s3cret";

/// A service on 127.0.0.1 that answers each request after `delay` with `body`; returns
/// its address and how many requests it has answered.
fn service(delay: Duration, body: String) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&hits);
    let body = Arc::new(body);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let counted = Arc::clone(&counted);
            let body = Arc::clone(&body);
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                        break;
                    }
                }
                std::thread::sleep(delay);
                counted.fetch_add(1, Ordering::SeqCst);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    (addr, hits)
}

/// Puts an HTTP tool `fetch` of `addr` and a recipe `sweep` that calls it once per item
/// of its `items` (at most 100).
fn put_sweep(env: &Env, addr: &str) {
    env.check(&["bundle", "put", "load"]);
    let fetch = json!({
        "slug": "fetch", "version": "1", "name": "fetch",
        "description": "Fetches from the test service.",
        "type": "http", "argSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
        "impl": {"method": "GET", "urlTemplate": format!("http://{addr}/x")}
    });
    let sweep = json!({
        "slug": "sweep", "version": "1", "name": "sweep",
        "description": "Fetches once per item.",
        "type": "recipe",
        "argSchema": {"type": "object", "properties": {"items": {"type": "array", "maxItems": 100}}},
        "impl": {"steps": [{"id": "each", "tool": "fetch", "forEach": "$.args.items",
            "from": {"n": "$.index"}}]}
    });
    for tool in [fetch, sweep] {
        let file = env.path().join("tool.json");
        std::fs::write(&file, tool.to_string()).unwrap();
        let out = env.check(&["tool", "put", file.to_str().unwrap(), "--bundle", "load"]);
        assert!(!out.starts_with("exit"), "{out}");
    }
}

fn sweep_call() -> String {
    let items: Vec<u32> = (0..100).collect();
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "sweep", "arguments": {"items": items}}})
    .to_string()
}

#[cfg(unix)]
#[test]
fn sigterm_ends_a_running_recipe_within_the_shutdown_grace() {
    // Regression: SIGTERM took 12 s, the run going on meanwhile.
    let env = Env::new();
    let (api, hits) = service(Duration::from_millis(500), r#"{"ok": 1}"#.to_owned());
    put_sweep(&env, &api);
    let (mut server, addr, _) = serve(
        &env,
        &[
            "--token",
            TOKEN,
            "--allow-host",
            &api,
            "--allow-private",
            "--shutdown-grace",
            "2",
        ],
    );
    let caller = std::thread::spawn(move || {
        let auth = format!("Authorization: Bearer {TOKEN}");
        // The server closes the connection: no answer is an answer here.
        std::panic::catch_unwind(|| http(&addr, "POST", "/rpc", &[&auth], &sweep_call())).is_ok()
    });
    std::thread::sleep(Duration::from_millis(1_200));
    assert!(hits.load(Ordering::SeqCst) > 0, "the run did not start");
    let pid = server.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let signalled = Instant::now();
    let status = loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            signalled.elapsed() < Duration::from_secs(30),
            "the server did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = signalled.elapsed();
    assert!(status.success(), "{status:?}");
    // The grace (2 s), then at most the wait for blocking work (2 s) and a margin.
    assert!(took < Duration::from_millis(5_500), "{took:?}");
    let at_exit = hits.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(1_500));
    // Requests sent before the end may still be answered; none is sent after.
    assert!(
        hits.load(Ordering::SeqCst) <= at_exit + 4,
        "the run went on"
    );
    assert!(at_exit < 100, "{at_exit}");
    let _ = caller.join();
}

/// The resident memory of process `pid`, in KiB.
#[cfg(target_os = "linux")]
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn a_run_stopped_by_the_result_cap_leaves_no_memory_behind() {
    // Regression: one recipe stopped by the 8 MiB result cap raised the server's memory
    // from 163 to 421 MB, never returned: every item's result was kept until the whole
    // `forEach` was done, and only then counted.
    let env = Env::new();
    let megabyte = format!("\"{}\"", "x".repeat(1 << 20));
    let (api, hits) = service(Duration::from_millis(10), megabyte);
    put_sweep(&env, &api);
    let (server, addr, _) = serve(
        &env,
        &["--token", TOKEN, "--allow-host", &api, "--allow-private"],
    );
    let auth = format!("Authorization: Bearer {TOKEN}");
    let pid = server.0.id();
    // Warm: the catalog, the index and the runtime are in memory.
    let (status, _) = http(&addr, "GET", "/api/v1/tools", &[&auth], "");
    assert_eq!(status, 200);
    let before = rss_kib(pid);
    let (status, body) = http(&addr, "POST", "/rpc", &[&auth], &sweep_call());
    assert_eq!(status, 200);
    let reply: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(reply["result"]["error"]["kind"], "too_large", "{reply}");
    std::thread::sleep(Duration::from_millis(500));
    let after = rss_kib(pid);
    let calls = hits.load(Ordering::SeqCst);
    assert!(calls < 20, "the run went on past the cap: {calls} calls");
    assert!(
        after < before + 64 * 1024,
        "memory went from {before} KiB to {after} KiB"
    );
}
