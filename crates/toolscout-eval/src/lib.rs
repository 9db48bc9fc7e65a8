//! `toolscout-eval`: measure how well toolscout finds and uses the tools of a catalog.
//!
//! | piece | what |
//! |---|---|
//! | [`convert`] | public benchmarks turned into the evaluation format: [`convert::seal_tools`] |
//!
//! The evaluation format is two JSON Lines files. `tools.jsonl` holds one tool a line,
//! `{name, description, parameters}` (the JSONL adapter of `toolscout-spec`), with
//! `bundle` and `bundle_description` when the tool belongs to an API or server.
//! `queries.jsonl` holds one task a line: `{id, query, expected, offered, calls,
//! source}` — the request, the tools a right answer calls, the tools the benchmark
//! offered for it (what an oracle is handed), and the calls the benchmark's answer makes
//! (`{tool, arguments}`), when it has them.

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod convert;
mod error;

pub use error::{Error, Result};
