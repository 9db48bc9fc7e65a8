//! The one error type of `toolscout-discover`.

/// What can go wrong while setting up or updating a [`crate::Toolbox`].
///
/// Answers to a model are never errors: an unknown tool, a bad argument or a disabled
/// tool is a reply the model reads (see [`crate::DiscoverTools::answer`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The catalog failed.
    #[error(transparent)]
    Catalog(#[from] toolscout_catalog::Error),
    /// The search index failed.
    #[error(transparent)]
    Search(#[from] toolscout_search::Error),
    /// A spec could not be built.
    #[error(transparent)]
    Spec(#[from] toolscout_spec::Error),
    /// A tool could not be registered with the invoker (two native tools of one name, an
    /// HTTP template that does not check out).
    #[error(transparent)]
    Invoke(#[from] toolscout_invoke::Error),
    /// The built-in sentence encoder did not load (feature `embed`).
    #[cfg(feature = "embed")]
    #[error(transparent)]
    Embed(#[from] toolscout_embed::Error),
    /// A file given to a [`crate::ToolboxBuilder`] could not be used.
    #[error("{}: {reason}", path.display())]
    File {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
