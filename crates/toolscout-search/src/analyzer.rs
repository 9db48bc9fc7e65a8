//! Text analysis: how names, descriptions and queries become terms.
//!
//! One pipeline serves every text field and every query, so the two always agree:
//! split ([`split_words`]) → drop stop words → English stemming (Snowball). The whole
//! text is also indexed without the last step, so that a word as written can count above
//! a word that only shares its stem.
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

/// The name under which the unstemmed analyzer is registered in the index.
pub(crate) const ANALYZER_EXACT: &str = "toolscout_exact";

/// The same pipeline without stemming: the words as written (lowercase, split, no stop
/// words), for the field that lets a query's own words count above words that only share
/// their stem ("factorial" and "factory" are both `factori`).
pub(crate) fn exact_analyzer() -> TextAnalyzer {
    TextAnalyzer::from(ToolTokenizer {
        stem: false,
        ..ToolTokenizer::default()
    })
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

/// Whether `c` is a Han character or kana: written without spaces between words, so the
/// analyzer (and the agent's grounding) read such text by characters.
pub fn is_cjk(c: char) -> bool {
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
    Splitter::default().split(text, &mut |s, _, _| out.push(s.to_owned()));
    out
}

/// The splitting of [`split_words`], with its buffers kept between texts so that
/// splitting allocates nothing once warm.
#[derive(Debug, Clone, Default)]
struct Splitter {
    chars: Vec<(usize, char)>,
    cuts: Vec<usize>,
    lower: String,
}

impl Splitter {
    /// Calls `emit(word, byte_from, byte_to)` for every word of `text`, lowercased.
    fn split(&mut self, text: &str, emit: &mut dyn FnMut(&str, usize, usize)) {
        let mut run_start: Option<usize> = None;
        for (i, c) in text.char_indices() {
            let cjk = is_cjk(c);
            if cjk || !c.is_alphanumeric() {
                if let Some(start) = run_start.take() {
                    self.split_run(&text[start..i], start, emit);
                }
            } else if run_start.is_none() {
                run_start = Some(i);
            }
            if cjk {
                let end = i + c.len_utf8();
                emit(&text[i..end], i, end);
                if let Some(next) = text[end..].chars().next()
                    && is_cjk(next)
                {
                    let pair_end = end + next.len_utf8();
                    emit(&text[i..pair_end], i, pair_end);
                }
            }
        }
        if let Some(start) = run_start {
            self.split_run(&text[start..], start, emit);
        }
    }

    /// Splits one alphanumeric run at case and digit boundaries.
    fn split_run(&mut self, run: &str, offset: usize, emit: &mut dyn FnMut(&str, usize, usize)) {
        self.chars.clear();
        self.chars.extend(run.char_indices());
        self.cuts.clear();
        self.cuts.push(0);
        let chars = &self.chars;
        for k in 1..chars.len() {
            let (pos, c) = chars[k];
            let p = chars[k - 1].1;
            let next_lower = chars.get(k + 1).is_some_and(|&(_, n)| n.is_lowercase());
            let cut = (p.is_lowercase() && c.is_uppercase())
                || (p.is_uppercase() && c.is_uppercase() && next_lower)
                || (p.is_numeric() != c.is_numeric());
            if cut {
                self.cuts.push(pos);
            }
        }
        if self.cuts.len() > 1 {
            lowercase_into(run, &mut self.lower);
            emit(&self.lower, offset, offset + run.len());
        }
        self.cuts.push(run.len());
        for k in 1..self.cuts.len() {
            let (a, b) = (self.cuts[k - 1], self.cuts[k]);
            lowercase_into(&run[a..b], &mut self.lower);
            emit(&self.lower, offset + a, offset + b);
        }
    }
}

/// `text` lowercased into `out` (replacing what it held).
fn lowercase_into(text: &str, out: &mut String) {
    out.clear();
    if text.is_ascii() {
        out.push_str(text);
        out.make_ascii_lowercase();
    } else {
        out.extend(text.chars().flat_map(char::to_lowercase));
    }
}

/// FNV-1a: the tokenizer's memory is hit once per word of every text, and its keys are
/// short words, for which SipHash's set-up dominates.
type FnvBuild = fnv::FnvBuildHasher;

/// The tantivy side of the pipeline: [`split_words`], then stop words and stemming.
///
/// Each indexing thread clones its own tokenizer; it remembers what each word became,
/// since stemming is the costliest step and vocabularies repeat, and it reuses its
/// tokens' buffers from one text to the next.
#[derive(Clone)]
pub(crate) struct ToolTokenizer {
    stemmer: frostem::Stemmer,
    /// Whether words are stemmed (the exact analyzer keeps them as written).
    stem: bool,
    /// Word → its stem, or `None` for a stop word or an over-long word.
    cache: HashMap<String, Option<String>, FnvBuild>,
    splitter: Splitter,
    tokens: Vec<Token>,
}

impl Default for ToolTokenizer {
    fn default() -> Self {
        ToolTokenizer {
            stemmer: frostem::Stemmer::new(frostem::Algorithm::English),
            stem: true,
            cache: HashMap::default(),
            splitter: Splitter::default(),
            tokens: Vec::new(),
        }
    }
}

/// What one word becomes: its stem, or `None` for a stop word or an over-long word.
fn term_of<'c>(
    stemmer: Option<&frostem::Stemmer>,
    cache: &'c mut HashMap<String, Option<String>, FnvBuild>,
    word: &str,
) -> Option<&'c str> {
    if !cache.contains_key(word) {
        let t = if word.len() > MAX_TERM_BYTES || STOP_WORDS.contains(&word) {
            None
        } else {
            Some(match stemmer {
                Some(s) => s.stem(word).into_owned(),
                None => word.to_owned(),
            })
        };
        if cache.len() >= CACHE_WORDS {
            cache.clear();
        }
        cache.insert(word.to_owned(), t);
    }
    cache.get(word).and_then(|t| t.as_deref())
}

/// The tokens of one text, produced at once into the tokenizer's reused buffer.
pub(crate) struct VecTokenStream<'a> {
    tokens: &'a mut Vec<Token>,
    len: usize,
    next: usize,
}

impl Tokenizer for ToolTokenizer {
    type TokenStream<'a> = VecTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> VecTokenStream<'a> {
        let ToolTokenizer {
            stemmer,
            stem,
            cache,
            splitter,
            tokens,
        } = self;
        let stemmer = stem.then_some(&*stemmer);
        let mut len = 0;
        splitter.split(text, &mut |word, from, to| {
            let Some(term) = term_of(stemmer, cache, word) else {
                return;
            };
            if len == tokens.len() {
                tokens.push(Token::default());
            }
            let t = &mut tokens[len];
            t.text.clear();
            t.text.push_str(term);
            t.offset_from = from;
            t.offset_to = to;
            t.position = len;
            t.position_length = 1;
            len += 1;
        });
        // A buffer grown by one huge text is not kept.
        if tokens.len() > 4096 && len < 4096 {
            tokens.truncate(4096);
            tokens.shrink_to_fit();
        }
        VecTokenStream {
            tokens,
            len,
            next: 0,
        }
    }
}

impl TokenStream for VecTokenStream<'_> {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.len
    }

    fn token(&self) -> &Token {
        // `advance` is always called first; before that, or after the end, tantivy never
        // asks. The fallback keeps this total anyway.
        match self.next.checked_sub(1) {
            Some(i) if i < self.len => &self.tokens[i],
            _ => &EMPTY_TOKEN,
        }
    }

    fn token_mut(&mut self) -> &mut Token {
        let i = self.next.saturating_sub(1).min(self.len);
        if i >= self.tokens.len() {
            self.tokens.push(Token::default());
        }
        &mut self.tokens[i]
    }
}

static EMPTY_TOKEN: Token = Token {
    offset_from: 0,
    offset_to: 0,
    position: 0,
    text: String::new(),
    position_length: 1,
};

/// The sentences of a line: cut after `.`, `!`, `?` or `;` followed by a space and a
/// capital letter, a digit or a quote (so "e.g. this" and "3.5 km" stay whole); after
/// `!`, `?` or `;` followed by a space, whatever comes next.
///
/// ```
/// use toolscout_search::analyzer::sentences;
///
/// assert_eq!(
///     sentences("Find flights to Oslo, e.g. on Monday. Then book a hotel!"),
///     ["Find flights to Oslo, e.g. on Monday.", "Then book a hotel!"]
/// );
/// ```
pub fn sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    for (k, &(i, c)) in chars.iter().enumerate() {
        if !matches!(c, '.' | '!' | '?' | ';') {
            continue;
        }
        let Some(&(_, space)) = chars.get(k + 1) else {
            continue;
        };
        let Some(&(next_at, next)) = chars.get(k + 2) else {
            continue;
        };
        let opens = next.is_uppercase() || next.is_ascii_digit() || matches!(next, '"' | '\'');
        if space == ' ' && (opens || c == ';' || c == '?' || c == '!') {
            out.push(&line[start..=i]);
            start = next_at;
        }
    }
    out.push(&line[start..]);
    out
}

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
