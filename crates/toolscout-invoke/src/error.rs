//! The one error type of `toolscout-invoke`: what can go wrong while setting an
//! [`crate::Invoker`] up.
//!
//! A failed *call* is not an `Err`: it is an [`crate::Outcome`] holding a
//! [`crate::ToolError`], which goes back to the model as data.

use std::path::PathBuf;

/// What went wrong while building a [`crate::InvokableTool`], registering a native tool, or
/// loading secrets.
///
/// No variant ever carries a secret's value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tool's spec is invalid.
    #[error(transparent)]
    Spec(#[from] toolscout_spec::Error),
    /// A tool's `impl` block could not be read or is invalid.
    #[error("tool '{tool}': invalid impl block: {reason}")]
    ImplBlock {
        /// The tool.
        tool: String,
        /// What is wrong with the block.
        reason: String,
    },
    /// A native tool with this name is already registered.
    #[error("a native tool named '{name}' is already registered")]
    DuplicateTool {
        /// The name registered twice.
        name: String,
    },
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A secrets file is not a JSON object of strings.
    #[error("secrets file {}: {reason}", path.display())]
    SecretsFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it (never a value).
        reason: String,
    },
    /// An MCP server could not be started, reached or listed (feature `mcp-client`).
    #[error("MCP server `{command}`: {reason}")]
    Mcp {
        /// The command that starts it.
        command: String,
        /// What went wrong.
        reason: String,
    },
    /// The workspace root of the built-in tools is unusable.
    #[error("workspace root {}: {reason}", path.display())]
    WorkspaceRoot {
        /// The root given.
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
