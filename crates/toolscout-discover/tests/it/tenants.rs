//! A tenant's toolbox: search, lookup, suggestions and discover answers name only its
//! own, shared and built-in tools, and are what they would be if the other tenant did
//! not exist. `cargo test -p toolscout-discover --test it -- --ignored tenants` runs
//! 2,000 cases.

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde_json::json;
use toolscout_catalog::{BundlePut, Catalog, CatalogOptions, TenantLimits, ToolPut, Viewer};
use toolscout_discover::{DiscoverTools, Lookup, Toolbox};
use toolscout_invoke::Invoker;
use toolscout_search::{SearchIndex, SearchQuery};
use uuid::Uuid;

const WORDS: [&str; 7] = [
    "crm", "lookup", "customer", "invoice", "get", "list", "find",
];

#[derive(Debug, Clone)]
struct ToolDef {
    name: String,
    enabled: bool,
}

fn tool_def() -> impl Strategy<Value = ToolDef> {
    (
        prop::collection::vec(prop::sample::select(WORDS.to_vec()), 1..=3),
        any::<bool>(),
    )
        .prop_map(|(words, enabled)| ToolDef {
            name: words.join("_"),
            enabled: enabled || words.len() > 1,
        })
}

/// A's tools, B's tools, shared tools.
fn world() -> impl Strategy<Value = (Vec<ToolDef>, Vec<ToolDef>, Vec<ToolDef>)> {
    (
        prop::collection::vec(tool_def(), 1..=12),
        prop::collection::vec(tool_def(), 1..=12),
        prop::collection::vec(tool_def(), 0..=4),
    )
}

fn query() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(prop::sample::select(WORDS.to_vec()), 1..=3)
            .prop_map(|w| w.join("_")),
        prop::collection::vec(prop::sample::select(WORDS.to_vec()), 1..=2)
            .prop_map(|w| w.join(" ")),
        // Mutated names: cut short, a letter dropped, upper case.
        (
            prop::collection::vec(prop::sample::select(WORDS.to_vec()), 2..=3),
            1usize..6,
            0usize..3
        )
            .prop_map(|(w, cut, how)| {
                let name = w.join("_");
                match how {
                    0 => name[..name.len().saturating_sub(cut).max(1)].to_owned(),
                    1 => {
                        let i = cut.min(name.len() - 1);
                        format!("{}{}", &name[..i], &name[i + 1..])
                    }
                    _ => name.to_uppercase(),
                }
            }),
    ]
}

/// The ids are fixed per bundle, so two worlds put A's tools alike.
fn bundle_id(n: u128) -> Uuid {
    Uuid::from_u128(0x0191_0000_0000_7000_8000_0000_0000_0000 | n)
}

fn put_all(c: &Catalog, bundle: Uuid, slug: &str, tools: &[ToolDef]) {
    c.put_bundle(bundle, &BundlePut::new(slug)).unwrap();
    for (i, t) in tools.iter().enumerate() {
        let spec = toolscout_spec::ToolSpec::builder(
            t.name.as_str(),
            format!("Does {}", t.name.replace('_', " ")),
        )
        .build()
        .unwrap();
        let put = ToolPut::http(
            spec,
            json!({"method": "GET", "urlTemplate": "https://api.example.com/x"}),
        );
        // Duplicate names in one bundle are fine (another slug each).
        c.put_tool(bundle, &format!("t{i}"), "1", &put).unwrap();
        if !t.enabled {
            c.patch_tool(bundle, &format!("t{i}"), "1", false).unwrap();
        }
    }
}

/// A catalog with A's, the shared and (with `b`) B's tools; the toolbox of A.
fn build(a: &[ToolDef], b: Option<&[ToolDef]>, shared: &[ToolDef]) -> (tempfile::TempDir, Toolbox) {
    let dir = tempfile::tempdir().unwrap();
    let c = Catalog::open_with(dir.path(), CatalogOptions::default().with_builtins(false)).unwrap();
    let (ta, _) = c.add_tenant("a", TenantLimits::default()).unwrap();
    put_all(&c, bundle_id(1), "a", a);
    c.set_bundle_owner(bundle_id(1), Some(ta.id)).unwrap();
    put_all(&c, bundle_id(2), "shared", shared);
    c.set_bundle_shared(bundle_id(2), true).unwrap();
    if let Some(b) = b {
        let (tb, _) = c.add_tenant("b", TenantLimits::default()).unwrap();
        put_all(&c, bundle_id(3), "b", b);
        c.set_bundle_owner(bundle_id(3), Some(tb.id)).unwrap();
    }
    let toolbox = Toolbox::new(c, SearchIndex::in_memory().unwrap(), Invoker::default()).unwrap();
    let of_a = toolbox.as_viewer(Viewer::Tenant(ta.id));
    (dir, of_a)
}

fn kind(l: &Lookup) -> (String, Option<String>, BTreeSet<String>) {
    match l {
        Lookup::Found(t) => (
            "found".into(),
            Some(t.spec.name.to_string()),
            BTreeSet::new(),
        ),
        Lookup::Disabled { tool, .. } => (
            "disabled".into(),
            Some(tool.spec.name.to_string()),
            BTreeSet::new(),
        ),
        Lookup::NotFound { did_you_mean } => {
            ("none".into(), None, did_you_mean.iter().cloned().collect())
        }
    }
}

fn tokens(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

fn check(
    a: &[ToolDef],
    b: &[ToolDef],
    shared: &[ToolDef],
    queries: &[String],
) -> Result<(), TestCaseError> {
    let (_d1, with_b) = build(a, Some(b), shared);
    let (_d2, without_b) = build(a, None, shared);
    let mine: BTreeSet<String> = a.iter().chain(shared).map(|t| t.name.clone()).collect();
    // B's names that nothing of A's view could put in an answer: not one of its names,
    // nor a word of them (summaries are "Does" and the name's words).
    let words: BTreeSet<String> = mine
        .iter()
        .flat_map(|n| n.split('_'))
        .map(str::to_owned)
        .collect();
    let theirs: BTreeSet<String> = b
        .iter()
        .map(|t| t.name.clone())
        .filter(|n| !mine.contains(n) && !words.contains(n))
        .collect();
    let discover_with = DiscoverTools::new(with_b.clone());
    let discover_without = DiscoverTools::new(without_b.clone());
    for q in queries {
        for include_disabled in [false, true] {
            let sq = SearchQuery::new(q.as_str())
                .with_include_disabled(include_disabled)
                .with_limit(50);
            let hits = |tb: &Toolbox| -> BTreeSet<String> {
                tb.search(&sq)
                    .unwrap()
                    .hits
                    .iter()
                    .map(|(t, _)| t.spec.name.to_string())
                    .collect()
            };
            let (h1, h2) = (hits(&with_b), hits(&without_b));
            prop_assert!(h1.is_subset(&mine), "{q}: {h1:?} beyond {mine:?}");
            prop_assert_eq!(&h1, &h2, "search {}", q);
        }
        let (l1, l2) = (kind(&with_b.lookup(q)), kind(&without_b.lookup(q)));
        prop_assert!(l1.1.as_ref().is_none_or(|n| mine.contains(n)));
        prop_assert!(l1.2.is_subset(&mine), "{q}: did you mean {:?}", l1.2);
        prop_assert_eq!(&l1.0, &l2.0, "lookup {}", q);
        prop_assert_eq!(&l1.1, &l2.1, "lookup {}", q);
        if l1.2.len() < 5 && l2.2.len() < 5 {
            prop_assert_eq!(&l1.2, &l2.2, "did you mean {}", q);
        }
        let s1: BTreeSet<String> = with_b.suggest(q).into_iter().collect();
        prop_assert!(s1.is_subset(&mine), "{q}: suggest {s1:?}");
        let st: BTreeSet<String> = with_b
            .suggest_tools(q, 5)
            .iter()
            .map(|t| t.spec.name.to_string())
            .collect();
        prop_assert!(st.is_subset(&mine), "{q}: suggest_tools {st:?}");
        for args in [
            json!({"query": q}),
            json!({"tool": q}),
            json!({"tool": q, "detail": "full"}),
        ] {
            let r1 = serde_json::to_string(&discover_with.answer(&args).reply).unwrap();
            // A name the request itself holds may be echoed.
            let asked = tokens(&args.to_string());
            let leaked: Vec<String> = tokens(&r1)
                .intersection(&theirs)
                .filter(|t| !asked.contains(*t))
                .cloned()
                .collect();
            prop_assert!(leaked.is_empty(), "{args}: {leaked:?} in {r1}");
            if args.get("query").is_none() {
                let r2 = serde_json::to_string(&discover_without.answer(&args).reply).unwrap();
                let (t1, t2) = (tokens(&r1), tokens(&r2));
                prop_assert_eq!(t1, t2, "{}", args);
            }
        }
    }
    Ok(())
}

fn run(cases: u32) {
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(
            &(world(), prop::collection::vec(query(), 1..6)),
            |((a, b, shared), queries)| check(&a, &b, &shared, &queries),
        )
        .unwrap();
}

#[test]
fn a_tenant_s_answers_name_only_what_it_sees_and_do_not_depend_on_others() {
    run(48);
}

#[test]
#[ignore = "2,000 cases: a few minutes"]
fn a_tenant_s_answers_name_only_what_it_sees_and_do_not_depend_on_others_many() {
    run(2_000);
}
