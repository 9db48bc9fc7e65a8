//! Known findings the targets step over, so that fuzzing goes on past them until they are
//! fixed (each is in the closing note of issue #36, its input in `fuzz/known/`).
#![allow(dead_code)] // Each target uses the checks of its own findings.

/// Whether a JSONPath ends inside a string literal (`$["\u`), scanned as
/// `jsonpath::check_shape` scans literals. serde_json_path 0.7.2 parses `\u` escapes with
/// nom's *streaming* `one_of`, so a path that ends within one returns `Incomplete`, which
/// `JsonPath::parse` turns into `unreachable!()`: a panic. Such a path is never valid.
pub fn ends_in_string(path: &str) -> bool {
    let bytes = path.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if let quote @ (b'\'' | b'"') = bytes[i] {
            i += 1;
            while i < bytes.len() && bytes[i] != quote {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            if i >= bytes.len() {
                return true;
            }
        }
        i += 1;
    }
    false
}

/// Whether a schema may recurse (`$ref`, `$dynamicRef` or `$recursiveRef` anywhere) and the
/// arguments nest deeper than two levels. jsonschema 0.61 evaluates every branch of a
/// `oneOf` (and failing branches of `anyOf`) again at each level a `$ref` recurses
/// through, so `{"oneOf":[{"items":{"$ref":"#"}},{"items":{"$ref":"#"}}]}` takes 2^depth
/// steps: 16 nested arrays about 1 s, 20 past the 1 s bound and on to 2 GiB.
pub fn recursion_over_deep_arguments(schema: &str, args: &serde_json::Value) -> bool {
    let recursive = ["\"$ref\"", "\"$dynamicRef\"", "\"$recursiveRef\""]
        .iter()
        .any(|k| schema.contains(k));
    recursive && depth(args) > 2
}

fn depth(value: &serde_json::Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            serde_json::Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            serde_json::Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

/// Whether a URL template has more than 64 placeholders. `template::expand` looks for `?`
/// and `#` in everything written so far at each placeholder of a URL, so its time grows
/// with placeholders × output: 500 `${x}` over a 1,000-byte `x` (a 3 KB input) took
/// 4.5 s, 1,000 over 2,000 bytes 38 s.
pub fn many_url_placeholders(template: &str) -> bool {
    template.matches("${").count() > 64
}
