//! `toolscout eval compare`: runs of `eval agent --results` side by side, over the tasks
//! they all finished, each figure with its ratio to the first run's
//! (`toolscout_eval::compare`).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Result, bail};
use toolscout_eval::agent::Figures;
use toolscout_eval::compare::{Compared, compare};
use toolscout_eval::read::Task;

use super::explain;

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// Results files of `eval agent --results`, as `NAME=FILE` or `FILE` (named by its
    /// file name without `.jsonl`). The first is the baseline every ratio is to, such as
    /// the oracle's run (`--policy offered`).
    #[arg(required = true, value_name = "NAME=FILE")]
    runs: Vec<String>,
    /// The tool catalog the runs were over (JSONL, as `eval agent --tools`): tells the
    /// server of each tool (the bundle its line names) to outcomes kept before `eval
    /// agent` recorded which stray calls were of another server than the task's.
    /// Without it, such a run's "of other servers" reads "—".
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
}

/// The most runs one comparison takes: a table wider is not read.
const MAX_RUNS: usize = 16;

pub(crate) fn run(args: &CompareArgs, json_out: bool) -> Result<()> {
    if args.runs.len() > MAX_RUNS {
        bail!(
            "{} runs given; compare at most {MAX_RUNS} at once",
            args.runs.len()
        );
    }
    let lines = match &args.tools {
        Some(path) => Some(super::read_tool_lines(path)?),
        None => None,
    };
    let servers = lines.as_ref().map(|l| l.servers()).unwrap_or_default();
    let mut runs = Vec::with_capacity(args.runs.len());
    for arg in &args.runs {
        let (name, path) = match arg.split_once('=') {
            Some((name, path)) if !name.is_empty() && !path.is_empty() => {
                (name.to_owned(), PathBuf::from(path))
            }
            Some(_) => bail!("{arg:?}: give a run as NAME=FILE or FILE"),
            None => {
                let path = PathBuf::from(arg);
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().trim_end_matches(".jsonl").to_owned())
                    .unwrap_or_else(|| arg.clone());
                (name, path)
            }
        };
        if runs.iter().any(|(n, _)| *n == name) {
            bail!("two runs are named {name:?}: name them apart with NAME=FILE");
        }
        let mut records = toolscout_eval::results::read(&path).map_err(explain)?;
        if lines.is_some() {
            for record in records
                .iter_mut()
                .filter(|r| r.outcome.unasked_elsewhere.is_none())
            {
                let expected: Vec<&str> = record.expected.iter().map(String::as_str).collect();
                let task = Task::new(record.query.clone(), &expected);
                record.outcome = std::mem::take(&mut record.outcome)
                    .with_servers(&task, |tool| servers.get(tool).copied());
            }
        }
        runs.push((name, records));
    }
    let compared = compare(&runs);
    if json_out {
        return crate::cmd::print_json(&serde_json::to_value(&compared)?);
    }
    crate::cmd::emit(table(&compared))
}

/// The comparison as Markdown tables: relevant tasks, then irrelevance tasks.
fn table(c: &Compared) -> String {
    let mut out = format!("{} tasks every run finished", c.paired);
    let left: Vec<String> = c
        .runs
        .iter()
        .filter(|r| r.left_out > 0)
        .map(|r| format!("{} {}", r.name, r.left_out))
        .collect();
    if !left.is_empty() {
        let _ = write!(out, " (left out: {})", left.join(", "));
    }
    out.push('\n');
    let base = c.runs.first();
    if c.runs.iter().any(|r| r.relevant.is_some()) {
        out.push_str(
            "\n| run | tasks | any-hit | complete | tool recall | needed tools activated by the end | unasked calls / task (of other servers) | prompt tokens / task | steps / task |\n|---|---|---|---|---|---|---|---|---|\n",
        );
        let base = base.and_then(|b| b.relevant.as_ref());
        for run in &c.runs {
            let Some(f) = &run.relevant else { continue };
            let vs = |get: fn(&Figures) -> f64| ratio(base.map(get), get(f));
            let activated = f.retrieval.as_ref().map_or("—".to_owned(), |r| {
                format!("{:.3}", r.end_activation_recall)
            });
            let elsewhere = f
                .unasked_calls_of_other_servers_per_task
                .map_or("—".to_owned(), |e| format!("{e:.2}"));
            let _ = writeln!(
                out,
                "| {} | {} | {:.3}{} | {:.3}{} | {:.3}{} | {activated} | {:.2} ({elsewhere}) | {}{} | {:.1} |",
                run.name,
                f.tasks,
                f.success_rate,
                vs(|f| f.success_rate),
                f.complete_success_rate,
                vs(|f| f.complete_success_rate),
                f.tool_recall,
                vs(|f| f.tool_recall),
                f.unasked_calls_per_task,
                thousands(f.mean_prompt_tokens),
                vs(|f| f.mean_prompt_tokens),
                f.mean_steps,
            );
        }
    }
    if c.runs.iter().any(|r| r.irrelevance.is_some()) {
        out.push_str(
            "\n| run (irrelevance) | tasks | abstention | no tool ran | prompt tokens / task | steps / task |\n|---|---|---|---|---|---|\n",
        );
        let base = base.and_then(|b| b.irrelevance.as_ref());
        for run in &c.runs {
            let Some(f) = &run.irrelevance else { continue };
            let (abstained, none_ran) = f
                .abstention
                .as_ref()
                .map_or((0.0, 0.0), |a| (a.abstention_rate, a.no_tool_ran_rate));
            let _ = writeln!(
                out,
                "| {} | {} | {abstained:.3} | {none_ran:.3} | {}{} | {:.1} |",
                run.name,
                f.tasks,
                thousands(f.mean_prompt_tokens),
                ratio(base.map(|b| b.mean_prompt_tokens), f.mean_prompt_tokens),
                f.mean_steps,
            );
        }
    }
    out.trim_end().to_owned()
}

/// ` (1.42×)`: `value` over the baseline's, when there is one above 0.
fn ratio(base: Option<f64>, value: f64) -> String {
    match base {
        Some(b) if b > 0.0 => format!(" ({:.2}×)", value / b),
        _ => String::new(),
    }
}

/// A count rounded to a whole number, with thousands separated by commas.
fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{ratio, thousands};

    #[test]
    fn counts_and_ratios_read_as_in_a_closing_note() {
        assert_eq!(thousands(6234.4), "6,234");
        assert_eq!(thousands(999.6), "1,000");
        assert_eq!(thousands(12.0), "12");
        assert_eq!(thousands(1_234_567.0), "1,234,567");
        assert_eq!(ratio(Some(4391.0), 6234.0), " (1.42×)");
        // No ratio to a baseline of 0 (the oracle's unasked calls) or to none.
        assert_eq!(ratio(Some(0.0), 1.0), "");
        assert_eq!(ratio(None, 1.0), "");
    }
}
