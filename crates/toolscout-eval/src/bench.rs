//! The search speed benchmark: how fast an index on disk builds, reopens and answers a
//! realistic mix of queries (real query texts, name prefixes, misspelled names), next to
//! a naive scan that scores every tool name with Jaro–Winkler (what a catalog without an
//! index would do).
//!
//! ```no_run
//! use toolscout_eval::bench::SearchBench;
//!
//! let tools = toolscout_eval::read::tool_lines("data/tools.jsonl.gz".as_ref())?;
//! let texts = toolscout_eval::read::query_texts("data/queries.jsonl".as_ref())?;
//! let dir = tempfile::tempdir()?;
//! let report = SearchBench::default().run(dir.path(), &tools.specs, texts, &mut |_| {})?;
//! println!("p50 {:.0} µs, {:.0}× the naive scan", report.all.p50_us, report.speedup);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use toolscout_search::{Embedder, SearchIndex, SearchQuery};
use toolscout_spec::ToolSpec;

use crate::read::spread;
use crate::search::index_specs;
use crate::{Error, Result};

/// The settings of a search speed benchmark.
#[derive(Clone)]
pub struct SearchBench {
    embedder: Option<Arc<dyn Embedder>>,
    per_kind: usize,
    naive: usize,
    twins: Option<f32>,
}

impl Default for SearchBench {
    fn default() -> Self {
        SearchBench {
            embedder: None,
            per_kind: 400,
            naive: 150,
            twins: Some(toolscout_search::DEFAULT_TWIN_SIMILARITY),
        }
    }
}

impl SearchBench {
    /// Ranks by meaning too, with this encoder (query texts are embedded; the tools'
    /// vectors come from the encoder's cache once a run has made them).
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Queries of each kind (query texts, name prefixes, misspelled names); default 400.
    pub fn with_per_kind(mut self, n: usize) -> Self {
        self.per_kind = n;
        self
    }

    /// Queries timed with the naive scan (it is slow), spread over the same mix; default
    /// 150.
    pub fn with_naive(mut self, n: usize) -> Self {
        self.naive = n;
        self
    }

    /// Groups near-twins at this cosine, as `discover_tools` does (with an encoder;
    /// `None` lists every tool).
    pub fn with_twins(mut self, at: Option<f32>) -> Self {
        self.twins = at;
        self
    }

    /// Builds an index of `tools` in `dir` (a new or empty folder), reopens it, and times
    /// the query mix, `texts` being the real query texts; `progress` hears how many
    /// tools are indexed so far.
    pub fn run(
        &self,
        dir: &Path,
        tools: &[ToolSpec],
        texts: Vec<String>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<BenchReport> {
        let open = |dir: &Path| -> Result<SearchIndex> {
            let index = SearchIndex::open_or_create(dir)?;
            Ok(match &self.embedder {
                Some(e) => index.with_embedder(e.clone()),
                None => index,
            })
        };
        let started = Instant::now();
        let index = open(dir)?;
        index_specs(&index, tools, &[], progress)?;
        let build_s = started.elapsed().as_secs_f64();
        drop(index);

        let started = Instant::now();
        let index = open(dir)?;
        let reopened = index.len();
        let reopen_ms = started.elapsed().as_secs_f64() * 1e3;
        if reopened != tools.len() as u64 {
            return Err(Error::Reopened {
                found: reopened,
                expected: tools.len(),
            });
        }

        let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
        let mix = query_mix(&names, texts, self.per_kind);
        let queries: Vec<SearchQuery> = mix
            .iter()
            .map(|q| SearchQuery::new(q.as_str()).with_twins(self.twins))
            .collect();
        // Warm up the caches first.
        for q in queries.iter().take(200) {
            index.search(q)?;
        }
        let mut times = Vec::with_capacity(queries.len());
        for q in &queries {
            let t = Instant::now();
            let found = index.search(q)?;
            times.push(t.elapsed());
            std::hint::black_box(found);
        }
        let per_kind: Vec<Latency> = times
            .chunks(self.per_kind.max(1))
            .map(|c| {
                let mut c = c.to_vec();
                c.sort();
                Latency::of(&c)
            })
            .collect();
        times.sort();
        let all = Latency::of(&times);

        let names_lower: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
        let mut naive_times: Vec<Duration> = spread(mix.clone(), self.naive)
            .iter()
            .map(|q| {
                let t = Instant::now();
                std::hint::black_box(naive_scan(&names_lower, q));
                t.elapsed()
            })
            .collect();
        naive_times.sort();
        let naive_p50_us = percentile(&naive_times, 0.5);
        Ok(BenchReport {
            tools: tools.len(),
            model: index.embedder_model().map(str::to_owned),
            twins: self.twins,
            build_s,
            reopen_ms,
            queries: times.len(),
            all,
            per_kind,
            naive_queries: naive_times.len(),
            naive_p50_us,
            speedup: if all.p50_us > 0.0 {
                naive_p50_us / all.p50_us
            } else {
                0.0
            },
        })
    }
}

/// What [`SearchBench::run`] measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct BenchReport {
    /// Tools indexed.
    pub tools: usize,
    /// The sentence encoder's model, when ranked by meaning too.
    pub model: Option<String>,
    /// The cosine near-twins were grouped at.
    pub twins: Option<f32>,
    /// Seconds to build the index on disk and commit it.
    pub build_s: f64,
    /// Milliseconds to reopen it.
    pub reopen_ms: f64,
    /// Queries timed.
    pub queries: usize,
    /// Their latency.
    pub all: Latency,
    /// The latency of each kind: query texts, name prefixes, misspelled names (fewer
    /// without query texts).
    pub per_kind: Vec<Latency>,
    /// Queries timed with the naive scan.
    pub naive_queries: usize,
    /// The naive scan's median, in microseconds.
    pub naive_p50_us: f64,
    /// The naive scan's median over the index's.
    pub speedup: f64,
}

/// The median and 99th percentile of a set of timings, in microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Latency {
    /// The median.
    pub p50_us: f64,
    /// The 99th percentile.
    pub p99_us: f64,
}

impl Latency {
    fn of(sorted: &[Duration]) -> Self {
        Latency {
            p50_us: percentile(sorted, 0.5),
            p99_us: percentile(sorted, 0.99),
        }
    }
}

/// A small deterministic generator (xorshift), so every run times the same queries.
struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % (n.max(1) as u64)) as usize
    }
}

/// The realistic mix: real query texts, name prefixes and misspelled names.
fn query_mix(names: &[String], texts: Vec<String>, per_kind: usize) -> Vec<String> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut mix = spread(texts, per_kind);
    if names.is_empty() {
        return mix;
    }
    for _ in 0..per_kind {
        let name: Vec<char> = names[rng.next(names.len())].chars().collect();
        let len = (name.len() * 3 / 5).clamp(1, name.len().max(1));
        mix.push(name.iter().take(len).collect());
    }
    for _ in 0..per_kind {
        let mut name: Vec<char> = names[rng.next(names.len())].chars().collect();
        if name.is_empty() {
            continue;
        }
        let i = rng.next(name.len());
        match rng.next(3) {
            0 if name.len() > 2 => {
                name.remove(i);
            }
            1 if i + 1 < name.len() => name.swap(i, i + 1),
            _ => name[i] = 'x',
        }
        mix.push(name.into_iter().collect());
    }
    mix
}

/// Scores every name with Jaro–Winkler and keeps the best 10.
fn naive_scan(names_lower: &[String], query: &str) -> Vec<usize> {
    let q = query.to_lowercase();
    let mut top: Vec<(f64, usize)> = Vec::with_capacity(11);
    for (i, n) in names_lower.iter().enumerate() {
        let s = strsim::jaro_winkler(&q, n);
        if top.len() < 10 || top.last().is_some_and(|(worst, _)| s > *worst) {
            let at = top.partition_point(|(t, _)| *t >= s);
            top.insert(at, (s, i));
            top.truncate(10);
        }
    }
    top.into_iter().map(|(_, i)| i).collect()
}

/// The `p` quantile of sorted timings, in microseconds (0 for none).
fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)].as_secs_f64() * 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_is_the_same_every_run_and_has_each_kind() {
        let names: Vec<String> = ["get_weather", "send_email", "read_file"]
            .map(str::to_owned)
            .to_vec();
        let texts = vec!["what is the weather".to_owned(), "mail bob".to_owned()];
        let mix = query_mix(&names, texts.clone(), 2);
        assert_eq!(mix, query_mix(&names, texts, 2));
        assert_eq!(mix.len(), 6);
        assert_eq!(mix[..2], ["what is the weather", "mail bob"]);
        // Prefixes: three fifths of a name.
        assert!(
            mix[2..4]
                .iter()
                .all(|p| names.iter().any(|n| n.starts_with(p.as_str())))
        );
    }

    #[test]
    fn the_naive_scan_ranks_the_closest_name_first() {
        let names = ["get_weather", "send_email", "read_file"].map(str::to_owned);
        assert_eq!(naive_scan(&names, "SEND_EMIAL")[0], 1);
    }
}
