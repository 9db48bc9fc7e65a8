//! `toolscout bench serve`: a load test. Starts `toolscout serve` as a child process on
//! a loopback port, runs N concurrent clients against it for a while, each mixing the
//! manifest, `tools/search` and `tools/call`, and prints requests per second, p50 and
//! p99 latency, the errors, and the server's memory over the run (from
//! `/proc/<pid>/status`: resident size at the start, at the end, and its peak).

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use serde_json::{Value, json};

use super::context::Global;

/// Arguments of `bench serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// Concurrent clients.
    #[arg(long, default_value_t = 16)]
    clients: usize,
    /// How long to run, in seconds.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
}

/// The server child, killed when dropped.
pub(crate) struct Server(Child);

impl Server {
    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What one client saw.
#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    errors: u64,
    first_error: Option<String>,
}

pub(crate) fn run(args: &ServeArgs, global: &Global, json_out: bool) -> Result<()> {
    if args.clients == 0 || args.seconds == 0 {
        bail!("--clients and --seconds must be at least 1");
    }
    let token = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let (server, addr) = start(global, &token)?;
    let pid = server.0.id();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let rss_start = memory(pid).map(|m| m.0);
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let mut samples = Vec::new();
    let tallies: Vec<Tally> = runtime.block_on(async {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .no_proxy()
            .build()?;
        let mut tasks = Vec::new();
        for i in 0..args.clients {
            let (client, addr, token) = (client.clone(), addr.clone(), token.clone());
            tasks.push(tokio::spawn(async move {
                one_client(i, &client, &addr, &token, deadline).await
            }));
        }
        // The server's memory, every second while the clients run.
        while Instant::now() < deadline {
            tokio::time::sleep(Duration::from_secs(1)).await;
            if let Some((rss, _)) = memory(pid) {
                samples.push(rss);
            }
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await?);
        }
        Ok::<_, anyhow::Error>(out)
    })?;
    let (rss_end, peak) = memory(pid).unwrap_or((0, 0));
    drop(server);

    let mut latencies: Vec<Duration> = tallies
        .iter()
        .flat_map(|t| t.latencies.iter().copied())
        .collect();
    latencies.sort_unstable();
    let errors: u64 = tallies.iter().map(|t| t.errors).sum();
    let first_error = tallies.iter().find_map(|t| t.first_error.clone());
    let requests = latencies.len() as u64 + errors;
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    let secs = args.seconds as f64;
    let rps = requests as f64 / secs;
    // Memory in the second tenth of the run against the last tenth: flat or growing.
    let tenth = samples.len() / 10;
    let early = samples.get(tenth).copied().unwrap_or_default();
    let report = json!({
        "clients": args.clients,
        "seconds": args.seconds,
        "requests": requests,
        "requests_per_second": (rps * 10.0).round() / 10.0,
        "p50_ms": (pct(0.50) * 100.0).round() / 100.0,
        "p99_ms": (pct(0.99) * 100.0).round() / 100.0,
        "errors": errors,
        "first_error": first_error,
        "server_rss_kib": {"start": rss_start, "early": early, "end": rss_end, "peak": peak},
    });
    if json_out {
        return super::emit(&serde_json::to_string_pretty(&report)?);
    }
    super::emit(format!(
        "{} clients for {} s: {requests} requests, {rps:.1}/s, p50 {:.2} ms, p99 {:.2} ms, {errors} errors{}\n\
         server memory (RSS): {} KiB at start, {early} KiB at 10%, {rss_end} KiB at the end, peak {peak} KiB",
        args.clients,
        args.seconds,
        pct(0.50),
        pct(0.99),
        first_error
            .map(|e| format!(" (first: {e})"))
            .unwrap_or_default(),
        rss_start.unwrap_or_default(),
    ))
}

/// Starts `toolscout serve` on a free loopback port with `token`; returns it and its
/// address.
pub(crate) fn start(global: &Global, token: &str) -> Result<(Server, String)> {
    let exe = std::env::current_exe().context("finding the toolscout binary")?;
    let mut cmd = Command::new(exe);
    if let Some(c) = &global.catalog {
        cmd.arg("--catalog").arg(c);
    }
    if let Some(w) = &global.workspace {
        cmd.arg("--workspace").arg(w);
    }
    if global.meaning.words_only {
        cmd.arg("--words-only");
    }
    for e in &global.meaning.encoder {
        cmd.arg("--encoder").arg(e);
    }
    let mut child = cmd
        .args(["serve", "--addr", "127.0.0.1:0", "--token", token])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting toolscout serve")?;
    let stderr = child.stderr.take().context("reading the server's output")?;
    let server = Server(child);
    let mut lines = BufReader::new(stderr);
    loop {
        let mut line = String::new();
        if lines.read_line(&mut line)? == 0 {
            bail!("the server ended before it was ready");
        }
        if let Some(rest) = line.strip_prefix("serving ")
            && let Some(addr) = rest
                .split("http://")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
        {
            let addr = addr.to_owned();
            // Keep reading its output, so that it never blocks on a full pipe.
            std::thread::spawn(move || {
                let mut sink = String::new();
                while lines.read_line(&mut sink).is_ok_and(|n| n > 0) {
                    sink.clear();
                }
            });
            return Ok((server, addr));
        }
    }
}

/// One client: a fixed rotation of manifest reads, searches and calls until `deadline`.
async fn one_client(
    i: usize,
    client: &reqwest::Client,
    addr: &str,
    token: &str,
    deadline: Instant,
) -> Tally {
    const QUERIES: [&str; 5] = ["read a file", "time zone", "json", "write", "search files"];
    let mut tally = Tally::default();
    let mut n = i;
    while Instant::now() < deadline {
        n += 1;
        let started = Instant::now();
        let result = match n % 4 {
            0 => get_manifest(client, addr).await,
            1 | 2 => {
                let q = QUERIES[n % QUERIES.len()];
                rpc(client, addr, token, json!({"jsonrpc": "2.0", "id": n, "method": "tools/search", "params": {"query": q}})).await
            }
            _ => {
                let call = if n % 8 == 3 {
                    json!({"name": "clock", "arguments": {"action": "now", "time_zone": "Europe/Paris"}})
                } else {
                    json!({"name": "json_query", "arguments": {"value": {"a": [1, 2, {"b": n}]}, "path": "$..b"}})
                };
                rpc(
                    client,
                    addr,
                    token,
                    json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call}),
                )
                .await
            }
        };
        match result {
            Ok(()) => tally.latencies.push(started.elapsed()),
            Err(e) => {
                tally.errors += 1;
                tally.first_error.get_or_insert(e);
            }
        }
    }
    tally
}

async fn get_manifest(client: &reqwest::Client, addr: &str) -> Result<(), String> {
    let resp = client
        .get(format!("http://{addr}/api/v1/tools"))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = resp.status();
    let body = resp.bytes().await.map_err(|e| e.to_string())?;
    if !status.is_success() || body.is_empty() {
        return Err(format!("manifest answered {status}"));
    }
    Ok(())
}

async fn rpc(client: &reqwest::Client, addr: &str, token: &str, body: Value) -> Result<(), String> {
    let resp = client
        .post(format!("http://{addr}/rpc"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let status = resp.status();
    let reply: Value = resp.json().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("/rpc answered {status}"));
    }
    if let Some(e) = reply.get("error") {
        return Err(format!("/rpc error {e}"));
    }
    if reply["result"]["ok"] == json!(false) {
        return Err(format!("tool call failed: {}", reply["result"]["error"]));
    }
    Ok(())
}

/// The resident size and its peak (`VmRSS`, `VmHWM`) of process `pid`, in KiB (Linux).
pub(crate) fn memory(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}
