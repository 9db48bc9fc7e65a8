//! The one error type of `toolscout-remote`.

/// What can go wrong while setting up or refreshing a remote catalog.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The catalog failed.
    #[error(transparent)]
    Catalog(#[from] toolscout_catalog::Error),
    /// A file (the overrides file) could not be read or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, e.g. `reading overrides.json`.
        context: String,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// A remote catalog endpoint could not be read.
    #[error("remote catalog {endpoint}: {reason}")]
    Remote {
        /// The endpoint's base URL.
        endpoint: String,
        /// What went wrong.
        reason: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
