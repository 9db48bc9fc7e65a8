//! Property tests of argument validation: any JSON as the arguments of a built-in tool
//! is an outcome, never a panic; an `invalid_arguments` error names what was wrong, and
//! a call that passes validation had arguments of the schema's shape.
//! `cargo test -p toolscout-invoke --test it -- --ignored props` runs 10⁶ cases.

use std::sync::LazyLock;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};
use toolscout_invoke::builtin::{self, BuiltinConfig};
use toolscout_invoke::{AllowedHosts, ErrorKind, Invoker};

/// Any JSON value, a few levels deep.
pub(crate) fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        ".{0,20}".prop_map(Value::String),
        prop_oneof![
            Just("$"),
            Just("$.a"),
            Just("$..*"),
            Just("now"),
            Just("UTC")
        ]
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("value".to_owned()),
                    Just("path".to_owned()),
                    Just("action".to_owned()),
                    Just("time_zone".to_owned()),
                    Just("time".to_owned()),
                    "[a-z]{1,6}",
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

struct Setup {
    runtime: tokio::runtime::Runtime,
    invoker: Invoker,
    _dir: tempfile::TempDir,
}

static SETUP: LazyLock<Setup> = LazyLock::new(|| {
    let dir = tempfile::tempdir().unwrap();
    let mut invoker = Invoker::default();
    builtin::register(
        &mut invoker,
        &BuiltinConfig::new(dir.path(), AllowedHosts::none()),
    )
    .unwrap();
    Setup {
        runtime: tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap(),
        invoker,
        _dir: dir,
    }
});

fn validate(tool: &str, args: Value) -> Result<(), TestCaseError> {
    let s = &*SETUP;
    let outcome = s
        .runtime
        .block_on(s.invoker.invoke_native(tool, args.clone()));
    match outcome.error() {
        Some(e) if e.kind == ErrorKind::InvalidArguments => {
            prop_assert!(!e.message.is_empty());
        }
        Some(_) => {}
        None => {
            // It passed: the arguments had the schema's shape.
            prop_assert!(args.is_object() || args.is_null(), "{args}");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn props_json_query_arguments(args in json_value()) { validate("json_query", args)?; }
    #[test]
    fn props_clock_arguments(args in json_value()) { validate("clock", args)?; }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000_000))]
    #[test]
    #[ignore = "long run: cargo test -- --ignored"]
    fn props_long_json_query_arguments(args in json_value()) { validate("json_query", args)?; }
    #[test]
    #[ignore = "long run: cargo test -- --ignored"]
    fn props_long_clock_arguments(args in json_value()) { validate("clock", args)?; }
}
