//! Token counts, for budgets: how much of a model's context a disclosure costs.
//!
//! Counts use the `o200k_base` encoding (GPT-4o and later). Other models' tokenizers
//! differ by a few percent; the counts are for comparing and budgeting, not billing.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

fn bpe() -> Option<&'static CoreBPE> {
    static BPE: OnceLock<Option<CoreBPE>> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::o200k_base().ok()).as_ref()
}

/// The number of `o200k_base` tokens in `text`.
///
/// ```
/// assert_eq!(toolscout_spec::tokens::count(""), 0);
/// assert!(toolscout_spec::tokens::count("read_file(file_path=\"…\")") > 3);
/// ```
pub fn count(text: &str) -> usize {
    match bpe() {
        Some(bpe) => bpe.encode_ordinary(text).len(),
        // The encoder ships inside tiktoken-rs, so this only guards against a broken build:
        // fall back to the usual four-characters-a-token estimate.
        None => text.chars().count().div_ceil(4),
    }
}

/// Tokens of a JSON value in its compact serialisation.
pub fn count_json(value: &serde_json::Value) -> usize {
    count(&value.to_string())
}
