//! An HTTP tool's `extractExpr` (JSONPath or regular expression), parsed then applied to a
//! response: the first line is the expression, the rest the response's text (its JSON
//! when it parses, `null` otherwise, as an HTTP tool reads it). A JSONPath that ends
//! inside a string literal is skipped: finding 1 ([`known::ends_in_string`]).
#![no_main]

mod known;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolscout_invoke::fuzzing::extract;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (expr, body) = text.split_once('\n').unwrap_or((text, ""));
    let path = expr.strip_prefix("jsonpath:").unwrap_or(expr);
    if !expr.starts_with("regex:")
        && path.trim_start().starts_with('$')
        && known::ends_in_string(path.trim())
    {
        return;
    }
    let json = serde_json::from_str::<Value>(body).unwrap_or(Value::Null);
    let _ = extract(expr, &json, body);
});
