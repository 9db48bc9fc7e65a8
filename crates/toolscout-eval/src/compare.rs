//! Runs of `eval agent --results` side by side: each run's [`Figures`] over the tasks
//! every run finished, so that two runs are judged on the same tasks (a run stopped
//! half-way, or one resumed on another machine, holds fewer), with each figure's ratio to
//! the first run's — the baseline, such as the oracle (`--policy offered`).
//! `toolscout eval compare` prints them.
//!
//! ```
//! use toolscout_eval::agent::Outcome;
//! use toolscout_eval::compare::compare;
//! use toolscout_eval::read::Task;
//! use toolscout_eval::results::{Results, read};
//!
//! # let dir = tempfile::tempdir()?;
//! let weather = Task::new("Weather in Paris", &["get_weather"]);
//! let mail = Task::new("Mail bob the forecast", &["get_weather", "send_email"]);
//! let mut called = Outcome::default();
//! called.expected_called = true;
//! called.called_ok = ["get_weather".to_owned()].into();
//! let (oracle, default) = (dir.path().join("oracle.jsonl"), dir.path().join("default.jsonl"));
//! let mut runs = Results::open(&oracle, &serde_json::json!({"policy": "offered"}))?;
//! runs.keep(&weather, &called)?;
//! runs.keep(&mail, &called)?;
//! // The default's run has finished one task so far.
//! Results::open(&default, &serde_json::json!({"policy": "retrieve"}))?.keep(&weather, &Outcome::default())?;
//!
//! let compared = compare(&[("oracle".into(), read(&oracle)?), ("default".into(), read(&default)?)]);
//! assert_eq!(compared.paired, 1);
//! assert_eq!(compared.runs[0].left_out, 1);
//! let relevant = |i: usize| compared.runs[i].relevant.as_ref().map(|f| f.success_rate);
//! assert_eq!((relevant(0), relevant(1)), (Some(1.0), Some(0.0)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::Value;

use crate::agent::{Figures, Totals};
use crate::read::Task;
use crate::results::Record;

/// Runs compared over the tasks they all finished ([`compare`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Compared {
    /// The tasks every run holds an outcome of, none of them cut short by the endpoint
    /// ([`Outcome::endpoint_failed`](crate::agent::Outcome::endpoint_failed)): the tasks
    /// every run's figures are over.
    pub paired: usize,
    /// Each run, in the order given; the first is the baseline.
    pub runs: Vec<ComparedRun>,
}

/// One run of a [`Compared`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ComparedRun {
    /// The run's name.
    pub name: String,
    /// The settings of the run that made its outcomes (`Value::Null` for a run without
    /// any).
    pub settings: Value,
    /// The run's outcomes left out: of tasks another run has not finished, or cut short
    /// by an endpoint in some run.
    pub left_out: usize,
    /// The figures of the paired relevant tasks (`None` when there are none); with the
    /// retrieval's when the run's policy was `retrieve`.
    pub relevant: Option<Figures>,
    /// The figures of the paired irrelevance tasks (no expected tool), with the
    /// abstention's (`None` when there are none).
    pub irrelevance: Option<Figures>,
}

/// The figures of each of `runs` (a name and the records of its results file, such as
/// [`crate::results::read`] gives) over the tasks all of them finished, in the first run's
/// order. A task is its query and expected tools, as in a results file. A task some run
/// holds an outcome of that the endpoint cut short (an older file may) is left out of
/// every run: it says nothing of the agent.
pub fn compare(runs: &[(String, Vec<Record>)]) -> Compared {
    type Key = (String, Vec<String>);
    let key = |r: &Record| (r.query.clone(), r.expected.clone());
    let by_task: Vec<HashMap<Key, &Record>> = runs
        .iter()
        .map(|(_, records)| records.iter().map(|r| (key(r), r)).collect())
        .collect();
    let cut_short: HashSet<Key> = runs
        .iter()
        .flat_map(|(_, records)| records)
        .filter(|r| r.outcome.endpoint_failed())
        .map(key)
        .collect();
    let mut paired: Vec<Key> = Vec::new();
    let mut seen: HashSet<Key> = HashSet::new();
    if let Some((_, first)) = runs.first() {
        for record in first {
            let k = key(record);
            if !cut_short.contains(&k)
                && by_task.iter().all(|run| run.contains_key(&k))
                && seen.insert(k.clone())
            {
                paired.push(k);
            }
        }
    }
    let compared_runs = runs
        .iter()
        .zip(&by_task)
        .map(|((name, records), tasks)| {
            let (mut relevant, mut irrelevant) = (Totals::default(), Totals::default());
            for k in &paired {
                let Some(record) = tasks.get(k) else { continue };
                let expected: Vec<&str> = record.expected.iter().map(String::as_str).collect();
                let task = Task::new(record.query.as_str(), &expected);
                if task.irrelevant() {
                    irrelevant.add(&task, &record.outcome);
                } else {
                    relevant.add(&task, &record.outcome);
                }
            }
            let settings = records.first().map_or(Value::Null, |r| r.settings.clone());
            let retrieve = settings.get("policy").and_then(Value::as_str) == Some("retrieve");
            ComparedRun {
                name: name.clone(),
                settings,
                left_out: tasks.len().saturating_sub(paired.len()),
                relevant: (relevant.tasks > 0).then(|| relevant.figures(retrieve)),
                irrelevance: (irrelevant.tasks > 0).then(|| irrelevant.irrelevance_figures()),
            }
        })
        .collect();
    Compared {
        paired: paired.len(),
        runs: compared_runs,
    }
}
