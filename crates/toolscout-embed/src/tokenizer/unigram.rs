//! SentencePiece's Unigram tokenizer as Hugging Face `tokenizers` runs it for XLM-R's
//! vocabulary (multilingual-e5, paraphrase-multilingual-*, bge-m3): the `Precompiled`
//! normaliser (SentencePiece's character map), `WhitespaceSplit` and `Metaspace` (`▁`)
//! pre-tokenisation, the highest-scoring segmentation of each word into the
//! vocabulary's pieces (Viterbi), and the `<s> … </s>` template.
//!
//! **Rationale:** the WordPiece tokenizer's vocabulary is English (and its normaliser
//! strips the accents other languages need); XLM-R's 250,002 pieces cover a hundred
//! languages, and every multilingual sentence encoder small enough for a CPU uses them.
//!
//! Two things differ from `tokenizers`, both on rare input:
//! - The character map is applied as SentencePiece applies it, the longest matching
//!   prefix at each position. `tokenizers` applies it to each grapheme cluster shorter
//!   than 6 bytes as a whole, taking the *shortest* matching prefix and dropping the
//!   rest of the cluster (`"Ａ\u{301}"` becomes `"A"` there, `"Á"` here); the two agree
//!   on every cluster of one code point and on canonical sequences such as
//!   `"e\u{301}"`.
//! - Special tokens written in the text (`<s>`, `<mask>`) are not split out before
//!   normalisation, as the WordPiece tokenizer does not split out `[CLS]`: they are
//!   segmented like any other text.

use std::collections::HashMap;

use serde_json::Value;

/// How far below the lowest piece an unknown character's `<unk>` scores (`tokenizers`'
/// `K_UNK_PENALTY`).
const UNKNOWN_PENALTY: f64 = 10.0;

/// A Unigram tokenizer read from a `tokenizer.json`.
#[derive(Debug, Clone)]
pub(crate) struct Unigram {
    /// Piece → id (an id is the piece's place in `model.vocab`).
    pieces: HashMap<String, u32>,
    /// The score (log probability) of each id.
    scores: Vec<f64>,
    /// The longest piece, in characters: no match is longer.
    max_piece_chars: usize,
    unk: u32,
    /// The score of an unknown character's `<unk>`.
    unk_score: f64,
    /// The ids the template puts first and last (`<s>`, `</s>`).
    bos: u32,
    eos: u32,
    normalizers: Vec<Normalizer>,
    pre_tokenizers: Vec<PreTokenizer>,
}

/// One step of the normaliser.
#[derive(Debug, Clone)]
enum Normalizer {
    /// SentencePiece's character map.
    Precompiled(Charsmap),
    /// `Replace` of a literal string.
    Replace { pattern: String, content: String },
    /// `Replace` of the regular expression ` {2,}`: each run of two or more spaces.
    CollapseSpaces { content: String },
}

/// One step of the pre-tokeniser.
#[derive(Debug, Clone)]
enum PreTokenizer {
    /// Splits at whitespace (`char::is_whitespace`), which is dropped.
    WhitespaceSplit,
    /// Spaces become `replacement`, which is put before a word that does not start
    /// with it, and (with `split`) starts a new word wherever it occurs.
    Metaspace {
        replacement: char,
        prepend: Prepend,
        split: bool,
    },
}

/// When `Metaspace` puts its replacement before a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prepend {
    Always,
    /// Only before the word the text starts with.
    First,
    Never,
}

/// A piece of text on its way through the pre-tokeniser: its text, and whether it
/// starts where the normalised text starts.
struct Word {
    text: String,
    at_start: bool,
}

impl Unigram {
    /// Builds the tokenizer from a parsed `tokenizer.json` whose `model.type` is
    /// `Unigram`; the error says what is missing or unsupported.
    pub(super) fn from_json(json: &Value) -> Result<Unigram, String> {
        let model = &json["model"];
        if model["byte_fallback"].as_bool() == Some(true) {
            return Err("`model.byte_fallback` is true, which is not supported".into());
        }
        let entries = model["vocab"]
            .as_array()
            .ok_or("`model.vocab` is missing or not an array of [piece, score]")?;
        if entries.is_empty() || u32::try_from(entries.len()).is_err() {
            return Err(format!(
                "`model.vocab` has {} pieces; expected 1 to {}",
                entries.len(),
                u32::MAX
            ));
        }
        let mut pieces = HashMap::with_capacity(entries.len());
        let mut scores = Vec::with_capacity(entries.len());
        let mut max_piece_chars = 1;
        for (id, entry) in (0u32..).zip(entries) {
            let (Some(piece), Some(score)) = (entry[0].as_str(), entry[1].as_f64()) else {
                return Err(format!(
                    "`model.vocab` entry {id} is not a [piece, score] pair"
                ));
            };
            if piece.is_empty() || !score.is_finite() {
                return Err(format!(
                    "`model.vocab` entry {id} ({piece:?}, {score}) is empty or not finite"
                ));
            }
            max_piece_chars = max_piece_chars.max(piece.chars().count());
            // A repeated piece keeps its last id, as in `tokenizers`.
            pieces.insert(piece.to_owned(), id);
            scores.push(score);
        }
        let unk = model["unk_id"]
            .as_u64()
            .and_then(|id| u32::try_from(id).ok())
            .filter(|&id| (id as usize) < scores.len())
            .ok_or("`model.unk_id` is missing or not the id of a piece")?;
        let lowest = scores.iter().copied().fold(f64::INFINITY, f64::min);
        let (bos, eos) = template(json, &pieces)?;
        Ok(Unigram {
            unk,
            unk_score: lowest - UNKNOWN_PENALTY,
            bos,
            eos,
            normalizers: normalizers(&json["normalizer"])?,
            pre_tokenizers: pre_tokenizers(&json["pre_tokenizer"])?,
            max_piece_chars,
            pieces,
            scores,
        })
    }

    /// The number of pieces in the vocabulary.
    pub(super) fn vocab_size(&self) -> usize {
        self.scores.len()
    }

    /// The ids of `<unk>`, `<s>` and `</s>`.
    pub(super) fn special_ids(&self) -> [u32; 3] {
        [self.unk, self.bos, self.eos]
    }

    /// The largest id in the vocabulary.
    pub(super) fn max_id(&self) -> u32 {
        // `from_json` checked that the count fits in a u32 and is positive.
        u32::try_from(self.scores.len().saturating_sub(1)).unwrap_or(u32::MAX)
    }

    /// The ids of `text`: `<s>`, at most `max_tokens - 2` pieces, `</s>`.
    pub(super) fn encode(&self, text: &str, max_tokens: usize) -> Vec<u32> {
        let budget = max_tokens.saturating_sub(2);
        let mut ids = Vec::with_capacity(budget.min(text.len() + 2) + 2);
        ids.push(self.bos);
        let normalized = self.normalize(text);
        for word in self.pre_tokenize(normalized) {
            if ids.len() > budget {
                break;
            }
            self.segment(&word, &mut ids);
        }
        ids.truncate(budget + 1);
        ids.push(self.eos);
        ids
    }

    /// The normaliser's steps, in order.
    fn normalize(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for step in &self.normalizers {
            text = match step {
                Normalizer::Precompiled(map) => map.normalize(&text),
                Normalizer::Replace { pattern, content } => text.replace(pattern, content),
                Normalizer::CollapseSpaces { content } => collapse_spaces(&text, content),
            };
        }
        text
    }

    /// The pre-tokeniser's steps, in order: the words the model segments one by one.
    fn pre_tokenize(&self, text: String) -> Vec<String> {
        let mut words = vec![Word {
            text,
            at_start: true,
        }];
        for step in &self.pre_tokenizers {
            let mut next = Vec::with_capacity(words.len());
            for word in words {
                match *step {
                    PreTokenizer::WhitespaceSplit => whitespace_split(word, &mut next),
                    PreTokenizer::Metaspace {
                        replacement,
                        prepend,
                        split,
                    } => metaspace(word, replacement, prepend, split, &mut next),
                }
            }
            words = next;
        }
        words.into_iter().map(|w| w.text).collect()
    }

    /// Appends the ids of the highest-scoring segmentation of `word` into pieces; a
    /// character no piece of one character covers is `<unk>`, and consecutive `<unk>`s
    /// are one (`tokenizers`' `fuse_unk`).
    fn segment(&self, word: &str, ids: &mut Vec<u32>) {
        // The best way found to reach a byte offset: its score, where its last piece
        // starts, and that piece's id.
        #[derive(Clone, Copy)]
        struct Best {
            score: f64,
            start: usize,
            id: u32,
        }
        let mut best: Vec<Option<Best>> = vec![None; word.len() + 1];
        best[0] = Some(Best {
            score: 0.0,
            start: 0,
            id: self.unk,
        });
        for (start, c) in word.char_indices() {
            let Some(here) = best[start] else { continue };
            let mut offer = |end: usize, id: u32, score: f64| {
                let score = here.score + score;
                if best[end].is_none_or(|b| score > b.score) {
                    best[end] = Some(Best { score, start, id });
                }
            };
            let mut single = false;
            let rest = &word[start..];
            for (n, (at, d)) in rest.char_indices().take(self.max_piece_chars).enumerate() {
                let end = at + d.len_utf8();
                if let Some(&id) = self.pieces.get(&rest[..end]) {
                    offer(start + end, id, self.scores[id as usize]);
                    single |= n == 0;
                }
            }
            if !single {
                offer(start + c.len_utf8(), self.unk, self.unk_score);
            }
        }
        let mut pieces = Vec::new();
        let mut end = word.len();
        while end > 0 {
            let Some(b) = best[end] else { break };
            pieces.push(b.id);
            end = b.start;
        }
        let first = ids.len();
        for id in pieces.into_iter().rev() {
            if id == self.unk && ids.len() > first && ids.last() == Some(&self.unk) {
                continue;
            }
            ids.push(id);
        }
    }
}

/// The ids the post-processor puts before and after the text: `RobertaProcessing`'s or
/// `BertProcessing`'s `cls` and `sep`, the special tokens around `$A` in
/// `TemplateProcessing`'s `single`, or without a post-processor `<s>` and `</s>`.
fn template(json: &Value, pieces: &HashMap<String, u32>) -> Result<(u32, u32), String> {
    let post = &json["post_processor"];
    let id_of = |value: &Value, what: &str| {
        value
            .as_u64()
            .and_then(|id| u32::try_from(id).ok())
            .ok_or_else(|| format!("`post_processor` has no id for {what}"))
    };
    match post["type"].as_str() {
        None => {
            let get = |token: &str| {
                pieces.get(token).copied().ok_or_else(|| {
                    format!("no `post_processor`, and the vocabulary has no {token:?}")
                })
            };
            Ok((get("<s>")?, get("</s>")?))
        }
        Some("RobertaProcessing" | "BertProcessing") => Ok((
            id_of(&post["cls"][1], "cls")?,
            id_of(&post["sep"][1], "sep")?,
        )),
        Some("TemplateProcessing") => {
            let single = post["single"]
                .as_array()
                .ok_or("`post_processor.single` is missing")?;
            let special = |item: &Value| -> Option<Result<u32, String>> {
                let name = item["SpecialToken"]["id"].as_str()?;
                Some(id_of(
                    &post["special_tokens"][name]["ids"][0],
                    &format!("{name:?}"),
                ))
            };
            match single.as_slice() {
                [first, middle, last] if middle.get("Sequence").is_some() => {
                    match (special(first), special(last)) {
                        (Some(bos), Some(eos)) => Ok((bos?, eos?)),
                        _ => Err(unsupported_template()),
                    }
                }
                _ => Err(unsupported_template()),
            }
        }
        Some(other) => Err(format!(
            "`post_processor` type {other:?} is not supported (RobertaProcessing, \
             BertProcessing or TemplateProcessing)"
        )),
    }
}

fn unsupported_template() -> String {
    "`post_processor.single` is not a special token, $A, a special token".to_owned()
}

/// The steps of `normalizer`: `Precompiled`, `Replace` (of a string, or of the
/// regular expression ` {2,}`), or a `Sequence` of them; none when it is null.
fn normalizers(normalizer: &Value) -> Result<Vec<Normalizer>, String> {
    let mut steps = Vec::new();
    for step in sequence(normalizer, "normalizer", "normalizers")? {
        let content = || step["content"].as_str().unwrap_or_default().to_owned();
        match step["type"].as_str() {
            Some("Precompiled") => match &step["precompiled_charsmap"] {
                Value::Null => {}
                Value::String(map) if map.is_empty() => {}
                Value::String(map) => {
                    steps.push(Normalizer::Precompiled(Charsmap::from_base64(map)?));
                }
                _ => return Err("`precompiled_charsmap` is not a string".into()),
            },
            Some("Replace") => match (
                step["pattern"]["String"].as_str(),
                step["pattern"]["Regex"].as_str(),
            ) {
                (Some(pattern), _) if !pattern.is_empty() => steps.push(Normalizer::Replace {
                    pattern: pattern.to_owned(),
                    content: content(),
                }),
                (_, Some(" {2,}")) => steps.push(Normalizer::CollapseSpaces { content: content() }),
                _ => {
                    return Err(format!(
                        "normalizer `Replace` of {} is not supported (only a string, or the \
                         regular expression \" {{2,}}\")",
                        step["pattern"]
                    ));
                }
            },
            _ => {
                return Err(format!(
                    "normalizer {} is not supported by the Unigram tokenizer \
                     (Precompiled, Replace or a Sequence of them)",
                    step["type"]
                ));
            }
        }
    }
    Ok(steps)
}

/// The steps of a `tokenizer.json` part (`key`): the items of its `list` when it is a
/// `Sequence`, else the part itself; none when it is null.
fn sequence<'v>(part: &'v Value, key: &str, list: &str) -> Result<Vec<&'v Value>, String> {
    match part["type"].as_str() {
        None if part.is_null() => Ok(Vec::new()),
        Some("Sequence") => Ok(part[list]
            .as_array()
            .ok_or_else(|| format!("`{key}.{list}` is missing"))?
            .iter()
            .collect()),
        _ => Ok(vec![part]),
    }
}

/// The steps of `pre_tokenizer`: `WhitespaceSplit`, `Metaspace`, or a `Sequence` of
/// them; none when it is null.
fn pre_tokenizers(pre_tokenizer: &Value) -> Result<Vec<PreTokenizer>, String> {
    let list = sequence(pre_tokenizer, "pre_tokenizer", "pretokenizers")?;
    let mut steps = Vec::with_capacity(list.len());
    for step in list {
        match step["type"].as_str() {
            Some("WhitespaceSplit") => steps.push(PreTokenizer::WhitespaceSplit),
            Some("Metaspace") => {
                let replacement = step["replacement"].as_str().unwrap_or("\u{2581}");
                let mut chars = replacement.chars();
                let (Some(replacement), None) = (chars.next(), chars.next()) else {
                    return Err(format!(
                        "`Metaspace` replacement {replacement:?} is not one character"
                    ));
                };
                // `prepend_scheme` since tokenizers 0.14, `add_prefix_space` before.
                let prepend = match step["prepend_scheme"].as_str() {
                    Some("always") => Prepend::Always,
                    Some("first") => Prepend::First,
                    Some("never") => Prepend::Never,
                    Some(other) => {
                        return Err(format!("`Metaspace` prepend_scheme {other:?} is unknown"));
                    }
                    None if step["add_prefix_space"].as_bool() == Some(false) => Prepend::Never,
                    None => Prepend::Always,
                };
                steps.push(PreTokenizer::Metaspace {
                    replacement,
                    prepend,
                    split: step["split"].as_bool().unwrap_or(true),
                });
            }
            _ => {
                return Err(format!(
                    "pre_tokenizer {} is not supported by the Unigram tokenizer \
                     (WhitespaceSplit, Metaspace or a Sequence of them)",
                    step["type"]
                ));
            }
        }
    }
    Ok(steps)
}

/// `text` with each run of two or more spaces (U+0020) replaced by `content`.
fn collapse_spaces(text: &str, content: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("  ") {
        out.push_str(&rest[..at]);
        out.push_str(content);
        rest = rest[at..].trim_start_matches(' ');
    }
    out.push_str(rest);
    out
}

/// The non-empty runs of `word` between whitespace.
fn whitespace_split(word: Word, out: &mut Vec<Word>) {
    for (n, part) in word.text.split(char::is_whitespace).enumerate() {
        if !part.is_empty() {
            out.push(Word {
                text: part.to_owned(),
                at_start: word.at_start && n == 0,
            });
        }
    }
}

/// `word` with spaces made `replacement`, `replacement` put first as `prepend` says,
/// and (with `split`) cut before each `replacement` but one that starts it.
fn metaspace(word: Word, replacement: char, prepend: Prepend, split: bool, out: &mut Vec<Word>) {
    let mut text: String = word
        .text
        .chars()
        .map(|c| if c == ' ' { replacement } else { c })
        .collect();
    let put_first = match prepend {
        Prepend::Always => true,
        Prepend::First => word.at_start,
        Prepend::Never => false,
    };
    // `tokenizers` prepends nothing to an empty string.
    if put_first && !text.is_empty() && !text.starts_with(replacement) {
        text.insert(0, replacement);
    }
    if !split {
        out.push(Word {
            text,
            at_start: word.at_start,
        });
        return;
    }
    let mut start = 0;
    for (at, c) in text.char_indices() {
        if c == replacement && at > start {
            out.push(Word {
                text: text[start..at].to_owned(),
                at_start: word.at_start && start == 0,
            });
            start = at;
        }
    }
    if start < text.len() {
        out.push(Word {
            text: text[start..].to_owned(),
            at_start: word.at_start && start == 0,
        });
    }
}

/// SentencePiece's precompiled character map: a double-array trie (darts-clone's
/// layout) over UTF-8 byte strings whose values are offsets of NUL-terminated
/// replacements.
///
/// The blob is a little-endian u32, the trie's size in bytes, then the trie's u32
/// units, then the replacements.
#[derive(Debug, Clone)]
struct Charsmap {
    units: Vec<u32>,
    replacements: String,
}

impl Charsmap {
    /// The map of a `precompiled_charsmap` string (base64); the error says what is wrong.
    fn from_base64(text: &str) -> Result<Charsmap, String> {
        let blob = base64_decode(text).ok_or("`precompiled_charsmap` is not valid base64")?;
        Charsmap::from_bytes(&blob)
    }

    fn from_bytes(blob: &[u8]) -> Result<Charsmap, String> {
        let bad = |why: &str| format!("`precompiled_charsmap` {why}");
        let (head, rest) = blob
            .split_first_chunk::<4>()
            .ok_or_else(|| bad("is shorter than its 4-byte header"))?;
        let size = u32::from_le_bytes(*head) as usize;
        if size == 0 || !size.is_multiple_of(4) || size > rest.len() {
            return Err(bad(&format!(
                "says its trie has {size} bytes, of {} (a positive multiple of 4)",
                rest.len()
            )));
        }
        let (trie, replacements) = rest.split_at(size);
        let units = trie
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let replacements = String::from_utf8(replacements.to_vec())
            .map_err(|_| bad("has replacements that are not UTF-8"))?;
        Ok(Charsmap {
            units,
            replacements,
        })
    }

    /// `text` with each longest prefix the map knows replaced, left to right.
    fn normalize(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(c) = rest.chars().next() {
            match self.longest_match(rest.as_bytes()) {
                // A match that ends inside a character is no match (a broken map).
                Some((len, replacement)) if rest.is_char_boundary(len) => {
                    out.push_str(replacement);
                    rest = &rest[len..];
                }
                _ => {
                    out.push(c);
                    rest = &rest[c.len_utf8()..];
                }
            }
        }
        out
    }

    /// The longest prefix of `key` in the trie, as its length in bytes and its
    /// replacement. A NUL byte ends the key, as in SentencePiece. Positions outside the
    /// trie end the search instead of panicking.
    fn longest_match(&self, key: &[u8]) -> Option<(usize, &str)> {
        let mut node = offset(*self.units.first()?);
        let mut found = None;
        for (i, &c) in key.iter().enumerate() {
            if c == 0 {
                break;
            }
            node ^= usize::from(c);
            let Some(&unit) = self.units.get(node) else {
                break;
            };
            if label(unit) != u32::from(c) {
                break;
            }
            node ^= offset(unit);
            if has_leaf(unit) {
                let Some(&leaf) = self.units.get(node) else {
                    break;
                };
                found = Some((i + 1, value(leaf) as usize));
            }
        }
        let (len, at) = found?;
        let tail = self.replacements.get(at..)?;
        let end = tail.find('\0').unwrap_or(tail.len());
        Some((len, &tail[..end]))
    }
}

/// Where a unit's children start, relative to it (darts-clone's `offset`).
fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & (1 << 9)) >> 6)) as usize
}

/// The byte that leads to a unit (darts-clone's `label`; a leaf's has bit 31 set).
fn label(unit: u32) -> u32 {
    unit & ((1 << 31) | 0xff)
}

/// Whether a unit ends a key (darts-clone's `has_leaf`).
fn has_leaf(unit: u32) -> bool {
    (unit >> 8) & 1 == 1
}

/// A leaf's value (darts-clone's `value`).
fn value(unit: u32) -> u32 {
    unit & ((1 << 31) - 1)
}

/// Standard base64 (`+`, `/`, `=` padding optional), or `None` if `text` is not.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut bits = 0u32;
    let mut count = 0u32;
    let mut padding = 0;
    for &b in text.as_bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => {
                padding += 1;
                continue;
            }
            _ => return None,
        };
        if padding > 0 {
            return None;
        }
        bits = (bits << 6) | u32::from(v);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    (padding <= 2).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_known_strings() {
        assert_eq!(base64_decode("").unwrap(), b"");
        assert_eq!(base64_decode("Zg==").unwrap(), b"f");
        assert_eq!(base64_decode("Zm8=").unwrap(), b"fo");
        assert_eq!(base64_decode("Zm9v").unwrap(), b"foo");
        assert_eq!(base64_decode("Zm9vYmE").unwrap(), b"fooba");
        assert_eq!(base64_decode("+/8=").unwrap(), [0xfb, 0xff]);
        assert!(base64_decode("Zm9v!").is_none());
        assert!(base64_decode("Zg==Zg").is_none());
    }

    #[test]
    fn spaces_collapse_and_words_split() {
        assert_eq!(collapse_spaces("a  b   c d ", " "), "a b c d ");
        assert_eq!(collapse_spaces("  ", "_"), "_");
        let words = |text: &str, prepend, split| {
            let mut out = Vec::new();
            let word = Word {
                text: text.to_owned(),
                at_start: true,
            };
            metaspace(word, '▁', prepend, split, &mut out);
            out.into_iter().map(|w| w.text).collect::<Vec<_>>()
        };
        assert_eq!(words("a b", Prepend::Always, true), ["▁a", "▁b"]);
        assert_eq!(
            words(" a  b ", Prepend::Always, true),
            ["▁a", "▁", "▁b", "▁"]
        );
        assert_eq!(words("a b", Prepend::Never, true), ["a", "▁b"]);
        assert_eq!(words("a b", Prepend::Always, false), ["▁a▁b"]);
        assert!(words("", Prepend::Always, true).is_empty());
        let mut out = Vec::new();
        let word = Word {
            text: " a\tb\n".to_owned(),
            at_start: true,
        };
        whitespace_split(word, &mut out);
        let texts: Vec<_> = out.iter().map(|w| (w.text.as_str(), w.at_start)).collect();
        assert_eq!(texts, [("a", false), ("b", false)]);
    }

    #[test]
    fn a_broken_charsmap_is_an_error_not_a_panic() {
        assert!(Charsmap::from_bytes(b"").is_err());
        assert!(Charsmap::from_bytes(&[8, 0, 0, 0, 1, 2]).is_err());
        assert!(Charsmap::from_bytes(&[3, 0, 0, 0, 1, 2, 3]).is_err());
        // A root whose offset points past the end: nothing matches.
        let map = Charsmap::from_bytes(&[4, 0, 0, 0, 0, 0xfc, 0xff, 0xff]).unwrap();
        assert_eq!(map.normalize("héllo"), "héllo");
    }
}
