//! `toolscout eval retrieve`: what the agent's retrieve policy would put in front of the
//! model, without a model.
//!
//! Every task runs through [`ToolboxHost::retrieve`], the very step the agent loop takes
//! before its first request, over the same temporary catalog `eval agent` builds. Two
//! questions, each for several settings in one run:
//!
//! - **Twins.** With near-duplicate tools dropped at a similarity, how often is an
//!   expected tool among those retrieved, and how many retrieved pairs are still twins?
//! - **Margin.** With tools far behind the first in meaning left out, how often is an
//!   expected tool still among them, and how many tools are offered?
//! - **Confidence.** How sure is retrieval of its best tool, on tasks that have a right
//!   tool and on tasks that have none? For each floor, the share of tool tasks that still
//!   get a required call, and of no-tool tasks that are left free to answer in text.

use std::path::PathBuf;

use anyhow::{Result, bail};
use serde_json::json;
use toolscout_agent::host::ToolHost;
use toolscout_agent::{Retrieval, ToolboxHost};

use super::agent_opts::unit_interval;
use super::eval_agent::{Task, build_toolbox, own_catalog, read_tasks};

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

/// The figures of one twin setting.
#[derive(Default)]
struct Twins {
    tool_tasks: usize,
    hit: usize,
    /// Retrieved pairs whose similarity is at or above the strictest setting compared.
    twin_pairs: usize,
    /// Tools retrieved, summed over tasks with a right tool.
    offered: usize,
    /// Each task's retrieval: tasks with a right tool, tasks without.
    with_tool: Vec<Retrieval>,
    without: Vec<Retrieval>,
}

pub(crate) fn run(
    args: &RetrieveArgs,
    global: &super::context::Global,
    json_out: bool,
) -> Result<()> {
    if args.top_k == 0 {
        bail!("--top-k must be at least 1");
    }
    let super::eval::ToolLines {
        specs: tools,
        bundles,
    } = super::eval::read_tool_lines(&args.tools)?;
    if tools.is_empty() {
        bail!("{} has no tools", args.tools.display());
    }
    let mut tasks: Vec<Task> = Vec::new();
    for path in &args.tasks {
        tasks.extend(read_tasks(path, args.limit)?);
    }
    let embedder = global.meaning.embedder(None)?;
    if embedder.is_none() {
        eprintln!(
            "note: no sentence encoder (--words-only, or $TOOLSCOUT_MODEL_DIR holds no model), so no confidence and no twins"
        );
    }
    let by_name: std::collections::HashMap<&str, &toolscout_spec::ToolSpec> =
        tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let dir = tempfile::tempdir()?;
    let whole = ToolboxHost::new(build_toolbox(
        &tools,
        &bundles,
        dir.path(),
        embedder.clone(),
    )?);
    // Settings (twins, margin): keep twins, then each similarity and the agent's (the
    // margins' baseline, and the confidence table's), then each margin with the agent's
    // twins. A margin of 1 is none, as in the agent; a setting is measured once.
    let agent_twins = Some(toolscout_agent::DEFAULT_TWIN_SIMILARITY);
    // What `--each` prints: the agent's retrieval.
    let agent_default = (agent_twins, Some(toolscout_agent::DEFAULT_MARGIN));
    let mut settings: Vec<(Option<f32>, Option<f32>)> = Vec::new();
    for setting in std::iter::once((None, None))
        .chain(args.twins.iter().map(|&t| (Some(t), None)))
        .chain(std::iter::once((agent_twins, None)))
        .chain(
            args.margins
                .iter()
                .map(|&m| (agent_twins, (m < 1.0).then_some(m))),
        )
        .chain(args.each.then_some(agent_default))
    {
        if !settings.contains(&setting) {
            settings.push(setting);
        }
    }
    let strictest = args.twins.iter().copied().fold(1.0f32, f32::min);
    let mut figures: Vec<Twins> = settings.iter().map(|_| Twins::default()).collect();
    // The agent's own retrieval before its first request (defaults), the message split
    // into needs and whole: the share of each task's tools it activates.
    let mut activation = [Activation::default(), Activation::default()];
    let mut each = Vec::new();
    for task in &tasks {
        if !task.irrelevant() {
            for (split, a) in [true, false].into_iter().zip(&mut activation) {
                let config = toolscout_agent::AgentConfig::builder("eval", "none")
                    .retrieve_top_k(args.top_k)
                    .split_needs(split)
                    .build()?;
                let (found, needs) = toolscout_agent::retrieve_for(&whole, &config, &task.query);
                let got = task
                    .expected
                    .iter()
                    .filter(|t| found.tools.contains(t))
                    .count();
                a.tasks += 1;
                a.recall += got as f64 / task.expected.len() as f64;
                a.all += usize::from(got == task.expected.len());
                a.tools += found.tools.len();
                a.needs += needs.len().max(1);
            }
        }
        // A no-tool task with its own offered tools searches those alone.
        let own = own_catalog(task, &by_name, embedder.as_ref())?
            .map(|(toolbox, dir)| (ToolboxHost::new(toolbox), dir));
        let base = own.as_ref().map_or(&whole, |(h, _)| h);
        for (setting, f) in settings.iter().zip(&mut figures) {
            let host = base
                .clone()
                .with_twin_similarity(setting.0)
                .with_margin(setting.1);
            let found: Retrieval = host.retrieve(&task.query, args.top_k);
            if args.each && *setting == agent_default {
                let line = json!({"query": task.query, "expected": task.expected,
                    "tools": found.tools, "confidence": found.confidence});
                if json_out {
                    each.push(line);
                } else {
                    println!("{line}");
                }
            }
            if task.irrelevant() {
                f.without.push(found);
                continue;
            }
            f.tool_tasks += 1;
            f.hit += usize::from(found.tools.iter().any(|t| task.expected.contains(t)));
            f.twin_pairs += twin_pairs(&host, &found.tools, strictest);
            f.offered += found.tools.len();
            f.with_tool.push(found);
        }
    }
    let label = |s: &(Option<f32>, Option<f32>)| {
        let twins = s.0.map_or_else(|| "kept".to_owned(), |v| format!("{v:.2}"));
        match s.1 {
            Some(m) => format!("{twins}, margin {m:.2}"),
            None => twins,
        }
    };
    let share = |n: usize, d: usize| if d == 0 { 0.0 } else { n as f64 / d as f64 };
    // The confidence table is the default setting's (the agent's).
    let default_at = settings
        .iter()
        .position(|s| *s == (agent_twins, None))
        .unwrap_or(0);
    let conf = &figures[default_at];
    let floors: Vec<(f32, f64, f64)> = args
        .floors
        .iter()
        .map(|&floor| {
            // As the agent decides: a call is required when something was found and its
            // confidence is not measured below the floor.
            let required = |r: &Retrieval| !r.tools.is_empty() && !r.is_below(floor);
            let required_n = conf.with_tool.iter().filter(|r| required(r)).count();
            let free = conf.without.iter().filter(|r| !required(r)).count();
            (
                floor,
                share(required_n, conf.with_tool.len()),
                share(free, conf.without.len()),
            )
        })
        .collect();
    let activation_json = |a: &Activation| {
        json!({"tasks": a.tasks, "recall": share_f(a.recall, a.tasks),
            "all_found": share(a.all, a.tasks), "mean_tools": share(a.tools, a.tasks),
            "mean_needs": share(a.needs, a.tasks)})
    };
    if json_out {
        let row = |(s, f): (&(Option<f32>, Option<f32>), &Twins)| {
            let mut v = json!({"twin_similarity": s.0, "tool_tasks": f.tool_tasks,
                "hit": share(f.hit, f.tool_tasks), "twin_pairs": f.twin_pairs,
                "mean_tools": share(f.offered, f.tool_tasks)});
            if let Some(m) = s.1 {
                v["margin"] = json!(m);
            }
            v
        };
        let rows = || settings.iter().zip(&figures);
        let twins: Vec<_> = rows().filter(|(s, _)| s.1.is_none()).map(row).collect();
        let margins: Vec<_> = rows().filter(|(s, _)| s.1.is_some()).map(row).collect();
        let floors: Vec<_> = floors
            .iter()
            .map(|(floor, r, free)| json!({"floor": floor, "tool_tasks_required": r, "no_tool_tasks_free": free}))
            .collect();
        println!(
            "{}",
            json!({"top_k": args.top_k, "tasks": tasks.len(), "twins": twins, "margins": margins,
                "confidence": {"twin_similarity": settings[default_at].0,
                    "with_tool": quantiles(&conf.with_tool), "without": quantiles(&conf.without)},
                "floors": floors, "each": each,
                "activation": {"needs_split": activation_json(&activation[0]),
                    "whole_message": activation_json(&activation[1])}})
        );
        return Ok(());
    }
    let no_tool = tasks.iter().filter(|t| t.irrelevant()).count();
    println!(
        "{} tasks ({} with a right tool, {} without), {} tools, top {}",
        tasks.len(),
        tasks.len() - no_tool,
        no_tool,
        tools.len(),
        args.top_k
    );
    println!(
        "{:<24} {:>8} {:>12} {:>10}",
        "twins dropped at",
        "hit",
        format!("pairs ≥{strictest:.2}"),
        "tools"
    );
    for (s, f) in settings.iter().zip(&figures) {
        println!(
            "{:<24} {:>8.3} {:>12} {:>10.2}",
            label(s),
            share(f.hit, f.tool_tasks),
            f.twin_pairs,
            share(f.offered, f.tool_tasks)
        );
    }
    println!(
        "confidence of the best tool (twins at {}), quantiles 10/25/50/75/90:",
        label(&settings[default_at])
    );
    let q = |v: &[Retrieval]| {
        quantiles(v)
            .iter()
            .map(|x| format!("{x:.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!("  with a right tool  {}", q(&conf.with_tool));
    println!(
        "  without            {}   ({} found nothing)",
        q(&conf.without),
        conf.without.iter().filter(|r| r.tools.is_empty()).count()
    );
    println!(
        "{:<8} {:>26} {:>26}",
        "floor", "with a tool: call required", "without: left to answer"
    );
    for (floor, required, free) in floors {
        println!("{floor:<8.2} {required:>26.3} {free:>26.3}");
    }
    println!(
        "the agent's retrieval before its first request (top {}, its twins and margin): share of each task's tools activated",
        args.top_k
    );
    println!(
        "{:<24} {:>8} {:>10} {:>10} {:>10}",
        "", "recall", "all found", "tools", "needs"
    );
    for (label, a) in [
        ("needs split", &activation[0]),
        ("whole message", &activation[1]),
    ] {
        println!(
            "{label:<24} {:>8.3} {:>10.3} {:>10.2} {:>10.2}",
            share_f(a.recall, a.tasks),
            share(a.all, a.tasks),
            share(a.tools, a.tasks),
            share(a.needs, a.tasks)
        );
    }
    Ok(())
}

/// The agent's retrieval over the tasks with a right tool.
#[derive(Default)]
struct Activation {
    tasks: usize,
    /// The sum of each task's share of its tools activated.
    recall: f64,
    /// Tasks with all their tools activated.
    all: usize,
    tools: usize,
    needs: usize,
}

fn share_f(sum: f64, n: usize) -> f64 {
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// How many pairs of `tools` are at least `at` alike.
fn twin_pairs(host: &ToolboxHost, tools: &[String], at: f32) -> usize {
    let toolbox = host.toolbox();
    let ids: Vec<String> = tools
        .iter()
        .filter_map(|n| match toolbox.lookup(n) {
            toolscout_discover::Lookup::Found(t) => Some(t.id.to_string()),
            _ => None,
        })
        .collect();
    let mut n = 0;
    for (i, a) in ids.iter().enumerate() {
        for b in &ids[i + 1..] {
            n += usize::from(toolbox.index().similarity(a, b).is_some_and(|s| s >= at));
        }
    }
    n
}

/// The 10th, 25th, 50th, 75th and 90th percentiles of the retrievals' confidences (0
/// where nothing was found or none was measured; zeros when there is no retrieval).
fn quantiles(found: &[Retrieval]) -> [f32; 5] {
    let mut sorted: Vec<f32> = found.iter().map(|r| r.confidence.unwrap_or(0.0)).collect();
    sorted.sort_by(f32::total_cmp);
    let at = |p: f64| {
        if sorted.is_empty() {
            return 0.0;
        }
        let i = ((sorted.len() - 1) as f64 * p).round() as usize;
        sorted[i.min(sorted.len() - 1)]
    };
    [at(0.1), at(0.25), at(0.5), at(0.75), at(0.9)]
}
