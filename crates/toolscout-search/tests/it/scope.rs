//! Scopes: one index shared by tenants, each query seeing only the tools of its scopes,
//! and nothing of the others' deciding what it is shown (#39).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use toolscout_search::{
    IndexDoc, MatchField, NameStatus, SearchIndex, SearchQuery, SearchResults, Tier,
};
use toolscout_spec::ToolSpec;

use crate::fixture::{Tool, feed, tool, tools};
use crate::meaning::Topics;

/// The scopes a tenant of scope "a" sees.
const MINE: [&str; 2] = ["*", "a"];

fn scoped(mut t: Tool, scope: Option<&'static str>) -> Tool {
    t.scope = scope;
    t
}

/// The fixture's tools in the shared scope "*", a few of scope "a", others of scope "b"
/// that compete with them (the same prefixes, near names, the same words), and one
/// without a scope.
fn scoped_tools() -> Vec<Tool> {
    let mut all: Vec<Tool> = tools().into_iter().map(|t| scoped(t, Some("*"))).collect();
    let a = |name, summary, tags: &[&str]| scoped(tool(name, summary, tags, None), Some("a"));
    let b = |name, summary, tags: &[&str]| scoped(tool(name, summary, tags, None), Some("b"));
    let mut archive = a("archive_logs", "Archive old log files.", &["fs"]);
    archive.enabled = false;
    let mut purge = b("purge_accounts", "Purge closed accounts.", &["finance"]);
    purge.enabled = false;
    all.extend([
        a(
            "get_weather_radar",
            "Rain radar images for a region.",
            &["web"],
        ),
        a(
            "send_invoice",
            "Send an invoice to a customer.",
            &["finance"],
        ),
        archive,
        b("get_weather_history", "Past weather for a city.", &["web"]),
        b("send_invoices", "Send many invoices at once.", &["finance"]),
        b(
            "secret_payroll",
            "Monthly payroll of every employee.",
            &["finance"],
        ),
        b(
            "payroll_export",
            "Export the payroll to a spreadsheet.",
            &[],
        ),
        b(
            "weather_station",
            "Weather station readings for a city.",
            &["web"],
        ),
        purge,
        scoped(
            tool("unscoped_weather", "Weather for a city.", &["web"], None),
            None,
        ),
    ]);
    all
}

/// Each tool's scope, by id ("" for none).
fn scope_of() -> HashMap<String, &'static str> {
    scoped_tools()
        .into_iter()
        .map(|t| (t.spec.name.to_string(), t.scope.unwrap_or("")))
        .collect()
}

fn index_of(tools: &[Tool]) -> SearchIndex {
    let index = SearchIndex::in_memory().unwrap();
    feed(&index, tools);
    index
}

/// Queries that reach every tier: exact names, prefixes, words, sentences and typos,
/// of tools of "a" and of "b".
const QUERIES: [&str; 18] = [
    "get_weather",
    "get_w",
    "get_weather_h",
    "send_invoice",
    "send_invoise",
    "secret_payroll",
    "secret_payrool",
    "payroll",
    "invoices",
    "weather",
    "wether",
    "weather in Tokyo",
    "send the invoice and the payroll",
    "archive_logs",
    "purge_accounts",
    "radar",
    "histroy",
    "weather station readings",
];

fn mine(text: &str) -> SearchQuery {
    SearchQuery::new(text).with_scopes(MINE).with_limit(100)
}

fn ids(found: &SearchResults) -> BTreeSet<String> {
    found.hits.iter().map(|h| h.id.clone()).collect()
}

#[test]
fn scoped_queries_find_only_their_scopes_on_every_tier() {
    let index = index_of(&scoped_tools());
    let scope = scope_of();
    let mut tiers = BTreeSet::new();
    for text in QUERIES {
        for disabled in [false, true] {
            let q = mine(text).with_include_disabled(disabled);
            let found = index.search(&q).unwrap();
            for h in &found.hits {
                assert!(
                    MINE.contains(&scope[&h.id]),
                    "{text:?}: {} of scope {:?}",
                    h.explain(),
                    scope[&h.id]
                );
                tiers.insert(h.tier);
            }
        }
    }
    assert_eq!(
        tiers,
        BTreeSet::from([Tier::Exact, Tier::Prefix, Tier::Word, Tier::Fuzzy])
    );
    // Without scopes the same queries find the tools of "b" and the one without a scope:
    // the scopes, not the queries, kept them out.
    let mut unscoped = BTreeSet::new();
    for text in QUERIES {
        let q = SearchQuery::new(text).with_limit(100);
        unscoped.extend(ids(&index.search(&q).unwrap()));
    }
    for id in [
        "get_weather_history",
        "send_invoices",
        "secret_payroll",
        "weather_station",
        "unscoped_weather",
    ] {
        assert!(unscoped.contains(id), "{id}");
    }
    // Scope "b" alone sees its tools and not those of "*" or "a".
    let found = index
        .search(&SearchQuery::new("get_weather").with_scopes(["b"]))
        .unwrap();
    assert_eq!(
        ids(&found),
        BTreeSet::from([
            "get_weather_history".to_owned(),
            "weather_station".to_owned()
        ])
    );
    // No scope at all finds nothing, not even by exact name.
    let none = SearchQuery::new("get_weather").with_scopes(Vec::<String>::new());
    let found = index.search(&none).unwrap();
    assert!(
        found.hits.is_empty() && found.did_you_mean.is_empty(),
        "{found:?}"
    );
    assert_eq!(found.name_status, None);
}

#[test]
fn page_tokens_of_one_set_of_scopes_are_refused_for_another() {
    let index = index_of(&scoped_tools());
    let q = SearchQuery::new("weather")
        .with_scopes(["*", "a"])
        .with_limit(1);
    let token = index.search(&q).unwrap().next_page;
    assert!(token.is_some());
    let with = |q: SearchQuery| index.search(&q.with_limit(1).with_page_token(token.clone()));
    // The same set in another order is the same query.
    let same = with(SearchQuery::new("weather").with_scopes(["a", "*", "a"])).unwrap();
    assert_eq!(same.hits.len(), 1);
    for other in [
        SearchQuery::new("weather").with_scopes(["*", "b"]),
        SearchQuery::new("weather").with_scopes(["*"]),
        SearchQuery::new("weather").with_scopes(Vec::<String>::new()),
        SearchQuery::new("weather"),
    ] {
        let err = with(other.clone()).unwrap_err();
        assert!(
            err.to_string().contains("another query"),
            "{other:?}: {err}"
        );
    }
    // And an unscoped query's token is not a scoped one's.
    let token = index
        .search(&SearchQuery::new("weather").with_limit(1))
        .unwrap()
        .next_page;
    let err = index.search(&q.clone().with_page_token(token)).unwrap_err();
    assert!(err.to_string().contains("another query"), "{err}");
}

#[test]
fn did_you_mean_never_names_a_tool_of_another_scope() {
    let index = index_of(&scoped_tools());
    // A typo of a name only "b" holds.
    let found = index.search(&mine("secret_payrool")).unwrap();
    assert!(found.hits.is_empty(), "{found:?}");
    assert!(found.did_you_mean.is_empty(), "{found:?}");
    assert_eq!(found.name_status, None);
    let unscoped = index.search(&SearchQuery::new("secret_payrool")).unwrap();
    assert!(
        unscoped.did_you_mean.contains(&"secret_payroll".to_owned()),
        "{unscoped:?}"
    );
    // A typo near a name of "a" and one of "b": only the one of "a" is offered.
    let found = index.search(&mine("send_invoise")).unwrap();
    assert_eq!(found.did_you_mean, ["send_invoice"], "{found:?}");
    let unscoped = index.search(&SearchQuery::new("send_invoise")).unwrap();
    assert!(
        unscoped.did_you_mean.contains(&"send_invoices".to_owned()),
        "{unscoped:?}"
    );
}

#[test]
fn an_exact_name_of_another_scope_is_no_tool_and_hidden_ones_of_mine_are_reported() {
    let index = index_of(&scoped_tools());
    let nobody = index.search(&mine("no_such_tool_at_all")).unwrap();
    assert_eq!((nobody.hits.len(), nobody.name_status), (0, None));
    // An enabled tool of "b", and a disabled one: both as unknown as a name nobody holds,
    // with or without filters that would hide them.
    for q in [
        mine("secret_payroll"),
        mine("secret_payroll").with_tag("web"),
        mine("purge_accounts"),
        mine("purge_accounts").with_include_disabled(true),
    ] {
        let found = index.search(&q).unwrap();
        assert_eq!(found.name_status, None, "{q:?}");
        assert!(ids(&found).iter().all(|id| id != &q.text), "{found:?}");
    }
    // Unscoped, the same names are reported hidden: the scope made the difference.
    let unscoped = |q: SearchQuery| index.search(&q).unwrap().name_status;
    assert_eq!(
        unscoped(SearchQuery::new("secret_payroll").with_tag("web")),
        Some(NameStatus::FilteredOut)
    );
    assert_eq!(
        unscoped(SearchQuery::new("purge_accounts")),
        Some(NameStatus::Disabled)
    );
    // A tool of "a" that is disabled, or that the tag filter hides, is still reported.
    let found = index.search(&mine("archive_logs")).unwrap();
    assert_eq!(found.name_status, Some(NameStatus::Disabled), "{found:?}");
    let found = index.search(&mine("send_invoice").with_tag("web")).unwrap();
    assert_eq!(
        found.name_status,
        Some(NameStatus::FilteredOut),
        "{found:?}"
    );
    // Seen from "b", the disabled tool of "a" is no tool.
    let q = SearchQuery::new("archive_logs").with_scopes(["b"]);
    assert_eq!(index.search(&q).unwrap().name_status, None);
}

/// What of a search must not depend on other scopes' tools: the set of hits, the
/// did-you-mean names and the name status.
fn membership(found: &SearchResults) -> (BTreeSet<String>, Vec<String>, Option<NameStatus>) {
    (ids(found), found.did_you_mean.clone(), found.name_status)
}

#[test]
fn other_scopes_change_nothing_a_scoped_query_is_shown() {
    let all = scoped_tools();
    let only_mine: Vec<Tool> = scoped_tools()
        .into_iter()
        .filter(|t| t.scope.is_some_and(|s| MINE.contains(&s)))
        .collect();
    assert!(only_mine.len() < all.len());
    let with_embedder = |tools: &[Tool]| {
        let index = SearchIndex::in_memory()
            .unwrap()
            .with_embedder(Arc::new(Topics));
        feed(&index, tools);
        index
    };
    let pairs = [
        (index_of(&all), index_of(&only_mine)),
        (with_embedder(&all), with_embedder(&only_mine)),
    ];
    let mut texts: Vec<&str> = QUERIES.to_vec();
    texts.extend([
        "do I need an umbrella",
        "ping my team about the shares",
        "pay the employee",
    ]);
    for (shared, alone) in &pairs {
        for text in &texts {
            for disabled in [false, true] {
                let q = mine(text).with_include_disabled(disabled);
                let (s, a) = (shared.search(&q).unwrap(), alone.search(&q).unwrap());
                assert_eq!(membership(&s), membership(&a), "{text:?} {disabled}");
            }
            let q = mine(text).with_tag("finance");
            let (s, a) = (shared.search(&q).unwrap(), alone.search(&q).unwrap());
            assert_eq!(membership(&s), membership(&a), "{text:?} finance");
        }
    }
}

/// An index with the [`Topics`] embedder: one tool of "a" that only meaning finds for
/// "do I need an umbrella", and 1,000 tools of "b" closer to it in meaning.
fn feed_crowded(index: &SearchIndex) {
    let mine = ToolSpec::builder(
        "sky_watch",
        "Tells if rain is coming, and which shares to buy.",
    )
    .build()
    .unwrap();
    let theirs: Vec<ToolSpec> = (0..1_000)
        .map(|i| {
            ToolSpec::builder(format!("rain_gauge_{i}"), "Rain and weather forecast.")
                .build()
                .unwrap()
        })
        .collect();
    let docs = std::iter::once(IndexDoc::new(&mine).with_scope(Some("a"))).chain(
        theirs
            .iter()
            .map(|s| IndexDoc::new(s).with_scope(Some("b"))),
    );
    index.extend(docs, &mut |_| {}).unwrap();
}

#[test]
fn a_small_scope_finds_its_tools_by_meaning_beside_a_crowd_of_closer_ones() {
    let dir = tempfile::tempdir().unwrap();
    let q = SearchQuery::new("do I need an umbrella").with_limit(100);
    let check = |index: &SearchIndex| {
        let found = index.search(&q.clone().with_scopes(MINE)).unwrap();
        let ids: Vec<&str> = found.hits.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["sky_watch"], "{found:?}");
        assert_eq!(found.hits[0].field, MatchField::Meaning);
        // Unscoped, the closer tools of "b" take every place meaning offers.
        let found = index.search(&q).unwrap();
        assert!(!found.hits.is_empty());
        assert!(found.hits.iter().all(|h| h.id != "sky_watch"), "{found:?}");
    };
    {
        let index = SearchIndex::open_or_rebuild(dir.path())
            .unwrap()
            .with_embedder(Arc::new(Topics));
        feed_crowded(&index);
        check(&index);
    }
    // Reopened, the vectors read back from disk keep their scopes.
    let index = SearchIndex::open_or_rebuild(dir.path())
        .unwrap()
        .with_embedder(Arc::new(Topics));
    assert!(!index.needs_vector("sky_watch") && !index.needs_vector("rain_gauge_7"));
    check(&index);
}

#[test]
fn a_word_common_only_in_other_scopes_is_still_searched() {
    // 14,001 tools, "zephyr" in 4,002 of them (over a quarter): 4,000 of "b", one of "a",
    // one of "c", the 10,000 tools of "c" being a large catalog of their own. "errands" is
    // in 3,000 tools of "c": under a quarter of the index, over a quarter of "c".
    let spec = |name: String, summary: &str| ToolSpec::builder(name, summary).build().unwrap();
    let a = [spec("gust_meter".into(), "Measures zephyr strength.")];
    let b: Vec<ToolSpec> = (0..4_000)
        .map(|i| spec(format!("b{i}"), "A zephyr."))
        .collect();
    let mut c: Vec<ToolSpec> = (0..9_999)
        .map(|i| {
            spec(
                format!("c{i}"),
                if i < 3_000 {
                    "Chores and errands."
                } else {
                    "Chores."
                },
            )
        })
        .collect();
    c.push(spec("kite_flyer".into(), "Flies a kite in a zephyr."));
    let docs = a
        .iter()
        .map(|s| IndexDoc::new(s).with_scope(Some("a")))
        .chain(b.iter().map(|s| IndexDoc::new(s).with_scope(Some("b"))))
        .chain(c.iter().map(|s| IndexDoc::new(s).with_scope(Some("c"))));
    let index = SearchIndex::in_memory().unwrap();
    index.extend(docs, &mut |_| {}).unwrap();

    // "quokka" is no tool's word; "zephyr" is too common in the index to be searched.
    let found =
        |q: SearchQuery| -> BTreeSet<String> { ids(&index.search(&q.with_limit(100)).unwrap()) };
    let text = "zephyr quokka";
    assert!(found(SearchQuery::new(text)).is_empty());
    // In scope "a" it is one tool's word of one: searched.
    assert_eq!(
        found(SearchQuery::new(text).with_scopes(["a"])),
        BTreeSet::from(["gust_meter".to_owned()])
    );
    // In scope "c", a large catalog, it is one tool's of 10,000: searched.
    assert_eq!(
        found(SearchQuery::new(text).with_scopes(["c"])),
        BTreeSet::from(["kite_flyer".to_owned()])
    );
    // In "b" and "c" together it is common again, and left out.
    assert!(found(SearchQuery::new(text).with_scopes(["b", "c"])).is_empty());
    // A word common in "c" alone is left out of "c"'s queries, as in an index of "c"
    // alone, though the whole index searches it.
    let text = "errands quokka";
    assert_eq!(found(SearchQuery::new(text)).len(), 100);
    assert!(found(SearchQuery::new(text).with_scopes(["c"])).is_empty());
}
