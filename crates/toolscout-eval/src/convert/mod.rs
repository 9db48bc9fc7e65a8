//! Public benchmarks turned into the evaluation format (see the [crate] documentation):
//! each converter reads the benchmark as its authors publish it and returns the tools
//! and the tasks, which [`Converted::write`] puts in `tools.jsonl` and `queries.jsonl`
//! (and the tasks of two tools or more, the multi-tool set, in `multi.jsonl` too).
//!
//! The data is not part of toolscout: fetch the benchmark (e.g. `git clone`), convert it
//! into a folder of your own, and point `toolscout eval` at it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{Error, Result};

mod chains;
mod mcp_bench;
mod seal_tools;

pub use chains::{Chains, chains};
pub use mcp_bench::mcp_bench;
pub use seal_tools::seal_tools;

/// A benchmark in the evaluation format.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Converted {
    /// One object a tool: `{name, description, parameters, bundle?, bundle_description?,
    /// source, meta?}`.
    pub tools: Vec<Value>,
    /// One object a task: `{id, query, expected, offered, calls, source}`.
    pub tasks: Vec<Value>,
    /// What was left out, and why (one line each).
    pub skipped: Vec<String>,
}

/// The files [`Converted::write`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Written {
    /// `tools.jsonl`: every tool.
    pub tools: PathBuf,
    /// `queries.jsonl`: every task.
    pub tasks: PathBuf,
    /// `multi.jsonl`: the tasks whose `expected` names two tools or more, in the same
    /// order (the multi-tool set).
    pub multi: PathBuf,
    /// How many tasks `multi.jsonl` holds.
    pub multi_tasks: usize,
}

impl Converted {
    /// Writes `tools.jsonl`, `queries.jsonl` and `multi.jsonl` into `dir` (created when
    /// missing); see [`Written`].
    pub fn write(&self, dir: &Path) -> Result<Written> {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            path: dir.to_owned(),
            source,
        })?;
        let tools = dir.join("tools.jsonl");
        let tasks = dir.join("queries.jsonl");
        let multi = dir.join("multi.jsonl");
        let several: Vec<Value> = self
            .tasks
            .iter()
            .filter(|task| distinct_expected(task) >= 2)
            .cloned()
            .collect();
        write_lines(&tools, &self.tools)?;
        write_lines(&tasks, &self.tasks)?;
        write_lines(&multi, &several)?;
        Ok(Written {
            tools,
            tasks,
            multi,
            multi_tasks: several.len(),
        })
    }
}

/// How many different tools a task's `expected` names.
fn distinct_expected(task: &Value) -> usize {
    let mut names: Vec<&str> = task["expected"]
        .as_array()
        .map(|e| e.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    names.sort_unstable();
    names.dedup();
    names.len()
}

fn write_lines(path: &Path, values: &[Value]) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
    for v in values {
        writeln!(out, "{v}").map_err(io)?;
    }
    out.flush().map_err(io)
}

/// The lines of a JSONL file, parsed, with their numbers (from 1); blank lines skipped.
pub(crate) fn read_jsonl(path: &Path) -> Result<Vec<(usize, Value)>> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value = serde_json::from_str(line).map_err(|e| Error::Line {
            path: path.to_owned(),
            line: i + 1,
            reason: e.to_string(),
        })?;
        out.push((i + 1, value));
    }
    Ok(out)
}
