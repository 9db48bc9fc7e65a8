//! `toolscout-search`: find the right tool among thousands by name, part of a name, or
//! a sentence.
//!
//! A [`SearchIndex`] (tantivy, in memory or in a directory) is fed [`IndexDoc`]s — a
//! [`ToolSpec`](toolscout_spec::ToolSpec) plus the catalog's id, bundle, enabled flag
//! and modification time — and answers a [`SearchQuery`] with one page of [`Hit`]s in
//! [`SearchResults`]. Hits are ranked in strict [`Tier`]s: exact name, then name prefix,
//! then whole words (BM25 over name, summary, description, parameters, tags, category,
//! bundle; a query's words as written count above words that only share their stem),
//! then fuzzy (edit distance 1, 2 for long words); recency breaks ties. Each hit says its
//! tier, the [`MatchField`] that matched and its score. A name that is not found
//! gets did-you-mean suggestions, or a [`NameStatus`] when it exists but is hidden.
//!
//! Tenants can share one index: each tool carries a scope ([`IndexDoc::with_scope`]) and
//! each query names the scopes it may see ([`SearchQuery::with_scopes`]); the tools of
//! other scopes change nothing of which tools it finds.
//!
//! With an [`Embedder`] ([`SearchIndex::with_embedder`]), sentence queries are ranked by
//! meaning too: the word tier fuses BM25 with the cosine of the query's and each tool's
//! vectors, and finds tools that share no word with the query ([`MatchField::Meaning`]);
//! each such hit carries its cosine ([`Hit::meaning`]), and
//! [`SearchIndex::similarity`] compares two tools.
//!
//! [`baseline::Bm25`] is a plain BM25, the floor the ranking is measured against.
//!
//! The crate is synchronous and knows nothing of HTTP; it knows the [`Embedder`] trait,
//! not a model (`toolscout-embed` has one).
//!
//! ```
//! use toolscout_search::{IndexDoc, SearchIndex, SearchQuery, Tier};
//!
//! let tools = toolscout_spec::sample::catalog();
//! let index = SearchIndex::in_memory()?;
//! index.extend(tools.iter().map(IndexDoc::new), &mut |_| {})?;
//!
//! let found = index.search(&SearchQuery::new("what's the weather in Tokyo"))?;
//! assert_eq!(found.hits[0].id, "get_weather");
//! assert_eq!(found.hits[0].tier, Tier::Word);
//!
//! let typo = index.search(&SearchQuery::new("get_wether"))?;
//! assert!(typo.did_you_mean.contains(&"get_weather".to_owned()));
//! # Ok::<(), toolscout_search::Error>(())
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod analyzer;
pub mod baseline;
mod error;
mod index;
mod query;
mod ranking;
mod schema;
mod search;
mod semantic;

pub use error::{Error, Result};
pub use index::{Opened, SearchIndex};
pub use query::{
    DEFAULT_PAGE_SIZE, DEFAULT_TWIN_SIMILARITY, Hit, MAX_OFFSET, MAX_PAGE_SIZE, MAX_QUERY_CHARS,
    MatchField, NameStatus, SearchQuery, SearchResults, Tier,
};
pub use schema::IndexDoc;
pub use semantic::{Embedder, tool_text};
pub use toolscout_spec::suggest::{MAX_SUGGESTIONS, MIN_LIKENESS, closest_names, did_you_mean};
