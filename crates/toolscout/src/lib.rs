//! `toolscout`: let an LLM agent find and use the right tool in a catalog of thousands.
//!
//! This facade re-exports the toolscout libraries. The `toolscout` command is its own
//! package, `toolscout-cli` (`cargo install toolscout-cli`).
//!
//! | module | crate | feature | what |
//! |---|---|---|---|
//! | [`spec`] | `toolscout-spec` | default | `ToolSpec`, disclosure levels, tokens, format adapters (OpenAI, MCP, OpenAPI…) |
//! | [`search`] | `toolscout-search` | default | `SearchIndex`: exact > prefix > word > fuzzy ranking |
//! | [`catalog`] | `toolscout-catalog` | default | `Catalog`: bundles and tool versions as flat-file JSON; lint rules |
//! | [`invoke`] | `toolscout-invoke` | default | `Invoker`: validated calls of native and HTTP tools |
//! | [`discover`] | `toolscout-discover` | default | `Toolbox` (and its builder) and the `discover_*` meta-tools |
//! | [`agent`] | `toolscout-agent` | default | `Agent` (and its builder): the loop over an OpenAI-compatible endpoint |
//! | `embed` | `toolscout-embed` | `embed` (default; `transformer` adds BERTs) | `Encoder`: a sentence encoder, so search ranks by meaning too |
//! | `remote` | `toolscout-remote` | `remote` | `RemoteCatalog`: other toolscout servers' tools, as a client |
//! | `server` | `toolscout-server` | `server` (`mcp` adds MCP) | HTTP manifest, REST, JSON-RPC, MCP and the web console |
//!
//! The default features are the library core and `embed`: the built-in potion-base-8M
//! (7.7 MB, a table lookup per token), with which `Toolbox::builder()` ranks by meaning
//! as well as by words (`.words_only()` turns it off for one toolbox,
//! `default-features = false` for the build). `transformer` (all-MiniLM-L6-v2 and other
//! BERT folders, through ndarray), `yaml` (YAML OpenAPI documents), `remote`, `server`,
//! `mcp-client` (another MCP server's tools, `invoke::mcp_client`) and `mcp` are opt-in,
//! so an agent that only needs the core builds no HTTP server, MCP, command-line parser
//! or linear algebra.
//!
//! An agent over two of the program's own tools is the README's first example, and
//! discovery in a loop of the program's own its second (both compiled as doctests); the
//! pieces:
//!
//! ```
//! use toolscout::discover::{Lookup, Toolbox};
//!
//! let toolbox = Toolbox::builder().build()?; // add `.native(MyTool)`, `.http_from_openapi(…)`
//! assert!(matches!(toolbox.lookup("get_weather"), Lookup::NotFound { .. }));
//! let agent = toolscout::agent::Agent::builder("assistant", "qwen2.5")
//!     .endpoint("http://127.0.0.1:8080/v1", "none")
//!     .toolbox(toolbox)
//!     .build()?;
//! assert_eq!(agent.config().model(), "qwen2.5");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

/// The types most programs name, in one `use toolscout::prelude::*;`: an agent over a
/// toolbox of the program's own tools ([`Agent`](prelude::Agent),
/// [`Toolbox`](prelude::Toolbox), [`NativeTool`](prelude::NativeTool)), or discovery in a
/// loop of its own ([`DiscoverTools`](prelude::DiscoverTools), then
/// [`Toolbox::call`](prelude::Toolbox::call)'s [`Outcome`](prelude::Outcome)).
///
/// ```
/// use toolscout::prelude::*;
///
/// let toolbox = Toolbox::builder().build()?;
/// let discover = DiscoverTools::new(toolbox.clone());
/// assert_eq!(discover.spec()?.name, "discover_tools");
/// assert!(matches!(toolbox.lookup("get_weather"), Lookup::NotFound { .. }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub mod prelude {
    pub use toolscout_agent::{Agent, AgentEvent};
    pub use toolscout_discover::{DiscoverTools, Lookup, Toolbox};
    pub use toolscout_invoke::{ErrorKind, NativeTool, Outcome, ToolError};
    pub use toolscout_spec::{Level, ToolSpec};
}

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

/// The README's Rust examples, compiled (and run, unless marked `no_run`) as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
