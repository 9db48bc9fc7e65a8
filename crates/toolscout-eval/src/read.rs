//! Reading the evaluation format (see the [crate] documentation): tools with the bundle
//! each line names, tasks, and labelled queries, from JSON Lines files that may be
//! gzip-compressed (a name ending in `.gz`).
//!
//! ```no_run
//! let tools = toolscout_eval::read::tool_lines("data/tools.jsonl.gz".as_ref())?;
//! let tasks = toolscout_eval::read::tasks("data/queries.jsonl".as_ref(), Some(50))?;
//! println!("{} tools, {} skipped lines, {} tasks", tools.len(), tools.skipped.len(), tasks.len());
//! # Ok::<(), toolscout_eval::Error>(())
//! ```

use std::collections::{HashMap, HashSet};
use std::io::Read as _;
use std::path::Path;

use serde_json::Value;
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::jsonl::{self, LineBundle};
use toolscout_spec::name::sanitize_name;

use crate::{Error, Result};

/// The text of a file, decompressed when its name ends in `.gz`.
pub fn text(path: &Path) -> Result<String> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut text = String::new();
    if path.extension().is_some_and(|e| e == "gz") {
        flate2::read::MultiGzDecoder::new(file)
            .read_to_string(&mut text)
            .map_err(io)?;
    } else {
        std::io::BufReader::new(file)
            .read_to_string(&mut text)
            .map_err(io)?;
    }
    Ok(text)
}

/// The tools of a JSONL file and the bundle each line names (the API or server it
/// belongs to), side by side: `bundles[i]` is the bundle of `specs[i]`.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ToolLines {
    /// The tools, in the file's order.
    pub specs: Vec<ToolSpec>,
    /// The bundle each tool's line names, if any.
    pub bundles: Vec<Option<LineBundle>>,
    /// The lines that hold no tool, in the file's order: read past, not fatal.
    pub skipped: Vec<SkippedLine>,
}

/// A line of a tools file that is not a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SkippedLine {
    /// The line, from 1.
    pub line: usize,
    /// Why it is not a tool.
    pub reason: String,
}

impl ToolLines {
    /// Tools without bundles.
    pub fn new(specs: Vec<ToolSpec>) -> Self {
        ToolLines {
            bundles: vec![None; specs.len()],
            specs,
            skipped: Vec::new(),
        }
    }

    /// Appends a tool and the bundle its line names.
    pub fn push(&mut self, spec: ToolSpec, bundle: Option<LineBundle>) {
        self.specs.push(spec);
        self.bundles.push(bundle);
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.specs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Appends `other`'s tools whose names are not taken (distractors beside a
    /// benchmark's own tools); its skipped lines are not kept.
    pub fn extend_new(&mut self, other: ToolLines) {
        let names: HashSet<String> = self.specs.iter().map(|t| t.name.to_string()).collect();
        for (spec, bundle) in other.specs.into_iter().zip(other.bundles) {
            if !names.contains(spec.name.as_str()) {
                self.push(spec, bundle);
            }
        }
    }

    /// Each tool's server: the name of the bundle its line names (tools in none are
    /// left out), as [`Outcome::with_servers`](crate::agent::Outcome::with_servers) asks.
    pub fn servers(&self) -> HashMap<&str, &str> {
        self.specs
            .iter()
            .zip(&self.bundles)
            .filter_map(|(t, b)| Some((t.name.as_str(), b.as_ref()?.name.as_str())))
            .collect()
    }
}

/// Reads tools (`{name, description, parameters}` a line, with `bundle` and
/// `bundle_description` when the tool belongs to an API or server). Lines that are no
/// tool are skipped and listed in [`ToolLines::skipped`]; blank lines are ignored.
pub fn tool_lines(path: &Path) -> Result<ToolLines> {
    Ok(tool_lines_of(&text(path)?))
}

/// [`tool_lines`] over text already read.
pub fn tool_lines_of(text: &str) -> ToolLines {
    let mut lines = ToolLines::default();
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
            Ok((spec, bundle)) => lines.push(spec, bundle),
            Err(reason) => lines.skipped.push(SkippedLine {
                line: i + 1,
                reason,
            }),
        }
    }
    lines
}

/// One task of a tasks file: a request, the tools a right answer calls, and what the
/// benchmark offered and answered.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Task {
    /// The user's request.
    pub query: String,
    /// The tools a right answer calls; empty for an irrelevance task, where no tool fits.
    pub expected: Vec<String>,
    /// The tools the benchmark offered with the request (what an oracle is handed).
    pub offered: Vec<String>,
    /// The calls of the benchmark's answer, when it has them: what a refused call is
    /// compared with.
    pub calls: Vec<ExpectedCall>,
}

/// A call the benchmark's answer makes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExpectedCall {
    /// The tool called.
    pub tool: String,
    /// Its arguments (`null` when the answer gives none).
    pub arguments: Value,
}

impl ExpectedCall {
    /// A call of `tool` with `arguments`.
    pub fn new(tool: impl Into<String>, arguments: Value) -> Self {
        ExpectedCall {
            tool: tool.into(),
            arguments,
        }
    }
}

impl Task {
    /// A task: `query`, answered by calling the `expected` tools (none for an irrelevance
    /// task).
    pub fn new(query: impl Into<String>, expected: &[&str]) -> Self {
        Task {
            query: query.into(),
            expected: expected.iter().map(|t| (*t).to_owned()).collect(),
            ..Task::default()
        }
    }

    /// With the tools the benchmark offered.
    pub fn with_offered(mut self, offered: &[&str]) -> Self {
        self.offered = offered.iter().map(|t| (*t).to_owned()).collect();
        self
    }

    /// With the calls of the benchmark's answer.
    pub fn with_calls(mut self, calls: Vec<ExpectedCall>) -> Self {
        self.calls = calls;
        self
    }

    /// Whether no tool fits the request (`expected` is empty).
    pub fn irrelevant(&self) -> bool {
        self.expected.is_empty()
    }
}

/// The tasks of a JSONL file (`query`, `expected`, `offered`, `calls`: `{tool,
/// arguments}`), tool names sanitized as the catalog stores them; with a `limit`, that
/// many spread evenly over the file ([`spread`]). A line that is not JSON, or has no
/// `query` string, is an error naming the file and the line.
pub fn tasks(path: &Path, limit: Option<usize>) -> Result<Vec<Task>> {
    let text = text(path)?;
    let mut tasks = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |reason: String| Error::Line {
            path: path.to_owned(),
            line: i + 1,
            reason,
        };
        let v: Value = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        let Some(query) = v.get("query").and_then(Value::as_str) else {
            return Err(bad("a task needs \"query\", a string".to_owned()));
        };
        let calls = v
            .get("calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let tool = c.get("tool").and_then(Value::as_str)?;
                Some(ExpectedCall::new(
                    sanitize_name(tool),
                    c.get("arguments").cloned().unwrap_or(Value::Null),
                ))
            })
            .collect();
        tasks.push(Task {
            query: query.to_owned(),
            expected: names(&v, "expected"),
            offered: names(&v, "offered"),
            calls,
        });
    }
    Ok(match limit {
        Some(n) => spread(tasks, n),
        None => tasks,
    })
}

/// The tool names of a line's array `key`, sanitized.
fn names(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(sanitize_name)
        .collect()
}

/// A request labelled with the tools that answer it, for the search evaluation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LabelledQuery {
    /// The request.
    pub text: String,
    /// The tools that answer it (at least one).
    pub expected: Vec<String>,
    /// Where it comes from (`source`; empty when the line does not say), for figures
    /// per source.
    pub source: String,
}

impl LabelledQuery {
    /// `text`, answered by the `expected` tools.
    pub fn new(text: impl Into<String>, expected: &[&str]) -> Self {
        LabelledQuery {
            text: text.into(),
            expected: expected.iter().map(|t| (*t).to_owned()).collect(),
            source: String::new(),
        }
    }

    /// With its source.
    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        self.source = source.into();
        self
    }
}

/// The labelled queries of a JSONL file (`query`, `expected`, `source`); lines without a
/// `query` string or without an expected tool are passed over, a line that is not JSON
/// is an error naming the file and the line.
pub fn labelled_queries(path: &Path) -> Result<Vec<LabelledQuery>> {
    let text = text(path)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| Error::Line {
            path: path.to_owned(),
            line: i + 1,
            reason: e.to_string(),
        })?;
        let expected = names(&v, "expected");
        let Some(text) = v.get("query").and_then(Value::as_str) else {
            continue;
        };
        if expected.is_empty() {
            continue;
        }
        out.push(LabelledQuery {
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

/// The `query` texts of a JSONL file, whatever else its lines hold; lines that are not
/// JSON or have no `query` string are passed over.
pub fn query_texts(path: &Path) -> Result<Vec<String>> {
    let text = text(path)?;
    Ok(text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v.get("query").and_then(Value::as_str).map(str::to_owned))
        .collect())
}

/// Keeps `n` items spread evenly over the list (all of them when `n` is 0 or at least
/// their number), in order: a quick run over a sample of a whole file.
pub fn spread<T>(items: Vec<T>, n: usize) -> Vec<T> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_keeps_n_items_evenly_in_order() {
        let items: Vec<usize> = (0..10).collect();
        assert_eq!(spread(items.clone(), 5), vec![1, 3, 5, 7, 9]);
        assert_eq!(spread(items.clone(), 1), vec![9]);
        assert_eq!(spread(items.clone(), 0), items);
        assert_eq!(spread(items.clone(), 20), items);
    }

    #[test]
    fn a_bad_tool_line_is_skipped_with_its_number() {
        let lines = tool_lines_of(
            "{\"name\": \"a\", \"description\": \"A.\"}\n\nnot json\n{\"name\": \"b\", \"description\": \"B.\", \"bundle\": \"Bees\"}\n",
        );
        let names: Vec<&str> = lines.specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(lines.bundles[0], None);
        assert_eq!(
            lines.bundles[1].as_ref().map(|b| b.name.as_str()),
            Some("Bees")
        );
        assert_eq!(lines.skipped.len(), 1);
        assert_eq!(lines.skipped[0].line, 3);
    }
}
