//! An HTTP tool's `extractExpr` (JSONPath or regular expression), parsed then applied to a
//! response: the first line is the expression, the rest the response's text (its JSON
//! when it parses, `null` otherwise, as an HTTP tool reads it).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolscout_invoke::fuzzing::extract;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (expr, body) = text.split_once('\n').unwrap_or((text, ""));
    let json = serde_json::from_str::<Value>(body).unwrap_or(Value::Null);
    let _ = extract(expr, &json, body);
});
