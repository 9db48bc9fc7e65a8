//! The index schema and how an [`IndexDoc`] becomes a tantivy document.

use serde_json::Value;
use tantivy::TantivyDocument;
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use toolscout_spec::ToolSpec;

use crate::analyzer::{ANALYZER, ANALYZER_EXACT};

/// What the index is fed: one tool, with the catalog's view of it.
///
/// The index stores only `id`; hits are looked up in the catalog by it.
#[derive(Debug, Clone, Copy)]
pub struct IndexDoc<'a> {
    /// The catalog's key of the tool; unique in the index (re-adding replaces).
    pub id: &'a str,
    /// The tool.
    pub spec: &'a ToolSpec,
    /// The bundle the tool comes from, if any: its slug (what
    /// [`SearchQuery::bundles`](crate::SearchQuery) filters by).
    pub bundle: Option<&'a str>,
    /// The bundle's name as people write it (`Numbers API`, `GitHub`): a query that names
    /// the API or server a tool belongs to finds the tool by it.
    pub bundle_name: Option<&'a str>,
    /// What the bundle is for: stored in the bundle field, not scored (a server's
    /// description speaks for all its tools, not for each).
    pub bundle_description: Option<&'a str>,
    /// Disabled tools are found only with [`SearchQuery::include_disabled`](crate::SearchQuery::include_disabled).
    pub enabled: bool,
    /// When the tool last changed (any clock, e.g. Unix seconds): newer wins ties.
    pub modified_at: i64,
    /// The caller's fingerprint of what this document was made from (0 when unused).
    ///
    /// It is stored, not searched: [`SearchIndex::fingerprints`](crate::SearchIndex::fingerprints)
    /// reads it back, so that a caller reopening an index on disk re-adds only the tools
    /// whose fingerprint changed since.
    pub fingerprint: u64,
    /// Who may see the tool: a short opaque string (`"*"`, a tenant's id) that
    /// [`SearchQuery::scopes`](crate::SearchQuery::scopes) filters by, exactly as written.
    ///
    /// `None` indexes no scope: the tool is found only by queries without a scope filter
    /// (it fails closed, never open). Indexed, not stored.
    pub scope: Option<&'a str>,
}

impl<'a> IndexDoc<'a> {
    /// An enabled tool without bundle or scope, modified at 0, keyed by its name.
    pub fn new(spec: &'a ToolSpec) -> Self {
        IndexDoc {
            id: spec.name.as_str(),
            spec,
            bundle: None,
            bundle_name: None,
            bundle_description: None,
            enabled: true,
            modified_at: 0,
            fingerprint: 0,
            scope: None,
        }
    }

    /// Sets the key.
    pub fn with_id(mut self, id: &'a str) -> Self {
        self.id = id;
        self
    }

    /// Sets the bundle.
    pub fn with_bundle(mut self, bundle: Option<&'a str>) -> Self {
        self.bundle = bundle;
        self
    }

    /// Sets the bundle's name and description (see [`IndexDoc::bundle_name`]).
    pub fn with_bundle_text(mut self, name: Option<&'a str>, description: Option<&'a str>) -> Self {
        self.bundle_name = name;
        self.bundle_description = description;
        self
    }

    /// Sets whether the tool is enabled.
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// Sets the modification time.
    pub fn with_modified_at(mut self, modified_at: i64) -> Self {
        self.modified_at = modified_at;
        self
    }

    /// Sets the fingerprint (see [`IndexDoc::fingerprint`]).
    pub fn with_fingerprint(mut self, fingerprint: u64) -> Self {
        self.fingerprint = fingerprint;
        self
    }

    /// Sets the scope (see [`IndexDoc::scope`]).
    ///
    /// ```
    /// use toolscout_search::{IndexDoc, SearchIndex, SearchQuery};
    ///
    /// let spec = toolscout_spec::ToolSpec::builder("get_weather", "Weather.").build()?;
    /// let index = SearchIndex::in_memory()?;
    /// index.extend([IndexDoc::new(&spec).with_scope(Some("tenant-a"))], &mut |_| {})?;
    /// let mine = index.search(&SearchQuery::new("weather").with_scopes(["*", "tenant-a"]))?;
    /// assert_eq!(mine.hits.len(), 1);
    /// let theirs = index.search(&SearchQuery::new("weather").with_scopes(["*", "tenant-b"]))?;
    /// assert!(theirs.hits.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_scope(mut self, scope: Option<&'a str>) -> Self {
        self.scope = scope;
        self
    }
}

/// The short text fields searched by words, each with its own BM25 next to the one over
/// the whole text (`all`).
pub(crate) const TEXT_FIELDS: [&str; 5] = ["name", "summary", "tags", "category", "bundle"];

/// Handles of every field.
#[derive(Debug, Clone)]
pub(crate) struct Fields {
    pub(crate) id: Field,
    /// The whole name, lowercased: exact, prefix and whole-name fuzzy matches.
    pub(crate) name_raw: Field,
    pub(crate) name_fast: Field,
    /// Analyzed text fields, see [`TEXT_FIELDS`].
    pub(crate) text: [Field; 5],
    /// Name, summary, description, parameters and utterances together: one BM25 over the
    /// whole tool.
    pub(crate) all: Field,
    /// The text of `all`, unstemmed: a query's words as written score here too.
    pub(crate) all_exact: Field,
    pub(crate) tag_raw: Field,
    pub(crate) category_raw: Field,
    pub(crate) bundle_raw: Field,
    pub(crate) enabled: Field,
    pub(crate) modified_at: Field,
    pub(crate) name_words: Field,
    pub(crate) fingerprint: Field,
    pub(crate) vector: Field,
    /// The [`IndexDoc::scope`], as written: filtered by, and read back with the vectors.
    pub(crate) scope: Field,
}

pub(crate) const MODIFIED_AT: &str = "modified_at";
/// How many distinct terms the name analyzes into: the denominator of name coverage.
pub(crate) const NAME_WORDS: &str = "name_words";
pub(crate) const ENABLED: &str = "enabled";
/// The name as given, a fast field: did-you-mean reads names without a stored document.
pub(crate) const NAME_FAST: &str = "name_fast";
/// The id, a fast field: the ids and fingerprints of every document are read without
/// the document store.
pub(crate) const ID: &str = "id";
/// The caller's [`IndexDoc::fingerprint`], a fast field.
pub(crate) const FINGERPRINT: &str = "fingerprint";
/// The tool's vector (little-endian `f32`s) when an embedder made one, a fast field: an
/// index reopened with the same embedder ranks by meaning without embedding again.
pub(crate) const VECTOR: &str = "vector";
/// The tool's [`IndexDoc::scope`], as written (no term when it has none), a fast field:
/// vectors read back from disk get their scope from it.
pub(crate) const SCOPE: &str = "scope";

pub(crate) fn schema() -> Schema {
    let mut b = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    b.add_text_field(ID, STRING | STORED | FAST);
    b.add_text_field("name_raw", STRING);
    b.add_text_field(NAME_FAST, TextOptions::default().set_fast("raw"));
    for name in TEXT_FIELDS {
        b.add_text_field(name, text.clone());
    }
    b.add_text_field("all", text.clone());
    b.add_text_field(
        "all_exact",
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(ANALYZER_EXACT)
                .set_index_option(IndexRecordOption::WithFreqs),
        ),
    );
    b.add_text_field("tag_raw", STRING);
    b.add_text_field("category_raw", STRING);
    b.add_text_field("bundle_raw", STRING);
    b.add_u64_field(ENABLED, INDEXED | FAST);
    b.add_i64_field(MODIFIED_AT, FAST);
    b.add_u64_field(NAME_WORDS, FAST);
    b.add_u64_field(FINGERPRINT, FAST);
    b.add_bytes_field(VECTOR, FAST);
    b.add_text_field(SCOPE, STRING | FAST);
    b.build()
}

impl Fields {
    pub(crate) fn new(schema: &Schema) -> tantivy::Result<Self> {
        let f = |n: &str| schema.get_field(n);
        Ok(Fields {
            id: f(ID)?,
            name_raw: f("name_raw")?,
            name_fast: f(NAME_FAST)?,
            text: [
                f(TEXT_FIELDS[0])?,
                f(TEXT_FIELDS[1])?,
                f(TEXT_FIELDS[2])?,
                f(TEXT_FIELDS[3])?,
                f(TEXT_FIELDS[4])?,
            ],
            all: f("all")?,
            all_exact: f("all_exact")?,
            tag_raw: f("tag_raw")?,
            category_raw: f("category_raw")?,
            bundle_raw: f("bundle_raw")?,
            enabled: f(ENABLED)?,
            modified_at: f(MODIFIED_AT)?,
            name_words: f(NAME_WORDS)?,
            fingerprint: f(FINGERPRINT)?,
            vector: f(VECTOR)?,
            scope: f(SCOPE)?,
        })
    }

    /// The tantivy document of a tool, with its `vector` if it has one; `analyzer` counts
    /// the name's terms.
    pub(crate) fn document(
        &self,
        doc: &IndexDoc<'_>,
        analyzer: &mut tantivy::tokenizer::TextAnalyzer,
        vector: Option<&[f32]>,
    ) -> TantivyDocument {
        let spec = doc.spec;
        let mut d = TantivyDocument::default();
        d.add_text(self.id, doc.id);
        d.add_text(self.name_raw, spec.name.to_lowercase());
        d.add_text(self.name_fast, spec.name.as_str());
        let [name, summary, tags, category, bundle] = self.text;
        d.add_text(name, name_text(spec.name.as_str()));
        if let Some(title) = &spec.title {
            d.add_text(name, title);
        }
        d.add_text(summary, &spec.summary);
        let mut p = String::new();
        parameter_text(&spec.parameters, 0, &mut p);
        // Both whole-text fields, stemmed and as written, hold the same text.
        let all = |d: &mut TantivyDocument, text: &str| {
            d.add_text(self.all, text);
            d.add_text(self.all_exact, text);
        };
        all(&mut d, spec.name.as_str());
        all(&mut d, spec.name.as_str());
        all(&mut d, &name_text(spec.name.as_str()));
        all(&mut d, spec.description_or_summary());
        // The summary (the description's first sentence) counts twice: it says what the
        // tool does, where the rest adds conditions and parameter prose.
        all(&mut d, &spec.summary);
        all(&mut d, &p);
        // Sample requests in a user's words: the words a query uses when it does not
        // use the tool's.
        for u in &spec.utterances {
            all(&mut d, u);
        }
        for t in &spec.tags {
            d.add_text(tags, t);
            all(&mut d, t);
            d.add_text(self.tag_raw, t.to_lowercase());
        }
        if let Some(c) = &spec.category {
            d.add_text(category, c);
            all(&mut d, c);
            d.add_text(self.category_raw, c.to_lowercase());
        }
        if let Some(b) = doc.bundle {
            d.add_text(bundle, b);
            all(&mut d, b);
            d.add_text(self.bundle_raw, b.to_lowercase());
        }
        // The name as written, when it says more than the slug ("Numbers API" beside
        // `numbers-api` adds nothing; "Acme Voice" beside `voice` does).
        if let Some(name) = doc.bundle_name
            && !same_words(name, doc.bundle.unwrap_or(""))
        {
            d.add_text(bundle, name);
            all(&mut d, name);
        }
        if let Some(description) = doc.bundle_description {
            d.add_text(bundle, description);
        }
        d.add_u64(self.enabled, u64::from(doc.enabled));
        d.add_i64(self.modified_at, doc.modified_at);
        let words = crate::analyzer::terms(analyzer, spec.name.as_str(), 32).len();
        d.add_u64(self.name_words, words as u64);
        d.add_u64(self.fingerprint, doc.fingerprint);
        if let Some(v) = vector {
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            d.add_bytes(self.vector, &bytes);
        }
        if let Some(scope) = doc.scope {
            d.add_text(self.scope, scope);
        }
        d
    }
}

/// Whether two texts hold the same words, whatever their case and separators.
fn same_words(a: &str, b: &str) -> bool {
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    words(a) == words(b)
}

/// The name's words plus the long forms of common abbreviations and acronyms among them
/// (`calc` → `calculate`, `seo` → `search engine optimization`), so that queries in plain
/// words reach abbreviated names.
///
/// **Rationale:** tool names abbreviate (`calc_bmi`, `get_temp`, `list_repos`) while people
/// and models ask in full words; the table is generic programming vocabulary.
fn name_text(name: &str) -> String {
    let mut out = name.to_owned();
    for w in crate::analyzer::split_words(name) {
        if let Some((_, long)) = ABBREVIATIONS.iter().find(|(a, _)| *a == w) {
            out.push(' ');
            out.push_str(long);
        }
    }
    out
}

const ABBREVIATIONS: &[(&str, &str)] = &[
    ("addr", "address"),
    ("ai", "artificial intelligence"),
    ("api", "interface"),
    ("auth", "authentication"),
    ("avg", "average"),
    ("calc", "calculate"),
    ("cfg", "configuration"),
    ("conf", "configuration"),
    ("config", "configuration"),
    ("conv", "convert"),
    ("db", "database"),
    ("del", "delete"),
    ("desc", "description"),
    ("dir", "directory"),
    ("doc", "document"),
    ("docs", "documents"),
    ("env", "environment"),
    ("fn", "function"),
    ("func", "function"),
    ("img", "image"),
    ("ml", "machine learning"),
    ("nlp", "natural language processing"),
    ("ocr", "text recognition"),
    ("info", "information"),
    ("msg", "message"),
    ("msgs", "messages"),
    ("num", "number"),
    ("pic", "picture"),
    ("pwd", "password"),
    ("qty", "quantity"),
    ("repo", "repository"),
    ("repos", "repositories"),
    ("req", "request"),
    ("res", "result"),
    ("seo", "search engine optimization"),
    ("stats", "statistics"),
    ("std", "standard"),
    ("temp", "temperature"),
    ("tts", "text to speech"),
    ("tx", "transaction"),
    ("usr", "user"),
    ("val", "value"),
];

/// The most bytes of parameter text indexed per tool.
const MAX_PARAMETER_TEXT: usize = 2_000;

/// Parameter names at every level (a few deep, array items included); descriptions and
/// enum values of the top-level parameters only, which is what people search by
/// ("celsius"); at most [`MAX_PARAMETER_TEXT`] bytes.
///
/// **Rationale:** request bodies of real APIs nest dozens of described properties; their
/// prose is noise for finding the tool and triples the indexing work (measured on the
/// 92k OpenAPI operations).
fn parameter_text(schema: &Value, depth: usize, out: &mut String) {
    if depth > 3 || out.len() >= MAX_PARAMETER_TEXT {
        return;
    }
    let Some(obj) = schema.as_object() else {
        return;
    };
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for (name, p) in props {
            out.push_str(name);
            out.push(' ');
            if depth == 0 {
                if let Some(d) = p.get("description").and_then(Value::as_str) {
                    out.push_str(d);
                    out.push(' ');
                }
                if let Some(values) = p.get("enum").and_then(Value::as_array) {
                    for v in values.iter().filter_map(Value::as_str) {
                        out.push_str(v);
                        out.push(' ');
                    }
                }
            }
            parameter_text(p, depth + 1, out);
            if out.len() >= MAX_PARAMETER_TEXT {
                let mut cut = MAX_PARAMETER_TEXT;
                while !out.is_char_boundary(cut) {
                    cut -= 1;
                }
                out.truncate(cut);
                return;
            }
        }
    }
    if let Some(items) = obj.get("items") {
        parameter_text(items, depth + 1, out);
    }
}
