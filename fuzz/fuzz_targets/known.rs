//! Known findings the targets step over, so that fuzzing goes on past them until they are
//! fixed (each is in the closing note of issue #36, its input in `fuzz/known/`).

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
