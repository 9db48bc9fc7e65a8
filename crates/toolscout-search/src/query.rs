//! What a search asks ([`SearchQuery`]) and what it answers ([`SearchResults`]).

use serde::Serialize;

use crate::{Error, Result};

/// The most hits one page may hold; larger requests are cut to it.
pub const MAX_PAGE_SIZE: usize = 100;
/// The page size when none is given: of a search, and of every page of tools a model
/// reads (the discover tools', the REST and JSON-RPC searches', the CLI's `search`).
///
/// **Rationale:** a page a model reads costs tokens; a program's listing is another
/// thing, with its own default (`toolscout_catalog::DEFAULT_LISTING_PAGE_SIZE`).
pub const DEFAULT_PAGE_SIZE: usize = 20;
/// How deep pagination goes, in hits.
pub const MAX_OFFSET: usize = 10_000;
/// Queries are cut to this many characters.
pub const MAX_QUERY_CHARS: usize = 1_000;

/// A search: free text plus filters and paging. Built in code; the text is never parsed
/// as a query language.
///
/// ```
/// use toolscout_search::SearchQuery;
/// let q = SearchQuery::new("weather").with_tag("web").with_limit(5);
/// assert_eq!(q.limit, 5);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchQuery {
    /// What the user or model typed: a name, part of one, or a sentence.
    pub text: String,
    /// Only tools with at least one of these tags (case-insensitive); empty: any.
    pub tags: Vec<String>,
    /// Only tools of one of these bundles; empty: any.
    pub bundles: Vec<String>,
    /// Only tools of this category.
    pub category: Option<String>,
    /// Find disabled tools too.
    pub include_disabled: bool,
    /// Hits per page, 1 to [`MAX_PAGE_SIZE`]; 0 means [`DEFAULT_PAGE_SIZE`].
    pub limit: usize,
    /// The token of the page to return, from a previous [`SearchResults::next_page`].
    pub page_token: Option<String>,
    /// Groups near-twins: a hit whose tool vector has at least this cosine with a better
    /// hit's is not a hit of its own but listed in that hit's [`Hit::twins`], and pages
    /// count the hits that remain. `None` (the default) lists every tool; without an
    /// [`Embedder`](crate::Embedder), and for a query that looks like a name (ranked by
    /// names, not meaning), nothing is grouped. See [`DEFAULT_TWIN_SIMILARITY`].
    pub twins: Option<f32>,
    /// Only tools of these scopes ([`IndexDoc::scope`](crate::IndexDoc::scope), exactly as
    /// written); `None`: any. An empty list finds nothing, and a tool indexed without a
    /// scope is found only with `None`. See [`SearchQuery::with_scopes`].
    pub scopes: Option<Vec<String>>,
}

/// The cosine at or above which two tools count as near-twins, the same job under two
/// names (BFCL holds fifteen weather tools), for [`SearchQuery::with_twins`] and the
/// agent's retrieval.
///
/// **Rationale:** with all-MiniLM-L6-v2, tools that do one job under two names score
/// 0.8–0.95 and tools of one subject but different jobs (`weather_forecast`,
/// `fahrenheit_to_celsius`) below. Grouping at 0.8, BFCL's recall@5 counted over five
/// hits and the twins listed with them is 0.927 (0.879 hit by hit, 0.929 over ten hits;
/// 1,000 queries), with 7.7 names in those five hits; at 0.9 it is 0.885. MetaTool has no
/// pairs that close (`toolscout eval search`, which prints both).
pub const DEFAULT_TWIN_SIMILARITY: f32 = 0.8;

impl SearchQuery {
    /// A query for `text`, first page, default size, no filter.
    pub fn new(text: impl Into<String>) -> Self {
        SearchQuery {
            text: text.into(),
            ..SearchQuery::default()
        }
    }

    /// Adds a tag filter (any of the tags matches).
    pub fn with_tag(mut self, tag: impl Into<String>) -> Self {
        self.tags.push(tag.into());
        self
    }

    /// Adds a bundle filter (any of the bundles matches).
    pub fn with_bundle(mut self, bundle: impl Into<String>) -> Self {
        self.bundles.push(bundle.into());
        self
    }

    /// Sets the category filter.
    pub fn with_category(mut self, category: impl Into<String>) -> Self {
        self.category = Some(category.into());
        self
    }

    /// Includes disabled tools.
    pub fn with_include_disabled(mut self, include: bool) -> Self {
        self.include_disabled = include;
        self
    }

    /// Sets the page size.
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// Asks for the page of this token.
    pub fn with_page_token(mut self, token: Option<String>) -> Self {
        self.page_token = token;
        self
    }

    /// Groups near-twins at this cosine (see [`SearchQuery::twins`]); `None` lists every
    /// tool. A value outside 0..=1 (or NaN) is taken as `None`.
    ///
    /// ```
    /// use toolscout_search::{DEFAULT_TWIN_SIMILARITY, SearchQuery};
    /// let q = SearchQuery::new("weather in Paris").with_twins(Some(DEFAULT_TWIN_SIMILARITY));
    /// assert_eq!(q.twins, Some(0.8));
    /// ```
    pub fn with_twins(mut self, at: Option<f32>) -> Self {
        self.twins = at.filter(|t| (0.0..=1.0).contains(t));
        self
    }

    /// Finds only tools of these scopes (see [`SearchQuery::scopes`]): for an index that
    /// several tenants share, each query names the scopes its tenant may see.
    ///
    /// Only tools of these scopes are found (on every tier: by name, words or meaning) or
    /// offered as did-you-mean, and a name held only in another scope is no tool's: its
    /// [`NameStatus`] is `None`. Which tools a query finds does not depend on the tools of
    /// other scopes (a word common only in other scopes is still searched). Scores, and so
    /// the order of hits and where a page ends, still do a little: BM25 weighs a word by
    /// how many tools of the whole index hold it. Page tokens of one set of scopes are
    /// refused for another.
    ///
    /// ```
    /// use toolscout_search::SearchQuery;
    /// let q = SearchQuery::new("weather").with_scopes(["*", "tenant-a"]);
    /// assert_eq!(q.scopes, Some(vec!["*".to_owned(), "tenant-a".to_owned()]));
    /// ```
    pub fn with_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = Some(scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The page size actually used.
    pub(crate) fn page_size(&self) -> usize {
        if self.limit == 0 {
            DEFAULT_PAGE_SIZE
        } else {
            self.limit.min(MAX_PAGE_SIZE)
        }
    }

    /// A fingerprint of everything but the paging, so a token only serves its own query.
    fn fingerprint(&self) -> u32 {
        use std::hash::Hasher as _;
        let mut h = fnv::FnvHasher::default();
        let mut eat = |s: &str| {
            h.write(s.as_bytes());
            h.write_u8(0xff);
        };
        eat(&self.text);
        self.tags.iter().for_each(|t| eat(t));
        eat("\u{1}");
        self.bundles.iter().for_each(|b| eat(b));
        eat(self.category.as_deref().unwrap_or("\u{2}"));
        eat(if self.include_disabled { "d" } else { "e" });
        eat(&self.page_size().to_string());
        // Grouped pages count other hits: a token of one grouping is not another's.
        if let Some(t) = self.twins {
            eat(&t.to_bits().to_string());
        }
        // Other scopes find other tools: a token of one set is not another's (the same set
        // in another order is the same query).
        if let Some(scopes) = &self.scopes {
            let mut scopes: Vec<&str> = scopes.iter().map(String::as_str).collect();
            scopes.sort_unstable();
            scopes.dedup();
            eat("\u{3}");
            scopes.into_iter().for_each(eat);
        }
        let h = h.finish();
        // Folded to the 32 bits a token carries.
        ((h >> 32) ^ (h & 0xffff_ffff)) as u32
    }

    /// The position of the requested page's first hit among all the query's hits (0
    /// without a token); an error for a token that is not this query's.
    pub fn page_offset(&self) -> Result<usize> {
        self.offset()
    }

    /// The page token of this query that starts at hit `offset`: for a caller that shows
    /// only part of a page (e.g. to fit a token budget) and must continue right after
    /// what it showed.
    pub fn page_token_at(&self, offset: usize) -> String {
        self.token_for(offset)
    }

    /// The offset of the requested page.
    pub(crate) fn offset(&self) -> Result<usize> {
        let Some(token) = &self.page_token else {
            return Ok(0);
        };
        let bad = |reason| Error::PageToken {
            token: token.clone(),
            reason,
        };
        if token.len() != 16 || !token.is_ascii() {
            return Err(bad("not a page token"));
        }
        let (a, b) = token.split_at(8);
        let offset = u32::from_str_radix(a, 16).map_err(|_| bad("not a page token"))?;
        let print = u32::from_str_radix(b, 16).map_err(|_| bad("not a page token"))?;
        let offset = offset ^ print;
        if print != self.fingerprint() {
            return Err(bad("it belongs to another query"));
        }
        let offset = usize::try_from(offset).map_err(|_| bad("offset out of range"))?;
        if offset > MAX_OFFSET {
            return Err(bad("offset out of range"));
        }
        Ok(offset)
    }

    /// The token of the page that starts at `offset`.
    pub(crate) fn token_for(&self, offset: usize) -> String {
        let print = self.fingerprint();
        let offset = u32::try_from(offset).unwrap_or(u32::MAX);
        format!("{:08x}{print:08x}", offset ^ print)
    }
}

/// How a hit matched; hits of a better tier always come first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// The query is the tool's name (ignoring case).
    Exact,
    /// The query starts the tool's name.
    Prefix,
    /// Words of the query occur in the tool's text; BM25 ranks these. With an
    /// [`Embedder`](crate::Embedder), a sentence's word tier also holds the tools nearest in
    /// meaning, ranked by BM25 and cosine together.
    Word,
    /// Words of the query are within edit distance 1 (2 for long words) of the tool's name
    /// or its words.
    Fuzzy,
}

impl Tier {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Exact => "exact",
            Tier::Prefix => "prefix",
            Tier::Word => "word",
            Tier::Fuzzy => "fuzzy",
        }
    }
}

/// The field that contributed most to a hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchField {
    /// The tool name (or its words, or its title).
    Name,
    /// The one-line summary.
    Summary,
    /// The rest of the tool's text: description, parameter names, their descriptions
    /// and enum values.
    Text,
    /// The tags.
    Tags,
    /// The category.
    Category,
    /// The bundle.
    Bundle,
    /// No query word: the tool's text is close in meaning (only with an
    /// [`Embedder`](crate::Embedder)).
    Meaning,
}

impl MatchField {
    /// The fields with a BM25 of their own, in the order of `schema::TEXT_FIELDS`.
    pub(crate) const SHORT: [MatchField; 5] = [
        MatchField::Name,
        MatchField::Summary,
        MatchField::Tags,
        MatchField::Category,
        MatchField::Bundle,
    ];

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchField::Name => "name",
            MatchField::Summary => "summary",
            MatchField::Text => "text",
            MatchField::Tags => "tags",
            MatchField::Category => "category",
            MatchField::Bundle => "bundle",
            MatchField::Meaning => "meaning",
        }
    }
}

/// One result: the tool's id and why it is here.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// The id given in [`IndexDoc::id`](crate::IndexDoc::id).
    pub id: String,
    /// The match tier.
    pub tier: Tier,
    /// The field that matched (for words, the one that scored most).
    pub field: MatchField,
    /// The score within the tier (BM25 for words; higher is better).
    pub score: f32,
    /// The tool's modification time, the tie-breaker.
    pub modified_at: i64,
    /// How close in meaning the tool is to the query: the cosine (−1 to 1) of their
    /// vectors on all-MiniLM-L6-v2's scale (unrelated texts near 0.1, texts on one subject
    /// above 0.3; see [`Embedder::calibrate`](crate::Embedder::calibrate)), for hits of a
    /// sentence query ranked with an [`Embedder`](crate::Embedder); for a query of several
    /// sentences, the best of the whole query's cosine and each sentence's (in the light
    /// of the whole). `None` for name matches, and without an embedder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meaning: Option<f32>,
    /// The ids of the near-twins grouped under this hit, best first, when the query asked
    /// for grouping ([`SearchQuery::with_twins`]); each is not a hit of its own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub twins: Vec<String>,
}

impl Hit {
    /// One line: `id  tier/field score`.
    pub fn explain(&self) -> String {
        format!(
            "{}  {}/{} {:.3}",
            self.id,
            self.tier.as_str(),
            self.field.as_str(),
            self.score
        )
    }
}

/// Why the tool named exactly like the query is not among the hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NameStatus {
    /// It exists but is disabled (search with `include_disabled` to see it).
    Disabled,
    /// It exists but the tag, bundle or category filters exclude it.
    FilteredOut,
}

/// One page of results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResults {
    /// The hits of this page, best first.
    pub hits: Vec<Hit>,
    /// The token of the next page, if there is one.
    pub next_page: Option<String>,
    /// When the query looks like a tool name that is not in the index: the closest names.
    pub did_you_mean: Vec<String>,
    /// When a tool has exactly the query's name but is hidden: why.
    pub name_status: Option<NameStatus>,
}
