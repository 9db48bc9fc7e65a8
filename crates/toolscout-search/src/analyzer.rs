//! Text analysis: how names, descriptions and queries become terms.
//!
//! One pipeline serves every text field and every query, so the two always agree:
//! split ([`split_words`]) → drop stop words → English stemming (Snowball).
//!
//! Splitting follows how tools are named in the wild: `get_weather`, `math.factorial`,
//! `getWeather`, `HTTPServer2`, `base64Encode` all break into their words (and a camelCase
//! run is also kept whole, so `javascript` still finds `JavaScript`). Han characters and
//! kana, which are written without spaces, become one term each plus one per adjacent pair.

use std::collections::HashMap;

use tantivy::tokenizer::{TextAnalyzer, Token, TokenStream, Tokenizer};

/// The name under which the analyzer is registered in the index.
pub(crate) const ANALYZER: &str = "toolscout";

/// Terms longer than this many bytes are dropped: they are hashes, ids or base64.
const MAX_TERM_BYTES: usize = 48;

/// Words that carry no meaning for tool search: English function words, plus the polite
/// and conversational filler of requests ("can you please help me …").
///
/// **Rationale:** tool catalogs describe actions and objects; a query's filler only adds
/// noise to BM25. The list is language-generic English, not tuned on any data set.
pub const STOP_WORDS: &[&str] = &[
    "a", "about", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can", "could",
    "do", "does", "for", "from", "had", "has", "have", "he", "her", "here", "his", "how", "i",
    "i'm", "if", "im", "in", "into", "is", "it", "its", "let", "lets", "me", "my", "no", "not",
    "of", "on", "or", "our", "please", "s", "she", "should", "so", "some", "such", "t", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "us",
    "was", "we", "were", "what", "whats", "when", "where", "which", "who", "will", "with", "would",
    "you", "your",
];

/// Builds the analyzer used for every text field and every query.
pub(crate) fn analyzer() -> TextAnalyzer {
    TextAnalyzer::from(ToolTokenizer::default())
}

/// Words remembered by one tokenizer before its memory is cleared.
const CACHE_WORDS: usize = 200_000;

/// Analyzes `text` into its terms, in order, without duplicates.
pub(crate) fn terms(analyzer: &mut TextAnalyzer, text: &str, max: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(tok) = stream.next() {
        if !out.iter().any(|t| t == &tok.text) {
            out.push(tok.text.clone());
            if out.len() >= max {
                break;
            }
        }
    }
    out
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF      // hiragana, katakana
        | 0x3400..=0x4DBF    // CJK extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0x20000..=0x2FA1F) // extensions B–F
}

/// Splits text into lowercase words: on every non-alphanumeric character, between a lower
/// and an upper case letter (`getWeather`), before the last capital of a run of capitals
/// followed by a lower case letter (`HTTPServer`), and between letters and digits. A run
/// that was split is also emitted whole. Han and kana characters are words of their own,
/// and each adjacent pair is emitted too.
///
/// ```
/// # use toolscout_search::analyzer::split_words;
/// assert_eq!(split_words("getHTTPServer2.v1_x"), ["gethttpserver2", "get", "http", "server", "2", "v1", "v", "1", "x"]);
/// assert_eq!(split_words("查询天气"), ["查", "查询", "询", "询天", "天", "天气", "气"]);
/// ```
pub fn split_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    split_into(text, &mut |s, _, _| out.push(s));
    out
}

/// The splitting of [`split_words`], calling `emit(word, byte_from, byte_to)`.
fn split_into(text: &str, emit: &mut dyn FnMut(String, usize, usize)) {
    let mut run_start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        let cjk = is_cjk(c);
        if cjk || !c.is_alphanumeric() {
            if let Some(start) = run_start.take() {
                split_run(&text[start..i], start, emit);
            }
        } else if run_start.is_none() {
            run_start = Some(i);
        }
        if cjk {
            let end = i + c.len_utf8();
            emit(c.to_string(), i, end);
            if let Some(next) = text[end..].chars().next()
                && is_cjk(next)
            {
                let pair_end = end + next.len_utf8();
                emit(text[i..pair_end].to_string(), i, pair_end);
            }
        }
    }
    if let Some(start) = run_start {
        split_run(&text[start..], start, emit);
    }
}

/// Splits one alphanumeric run at case and digit boundaries.
fn split_run(run: &str, offset: usize, emit: &mut dyn FnMut(String, usize, usize)) {
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    let mut cuts = vec![0usize];
    for k in 1..chars.len() {
        let (pos, c) = chars[k];
        let p = chars[k - 1].1;
        let next_lower = chars.get(k + 1).is_some_and(|&(_, n)| n.is_lowercase());
        let cut = (p.is_lowercase() && c.is_uppercase())
            || (p.is_uppercase() && c.is_uppercase() && next_lower)
            || (p.is_numeric() != c.is_numeric());
        if cut {
            cuts.push(pos);
        }
    }
    if cuts.len() > 1 {
        emit(run.to_lowercase(), offset, offset + run.len());
    }
    cuts.push(run.len());
    for w in cuts.windows(2) {
        let (a, b) = (w[0], w[1]);
        emit(run[a..b].to_lowercase(), offset + a, offset + b);
    }
}

/// The tantivy side of the pipeline: [`split_words`], then stop words and stemming.
///
/// Each indexing thread clones its own tokenizer; it remembers what each word became,
/// since stemming is the costliest step and vocabularies repeat.
#[derive(Clone)]
pub(crate) struct ToolTokenizer {
    stemmer: frostem::Stemmer,
    /// Word → its stem, or `None` for a stop word or an over-long word.
    cache: HashMap<String, Option<String>>,
}

impl Default for ToolTokenizer {
    fn default() -> Self {
        ToolTokenizer {
            stemmer: frostem::Stemmer::new(frostem::Algorithm::English),
            cache: HashMap::new(),
        }
    }
}

impl ToolTokenizer {
    fn term(&mut self, word: String) -> Option<String> {
        if let Some(t) = self.cache.get(&word) {
            return t.clone();
        }
        let t = if word.len() > MAX_TERM_BYTES || STOP_WORDS.contains(&word.as_str()) {
            None
        } else {
            Some(self.stemmer.stem(&word).into_owned())
        };
        if self.cache.len() >= CACHE_WORDS {
            self.cache.clear();
        }
        self.cache.insert(word, t.clone());
        t
    }
}

/// The tokens of one text, produced at once.
pub(crate) struct VecTokenStream {
    tokens: Vec<Token>,
    next: usize,
}

impl Tokenizer for ToolTokenizer {
    type TokenStream<'a> = VecTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> VecTokenStream {
        let mut words = Vec::new();
        split_into(text, &mut |word, from, to| words.push((word, from, to)));
        let mut tokens = Vec::with_capacity(words.len());
        for (word, from, to) in words {
            if let Some(term) = self.term(word) {
                let position = tokens.len();
                tokens.push(Token {
                    offset_from: from,
                    offset_to: to,
                    position,
                    text: term,
                    position_length: 1,
                });
            }
        }
        VecTokenStream { tokens, next: 0 }
    }
}

impl TokenStream for VecTokenStream {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        // `advance` is always called first; before that, or after the end, tantivy never
        // asks. The fallback keeps this total anyway.
        self.tokens
            .get(self.next.saturating_sub(1))
            .unwrap_or(&EMPTY_TOKEN)
    }

    fn token_mut(&mut self) -> &mut Token {
        let i = self.next.saturating_sub(1);
        if i >= self.tokens.len() {
            self.tokens.push(Token::default());
        }
        let last = self.tokens.len() - 1;
        &mut self.tokens[i.min(last)]
    }
}

static EMPTY_TOKEN: Token = Token {
    offset_from: 0,
    offset_to: 0,
    position: 0,
    text: String::new(),
    position_length: 1,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn analyzes_queries_like_names() {
        let mut a = analyzer();
        assert_eq!(
            terms(&mut a, "What's the weather in Tokyo?", 64),
            ["weather", "tokyo"]
        );
        assert_eq!(terms(&mut a, "get_weather", 64), ["get", "weather"]);
        assert_eq!(
            terms(&mut a, "calculateTriangleAreas", 64),
            ["calculatetriangleArea", "calcul", "triangl", "area"]
                .map(str::to_lowercase)
                .to_vec()
        );
    }

    #[test]
    fn odd_input_never_panics() {
        let mut a = analyzer();
        for s in [
            "",
            " ",
            "\u{0}",
            "ǅǈ",
            "🦀🦀",
            "a\u{301}b",
            &"x".repeat(100_000),
        ] {
            let _ = terms(&mut a, s, 64);
        }
    }
}
