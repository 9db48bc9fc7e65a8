//! What a [`SearchQuery`]'s filters let through (tags, bundles, category, enabled, scopes),
//! and which query terms are worth scoring among the tools a query may see.
//!
//! **Rationale:** the scope filter goes wherever the other filters go, and everything
//! counted to decide *which* tools a query finds is counted within its scopes: for a
//! query of one tenant, the tools of another must not change what it is shown.

use tantivy::Searcher;
use tantivy::collector::Count;
use tantivy::query::{BooleanQuery, ConstScoreQuery, EmptyQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Term};

use crate::query::SearchQuery;
use crate::{Result, SearchIndex};

/// One clause of a boolean query.
pub(super) type Clause = (Occur, Box<dyn Query>);

/// In a large catalog (see [`LARGE_CATALOG`]), query terms found in more than this share
/// of the tools are not scored (unless all are).
///
/// **Rationale:** such a term's BM25 weight is at most ln 4 ≈ 1.4 against 8–11 for a
/// rare one, so it hardly moves the ranking, but its postings are the longest to walk:
/// on the 92k OpenAPI tools (`com`, `get`, `api`, `id` …) leaving them out cut query time
/// by about a fifth, for −0.001 recall@5 on BFCL with the OpenAPI tools as distractors.
/// A share of 0.1 cost 0.015 there.
const COMMON_SHARE: f64 = 0.25;
/// From this many tools on, common query terms are left out (see [`COMMON_SHARE`]).
///
/// **Rationale:** the rule is for speed, which only large catalogs need; in a small one a
/// word shared by a few tools ("weather" among ten) must still make each a word hit.
const LARGE_CATALOG: u64 = 10_000;

impl SearchIndex {
    /// The terms worth scoring: in a catalog of at least [`LARGE_CATALOG`] tools, those in
    /// at most [`COMMON_SHARE`] of the tools (all of them when every term is that common).
    ///
    /// With `scope` (see [`scope_filter`](Self::scope_filter)), the catalog is the tools
    /// of those scopes: both its size and each term's count are counted within them.
    ///
    /// **Rationale:** which terms are searched decides which tools are found; counted over
    /// the whole index, a word common in another tenant's tools would be dropped from this
    /// one's queries. The price: a term common elsewhere but not here is still walked
    /// through its long postings.
    pub(super) fn discriminating(
        &self,
        searcher: &Searcher,
        terms: &[String],
        scope: Option<&dyn Query>,
    ) -> Result<Vec<String>> {
        let size = match scope {
            None => searcher.num_docs(),
            Some(scope) => searcher.search(scope, &Count)? as u64,
        };
        if size < LARGE_CATALOG {
            return Ok(terms.to_vec());
        }
        let limit = (size as f64 * COMMON_SHARE) as u64;
        let mut kept = Vec::with_capacity(terms.len());
        for t in terms {
            let term = Term::from_field_text(self.fields.all, t);
            // No more tools of the scopes hold a term than tools of the whole index: only
            // a term common in the index is counted again within the scopes.
            let mut held = searcher.doc_freq(&term)?;
            if let Some(scope) = scope
                && held > limit
            {
                let q: Box<dyn Query> = Box::new(TermQuery::new(term, IndexRecordOption::Basic));
                let within =
                    BooleanQuery::new(vec![(Occur::Must, q), (Occur::Must, scope.box_clone())]);
                held = searcher.search(&within, &Count)? as u64;
            }
            if held <= limit {
                kept.push(t.clone());
            }
        }
        Ok(if kept.is_empty() {
            terms.to_vec()
        } else {
            kept
        })
    }

    /// The tools of `scopes`, exactly as written, scored 0 (nothing for an empty list).
    /// A tool indexed without a scope holds no scope term, so no scope lets it through.
    pub(super) fn scope_filter(&self, scopes: &[String]) -> Box<dyn Query> {
        if scopes.is_empty() {
            return Box::new(EmptyQuery);
        }
        any_of(self.fields.scope, scopes.iter().map(String::clone))
    }

    /// Tag, bundle, category, enabled and scope filters; they never change scores.
    pub(super) fn filters(&self, searcher: &Searcher, q: &SearchQuery) -> Result<Vec<Clause>> {
        let f = &self.fields;
        let folded = |values: &[String]| -> Vec<String> {
            values.iter().map(|v| v.to_lowercase()).collect()
        };
        let mut out: Vec<Clause> = Vec::new();
        if !q.tags.is_empty() {
            out.push((Occur::Must, any_of(f.tag_raw, folded(&q.tags))));
        }
        if !q.bundles.is_empty() {
            out.push((Occur::Must, any_of(f.bundle_raw, folded(&q.bundles))));
        }
        if let Some(c) = &q.category {
            let c = folded(std::slice::from_ref(c));
            out.push((Occur::Must, any_of(f.category_raw, c)));
        }
        if let Some(scopes) = &q.scopes {
            out.push((Occur::Must, self.scope_filter(scopes)));
        }
        // Most catalogs have no disabled tool; then the filter would only slow scoring down.
        if !q.include_disabled && searcher.doc_freq(&Term::from_field_u64(f.enabled, 0))? > 0 {
            let t = Term::from_field_u64(f.enabled, 1);
            let q = TermQuery::new(t, IndexRecordOption::Basic);
            out.push((
                Occur::Must,
                Box::new(ConstScoreQuery::new(Box::new(q), 0.0)),
            ));
        }
        Ok(out)
    }
}

/// The tools whose `field` holds any of `values` (as given), scored 0.
fn any_of(field: Field, values: impl IntoIterator<Item = String>) -> Box<dyn Query> {
    let clauses: Vec<Clause> = values
        .into_iter()
        .map(|v| {
            let t = Term::from_field_text(field, &v);
            let q: Box<dyn Query> = Box::new(TermQuery::new(t, IndexRecordOption::Basic));
            (Occur::Should, q)
        })
        .collect();
    Box::new(ConstScoreQuery::new(
        Box::new(BooleanQuery::new(clauses)),
        0.0,
    ))
}

/// `query`, restricted by the filters (unchanged when there are none, so that tantivy can
/// prune with block-max WAND).
pub(super) fn with_filters(query: Box<dyn Query>, filters: &[Clause]) -> Box<dyn Query> {
    if filters.is_empty() {
        return query;
    }
    let mut clauses: Vec<Clause> = vec![(Occur::Must, query)];
    clauses.extend(filters.iter().map(|(o, q)| (*o, q.box_clone())));
    Box::new(BooleanQuery::new(clauses))
}
