//! `toolscout`: let an LLM agent find and use the right tool in a catalog of thousands.
//!
//! This facade re-exports the toolscout libraries; the `toolscout` binary is the CLI.
//!
//! | module | crate | what |
//! |---|---|---|
//! | [`spec`] | `toolscout-spec` | `ToolSpec`, disclosure levels, tokens, format adapters |
//!
//! ```
//! let tools = toolscout::spec::sample::catalog();
//! assert!(tools.iter().any(|t| t.name == "get_weather"));
//! ```

pub use toolscout_spec as spec;
