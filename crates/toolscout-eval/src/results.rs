//! An agent evaluation's outcomes kept on disk, a task a line, so that a run that stops
//! (a killed process, a restarted machine, an endpoint that went away) resumes where it
//! was instead of starting again: `eval agent --results FILE`.
//!
//! Each line is a [`Record`]: the task (its query and expected tools), the settings of
//! the run that made it, and its [`Outcome`]. [`Results::open`] reads the file (creating
//! it when missing) and refuses one that holds another run's settings, so figures of two
//! settings are never mixed; [`Results::kept`] gives a task's outcome when it is there;
//! [`Results::keep`] appends a new one and flushes it to disk before it returns.
//!
//! ```no_run
//! use toolscout_eval::results::Results;
//! # fn demo(tasks: &[toolscout_eval::read::Task]) -> toolscout_eval::Result<()> {
//! let settings = serde_json::json!({"policy": "retrieve", "model": "qwen2.5-coder-1.5b"});
//! let mut results = Results::open("runs/mcp.jsonl".as_ref(), &settings)?;
//! for task in tasks {
//!     if let Some(outcome) = results.kept(task) {
//!         println!("{}: kept, success {}", task.query, outcome.success(task));
//!         continue;
//!     }
//!     // ... run the task, then: results.keep(task, &outcome)?;
//! }
//! # Ok(())
//! # }
//! ```

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::Outcome;
use crate::read::Task;
use crate::{Error, Result};

/// The longest results file read back (a line is a few kilobytes; 71 tasks of MCP-Bench
/// make about 200 KB).
pub const MAX_BYTES: u64 = 256 * 1024 * 1024;

/// One task's outcome as a results file keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Record {
    /// The task's request.
    pub query: String,
    /// The task's expected tools (with the query, what names the task).
    pub expected: Vec<String>,
    /// The settings of the run that made it.
    pub settings: Value,
    /// What the run did.
    pub outcome: Outcome,
}

/// A results file, open for reading back and appending.
#[derive(Debug)]
pub struct Results {
    path: PathBuf,
    file: File,
    settings: Value,
    kept: HashMap<(String, Vec<String>), Outcome>,
}

impl Results {
    /// Opens (or creates) the results file at `path` for a run with `settings`. Every
    /// line must be a [`Record`] of the same settings; a last line cut short (the process
    /// stopped while writing it) is left out and written over by the next record, any
    /// other line that is not a record is an error that names it.
    pub fn open(path: &Path, settings: &Value) -> Result<Results> {
        let io = |source| Error::Io {
            path: path.to_owned(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(io)?;
        let text = whole_text(path, &mut file)?;
        let (records, complete) = parse(path, &text)?;
        let mut kept = HashMap::new();
        for (line, record) in records {
            if record.settings != *settings {
                return Err(Error::Line {
                    path: path.to_owned(),
                    line,
                    reason: format!(
                        "a result of other settings ({}), not of this run's ({}): give this run another file",
                        differences(&record.settings, settings),
                        differences(settings, &record.settings),
                    ),
                });
            }
            kept.insert((record.query, record.expected), record.outcome);
        }
        if complete < text.len() {
            // The process stopped in the middle of a line: drop the piece, so the next
            // record starts its own line.
            file.set_len(complete as u64).map_err(io)?;
        }
        Ok(Results {
            path: path.to_owned(),
            file,
            settings: settings.clone(),
            kept,
        })
    }

    /// The outcome kept for `task`, if the file has one.
    pub fn kept(&self, task: &Task) -> Option<&Outcome> {
        self.kept.get(&(task.query.clone(), task.expected.clone()))
    }

    /// How many tasks' outcomes the file holds.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// Whether the file holds no outcome.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// Appends `task`'s `outcome` and flushes it to disk before returning.
    pub fn keep(&mut self, task: &Task, outcome: &Outcome) -> Result<()> {
        let record = Record {
            query: task.query.clone(),
            expected: task.expected.clone(),
            settings: self.settings.clone(),
            outcome: outcome.clone(),
        };
        let mut line = serde_json::to_string(&record).map_err(|e| Error::Line {
            path: self.path.clone(),
            line: 0,
            reason: format!("a result that cannot be written: {e}"),
        })?;
        line.push('\n');
        let io = |source| Error::Io {
            path: self.path.clone(),
            source,
        };
        self.file.write_all(line.as_bytes()).map_err(io)?;
        self.file.sync_data().map_err(io)?;
        self.kept
            .insert((record.query, record.expected), record.outcome);
        Ok(())
    }
}

/// The records of the results file at `path`, in the file's order, without opening it
/// for writing: what `eval compare` reads. Every line must be a [`Record`], all of one
/// run's settings (a file that mixes two is refused, naming the first line that differs);
/// a last line cut short (the process stopped while writing it) is left out. A task kept
/// twice counts once, as its last line says.
///
/// ```
/// use toolscout_eval::results::{Results, read};
/// # let dir = tempfile::tempdir()?;
/// let path = dir.path().join("oracle.jsonl");
/// let settings = serde_json::json!({"policy": "offered"});
/// let task = toolscout_eval::read::Task::new("Weather in Paris", &["get_weather"]);
/// Results::open(&path, &settings)?.keep(&task, &Default::default())?;
/// let records = read(&path)?;
/// assert_eq!(records.len(), 1);
/// assert_eq!(records[0].settings, settings);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read(path: &Path) -> Result<Vec<Record>> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = File::open(path).map_err(io)?;
    let text = whole_text(path, &mut file)?;
    let (records, _) = parse(path, &text)?;
    let mut out: Vec<Record> = Vec::with_capacity(records.len());
    let mut at: HashMap<(String, Vec<String>), usize> = HashMap::new();
    for (line, record) in records {
        if let Some(first) = out.first()
            && first.settings != record.settings
        {
            return Err(Error::Line {
                path: path.to_owned(),
                line,
                reason: format!(
                    "a result of other settings ({}) than the first line's ({}): a results file holds one run",
                    differences(&record.settings, &first.settings),
                    differences(&first.settings, &record.settings),
                ),
            });
        }
        match at.get(&(record.query.clone(), record.expected.clone())) {
            Some(&i) => out[i] = record,
            None => {
                at.insert((record.query.clone(), record.expected.clone()), out.len());
                out.push(record);
            }
        }
    }
    Ok(out)
}

/// The whole text of the results file `file` at `path`, refused past [`MAX_BYTES`].
fn whole_text(path: &Path, file: &mut File) -> Result<String> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let size = file.metadata().map_err(io)?.len();
    if size > MAX_BYTES {
        return Err(Error::Line {
            path: path.to_owned(),
            line: 0,
            reason: format!("{size} bytes, more than a results file of {MAX_BYTES} bytes can be"),
        });
    }
    let mut text = String::new();
    Read::take(&mut *file, MAX_BYTES)
        .read_to_string(&mut text)
        .map_err(io)?;
    Ok(text)
}

/// The records of a results file's text, each with its line number, and the length of
/// the text up to its last whole line (what follows is a line cut short).
fn parse(path: &Path, text: &str) -> Result<(Vec<(usize, Record)>, usize)> {
    let complete = text.rfind('\n').map_or(0, |i| i + 1);
    let mut records = Vec::new();
    for (i, line) in text[..complete].lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let record: Record = serde_json::from_str(line).map_err(|e| Error::Line {
            path: path.to_owned(),
            line: i + 1,
            reason: format!("not a result of `eval agent --results`: {e}"),
        })?;
        records.push((i + 1, record));
    }
    Ok((records, complete))
}

/// The top-level keys where `a` differs from `b`, as `key=value` (`a`'s values).
fn differences(a: &Value, b: &Value) -> String {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a.to_string();
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("{k}={}", a.get(k).unwrap_or(&Value::Null)))
        .collect::<Vec<_>>()
        .join(", ")
}
