//! `toolscout-bench replicas`: replicas of `serve` on one PostgreSQL catalog. On a
//! database of its own (created on the server `--store` names, dropped at the end), for
//! each replica count K it starts K `toolscout serve` children, each with a directory
//! of its own, and measures:
//!
//! * **propagation lag**: a tool written (REST `PUT`) on one replica, until every
//!   other replica's event feed (`GET /api/v1/events`) announces it; p50 and p99 over
//!   `--writes` writes, spread over the replicas (with one replica, until its own feed
//!   does). The last write is also looked for by search on every replica.
//! * **requests/s** under a mixed load (90 % search, 8 % manifest pages, 2 % writes)
//!   from `--clients` clients spread over the replicas;
//! * with `--concurrent-writes N` (600 by default), **writers on every replica at once**:
//!   N writes at full speed, one writer per replica, optionally disturbed half-way
//!   (`--disrupt kill`: one replica killed with SIGKILL and started again; `--disrupt
//!   CMD`: a shell command, such as a database restart), then an audit of every
//!   acknowledged write on every replica: in its feed exactly once (or covered by a
//!   `reset`), found by its exact name in its search, the same ETag everywhere (see
//!   `audit.rs`);
//! * with `--tools`, the **cold start** on that catalog: its import into the database,
//!   a replica's start with an empty directory (its search index built from the heads),
//!   and again with its index current, until it answers; peak memory of each.
//!
//! On one machine the replicas share its cores: requests/s per K says what the design
//! costs, not what K machines would serve.

mod audit;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::Target;
use crate::harness::{Server, memory, pct};

/// Arguments of `toolscout-bench replicas`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReplicasArgs {
    /// Replica counts to run, e.g. `1,2,3`.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    replicas: Vec<usize>,
    /// Writes timed for the propagation lag, per replica count.
    #[arg(long, default_value_t = 200)]
    writes: usize,
    /// Seconds of mixed load per replica count.
    #[arg(long, default_value_t = 20)]
    seconds: u64,
    /// Concurrent clients of the mixed load.
    #[arg(long, default_value_t = 16)]
    clients: usize,
    /// Writes of the concurrent phase, in all (a writer on every replica at once, then
    /// the audit of every write on every replica); 0 leaves the phase out.
    #[arg(long, default_value_t = 600)]
    concurrent_writes: usize,
    /// Disturbs the concurrent phase half-way: `kill` (the last replica is killed with
    /// SIGKILL and started again on its directory), or a shell command to run then, e.g.
    /// `su postgres -c "pg_ctl -D /path restart -m fast"`.
    #[arg(long)]
    disrupt: Option<String>,
    /// Tools (JSONL) for the cold start, e.g. a catalog of 92,589; without it the cold
    /// start is not measured.
    #[arg(long)]
    tools: Option<PathBuf>,
}

pub(crate) const TOKEN: &str = "bench-replicas-token";

pub(crate) fn run(args: &ReplicasArgs, target: &Target, json_out: bool) -> Result<()> {
    let Some(admin) = target.store.clone().map(|s| s.0) else {
        bail!(
            "toolscout-bench replicas needs --store postgres://… (or $TOOLSCOUT_DATABASE_URL): a server where it may create a database of its own"
        );
    };
    if args.replicas.is_empty() || args.replicas.contains(&0) || args.writes == 0 {
        bail!("--replicas must be counts of at least 1, and --writes at least 1");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let name = format!("toolscout_bench_{}", uuid::Uuid::new_v4().simple());
    runtime.block_on(admin_sql(&admin, &format!("CREATE DATABASE {name}")))?;
    let url = match admin.rsplit_once('/') {
        Some((base, _)) if base.contains("://") && base.len() > "postgres://".len() => {
            format!("{base}/{name}")
        }
        _ => format!("{}/{name}", admin.trim_end_matches('/')),
    };
    let result = runtime.block_on(async {
        let mut rows = Vec::new();
        let mut audits = Vec::new();
        let disrupt = args.disrupt.as_deref().map(audit::Disruption::parse);
        for &k in &args.replicas {
            eprintln!("{k} replica(s)…");
            rows.push(run_k(k, &url, args, target).await?);
            if args.concurrent_writes > 0 {
                eprintln!("{k} replica(s), a writer on each…");
                audits.push(
                    audit::run(k, &url, args.concurrent_writes, disrupt.as_ref(), target).await?,
                );
            }
        }
        let cold = match &args.tools {
            Some(tools) => Some(cold_start(&url, tools, target).await?),
            None => None,
        };
        Ok::<_, anyhow::Error>((rows, audits, cold))
    });
    // Dropped whatever happened; a failure to drop it only leaves a database behind.
    if let Err(e) = runtime.block_on(admin_sql(
        &admin,
        &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
    )) {
        eprintln!("warning: the database {name} was not dropped: {e}");
    }
    let (rows, audits, cold) = result?;
    let report = json!({"replicas": rows, "concurrent": audits, "cold_start": cold});
    if json_out {
        return crate::emit(&serde_json::to_string_pretty(&report)?);
    }
    let mut out = String::from(
        "| replicas | lag p50 | lag p99 | writes | requests/s | p99 | errors |\n|---|---|---|---|---|---|---|\n",
    );
    for r in &rows {
        out.push_str(&format!(
            "| {} | {:.1} ms | {:.1} ms | {} | {:.0} | {:.1} ms | {} |\n",
            r["replicas"],
            r["lag_ms_p50"].as_f64().unwrap_or(0.0),
            r["lag_ms_p99"].as_f64().unwrap_or(0.0),
            r["writes"],
            r["requests_per_s"].as_f64().unwrap_or(0.0),
            r["latency_ms_p99"].as_f64().unwrap_or(0.0),
            r["errors"]
        ));
    }
    if !audits.is_empty() {
        out.push('\n');
        out.push_str(&audit::table(&audits));
    }
    if let Some(c) = &cold {
        out.push_str(&format!(
            "\ncold start on {} tools: import {:.1} s; a replica with an empty directory answers after {:.1} s (peak {} MiB), with its index current after {:.1} s (peak {} MiB)\n",
            c["tools"], c["import_s"].as_f64().unwrap_or(0.0),
            c["empty_s"].as_f64().unwrap_or(0.0), c["empty_peak_mib"],
            c["warm_s"].as_f64().unwrap_or(0.0), c["warm_peak_mib"]
        ));
    }
    crate::emit(out.trim_end())
}

/// Runs `sql` on the server of `url` (tokio-postgres, the catalog store's client).
async fn admin_sql(url: &str, sql: &str) -> Result<()> {
    let (client, connection) = tokio::time::timeout(
        Duration::from_secs(30),
        tokio_postgres::connect(url, tokio_postgres::NoTls),
    )
    .await
    .context("connecting to PostgreSQL: no answer within 30 s")?
    .context("connecting to PostgreSQL")?;
    let task = tokio::spawn(connection);
    let result = client.batch_execute(sql).await;
    drop(client);
    let _ = task.await;
    result.with_context(|| format!("running `{sql}`"))
}

/// `toolscout --store URL --catalog DIR serve` on a free loopback port; its address.
pub(crate) fn start(url: &str, dir: &Path, target: &Target) -> Result<(Server, String)> {
    let mut cmd = target.command();
    cmd.arg("--store").arg(url).arg("--catalog").arg(dir);
    if target.words_only {
        cmd.arg("--words-only");
    }
    cmd.args(["serve", "--addr", "127.0.0.1:0", "--token", TOKEN]);
    crate::harness::spawn_serving(cmd)
}

/// Reads replica `index`'s event feed, sending each name announced as added with when.
async fn follow_feed(
    client: reqwest::Client,
    addr: String,
    index: usize,
    tx: mpsc::UnboundedSender<(usize, String, Instant)>,
) {
    let Ok(mut response) = client
        .get(format!("http://{addr}/api/v1/events"))
        .send()
        .await
    else {
        return;
    };
    let mut buf = String::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let now = Instant::now();
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            for data in block.lines().filter_map(|l| l.strip_prefix("data:")) {
                let Ok(v) = serde_json::from_str::<Value>(data.trim()) else {
                    continue;
                };
                for name in v["added"].as_array().into_iter().flatten() {
                    if let Some(n) = name.as_str() {
                        let _ = tx.send((index, n.to_owned(), now));
                    }
                }
            }
        }
    }
}

fn tool_body(name: &str) -> Value {
    json!({
        "name": name,
        "description": format!("Benchmark tool {name}: reports the tide height at a harbour."),
        "type": "http",
        "argSchema": {"type": "object", "properties": {"harbour": {"type": "string"}}, "required": ["harbour"]},
        "impl": {"method": "GET", "urlTemplate": "https://api.example.com/tide?h=${harbour}"}
    })
}

pub(crate) async fn put_tool(
    client: &reqwest::Client,
    addr: &str,
    bundle: uuid::Uuid,
    name: &str,
) -> Result<(), String> {
    let r = client
        .put(format!(
            "http://{addr}/tools/bundles/{bundle}/tools/{}/version/1",
            name.replace('_', "-")
        ))
        .bearer_auth(TOKEN)
        .json(&tool_body(name))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if r.status().is_success() {
        Ok(())
    } else {
        Err(format!(
            "{}: {}",
            r.status(),
            r.text().await.unwrap_or_default()
        ))
    }
}

/// A GET that must answer 2xx.
async fn get_ok(client: &reqwest::Client, url: String) -> Result<(), String> {
    match client.get(&url).send().await {
        Ok(r) if r.status().is_success() => Ok(()),
        Ok(r) => Err(format!("GET {url}: {}", r.status())),
        Err(e) => Err(format!("GET {url}: {e}")),
    }
}

async fn run_k(k: usize, url: &str, args: &ReplicasArgs, target: &Target) -> Result<Value> {
    let dirs: Vec<tempfile::TempDir> = (0..k)
        .map(|_| tempfile::tempdir())
        .collect::<std::io::Result<_>>()?;
    let mut servers = Vec::new();
    let mut addrs = Vec::new();
    for d in &dirs {
        let (s, a) = start(url, d.path(), target)?;
        servers.push(s);
        addrs.push(a);
    }
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()?;
    let streams = reqwest::Client::new();
    let bundle = uuid::Uuid::now_v7();
    let r = client
        .put(format!("http://{}/tools/bundles/{bundle}", addrs[0]))
        .bearer_auth(TOKEN)
        .json(&json!({"slug": format!("bench-k{k}-{}", bundle.simple())}))
        .send()
        .await?;
    if !r.status().is_success() {
        bail!(
            "creating the bundle: {}",
            r.text().await.unwrap_or_default()
        );
    }
    let (tx, mut rx) = mpsc::unbounded_channel();
    let feeds: Vec<_> = addrs
        .iter()
        .enumerate()
        .map(|(i, a)| tokio::spawn(follow_feed(streams.clone(), a.clone(), i, tx.clone())))
        .collect();
    // Every feed is open before the first write (its `ready` event is read first).
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut lags = Vec::new();
    let mut seen: HashMap<String, Vec<(usize, Instant)>> = HashMap::new();
    let mut last = String::new();
    for w in 0..args.writes {
        let name = format!("bench_k{k}_w{w}");
        let target = w % k;
        let started = Instant::now();
        put_tool(&client, &addrs[target], bundle, &name)
            .await
            .map_err(|e| anyhow::anyhow!("write {w}: {e}"))?;
        let others: Vec<usize> = if k == 1 {
            vec![0]
        } else {
            (0..k).filter(|j| *j != target).collect()
        };
        let deadline = started + Duration::from_secs(30);
        loop {
            let have = seen
                .get(&name)
                .map_or(0, |v| v.iter().filter(|(j, _)| others.contains(j)).count());
            if have >= others.len() {
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, rx.recv()).await {
                Ok(Some((j, n, at))) => seen.entry(n).or_default().push((j, at)),
                _ => bail!("write {w} ({name}) was not announced by every replica within 30 s"),
            }
        }
        for (j, at) in seen.remove(&name).unwrap_or_default() {
            if others.contains(&j) {
                lags.push(at.saturating_duration_since(started).as_secs_f64() * 1000.0);
            }
        }
        last = name;
    }
    // The last write is a search hit on every replica.
    for a in &addrs {
        let hits: Value = client
            .get(format!("http://{a}/tools/tools/search?q={last}"))
            .send()
            .await?
            .json()
            .await?;
        if hits["items"][0]["displayName"] != json!(last) {
            bail!("{last} is not the first search hit on {a}: {hits}");
        }
    }
    lags.sort_by(f64::total_cmp);
    let load = mixed_load(&addrs, bundle, k, args).await;
    for f in feeds {
        f.abort();
    }
    let peak = servers
        .iter()
        .filter_map(|s| memory(s.pid()).map(|(_, hwm)| hwm))
        .max()
        .unwrap_or(0);
    drop(servers);
    Ok(json!({
        "replicas": k,
        "writes": args.writes,
        "lag_ms_p50": (pct(&lags, 0.5) * 10.0).round() / 10.0,
        "lag_ms_p99": (pct(&lags, 0.99) * 10.0).round() / 10.0,
        "lag_samples": lags.len(),
        "requests_per_s": load.0,
        "latency_ms_p99": load.1,
        "errors": load.2,
        "peak_rss_mib_per_replica": peak / 1024,
    }))
}

/// `--clients` clients for `--seconds`: 90 % search, 8 % manifest pages, 2 % writes,
/// spread over the replicas. Requests/s, p99 in ms, errors.
async fn mixed_load(
    addrs: &[String],
    bundle: uuid::Uuid,
    k: usize,
    args: &ReplicasArgs,
) -> (f64, f64, u64) {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap_or_default();
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let started = Instant::now();
    let tasks: Vec<_> = (0..args.clients.max(1))
        .map(|c| {
            let (client, addrs) = (client.clone(), addrs.to_vec());
            tokio::spawn(async move {
                let (mut lat, mut errors, mut first) = (Vec::new(), 0u64, None::<String>);
                let mut i = 0usize;
                let queries = [
                    "tide height",
                    "harbour",
                    "bench tool",
                    "read a file",
                    "weather",
                ];
                while Instant::now() < deadline {
                    let addr = &addrs[(c + i) % addrs.len()];
                    let t = Instant::now();
                    let got: Result<(), String> = match i % 50 {
                        0 => put_tool(&client, addr, bundle, &format!("load_k{k}_c{c}_i{i}"))
                            .await
                            .map_err(|e| format!("PUT a tool: {e}")),
                        1..=4 => {
                            get_ok(&client, format!("http://{addr}/api/v1/tools?limit=20")).await
                        }
                        _ => {
                            get_ok(
                                &client,
                                format!(
                                    "http://{addr}/tools/tools/search?q={}",
                                    queries[i % queries.len()]
                                ),
                            )
                            .await
                        }
                    };
                    lat.push(t.elapsed().as_secs_f64() * 1000.0);
                    if let Err(e) = got {
                        errors += 1;
                        first.get_or_insert(e);
                    }
                    i += 1;
                }
                (lat, errors, first)
            })
        })
        .collect();
    let (mut all, mut errors) = (Vec::new(), 0);
    for t in tasks {
        if let Ok((lat, e, first)) = t.await {
            all.extend(lat);
            errors += e;
            if let Some(first) = first {
                eprintln!("a request of the mixed load failed: {first}");
            }
        }
    }
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    all.sort_by(f64::total_cmp);
    (
        (all.len() as f64 / secs).round(),
        (pct(&all, 0.99) * 10.0).round() / 10.0,
        errors,
    )
}

/// The cold start on the tools of `file`: import, a replica's first start, its second.
async fn cold_start(url: &str, file: &Path, target: &Target) -> Result<Value> {
    let exe = target.exe();
    let import_dir = tempfile::tempdir()?;
    eprintln!("importing {} into the database…", file.display());
    let started = Instant::now();
    let out = Command::new(&exe)
        .arg("--store")
        .arg(url)
        .arg("--catalog")
        .arg(import_dir.path())
        .arg("--words-only")
        .args(["import", "jsonl"])
        .arg(file)
        .args(["--bundle", "cold"])
        .output()
        .context("running the import")?;
    if !out.status.success() {
        bail!(
            "the import failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let import_s = started.elapsed().as_secs_f64();
    let tools = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    let dir = tempfile::tempdir()?;
    let client = reqwest::Client::new();
    let mut times = Vec::new();
    for round in ["empty", "warm"] {
        eprintln!("starting a replica ({round} directory)…");
        let started = Instant::now();
        let (server, addr) = start(url, dir.path(), target)?;
        loop {
            if client
                .get(format!("http://{addr}/api/v1/tools?limit=1"))
                .send()
                .await
                .is_ok_and(|r| r.status().is_success())
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let took = started.elapsed().as_secs_f64();
        let peak = memory(server.pid()).map_or(0, |(_, hwm)| hwm / 1024);
        times.push((took, peak));
        drop(server);
    }
    Ok(json!({
        "tools": tools,
        "import_s": (import_s * 10.0).round() / 10.0,
        "empty_s": (times[0].0 * 10.0).round() / 10.0,
        "empty_peak_mib": times[0].1,
        "warm_s": (times[1].0 * 10.0).round() / 10.0,
        "warm_peak_mib": times[1].1,
    }))
}
