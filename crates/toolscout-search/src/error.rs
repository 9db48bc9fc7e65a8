//! The one error type of the crate.

use std::path::PathBuf;

/// What can go wrong while indexing or searching.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The index directory could not be created, opened or read.
    #[error("index directory {path}: {reason}")]
    Directory {
        /// The directory the user named.
        path: PathBuf,
        /// Why it failed.
        reason: String,
    },
    /// The index itself failed (tantivy): a write, a commit, a corrupt segment.
    #[error("search index: {0}")]
    Index(#[from] tantivy::TantivyError),
    /// A page token that this index did not hand out for this query.
    #[error("invalid page token {token:?}: {reason}")]
    PageToken {
        /// The token as received.
        token: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// A writer lock or another process state that makes the call impossible now.
    #[error("index writer unavailable: {0}")]
    Writer(String),
}

/// The result type of the crate.
pub type Result<T> = std::result::Result<T, Error>;
