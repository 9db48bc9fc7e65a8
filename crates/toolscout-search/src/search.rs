//! Running a [`SearchQuery`]: one tantivy query per tier, best tier first, until the page
//! is full.
//!
//! **Rationale:** tiers are strict, so a lower tier is only run when the better ones have
//! not filled the page; most name-ish queries stop after one or two cheap term lookups.

mod columns;
mod filters;

use std::collections::HashSet;
use std::ops::Bound;

use tantivy::collector::{Count, TopDocs};
use tantivy::postings::SegmentPostings;
use tantivy::query::{
    BooleanQuery, BoostQuery, ConstScoreQuery, FuzzyTermQuery, InvertedIndexRangeQuery, Occur,
    Query, TermQuery,
};
use tantivy::schema::{Field, IndexRecordOption, Term, Value};
use tantivy::{DocAddress, DocSet, Searcher, TERMINATED, TantivyDocument};

use crate::analyzer::{STOP_WORDS, split_words, terms};
use crate::query::{
    Hit, MAX_QUERY_CHARS, MatchField, NameStatus, SearchQuery, SearchResults, Tier,
};
use crate::ranking::{EXACT_WEIGHT, NAME_COVERAGE};
use crate::semantic::{FUSE_DEPTH, MEANING_WEIGHT, MIN_MEANING, Semantic, WORDS_NORM_FLOOR};
use crate::{Result, SearchIndex};
use columns::Columns;
use filters::{Clause, with_filters};

/// Extra candidates fetched per tier so that score ties at the cut are ordered by recency.
const TIE_MARGIN: usize = 4;
/// How many of the best BM25 word hits are re-ranked by name coverage.
const RERANK_DEPTH: usize = 20;
/// At most this many distinct query terms are searched.
const MAX_TERMS: usize = 48;
/// At most this many query words are matched fuzzily.
const MAX_FUZZY_WORDS: usize = 8;
/// With near-twins grouped, how many candidates a search gathers per hit it must return.
const TWIN_DEPTH: usize = 3;

/// One candidate before paging.
#[derive(Debug, Clone, Copy)]
struct Cand {
    addr: DocAddress,
    tier: Tier,
    score: f32,
    modified_at: i64,
    /// Found by meaning alone (no query word in its text).
    by_meaning: bool,
    /// The cosine of the query's and the tool's vectors (fused tier only).
    meaning: Option<f32>,
}

impl Cand {
    /// Better score first, then newer, then index order (stable across runs).
    fn rank(a: &Cand, b: &Cand) -> std::cmp::Ordering {
        b.score
            .total_cmp(&a.score)
            .then(b.modified_at.cmp(&a.modified_at))
            .then(a.addr.cmp(&b.addr))
    }
}

/// The query text, prepared once for every tier.
struct Prepared {
    lower: String,
    terms: Vec<String>,
    /// Every term of the query, for name coverage.
    cover: Vec<String>,
    /// The query's words as written, each with its stem (a term of `terms`).
    exact: Vec<(String, String)>,
    fuzzy_words: Vec<String>,
    name_like: bool,
}

impl SearchIndex {
    /// Runs a search and returns one page of hits.
    ///
    /// Never panics on any text; fails only on a bad page token or an index error.
    pub fn search(&self, q: &SearchQuery) -> Result<SearchResults> {
        let offset = q.offset()?;
        let size = q.page_size();
        let searcher = self.reader.searcher();
        let p = self.prepare(&q.text);
        // Twins are grouped where meaning ranks: sentences, not names.
        let grouping = q
            .twins
            .filter(|_| !p.name_like)
            .and_then(|at| self.semantic.as_ref().map(|sem| (sem, at)));
        // Grouped twins leave fewer hits than candidates: gather more of them.
        let need = match grouping {
            Some(_) => (offset + size + 1) * TWIN_DEPTH,
            None => offset + size + 1,
        };
        // Which tools the query may see at all: its scopes, and nothing else of it.
        let scope: Vec<Clause> = q
            .scopes
            .as_deref()
            .map(|s| (Occur::Must, self.scope_filter(s)))
            .into_iter()
            .collect();
        let scored =
            self.discriminating(&searcher, &p.terms, scope.first().map(|(_, s)| s.as_ref()))?;
        let filters = self.filters(&searcher, q)?;
        let mut out: Vec<Cand> = Vec::new();
        let mut seen: HashSet<DocAddress> = HashSet::new();
        let mut cols = Columns::default();

        if !p.lower.is_empty() {
            let exact = self.exact_query(&p.lower);
            self.run_tier(
                &searcher,
                Tier::Exact,
                exact,
                &filters,
                need,
                &mut seen,
                &mut out,
                &mut cols,
                None,
            )?;
        }
        let exact_found = !out.is_empty();
        let mut prefix_found = false;
        if p.name_like && out.len() < need {
            let prefix: Box<dyn Query> =
                Box::new(ConstScoreQuery::new(self.prefix_query(&p.lower), 0.0));
            let q: Box<dyn Query> = match self.word_query(&scored, &p.exact) {
                Some(w) => Box::new(BooleanQuery::new(vec![
                    (Occur::Must, prefix),
                    (Occur::Should, w),
                ])),
                None => prefix,
            };
            let before = out.len();
            self.run_tier(
                &searcher,
                Tier::Prefix,
                q,
                &filters,
                need,
                &mut seen,
                &mut out,
                &mut cols,
                None,
            )?;
            prefix_found = out.len() > before;
        }
        let by_meaning = self
            .semantic
            .as_ref()
            .filter(|s| !p.name_like && !p.lower.is_empty() && s.len() > 0);
        if out.len() < need
            && let Some(sem) = by_meaning
        {
            let fused = FusedTier {
                sem,
                text: &q.text,
                words: self.word_query(&scored, &p.exact),
                cover: &p.cover,
                scored: &scored,
                scopes: q.scopes.as_deref(),
            };
            self.run_fused_tier(
                &searcher, fused, &filters, need, &mut seen, &mut out, &mut cols,
            )?;
        } else if out.len() < need
            && let Some(w) = self.keyword_query(&searcher, &p, &scored, &filters)?
        {
            self.run_tier(
                &searcher,
                Tier::Word,
                w,
                &filters,
                need,
                &mut seen,
                &mut out,
                &mut cols,
                Some(&p.cover),
            )?;
        }
        if out.len() < need
            && let Some(f) = self.fuzzy_query(&p)
        {
            self.run_tier(
                &searcher,
                Tier::Fuzzy,
                f,
                &filters,
                need,
                &mut seen,
                &mut out,
                &mut cols,
                None,
            )?;
        }

        let rows = match grouping {
            Some((sem, at)) => self.group_twins(&searcher, sem, at, &out, offset + size + 1)?,
            None => out.iter().map(|c| (*c, Vec::new())).collect(),
        };
        let end = (offset + size).min(rows.len());
        let page = rows.get(offset..end).unwrap_or_default();
        let heads: Vec<Cand> = page.iter().map(|(c, _)| *c).collect();
        let mut hits = self.hits(&searcher, &p, &heads)?;
        for (hit, (_, twins)) in hits.iter_mut().zip(page) {
            hit.twins.clone_from(twins);
        }
        let next_page = (rows.len() > offset + size).then(|| q.token_for(offset + size));
        let (mut did_you_mean, mut name_status) = (Vec::new(), None);
        if p.name_like && !exact_found && offset == 0 {
            name_status =
                self.name_status(&searcher, &p.lower, q.include_disabled, &scope, &mut cols)?;
            if name_status.is_none() && !prefix_found {
                did_you_mean = self.suggest(&searcher, &p, &filters, &out, &mut cols)?;
            }
        }
        Ok(SearchResults {
            hits,
            next_page,
            did_you_mean,
            name_status,
        })
    }

    fn prepare(&self, text: &str) -> Prepared {
        let text: String = text.trim().chars().take(MAX_QUERY_CHARS).collect();
        let lower = text.to_lowercase();
        let mut analyzer = self.analyzer.clone();
        let mut t = terms(&mut analyzer, &text, MAX_TERMS);
        let mut fuzzy_words: Vec<String> = Vec::new();
        for w in split_words(&text) {
            let n = w.chars().count();
            if (4..=32).contains(&n)
                && !STOP_WORDS.contains(&w.as_str())
                && !fuzzy_words.contains(&w)
                && fuzzy_words.len() < MAX_FUZZY_WORDS
            {
                fuzzy_words.push(w);
            }
        }
        // Chinese and Japanese put no spaces between words: a query in their characters
        // is a sentence, ranked by meaning too, whatever its spaces.
        let name_like = !lower.is_empty()
            && lower.chars().count() <= 128
            && !lower
                .chars()
                .any(|c| c.is_whitespace() || crate::analyzer::is_cjk(c));
        // In a sentence, numbers are the values of a call ("10 units", "in 2019"), not what
        // tools are named or described by; in a name-like query they stay ("ipv4", "s3").
        // Name coverage still counts them: names hold digits too (`Weather_1_GetWeather`).
        let cover = t.clone();
        if !name_like {
            t.retain(|w| !w.bytes().all(|b| b.is_ascii_digit()));
        }
        let mut exact_analyzer = self.exact_analyzer.clone();
        let mut exact: Vec<(String, String)> = Vec::new();
        for w in terms(&mut exact_analyzer, &text, MAX_TERMS) {
            if let Some(stem) = terms(&mut analyzer, &w, 1).pop()
                && t.contains(&stem)
            {
                exact.push((w, stem));
            }
        }
        Prepared {
            lower,
            terms: t,
            cover,
            exact,
            fuzzy_words,
            name_like,
        }
    }

    fn exact_query(&self, lower: &str) -> Box<dyn Query> {
        let t = Term::from_field_text(self.fields.name_raw, lower);
        Box::new(ConstScoreQuery::new(
            Box::new(TermQuery::new(t, IndexRecordOption::Basic)),
            1.0,
        ))
    }

    fn prefix_query(&self, lower: &str) -> Box<dyn Query> {
        let from = Term::from_field_text(self.fields.name_raw, lower);
        let to = Term::from_field_text(self.fields.name_raw, &format!("{lower}{}", char::MAX));
        Box::new(InvertedIndexRangeQuery::new(
            Bound::Included(from),
            Bound::Excluded(to),
        ))
    }

    /// BM25 over the whole text of each tool, stemmed, plus [`EXACT_WEIGHT`] times BM25
    /// over the unstemmed text for the query's words as written (see [`crate::ranking`]).
    fn word_query(&self, terms: &[String], exact: &[(String, String)]) -> Option<Box<dyn Query>> {
        let mut clauses: Vec<Clause> = terms
            .iter()
            .map(|t| {
                let q = TermQuery::new(
                    Term::from_field_text(self.fields.all, t),
                    IndexRecordOption::WithFreqs,
                );
                (Occur::Should, Box::new(q) as Box<dyn Query>)
            })
            .collect();
        if clauses.is_empty() {
            return None;
        }
        for (word, stem) in exact {
            if terms.contains(stem) {
                let q = TermQuery::new(
                    Term::from_field_text(self.fields.all_exact, word),
                    IndexRecordOption::WithFreqs,
                );
                clauses.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(q), EXACT_WEIGHT)),
                ));
            }
        }
        Some(Box::new(BooleanQuery::new(clauses)))
    }

    /// The word tier's query. For a name-like query (a keyword, no spaces), each word that
    /// some visible tool holds as written is matched as written only, and the others by
    /// their stems: a keyword that is there does not also list every tool that only shares
    /// its stem ("factorial" is not "factory"). Sentences get
    /// [`word_query`](Self::word_query).
    fn keyword_query(
        &self,
        searcher: &Searcher,
        p: &Prepared,
        scored: &[String],
        filters: &[Clause],
    ) -> Result<Option<Box<dyn Query>>> {
        if !p.name_like {
            return Ok(self.word_query(scored, &p.exact));
        }
        let mut clauses: Vec<Clause> = Vec::with_capacity(scored.len());
        for stem in scored {
            let mut written = None;
            for (word, _) in p.exact.iter().filter(|(_, s)| s == stem) {
                let term = Term::from_field_text(self.fields.all_exact, word);
                let q: Box<dyn Query> =
                    Box::new(TermQuery::new(term.clone(), IndexRecordOption::Basic));
                // Counted with the filters, so a disabled, filtered or deleted tool that
                // holds the word does not hide the tools its stem finds.
                if searcher.search(&with_filters(q, filters), &Count)? > 0 {
                    written = Some(term);
                    break;
                }
            }
            let (term, boost) = match written {
                Some(term) => (term, 1.0 + EXACT_WEIGHT),
                None => (Term::from_field_text(self.fields.all, stem), 1.0),
            };
            let q: Box<dyn Query> = Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs));
            clauses.push((Occur::Should, Box::new(BoostQuery::new(q, boost))));
        }
        Ok((!clauses.is_empty()).then(|| Box::new(BooleanQuery::new(clauses)) as Box<dyn Query>))
    }

    /// Query words near the name's words, and the whole query near the whole name.
    fn fuzzy_query(&self, p: &Prepared) -> Option<Box<dyn Query>> {
        let mut clauses: Vec<Clause> = Vec::new();
        let distance = |n: usize| if n >= 8 { 2 } else { 1 };
        for w in &p.fuzzy_words {
            let t = Term::from_field_text(self.fields.text[0], w);
            let q = FuzzyTermQuery::new(t, distance(w.chars().count()), true);
            clauses.push((Occur::Should, Box::new(q)));
        }
        let n = p.lower.chars().count();
        if p.name_like && (3..=64).contains(&n) {
            let t = Term::from_field_text(self.fields.name_raw, &p.lower);
            let q = FuzzyTermQuery::new(t, distance(n), true);
            clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), 2.0))));
        }
        (!clauses.is_empty()).then(|| Box::new(BooleanQuery::new(clauses)) as Box<dyn Query>)
    }

    #[allow(clippy::too_many_arguments)]
    fn run_tier(
        &self,
        searcher: &Searcher,
        tier: Tier,
        query: Box<dyn Query>,
        filters: &[Clause],
        need: usize,
        seen: &mut HashSet<DocAddress>,
        out: &mut Vec<Cand>,
        cols: &mut Columns,
        rerank: Option<&[String]>,
    ) -> Result<()> {
        let query = with_filters(query, filters);
        let mut k = need.saturating_sub(out.len()) + seen.len() + TIE_MARGIN;
        if rerank.is_some() {
            k = k.max(RERANK_DEPTH);
        }
        let top = searcher.search(&query, &TopDocs::with_limit(k).order_by_score())?;
        let mut head = Vec::with_capacity(top.len());
        let mut tail = Vec::new();
        for (rank, (score, addr)) in top.into_iter().enumerate() {
            if !seen.insert(addr) {
                continue;
            }
            let c = Cand {
                addr,
                tier,
                score,
                modified_at: cols.modified_at(searcher, addr)?,
                by_meaning: false,
                meaning: None,
            };
            if rank < RERANK_DEPTH && rerank.is_some() {
                head.push(c);
            } else {
                tail.push(c);
            }
        }
        if let Some(q) = rerank {
            self.rerank_by_name_coverage(searcher, q, &mut head, cols)?;
        }
        head.sort_by(Cand::rank);
        tail.sort_by(Cand::rank);
        for part in [&mut head, &mut tail] {
            self.order_ties_by_name(searcher, part, cols)?;
        }
        out.extend(head);
        out.extend(tail);
        Ok(())
    }

    /// The word tier of a sentence query when an embedder is set: the best BM25 hits (with
    /// name coverage) and the tools nearest in meaning, each scored
    /// `bm25 / max(best bm25, WORDS_NORM_FLOOR × the query's word weight) + MEANING_WEIGHT ×
    /// cosine` (see [`crate::semantic`]).
    #[allow(clippy::too_many_arguments)]
    fn run_fused_tier(
        &self,
        searcher: &Searcher,
        f: FusedTier<'_>,
        filters: &[Clause],
        need: usize,
        seen: &mut HashSet<DocAddress>,
        out: &mut Vec<Cand>,
        cols: &mut Columns,
    ) -> Result<()> {
        let depth = (need.saturating_sub(out.len()) + seen.len() + TIE_MARGIN).max(FUSE_DEPTH);
        // The query's embedding (a transformer's pass can take longer than the BM25 search
        // on a large catalog) runs beside the word search.
        let (sem, text, words) = (f.sem, f.text, f.words);
        let (words, query) = std::thread::scope(|scope| {
            let embedding = scope.spawn(|| sem.query_vectors(text));
            let words = match words {
                Some(words) => self.fused_word_hits(
                    searcher,
                    with_filters(words, filters),
                    f.cover,
                    depth,
                    seen,
                    cols,
                ),
                None => Ok((Vec::new(), HashSet::new())),
            };
            // An embedder that panicked leaves the query to words alone.
            (words, embedding.join().unwrap_or_default())
        });
        let (mut cands, lexical) = words?;
        // A best hit that holds little of the query's word weight is not a full match.
        let best = cands
            .iter()
            .map(|c| c.score)
            .fold(0.0f32, f32::max)
            .max(WORDS_NORM_FLOOR * query_weight(searcher, self.fields.all, f.scored)?);
        let mut near = sem.nearest_in(&query, depth, f.scopes);
        near.retain(|(_, cos)| *cos >= MIN_MEANING);
        if !near.is_empty() {
            // The nearest tools that pass the filters, by id.
            let ids: Vec<Clause> = near
                .iter()
                .map(|(id, _)| {
                    let t = Term::from_field_text(self.fields.id, id);
                    let q: Box<dyn Query> = Box::new(TermQuery::new(t, IndexRecordOption::Basic));
                    (Occur::Should, q)
                })
                .collect();
            let q = with_filters(Box::new(BooleanQuery::new(ids)), filters);
            for (_, addr) in
                searcher.search(&q, &TopDocs::with_limit(near.len()).order_by_score())?
            {
                if seen.contains(&addr) || lexical.contains(&addr) {
                    continue;
                }
                cands.push(Cand {
                    addr,
                    tier: Tier::Word,
                    score: 0.0,
                    modified_at: cols.modified_at(searcher, addr)?,
                    by_meaning: true,
                    meaning: None,
                });
            }
        }
        let mut ids: Vec<String> = Vec::with_capacity(cands.len());
        for c in &cands {
            ids.push(self.doc_id(searcher, c.addr)?);
        }
        let id_refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        let cosines = sem.cosines(&query, &id_refs);
        for (c, cos) in cands.iter_mut().zip(cosines) {
            let words = if best > 0.0 { c.score / best } else { 0.0 };
            c.score = words + MEANING_WEIGHT * cos.unwrap_or(0.0);
            c.meaning = cos.filter(|m| m.is_finite());
        }
        cands.sort_by(Cand::rank);
        self.order_ties_by_name(searcher, &mut cands, cols)?;
        for c in &cands {
            seen.insert(c.addr);
        }
        out.extend(cands);
        Ok(())
    }

    /// The BM25 hits of a fused tier's word query (not yet `seen`), the first
    /// [`RERANK_DEPTH`] reranked by name coverage, and their addresses.
    fn fused_word_hits(
        &self,
        searcher: &Searcher,
        query: Box<dyn Query>,
        cover: &[String],
        depth: usize,
        seen: &HashSet<DocAddress>,
        cols: &mut Columns,
    ) -> Result<(Vec<Cand>, HashSet<DocAddress>)> {
        let mut cands: Vec<Cand> = Vec::new();
        let mut lexical: HashSet<DocAddress> = HashSet::new();
        let top = searcher.search(&query, &TopDocs::with_limit(depth).order_by_score())?;
        for (score, addr) in top {
            if seen.contains(&addr) {
                continue;
            }
            lexical.insert(addr);
            cands.push(Cand {
                addr,
                tier: Tier::Word,
                score,
                modified_at: cols.modified_at(searcher, addr)?,
                by_meaning: false,
                meaning: None,
            });
        }
        let head = cands.len().min(RERANK_DEPTH);
        self.rerank_by_name_coverage(searcher, cover, &mut cands[..head], cols)?;
        Ok((cands, lexical))
    }

    /// Multiplies each word hit's score by its name coverage (see [`NAME_COVERAGE`]): the
    /// share of the name's terms that the query holds, read from the postings of the
    /// analyzed name (abbreviations spelled out count too) and the name's term count.
    fn rerank_by_name_coverage(
        &self,
        searcher: &Searcher,
        terms: &[String],
        head: &mut [Cand],
        cols: &mut Columns,
    ) -> Result<()> {
        let mut sorted: Vec<(DocAddress, usize)> =
            head.iter().enumerate().map(|(i, c)| (c.addr, i)).collect();
        sorted.sort();
        let mut covered = vec![0u32; head.len()];
        for t in terms {
            let term = Term::from_field_text(self.fields.text[0], t);
            docs_with_term(searcher, &term, &sorted, &mut |i| covered[i] += 1)?;
        }
        for (c, n) in head.iter_mut().zip(covered) {
            let words = cols.name_words(searcher, c.addr)?;
            if words > 0 {
                let share = n.min(words) as f32 / words as f32;
                c.score *= 1.0 + NAME_COVERAGE * share;
            }
        }
        Ok(())
    }

    /// Orders runs of equal score and recency by name, so that ties come out the same
    /// whatever the segment layout.
    fn order_ties_by_name(
        &self,
        searcher: &Searcher,
        part: &mut [Cand],
        cols: &mut Columns,
    ) -> Result<()> {
        let mut start = 0;
        while start < part.len() {
            let same =
                |c: &Cand| c.score == part[start].score && c.modified_at == part[start].modified_at;
            let end = start + part[start..].iter().take_while(|c| same(c)).count();
            if end - start > 1 {
                let mut named = Vec::with_capacity(end - start);
                for c in &part[start..end] {
                    named.push((cols.name(searcher, c.addr)?, *c));
                }
                named.sort_by(|a, b| a.0.cmp(&b.0));
                for (slot, (_, c)) in part[start..end].iter_mut().zip(named) {
                    *slot = c;
                }
            }
            start = end.max(start + 1);
        }
        Ok(())
    }

    /// Groups ranked candidates into hits and their near-twins: each candidate whose
    /// vector has at least `at` cosine with a better one's that heads a hit joins that
    /// hit's twins (by id) instead of being a hit; at most `rows` hits are made, and the
    /// candidates after them only add twins.
    fn group_twins(
        &self,
        searcher: &Searcher,
        sem: &Semantic,
        at: f32,
        ranked: &[Cand],
        rows: usize,
    ) -> Result<Vec<(Cand, Vec<String>)>> {
        let mut out: Vec<(Cand, Vec<String>)> = Vec::new();
        let mut head_ids: Vec<String> = Vec::new();
        for c in ranked {
            let id = self.doc_id(searcher, c.addr)?;
            let twin_of = head_ids
                .iter()
                .position(|h| sem.between(h, &id).is_some_and(|cos| cos >= at));
            match twin_of {
                Some(i) => out[i].1.push(id),
                None if out.len() < rows => {
                    out.push((*c, Vec::new()));
                    head_ids.push(id);
                }
                None => {}
            }
        }
        Ok(out)
    }

    /// The id a tool was indexed under, read from the store.
    fn doc_id(&self, searcher: &Searcher, addr: DocAddress) -> Result<String> {
        let doc: TantivyDocument = searcher.doc(addr)?;
        Ok(doc
            .get_first(self.fields.id)
            .and_then(|v| v.as_str())
            .unwrap_or_default()
            .to_owned())
    }

    /// Turns candidates into hits: ids from the store, and the field that matched best.
    fn hits(&self, searcher: &Searcher, p: &Prepared, page: &[Cand]) -> Result<Vec<Hit>> {
        let fields = self.best_fields(searcher, p, page)?;
        let mut hits = Vec::with_capacity(page.len());
        for (c, field) in page.iter().zip(fields) {
            let field = if c.by_meaning {
                MatchField::Meaning
            } else {
                field
            };
            let id = self.doc_id(searcher, c.addr)?;
            hits.push(Hit {
                id,
                tier: c.tier,
                field,
                score: c.score,
                modified_at: c.modified_at,
                meaning: c.meaning,
                twins: Vec::new(),
            });
        }
        Ok(hits)
    }

    /// For word hits, the first short field (name, summary, tags, category, bundle) that
    /// holds a query term, else the full text.
    fn best_fields(
        &self,
        searcher: &Searcher,
        p: &Prepared,
        page: &[Cand],
    ) -> Result<Vec<MatchField>> {
        let mut best: Vec<MatchField> = page.iter().map(|_| MatchField::Name).collect();
        let mut open: Vec<(DocAddress, usize)> = page
            .iter()
            .enumerate()
            .filter(|(_, c)| c.tier == Tier::Word)
            .map(|(i, c)| (c.addr, i))
            .collect();
        open.sort();
        for (fi, field) in self.fields.text.iter().enumerate() {
            if open.is_empty() {
                break;
            }
            let mut decided = vec![false; page.len()];
            for t in &p.terms {
                let term = Term::from_field_text(*field, t);
                let pending: Vec<(DocAddress, usize)> =
                    open.iter().copied().filter(|&(_, i)| !decided[i]).collect();
                if pending.is_empty() {
                    break;
                }
                docs_with_term(searcher, &term, &pending, &mut |i| {
                    best[i] = MatchField::SHORT[fi];
                    decided[i] = true;
                })?;
            }
            open.retain(|&(_, i)| !decided[i]);
        }
        for (_, i) in open {
            best[i] = MatchField::Text;
        }
        Ok(best)
    }

    /// Whether a tool named exactly `lower` exists but is hidden, and why. Only the tools
    /// of the query's scopes (the `scope` filter) are looked at, not its other filters: a
    /// tool of another scope is no tool at all, one the other filters hide is reported.
    fn name_status(
        &self,
        searcher: &Searcher,
        lower: &str,
        include_disabled: bool,
        scope: &[Clause],
        cols: &mut Columns,
    ) -> Result<Option<NameStatus>> {
        let top = searcher.search(
            &*with_filters(self.exact_query(lower), scope),
            &TopDocs::with_limit(4).order_by_score(),
        )?;
        let Some(&(_, addr)) = top.first() else {
            return Ok(None);
        };
        let enabled = cols.enabled(searcher, addr)?;
        Ok(Some(if !enabled && !include_disabled {
            NameStatus::Disabled
        } else {
            NameStatus::FilteredOut
        }))
    }

    /// The names closest to the query (Jaro–Winkler), among candidates found fast: names
    /// within edit distance 1 and the names that share the query's words (the best hits).
    fn suggest(
        &self,
        searcher: &Searcher,
        p: &Prepared,
        filters: &[Clause],
        found: &[Cand],
        cols: &mut Columns,
    ) -> Result<Vec<String>> {
        // The best word hits are the names that share the query's words.
        let mut cands: HashSet<DocAddress> = found.iter().take(32).map(|c| c.addr).collect();
        let t = Term::from_field_text(self.fields.name_raw, &p.lower);
        let near: Box<dyn Query> = Box::new(FuzzyTermQuery::new(t, 1, true));
        let top = searcher.search(
            &*with_filters(near, filters),
            &TopDocs::with_limit(32).order_by_score(),
        )?;
        cands.extend(top.into_iter().map(|(_, a)| a));
        let mut cands: Vec<DocAddress> = cands.into_iter().collect();
        cands.sort();
        let mut names = Vec::with_capacity(cands.len());
        for addr in cands {
            names.push(cols.name(searcher, addr)?);
        }
        Ok(
            crate::closest_names(&p.lower, names.iter().map(String::as_str))
                .into_iter()
                .map(str::to_owned)
                .collect(),
        )
    }
}

/// What the fused word tier needs besides the usual tier arguments.
struct FusedTier<'a> {
    sem: &'a crate::semantic::Semantic,
    text: &'a str,
    words: Option<Box<dyn Query>>,
    cover: &'a [String],
    scored: &'a [String],
    /// The query's scopes, for the nearest vectors (see [`Semantic::nearest_in`]).
    scopes: Option<&'a [String]>,
}

/// BM25's `k1 + 1` in tantivy (`k1` = 1.2): the limit of a term's score over its IDF as
/// the term's frequency in a text grows.
const BM25_K1_PLUS_ONE: f32 = 2.2;

/// The most BM25 can give a tool for `stems` in `field`: each stem some tool holds counts
/// its IDF times [`BM25_K1_PLUS_ONE`]; stems no tool holds count nothing.
fn query_weight(searcher: &Searcher, field: Field, stems: &[String]) -> Result<f32> {
    let n = searcher.num_docs() as f32;
    let mut weight = 0.0f32;
    for stem in stems {
        let df = searcher.doc_freq(&Term::from_field_text(field, stem))? as f32;
        if df > 0.0 {
            weight += (1.0 + (n - df + 0.5) / (df + 0.5)).ln() * BM25_K1_PLUS_ONE;
        }
    }
    Ok(weight)
}

/// Calls `hit(i)` for each `(address, i)` of `sorted` (ascending addresses) whose
/// document holds `term`: one postings walk per segment.
fn docs_with_term(
    searcher: &Searcher,
    term: &Term,
    sorted: &[(DocAddress, usize)],
    hit: &mut dyn FnMut(usize),
) -> Result<()> {
    let mut postings: Option<(u32, Option<SegmentPostings>)> = None;
    for &(addr, i) in sorted {
        if postings
            .as_ref()
            .is_none_or(|(seg, _)| *seg != addr.segment_ord)
        {
            let reader = searcher.segment_reader(addr.segment_ord);
            let inv = reader.inverted_index(term.field())?;
            let read = inv.read_postings(term, IndexRecordOption::Basic);
            postings = Some((
                addr.segment_ord,
                read.map_err(|e| crate::Error::Index(e.into()))?,
            ));
        }
        let Some((_, Some(sp))) = postings.as_mut() else {
            continue;
        };
        if sp.doc() != TERMINATED && sp.doc() < addr.doc_id {
            sp.seek(addr.doc_id);
        }
        if sp.doc() == addr.doc_id {
            hit(i);
        }
    }
    Ok(())
}
