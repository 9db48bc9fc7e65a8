//! `toolscout-discover`: the `discover_*` meta-tools a model browses a catalog with, and
//! the [`Toolbox`] handle behind them.
//!
//! * [`Toolbox::builder`] ([`ToolboxBuilder`]) makes a toolbox over the program's own
//!   native, HTTP and OpenAPI tools, with a private catalog and an in-memory index,
//!   ranked by meaning too with the feature `embed` (the built-in potion-base-8M).
//! * [`Toolbox`] owns a [`Catalog`](toolscout_catalog::Catalog), its
//!   [`SearchIndex`](toolscout_search::SearchIndex) and an
//!   [`Invoker`](toolscout_invoke::Invoker), and keeps the index in step with every
//!   catalog change. [`Toolbox::lookup`] resolves a name (found, disabled with a reason,
//!   or not found with the closest names); [`Toolbox::call`] calls a tool.
//! * [`DiscoverTools`] is one meta-tool over a [`Scope`] of the catalog: no arguments →
//!   categories with counts (large scopes) or the level-1 list; `query` → ranked hits;
//!   `tool` → level 2; `tool` + `detail:"full"` → level 3; `tool` + `parameter` → one
//!   parameter; `max_tokens` → the deepest level that fits. Its own [`ToolSpec`] comes
//!   from [`DiscoverTools::spec`].
//! * [`DiscoverAgents`] lists specialist agents ([`AgentProfile`]) the same way.
//! * [`snapshot`] renders what a catalog discloses as stable strings for `insta` tests.
//!
//! The texts the model reads are in `prompts/` and compiled in. The crate is synchronous
//! but for [`Toolbox::call`], which awaits the invoker.
//!
//! ```
//! use serde_json::json;
//! use toolscout_discover::{DiscoverTools, Toolbox};
//!
//! let dir = tempfile::tempdir()?;
//! let catalog = toolscout_catalog::Catalog::open(dir.path(), &toolscout_catalog::builtin::NATIVE_FUNCTIONS)?;
//! let index = toolscout_search::SearchIndex::in_memory()?;
//! let toolbox = Toolbox::new(catalog, index, toolscout_invoke::Invoker::default())?;
//!
//! let discover = DiscoverTools::new(toolbox);
//! let hits = discover.answer(&json!({"query": "read a file"}));
//! assert_eq!(hits.reply["tools"][0]["name"], "read_file");
//! let usage = discover.answer(&json!({"tool": "read_file"}));
//! assert_eq!(usage.reply["level"], 2);
//! assert_eq!(usage.disclosed, ["read_file"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`ToolSpec`]: toolscout_spec::ToolSpec

#![cfg_attr(test, allow(clippy::unwrap_used))]

mod activation;
mod agents;
mod args;
mod builder;
mod call_tool;
mod error;
mod recipe;
pub mod snapshot;
mod toolbox;
mod tools;

pub use activation::{
    Activated, ActivationList, DEFAULT_ACTIVATE_HITS, DEFAULT_ACTIVATION_CAP, Standing,
};
pub use agents::{AgentProfile, DiscoverAgents};
pub use args::{BriefDiscoverArgs, Detail, DiscoverAgentsArgs, DiscoverArgs};
pub use builder::{DEFAULT_BUNDLE, ToolboxBuilder};
pub use call_tool::{CALL_TOOL, call_tool_spec};
pub use error::{Error, Result};
pub use recipe::{Progress, RecipeEvent};
pub use toolbox::{
    AUDIT_EVERY, Audit, Call, Follower, IndexSync, Lookup, ToolHits, Toolbox, call_looked_up,
    listed_spec,
};
pub use tools::{
    Answer, DEFAULT_OVERVIEW_THRESHOLD, DEFAULT_USAGE_HITS, DiscoverTools, MAX_SIMILAR_SHOWN,
    Scope, marked,
};
