//! `toolscout-spec`: the tool model shared by all of toolscout.
//!
//! A [`ToolSpec`] describes one tool at three levels of detail, so that a model can
//! browse thousands of tools and load the full schema of only the few it calls:
//!
//! | level | what | method |
//! |---|---|---|
//! | 1 | name + one-line summary | [`ToolSpec::level1`] |
//! | 2 | description, usage, parameter names, returns | [`ToolSpec::level2`] |
//! | 3 | full parameter schemas, examples, errors, notes | [`ToolSpec::level3`] |
//! | — | one parameter in detail | [`ToolSpec::parameter`] |
//!
//! Each level renders as JSON and as compact text for a model ([`Disclosure`]), and both
//! are measured in tokens ([`tokens`]). [`adapters`] convert to and from OpenAI function
//! calling, MCP, the tool-discovery manifest, the flat-file `tool.json` and JSONL;
//! [`identity`] gives a set of tools a deterministic UUID.
//!
//! The crate does no IO and has no async code.
//!
//! ```
//! use toolscout_spec::{Level, sample};
//!
//! let tools = sample::catalog();
//! let read_file = tools.iter().find(|t| t.name == "read_file").unwrap();
//! assert_eq!(read_file.disclose(Level::L1).to_text(), "read_file — Read a text file, whole or a range of lines");
//! let l3 = read_file.disclose(Level::L3);
//! assert!(l3.to_text().contains("offset (integer, default 1, minimum 1)"));
//! assert!(l3.tokens() > read_file.disclose(Level::L2).tokens());
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod adapters;
pub mod disclosure;
mod error;
pub mod identity;
pub mod jsonpath;
pub mod name;
pub mod recipe;
pub mod sample;
mod spec;
pub mod suggest;
pub mod template;
pub mod tokens;
mod typed;
mod usage;

pub use disclosure::{Disclosure, Level, Level1, Level2, Level3, ParameterDetail};
pub use error::{Error, Result};
pub use name::ToolName;
pub use spec::{
    Cost, ErrorCase, Example, MAX_UTTERANCE_CHARS, MAX_UTTERANCES, Metadata, ToolSpec,
    ToolSpecBuilder, empty_object_schema,
};
pub use typed::schema_for;

/// Re-exported so that users of [`ToolSpec::from_args`] need no direct dependency.
pub use schemars;
