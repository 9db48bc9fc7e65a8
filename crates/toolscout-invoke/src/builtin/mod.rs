//! The native implementations of the catalog's built-in tools.
//!
//! | tool | does |
//! |---|---|
//! | `read_file` | reads a text file of the workspace, whole or a range of lines |
//! | `write_file` | writes (atomically) or appends to a file of the workspace |
//! | `search_files` | finds files of the workspace by glob pattern |
//! | `http_get` | fetches a URL of an allowed host |
//! | `json_query` | runs an RFC 9535 JSONPath query over a JSON value |
//! | `clock` | tells the time in a time zone, or converts a time to one |
//!
//! Each argument type derives `Deserialize + JsonSchema`, so the schema comes from the
//! type; the catalog's hand-written specs use the same property names, types and
//! required lists. File tools are confined to a workspace root: `..` that climbs out
//! and symlinks that lead out are refused (`outside_workspace`).
//!
//! ```
//! use toolscout_invoke::builtin::{self, BuiltinConfig};
//! use toolscout_invoke::{AllowedHosts, Invoker};
//!
//! let root = tempfile::tempdir().unwrap();
//! let mut invoker = Invoker::default();
//! let config = BuiltinConfig::new(root.path(), AllowedHosts::new(["api.example.com"]));
//! let specs = builtin::register(&mut invoker, &config).unwrap();
//! assert_eq!(specs.len(), builtin::NAMES.len());
//! assert!(invoker.is_registered("read_file"));
//! ```

mod data;
mod fs;
mod net;
mod workspace;

use std::path::PathBuf;

use toolscout_spec::ToolSpec;

use crate::{AllowedHosts, HttpConfig, Invoker, Result};

pub use data::{
    Clock, ClockAction, ClockArgs, ClockOutput, JSON_QUERY_MAX_COST, JSON_QUERY_MAX_MATCHES,
    JSON_QUERY_MAX_NODES, JSON_QUERY_MAX_RESULT_BYTES, JsonQuery, JsonQueryArgs, query_cost,
};
pub use fs::{
    MAX_GLOB_BYTES, MAX_GLOB_NESTING, ReadFile, ReadFileArgs, SearchFiles, SearchFilesArgs,
    WriteFile, WriteFileArgs, WriteMode, WriteOutput,
};
pub use net::{HttpGet, HttpGetArgs, HttpGetOutput};
pub use workspace::Workspace;

/// A slot of the CPU-bound work of built-in tools (`json_query`): as many as the machine
/// has cores, shared by every invoker of the process. Held until the work is done, also
/// when the call that started it has timed out.
pub(crate) async fn cpu_slot() -> Option<tokio::sync::OwnedSemaphorePermit> {
    static SLOTS: std::sync::OnceLock<std::sync::Arc<tokio::sync::Semaphore>> =
        std::sync::OnceLock::new();
    let slots = SLOTS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        std::sync::Arc::new(tokio::sync::Semaphore::new(cores))
    });
    // `None` only if the semaphore were closed, which it never is.
    std::sync::Arc::clone(slots).acquire_owned().await.ok()
}

/// Drops the `"default": null` schemars gives optional fields: an absent value is
/// simply absent, and the catalog's hand-written schemas have no such default.
pub(crate) fn no_default(schema: &mut schemars::Schema) {
    schema.remove("default");
}

/// `{"oneOf": [{"const": "a"}, …]}` (what documented unit variants give) as
/// `{"type": "string", "enum": ["a", …]}`, the form of the catalog's schemas.
pub(crate) fn plain_enum(schema: &mut schemars::Schema) {
    let Some(one_of) = schema.get("oneOf").and_then(serde_json::Value::as_array) else {
        return;
    };
    let consts: Option<Vec<serde_json::Value>> =
        one_of.iter().map(|v| v.get("const").cloned()).collect();
    if let Some(consts) = consts {
        schema.remove("oneOf");
        schema.insert("type".to_owned(), "string".into());
        schema.insert("enum".to_owned(), consts.into());
    }
}

/// The names of the built-in tools, in the order [`register`] registers them.
pub const NAMES: [&str; 6] = [
    "read_file",
    "write_file",
    "search_files",
    "http_get",
    "json_query",
    "clock",
];

/// What the built-in tools need: the workspace the file tools are confined to, and the
/// HTTP policy of `http_get`.
#[derive(Debug, Clone)]
pub struct BuiltinConfig {
    /// Root of the files the file tools may touch.
    pub workspace_root: PathBuf,
    /// Allowed hosts and limits of `http_get`.
    pub http: HttpConfig,
}

impl BuiltinConfig {
    /// A workspace root and the hosts `http_get` may reach, with default HTTP limits.
    pub fn new(workspace_root: impl Into<PathBuf>, allowed_hosts: AllowedHosts) -> Self {
        BuiltinConfig {
            workspace_root: workspace_root.into(),
            http: HttpConfig::with_allowed_hosts(allowed_hosts),
        }
    }
}

/// Registers every built-in tool on `invoker`; returns their specs in [`NAMES`] order.
pub fn register(invoker: &mut Invoker, config: &BuiltinConfig) -> Result<Vec<ToolSpec>> {
    let workspace = Workspace::new(&config.workspace_root)?;
    Ok(vec![
        invoker.register(ReadFile::new(workspace.clone()))?,
        invoker.register(WriteFile::new(workspace.clone()))?,
        invoker.register(SearchFiles::new(workspace))?,
        invoker.register(HttpGet::new(config.http.clone()))?,
        invoker.register(JsonQuery)?,
        invoker.register(Clock)?,
    ])
}
