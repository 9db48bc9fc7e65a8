//! `toolscout bench search`: how fast the index builds, reopens and answers, next to a
//! naive scan that scores every tool name with strsim (`toolscout_eval::bench`, which
//! this module wires to the command line and prints). The load benches of the binary
//! (`serve`, `scale`, `replicas`) are not in it: they are `toolscout-bench`
//! (`crates/toolscout-bench`), which runs this binary from outside.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Result, bail};
use clap::Subcommand;
use serde_json::json;
use toolscout_eval::bench::SearchBench;

use super::eval::{IndexingBar, explain, read_tools};

/// `toolscout bench …`: measure speed.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Subcommand)]
enum What {
    /// Index build, reopen and query latency, vs. a naive strsim scan.
    Search(SearchArgs),
}

#[derive(Debug, clap::Args)]
struct SearchArgs {
    /// Tools, JSONL (`.jsonl` or `.jsonl.gz`).
    #[arg(long)]
    tools: PathBuf,
    /// Real query texts, JSONL with a `query` field (without it, only name prefixes and
    /// misspelled names are timed).
    #[arg(long)]
    queries: Option<PathBuf>,
    /// Where to build the on-disk index (default: a fresh folder under the temp dir,
    /// removed afterwards).
    #[arg(long)]
    index_dir: Option<PathBuf>,
    /// Queries of each kind (query texts, name prefixes, misspelled names).
    #[arg(long, default_value_t = 400)]
    per_kind: usize,
    /// Queries timed with the naive scan (it is slow), spread over the same mix.
    #[arg(long, default_value_t = 150)]
    naive: usize,
    /// Group near-twins at this cosine, as `discover_tools` does (with a sentence
    /// encoder; 0 lists every tool).
    #[arg(long, default_value_t = toolscout_search::DEFAULT_TWIN_SIMILARITY)]
    twins: f32,
}

pub(crate) fn run(args: &Args, global: &super::context::Global, json_out: bool) -> Result<()> {
    match &args.what {
        What::Search(a) => search(a, global, json_out),
    }
}

fn search(a: &SearchArgs, global: &super::context::Global, json_out: bool) -> Result<()> {
    // With a sentence encoder, query texts are embedded and ranked by meaning too (the
    // tools' vectors come from the vector cache once a run has made them).
    let mut bench = SearchBench::default()
        .with_per_kind(a.per_kind)
        .with_naive(a.naive)
        .with_twins((a.twins > 0.0).then_some(a.twins));
    if let Some(e) = global.meaning.embedder(None)? {
        bench = bench.with_embedder(e);
    }
    let started = Instant::now();
    let tools = read_tools(&a.tools)?;
    if tools.is_empty() {
        bail!("{} holds no tools", a.tools.display());
    }
    let load_s = started.elapsed().as_secs_f64();
    let texts = match &a.queries {
        Some(q) => toolscout_eval::read::query_texts(q).map_err(explain)?,
        None => Vec::new(),
    };

    let temp = a.index_dir.is_none();
    let dir = a.index_dir.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("toolscout-bench-{}", std::process::id()))
    });
    if dir.exists() && std::fs::read_dir(&dir)?.next().is_some() {
        bail!(
            "{} is not empty: name a new folder for the benchmark index",
            dir.display()
        );
    }
    let bar = IndexingBar::new(tools.len());
    let report = bench.run(&dir, &tools, texts, &mut |n| bar.set(n));
    bar.finish();
    if temp {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let report = report?;

    if json_out {
        let r = |x: f64, d: f64| (x * d).round() / d;
        println!(
            "{}",
            json!({"tools": report.tools, "build_s": r(report.build_s, 1000.0), "reopen_ms": r(report.reopen_ms, 10.0),
                   "p50_us": r(report.all.p50_us, 10.0), "p99_us": r(report.all.p99_us, 10.0), "naive_p50_us": r(report.naive_p50_us, 10.0),
                   "speedup": r(report.speedup, 10.0), "model": report.model,
                   "per_kind": report.per_kind.iter().map(|k| json!({"p50_us": r(k.p50_us, 10.0), "p99_us": r(k.p99_us, 10.0)})).collect::<Vec<_>>()})
        );
        return Ok(());
    }
    println!("tools            {} (read in {load_s:.2} s)", report.tools);
    match &report.model {
        Some(m) => println!(
            "ranking          words and meaning ({m}); twins grouped at {:?}",
            report.twins
        ),
        None => println!("ranking          words only"),
    }
    println!(
        "build            {:.3} s (index on disk, committed)",
        report.build_s
    );
    println!("reopen           {:.1} ms", report.reopen_ms);
    println!(
        "query p50 / p99  {:.0} µs / {:.0} µs over {} queries (texts, prefixes, misspelled names)",
        report.all.p50_us, report.all.p99_us, report.queries
    );
    for (k, kind) in
        report
            .per_kind
            .iter()
            .zip(["query texts", "name prefixes", "misspelled names"])
    {
        println!("  {kind:<15}{:.0} µs / {:.0} µs", k.p50_us, k.p99_us);
    }
    println!(
        "naive scan p50   {:.0} µs over {} queries (strsim on every name)",
        report.naive_p50_us, report.naive_queries
    );
    println!("speedup          {:.0}×", report.speedup);
    Ok(())
}
