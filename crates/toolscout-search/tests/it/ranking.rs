//! Ranked results with their tiers.

use insta::assert_snapshot;
use toolscout_search::{NameStatus, SearchQuery, Tier};

use crate::fixture::{check, index};

fn q(text: &str) -> SearchQuery {
    SearchQuery::new(text)
}

#[test]
fn exact_name_comes_first_then_prefix_then_words() {
    assert_snapshot!(check(q("get_weather")));
}

#[test]
fn exact_name_ignores_case() {
    let found = index().search(&q("GET_WEATHER")).unwrap();
    assert_eq!(found.hits[0].tier, Tier::Exact);
}

#[test]
fn name_prefix() {
    assert_snapshot!(check(q("get_w")));
}

#[test]
fn words_of_a_sentence() {
    assert_snapshot!(check(q("what's the weather in Tokyo")));
}

#[test]
fn camel_case_names_split_into_words() {
    assert_snapshot!(check(q("translate a text")));
}

#[test]
fn abbreviated_names_match_full_words() {
    assert_snapshot!(check(q("calculate my body mass")));
}

#[test]
fn fuzzy_when_no_word_matches() {
    assert_snapshot!(check(q("wether")));
}

#[test]
fn recency_breaks_ties_within_a_tier() {
    assert_snapshot!(check(q("notify")));
}

#[test]
fn chinese_description() {
    assert_snapshot!(check(q("天气预报")));
}

#[test]
fn filters_by_tag_bundle_and_category() {
    assert_snapshot!("tag", check(q("weather").with_tag("WEB")));
    assert_snapshot!("tag_none", check(q("weather").with_tag("finance")));
    assert_snapshot!("bundle", check(q("text").with_bundle("lang")));
    assert_snapshot!("category", check(q("file").with_category("files")));
}

#[test]
fn disabled_tools_are_hidden_unless_asked() {
    assert_snapshot!("hidden", check(q("write_file")));
    assert_snapshot!(
        "included",
        check(q("write_file").with_include_disabled(true))
    );
}

#[test]
fn filtered_out_name_says_so() {
    let found = index().search(&q("read_file").with_tag("web")).unwrap();
    assert_eq!(found.name_status, Some(NameStatus::FilteredOut));
}

#[test]
fn did_you_mean_for_a_misspelled_name() {
    assert_snapshot!(check(q("get_wether")));
}

#[test]
fn pages_have_no_duplicates_or_gaps() {
    let index = index();
    let all = index
        .search(&q("weather file text").with_limit(100))
        .unwrap();
    assert!(all.next_page.is_none());
    let mut paged = Vec::new();
    let mut token = None;
    for _ in 0..20 {
        let page = index
            .search(&q("weather file text").with_limit(2).with_page_token(token))
            .unwrap();
        assert!(page.hits.len() <= 2);
        paged.extend(page.hits);
        token = page.next_page;
        if token.is_none() {
            break;
        }
    }
    let ids = |h: &[toolscout_search::Hit]| h.iter().map(|h| h.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&paged), ids(&all.hits));
    assert!(all.hits.len() > 4);
}

#[test]
fn page_tokens_are_checked() {
    let index = index();
    let first = index.search(&q("weather").with_limit(1)).unwrap();
    let token = first.next_page.unwrap();
    let other = index.search(&q("file").with_page_token(Some(token)));
    assert!(other.unwrap_err().to_string().contains("another query"));
    for bad in ["", "zz", "0123456789abcdefg", "ffffffffffffffff"] {
        let r = index.search(&q("weather").with_page_token(Some(bad.to_owned())));
        assert!(r.is_err(), "{bad}");
    }
}

#[test]
fn page_size_is_capped() {
    let found = index().search(&q("a b c").with_limit(1_000_000)).unwrap();
    assert!(found.hits.len() <= toolscout_search::MAX_PAGE_SIZE);
}

#[test]
fn empty_queries_find_nothing() {
    for text in ["", "   ", "\n\t", "the of and"] {
        assert_eq!(check(q(text)), "(no hits)\n", "{text:?}");
    }
}

#[test]
fn absurd_queries_never_panic() {
    let index = index();
    let long = "weather ".repeat(50_000);
    let name_like = "get_weather".repeat(5_000);
    let queries = [
        long.as_str(),
        name_like.as_str(),
        "title:foo AND (bar OR \"baz",
        "*?~^2 +- || && {[ ]}",
        "\u{0}\u{1}\u{7f}",
        "🦀🦀🦀",
        "a\u{301}\u{301}\u{301}",
        "ǅǈǋ",
        "\u{10FFFF}",
        "..__--",
    ];
    for text in queries {
        index.search(&q(text)).unwrap();
        index
            .search(&q(text).with_limit(3).with_include_disabled(true))
            .unwrap();
    }
    assert_snapshot!(check(q("title:weather AND (forecast")));
}

#[test]
fn a_keyword_as_written_does_not_list_words_that_only_share_its_stem() {
    use toolscout_search::{IndexDoc, SearchIndex};
    use toolscout_spec::ToolSpec;
    // "factorial" and "factory" share the stem `factori`.
    let tools = [
        ToolSpec::builder(
            "LibraryExport.createDelegate",
            "Creates a delegate from a factory.",
        )
        .build()
        .unwrap(),
        ToolSpec::builder("math.product_upto", "Calculate the factorial of a number.")
            .build()
            .unwrap(),
    ];
    let index = SearchIndex::in_memory().unwrap();
    index
        .extend(tools.iter().map(IndexDoc::new), &mut |_| {})
        .unwrap();
    let ids = |query: &str| -> Vec<String> {
        let found = index.search(&q(query)).unwrap();
        found.hits.into_iter().map(|h| h.id).collect()
    };
    assert_eq!(ids("factorial"), ["math.product_upto"]);
    assert_eq!(ids("factory"), ["LibraryExport.createDelegate"]);
    // A sentence still finds by stems, the words as written first.
    assert_eq!(
        ids("the factorial of 5"),
        ["math.product_upto", "LibraryExport.createDelegate"]
    );
    // A keyword no tool holds as written still finds both by their stem.
    assert_eq!(ids("factories").len(), 2);
    // Word by word: `factorials` is held nowhere as written, so its stem still counts
    // beside `calculate`, which is.
    assert_eq!(
        ids("calculate_factorials"),
        ["math.product_upto", "LibraryExport.createDelegate"]
    );
    // A holder that is filtered out (here: disabled) does not hide the tools the stem
    // finds.
    let disabled = SearchIndex::in_memory().unwrap();
    disabled
        .extend(
            [
                IndexDoc::new(&tools[0]),
                IndexDoc::new(&tools[1]).with_enabled(false),
            ],
            &mut |_| {},
        )
        .unwrap();
    let found = disabled.search(&q("factorial")).unwrap();
    let ids: Vec<&str> = found.hits.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids, ["LibraryExport.createDelegate"]);
}
