//! How the word tier ranks, and why.
//!
//! The word tier scores a tool with one BM25 over all of its text, the `all` field: the
//! name twice, its words with common abbreviations spelled out (`calc` → `calculate`), the
//! description, parameter names (with the top-level parameters' descriptions and enum
//! values), tags, category and bundle. Query and text go through the same analysis: words
//! split on separators, case and digits, stop words dropped, English stemming.
//!
//! **Rationale:** measured with `toolscout eval search`. A sum of per-field BM25s (name,
//! summary, description, parameters, …) over-rewards a word repeated across fields:
//! recall@5 on BFCL 0.81, whatever the boosts. One BM25 over the whole text gives 0.85;
//! adding light per-field boosts back gained under 0.005 and cost 4× the query time, so
//! the short fields are used only to tell which one matched.
