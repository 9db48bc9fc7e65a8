//! Property tests of the discover arguments: any JSON is answered with data (a reply
//! with a `kind`), never a panic or an `Err`.
//! `cargo test -p toolscout-discover --test it -- --ignored props` runs 10⁶ cases.

use std::sync::LazyLock;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};
use toolscout_discover::DiscoverTools;

struct Setup {
    discover: DiscoverTools,
    _fixture: crate::Fixture,
}

static SETUP: LazyLock<Setup> = LazyLock::new(|| {
    let fixture = crate::fixture();
    Setup {
        discover: DiscoverTools::new(fixture.toolbox.clone()),
        _fixture: fixture,
    }
});

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        ".{0,16}".prop_map(Value::String),
        prop::sample::select(vec![
            "read_file",
            "weather",
            "full",
            "files",
            "city",
            "get_weather"
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(2, 16, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "query",
                    "tool",
                    "detail",
                    "parameter",
                    "category",
                    "page",
                    "max_tokens",
                ])
                .prop_map(str::to_owned),
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn answer(args: &Value) -> Result<(), TestCaseError> {
    let a = SETUP.discover.answer(args);
    prop_assert!(
        a.reply.get("kind").is_some_and(Value::is_string),
        "{}",
        a.reply
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn props_discover_arguments(args in json_value()) { answer(&args)?; }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000_000))]
    #[test]
    #[ignore = "long run: cargo test -- --ignored"]
    fn props_long_discover_arguments(args in json_value()) { answer(&args)?; }
}
