use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::model::{Bert, Config};
use crate::st_config::{Pooling, Prompts, pooling, prompts};
use crate::table::{STATIC_MAX_TOKENS, Table, is_static};
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
/// last layer is the text's vector, or a static model whose text vector is the
/// L2-normalised mean of its word pieces' vectors.
///
/// Built from a directory holding `config.json`, `tokenizer.json` and
/// `model.safetensors`: for a BERT, f32 weights named as Hugging Face's `BertModel`
/// names them; for a static model (model2vec's format, `"model_type": "model2vec"` in
/// `config.json`, e.g. minishlab/potion-base-8M), an f32 or f16 tensor `embeddings`
/// of a row per token id, and optionally `mapping` (the row of each token id, for a
/// quantised vocabulary) and `weights` (a factor per token id). A static model costs a
/// table lookup per token instead of a transformer pass, and ranks less well.
/// An `Encoder` is `Send + Sync`; share it behind an `Arc`.
#[derive(Debug)]
pub struct Encoder {
    pub(crate) model: String,
    tokenizer: Tokenizer,
    net: Net,
    max_tokens: usize,
    prompts: Prompts,
}

/// What turns token ids into a vector.
#[derive(Debug)]
enum Net {
    Bert(Bert),
    Static(Table),
}

impl Encoder {
    /// Loads the model in `dir`, a BERT or a static model as its `config.json` says. The
    /// error names the file, and for weights the tensor, that is missing or wrong.
    pub fn load(dir: &Path) -> Result<Encoder> {
        let config_path = dir.join("config.json");
        let tokenizer_path = dir.join("tokenizer.json");
        let weights = dir.join("model.safetensors");
        // The vocabulary size, and the file that says it: a static model's table, a
        // BERT's config.
        let (net, vocab_size, vocab_source) = if is_static(&config_path)? {
            let table = Table::load(&weights)?;
            let vocabulary = table.vocabulary();
            (Net::Static(table), vocabulary, &weights)
        } else {
            let config = Config::from_file(&config_path)?;
            let vocab_size = config.vocab_size;
            (
                Net::Bert(Bert::load(config, &weights)?.with_pooling(pooling(dir)?)),
                vocab_size,
                &config_path,
            )
        };
        let tokenizer = Tokenizer::from_file(&tokenizer_path)?;
        if tokenizer.max_id() as usize >= vocab_size {
            return Err(Error::Tokenizer {
                path: tokenizer_path,
                message: format!(
                    "token id {} is outside the model's vocabulary of {vocab_size} ({})",
                    tokenizer.max_id(),
                    vocab_source.display()
                ),
            });
        }
        let model = dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string());
        let mut encoder = Encoder {
            model,
            tokenizer,
            net,
            max_tokens: 0,
            prompts: prompts(dir)?,
        };
        encoder.max_tokens = match encoder.net {
            Net::Bert(_) => DEFAULT_MAX_TOKENS,
            Net::Static(_) => STATIC_MAX_TOKENS,
        }
        .min(encoder.token_limit());
        Ok(encoder)
    }

    /// The longest input the model takes: a BERT's `max_position_embeddings`; a static
    /// model has no such limit, and takes what the vector cache's header can record.
    fn token_limit(&self) -> usize {
        match &self.net {
            Net::Bert(bert) => bert.config().max_position_embeddings,
            Net::Static(_) => u32::MAX as usize,
        }
    }

    /// Sets the token limit, `[CLS]` and `[SEP]` included; longer texts are cut. The
    /// limit is clamped to `2..=max_position_embeddings` (a static model's to
    /// `2..=`[`u32::MAX`]).
    pub fn with_max_tokens(mut self, n: usize) -> Self {
        self.max_tokens = n.clamp(2, self.token_limit());
        self
    }

    /// Whether this is a static model (one vector per word piece), not a BERT.
    pub fn is_static(&self) -> bool {
        matches!(self.net, Net::Static(_))
    }

    /// The model's name: the file name of the directory it was loaded from.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The texts put before queries and documents by [`Encoder::embed_query`] and
    /// [`Encoder::embed_documents`] (from `config_sentence_transformers.json`; none for
    /// all-MiniLM-L6-v2).
    pub fn prompts(&self) -> &Prompts {
        &self.prompts
    }

    /// How a BERT pools its last layer (from `1_Pooling/config.json`; mean without it);
    /// `None` for a static model.
    pub fn pooling(&self) -> Option<Pooling> {
        match &self.net {
            Net::Bert(bert) => Some(bert.pooling()),
            Net::Static(_) => None,
        }
    }

    /// The vector of a query: its text after the model's query prompt.
    pub fn embed_query(&self, text: &str) -> Vec<f32> {
        if self.prompts.query.is_empty() {
            return self.embed_one(text);
        }
        self.embed_one(&format!("{}{text}", self.prompts.query))
    }

    /// The vectors of documents (tools' texts): each text after the model's document
    /// prompt.
    pub fn embed_documents(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        if self.prompts.document.is_empty() {
            return self.embed_batch(texts);
        }
        let prompted = self.document_texts(texts);
        let refs: Vec<&str> = prompted.iter().map(String::as_str).collect();
        self.embed_batch(&refs)
    }

    /// Each text after the document prompt.
    pub(crate) fn document_texts(&self, texts: &[&str]) -> Vec<String> {
        texts
            .iter()
            .map(|t| format!("{}{t}", self.prompts.document))
            .collect()
    }

    /// The token limit, `[CLS]` and `[SEP]` included.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The length of every vector.
    pub fn dim(&self) -> usize {
        match &self.net {
            Net::Bert(bert) => bert.config().hidden_size,
            Net::Static(table) => table.dim(),
        }
    }

    /// The token ids `text` is cut into, `[CLS]` first and `[SEP]` last, at most
    /// [`max_tokens`](Self::max_tokens) of them. A BERT sees them all; a static model
    /// leaves `[CLS]`, `[SEP]` and `[UNK]` out of its mean.
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, self.max_tokens)
    }

    /// The unit-length vector of one text.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let ids = self.token_ids(text);
        match &self.net {
            Net::Bert(bert) => bert
                .embed(std::slice::from_ref(&ids))
                .pop()
                .unwrap_or_default(),
            // model2vec's mean leaves out `[CLS]`, `[SEP]` and unknown pieces.
            Net::Static(table) => {
                let special = self.tokenizer.special_ids();
                table.embed(ids.into_iter().filter(|id| !special.contains(id)))
            }
        }
    }

    /// The vectors of many texts, in order; each is exactly what
    /// [`embed_one`](Self::embed_one) gives for that text.
    ///
    /// For a BERT, consecutive texts are grouped up to [`GROUP_TOKENS`] tokens, each
    /// group is run through the model as one stack of tokens, and the groups run in
    /// parallel.
    pub fn embed_batch(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        let Net::Bert(bert) = &self.net else {
            return texts.par_iter().map(|text| self.embed_one(text)).collect();
        };
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
            .map(|group| bert.embed(&ids[group]))
            .collect();
        vectors.into_iter().flatten().collect()
    }
}

impl toolscout_search::Embedder for Encoder {
    fn model(&self) -> &str {
        &self.model
    }

    fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        self.embed_documents(texts)
    }

    fn embed_query(&self, text: &str) -> Vec<f32> {
        Encoder::embed_query(self, text)
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
