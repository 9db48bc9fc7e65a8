//! The search metrics on known ranks, and the search evaluation on a tiny catalog.

use serde_json::json;
use toolscout_eval::read::{LabelledQuery, ToolLines, tool_lines_of};
use toolscout_eval::search::{Metrics, SearchEval};

fn expected(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// Four queries whose expected tools are at known ranks.
#[test]
fn recall_and_mrr_on_known_ranks() {
    let ranking: Vec<String> = (1..=12).map(|i| format!("t{i}")).collect();
    let ranked: Vec<&str> = ranking.iter().map(String::as_str).collect();
    let mut m = Metrics::default();
    // At 1; at 3; at 7; two expected, at 2 and 6.
    assert_eq!(m.add(&ranked, &expected(&["t1"])), 1.0);
    assert_eq!(m.add(&ranked, &expected(&["t3"])), 1.0);
    assert_eq!(m.add(&ranked, &expected(&["t7"])), 0.0);
    assert_eq!(m.add(&ranked, &expected(&["t2", "t6"])), 0.5);
    assert_eq!(m.queries(), 4);
    assert!(close(m.recall_at_1(), 0.25));
    assert!(close(m.recall_at_5(), (1.0 + 1.0 + 0.0 + 0.5) / 4.0));
    assert!(close(m.recall_at_10(), 1.0));
    assert!(close(
        m.mrr(),
        (1.0 + 1.0 / 3.0 + 1.0 / 7.0 + 1.0 / 2.0) / 4.0
    ));
    // A tool the ranking never found counts 0 everywhere.
    let mut missed = Metrics::default();
    missed.add(&ranked, &expected(&["t99"]));
    assert_eq!(
        (missed.recall_at_1(), missed.recall_at_10(), missed.mrr()),
        (0.0, 0.0, 0.0)
    );
    // Merged sums are the sums of both.
    let mut merged = m;
    merged.merge(&missed);
    assert_eq!(merged.queries(), 5);
    assert!(close(merged.recall_at_10(), 4.0 / 5.0));
    // Serialised as the means.
    let v = serde_json::to_value(m).unwrap();
    assert_eq!(v["queries"], 4);
    assert_eq!(v["recall_at_1"], 0.25);
    assert_eq!(v["recall_at_10"], 1.0);
}

fn tiny_catalog() -> ToolLines {
    let names = [
        ("get_weather", "Get the current weather in a city."),
        ("send_email", "Send an email to a recipient."),
        ("read_file", "Read a text file from disk."),
        ("list_events", "List calendar events for a day."),
        ("convert_currency", "Convert an amount between currencies."),
        ("search_flights", "Search flights between two airports."),
        ("play_music", "Play a song or playlist."),
    ];
    let text: String = names
        .iter()
        .map(|(n, d)| format!("{}\n", json!({"name": n, "description": d})))
        .collect();
    tool_lines_of(&text)
}

/// Both rankings find the first; only toolscout the misspelled name; only the plain
/// BM25 (which keeps "a") the last.
fn queries() -> Vec<LabelledQuery> {
    vec![
        LabelledQuery::new("weather in Paris", &["get_weather"]).with_source("b"),
        LabelledQuery::new("wether", &["get_weather"]).with_source("a"),
        LabelledQuery::new("translate a poem", &["send_email"]).with_source("b"),
    ]
}

#[test]
fn toolscout_and_bm25_on_a_tiny_catalog() {
    let tools = tiny_catalog();
    let report = SearchEval::default()
        .with_misses(5)
        .run(&tools, &queries(), &mut |_| {})
        .unwrap();
    assert_eq!(report.tools, 7);
    assert_eq!(report.model, None);
    // Without an encoder, neither words alone nor twins are measured.
    assert!(!report.words_only);
    assert_eq!(report.twins, None);
    let all = &report.all;
    assert_eq!(all.toolscout.queries(), 3);
    assert!(close(all.toolscout.recall_at_5(), 2.0 / 3.0));
    assert!(close(all.toolscout.recall_at_1(), 2.0 / 3.0));
    assert!(close(all.toolscout.mrr(), 2.0 / 3.0));
    assert!(close(all.bm25.recall_at_5(), 2.0 / 3.0));
    assert_eq!((all.vs_bm25.better, all.vs_bm25.worse), (1, 1));
    // 1.96 × √((2/3 − 4/9) / 3): the per-query recalls are 1, 1, 0.
    assert!(close(
        all.toolscout.recall_at_5_margin(),
        1.96 * ((2.0 / 3.0 - 4.0 / 9.0) / 3.0f64).sqrt()
    ));
    // Per source, ordered by source.
    let sources: Vec<(&str, usize)> = report
        .sources
        .iter()
        .map(|s| (s.source.as_str(), s.toolscout.queries()))
        .collect();
    assert_eq!(sources, [("a", 1), ("b", 2)]);
    assert_eq!(report.sources[0].toolscout.recall_at_1(), 1.0);
    assert_eq!(report.sources[0].bm25.recall_at_5(), 0.0);
    // The one query toolscout missed, with where its tool ranked.
    assert_eq!(report.misses.len(), 1);
    let miss = &report.misses[0];
    assert_eq!(miss.query, "translate a poem");
    assert_eq!(miss.expected, ["send_email"]);
    assert_eq!(miss.ranks.len(), 1);
    assert!(miss.ranks[0].is_none_or(|r| r > 5), "{miss:?}");
    assert!(!miss.top.contains(&"send_email".to_owned()), "{miss:?}");
}

#[test]
fn the_figures_do_not_depend_on_the_threads() {
    let tools = tiny_catalog();
    let mut queries = queries();
    queries.extend(queries.clone());
    let one = SearchEval::default()
        .with_threads(1)
        .run(&tools, &queries, &mut |_| {})
        .unwrap();
    let three = SearchEval::default()
        .with_threads(3)
        .run(&tools, &queries, &mut |_| {})
        .unwrap();
    assert_eq!(one.all.toolscout.queries(), 6);
    for (a, b) in [
        (&one.all.toolscout, &three.all.toolscout),
        (&one.all.bm25, &three.all.bm25),
    ] {
        assert!(close(a.recall_at_5(), b.recall_at_5()));
        assert!(close(a.mrr(), b.mrr()));
    }
    assert_eq!(one.all.vs_bm25, three.all.vs_bm25);
    assert_eq!(one.misses, [] as [toolscout_eval::search::Miss; 0]);
}

#[test]
fn indexing_reports_progress() {
    let tools = tiny_catalog();
    let mut seen = 0;
    SearchEval::default()
        .run(&tools, &queries(), &mut |n| seen = seen.max(n))
        .unwrap();
    assert_eq!(seen, 7);
}
