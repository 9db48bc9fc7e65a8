//! `toolscout eval search`: recall@1/5/10 and MRR of the search ranking on a labelled
//! query set, next to a plain BM25 computed in the same run (`toolscout_eval::search`);
//! and the readers of evaluation files the other commands share, with what they print.

mod agent;
mod calibrate;
mod compare;
mod retrieve;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Subcommand;
use serde_json::{Value, json};
use toolscout_eval::read::{self, ToolLines};
use toolscout_eval::search::{Metrics, Paired, SearchEval, SourceFigures};
use toolscout_spec::ToolSpec;

use super::context::Global;

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
    Agent(agent::AgentArgs),
    /// Runs of `eval agent --results` side by side, over the tasks they all finished:
    /// success, complete success, calls nobody asked for, tokens, each with its ratio to
    /// the first run's (the oracle's, say).
    Compare(compare::CompareArgs),
    /// What the agent's retrieve step offers, without a model: how often the right tool
    /// is retrieved with near-twins dropped, and how sure retrieval is with and without a
    /// right tool.
    Retrieve(retrieve::RetrieveArgs),
    /// Put a sentence encoder's cosines on search's scale: its cosines over pairs of your
    /// tools (and of your requests with them) are matched, quantile by quantile, to the
    /// built-in model's, and written to the model's folder as `calibration.json`.
    Calibrate(calibrate::CalibrateArgs),
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
        What::Agent(a) => agent::run(a, global, json_out),
        What::Compare(a) => compare::run(a, json_out),
        What::Retrieve(a) => retrieve::run(a, global, json_out),
        What::Calibrate(a) => calibrate::run(a, json_out),
    }
}

/// A library error for the command line: a missing file says how to pass one, a bad
/// line is `FILE line N: why`.
pub(crate) fn explain(e: toolscout_eval::Error) -> anyhow::Error {
    match &e {
        toolscout_eval::Error::Io { path, source }
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            anyhow::anyhow!(
                "{} not found (pass your evaluation files with --tools and --queries; the README says what they hold)",
                path.display()
            )
        }
        toolscout_eval::Error::Line { path, line, reason } => {
            anyhow::anyhow!("{} line {line}: {reason}", path.display())
        }
        _ => e.into(),
    }
}

/// Reads a file, gzip-compressed when its name ends in `.gz`.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    read::text(path).map_err(explain)
}

/// Reads tools; bad lines are reported on stderr and skipped.
pub(crate) fn read_tools(path: &Path) -> Result<Vec<ToolSpec>> {
    Ok(read_tool_lines(path)?.specs)
}

/// Reads tools with their bundles; bad lines are reported on stderr and skipped.
pub(crate) fn read_tool_lines(path: &Path) -> Result<ToolLines> {
    let lines = read::tool_lines(path).map_err(explain)?;
    if let Some(first) = lines.skipped.first() {
        eprintln!(
            "warning: {}: {} bad line(s) skipped, first: line {}: {}",
            path.display(),
            lines.skipped.len(),
            first.line,
            first.reason
        );
    }
    Ok(lines)
}

/// The progress bar of indexing a large catalog (10,000 tools or more), on a terminal.
pub(crate) struct IndexingBar(Option<indicatif::ProgressBar>);

impl IndexingBar {
    pub(crate) fn new(tools: usize) -> Self {
        IndexingBar(
            (tools >= 10_000 && std::io::stderr().is_terminal()).then(|| {
                let bar = indicatif::ProgressBar::new(tools as u64);
                bar.set_style(
                    indicatif::ProgressStyle::with_template(
                        "indexing {bar:40} {pos}/{len} tools {elapsed}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
                );
                bar
            }),
        )
    }

    /// Tools indexed so far (from 0 again for another index).
    pub(crate) fn set(&self, n: u64) {
        if let Some(b) = &self.0 {
            b.set_position(n);
        }
    }

    pub(crate) fn finish(self) {
        if let Some(b) = self.0 {
            b.finish_and_clear();
        }
    }
}

/// recall@1/5/10, MRR and the margin of recall@5, to three decimals.
fn figures(m: &Metrics) -> Value {
    let r = |x: f64| (x * 1000.0).round() / 1000.0;
    json!({"recall_at_1": r(m.recall_at_1()), "recall_at_5": r(m.recall_at_5()), "recall_at_10": r(m.recall_at_10()), "mrr": r(m.mrr()),
        "recall_at_5_margin_95": r(m.recall_at_5_margin())})
}

fn paired(p: &Paired) -> Value {
    json!({"better": p.better, "worse": p.worse})
}

/// One row of the table.
fn line(m: &Metrics, label: &str) -> String {
    format!(
        "{label:<28} {:>6} {:>6.3} {:>6.3} {:>6.3} {:>6.3}",
        m.queries(),
        m.recall_at_1(),
        m.recall_at_5(),
        m.recall_at_10(),
        m.mrr()
    )
}

/// The names the first five grouped hits show, on average, to two decimals.
fn shown_per_query(row: &SourceFigures) -> f64 {
    (row.names_in_first_5() * 100.0).round() / 100.0
}

fn search(a: &SearchArgs, global: &Global, json_out: bool) -> Result<()> {
    let queries_path = a.queries.clone().unwrap_or_else(|| {
        a.tools
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join("queries.jsonl")
    });
    let mut lines = read_tool_lines(&a.tools)?;
    let mut queries = read::labelled_queries(&queries_path).map_err(explain)?;
    if let Some(limit) = a.limit {
        queries = read::spread(queries, limit);
    }
    if let Some(d) = &a.distractors {
        lines.extend_new(read_tool_lines(d)?);
    }
    let mut eval = SearchEval::default()
        .with_twins((a.twins > 0.0).then_some(a.twins))
        .with_misses(a.misses);
    if let Some(e) = global.meaning.embedder(None)? {
        eval = eval.with_embedder(e);
    }
    let bar = IndexingBar::new(lines.len());
    let report = eval.run(&lines, &queries, &mut |n| bar.set(n))?;
    bar.finish();
    let all = &report.all;
    if json_out {
        let mut v = json!({"queries": all.toolscout.queries(), "tools": report.tools,
            "toolscout": figures(&all.toolscout), "bm25": figures(&all.bm25), "model": report.model});
        v["bm25"]["toolscout_vs_bm25"] = paired(&all.vs_bm25);
        if report.words_only {
            v["words_only"] = figures(&all.words_only);
            v["words_only"]["toolscout_vs_words_only"] = paired(&all.vs_words_only);
        }
        if let Some(at) = report.twins {
            v["twins_grouped"] = figures(&all.twins_grouped);
            v["twins_grouped"]["at"] = json!(at);
            v["twins_grouped"]["names_in_first_5"] = json!(shown_per_query(all));
        }
        if a.by_source {
            v["by_source"] = report
                .sources
                .iter()
                .map(|row| {
                    json!({"source": row.source, "toolscout": figures(&row.toolscout),
                        "bm25": figures(&row.bm25)})
                })
                .collect();
        }
        super::emit(&v)?;
        return Ok(());
    }
    super::emit(format!(
        "{} queries, {} tools; indexed in {:.2}s, queries ran in {:.2}s",
        all.toolscout.queries(),
        report.tools,
        report.index_seconds,
        report.query_seconds
    ))?;
    match &report.model {
        Some(m) => super::emit(format!("ranking by words and meaning ({m})"))?,
        None => super::emit(
            "ranking by words only (--words-only, or $TOOLSCOUT_MODEL_DIR holds no model)",
        )?,
    }
    super::emit(format!(
        "{:<28} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "", "n", "R@1", "R@5", "R@10", "MRR"
    ))?;
    super::emit(line(&all.toolscout, "toolscout"))?;
    if let Some(at) = report.twins {
        super::emit(line(&all.twins_grouped, "toolscout, twins grouped"))?;
        super::emit(format!(
            "  (twins at cosine {at}: a hit and the twins listed with it count as one; the first 5 hits show {} name(s))",
            shown_per_query(all)
        ))?;
    }
    if report.words_only {
        super::emit(line(&all.words_only, "toolscout, words only"))?;
    }
    super::emit(line(&all.bm25, "bm25 (baseline)"))?;
    let queries = |n: usize| format!("{n} {}", if n == 1 { "query" } else { "queries" });
    let against = |p: &Paired, what: &str| {
        format!(
            "against {what}: a higher R@5 on {}, a lower on {}",
            queries(p.better),
            p.worse
        )
    };
    super::emit(format!(
        "  (toolscout's R@5 ±{:.3} at 95 % over these {}; {}{})",
        all.toolscout.recall_at_5_margin(),
        queries(all.toolscout.queries()),
        if report.words_only {
            format!("{}; ", against(&all.vs_words_only, "words only"))
        } else {
            String::new()
        },
        against(&all.vs_bm25, "BM25")
    ))?;
    if a.by_source {
        for row in &report.sources {
            super::emit(line(&row.toolscout, &format!("  {}", row.source)))?;
            if report.words_only {
                super::emit(line(&row.words_only, "    words only"))?;
            }
            super::emit(line(&row.bm25, "    bm25"))?;
        }
    }
    for m in &report.misses {
        let text: String = m.query.chars().take(160).collect();
        // Where each expected tool ranked (1-based, "-" beyond the top 100), so a near
        // miss tells from a tool the ranking never found.
        let at: Vec<String> = m
            .ranks
            .iter()
            .map(|r| r.map_or_else(|| "-".to_owned(), |i| i.to_string()))
            .collect();
        super::emit(format!(
            "MISS {:?} expected {:?} at {:?} got {:?}",
            text.replace('\n', " "),
            m.expected,
            at,
            m.top
        ))?;
    }
    Ok(())
}
