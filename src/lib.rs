//! `toolscout`: let an LLM agent find and use the right tool in a catalog of thousands.
//!
//! This facade re-exports the toolscout libraries; the `toolscout` binary is the CLI.
//!
//! | module | crate | what |
//! |---|---|---|
//! | [`spec`] | `toolscout-spec` | `ToolSpec`, disclosure levels, tokens, format adapters |
//! | [`search`] | `toolscout-search` | `SearchIndex`: exact > prefix > word > fuzzy ranking |
//! | [`embed`] | `toolscout-embed` | `Encoder`: a sentence encoder, so search ranks by meaning too |
//! | [`catalog`] | `toolscout-catalog` | `Catalog`: bundles and tool versions as flat-file JSON |
//! | [`invoke`] | `toolscout-invoke` | `Invoker`: validated calls of native and HTTP tools |
//! | [`discover`] | `toolscout-discover` | `Toolbox` and the `discover_*` meta-tools |
//! | [`agent`] | `toolscout-agent` | `Agent`: the loop over an OpenAI-compatible endpoint |
//! | [`server`] | `toolscout-server` | HTTP manifest, REST, JSON-RPC and MCP |
//!
//! ```
//! let tools = toolscout::spec::sample::catalog();
//! assert!(tools.iter().any(|t| t.name == "get_weather"));
//! assert!(toolscout::catalog::builtin::tool("read_file").is_some());
//! ```

pub use toolscout_agent as agent;
pub use toolscout_catalog as catalog;
pub use toolscout_discover as discover;
#[cfg(feature = "embed")]
pub use toolscout_embed as embed;
pub use toolscout_invoke as invoke;
#[cfg(feature = "remote")]
pub use toolscout_remote as remote;
pub use toolscout_search as search;
#[cfg(feature = "server")]
pub use toolscout_server as server;
pub use toolscout_spec as spec;
