use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::model::{Bert, Config};
use crate::tokenizer::Tokenizer;
use crate::{Error, Result};

/// The token limit, `[CLS]` and `[SEP]` included, that sentence-transformers uses for
/// all-MiniLM-L6-v2 (its `tokenizer.json` truncates at 128 too).
pub const DEFAULT_MAX_TOKENS: usize = 128;

/// How many tokens [`Encoder::embed_batch`] stacks into one pass through the model:
/// enough rows that streaming the weights costs little next to the arithmetic, few
/// enough that the activations stay small (about 4 MB for all-MiniLM-L6-v2).
pub const GROUP_TOKENS: usize = 512;

/// A sentence encoder: a WordPiece tokenizer and a BERT whose mean-pooled, L2-normalised
/// last layer is the text's vector.
///
/// Built from a directory holding `config.json`, `tokenizer.json` and
/// `model.safetensors` (f32 weights named as Hugging Face's `BertModel` names them).
/// An `Encoder` is `Send + Sync`; share it behind an `Arc`.
#[derive(Debug)]
pub struct Encoder {
    pub(crate) model: String,
    tokenizer: Tokenizer,
    bert: Bert,
    max_tokens: usize,
}

impl Encoder {
    /// Loads the model in `dir`. The error names the file, and for weights the tensor,
    /// that is missing or wrong.
    pub fn load(dir: &Path) -> Result<Encoder> {
        let config_path = dir.join("config.json");
        let config = Config::from_file(&config_path)?;
        let tokenizer_path = dir.join("tokenizer.json");
        let tokenizer = Tokenizer::from_file(&tokenizer_path)?;
        if tokenizer.max_id() as usize >= config.vocab_size {
            return Err(Error::Tokenizer {
                path: tokenizer_path,
                message: format!(
                    "token id {} is outside the model's vocab_size {} ({})",
                    tokenizer.max_id(),
                    config.vocab_size,
                    config_path.display()
                ),
            });
        }
        let bert = Bert::load(config, &dir.join("model.safetensors"))?;
        let model = dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string());
        Ok(Encoder {
            model,
            tokenizer,
            max_tokens: DEFAULT_MAX_TOKENS.min(bert.config().max_position_embeddings),
            bert,
        })
    }

    /// Sets the token limit, `[CLS]` and `[SEP]` included; longer texts are cut. The
    /// limit is clamped to `2..=max_position_embeddings`.
    pub fn with_max_tokens(mut self, n: usize) -> Self {
        self.max_tokens = n.clamp(2, self.bert.config().max_position_embeddings);
        self
    }

    /// The model's name: the file name of the directory it was loaded from.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The token limit, `[CLS]` and `[SEP]` included.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The length of every vector.
    pub fn dim(&self) -> usize {
        self.bert.config().hidden_size
    }

    /// The token ids the model sees for `text`, `[CLS]` first and `[SEP]` last.
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, self.max_tokens)
    }

    /// The unit-length vector of one text.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let ids = self.token_ids(text);
        self.bert
            .embed(std::slice::from_ref(&ids))
            .pop()
            .unwrap_or_default()
    }

    /// The vectors of many texts, in order; each is exactly what
    /// [`embed_one`](Self::embed_one) gives for that text.
    ///
    /// Consecutive texts are grouped up to [`GROUP_TOKENS`] tokens, each group is run
    /// through the model as one stack of tokens, and the groups run in parallel.
    pub fn embed_batch(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        let ids: Vec<Vec<u32>> = texts.par_iter().map(|text| self.token_ids(text)).collect();
        let mut groups = Vec::new();
        let mut start = 0;
        let mut tokens = 0;
        for (i, text) in ids.iter().enumerate() {
            if tokens > 0 && tokens + text.len() > GROUP_TOKENS {
                groups.push(start..i);
                start = i;
                tokens = 0;
            }
            tokens += text.len();
        }
        if start < ids.len() {
            groups.push(start..ids.len());
        }
        let vectors: Vec<Vec<Vec<f32>>> = groups
            .into_par_iter()
            .map(|group| self.bert.embed(&ids[group]))
            .collect();
        vectors.into_iter().flatten().collect()
    }
}

impl toolscout_search::Embedder for Encoder {
    fn model(&self) -> &str {
        &self.model
    }

    fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        self.embed_batch(texts)
    }
}

/// Where the model is looked for: `$TOOLSCOUT_MODEL_DIR`, else
/// `$XDG_CACHE_HOME/toolscout/models/all-MiniLM-L6-v2`, else
/// `~/.cache/toolscout/models/all-MiniLM-L6-v2`; `None` without a home directory.
/// `scripts/fetch-model.sh` puts the model in the same place.
pub fn default_model_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("TOOLSCOUT_MODEL_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    Some(
        cache_root()?
            .join("toolscout")
            .join("models")
            .join("all-MiniLM-L6-v2"),
    )
}

/// `$XDG_CACHE_HOME`, else `~/.cache`.
pub(crate) fn cache_root() -> Option<PathBuf> {
    match std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => std::env::home_dir().map(|home| home.join(".cache")),
    }
}
