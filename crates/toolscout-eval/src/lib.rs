//! `toolscout-eval`: measure how well toolscout finds and uses the tools of a catalog —
//! yours, or a public benchmark's. The `toolscout eval` and `toolscout bench search`
//! commands are a thin layer over it.
//!
//! | module | what |
//! |---|---|
//! | [`read`] | the evaluation format: [`read::ToolLines`] (tools and their bundles), [`read::Task`], [`read::LabelledQuery`], plain or `.gz` |
//! | [`search`] | search quality: [`search::SearchEval`] → [`search::SearchReport`] of recall@1/5/10 and MRR ([`search::Metrics`]), toolscout vs. a plain BM25 |
//! | [`retrieve`] | the agent's retrieve step without a model: [`retrieve::RetrieveEval`] → [`retrieve::RetrieveReport`] (twins, margins, confidence, first-turn recall) |
//! | [`agent`] | the agent loop with a model: [`agent::build_toolbox`], the oracle [`agent::OfferedHost`], [`agent::Outcome`] of a task's events, [`agent::Totals`] → [`agent::Figures`] |
//! | [`results`] | an agent run's outcomes kept on disk, a task a line, to resume from ([`results::Results`]) and to read back ([`results::read`]) |
//! | [`compare`] | runs side by side over the tasks they all finished, against the first (the oracle): [`compare::compare`] → [`compare::Compared`] |
//! | [`bench`](mod@bench) | search speed: [`bench::SearchBench`] → [`bench::BenchReport`] (build, reopen, p50/p99, against a naive scan) |
//! | [`convert`] | public benchmarks turned into the evaluation format: [`convert::seal_tools`] |
//!
//! The evaluation format is two JSON Lines files. `tools.jsonl` holds one tool a line,
//! `{name, description, parameters}` (the JSONL adapter of `toolscout-spec`), with
//! `bundle` and `bundle_description` when the tool belongs to an API or server.
//! `queries.jsonl` holds one task a line: `{id, query, expected, offered, calls,
//! source}` — the request, the tools a right answer calls, the tools the benchmark
//! offered for it (what an oracle is handed), and the calls the benchmark's answer makes
//! (`{tool, arguments}`), when it has them.
//!
//! Search quality over a catalog of your own, in a few lines:
//!
//! ```
//! use toolscout_eval::read::{LabelledQuery, tool_lines_of};
//! use toolscout_eval::search::SearchEval;
//!
//! let tools = tool_lines_of(concat!(
//!     r#"{"name": "get_weather", "description": "Get the current weather in a city."}"#, "\n",
//!     r#"{"name": "send_email", "description": "Send an email to a recipient."}"#, "\n",
//! ));
//! let queries = [LabelledQuery::new("weather in Paris", &["get_weather"])];
//! let report = SearchEval::default().run(&tools, &queries, &mut |_| {})?;
//! assert_eq!(report.all.toolscout.recall_at_1(), 1.0);
//! # Ok::<(), toolscout_eval::Error>(())
//! ```
//!
//! Errors are [`Error`]s: a file that cannot be read names it, a bad line of a tasks
//! file names its file and line. Nothing here prints: what to show is the caller's.

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod agent;
pub mod bench;
pub mod compare;
pub mod convert;
mod error;
pub mod read;
pub mod results;
pub mod retrieve;
pub mod search;

pub use error::{Error, Result};
