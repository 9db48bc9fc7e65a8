//! `toolscout eval retrieve`: what the agent's retrieve policy would put in front of the
//! model, without a model.
//!
//! Every task runs through `ToolboxHost::retrieve`, the very step the agent loop takes
//! before its first request, over the same temporary catalog `eval agent` builds. Two
//! questions, each for several settings in one run:
//!
//! - **Twins.** With near-duplicate tools dropped at a similarity, how often is an
//!   expected tool among those retrieved, and how many retrieved pairs are still twins?
//! - **Margin.** With tools far behind the first in meaning left out, how often is an
//!   expected tool still among them, and how many tools are offered?
//! - **Confidence.** How sure is retrieval of its best tool, on tasks that have a right
//!   tool and on tasks that have none? For each floor, the share of tool tasks at or
//!   above it and of no-tool tasks below it: how well a floor would tell them apart (the
//!   agent has none: every retrieval that found a tool requires a call).
//!
//! The measuring is `toolscout_eval::retrieve`'s; this module reads the flags and prints.

use std::path::PathBuf;

use anyhow::{Result, bail};
use serde_json::{Value, json};
use toolscout_eval::read::{self, Task};
use toolscout_eval::retrieve::{Activation, RetrieveEval, SettingFigures, TaskRetrieval};

use crate::cmd::agent_opts::unit_interval;

/// Arguments of `eval retrieve`.
#[derive(Debug, clap::Args)]
pub(crate) struct RetrieveArgs {
    /// The tool catalog, JSONL (`.jsonl` or `.jsonl.gz`).
    #[arg(long)]
    tools: PathBuf,
    /// Tasks, JSONL with `query`, `expected` and `offered` (repeat for several files). A
    /// task whose `expected` is empty has no right tool: it is retrieved over its own
    /// `offered` tools, or the whole catalog when it has none, as in `eval agent`.
    #[arg(long, required = true)]
    tasks: Vec<PathBuf>,
    /// Tools retrieved per task.
    #[arg(long, default_value_t = toolscout_agent::DEFAULT_RETRIEVE_TOP_K)]
    top_k: usize,
    /// Run only this many tasks of each file, spread evenly over it.
    #[arg(long)]
    limit: Option<usize>,
    /// Twin similarities to compare (near-duplicates at or above are dropped), 0 to 1.
    #[arg(long, value_delimiter = ',', default_values_t = [0.95, 0.9, 0.85, 0.8], value_parser = unit_interval)]
    twins: Vec<f32>,
    /// Confidence floors to compare, 0 to 1.
    #[arg(long, value_delimiter = ',', default_values_t = [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6], value_parser = unit_interval)]
    floors: Vec<f32>,
    /// Margins to compare: a tool more than this far behind the first in meaning is left
    /// out (with twins dropped at the agent's default, which is always measured without
    /// a margin too); 1 is no margin.
    #[arg(long, value_delimiter = ',', default_values_t = [0.02, 0.05, 0.08, 0.1, 0.15], value_parser = unit_interval)]
    margins: Vec<f32>,
    /// Also print each task's retrieval as the agent makes it by default (twins dropped
    /// at 0.8, margin 0.1): `query`, `expected`, `tools`, `confidence`, one JSON line
    /// each (with `--json`, an `each` array).
    #[arg(long)]
    each: bool,
}

pub(crate) fn run(
    args: &RetrieveArgs,
    global: &crate::cmd::context::Global,
    json_out: bool,
) -> Result<()> {
    if args.top_k == 0 {
        bail!("--top-k must be at least 1");
    }
    let lines = super::read_tool_lines(&args.tools)?;
    if lines.is_empty() {
        bail!("{} has no tools", args.tools.display());
    }
    let mut tasks: Vec<Task> = Vec::new();
    for path in &args.tasks {
        tasks.extend(read::tasks(path, args.limit).map_err(super::explain)?);
    }
    let mut eval = RetrieveEval::default()
        .with_top_k(args.top_k)
        .with_twins(&args.twins)
        .with_floors(&args.floors)
        .with_margins(&args.margins)
        .with_each(args.each);
    match global.meaning.embedder(None)? {
        Some(e) => eval = eval.with_embedder(e),
        None => eprintln!(
            "note: no sentence encoder (--words-only, or $TOOLSCOUT_MODEL_DIR holds no model), so no confidence and no twins"
        ),
    }
    let report = eval.run(&lines, &tasks)?;
    let each = |r: &TaskRetrieval| {
        json!({"query": r.query, "expected": r.expected,
            "tools": r.tools, "confidence": r.confidence, "needs": r.needs})
    };
    let label = |s: &SettingFigures| {
        let twins = s
            .twin_similarity
            .map_or_else(|| "kept".to_owned(), |v| format!("{v:.2}"));
        match s.margin {
            Some(m) => format!("{twins}, margin {m:.2}"),
            None => twins,
        }
    };
    let activation_json = |a: &Activation| {
        json!({"tasks": a.tasks, "recall": a.mean_recall(),
            "all_found": a.all_found_rate(), "mean_tools": a.mean_tools(),
            "mean_needs": a.mean_needs(), "array_recall": a.mean_array_recall(),
            "mean_offered": a.offered as f64 / a.tasks.max(1) as f64})
    };
    if json_out {
        let row = |f: &SettingFigures| {
            let mut v = json!({"twin_similarity": f.twin_similarity, "tool_tasks": f.tool_tasks,
                "hit": f.hit_rate(), "twin_pairs": f.twin_pairs,
                "mean_tools": f.mean_tools()});
            if let Some(m) = f.margin {
                v["margin"] = json!(m);
            }
            v
        };
        let settings = &report.settings;
        let twins: Vec<_> = settings
            .iter()
            .filter(|s| s.margin.is_none())
            .map(row)
            .collect();
        let margins: Vec<_> = settings
            .iter()
            .filter(|s| s.margin.is_some())
            .map(row)
            .collect();
        let floors: Vec<_> = report
            .floors
            .iter()
            .map(|f| json!({"floor": f.floor, "tool_tasks_required": f.tool_tasks_required, "no_tool_tasks_free": f.no_tool_tasks_free}))
            .collect();
        let each: Vec<Value> = report.each.iter().map(each).collect();
        let conf = &report.confidence;
        println!(
            "{}",
            json!({"top_k": report.top_k, "tasks": report.tasks, "twins": twins, "margins": margins,
                "confidence": {"twin_similarity": conf.twin_similarity,
                    "with_tool": conf.with_tool, "without": conf.without},
                "floors": floors, "each": each,
                "activation": {"needs_split": activation_json(&report.activation.needs_split),
                    "whole_message": activation_json(&report.activation.whole_message)}})
        );
        return Ok(());
    }
    for r in &report.each {
        println!("{}", each(r));
    }
    println!(
        "{} tasks ({} with a right tool, {} without), {} tools, top {}",
        report.tasks,
        report.tasks - report.no_tool_tasks,
        report.no_tool_tasks,
        report.tools,
        report.top_k
    );
    let strictest = report.strictest;
    println!(
        "{:<24} {:>8} {:>12} {:>10}",
        "twins dropped at",
        "hit",
        format!("pairs ≥{strictest:.2}"),
        "tools"
    );
    for s in &report.settings {
        println!(
            "{:<24} {:>8.3} {:>12} {:>10.2}",
            label(s),
            s.hit_rate(),
            s.twin_pairs,
            s.mean_tools()
        );
    }
    let conf = &report.confidence;
    println!(
        "confidence of the best tool (twins at {}), quantiles 10/25/50/75/90:",
        conf.twin_similarity
            .map_or_else(|| "kept".to_owned(), |v| format!("{v:.2}"))
    );
    let q = |v: &[f32; 5]| {
        v.iter()
            .map(|x| format!("{x:.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!("  with a right tool  {}", q(&conf.with_tool));
    println!(
        "  without            {}   ({} found nothing)",
        q(&conf.without),
        conf.found_nothing
    );
    println!(
        "{:<8} {:>26} {:>26}",
        "floor", "with a tool: at or above", "without: below"
    );
    for f in &report.floors {
        println!(
            "{:<8.2} {:>26.3} {:>26.3}",
            f.floor, f.tool_tasks_required, f.no_tool_tasks_free
        );
    }
    println!(
        "the agent's retrieval before its first request (top {}, its twins and margin): share of each task's tools activated, and in the first request's array (with their servers' tools offered compactly)",
        report.top_k
    );
    println!(
        "{:<24} {:>8} {:>10} {:>10} {:>10} {:>12} {:>8}",
        "", "recall", "all found", "tools", "needs", "array recall", "offered"
    );
    for (label, a) in [
        ("needs split", &report.activation.needs_split),
        ("whole message", &report.activation.whole_message),
    ] {
        println!(
            "{label:<24} {:>8.3} {:>10.3} {:>10.2} {:>10.2} {:>12.3} {:>8.2}",
            a.mean_recall(),
            a.all_found_rate(),
            a.mean_tools(),
            a.mean_needs(),
            a.mean_array_recall(),
            a.offered as f64 / a.tasks.max(1) as f64,
        );
    }
    Ok(())
}
