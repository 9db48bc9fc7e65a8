//! Public benchmarks turned into the evaluation format (see the [crate] documentation):
//! each converter reads the benchmark as its authors publish it and returns the tools
//! and the tasks, which [`Converted::write`] puts in `tools.jsonl` and `queries.jsonl`.
//!
//! The data is not part of toolscout: fetch the benchmark (e.g. `git clone`), convert it
//! into a folder of your own, and point `toolscout eval` at it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{Error, Result};

mod chains;
mod seal_tools;

pub use chains::{Chains, chains};
pub use seal_tools::seal_tools;

/// A benchmark in the evaluation format.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Converted {
    /// One object a tool: `{name, description, parameters, bundle?, bundle_description?,
    /// source}`.
    pub tools: Vec<Value>,
    /// One object a task: `{id, query, expected, offered, calls, source}`.
    pub tasks: Vec<Value>,
    /// What was left out, and why (one line each).
    pub skipped: Vec<String>,
}

impl Converted {
    /// Writes `tools.jsonl` and `queries.jsonl` into `dir` (created when missing);
    /// returns their paths.
    pub fn write(&self, dir: &Path) -> Result<(PathBuf, PathBuf)> {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            path: dir.to_owned(),
            source,
        })?;
        let tools = dir.join("tools.jsonl");
        let tasks = dir.join("queries.jsonl");
        write_lines(&tools, &self.tools)?;
        write_lines(&tasks, &self.tasks)?;
        Ok((tools, tasks))
    }
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
