//! `BoundedPath::parse` then `query`: the first line is the path, the rest the JSON value
//! it runs over (a fixed document when the rest is not JSON).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolscout_invoke::jsonpath::BoundedPath;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (path, rest) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(path) = BoundedPath::parse(path) else {
        return;
    };
    let value = serde_json::from_str::<Value>(rest).unwrap_or_else(|_| {
        json!({"store": {"book": [
            {"title": "Sayings", "price": 8.95, "tags": ["a", "b"]},
            {"title": "Sword", "price": 12.99, "isbn": "0-553-21311-3"}
        ], "bicycle": {"color": "red", "price": 399}}, "n": [1, 2, [3, [4, {"k": null}]]]})
    });
    let _ = path.query(&value);
});
