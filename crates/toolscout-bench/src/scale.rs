//! `toolscout-bench scale`: what a large catalog costs a user, step by step. Imports a
//! JSONL catalog into a fresh directory with the `toolscout` binary itself, then times
//! each command a user runs (and its peak memory, measured by a probe process that waits
//! for it), then starts `serve` and times how long until it answers, its memory, the
//! manifest plain and compressed, and a search once it is up.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use serde_json::{Value, json};

use crate::Target;

/// Arguments of `toolscout-bench scale`.
#[derive(Debug, clap::Args)]
pub(crate) struct ScaleArgs {
    /// Tools, JSONL (`.jsonl` or `.jsonl.gz`, one `{name, description, parameters}` a line).
    #[arg(long)]
    tools: PathBuf,
    /// The search timed (by the CLI, then by the server).
    #[arg(long, default_value = "send an sms message")]
    query: String,
    /// Where to make the catalog (default: a fresh folder under the temp dir, removed
    /// afterwards). It must not exist yet or be empty.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Searches timed against the running server.
    #[arg(long, default_value_t = 50)]
    searches: usize,
}

/// Arguments of the hidden `peak`: runs `toolscout ARGS…` and prints its time and
/// peak memory as JSON.
#[derive(Debug, clap::Args)]
pub(crate) struct PeakArgs {
    /// The arguments, after `--`.
    #[arg(last = true, required = true)]
    args: Vec<String>,
}

/// A step's time in seconds and peak memory in KiB, as [`step`] measures them.
type Measured = (f64, Option<u64>);

/// One measured step.
struct Row {
    step: String,
    seconds: f64,
    /// Peak resident memory, KiB (`None` where it cannot be measured).
    peak_kib: Option<u64>,
    note: String,
}

/// Runs `toolscout ARGS` (the target's binary), waits, and prints `{seconds, peak_kib,
/// status}`: the peak is the largest resident size of this process's children, that is
/// of that one command (Unix `getrusage`).
pub(crate) fn peak(args: &PeakArgs, target: &Target) -> Result<()> {
    let exe = target.exe();
    let start = Instant::now();
    let status = Command::new(&exe)
        .args(&args.args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .with_context(|| format!("running {}", exe.display()))?;
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{}",
        json!({"seconds": seconds, "peak_kib": children_peak_kib(), "status": status.code()})
    );
    Ok(())
}

#[cfg(unix)]
fn children_peak_kib() -> Option<u64> {
    use nix::sys::resource::{UsageWho, getrusage};
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).ok()?;
    // Linux reports KiB; macOS reports bytes.
    let max = u64::try_from(usage.max_rss()).ok()?;
    Some(if cfg!(target_os = "macos") {
        max / 1024
    } else {
        max
    })
}

#[cfg(not(unix))]
fn children_peak_kib() -> Option<u64> {
    None
}

pub(crate) fn run(args: &ScaleArgs, target: &Target, json_out: bool) -> Result<()> {
    if !args.tools.exists() {
        bail!("{}: no such file", args.tools.display());
    }
    // A fresh directory of this user's own, removed afterwards, unless one is named.
    let temp = match &args.dir {
        Some(_) => None,
        None => Some(
            tempfile::Builder::new()
                .prefix("toolscout-scale-")
                .tempdir()?,
        ),
    };
    let dir = match (&args.dir, &temp) {
        (Some(d), _) => d.clone(),
        (None, Some(t)) => t.path().to_path_buf(),
        (None, None) => bail!("no directory to import into"),
    };
    if dir.exists() && std::fs::read_dir(&dir)?.next().is_some() {
        bail!(
            "{} is not empty: toolscout-bench scale imports into a fresh catalog",
            dir.display()
        );
    }
    let result = measure(args, target, &dir);
    drop(temp);
    let rows = result?;
    print_rows(&rows, json_out);
    Ok(())
}

/// The global flags a child command is run with: this catalog, and the same ranking.
fn child_args(target: &Target, dir: &Path) -> Vec<String> {
    let mut out = vec![
        "--catalog".to_owned(),
        dir.join("catalog").display().to_string(),
        "--workspace".to_owned(),
        dir.join("workspace").display().to_string(),
    ];
    out.extend(target.ranking_args());
    out
}

/// Runs one CLI step through the probe, `toolscout-bench peak` (this binary).
fn step(target: &Target, dir: &Path, args: &[&str]) -> Result<Measured> {
    let probe = std::env::current_exe().context("finding the toolscout-bench binary")?;
    let mut all = child_args(target, dir);
    all.extend(args.iter().map(|a| (*a).to_owned()));
    let out = Command::new(probe)
        .arg("--toolscout")
        .arg(target.exe())
        .args(["peak", "--"])
        .args(&all)
        .stderr(Stdio::inherit())
        .output()
        .context("running the probe")?;
    let v: Value = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("reading the probe's report of `{}`", args.join(" ")))?;
    if v["status"] != json!(0) {
        bail!(
            "`toolscout {}` failed (exit {})",
            args.join(" "),
            v["status"]
        );
    }
    Ok((v["seconds"].as_f64().unwrap_or(0.0), v["peak_kib"].as_u64()))
}

fn measure(args: &ScaleArgs, target: &Target, dir: &Path) -> Result<Vec<Row>> {
    std::fs::create_dir_all(dir.join("workspace"))?;
    let mut rows = Vec::new();
    let mut row = |step: &str, (seconds, peak_kib): Measured, note: String| {
        if seconds > 0.0 {
            eprintln!("  {step}: {seconds:.2} s");
        }
        rows.push(Row {
            step: step.to_owned(),
            seconds,
            peak_kib,
            note,
        });
    };
    let file = args.tools.display().to_string();
    let imported = step(
        target,
        dir,
        &["import", "jsonl", &file, "--bundle", "scale"],
    )?;
    let catalog = toolscout_catalog::Catalog::open(dir.join("catalog"), &[])
        .context("opening the imported catalog")?;
    let tools = catalog.len();
    let first = catalog
        .heads()
        .into_iter()
        .filter(|h| !h.is_built_in)
        .map(|h| h.name)
        .min()
        .context("the file held no tools")?;
    drop(catalog);
    let disk = dir_size(&dir.join("catalog"));
    row(
        "import",
        imported,
        format!("{tools} tools, {} MB on disk", disk / 1_000_000),
    );
    let q = args.query.as_str();
    row(
        "list --limit 20",
        step(target, dir, &["list", "--limit", "20"])?,
        String::new(),
    );
    row(
        "describe",
        step(target, dir, &["describe", &first])?,
        first.clone(),
    );
    row("identity", step(target, dir, &["identity"])?, String::new());
    row(
        "call clock",
        step(target, dir, &["call", "clock", "--action", "now"])?,
        String::new(),
    );
    row(
        "search (first: builds the index)",
        step(target, dir, &["search", q])?,
        String::new(),
    );
    row(
        "search (index current)",
        step(target, dir, &["search", q])?,
        String::new(),
    );
    serve_rows(args, target, dir, &mut row)?;
    let index = dir_size(&dir.join("catalog").join("index"));
    row(
        "index on disk",
        (0.0, None),
        format!("{} MB", index / 1_000_000),
    );
    Ok(rows)
}

fn serve_rows(
    args: &ScaleArgs,
    target: &Target,
    dir: &Path,
    row: &mut dyn FnMut(&str, Measured, String),
) -> Result<()> {
    let mut served = target.clone();
    served.catalog = Some(dir.join("catalog"));
    served.workspace = Some(dir.join("workspace"));
    let token = uuid::Uuid::new_v4().simple().to_string();
    let start = Instant::now();
    let (server, addr) = crate::harness::start(&served, &token)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // Bodies as sent: the compressed manifest is measured compressed.
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .no_gzip()
        .build()?;
    runtime.block_on(async {
        let url = format!("http://{addr}/api/v1/tools?limit=1");
        client.get(&url).send().await?.error_for_status()?;
        Ok::<_, anyhow::Error>(())
    })?;
    let up = start.elapsed().as_secs_f64();
    let pid = server.pid();
    let (rss, hwm) = crate::harness::memory(pid).unwrap_or_default();
    row(
        "serve until it answers",
        (up, Some(hwm)),
        format!("{} MB resident", rss / 1024),
    );
    let manifest = |gzip: bool| {
        let client = client.clone();
        let url = format!("http://{addr}/api/v1/tools");
        async move {
            let mut req = client.get(&url);
            if gzip {
                req = req.header("accept-encoding", "gzip");
            }
            let start = Instant::now();
            let body = req.send().await?.error_for_status()?.bytes().await?;
            Ok::<_, anyhow::Error>((start.elapsed().as_secs_f64(), body.len()))
        }
    };
    let (plain_s, plain_len) = runtime.block_on(manifest(false))?;
    row(
        "GET /api/v1/tools",
        (plain_s, None),
        format!("{:.1} MB", plain_len as f64 / 1e6),
    );
    let (gz_s, gz_len) = runtime.block_on(manifest(true))?;
    row(
        "GET /api/v1/tools (gzip)",
        (gz_s, None),
        format!("{:.1} MB", gz_len as f64 / 1e6),
    );
    let mut latencies = Vec::with_capacity(args.searches);
    for i in 0..args.searches.max(1) {
        let body = json!({"jsonrpc": "2.0", "id": i, "method": "tools/search",
            "params": {"query": args.query}});
        let start = Instant::now();
        runtime.block_on(async {
            let reply: Value = client
                .post(format!("http://{addr}/rpc"))
                .bearer_auth(&token)
                .json(&body)
                .send()
                .await?
                .error_for_status()?
                .json()
                .await?;
            if reply.get("error").is_some() {
                bail!("tools/search failed: {}", reply["error"]);
            }
            Ok(())
        })?;
        latencies.push(start.elapsed());
    }
    latencies.sort();
    let p50 = latencies[latencies.len() / 2].as_secs_f64();
    let (_, hwm) = crate::harness::memory(pid).unwrap_or_default();
    row(
        "a search once the server is up (p50)",
        (p50, Some(hwm)),
        format!("{} searches", latencies.len()),
    );
    drop(server);
    Ok(())
}

fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path()),
            Ok(_) => e.metadata().map_or(0, |m| m.len()),
            Err(_) => 0,
        })
        .sum()
}

fn print_rows(rows: &[Row], json_out: bool) {
    if json_out {
        let v: Vec<Value> = rows
            .iter()
            .map(|r| {
                json!({"step": r.step, "seconds": r.seconds, "peak_mib": r.peak_kib.map(|k| k / 1024), "note": r.note})
            })
            .collect();
        println!("{}", json!({ "steps": v }));
        return;
    }
    println!("| step | time | peak memory | |");
    println!("|---|---|---|---|");
    for r in rows {
        let time = if r.seconds == 0.0 {
            String::new()
        } else if r.seconds < 1.0 {
            format!("{:.1} ms", r.seconds * 1e3)
        } else {
            format!("{:.2} s", r.seconds)
        };
        let peak = r
            .peak_kib
            .map_or_else(String::new, |k| format!("{} MB", k / 1024));
        println!("| {} | {time} | {peak} | {} |", r.step, r.note);
    }
}
