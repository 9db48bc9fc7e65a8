//! The tokenizers: BERT's uncased WordPiece, as Hugging Face `tokenizers` runs it for
//! `BertNormalizer` + `BertPreTokenizer` + `WordPiece` + the `[CLS] … [SEP]` template,
//! and SentencePiece's Unigram over XLM-R's multilingual vocabulary (`unigram`).

#[rustfmt::skip]
mod tables;
mod unigram;

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::error::read_file;
use crate::{Error, Result};
use unigram::Unigram;

/// Splits text into token ids, as the `tokenizer.json`'s `model.type` says: BERT's
/// WordPiece (`[CLS] … [SEP]`, English models such as all-MiniLM-L6-v2) or
/// SentencePiece's Unigram (`<s> … </s>`, XLM-R's vocabulary of a hundred languages,
/// multilingual-e5-small's).
#[derive(Debug, Clone)]
pub struct Tokenizer {
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    WordPiece(WordPiece),
    Unigram(Unigram),
}

impl Tokenizer {
    /// Reads a Hugging Face `tokenizer.json` whose model is `WordPiece` or `Unigram`.
    pub fn from_file(path: &Path) -> Result<Tokenizer> {
        Tokenizer::from_slice(&read_file(path)?, path)
    }

    /// Reads a `tokenizer.json` already in memory; `path` names it in errors.
    pub(crate) fn from_slice(bytes: &[u8], path: &Path) -> Result<Tokenizer> {
        let json: Value = serde_json::from_slice(bytes).map_err(|cause| Error::Json {
            path: path.to_owned(),
            cause,
        })?;
        Tokenizer::from_json(&json).map_err(|message| Error::Tokenizer {
            path: path.to_owned(),
            message,
        })
    }

    /// The tokenizer of a parsed `tokenizer.json` (WordPiece when `model.type` is
    /// missing, as in old files); the error says what is wrong.
    fn from_json(json: &Value) -> std::result::Result<Tokenizer, String> {
        let kind = match json["model"]["type"].as_str() {
            Some("WordPiece") | None => Kind::WordPiece(WordPiece::from_json(json)?),
            Some("Unigram") => Kind::Unigram(Unigram::from_json(json)?),
            Some(other) => {
                return Err(format!(
                    "model type is {other:?}, expected \"WordPiece\" or \"Unigram\""
                ));
            }
        };
        Ok(Tokenizer { kind })
    }

    /// The number of ids the vocabulary holds.
    pub fn vocab_size(&self) -> usize {
        match &self.kind {
            Kind::WordPiece(t) => t.vocab_size(),
            Kind::Unigram(t) => t.vocab_size(),
        }
    }

    /// The ids `encode` adds or puts for what it does not know: `[UNK]`, `[CLS]` and
    /// `[SEP]`, or `<unk>`, `<s>` and `</s>`.
    pub(crate) fn special_ids(&self) -> [u32; 3] {
        match &self.kind {
            Kind::WordPiece(t) => t.special_ids(),
            Kind::Unigram(t) => t.special_ids(),
        }
    }

    /// The largest id in the vocabulary.
    pub(crate) fn max_id(&self) -> u32 {
        match &self.kind {
            Kind::WordPiece(t) => t.max_id(),
            Kind::Unigram(t) => t.max_id(),
        }
    }

    /// The ids of `text`: `[CLS]` (`<s>`), at most `max_tokens - 2` pieces, `[SEP]`
    /// (`</s>`). Longer texts are cut, as Hugging Face's truncation cuts them.
    pub fn encode(&self, text: &str, max_tokens: usize) -> Vec<u32> {
        match &self.kind {
            Kind::WordPiece(t) => t.encode(text, max_tokens),
            Kind::Unigram(t) => t.encode(text, max_tokens),
        }
    }
}

/// Splits text into WordPiece ids, `[CLS]` first and `[SEP]` last.
#[derive(Debug, Clone)]
struct WordPiece {
    vocab: HashMap<String, u32>,
    unk: u32,
    cls: u32,
    sep: u32,
    prefix: String,
    max_word_chars: usize,
    lowercase: bool,
    strip_accents: bool,
    clean_text: bool,
    chinese_chars: bool,
}

impl WordPiece {
    /// Builds the tokenizer from a parsed `tokenizer.json` whose model is `WordPiece`;
    /// the error says what is wrong.
    fn from_json(json: &Value) -> std::result::Result<WordPiece, String> {
        let model = &json["model"];
        let entries = model["vocab"]
            .as_object()
            .ok_or("`model.vocab` is missing or not an object")?;
        let mut vocab = HashMap::with_capacity(entries.len());
        for (token, id) in entries {
            let id = id
                .as_u64()
                .and_then(|id| u32::try_from(id).ok())
                .ok_or_else(|| format!("vocab entry {token:?} has no integer id"))?;
            vocab.insert(token.clone(), id);
        }
        let unk_token = model["unk_token"].as_str().unwrap_or("[UNK]");
        let id_of = |token: &str| {
            vocab
                .get(token)
                .copied()
                .ok_or_else(|| format!("the vocabulary has no {token:?}"))
        };
        let normalizer = &json["normalizer"];
        let flag = |name: &str, default: bool| normalizer[name].as_bool().unwrap_or(default);
        let lowercase = flag("lowercase", true);
        Ok(WordPiece {
            unk: id_of(unk_token)?,
            cls: id_of("[CLS]")?,
            sep: id_of("[SEP]")?,
            prefix: model["continuing_subword_prefix"]
                .as_str()
                .unwrap_or("##")
                .to_owned(),
            max_word_chars: model["max_input_chars_per_word"]
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(100),
            // BERT's rule: accents are stripped when not said otherwise and lowercasing is on.
            strip_accents: normalizer["strip_accents"].as_bool().unwrap_or(lowercase),
            lowercase,
            clean_text: flag("clean_text", true),
            chinese_chars: flag("handle_chinese_chars", true),
            vocab,
        })
    }

    fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    fn special_ids(&self) -> [u32; 3] {
        [self.unk, self.cls, self.sep]
    }

    fn max_id(&self) -> u32 {
        self.vocab.values().copied().max().unwrap_or(0)
    }

    /// The ids of `text`: `[CLS]`, at most `max_tokens - 2` word pieces, `[SEP]`.
    fn encode(&self, text: &str, max_tokens: usize) -> Vec<u32> {
        let budget = max_tokens.saturating_sub(2);
        let mut ids = Vec::with_capacity(budget.min(text.len() + 2) + 2);
        ids.push(self.cls);
        let normalized = self.normalize(text);
        let mut piece = String::new();
        for word in pre_tokenize(&normalized) {
            if ids.len() > budget {
                break;
            }
            self.word_pieces(word, &mut piece, &mut ids);
        }
        ids.truncate(budget + 1);
        ids.push(self.sep);
        ids
    }

    /// Cleans, spaces out CJK ideographs, strips accents and lowercases, in that order
    /// (the order of `tokenizers`' `BertNormalizer`).
    fn normalize(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 8);
        for c in text.chars() {
            let c = if self.clean_text {
                if c == '\0' || c == '\u{fffd}' || is_control(c) {
                    continue;
                }
                if is_whitespace(c) { ' ' } else { c }
            } else {
                c
            };
            let chinese = self.chinese_chars && is_chinese_char(c);
            if chinese {
                out.push(' ');
            }
            if self.strip_accents {
                strip_accents(c, |c| self.push_cased(c, &mut out));
            } else {
                self.push_cased(c, &mut out);
            }
            if chinese {
                out.push(' ');
            }
        }
        out
    }

    fn push_cased(&self, c: char, out: &mut String) {
        if self.lowercase {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }

    /// Greedy longest-match-first WordPiece; a word with a part not in the vocabulary,
    /// or longer than `max_word_chars`, is one `[UNK]`.
    fn word_pieces(&self, word: &str, piece: &mut String, ids: &mut Vec<u32>) {
        if word.chars().count() > self.max_word_chars {
            ids.push(self.unk);
            return;
        }
        let first = ids.len();
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while start < end {
                piece.clear();
                if start > 0 {
                    piece.push_str(&self.prefix);
                }
                piece.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(piece.as_str()) {
                    found = Some(id);
                    break;
                }
                end = floor_char_boundary(word, end - 1);
            }
            match found {
                Some(id) => {
                    ids.push(id);
                    start = end;
                }
                None => {
                    ids.truncate(first);
                    ids.push(self.unk);
                    return;
                }
            }
        }
    }
}

/// Splits on whitespace (dropped) and around every punctuation character (kept alone).
fn pre_tokenize(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        loop {
            let (i, c) = rest.char_indices().next()?;
            debug_assert_eq!(i, 0);
            if c.is_whitespace() {
                rest = &rest[c.len_utf8()..];
                continue;
            }
            if is_punctuation(c) {
                let (word, tail) = rest.split_at(c.len_utf8());
                rest = tail;
                return Some(word);
            }
            let end = rest
                .char_indices()
                .find(|&(_, c)| c.is_whitespace() || is_punctuation(c))
                .map_or(rest.len(), |(i, _)| i);
            let (word, tail) = rest.split_at(end);
            rest = tail;
            return Some(word);
        }
    })
}

/// The largest char boundary of `s` at or below `i`.
fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn in_ranges(c: char, ranges: &[(u32, u32)]) -> bool {
    let c = u32::from(c);
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Tab, newline and carriage return count as whitespace, not control.
fn is_control(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r') && in_ranges(c, tables::OTHER)
}

fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || in_ranges(c, tables::PUNCTUATION)
}

/// The CJK Unified Ideographs blocks, as BERT defines them (not Hangul, kana or Thai).
fn is_chinese_char(c: char) -> bool {
    matches!(u32::from(c),
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B920..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

/// Feeds `emit` the canonical decomposition of `c` without its non-spacing marks.
fn strip_accents(c: char, mut emit: impl FnMut(char)) {
    const S_BASE: u32 = 0xAC00;
    const L_BASE: u32 = 0x1100;
    const V_BASE: u32 = 0x1161;
    const T_BASE: u32 = 0x11A7;
    const T_COUNT: u32 = 28;
    const N_COUNT: u32 = 21 * T_COUNT;
    let cp = u32::from(c);
    if c.is_ascii() {
        emit(c);
    } else if (S_BASE..S_BASE + 11172).contains(&cp) {
        // Hangul syllables decompose by rule into their jamo.
        let s = cp - S_BASE;
        let jamo = [
            Some(L_BASE + s / N_COUNT),
            Some(V_BASE + (s % N_COUNT) / T_COUNT),
            (!s.is_multiple_of(T_COUNT)).then_some(T_BASE + s % T_COUNT),
        ];
        jamo.into_iter()
            .flatten()
            .filter_map(char::from_u32)
            .for_each(emit);
    } else if let Ok(i) = tables::STRIPPED.binary_search_by_key(&cp, |&(k, _)| k) {
        tables::STRIPPED[i].1.chars().for_each(emit);
    } else if !in_ranges(c, tables::NONSPACING_MARK) {
        emit(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        pre_tokenize(text).collect()
    }

    #[test]
    fn pre_tokenize_splits_whitespace_and_punctuation() {
        assert_eq!(words("  a,b  c!! "), ["a", ",", "b", "c", "!", "!"]);
        assert_eq!(words(""), Vec::<&str>::new());
    }

    #[test]
    fn accents_and_hangul_decompose() {
        let mut out = String::new();
        for c in "Éñ한\u{301}".chars() {
            strip_accents(c, |c| out.push(c));
        }
        assert_eq!(out, "En\u{1112}\u{1161}\u{11AB}");
    }

    #[test]
    fn classes() {
        assert!(is_punctuation('—') && is_punctuation('$') && !is_punctuation('a'));
        assert!(is_control('\u{200b}') && !is_control('\n'));
        assert!(is_chinese_char('中') && !is_chinese_char('あ'));
    }
}
