//! `toolscout bench search`: how fast the index builds, reopens and answers, next to a
//! naive scan that scores every tool name with strsim; `bench serve` is in
//! [`super::bench_serve`].

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::Subcommand;
use serde_json::json;
use toolscout_search::{SearchIndex, SearchQuery};

use super::eval::{build_index, read_query_texts, read_tools, spread};

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
    /// A load test of `serve`: N clients on loopback mixing the manifest, tools/search
    /// and tools/call; requests/s, p50/p99, errors, the server's memory.
    Serve(super::bench_serve::ServeArgs),
    /// What a large catalog costs: import, each CLI command (time and peak memory),
    /// `serve` until it answers, the manifest plain and gzip, a search once it is up.
    Scale(super::bench_scale::ScaleArgs),
    /// Runs `toolscout ARGS…` and prints its time and peak memory (used by `bench scale`).
    #[command(hide = true)]
    Peak(super::bench_scale::PeakArgs),
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
        What::Serve(a) => super::bench_serve::run(a, global, json_out),
        What::Scale(a) => super::bench_scale::run(a, global, json_out),
        What::Peak(a) => super::bench_scale::peak(a),
    }
}

/// A small deterministic generator (xorshift), so every run times the same queries.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % (n.max(1) as u64)) as usize
    }
}

/// The realistic mix: real query texts, name prefixes and misspelled names.
fn query_mix(names: &[String], texts: Vec<String>, per_kind: usize) -> Vec<String> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut mix = spread(texts, per_kind);
    for _ in 0..per_kind {
        let name: Vec<char> = names[rng.next(names.len())].chars().collect();
        let len = (name.len() * 3 / 5).clamp(1, name.len());
        mix.push(name[..len].iter().collect());
    }
    for _ in 0..per_kind {
        let mut name: Vec<char> = names[rng.next(names.len())].chars().collect();
        let i = rng.next(name.len());
        match rng.next(3) {
            0 if name.len() > 2 => {
                name.remove(i);
            }
            1 if i + 1 < name.len() => name.swap(i, i + 1),
            _ => name[i] = 'x',
        }
        mix.push(name.into_iter().collect());
    }
    mix
}

/// Scores every name with Jaro–Winkler and keeps the best 10: what a catalog without an
/// index would do.
fn naive_scan(names_lower: &[String], query: &str) -> Vec<usize> {
    let q = query.to_lowercase();
    let mut top: Vec<(f64, usize)> = Vec::with_capacity(11);
    for (i, n) in names_lower.iter().enumerate() {
        let s = strsim::jaro_winkler(&q, n);
        if top.len() < 10 || s > top[top.len() - 1].0 {
            let at = top.partition_point(|(t, _)| *t >= s);
            top.insert(at, (s, i));
            top.truncate(10);
        }
    }
    top.into_iter().map(|(_, i)| i).collect()
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64() * 1e6
}

fn search(a: &SearchArgs, global: &super::context::Global, json_out: bool) -> Result<()> {
    // With a sentence encoder, query texts are embedded and ranked by meaning too (the
    // tools' vectors come from the vector cache once a run has made them).
    let embedder = global.meaning.embedder(None)?;
    let open = |dir: &std::path::Path| -> Result<SearchIndex> {
        let index = SearchIndex::open_or_create(dir)?;
        Ok(match &embedder {
            Some(e) => index.with_embedder(e.clone()),
            None => index,
        })
    };
    let started = Instant::now();
    let tools = read_tools(&a.tools)?;
    if tools.is_empty() {
        bail!("{} holds no tools", a.tools.display());
    }
    let load_s = started.elapsed().as_secs_f64();
    let texts = match &a.queries {
        Some(q) => read_query_texts(q)?,
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
    let started = Instant::now();
    let index = open(&dir)?;
    build_index(&index, &tools)?;
    let build_s = started.elapsed().as_secs_f64();
    drop(index);

    let started = Instant::now();
    let index = open(&dir)?;
    let reopened = index.len();
    let reopen_ms = started.elapsed().as_secs_f64() * 1e3;
    if reopened != tools.len() as u64 {
        bail!(
            "reopened index holds {reopened} tools, expected {}",
            tools.len()
        );
    }

    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    let mix = query_mix(&names, texts, a.per_kind);
    let twins = (a.twins > 0.0).then_some(a.twins);
    let queries: Vec<SearchQuery> = mix
        .iter()
        .map(|q| SearchQuery::new(q.as_str()).with_twins(twins))
        .collect();
    for q in queries.iter().take(200) {
        index.search(q)?;
    }
    let mut times = Vec::with_capacity(queries.len());
    for q in &queries {
        let t = Instant::now();
        let found = index.search(q)?;
        times.push(t.elapsed());
        std::hint::black_box(found);
    }
    let per_kind: Vec<(f64, f64)> = times
        .chunks(a.per_kind.max(1))
        .map(|c| {
            let mut c = c.to_vec();
            c.sort();
            (percentile(&c, 0.5), percentile(&c, 0.99))
        })
        .collect();
    times.sort();
    let (p50, p99) = (percentile(&times, 0.5), percentile(&times, 0.99));

    let names_lower: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
    let mut naive_times: Vec<Duration> = spread(mix.clone(), a.naive)
        .iter()
        .map(|q| {
            let t = Instant::now();
            std::hint::black_box(naive_scan(&names_lower, q));
            t.elapsed()
        })
        .collect();
    naive_times.sort();
    let naive_p50 = percentile(&naive_times, 0.5);
    let speedup = if p50 > 0.0 { naive_p50 / p50 } else { 0.0 };
    let index_model = index.embedder_model().map(str::to_owned);
    drop(index);
    if temp {
        let _ = std::fs::remove_dir_all(&dir);
    }

    if json_out {
        let r = |x: f64, d: f64| (x * d).round() / d;
        println!(
            "{}",
            json!({"tools": tools.len(), "build_s": r(build_s, 1000.0), "reopen_ms": r(reopen_ms, 10.0),
                   "p50_us": r(p50, 10.0), "p99_us": r(p99, 10.0), "naive_p50_us": r(naive_p50, 10.0),
                   "speedup": r(speedup, 10.0), "model": index_model,
                   "per_kind": per_kind.iter().map(|(p50, p99)| json!({"p50_us": r(*p50, 10.0), "p99_us": r(*p99, 10.0)})).collect::<Vec<_>>()})
        );
        return Ok(());
    }
    println!("tools            {} (read in {load_s:.2} s)", tools.len());
    match &index_model {
        Some(m) => println!(
            "ranking          words and meaning ({m}); twins grouped at {:?}",
            twins
        ),
        None => println!("ranking          words only"),
    }
    println!("build            {build_s:.3} s (index on disk, committed)");
    println!("reopen           {reopen_ms:.1} ms");
    println!(
        "query p50 / p99  {p50:.0} µs / {p99:.0} µs over {} queries (texts, prefixes, misspelled names)",
        times.len()
    );
    for ((p50, p99), kind) in
        per_kind
            .iter()
            .zip(["query texts", "name prefixes", "misspelled names"])
    {
        println!("  {kind:<15}{p50:.0} µs / {p99:.0} µs");
    }
    println!(
        "naive scan p50   {naive_p50:.0} µs over {} queries (strsim on every name)",
        naive_times.len()
    );
    println!("speedup          {speedup:.0}×");
    Ok(())
}
