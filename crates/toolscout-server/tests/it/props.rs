//! Property tests of the JSON-RPC parser: any body is answered (or, for notifications,
//! not), never a panic; every reply is a JSON-RPC 2.0 envelope with exactly one of
//! `result` and `error`; no answer is larger than the bound.
//! `cargo test -p toolscout-server --test it -- --ignored props` runs 10⁶ cases.

use std::sync::LazyLock;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};
use toolscout_server::rpc;

struct Setup {
    runtime: tokio::runtime::Runtime,
    fixture: crate::Fixture,
}

static SETUP: LazyLock<Setup> = LazyLock::new(|| Setup {
    runtime: tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap(),
    fixture: crate::fixture(),
});

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        ".{0,12}".prop_map(Value::String),
        prop::sample::select(rpc::METHODS.to_vec()).prop_map(|m| json!(m)),
        prop::sample::select(vec![
            "clock",
            "json_query",
            "read_file",
            "get_forecast",
            "2.0"
        ])
        .prop_map(|m| json!(m)),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "jsonrpc",
                    "method",
                    "params",
                    "id",
                    "name",
                    "arguments",
                    "cursor",
                    "query",
                    "level",
                    "parameter",
                    "limit",
                    "action",
                ])
                .prop_map(str::to_owned),
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A request that is mostly well formed: the right envelope, any method and params.
fn request() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(rpc::METHODS.to_vec()),
        json_value(),
        prop_oneof![Just(None), any::<i32>().prop_map(|n| Some(json!(n)))],
    )
        .prop_map(|(method, params, id)| {
            let mut r = json!({"jsonrpc": "2.0", "method": method, "params": params});
            if let Some(id) = id {
                r["id"] = id;
            }
            r
        })
}

fn envelope(reply: &Value) -> Result<(), TestCaseError> {
    prop_assert_eq!(&reply["jsonrpc"], "2.0", "{}", reply);
    prop_assert!(reply.get("id").is_some(), "{}", reply);
    prop_assert!(
        reply.get("result").is_some() != reply.get("error").is_some(),
        "{}",
        reply
    );
    if let Some(e) = reply.get("error") {
        prop_assert!(e["code"].is_i64() && e["message"].is_string(), "{}", reply);
    }
    Ok(())
}

fn answer(body: &[u8]) -> Result<(), TestCaseError> {
    let s = &*SETUP;
    let reply = s.runtime.block_on(rpc::answer(&s.fixture.state, body));
    match reply {
        None => {}
        Some(Value::Array(items)) => {
            prop_assert!(!items.is_empty() && items.len() <= rpc::MAX_BATCH);
            for item in &items {
                envelope(item)?;
            }
        }
        Some(one) => envelope(&one)?,
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn props_rpc_any_bytes(body in prop::collection::vec(any::<u8>(), 0..200)) { answer(&body)?; }
    #[test]
    fn props_rpc_any_json(v in json_value()) { answer(v.to_string().as_bytes())?; }
    #[test]
    fn props_rpc_requests(batch in prop::collection::vec(request(), 1..4), single in request()) {
        answer(Value::Array(batch).to_string().as_bytes())?;
        answer(single.to_string().as_bytes())?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000_000))]
    #[test]
    #[ignore = "long run: cargo test -- --ignored"]
    fn props_long_rpc_any_bytes(body in prop::collection::vec(any::<u8>(), 0..200)) { answer(&body)?; }
    #[test]
    #[ignore = "long run: cargo test -- --ignored"]
    fn props_long_rpc_any_json(v in json_value()) { answer(v.to_string().as_bytes())?; }
    #[test]
    #[ignore = "long run: cargo test -- --ignored"]
    fn props_long_rpc_requests(batch in prop::collection::vec(request(), 1..4), single in request()) {
        answer(Value::Array(batch).to_string().as_bytes())?;
        answer(single.to_string().as_bytes())?;
    }
}
