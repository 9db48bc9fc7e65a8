//! Ranking by meaning: the fused word tier with a toy [`Embedder`].

use std::sync::Arc;

use insta::assert_snapshot;
use toolscout_search::{Embedder, IndexDoc, MatchField, SearchIndex, SearchQuery, Tier};

use crate::fixture::{feed, render, tools};

/// One dimension per topic; a text's vector counts the topic words it holds.
pub(crate) struct Topics;

const TOPICS: [&[&str]; 6] = [
    &[
        "weather", "rain", "umbrella", "sunny", "forecast", "雨", "伞",
    ],
    &["file", "document", "save", "disk", "read", "write"],
    &["stock", "shares", "ticker", "invest", "price"],
    &["notify", "chat", "message", "ping", "team"],
    &["translate", "language", "french", "german"],
    &["bmi", "body", "health", "weight", "height"],
];

impl Embedder for Topics {
    fn model(&self) -> &str {
        "topics"
    }

    fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        texts
            .iter()
            .map(|t| {
                let t = t.to_lowercase();
                let mut words: Vec<&str> = t.split(|c: char| !c.is_alphanumeric()).collect();
                // Each Han character on its own too ("伞", umbrella).
                words.extend(
                    t.char_indices()
                        .filter(|(_, c)| ('\u{4E00}'..='\u{9FFF}').contains(c))
                        .map(|(i, c)| &t[i..i + c.len_utf8()]),
                );
                let mut v: Vec<f32> = TOPICS
                    .iter()
                    .map(|topic| words.iter().filter(|w| topic.contains(w)).count() as f32)
                    .collect();
                v.push(0.1); // every text is a little "other", so no vector is zero
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.iter().map(|x| x / n).collect()
            })
            .collect()
    }
}

fn index() -> SearchIndex {
    let index = SearchIndex::in_memory()
        .unwrap()
        .with_embedder(Arc::new(Topics));
    feed(&index, &tools());
    index
}

fn check(q: SearchQuery) -> String {
    render(&index().search(&q).unwrap())
}

#[test]
fn a_sentence_without_shared_words_finds_tools_by_meaning() {
    // No tool's text says "umbrella" or "sunny": only meaning finds the weather tools.
    let out = check(SearchQuery::new("do I need an umbrella, or is it sunny"));
    assert_snapshot!(out);
}

/// Chinese writes no spaces between words: a query in Han characters is a sentence, and
/// meaning ranks it ("should I take an umbrella tomorrow" shares no word with any tool).
#[test]
fn a_chinese_sentence_finds_tools_by_meaning() {
    let found = index().search(&SearchQuery::new("明天要带伞吗")).unwrap();
    let ids: Vec<&str> = found.hits.iter().map(|h| h.id.as_str()).collect();
    assert!(ids.contains(&"get_weather"), "{ids:?}");
    assert!(
        found.hits.iter().any(|h| h.field == MatchField::Meaning),
        "{found:?}"
    );
}

#[test]
fn words_and_meaning_rank_together() {
    assert_snapshot!(check(SearchQuery::new("ping my team about the shares")));
}

#[test]
fn hits_found_by_meaning_alone_say_so() {
    let found = index()
        .search(&SearchQuery::new("do I need an umbrella"))
        .unwrap();
    assert!(!found.hits.is_empty());
    for h in &found.hits {
        assert_eq!(h.tier, Tier::Word);
        assert_eq!(h.field, MatchField::Meaning, "{}", h.explain());
    }
}

#[test]
fn name_like_queries_are_ranked_as_without_an_embedder() {
    let plain = crate::fixture::index();
    let semantic = index();
    for text in ["get_weather", "get_w", "wether", "notify", "translateText"] {
        let q = SearchQuery::new(text);
        assert_eq!(
            render(&semantic.search(&q).unwrap()),
            render(&plain.search(&q).unwrap()),
            "{text}"
        );
    }
}

#[test]
fn filters_hold_for_hits_found_by_meaning() {
    let index = index();
    // write_file is disabled: meaning must not bring it back.
    let found = index
        .search(&SearchQuery::new("save this document to disk"))
        .unwrap();
    assert!(found.hits.iter().all(|h| h.id != "write_file"));
    let found = index
        .search(&SearchQuery::new("save this document to disk").with_include_disabled(true))
        .unwrap();
    assert!(found.hits.iter().any(|h| h.id == "write_file"));
    let found = index
        .search(&SearchQuery::new("do I need an umbrella").with_tag("finance"))
        .unwrap();
    assert!(
        found.hits.iter().all(|h| h.id == "get_stock_price"),
        "{found:?}"
    );
}

#[test]
fn deleted_tools_lose_their_meaning_too() {
    let index = index();
    index.delete("get_weather").unwrap();
    index.commit().unwrap();
    let found = index
        .search(&SearchQuery::new("do I need an umbrella").with_limit(100))
        .unwrap();
    assert!(found.hits.iter().all(|h| h.id != "get_weather"));
    assert!(found.hits.iter().any(|h| h.id == "weather_alerts"));
}

#[test]
fn pages_of_a_fused_tier_have_no_duplicates_or_gaps() {
    let index = index();
    let q = SearchQuery::new("read the weather forecast and ping the team");
    let all = index.search(&q.clone().with_limit(100)).unwrap();
    let mut paged = Vec::new();
    let mut token = None;
    loop {
        let page = index
            .search(&q.clone().with_limit(3).with_page_token(token))
            .unwrap();
        paged.extend(page.hits.into_iter().map(|h| h.id));
        token = page.next_page;
        if token.is_none() {
            break;
        }
    }
    let ids: Vec<String> = all.hits.into_iter().map(|h| h.id).collect();
    assert_eq!(paged, ids);
}

#[test]
fn sentence_hits_carry_their_closeness_in_meaning_and_name_matches_do_not() {
    let index = index();
    let found = index
        .search(&SearchQuery::new("is rain in the forecast"))
        .unwrap();
    let first = &found.hits[0];
    let closeness = first.meaning.expect("a fused hit has a cosine");
    assert!(closeness > 0.5, "{}: {closeness}", first.explain());
    assert!(found.hits.iter().all(|h| h.meaning.is_some()));
    // A tool on another subject that a word still finds is far in meaning.
    let found = index
        .search(&SearchQuery::new("read the stock price").with_limit(20))
        .unwrap();
    let stock = found
        .hits
        .iter()
        .find(|h| h.id == "get_stock_price")
        .unwrap();
    let read = found.hits.iter().find(|h| h.id == "read_file").unwrap();
    assert!(stock.meaning.unwrap() > read.meaning.unwrap(), "{found:?}");
    for name in ["get_weather", "get_w"] {
        let found = index.search(&SearchQuery::new(name)).unwrap();
        assert_eq!(found.hits[0].meaning, None, "{name}");
    }
    // Without an embedder no hit has one.
    let plain = crate::fixture::index();
    let found = plain.search(&SearchQuery::new("weather forecast")).unwrap();
    assert!(!found.hits.is_empty() && found.hits.iter().all(|h| h.meaning.is_none()));
}

#[test]
fn similarity_compares_two_indexed_tools() {
    let index = index();
    let same = index.similarity("get_weather", "weather_alerts").unwrap();
    let apart = index.similarity("get_weather", "translateText").unwrap();
    assert!(same > 0.9, "two weather tools: {same}");
    assert!(apart < 0.3, "weather and translation: {apart}");
    assert_eq!(index.similarity("get_weather", "no_such_tool"), None);
    assert_eq!(
        crate::fixture::index().similarity("get_weather", "weather_alerts"),
        None,
        "without an embedder"
    );
}

/// [`Topics`] under another name, counting the texts it embeds.
struct Counting {
    model: &'static str,
    texts: std::sync::atomic::AtomicUsize,
}

impl Counting {
    fn new(model: &'static str) -> Arc<Counting> {
        Arc::new(Counting {
            model,
            texts: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    fn texts(&self) -> usize {
        self.texts.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Embedder for Counting {
    fn model(&self) -> &str {
        self.model
    }

    fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        self.texts
            .fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
        Topics.embed(texts)
    }
}

#[test]
fn an_index_on_disk_keeps_its_vectors_for_the_same_model_only() {
    let dir = tempfile::tempdir().unwrap();
    let q = SearchQuery::new("do I need an umbrella, or is it sunny");
    let first = Counting::new("topics");
    let expected = {
        let index = SearchIndex::open_or_rebuild(dir.path())
            .unwrap()
            .with_embedder(first.clone());
        feed(&index, &tools());
        assert_eq!(first.texts(), tools().len());
        render(&index.search(&q).unwrap())
    };

    // Reopened with the same model: every vector is read back, none is made again, and
    // meaning ranks as it did (only the query is embedded).
    let same = Counting::new("topics");
    let index = SearchIndex::open_or_rebuild(dir.path())
        .unwrap()
        .with_embedder(same.clone());
    assert!(
        tools()
            .iter()
            .all(|t| !index.needs_vector(t.spec.name.as_str()))
    );
    assert_eq!(render(&index.search(&q).unwrap()), expected);
    assert_eq!(same.texts(), 1);
    assert!(index.similarity("get_weather", "read_file").is_some());
    drop(index);

    // Another model's vectors are not this one's: every tool needs its vector again.
    let other = SearchIndex::open_or_rebuild(dir.path())
        .unwrap()
        .with_embedder(Counting::new("other-model"));
    assert!(
        tools()
            .iter()
            .all(|t| other.needs_vector(t.spec.name.as_str()))
    );
}

#[test]
fn vectors_another_process_committed_are_read_back_at_the_next_catch_up() {
    use toolscout_search::IndexDoc;
    use toolscout_spec::ToolSpec;
    let dir = tempfile::tempdir().unwrap();
    let spec = |summary: &str| ToolSpec::builder("helper", summary).build().unwrap();
    let rain = ToolSpec::builder("rain_gauge", "Rain and weather forecast")
        .build()
        .unwrap();
    let first = SearchIndex::open_or_rebuild(dir.path())
        .unwrap()
        .with_embedder(Counting::new("topics"));
    let before = spec("Save a file to disk");
    first
        .extend([IndexDoc::new(&rain), IndexDoc::new(&before)], &mut |_| {})
        .unwrap();
    // A second handle (another process) reads the vectors as they are.
    let second = SearchIndex::open_or_rebuild(dir.path())
        .unwrap()
        .with_embedder(Counting::new("topics"));
    let far = second.similarity("helper", "rain_gauge").unwrap();
    assert!(far < 0.5, "{far}");
    // The first rewrites `helper` about the weather; the second catches up.
    let after = spec("Will it rain? The weather forecast");
    first.upsert(&IndexDoc::new(&after)).unwrap();
    first.commit().unwrap();
    second.fingerprints_for_update().unwrap();
    second.rollback().unwrap();
    let near = second.similarity("helper", "rain_gauge").unwrap();
    assert!(near > 0.9, "{near}");
}

#[test]
fn near_twins_are_listed_under_the_better_hit_and_pages_count_hits() {
    let index = index();
    let q = SearchQuery::new("is rain in the forecast, or is it sunny").with_limit(100);
    let flat: Vec<String> = index
        .search(&q)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| h.id)
        .collect();
    let grouped = index.search(&q.clone().with_twins(Some(0.9))).unwrap();
    assert!(
        grouped.hits.iter().any(|h| !h.twins.is_empty()),
        "the weather tools are twins: {grouped:?}"
    );
    // Every tool is shown once, as a hit or as a twin of a better hit close to it.
    let mut shown: Vec<String> = Vec::new();
    for h in &grouped.hits {
        assert!(!shown.contains(&h.id), "{} shown twice", h.id);
        shown.push(h.id.clone());
        let at = |id: &String| flat.iter().position(|f| f == id).unwrap();
        for t in &h.twins {
            assert!(at(t) > at(&h.id), "{t} ranks above {}", h.id);
            assert!(index.similarity(&h.id, t).unwrap() >= 0.9, "{t} ~ {}", h.id);
            assert!(!shown.contains(t), "{t} shown twice");
            shown.push(t.clone());
        }
    }
    let (mut a, mut b) = (shown.clone(), flat.clone());
    a.sort();
    b.sort();
    assert_eq!(a, b);
    // Pages of one hit each give the same hits, twins and all.
    let mut paged = Vec::new();
    let mut token = None;
    loop {
        let page = index
            .search(
                &q.clone()
                    .with_twins(Some(0.9))
                    .with_limit(1)
                    .with_page_token(token),
            )
            .unwrap();
        paged.extend(page.hits.into_iter().map(|h| (h.id, h.twins)));
        token = page.next_page;
        if token.is_none() {
            break;
        }
    }
    let whole: Vec<(String, Vec<String>)> =
        grouped.hits.into_iter().map(|h| (h.id, h.twins)).collect();
    assert_eq!(paged, whole);
}

#[test]
fn grouping_pages_are_their_own_and_need_an_embedder() {
    let index = index();
    let q = SearchQuery::new("is rain in the forecast").with_limit(1);
    let token = index.search(&q).unwrap().next_page;
    let err = index
        .search(&q.clone().with_twins(Some(0.9)).with_page_token(token))
        .unwrap_err();
    assert!(err.to_string().contains("another query"), "{err}");
    // Without vectors there are no twins: every tool is a hit.
    let plain = crate::fixture::index();
    let q = SearchQuery::new("weather forecast").with_limit(100);
    let flat = plain.search(&q).unwrap();
    let grouped = plain.search(&q.clone().with_twins(Some(0.5))).unwrap();
    assert_eq!(flat.hits.len(), grouped.hits.len());
    assert!(grouped.hits.iter().all(|h| h.twins.is_empty()));
    // A name is ranked by names, not meaning: nothing is grouped.
    let name = SearchQuery::new("weather").with_limit(100);
    let flat: Vec<String> = index
        .search(&name)
        .unwrap()
        .hits
        .into_iter()
        .map(|h| h.id)
        .collect();
    let grouped = index.search(&name.clone().with_twins(Some(0.5))).unwrap();
    assert!(grouped.hits.iter().all(|h| h.twins.is_empty()));
    let grouped: Vec<String> = grouped.hits.into_iter().map(|h| h.id).collect();
    assert_eq!(grouped, flat);
    // A threshold outside 0..=1 groups nothing.
    assert_eq!(SearchQuery::new("x").with_twins(Some(1.5)).twins, None);
    assert_eq!(SearchQuery::new("x").with_twins(Some(f32::NAN)).twins, None);
}

/// [`Topics`] whose cosines run high: its `calibrate` halves them and takes 0.35 off.
struct Deflated;

impl Embedder for Deflated {
    fn model(&self) -> &str {
        "deflated"
    }

    fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        Topics.embed(texts)
    }

    fn calibrate(&self, cosine: f32) -> f32 {
        0.5 * cosine - 0.35
    }
}

#[test]
fn a_calibrated_embedder_is_judged_and_reported_on_the_reference_scale() {
    let deflated = SearchIndex::in_memory()
        .unwrap()
        .with_embedder(Arc::new(Deflated));
    feed(&deflated, &tools());
    let plain = index();

    // Every cosine handed out is the calibrated one.
    let q = SearchQuery::new("read the stock price").with_limit(20);
    let (raw, cal) = (plain.search(&q).unwrap(), deflated.search(&q).unwrap());
    assert!(!cal.hits.is_empty());
    for hit in &cal.hits {
        let before = raw.hits.iter().find(|h| h.id == hit.id).unwrap();
        let expected = 0.5 * before.meaning.unwrap() - 0.35;
        assert!((hit.meaning.unwrap() - expected).abs() < 1e-6, "{hit:?}");
    }
    let (a, b) = ("get_weather", "weather_alerts");
    let expected = 0.5 * plain.similarity(a, b).unwrap() - 0.35;
    assert!((deflated.similarity(a, b).unwrap() - expected).abs() < 1e-6);

    // The floor for tools found by meaning alone applies to the calibrated cosine: the
    // weather tools, close in raw cosine, fall below it once calibrated.
    let q = SearchQuery::new("do I need an umbrella");
    let found = plain.search(&q).unwrap();
    assert!(
        found.hits.iter().any(|h| h.id == "get_weather"),
        "{found:?}"
    );
    let found = deflated.search(&q).unwrap();
    assert!(found.hits.is_empty(), "{found:?}");
}

#[test]
fn utterances_find_a_tool_by_the_words_and_the_meaning_of_its_users() {
    use toolscout_spec::ToolSpec;
    // Its own text shares no word and no topic with how its users ask.
    let bare = ToolSpec::builder("tide_times", "Tide tables for a harbour.")
        .build()
        .unwrap();
    let asked = ToolSpec::builder("tide_times", "Tide tables for a harbour.")
        .utterance("is it sunny enough to go sailing")
        .utterance("do I need an umbrella on the boat")
        .build()
        .unwrap();
    let build = |spec: &ToolSpec, embedder: Option<Arc<dyn Embedder>>| {
        let mut index = SearchIndex::in_memory().unwrap();
        if let Some(e) = embedder {
            index = index.with_embedder(e);
        }
        index.extend([IndexDoc::new(spec)], &mut |_| {}).unwrap();
        index
    };
    let ids = |index: &SearchIndex, q: &str| -> Vec<String> {
        let found = index.search(&SearchQuery::new(q)).unwrap();
        found.hits.into_iter().map(|h| h.id).collect()
    };

    // By words: a word only an utterance holds.
    assert!(ids(&build(&bare, None), "go sailing").is_empty());
    assert_eq!(ids(&build(&asked, None), "go sailing"), ["tide_times"]);

    // By meaning: "forecast" and "rain" are in no text of the tool, but on the topic of
    // its utterances.
    let query = "what does the forecast say about rain";
    assert!(ids(&build(&bare, Some(Arc::new(Topics))), query).is_empty());
    let index = build(&asked, Some(Arc::new(Topics)));
    let found = index.search(&SearchQuery::new(query)).unwrap();
    assert_eq!(found.hits.len(), 1, "{found:?}");
    assert_eq!(found.hits[0].field, MatchField::Meaning);
}

#[test]
fn a_word_hit_that_holds_little_of_the_query_is_not_a_full_match() {
    use toolscout_spec::ToolSpec;
    const WORDS: [&str; 8] = [
        "alpha", "beta", "gamma", "delta", "kappa", "sigma", "omega", "theta",
    ];
    // Eight tools, each holding one word of the query, and one on its weather topic that
    // holds none (a cosine of about 0.32 with it).
    let mut specs: Vec<ToolSpec> = (0..WORDS.len())
        .map(|i| {
            let description = format!("Handles {}.", WORDS[i]);
            ToolSpec::builder(format!("tool_{i}"), description)
                .build()
                .unwrap()
        })
        .collect();
    specs.push(
        ToolSpec::builder("umbrella_check", "Tells if rain is coming.")
            .build()
            .unwrap(),
    );
    let index = SearchIndex::in_memory()
        .unwrap()
        .with_embedder(Arc::new(Topics));
    index
        .extend(specs.iter().map(IndexDoc::new), &mut |_| {})
        .unwrap();
    let ranked = |q: &str| -> Vec<String> {
        let found = index.search(&SearchQuery::new(q)).unwrap();
        found.hits.into_iter().map(|h| h.id).collect()
    };
    let topic = "the forecast of a document on disk to save";
    // The best word hit holds an eighth of the query's catalog words: a fraction of a full
    // match, and the tool closest in meaning comes first.
    let spread = ranked(&format!("{} {topic}", WORDS.join(" ")));
    assert_eq!(spread[0], "umbrella_check", "{spread:?}");
    // Holding all the query's catalog words, a word hit is a full match again.
    let one = ranked(&format!("alpha {topic}"));
    assert_eq!(one[0], "tool_0", "{one:?}");
    assert!(one.contains(&"umbrella_check".to_owned()), "{one:?}");
}
