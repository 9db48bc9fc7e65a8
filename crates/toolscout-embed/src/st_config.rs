//! What a sentence-transformers folder says beyond the BERT: how token rows are pooled
//! into one vector (`1_Pooling/config.json`) and the texts put before queries and
//! documents (`config_sentence_transformers.json`'s `prompts`).
//!
//! **Rationale:** retrieval-trained encoders differ there and nowhere else: bge pools
//! the `[CLS]` row and asks for an instruction before queries, e5 wants `query: ` and
//! `passage: `, all-MiniLM-L6-v2 mean-pools with no prompt. Reading both files lets a
//! user point `--encoder` at the folder they prefer, as sentence-transformers saves it.

use std::path::Path;

use serde::Deserialize;

use crate::error::read_json;
use crate::{Error, Result};

/// How a BERT's last-layer rows become the text's vector (before normalisation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pooling {
    /// The mean of every token's row, `[CLS]` and `[SEP]` included.
    #[default]
    Mean,
    /// The `[CLS]` token's row.
    Cls,
}

/// The texts an encoder puts before a query and before a document (a tool's text).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prompts {
    /// Put before every query, e.g. e5's `query: `.
    pub query: String,
    /// Put before every document, e.g. e5's `passage: `.
    pub document: String,
}

/// The longest prompt taken: a prompt is an instruction, not a document.
const MAX_PROMPT_CHARS: usize = 512;

#[cfg(feature = "transformer")]
#[derive(Deserialize)]
struct PoolingFile {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
    #[serde(default)]
    pooling_mode_weightedmean_tokens: bool,
    #[serde(default)]
    pooling_mode_lasttoken: bool,
}

#[derive(Deserialize)]
struct SentenceTransformersFile {
    #[serde(default)]
    prompts: std::collections::BTreeMap<String, String>,
}

/// The pooling of the model in `dir`: `1_Pooling/config.json` when it is there, else
/// mean pooling. A mode this crate does not run, or more than one mode, is an error
/// naming the file.
#[cfg(feature = "transformer")]
pub(crate) fn pooling(dir: &Path) -> Result<Pooling> {
    let path = dir.join("1_Pooling").join("config.json");
    if !path.exists() {
        return Ok(Pooling::Mean);
    }
    let f: PoolingFile = read_json(&path)?;
    let unsupported = [
        (f.pooling_mode_max_tokens, "max"),
        (f.pooling_mode_mean_sqrt_len_tokens, "mean_sqrt_len"),
        (f.pooling_mode_weightedmean_tokens, "weightedmean"),
        (f.pooling_mode_lasttoken, "lasttoken"),
    ];
    let problem = if let Some((_, mode)) = unsupported.iter().find(|(on, _)| *on) {
        Some(format!(
            "pooling mode {mode:?} is not supported, only \"cls_token\" or \"mean_tokens\""
        ))
    } else if f.pooling_mode_cls_token && f.pooling_mode_mean_tokens {
        Some("more than one pooling mode is on; choose one".to_owned())
    } else {
        None
    };
    match problem {
        Some(message) => Err(Error::Config { path, message }),
        None if f.pooling_mode_cls_token => Ok(Pooling::Cls),
        None => Ok(Pooling::Mean),
    }
}

/// The prompts of the model in `dir`: `config_sentence_transformers.json`'s `prompts`
/// `query` and `document` (or `passage`) when the file is there, else none.
pub(crate) fn prompts(dir: &Path) -> Result<Prompts> {
    let path = dir.join("config_sentence_transformers.json");
    if !path.exists() {
        return Ok(Prompts::default());
    }
    let f: SentenceTransformersFile = read_json(&path)?;
    let get = |names: &[&str]| -> Result<String> {
        let found = names.iter().find_map(|n| f.prompts.get(*n));
        match found {
            Some(p) if p.chars().count() > MAX_PROMPT_CHARS => Err(Error::Config {
                path: path.clone(),
                message: format!("a prompt is over {MAX_PROMPT_CHARS} characters"),
            }),
            Some(p) => Ok(p.clone()),
            None => Ok(String::new()),
        }
    };
    Ok(Prompts {
        query: get(&["query"])?,
        document: get(&["document", "passage", "corpus"])?,
    })
}
