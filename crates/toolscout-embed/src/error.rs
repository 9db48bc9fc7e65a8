use std::path::{Path, PathBuf};

/// What went wrong loading a model or opening a vector cache, and in which file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read, created or written.
    // The cause is in the message and not also a `source`, so that error chains
    // (`anyhow`'s `{:#}`) do not print it twice.
    #[error("{}: {cause}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        cause: std::io::Error,
    },
    /// A JSON file (`config.json`, `tokenizer.json`) is not valid JSON.
    #[error("{}: invalid JSON: {cause}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's error.
        cause: serde_json::Error,
    },
    /// `config.json` is valid JSON but does not describe a usable BERT.
    #[error("{}: {message}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// What is missing or out of range.
        message: String,
    },
    /// `tokenizer.json` is valid JSON but not a WordPiece or Unigram tokenizer this crate
    /// can run.
    #[error("{}: {message}", path.display())]
    Tokenizer {
        /// The file.
        path: PathBuf,
        /// What is missing or unsupported.
        message: String,
    },
    /// The weight file is not a readable safetensors file.
    #[error("{}: not a valid safetensors file: {message}", path.display())]
    Safetensors {
        /// The file.
        path: PathBuf,
        /// The safetensors reader's error.
        message: String,
    },
    /// A tensor the model needs is missing from the weight file.
    #[error("{}: tensor `{tensor}` is missing", path.display())]
    MissingTensor {
        /// The weight file.
        path: PathBuf,
        /// The tensor's name.
        tensor: String,
    },
    /// A tensor has the wrong element type or shape.
    #[error("{}: tensor `{tensor}` is {found}, expected {expected}", path.display())]
    BadTensor {
        /// The weight file.
        path: PathBuf,
        /// The tensor's name.
        tensor: String,
        /// What the model needs, e.g. `F32 [384, 384]`.
        expected: String,
        /// What the file holds.
        found: String,
    },
    /// The vector cache file belongs to another model, length limit or dimension.
    #[error("{}: vector cache is for {found}, not {expected}; delete it or use another file", path.display())]
    CacheMismatch {
        /// The cache file.
        path: PathBuf,
        /// The encoder's model, token limit and dimension.
        expected: String,
        /// What the file's header says, or why it could not be read.
        found: String,
    },
    /// `config.json` describes a BERT, and this build runs static (model2vec) models only:
    /// the crate's feature `transformer` is off.
    #[error(
        "{}: a BERT model, and this build runs static (model2vec) models only (the `transformer` feature runs BERTs)",
        path.display()
    )]
    NeedsTransformer {
        /// The model's `config.json`.
        path: PathBuf,
    },
    /// A [`Calibration`](crate::Calibration)'s knots are out of order or out of range.
    #[error("calibration: {0}")]
    Calibration(String),
    /// An [`Ensemble`](crate::Ensemble) has no members or a weight that is not positive.
    #[error("ensemble: {0}")]
    Ensemble(String),
}

/// This crate's result.
pub type Result<T> = std::result::Result<T, Error>;

/// The bytes of a model file, or an error that names it.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|cause| Error::Io {
        path: path.to_owned(),
        cause,
    })
}

/// A model's JSON file (`config.json`, `tokenizer.json`), parsed, or an error that names it.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    serde_json::from_slice(&read_file(path)?).map_err(|cause| Error::Json {
        path: path.to_owned(),
        cause,
    })
}
