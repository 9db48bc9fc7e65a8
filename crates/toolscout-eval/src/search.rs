//! The search evaluation: how high toolscout's ranking puts the right tools for labelled
//! queries (recall@1/5/10 and mean reciprocal rank), next to a plain BM25 over the same
//! tools in the same run ([`toolscout_search::baseline::Bm25`]).
//!
//! [`SearchEval::run`] indexes [`ToolLines`] in memory and runs [`LabelledQuery`]s over
//! it, returning a [`SearchReport`]. With a sentence encoder
//! ([`SearchEval::with_embedder`]) it also measures the ranking by words alone and, with
//! [`SearchEval::with_twins`], the ranking with near-twins grouped as `discover_tools`
//! shows them. [`Metrics`] is the arithmetic, usable on any ranking:
//!
//! ```
//! use toolscout_eval::search::Metrics;
//!
//! let mut m = Metrics::default();
//! m.add(&["a", "b", "c"], &["b".to_owned()]); // the right tool second
//! m.add(&["d", "e"], &["x".to_owned()]); // not found
//! assert_eq!(m.recall_at_1(), 0.0);
//! assert_eq!(m.recall_at_5(), 0.5);
//! assert_eq!(m.mrr(), 0.25);
//! ```

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use toolscout_search::baseline::Bm25;
use toolscout_search::{Embedder, IndexDoc, SearchIndex, SearchQuery};
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::jsonl::LineBundle;
use toolscout_spec::name::slug_from_name;

use crate::read::{LabelledQuery, ToolLines};
use crate::{Error, Result};

/// Indexes tools with their bundles (each line's bundle indexed as the catalog indexes a
/// bundle's tools) and commits; `progress` hears how many tools are in so far.
pub fn index_tools(
    index: &SearchIndex,
    tools: &ToolLines,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    index_specs(index, &tools.specs, &tools.bundles, progress)
}

/// [`index_tools`] over specs and their bundles (`bundles[i]` for `specs[i]`; missing
/// ones have none).
pub(crate) fn index_specs(
    index: &SearchIndex,
    specs: &[ToolSpec],
    bundles: &[Option<LineBundle>],
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    let slugs: Vec<Option<String>> = bundles
        .iter()
        .map(|b| b.as_ref().map(|b| slug_from_name(&b.name)))
        .collect();
    let docs = specs.iter().enumerate().map(|(i, spec)| {
        let bundle = bundles.get(i).and_then(Option::as_ref);
        IndexDoc::new(spec)
            .with_bundle(slugs.get(i).and_then(Option::as_deref))
            .with_bundle_text(
                bundle.map(|b| b.name.as_str()),
                bundle.and_then(|b| b.description.as_deref()),
            )
    });
    index.extend(docs, progress)?;
    Ok(())
}

/// Recall@1/5/10 and reciprocal rank, summed over queries.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Metrics {
    queries: usize,
    r1: f64,
    r5: f64,
    /// The sum of the squares of each query's recall@5, for its standard error.
    r5_sq: f64,
    r10: f64,
    rr: f64,
}

impl Metrics {
    /// Adds one query's ranking (tool names, best first); returns its recall@5.
    pub fn add(&mut self, ranked: &[&str], expected: &[String]) -> f64 {
        let rows: Vec<Vec<&str>> = ranked.iter().map(|r| vec![*r]).collect();
        self.add_rows(&rows, expected)
    }

    /// Adds one query's ranking in rows of tools (a hit and the near-twins shown with
    /// it), a row counting as one position; returns its recall@5.
    pub fn add_rows(&mut self, rows: &[Vec<&str>], expected: &[String]) -> f64 {
        let exp: HashSet<&str> = expected.iter().map(String::as_str).collect();
        let recall = |k: usize| {
            if exp.is_empty() {
                return 0.0;
            }
            let found = rows
                .iter()
                .take(k)
                .flatten()
                .filter(|n| exp.contains(*n))
                .count();
            found as f64 / exp.len() as f64
        };
        self.queries += 1;
        self.r1 += recall(1);
        let r5 = recall(5);
        self.r5 += r5;
        self.r5_sq += r5 * r5;
        self.r10 += recall(10);
        self.rr += rows
            .iter()
            .position(|r| r.iter().any(|n| exp.contains(n)))
            .map_or(0.0, |i| 1.0 / (i + 1) as f64);
        r5
    }

    /// Adds another set of queries' sums.
    pub fn merge(&mut self, other: &Metrics) {
        self.queries += other.queries;
        self.r1 += other.r1;
        self.r5 += other.r5;
        self.r5_sq += other.r5_sq;
        self.r10 += other.r10;
        self.rr += other.rr;
    }

    /// The queries added.
    pub fn queries(&self) -> usize {
        self.queries
    }

    fn mean(&self, sum: f64) -> f64 {
        sum / self.queries.max(1) as f64
    }

    /// The mean share of each query's expected tools ranked first (0 without queries).
    pub fn recall_at_1(&self) -> f64 {
        self.mean(self.r1)
    }

    /// The mean share of each query's expected tools in the first five.
    pub fn recall_at_5(&self) -> f64 {
        self.mean(self.r5)
    }

    /// The mean share of each query's expected tools in the first ten.
    pub fn recall_at_10(&self) -> f64 {
        self.mean(self.r10)
    }

    /// The mean reciprocal rank of each query's first expected tool (0 where none is
    /// ranked).
    pub fn mrr(&self) -> f64 {
        self.mean(self.rr)
    }

    /// Half the width of recall@5's 95 % confidence interval over these queries (1.96
    /// standard errors of the mean of the per-query recalls); 0 under two queries.
    pub fn recall_at_5_margin(&self) -> f64 {
        if self.queries < 2 {
            return 0.0;
        }
        let n = self.queries as f64;
        let mean = self.r5 / n;
        let variance = (self.r5_sq / n - mean * mean).max(0.0);
        1.96 * (variance / n).sqrt()
    }
}

impl Serialize for Metrics {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Means {
            queries: usize,
            recall_at_1: f64,
            recall_at_5: f64,
            recall_at_10: f64,
            mrr: f64,
            recall_at_5_margin_95: f64,
        }
        Means {
            queries: self.queries,
            recall_at_1: self.recall_at_1(),
            recall_at_5: self.recall_at_5(),
            recall_at_10: self.recall_at_10(),
            mrr: self.mrr(),
            recall_at_5_margin_95: self.recall_at_5_margin(),
        }
        .serialize(serializer)
    }
}

/// Two rankings compared query by query, at 5.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Paired {
    /// Queries where toolscout's recall@5 is the higher.
    pub better: usize,
    /// Queries where it is the lower.
    pub worse: usize,
}

impl Paired {
    /// Adds one query's two recalls.
    pub fn add(&mut self, ours: f64, theirs: f64) {
        if ours > theirs {
            self.better += 1;
        } else if ours < theirs {
            self.worse += 1;
        }
    }

    /// Adds another set of queries' counts.
    pub fn merge(&mut self, other: &Paired) {
        self.better += other.better;
        self.worse += other.worse;
    }
}

/// The figures of the queries of one source (or of all of them).
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SourceFigures {
    /// The queries' `source` (empty for all of them together).
    pub source: String,
    /// toolscout's ranking.
    pub toolscout: Metrics,
    /// The plain BM25.
    pub bm25: Metrics,
    /// toolscout by words alone (measured with a sentence encoder only).
    pub words_only: Metrics,
    /// toolscout with near-twins grouped: a hit and the twins listed with it count as
    /// one position (measured with [`SearchEval::with_twins`] and an encoder only).
    pub twins_grouped: Metrics,
    /// How many names the first five grouped hits show, summed over queries.
    pub names_shown: usize,
    /// toolscout against words alone, query by query.
    pub vs_words_only: Paired,
    /// toolscout against BM25, query by query.
    pub vs_bm25: Paired,
}

impl SourceFigures {
    fn merge(&mut self, o: &SourceFigures) {
        self.toolscout.merge(&o.toolscout);
        self.bm25.merge(&o.bm25);
        self.words_only.merge(&o.words_only);
        self.twins_grouped.merge(&o.twins_grouped);
        self.names_shown += o.names_shown;
        self.vs_words_only.merge(&o.vs_words_only);
        self.vs_bm25.merge(&o.vs_bm25);
    }

    /// The names the first five grouped hits show, on average over queries.
    pub fn names_in_first_5(&self) -> f64 {
        self.names_shown as f64 / self.twins_grouped.queries.max(1) as f64
    }
}

/// A query whose expected tools toolscout did not rank in its first five.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Miss {
    /// The query.
    pub query: String,
    /// Its expected tools.
    pub expected: Vec<String>,
    /// Where each expected tool ranked (from 1), `None` beyond the first hundred: a
    /// near miss tells from a tool the ranking never found.
    pub ranks: Vec<Option<usize>>,
    /// The five tools ranked first.
    pub top: Vec<String>,
}

/// What [`SearchEval::run`] measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SearchReport {
    /// Tools indexed.
    pub tools: usize,
    /// The sentence encoder's model, when ranked by meaning too.
    pub model: Option<String>,
    /// Whether words alone were measured too (with an encoder).
    pub words_only: bool,
    /// The cosine near-twins were grouped at, when measured.
    pub twins: Option<f32>,
    /// Every query's figures together.
    pub all: SourceFigures,
    /// The figures per query source, ordered by source.
    pub sources: Vec<SourceFigures>,
    /// Queries toolscout missed, at most [`SearchEval::with_misses`] of them.
    pub misses: Vec<Miss>,
    /// Seconds to index the tools (toolscout's index and BM25).
    pub index_seconds: f64,
    /// Seconds to run the queries.
    pub query_seconds: f64,
}

/// The settings of a search evaluation.
#[derive(Clone, Default)]
pub struct SearchEval {
    embedder: Option<Arc<dyn Embedder>>,
    twins: Option<f32>,
    misses: usize,
    threads: Option<usize>,
}

impl SearchEval {
    /// Ranks by meaning too, with this encoder (and measures words alone beside it).
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Also measures the ranking with near-twins grouped at this cosine (with an
    /// encoder; without one, or with `None`, it is not measured).
    pub fn with_twins(mut self, at: Option<f32>) -> Self {
        self.twins = at;
        self
    }

    /// Keeps up to `n` of the queries toolscout misses ([`SearchReport::misses`]).
    pub fn with_misses(mut self, n: usize) -> Self {
        self.misses = n;
        self
    }

    /// Runs the queries on `n` threads (default: the cores, at most 4).
    pub fn with_threads(mut self, n: usize) -> Self {
        self.threads = Some(n.max(1));
        self
    }

    /// Indexes `tools` in memory and runs `queries` over toolscout's ranking and BM25's;
    /// `progress` hears how many tools are indexed so far, from 0 again for each index.
    pub fn run(
        &self,
        tools: &ToolLines,
        queries: &[LabelledQuery],
        progress: &mut dyn FnMut(u64),
    ) -> Result<SearchReport> {
        let started = Instant::now();
        let mut index = SearchIndex::in_memory()?;
        if let Some(e) = &self.embedder {
            index = index.with_embedder(e.clone());
        }
        index_tools(&index, tools, progress)?;
        let bm25 = Bm25::new(&tools.specs);
        let index_seconds = started.elapsed().as_secs_f64();
        // With a model, the same run also measures words alone, for comparison.
        let words = match &self.embedder {
            Some(_) => {
                let words = SearchIndex::in_memory()?;
                index_tools(&words, tools, progress)?;
                Some(words)
            }
            None => None,
        };
        let twins = self.twins.filter(|_| self.embedder.is_some());

        let started = Instant::now();
        let threads = self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map_or(1, usize::from)
                .clamp(1, 4)
        });
        let chunk = queries.len().div_ceil(threads).max(1);
        let run = Run {
            index: &index,
            words: words.as_ref(),
            bm25: &bm25,
            tools: &tools.specs,
            misses: self.misses,
            twins,
        };
        let results: Vec<Result<(Vec<SourceFigures>, Vec<Miss>)>> = std::thread::scope(|s| {
            let handles: Vec<_> = queries
                .chunks(chunk)
                .map(|part| {
                    let run = &run;
                    s.spawn(move || run.queries(part))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or(Err(Error::Panicked("query"))))
                .collect()
        });
        let mut sources: Vec<SourceFigures> = Vec::new();
        let mut misses = Vec::new();
        for r in results {
            let (part, m) = r?;
            for row in part {
                source_of(&mut sources, &row.source).merge(&row);
            }
            misses.extend(m);
        }
        misses.truncate(self.misses);
        let mut all = SourceFigures::default();
        for row in &sources {
            all.merge(row);
        }
        sources.sort_by(|x, y| x.source.cmp(&y.source));
        Ok(SearchReport {
            tools: tools.len(),
            model: index.embedder_model().map(str::to_owned),
            words_only: words.is_some(),
            twins,
            all,
            sources,
            misses,
            index_seconds,
            query_seconds: started.elapsed().as_secs_f64(),
        })
    }
}

/// The row of `source`, added when missing.
fn source_of<'a>(rows: &'a mut Vec<SourceFigures>, source: &str) -> &'a mut SourceFigures {
    let i = match rows.iter().position(|r| r.source == source) {
        Some(i) => i,
        None => {
            rows.push(SourceFigures {
                source: source.to_owned(),
                ..SourceFigures::default()
            });
            rows.len() - 1
        }
    };
    &mut rows[i]
}

/// What one thread of queries reads.
struct Run<'a> {
    index: &'a SearchIndex,
    words: Option<&'a SearchIndex>,
    bm25: &'a Bm25,
    tools: &'a [ToolSpec],
    misses: usize,
    twins: Option<f32>,
}

impl Run<'_> {
    fn queries(&self, queries: &[LabelledQuery]) -> Result<(Vec<SourceFigures>, Vec<Miss>)> {
        let mut rows: Vec<SourceFigures> = Vec::new();
        let mut misses = Vec::new();
        for q in queries {
            let found = self
                .index
                .search(&SearchQuery::new(q.text.as_str()).with_limit(100))?;
            let ranked: Vec<&str> = found.hits.iter().map(|h| h.id.as_str()).collect();
            let base: Vec<&str> = self
                .bm25
                .search(&q.text, 100)
                .into_iter()
                .filter_map(|(i, _)| self.tools.get(i).map(|t| t.name.as_str()))
                .collect();
            let e = source_of(&mut rows, &q.source);
            let ours = e.toolscout.add(&ranked, &q.expected);
            if let Some(at) = self.twins {
                let found = self.index.search(
                    &SearchQuery::new(q.text.as_str())
                        .with_limit(100)
                        .with_twins(Some(at)),
                )?;
                let grouped: Vec<Vec<&str>> = found
                    .hits
                    .iter()
                    .map(|h| {
                        std::iter::once(h.id.as_str())
                            .chain(h.twins.iter().map(String::as_str))
                            .collect()
                    })
                    .collect();
                e.twins_grouped.add_rows(&grouped, &q.expected);
                e.names_shown += grouped.iter().take(5).map(Vec::len).sum::<usize>();
            }
            let theirs = e.bm25.add(&base, &q.expected);
            e.vs_bm25.add(ours, theirs);
            if let Some(w) = self.words {
                let found = w.search(&SearchQuery::new(q.text.as_str()).with_limit(100))?;
                let ranked: Vec<&str> = found.hits.iter().map(|h| h.id.as_str()).collect();
                let theirs = e.words_only.add(&ranked, &q.expected);
                e.vs_words_only.add(ours, theirs);
            }
            if misses.len() < self.misses
                && !ranked
                    .iter()
                    .take(5)
                    .any(|r| q.expected.iter().any(|x| x == r))
            {
                misses.push(Miss {
                    query: q.text.clone(),
                    expected: q.expected.clone(),
                    ranks: q
                        .expected
                        .iter()
                        .map(|x| ranked.iter().position(|r| r == x).map(|i| i + 1))
                        .collect(),
                    top: ranked.iter().take(5).map(|r| (*r).to_owned()).collect(),
                });
            }
        }
        Ok((rows, misses))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_of_twins_counts_as_one_position() {
        let expected = vec!["b".to_owned()];
        let mut m = Metrics::default();
        // "b" is listed as a twin of the first hit: found at 1.
        m.add_rows(&[vec!["a", "b"], vec!["c"]], &expected);
        assert_eq!(m.recall_at_1(), 1.0);
        assert_eq!(m.mrr(), 1.0);
    }

    #[test]
    fn the_margin_of_recall_at_5_is_1_96_standard_errors() {
        let mut m = Metrics::default();
        let expected = vec!["a".to_owned()];
        m.add(&["a"], &expected);
        assert_eq!(m.recall_at_5_margin(), 0.0, "one query has no margin");
        m.add(&["a"], &expected);
        m.add(&["b"], &expected);
        // Recalls 1, 1, 0: variance 2/3 − 4/9 = 2/9.
        let want = 1.96 * ((2.0 / 9.0) / 3.0f64).sqrt();
        assert!((m.recall_at_5_margin() - want).abs() < 1e-12);
    }

    #[test]
    fn paired_counts_ties_as_neither() {
        let mut p = Paired::default();
        p.add(1.0, 0.5);
        p.add(0.5, 0.5);
        p.add(0.0, 1.0);
        assert_eq!(
            p,
            Paired {
                better: 1,
                worse: 1
            }
        );
    }
}
