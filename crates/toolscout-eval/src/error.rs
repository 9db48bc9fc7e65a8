//! The errors of this crate.

use std::path::PathBuf;

/// What can go wrong reading or converting evaluation data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line of a file is not what its format says.
    #[error("{}, line {line}: {reason}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// This crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
