//! The errors of this crate.

use std::path::PathBuf;

/// What can go wrong reading evaluation data, converting it or running an evaluation.
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
    /// A setting of an evaluation is out of its range.
    #[error("{setting}: {reason}")]
    Setting {
        /// The setting, e.g. `top_k`.
        setting: &'static str,
        /// What it must be.
        reason: &'static str,
    },
    /// Indexing or searching the tools failed.
    #[error(transparent)]
    Search(#[from] toolscout_search::Error),
    /// Storing the tools in the evaluation's catalog failed.
    #[error(transparent)]
    Catalog(#[from] toolscout_catalog::Error),
    /// Opening the evaluation's toolbox failed.
    #[error(transparent)]
    Discover(#[from] toolscout_discover::Error),
    /// Registering the evaluation's stub tool failed.
    #[error(transparent)]
    Invoke(#[from] toolscout_invoke::Error),
    /// An agent configuration is not valid.
    #[error(transparent)]
    Agent(#[from] toolscout_agent::Error),
    /// An index reopened from its directory does not hold what was written to it.
    #[error("the reopened index holds {found} tools, expected {expected}")]
    Reopened {
        /// Tools it holds.
        found: u64,
        /// Tools written.
        expected: usize,
    },
    /// A worker thread of an evaluation panicked.
    #[error("a {0} thread panicked")]
    Panicked(&'static str),
}

/// This crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
