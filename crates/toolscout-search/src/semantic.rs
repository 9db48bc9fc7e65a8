//! Ranking by meaning: an [`Embedder`] turns tool texts and queries into vectors, and the
//! word tier of a sentence query fuses BM25 with the cosine of those vectors.
//!
//! **Rationale:** words miss what a tool is *for* when the query says it differently
//! ("how many Canadian dollars for 500 US dollars" → `currency_exchange.convert`).
//! A prototype with all-MiniLM-L6-v2 (recall@5) found the cosine alone at 0.79 on BFCL
//! (BM25 0.80) but 0.77 on MetaTool (BM25 0.49): the two make different mistakes, so
//! their sum beats either. Measured with `toolscout eval search` (words only → words and
//! meaning): BFCL 0.845 → 0.872, MetaTool 0.641 → 0.740, BFCL among the 92k OpenAPI
//! tools 0.784 → 0.818. Averaged GloVe word vectors, tried
//! first, gained under 0.02 on either, so a sentence encoder it is.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use toolscout_spec::ToolSpec;

/// Turns texts into unit vectors whose dot product says how close their meanings are.
///
/// The search crate knows no model: an embedder (for example `toolscout-embed`'s
/// sentence encoder) is handed to [`SearchIndex::with_embedder`](crate::SearchIndex::with_embedder).
pub trait Embedder: Send + Sync {
    /// The model's name; vectors of different models are never compared.
    fn model(&self) -> &str;
    /// One L2-normalised vector per text, in order, all of the same length: the texts
    /// are tools' texts (documents).
    fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>>;

    /// The vector of a query, compared with the documents' vectors. The default embeds
    /// it as a document; a model trained with a query prompt (e5's `query: `, bge's
    /// instruction) puts it first here.
    fn embed_query(&self, text: &str) -> Vec<f32> {
        self.embed(&[text]).into_iter().next().unwrap_or_default()
    }

    /// This model's cosine on the scale search's thresholds are set in: that of
    /// all-MiniLM-L6-v2, where unrelated texts sit near 0.1 and texts on one subject above
    /// 0.3 (the floor 0.2 for tools found by meaning alone, the twin level of
    /// [`SearchQuery::with_twins`](crate::SearchQuery::with_twins), an agent's confidence
    /// floor are set there). It must keep the
    /// order of cosines (a non-decreasing map). The default leaves the cosine as it is; a
    /// model whose cosines run higher or lower (a static model's do) maps them here, so
    /// that the same thresholds mean the same for it.
    fn calibrate(&self, cosine: f32) -> f32 {
        cosine
    }
}

/// How much the cosine counts against BM25 in the fused word tier: a hit scores
/// `bm25 / norm + MEANING_WEIGHT × cosine`, where `norm` is the best hit's BM25 or
/// [`WORDS_NORM_FLOOR`] times the query's word weight, whichever is larger.
///
/// **Rationale:** cosines of related texts sit around 0.4–0.7 and of unrelated ones near
/// 0.1, while the normalised BM25 spans 0–1. The weight, the norm's floor and
/// [`MIN_MEANING`] were measured together, recall@5 with the built-in potion-base-8M /
/// all-MiniLM-L6-v2 mixed with it (`toolscout eval search`: BFCL 1,000 queries, MetaTool
/// 1,500, BFCL + the 92,589 OpenAPI tools as distractors 500):
///
/// | weight, floor, [`MIN_MEANING`] | BFCL | MetaTool | distractors |
/// |---|---|---|---|
/// | 2, none, 0.3 (before) | 0.881 / 0.886 | 0.733 / 0.734 | 0.818 / 0.826 |
/// | 2, 0.5, 0.3 | 0.878 / 0.886 | 0.742 / 0.761 | |
/// | 2, 0.3, 0.2 | 0.881 / | 0.742 / | |
/// | **2.5, 0.3, 0.2** | **0.882 / 0.888** | **0.751 / 0.771** | **0.818 / 0.830** |
/// | 3, 0.3, 0.2 | 0.876 / 0.885 | 0.757 / 0.780 | 0.815 / 0.833 |
/// | 3, 0.3, 0.15 | 0.876 / 0.885 | 0.758 / 0.782 | / 0.833 |
/// | 3, 0.5, 0.15 | 0.870 / 0.882 | 0.763 / 0.789 | |
/// | 4, 0.5, 0.15 | 0.860 / 0.880 | 0.764 / 0.801 | / 0.824 |
/// | 1000 (meaning alone), none, none | / 0.837 | / 0.796 | |
///
/// 2.5 is the most meaning that loses nothing on any set with either encoder; more
/// trades BFCL for MetaTool. BFCL's queries name what they want in the tools' own words
/// (and its misses are near-twins, whatever the weights); MetaTool's and people's
/// requests say it in other words, where the best BM25 hit shares a word or two with the
/// query and normalising by it alone made that a full match. Earlier, with MiniLM alone:
/// weights 1, 1.5, 2, 3, 4 gave BFCL 0.865, 0.869, 0.872, 0.867, 0.864; the tool text
/// embedded (name words and description; with parameter names; the summary only) moved
/// BFCL by under 0.002.
pub(crate) const MEANING_WEIGHT: f32 = 2.5;
/// The least a sentence query's BM25 is divided by, as a share of its word weight (the
/// most BM25 gives a tool holding every query word the catalog has, each as often as
/// can be; see [`MEANING_WEIGHT`]).
pub(crate) const WORDS_NORM_FLOOR: f32 = 0.3;
/// A tool found by meaning alone (no query word in its text) must be at least this close.
///
/// **Rationale:** every text has some cosine with every other; without a floor any
/// sentence would list the whole catalog. all-MiniLM-L6-v2 puts unrelated texts near 0.1
/// and texts on the same subject above 0.3; a request often says what it wants in words
/// far from the tool's (MetaTool, all-MiniLM-L6-v2: the right tool's cosine is below 0.3
/// for a third of 1,500 queries, below 0.2 for a seventh), and 0.2 instead of 0.3 put it
/// in the top five 1.8 points more often (see [`MEANING_WEIGHT`]).
pub(crate) const MIN_MEANING: f32 = 0.2;
/// How many candidates each side (BM25, meaning) brings to the fusion, at least.
pub(crate) const FUSE_DEPTH: usize = 50;

/// The most sentences of a query embedded alone: a longer text's later sentences count
/// through the whole text's vector only, so that a query's cost stays bounded.
const MAX_SENTENCES: usize = 8;

/// The sentences of `text` of three words or more: each line's
/// ([`crate::analyzer::sentences`]), trimmed.
pub(crate) fn sentences(text: &str) -> Vec<&str> {
    text.lines()
        .flat_map(crate::analyzer::sentences)
        .map(str::trim)
        .filter(|s| s.split_whitespace().count() >= 3)
        .collect()
}

/// A query of two sentences or more is also embedded sentence by sentence, each in the
/// light of the whole: a sentence's vector is the normalised sum of its own and the whole
/// query's, and a tool's cosine is the best of the whole query's and the sentences'.
///
/// **Rationale:** a request that asks for several things ("Translate this page to French.
/// Then email it to Ana.") has one vector for all of them, which lies near none of the
/// tools it needs; each sentence's own vector lies near its tool. A sentence alone has
/// lost the request's context ("Can you give me a summary of the key points?" after "I
/// just watched a TED talk."), which adding the whole query's vector gives back. Recall@5
/// (`toolscout eval search`, built-in potion-base-8M; BFCL 2,501 queries, MetaTool 3,000,
/// Seal-Tools multi-need 500 and single 200, BFCL among the 92k OpenAPI tools 500):
///
/// | sentence vectors | BFCL | MetaTool | Seal multi | Seal single | distractors |
/// |---|---|---|---|---|---|
/// | none (before) | 0.869 | 0.751 | 0.803 | 0.980 | 0.818 |
/// | each alone | 0.867 | 0.746 | 0.867 | 0.980 | |
/// | each alone, cosine × 0.9 | 0.866 | 0.748 | 0.869 | 0.980 | 0.814 |
/// | each alone, cosine × 0.8 | 0.870 | 0.749 | 0.853 | 0.980 | |
/// | **each plus the whole** | **0.866** | **0.750** | **0.862** | **0.980** | **0.815** |
/// | each plus the whole, cosine × 0.9 | 0.868 | 0.749 | 0.859 | 0.980 | |
///
/// (Words alone: Seal multi 0.861; the whole request's vector had cost it 6 points.) On
/// BFCL and MetaTool every row is within noise (±0.013, ±0.015); alone, a sentence
/// like "Can you help with that?" lies near whatever tool offers help (MetaTool's new
/// misses), which the whole query's part keeps from mattering without a tuned weight.
/// Each sentence is one more embedding and scan: 30 → 34 ms a query among 94,563 tools (BFCL
/// queries, 2 cores).
#[derive(Debug, Default, Clone)]
pub(crate) struct QueryVectors {
    /// The whole text's.
    whole: Vec<f32>,
    /// Each sentence's plus the whole text's, normalised, when it has two or more.
    sentences: Vec<Vec<f32>>,
}

/// `a + b` scaled to unit length (`a` when the sum is zero or the lengths differ).
fn unit_sum(a: &[f32], b: &[f32]) -> Vec<f32> {
    if a.len() != b.len() {
        return a.to_vec();
    }
    let sum: Vec<f32> = a.iter().zip(b).map(|(x, y)| x + y).collect();
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > f32::EPSILON && norm.is_finite() {
        sum.into_iter().map(|x| x / norm).collect()
    } else {
        a.to_vec()
    }
}

impl QueryVectors {
    /// The vectors of a text of one sentence.
    #[cfg(test)]
    pub(crate) fn one(whole: Vec<f32>) -> Self {
        QueryVectors {
            whole,
            sentences: Vec::new(),
        }
    }

    /// Every vector: the whole text's, then the sentences'.
    fn all(&self) -> impl Iterator<Item = &[f32]> {
        std::iter::once(self.whole.as_slice()).chain(self.sentences.iter().map(Vec::as_slice))
    }
}

/// The text of a tool that an index embeds: its name in words, then what it does
/// ("get weather: Current weather for a city"). A tool's vector is its embedder's
/// [`Embedder::embed`] of this text.
pub fn tool_text(spec: &ToolSpec) -> String {
    let words = crate::analyzer::split_words(spec.name.as_str()).join(" ");
    format!("{words}: {}", spec.description_or_summary())
}

/// The embedder and the vectors of the indexed tools.
pub(crate) struct Semantic {
    pub(crate) embedder: Arc<dyn Embedder>,
    store: RwLock<Store>,
}

/// A vector to store: the tool's id, its [`IndexDoc::scope`](crate::IndexDoc::scope) and
/// the vector.
pub(crate) type Row = (String, Option<String>, Vec<f32>);

/// A write to the store, applied at the next commit.
enum Write {
    /// Sets the row of an id.
    Put(Row),
    /// Deletes the row of this id.
    Delete(String),
}

/// The scope of a row that has none: no scope filter lets it through.
const NO_SCOPE: u32 = u32::MAX;

/// Committed vectors (what searches see) and the writes since the last commit.
#[derive(Default)]
struct Store {
    ids: Vec<String>,
    /// The scope of each row, interned in `scope_ids` ([`NO_SCOPE`] for none).
    scopes: Vec<u32>,
    /// Every scope a row has had, by its number. Numbers are never reused, so that a scan
    /// never mistakes one scope for another; a tenant's scope is one string for its life,
    /// so the map grows with the tenants, not with the writes.
    scope_ids: HashMap<String, u32>,
    /// `ids.len() × dim` int8 components: row `i` times `scales[i]` is the vector of
    /// `ids[i]` (see [`quantize`]).
    rows: Vec<i8>,
    scales: Vec<f32>,
    by_id: HashMap<String, usize>,
    dim: usize,
    /// The writes since the last commit.
    pending: Vec<Write>,
}

impl Semantic {
    pub(crate) fn new(embedder: Arc<dyn Embedder>) -> Self {
        Semantic {
            embedder,
            store: RwLock::new(Store::default()),
        }
    }

    /// Records each vector under its id, with its scope, visible after
    /// [`commit`](Self::commit).
    pub(crate) fn stage(&self, items: Vec<Row>) {
        let mut store = self.write();
        store.pending.extend(items.into_iter().map(Write::Put));
    }

    /// Sets vectors already committed elsewhere (read back from an index on disk), each
    /// with its id and scope.
    pub(crate) fn load<'v>(
        &self,
        items: impl IntoIterator<Item = (String, Option<&'v str>, &'v [f32])>,
    ) {
        let mut store = self.write();
        for (id, scope, v) in items {
            store.put(id, scope, v);
        }
    }

    pub(crate) fn stage_delete(&self, id: &str) {
        self.write().pending.push(Write::Delete(id.to_owned()));
    }

    /// Applies the staged writes.
    pub(crate) fn commit(&self) {
        let mut store = self.write();
        for write in std::mem::take(&mut store.pending) {
            match write {
                Write::Put((id, scope, v)) => store.put(id, scope.as_deref(), &v),
                Write::Delete(id) => store.remove(&id),
            }
        }
    }

    /// Forgets the staged writes.
    pub(crate) fn rollback(&self) {
        self.write().pending.clear();
    }

    /// Whether `id` has a committed vector.
    pub(crate) fn has(&self, id: &str) -> bool {
        self.read().by_id.contains_key(id)
    }

    /// How many tools have a committed vector.
    pub(crate) fn len(&self) -> usize {
        self.read().ids.len()
    }

    /// The query's vectors: the whole text's and, for a text of two sentences or more
    /// (see [`sentences`]), each sentence's plus the whole text's, normalised (see
    /// [`QueryVectors`]).
    pub(crate) fn query_vectors(&self, text: &str) -> QueryVectors {
        let whole = self.embedder.embed_query(text);
        let parts = sentences(text);
        let sentences = if parts.len() < 2 {
            Vec::new()
        } else {
            parts
                .iter()
                .take(MAX_SENTENCES)
                .map(|part| unit_sum(&self.embedder.embed_query(part), &whole))
                .collect()
        };
        QueryVectors { whole, sentences }
    }

    /// The calibrated cosine of each id's vector with `query` (`None` for an id without
    /// one): the best of its vectors' (see [`QueryVectors`]). Every cosine search hands
    /// out is calibrated ([`Embedder::calibrate`]).
    pub(crate) fn cosines(&self, query: &QueryVectors, ids: &[&str]) -> Vec<Option<f32>> {
        let store = self.read();
        let queries: Vec<QueryInts> = query
            .all()
            .filter(|v| v.len() == store.dim)
            .map(QueryInts::new)
            .collect();
        ids.iter()
            .map(|id| {
                let &i = store.by_id.get(*id)?;
                queries
                    .iter()
                    .map(|q| self.embedder.calibrate(store.dot(q, i)))
                    .reduce(f32::max)
            })
            .collect()
    }

    /// The calibrated cosine of two ids' vectors, when both have one.
    pub(crate) fn between(&self, a: &str, b: &str) -> Option<f32> {
        let store = self.read();
        let (i, j) = (*store.by_id.get(a)?, *store.by_id.get(b)?);
        Some(self.embedder.calibrate(store.dot_rows(i, j)))
    }

    /// The `k` ids whose vectors are closest to `query`, best first, with their calibrated
    /// cosines as [`Semantic::cosines`] gives them (the map keeps the order, so only the
    /// `k` kept of each vector's scan are mapped); with `scopes`, among the rows of those
    /// scopes only (rows without a scope are left out).
    ///
    /// **Rationale:** the scopes are skipped inside the scan, not filtered after it: the
    /// `k` nearest of the whole index could all be other scopes' (a small tenant beside a
    /// large one would find nothing by meaning), and which of a scope's tools are found
    /// must not depend on the tools of other scopes.
    pub(crate) fn nearest_in(
        &self,
        query: &QueryVectors,
        k: usize,
        scopes: Option<&[String]>,
    ) -> Vec<(String, f32)> {
        let store = self.read();
        if k == 0 || store.dim == 0 {
            return Vec::new();
        }
        let allowed = scopes.map(|s| store.allowed(s));
        if allowed.as_ref().is_some_and(|a| !a.contains(&true)) {
            return Vec::new();
        }
        // Each vector's `k` best, and each row's best cosine among them.
        let mut best: HashMap<usize, f32> = HashMap::new();
        for vector in query.all().filter(|v| v.len() == store.dim) {
            let mut scored = store.scan(&QueryInts::new(vector), allowed.as_deref());
            // A bounded min-heap would do fewer compares; a partial sort of all scores is
            // as fast at these sizes and simpler.
            if k < scored.len() {
                scored.select_nth_unstable_by(k, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                scored.truncate(k);
            }
            for (score, i) in scored {
                let cosine = self.embedder.calibrate(score);
                best.entry(i)
                    .and_modify(|c| *c = c.max(cosine))
                    .or_insert(cosine);
            }
        }
        let mut near: Vec<(usize, f32)> = best.into_iter().collect();
        near.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        near.truncate(k);
        near.into_iter()
            .map(|(i, cosine)| (store.ids[i].clone(), cosine))
            .collect()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Store> {
        self.store.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Store> {
        self.store.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl Store {
    /// Sets `id`'s vector and scope in place. A vector of another length than the first
    /// one stored is left out (the [`Embedder`] contract says they are all alike): that
    /// tool is then ranked by words alone.
    fn put(&mut self, id: String, scope: Option<&str>, v: &[f32]) {
        if self.ids.is_empty() {
            self.dim = v.len();
        }
        if v.len() != self.dim {
            // Its old row, if any, would keep the old vector and scope: drop it.
            self.remove(&id);
            return;
        }
        let dim = self.dim;
        let (scale, q) = quantize(v);
        let scope = self.intern(scope);
        match self.by_id.get(&id) {
            Some(&i) => {
                self.rows[i * dim..(i + 1) * dim].copy_from_slice(&q);
                self.scales[i] = scale;
                self.scopes[i] = scope;
            }
            None => {
                self.by_id.insert(id.clone(), self.ids.len());
                self.ids.push(id);
                self.rows.extend_from_slice(&q);
                self.scales.push(scale);
                self.scopes.push(scope);
            }
        }
    }

    /// The number of `scope` ([`NO_SCOPE`] for none), numbering it if it is new.
    fn intern(&mut self, scope: Option<&str>) -> u32 {
        let Some(scope) = scope else {
            return NO_SCOPE;
        };
        if let Some(&n) = self.scope_ids.get(scope) {
            return n;
        }
        // Past four billion scopes (beyond any index's memory) a scope gets no number of
        // its own: its rows are let through by no filter, rather than by another's.
        let Some(n) = u32::try_from(self.scope_ids.len())
            .ok()
            .filter(|&n| n < NO_SCOPE)
        else {
            return NO_SCOPE;
        };
        self.scope_ids.insert(scope.to_owned(), n);
        n
    }

    /// Which scope numbers `scopes` lets through, indexed by number: scopes no row has
    /// are not numbered, and [`NO_SCOPE`] is past the end (never let through).
    fn allowed(&self, scopes: &[String]) -> Vec<bool> {
        let mut allowed = vec![false; self.scope_ids.len()];
        for s in scopes {
            if let Some(slot) = self
                .scope_ids
                .get(s)
                .and_then(|&n| allowed.get_mut(n as usize))
            {
                *slot = true;
            }
        }
        allowed
    }

    /// Drops `id`'s vector: the last row moves into its place.
    fn remove(&mut self, id: &str) {
        let Some(i) = self.by_id.remove(id) else {
            return;
        };
        let (dim, last) = (self.dim, self.ids.len() - 1);
        if i != last {
            self.rows.copy_within(last * dim..(last + 1) * dim, i * dim);
            self.scales[i] = self.scales[last];
            self.scopes[i] = self.scopes[last];
            self.ids.swap(i, last);
            self.by_id.insert(self.ids[i].clone(), i);
        }
        self.ids.pop();
        self.rows.truncate(last * dim);
        self.scales.truncate(last);
        self.scopes.truncate(last);
    }

    /// Row `i`: its int8 components and their scale.
    fn row(&self, i: usize) -> (&[i8], f32) {
        let row = self
            .rows
            .get(i * self.dim..(i + 1) * self.dim)
            .unwrap_or_default();
        (row, self.scales.get(i).copied().unwrap_or(0.0))
    }

    /// The dot product of `query` with row `i`.
    fn dot(&self, query: &QueryInts, i: usize) -> f32 {
        let (row, scale) = self.row(i);
        if query.comps.len() != row.len() {
            return 0.0;
        }
        dot_ints(&query.comps, row) as f32 * query.scale * scale
    }

    /// The dot product of `query` with every row (with `allowed`, every row whose scope
    /// it lets through, see [`allowed`](Self::allowed)), paired with the row's index:
    /// split over the machine's cores when there are many rows.
    ///
    /// **Rationale:** the scan is most of a sentence query's time on a large catalog
    /// after the query's own embedding (92,589 tools × 640 components of the mixed
    /// encoders: 59 MB read per query). Integers instead of floats halved it, and a
    /// second core halves it again; under [`PARALLEL_SCAN_FROM`] rows a thread costs
    /// more than it saves.
    fn scan(&self, query: &QueryInts, allowed: Option<&[bool]>) -> Vec<(f32, usize)> {
        let n = self.ids.len();
        let threads = if n >= PARALLEL_SCAN_FROM { cores() } else { 1 };
        let score = |range: std::ops::Range<usize>| -> Vec<(f32, usize)> {
            match allowed {
                None => range.map(|i| (self.dot(query, i), i)).collect(),
                Some(allowed) => range
                    .filter(|&i| {
                        let scope = self.scopes.get(i).copied().unwrap_or(NO_SCOPE);
                        allowed.get(scope as usize).copied().unwrap_or(false)
                    })
                    .map(|i| (self.dot(query, i), i))
                    .collect(),
            }
        };
        if threads < 2 {
            return score(0..n);
        }
        let per = n.div_ceil(threads);
        std::thread::scope(|scope| {
            let parts: Vec<_> = (0..threads)
                .map(|t| {
                    let range = (t * per).min(n)..((t + 1) * per).min(n);
                    (range.clone(), scope.spawn(move || score(range)))
                })
                .collect();
            let mut all = Vec::with_capacity(n);
            for (range, part) in parts {
                // A part that panicked (a bug) is scored again here rather than lost.
                all.extend(part.join().unwrap_or_else(|_| score(range)));
            }
            all
        })
    }

    /// The dot product of rows `i` and `j`, summed exactly in integers.
    fn dot_rows(&self, i: usize, j: usize) -> f32 {
        let ((a, sa), (b, sb)) = (self.row(i), self.row(j));
        let sum: i32 = a
            .iter()
            .zip(b)
            .map(|(&x, &y)| i32::from(x) * i32::from(y))
            .sum();
        sum as f32 * sa * sb
    }
}

/// A vector as int8 components and their scale: each component divided by the largest
/// magnitude over 127, rounded.
///
/// **Rationale:** a quarter of the memory of f32 (92,589 tools × 640 components of the
/// mixed encoders: 59 MB instead of 237 MB) for a cosine off by a few thousandths at most;
/// recall@5 on BFCL, MetaTool and the 92k distractors moved by 0.001 or less, and the
/// sentence query's time did not change (see `docs/SCALING.md`).
// Each level is in -127..=127 by construction, so the cast cannot wrap (NaN becomes 0).
#[allow(clippy::cast_possible_truncation)]
fn quantize(v: &[f32]) -> (f32, Vec<i8>) {
    to_levels(v, 127.0, |x| x as i8)
}

/// `v` as integers in `-levels..=levels` and the scale they are multiplied by: each
/// component divided by the largest magnitude over `levels`, rounded. A zero or
/// non-finite vector is all zeros with scale 0.
fn to_levels<T: Copy + Default>(v: &[f32], levels: f32, cast: impl Fn(f32) -> T) -> (f32, Vec<T>) {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if !(max.is_finite() && max > 0.0) {
        return (0.0, vec![T::default(); v.len()]);
    }
    let scale = max / levels;
    (scale, v.iter().map(|x| cast((x / scale).round())).collect())
}

/// How many rows a scan needs before it is split over the cores.
const PARALLEL_SCAN_FROM: usize = 16_384;

/// The cores this process may use (read once), at most 8.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| {
        std::thread::available_parallelism()
            .map(std::num::NonZero::get)
            .unwrap_or(1)
            .min(8)
    })
}

/// The largest magnitude of a query component in integers (12 bits).
///
/// **Rationale:** the rounding moves a cosine by under 1/8,000 of the query's largest
/// component, far below the rows' own int8 rounding; and a product with an int8
/// component is at most 4,095 × 127, so a lane of [`dot_ints`] stays far inside `i32`
/// for any vector length a model has.
const QUERY_LEVELS: f32 = 4095.0;

/// A query vector in integers, for scans: `comps[k] × scale` is component `k`.
struct QueryInts {
    comps: Vec<i16>,
    scale: f32,
}

impl QueryInts {
    // Each level is in -4095..=4095 by construction, so the cast cannot wrap.
    #[allow(clippy::cast_possible_truncation)]
    fn new(v: &[f32]) -> QueryInts {
        let (scale, comps) = to_levels(v, QUERY_LEVELS, |x| x as i16);
        QueryInts { comps, scale }
    }
}

/// The dot product of a query's integers with int8 components, exactly, in sixteen
/// lanes so that the compiler vectorises it (multiply-and-add of 16-bit integers is an
/// instruction every x86-64 has).
fn dot_ints(a: &[i16], b: &[i8]) -> i64 {
    let mut lanes = [0i32; 16];
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: i64 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(&x, &y)| i64::from(x) * i64::from(y))
        .sum();
    for (x, y) in ca.zip(cb) {
        for ((l, &x), &y) in lanes.iter_mut().zip(x).zip(y) {
            *l += i32::from(x) * i32::from(y);
        }
    }
    lanes.iter().map(|&l| i64::from(l)).sum::<i64>() + tail
}

impl std::fmt::Debug for Semantic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Semantic")
            .field("model", &self.embedder.model())
            .field("vectors", &self.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{Embedder, QueryInts, QueryVectors, Semantic, dot_ints, quantize, sentences};

    /// "x…" texts point along the first axis, anything else along the second.
    struct Axis;
    impl Embedder for Axis {
        fn model(&self) -> &str {
            "axis"
        }
        fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
            let v = |t: &str| {
                if t.starts_with('x') {
                    vec![1.0, 0.0]
                } else {
                    vec![0.0, 1.0]
                }
            };
            texts.iter().map(|t| v(t)).collect()
        }
    }

    #[test]
    fn writes_replace_and_delete_rows_in_place() {
        let s = Semantic::new(Arc::new(Axis));
        let item = |id: &str, text: &str| (id.to_owned(), None, Axis.embed(&[text]).remove(0));
        s.stage(vec![item("a", "x"), item("b", "y"), item("c", "x")]);
        s.commit();
        s.stage_delete("a");
        s.stage(vec![item("c", "y")]);
        // Not visible before the commit.
        assert_eq!(
            s.cosines(&QueryVectors::one(vec![1.0, 0.0]), &["a", "b", "c"]),
            [Some(1.0), Some(0.0), Some(1.0)]
        );
        s.commit();
        assert_eq!(s.len(), 2);
        assert_eq!(
            s.cosines(&QueryVectors::one(vec![1.0, 0.0]), &["a", "b", "c"]),
            [None, Some(0.0), Some(0.0)]
        );
        assert_eq!(
            s.cosines(&QueryVectors::one(vec![0.0, 1.0]), &["a", "b", "c"]),
            [None, Some(1.0), Some(1.0)]
        );
        let near: Vec<String> = s
            .nearest_in(&QueryVectors::one(vec![0.0, 1.0]), 5, None)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(near.len(), 2);
        assert!(near.contains(&"b".to_owned()) && near.contains(&"c".to_owned()));
        assert_eq!(s.between("b", "c"), Some(1.0));
        assert_eq!(s.between("a", "b"), None, "a was deleted");
    }

    #[test]
    fn a_query_splits_into_sentences_of_three_words_or_more() {
        assert_eq!(
            sentences("Find flights to Oslo. Then book a hotel there!"),
            ["Find flights to Oslo.", "Then book a hotel there!"]
        );
        // A dot followed by a digit or letter ends nothing; a piece of under three words
        // is no sentence; a line break ends one.
        assert_eq!(
            sentences("Convert 3.5 km to miles; thanks. Hi!\nthen list the states of the U.S.A."),
            [
                "Convert 3.5 km to miles;",
                "then list the states of the U.S.A."
            ]
        );
        assert_eq!(
            sentences("What's the weather in Oslo?"),
            ["What's the weather in Oslo?"]
        );
        assert!(sentences("").is_empty() && sentences("Oslo weather").is_empty());
        // Multi-byte text around the ends.
        assert_eq!(
            sentences("Zeige mir Köln. Und dann München, bitte schön"),
            ["Zeige mir Köln.", "Und dann München, bitte schön"]
        );
    }

    #[test]
    fn each_sentence_of_a_query_finds_its_own_tool() {
        let s = Semantic::new(Arc::new(Axis));
        s.stage(vec![
            ("x_tool".to_owned(), None, vec![1.0, 0.0]),
            ("y_tool".to_owned(), None, vec![0.0, 1.0]),
        ]);
        s.commit();
        // The whole text starts with "x": its vector is the first axis. Its second
        // sentence's own vector is the second axis.
        let two = s.query_vectors("xray the parcel now. Then weigh it please.");
        let near = s.nearest_in(&two, 5, None);
        // The second sentence's vector, plus the whole's, lies halfway between the axes.
        let half = std::f32::consts::FRAC_1_SQRT_2;
        assert_eq!(near[0], ("x_tool".to_owned(), 1.0));
        assert_eq!(near[1].0, "y_tool");
        assert!((near[1].1 - half).abs() < 1e-2, "{near:?}");
        let cosines = s.cosines(&two, &["x_tool", "y_tool"]);
        assert_eq!(cosines[0], Some(1.0));
        assert!(
            (cosines[1].unwrap_or(0.0) - half).abs() < 1e-2,
            "{cosines:?}"
        );
        // One sentence: the whole text's vector alone.
        let one = s.query_vectors("xray the parcel now, then weigh it please.");
        assert_eq!(s.cosines(&one, &["y_tool"]), [Some(0.0)]);
        assert_eq!(s.nearest_in(&one, 1, None), [("x_tool".to_owned(), 1.0)]);
    }

    #[test]
    fn a_scoped_scan_skips_other_scopes_and_rows_without_one() {
        let s = Semantic::new(Arc::new(Axis));
        let scoped = |id: &str, scope: Option<&str>, v: [f32; 2]| {
            (id.to_owned(), scope.map(str::to_owned), v.to_vec())
        };
        // The rows of "b" and the row without a scope are all closer to the query.
        let mut rows = vec![scoped("a1", Some("a"), [0.6, 0.8])];
        rows.extend((0..20).map(|i| scoped(&format!("b{i}"), Some("b"), [1.0, 0.0])));
        rows.push(scoped("none", None, [1.0, 0.0]));
        rows.push(scoped("star", Some("*"), [0.0, 1.0]));
        s.stage(rows);
        s.commit();
        let ids = |scopes: Option<&[String]>, k: usize| -> Vec<String> {
            let near = s.nearest_in(&QueryVectors::one(vec![1.0, 0.0]), k, scopes);
            near.into_iter().map(|(id, _)| id).collect()
        };
        let mine = ["*".to_owned(), "a".to_owned()];
        assert_eq!(ids(Some(&mine), 1), ["a1"]);
        assert_eq!(ids(Some(&mine), 5), ["a1", "star"]);
        assert_eq!(ids(None, 1).len(), 1);
        assert!(ids(None, 30).contains(&"none".to_owned()));
        assert!(ids(Some(&[]), 5).is_empty());
        assert!(ids(Some(&["c".to_owned()]), 5).is_empty());

        // A row moved into a deleted one's place keeps its scope, and a tool re-added
        // under another scope is found under that one only.
        s.stage_delete("a1");
        s.stage(vec![scoped("b3", Some("a"), [1.0, 0.0])]);
        s.commit();
        assert_eq!(ids(Some(&mine), 5), ["b3", "star"]);
        assert_eq!(ids(Some(&["*".to_owned()]), 5), ["star"]);
        let b = ids(Some(&["b".to_owned()]), 30);
        assert_eq!(b.len(), 19);
        assert!(!b.contains(&"b3".to_owned()) && !b.contains(&"star".to_owned()));
    }

    #[test]
    fn dot_in_lanes_equals_the_plain_sum() {
        for n in [0, 1, 7, 15, 16, 17, 33, 384, 1000] {
            // The extremes of both types, so that a lane that overflowed would show.
            let a: Vec<i16> = (0..n)
                .map(|i| if i % 3 == 0 { -4095 } else { 4095 - i as i16 })
                .collect();
            let b: Vec<i8> = (0..n)
                .map(|i| {
                    if i % 3 == 0 {
                        -127
                    } else {
                        ((i * 37) % 255) as u8 as i8
                    }
                })
                .collect();
            let plain: i64 = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| i64::from(x) * i64::from(y))
                .sum();
            assert_eq!(dot_ints(&a, &b), plain, "n = {n}");
        }
    }

    #[test]
    fn a_large_catalog_is_scanned_on_every_core_and_ranked_as_one() {
        let s = Semantic::new(Arc::new(Axis));
        let n = super::PARALLEL_SCAN_FROM * 2 + 7;
        // Tool i's vector: 64 pseudo-random components from i, unit length; any two are
        // far apart (random directions in 64 dimensions).
        let vector = |i: usize| {
            let mut x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let v: Vec<f32> = (0..64)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 2001) as f32 / 1000.0 - 1.0
                })
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / norm).collect::<Vec<f32>>()
        };
        s.stage((0..n).map(|i| (format!("t{i}"), None, vector(i))).collect());
        s.commit();
        // Wherever a tool lies (the first, the middle, the last part of the scan), its own
        // vector finds it first, and every score is the one a single lookup gives.
        for q in [0, n / 2, n - 1] {
            let near = s.nearest_in(&QueryVectors::one(vector(q)), 10, None);
            assert_eq!(near.len(), 10);
            assert_eq!(near[0].0, format!("t{q}"));
            assert!((near[0].1 - 1.0).abs() < 1e-2, "{}", near[0].1);
            let ids: Vec<&str> = near.iter().map(|(id, _)| id.as_str()).collect();
            let one_by_one: Vec<f32> = s
                .cosines(&QueryVectors::one(vector(q)), &ids)
                .into_iter()
                .flatten()
                .collect();
            let scanned: Vec<f32> = near.iter().map(|(_, c)| *c).collect();
            assert_eq!(scanned, one_by_one);
            assert!(scanned.windows(2).all(|w| w[0] >= w[1]));
        }
    }

    #[test]
    fn quantized_vectors_keep_their_cosines_within_a_few_thousandths() {
        let unit = |seed: f32| {
            let v: Vec<f32> = (0..384).map(|i| (i as f32 * seed).sin()).collect();
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / n).collect::<Vec<f32>>()
        };
        for (a, b) in [(0.37, 0.11), (0.37, 0.38), (1.7, 0.05)] {
            let (x, y) = (unit(a), unit(b));
            let exact: f32 = x.iter().zip(&y).map(|(p, q)| p * q).sum();
            let (scale, q) = quantize(&y);
            let query = QueryInts::new(&x);
            let dot = dot_ints(&query.comps, &q) as f32 * query.scale * scale;
            assert!((dot - exact).abs() < 3e-3, "{a} {b}");
        }
        // A zero vector is all zeros, and a NaN component is 0, not NaN.
        assert_eq!(quantize(&[0.0, 0.0]), (0.0, vec![0, 0]));
        assert_eq!(quantize(&[f32::NAN, 1.0]).1, [0, 127]);
        assert_eq!(quantize(&[f32::NAN, f32::NAN]), (0.0, vec![0, 0]));
    }
}
