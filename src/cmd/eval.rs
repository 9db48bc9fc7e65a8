//! `toolscout eval search`: recall@1/5/10 and MRR of the search ranking on a labelled
//! query set, next to a plain BM25 computed in the same run.

use std::collections::HashSet;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use serde_json::{Value, json};
use toolscout_search::baseline::Bm25;
use toolscout_search::{IndexDoc, SearchIndex, SearchQuery};

use super::context::Global;
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::jsonl::{self, LineBundle};
use toolscout_spec::name::{sanitize_name, slug_from_name};

/// `toolscout eval …`: measure toolscout against labelled data.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Subcommand)]
enum What {
    /// Search quality: recall@1/5/10 and MRR, toolscout vs. a plain BM25.
    Search(SearchArgs),
    /// Agent success: does a model call the right tool, browsing or with every schema up front?
    Agent(super::eval_agent::AgentArgs),
    /// What the agent's retrieve step offers, without a model: how often the right tool
    /// is retrieved with near-twins dropped, and how sure retrieval is with and without a
    /// right tool.
    Retrieve(super::eval_retrieve::RetrieveArgs),
}

#[derive(Debug, clap::Args)]
struct SearchArgs {
    /// Tools, JSONL (`.jsonl` or `.jsonl.gz`), one `{name, description, parameters}` a line.
    #[arg(long)]
    tools: PathBuf,
    /// Queries, JSONL with `query` and `expected` (default: `queries.jsonl` beside the tools).
    #[arg(long)]
    queries: Option<PathBuf>,
    /// More tools to add as distractors (names already present are skipped).
    #[arg(long)]
    distractors: Option<PathBuf>,
    /// Run only this many queries, spread evenly over the file (for quick tuning runs).
    #[arg(long)]
    limit: Option<usize>,
    /// Also print the figures per query `source`.
    #[arg(long)]
    by_source: bool,
    /// Print this many queries whose expected tool is not in toolscout's top 5, with the
    /// rank each expected tool got and the five tools ranked first.
    #[arg(long, default_value_t = 0)]
    misses: usize,
    /// Also measure the ranking with near-twins grouped at this cosine (a hit and the
    /// twins listed with it count as one position; needs a sentence encoder); 0 skips it.
    #[arg(long, default_value_t = toolscout_search::DEFAULT_TWIN_SIMILARITY)]
    twins: f32,
}

pub(crate) fn run(args: &Args, global: &Global, json_out: bool) -> Result<()> {
    match &args.what {
        What::Search(a) => search(a, global, json_out),
        What::Agent(a) => super::eval_agent::run(a, global, json_out),
        What::Retrieve(a) => super::eval_retrieve::run(a, global, json_out),
    }
}

/// A labelled query.
struct Query {
    text: String,
    expected: Vec<String>,
    source: String,
}

/// Reads a JSONL file, gzip-compressed when its name ends in `.gz`.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    if !path.exists() {
        bail!(
            "{} not found (pass your evaluation files with --tools and --queries; the README says what they hold)",
            path.display()
        );
    }
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut text = String::new();
    if path.extension().is_some_and(|e| e == "gz") {
        flate2::read::MultiGzDecoder::new(file)
            .read_to_string(&mut text)
            .with_context(|| format!("decompressing {}", path.display()))?;
    } else {
        std::io::BufReader::new(file)
            .read_to_string(&mut text)
            .with_context(|| format!("reading {}", path.display()))?;
    }
    Ok(text)
}

/// Reads tools; bad lines are reported on stderr and skipped.
pub(crate) fn read_tools(path: &Path) -> Result<Vec<ToolSpec>> {
    Ok(read_tool_lines(path)?.specs)
}

/// The tools of a JSONL file and the bundle each line names (the API or server it
/// belongs to), side by side.
pub(crate) struct ToolLines {
    pub(crate) specs: Vec<ToolSpec>,
    pub(crate) bundles: Vec<Option<LineBundle>>,
}

impl ToolLines {
    /// Appends `other`'s tools whose names are not taken.
    pub(crate) fn extend_new(&mut self, other: ToolLines) {
        let names: HashSet<String> = self.specs.iter().map(|t| t.name.to_string()).collect();
        for (spec, bundle) in other.specs.into_iter().zip(other.bundles) {
            if !names.contains(spec.name.as_str()) {
                self.specs.push(spec);
                self.bundles.push(bundle);
            }
        }
    }
}

/// Reads tools with their bundles; bad lines are reported on stderr and skipped.
pub(crate) fn read_tool_lines(path: &Path) -> Result<ToolLines> {
    let text = read_text(path)?;
    let mut lines = ToolLines {
        specs: Vec::new(),
        bundles: Vec::new(),
    };
    let mut bad = 0usize;
    let mut first_bad = None;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let read = serde_json::from_str::<Value>(line)
            .map_err(|e| e.to_string())
            .and_then(|v| {
                let spec = jsonl::from_value(&v).map_err(|e| e.to_string())?;
                Ok((spec, jsonl::bundle_of(&v)))
            });
        match read {
            Ok((spec, bundle)) => {
                lines.specs.push(spec);
                lines.bundles.push(bundle);
            }
            Err(e) => {
                bad += 1;
                first_bad.get_or_insert(format!("line {}: {e}", i + 1));
            }
        }
    }
    if let Some(first) = first_bad {
        eprintln!(
            "warning: {}: {bad} bad line(s) skipped, first: {first}",
            path.display(),
        );
    }
    Ok(lines)
}

/// The `query` texts of a JSONL file.
pub(crate) fn read_query_texts(path: &Path) -> Result<Vec<String>> {
    let text = read_text(path)?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v.get("query").and_then(Value::as_str).map(str::to_owned))
        .collect())
}

fn read_queries(path: &Path) -> Result<Vec<Query>> {
    let text = read_text(path)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .with_context(|| format!("{} line {}", path.display(), i + 1))?;
        let expected: Vec<String> = v
            .get("expected")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(sanitize_name)
            .collect();
        let Some(text) = v.get("query").and_then(Value::as_str) else {
            continue;
        };
        if expected.is_empty() {
            continue;
        }
        out.push(Query {
            text: text.to_owned(),
            expected,
            source: v
                .get("source")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        });
    }
    Ok(out)
}

/// Keeps `n` items spread evenly over the list.
pub(crate) fn spread<T>(items: Vec<T>, n: usize) -> Vec<T> {
    let len = items.len();
    if n == 0 || n >= len {
        return items;
    }
    items
        .into_iter()
        .enumerate()
        .filter(|(i, _)| (i * n) / len != ((i + 1) * n) / len)
        .map(|(_, t)| t)
        .collect()
}

/// Indexes tools in memory, with a progress bar on a terminal for large catalogs.
pub(crate) fn build_index(index: &SearchIndex, tools: &[ToolSpec]) -> Result<()> {
    build_index_in(index, tools, &[])
}

/// [`build_index`] with each tool's bundle (`bundles[i]` for `tools[i]`; missing ones
/// have none), indexed as the catalog indexes a bundle's tools.
pub(crate) fn build_index_in(
    index: &SearchIndex,
    tools: &[ToolSpec],
    bundles: &[Option<LineBundle>],
) -> Result<()> {
    let slugs: Vec<Option<String>> = bundles
        .iter()
        .map(|b| b.as_ref().map(|b| slug_from_name(&b.name)))
        .collect();
    let bar = (tools.len() >= 10_000 && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new(tools.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "indexing {bar:40} {pos}/{len} tools {elapsed}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    let docs = tools.iter().enumerate().map(|(i, spec)| {
        let bundle = bundles.get(i).and_then(Option::as_ref);
        IndexDoc::new(spec)
            .with_bundle(slugs.get(i).and_then(Option::as_deref))
            .with_bundle_text(
                bundle.map(|b| b.name.as_str()),
                bundle.and_then(|b| b.description.as_deref()),
            )
    });
    index.extend(docs, &mut |n| {
        if let Some(b) = &bar {
            b.set_position(n);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(())
}

/// Sums of the metrics over queries.
#[derive(Default, Clone, Copy)]
struct Sums {
    n: usize,
    r1: f64,
    r5: f64,
    /// The sum of the squares of each query's recall@5, for its standard error.
    r5_sq: f64,
    r10: f64,
    mrr: f64,
}

impl Sums {
    /// Adds one query's figures; returns its recall@5.
    fn add(&mut self, ranked: &[&str], expected: &[String]) -> f64 {
        let rows: Vec<Vec<&str>> = ranked.iter().map(|r| vec![*r]).collect();
        self.add_rows(&rows, expected)
    }

    /// Adds one query's recall@1/5/10 and reciprocal rank over rows of tools (a hit and
    /// the near-twins shown with it), a row counting as one position; returns its
    /// recall@5.
    fn add_rows(&mut self, rows: &[Vec<&str>], expected: &[String]) -> f64 {
        let exp: HashSet<&str> = expected.iter().map(String::as_str).collect();
        let recall = |k: usize| {
            let found = rows
                .iter()
                .take(k)
                .flatten()
                .filter(|n| exp.contains(*n))
                .count();
            found as f64 / exp.len() as f64
        };
        self.n += 1;
        self.r1 += recall(1);
        let r5 = recall(5);
        self.r5 += r5;
        self.r5_sq += r5 * r5;
        self.r10 += recall(10);
        self.mrr += rows
            .iter()
            .position(|r| r.iter().any(|n| exp.contains(n)))
            .map_or(0.0, |i| 1.0 / (i + 1) as f64);
        r5
    }

    fn merge(&mut self, o: &Sums) {
        self.n += o.n;
        self.r1 += o.r1;
        self.r5 += o.r5;
        self.r5_sq += o.r5_sq;
        self.r10 += o.r10;
        self.mrr += o.mrr;
    }

    fn json(&self) -> Value {
        let n = self.n.max(1) as f64;
        let r = |x: f64| (x / n * 1000.0).round() / 1000.0;
        json!({"recall_at_1": r(self.r1), "recall_at_5": r(self.r5), "recall_at_10": r(self.r10), "mrr": r(self.mrr),
            "recall_at_5_margin_95": (self.r5_margin() * 1000.0).round() / 1000.0})
    }

    /// Half the width of recall@5's 95 % confidence interval over these queries (1.96
    /// standard errors of the mean of the per-query recalls).
    fn r5_margin(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as f64;
        let mean = self.r5 / n;
        let variance = (self.r5_sq / n - mean * mean).max(0.0);
        1.96 * (variance / n).sqrt()
    }

    fn line(&self, label: &str) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "{label:<28} {:>6} {:>6.3} {:>6.3} {:>6.3} {:>6.3}",
            self.n,
            self.r1 / n,
            self.r5 / n,
            self.r10 / n,
            self.mrr / n
        )
    }
}

/// The sums of one query source: toolscout's, BM25's and (with a model) words alone.
#[derive(Default, Clone)]
struct Row {
    source: String,
    toolscout: Sums,
    bm25: Sums,
    words: Sums,
    /// Hits with their near-twins, each hit and its twins counting as one position.
    grouped: Sums,
    /// How many names the first five grouped hits show, summed over queries.
    shown: usize,
    /// Query by query against words alone (with a model) and against BM25.
    vs_words: Paired,
    vs_bm25: Paired,
}

/// Two rankings compared on the same queries, at 5.
#[derive(Default, Clone, Copy)]
struct Paired {
    /// Queries where toolscout's recall@5 is the higher.
    better: usize,
    /// Queries where it is the lower.
    worse: usize,
}

impl Paired {
    fn add(&mut self, ours: f64, theirs: f64) {
        if ours > theirs {
            self.better += 1;
        } else if ours < theirs {
            self.worse += 1;
        }
    }

    fn merge(&mut self, o: &Paired) {
        self.better += o.better;
        self.worse += o.worse;
    }

    fn json(&self) -> Value {
        json!({"better": self.better, "worse": self.worse})
    }
}

impl Row {
    fn merge(&mut self, o: &Row) {
        self.toolscout.merge(&o.toolscout);
        self.bm25.merge(&o.bm25);
        self.words.merge(&o.words);
        self.grouped.merge(&o.grouped);
        self.shown += o.shown;
        self.vs_words.merge(&o.vs_words);
        self.vs_bm25.merge(&o.vs_bm25);
    }
}

/// The names the first five grouped hits show, on average.
fn shown_per_query(row: &Row) -> f64 {
    let per = row.shown as f64 / row.grouped.n.max(1) as f64;
    (per * 100.0).round() / 100.0
}

/// Per-source results.
type Tally = Vec<Row>;

fn tally_of<'a>(t: &'a mut Tally, source: &str) -> &'a mut Row {
    let i = match t.iter().position(|r| r.source == source) {
        Some(i) => i,
        None => {
            t.push(Row {
                source: source.to_owned(),
                ..Row::default()
            });
            t.len() - 1
        }
    };
    &mut t[i]
}

fn search(a: &SearchArgs, global: &Global, json_out: bool) -> Result<()> {
    let queries_path = a.queries.clone().unwrap_or_else(|| {
        a.tools
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join("queries.jsonl")
    });
    let mut lines = read_tool_lines(&a.tools)?;
    let mut queries = read_queries(&queries_path)?;
    if let Some(limit) = a.limit {
        queries = spread(queries, limit);
    }
    if let Some(d) = &a.distractors {
        lines.extend_new(read_tool_lines(d)?);
    }
    let ToolLines {
        specs: tools,
        bundles,
    } = lines;
    let embedder = global.meaning.embedder(None)?;
    let started = Instant::now();
    let mut index = SearchIndex::in_memory()?;
    if let Some(e) = &embedder {
        index = index.with_embedder(e.clone());
    }
    build_index_in(&index, &tools, &bundles)?;
    let bm25 = Bm25::new(&tools);
    let build = started.elapsed();
    // With a model, the same run also measures words alone, for comparison.
    let words = match &embedder {
        Some(_) => {
            let words = SearchIndex::in_memory()?;
            build_index_in(&words, &tools, &bundles)?;
            Some(words)
        }
        None => None,
    };

    let twins = (a.twins > 0.0 && embedder.is_some()).then_some(a.twins);
    let started = Instant::now();
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, 4);
    let chunk = queries.len().div_ceil(threads).max(1);
    let results: Vec<Result<(Tally, Vec<String>)>> = std::thread::scope(|s| {
        let handles: Vec<_> = queries
            .chunks(chunk)
            .map(|part| {
                let (index, words, bm25, tools) = (&index, words.as_ref(), &bm25, &tools);
                s.spawn(move || run_queries(index, words, bm25, tools, part, a.misses, twins))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a query thread panicked")))
            })
            .collect()
    });
    let mut tally: Tally = Vec::new();
    let mut misses = Vec::new();
    for r in results {
        let (t, m) = r?;
        for row in t {
            tally_of(&mut tally, &row.source).merge(&row);
        }
        misses.extend(m);
    }
    let mut all = Row::default();
    for row in &tally {
        all.merge(row);
    }
    let model = index.embedder_model().map(str::to_owned);
    if json_out {
        let mut v = json!({"queries": all.toolscout.n, "tools": tools.len(),
            "toolscout": all.toolscout.json(), "bm25": all.bm25.json(), "model": model});
        v["bm25"]["toolscout_vs_bm25"] = all.vs_bm25.json();
        if words.is_some() {
            v["words_only"] = all.words.json();
            v["words_only"]["toolscout_vs_words_only"] = all.vs_words.json();
        }
        if let Some(at) = twins {
            v["twins_grouped"] = all.grouped.json();
            v["twins_grouped"]["at"] = json!(at);
            v["twins_grouped"]["names_in_first_5"] = json!(shown_per_query(&all));
        }
        println!("{v}");
        return Ok(());
    }
    println!(
        "{} queries, {} tools; indexed in {:.2}s, queries ran in {:.2}s",
        all.toolscout.n,
        tools.len(),
        build.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    match &model {
        Some(m) => println!("ranking by words and meaning ({m})"),
        None => {
            println!("ranking by words only (--words-only, or $TOOLSCOUT_MODEL_DIR holds no model)")
        }
    }
    println!(
        "{:<28} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "", "n", "R@1", "R@5", "R@10", "MRR"
    );
    println!("{}", all.toolscout.line("toolscout"));
    if let Some(at) = twins {
        println!("{}", all.grouped.line("toolscout, twins grouped"));
        println!(
            "  (twins at cosine {at}: a hit and the twins listed with it count as one; the first 5 hits show {} names)",
            shown_per_query(&all)
        );
    }
    if words.is_some() {
        println!("{}", all.words.line("toolscout, words only"));
    }
    println!("{}", all.bm25.line("bm25 (baseline)"));
    let queries = |n: usize| format!("{n} {}", if n == 1 { "query" } else { "queries" });
    let against = |p: &Paired, what: &str| {
        format!(
            "against {what}: a higher R@5 on {}, a lower on {}",
            queries(p.better),
            p.worse
        )
    };
    println!(
        "  (toolscout's R@5 ±{:.3} at 95 % over these {}; {}{})",
        all.toolscout.r5_margin(),
        queries(all.toolscout.n),
        if words.is_some() {
            format!("{}; ", against(&all.vs_words, "words only"))
        } else {
            String::new()
        },
        against(&all.vs_bm25, "BM25")
    );
    if a.by_source {
        tally.sort_by(|x, y| x.source.cmp(&y.source));
        for row in &tally {
            println!("{}", row.toolscout.line(&format!("  {}", row.source)));
            if words.is_some() {
                println!("{}", row.words.line("    words only"));
            }
            println!("{}", row.bm25.line("    bm25"));
        }
    }
    for m in misses.iter().take(a.misses) {
        println!("{m}");
    }
    Ok(())
}

fn run_queries(
    index: &SearchIndex,
    words: Option<&SearchIndex>,
    bm25: &Bm25,
    tools: &[ToolSpec],
    queries: &[Query],
    want_misses: usize,
    twins: Option<f32>,
) -> Result<(Tally, Vec<String>)> {
    let mut tally: Tally = Vec::new();
    let mut misses = Vec::new();
    for q in queries {
        let found = index.search(&SearchQuery::new(q.text.as_str()).with_limit(100))?;
        let ranked: Vec<&str> = found.hits.iter().map(|h| h.id.as_str()).collect();
        let base: Vec<&str> = bm25
            .search(&q.text, 100)
            .into_iter()
            .filter_map(|(i, _)| tools.get(i).map(|t| t.name.as_str()))
            .collect();
        let e = tally_of(&mut tally, &q.source);
        let ours = e.toolscout.add(&ranked, &q.expected);
        if let Some(at) = twins {
            let found = index.search(
                &SearchQuery::new(q.text.as_str())
                    .with_limit(100)
                    .with_twins(Some(at)),
            )?;
            let rows: Vec<Vec<&str>> = found
                .hits
                .iter()
                .map(|h| {
                    std::iter::once(h.id.as_str())
                        .chain(h.twins.iter().map(String::as_str))
                        .collect()
                })
                .collect();
            e.grouped.add_rows(&rows, &q.expected);
            e.shown += rows.iter().take(5).map(Vec::len).sum::<usize>();
        }
        let theirs = e.bm25.add(&base, &q.expected);
        e.vs_bm25.add(ours, theirs);
        if let Some(w) = words {
            let found = w.search(&SearchQuery::new(q.text.as_str()).with_limit(100))?;
            let ranked: Vec<&str> = found.hits.iter().map(|h| h.id.as_str()).collect();
            let theirs = e.words.add(&ranked, &q.expected);
            e.vs_words.add(ours, theirs);
        }
        if misses.len() < want_misses
            && !ranked
                .iter()
                .take(5)
                .any(|r| q.expected.iter().any(|x| x == r))
        {
            let text: String = q.text.chars().take(160).collect();
            // Where each expected tool ranked (1-based, "-" beyond the top 100), so a
            // near miss tells from a tool the ranking never found.
            let at: Vec<String> = q
                .expected
                .iter()
                .map(|x| {
                    ranked
                        .iter()
                        .position(|r| r == x)
                        .map_or_else(|| "-".to_owned(), |i| (i + 1).to_string())
                })
                .collect();
            misses.push(format!(
                "MISS {:?} expected {:?} at {:?} got {:?}",
                text.replace('\n', " "),
                q.expected,
                at,
                &ranked[..ranked.len().min(5)]
            ));
        }
    }
    Ok((tally, misses))
}
