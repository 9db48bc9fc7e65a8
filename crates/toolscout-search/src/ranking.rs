//! How the word tier ranks, and why.
//!
//! The word tier scores a tool with one BM25 over all of its text, the `all` field: the
//! name twice, its words with common abbreviations spelled out (`calc` → `calculate`), the
//! description and once more its first sentence (the summary), parameter names (with the top-level parameters' descriptions and enum
//! values), tags, category and bundle. Query and text go through the same analysis: words
//! split on separators, case and digits, stop words dropped, English stemming. The same
//! text unstemmed (`all_exact`) adds [`EXACT_WEIGHT`] of a BM25 for the query's words as
//! written, and a name-like query (no spaces) matches a word that some visible tool holds
//! as written only as written.
//!
//! **Rationale:** measured with `toolscout eval search`. A sum of per-field BM25s (name,
//! summary, description, parameters, …) over-rewards a word repeated across fields:
//! recall@5 on BFCL 0.81, whatever the boosts. One BM25 over the whole text gives 0.85;
//! adding light per-field boosts back gained under 0.005 and cost 4× the query time, so
//! the short fields are used only to tell which one matched. Then name coverage re-ranks
//! the best hits (see [`NAME_COVERAGE`]).
//!
//! With an [`Embedder`](crate::Embedder), a sentence's word tier adds meaning to this
//! score; `crate::semantic` says how, and what it gains.

/// How much a word hit gains when the query covers its name: its BM25 score is multiplied
/// by `1 + NAME_COVERAGE × (share of the name's words that the query contains)`. Only the
/// best 20 BM25 hits are re-ranked, so pages stay consistent. A name word counts as
/// covered when the query holds it or its spelled-out form (`calc` ← "calculate"); it is
/// read from the postings of the analyzed name and a per-tool term count (a fast field),
/// never from the stored name.
///
/// **Rationale:** a tool whose whole name the query spells out ("area of a triangle" →
/// `calculate_triangle_area`) is most likely the one meant, while long names of which the
/// query mentions one word (`azure_com__Storage_Accounts_List`) are most likely not.
/// Measured: recall@5 +0.027 on BFCL with the 92k OpenAPI tools as distractors, −0.004
/// on BFCL alone, ±0 on MetaTool (0.3 and 1.0 did worse overall).
pub(crate) const NAME_COVERAGE: f32 = 0.5;

/// How much a query word counts where the tool's text holds it as written, on top of its
/// stem's BM25: `all_exact`, the same text unstemmed, is scored with this weight.
///
/// **Rationale:** English stemming joins words that are not the same ("factorial" and
/// "factory" are both `factori`, "general" and "generate" `gener`), so a query word
/// found only by its stem is weaker evidence than the word itself. Measured with
/// `toolscout eval search` on 1,500 queries each (words and meaning; words alone),
/// MRR for weights 0 / 0.25 / 0.5 / 1: BFCL 0.778 / 0.781 / 0.783 / 0.784 (words alone
/// 0.747 / 0.755 / 0.758 / 0.759), MetaTool 0.629 / 0.629 / 0.627 / 0.621 (0.543 / 0.547 /
/// 0.545 / 0.533). 0.5 gains on BFCL and costs MetaTool at most 0.002.
pub(crate) const EXACT_WEIGHT: f32 = 0.5;
