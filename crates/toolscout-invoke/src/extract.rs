//! `extractExpr`: pick the value out of an HTTP response with a JSONPath (RFC 9535) or a
//! regular expression.

use regex::Regex;
use serde_json::Value;

use crate::jsonpath::BoundedPath;

/// Largest compiled `extractExpr` regular expression, in bytes of the regex crate's size
/// limit: the expression comes from a catalog entry, and runs over a response of up to
/// the response size limit.
const EXTRACT_REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A compiled `extractExpr`.
#[derive(Debug, Clone)]
pub(crate) enum Extractor {
    /// RFC 9535 JSONPath, for JSON responses, within the bounds of [`crate::jsonpath`].
    Path(BoundedPath),
    /// A regular expression over the response text: the first capture group, or the
    /// whole match when there is none.
    Regex(Regex),
}

impl Extractor {
    /// `$…` is a JSONPath; `regex:…` or anything else is a regular expression.
    pub(crate) fn parse(expr: &str) -> Result<Extractor, String> {
        if let Some(re) = expr.strip_prefix("regex:") {
            return compile_regex(re);
        }
        let path = expr.strip_prefix("jsonpath:").unwrap_or(expr);
        if path.trim_start().starts_with('$') {
            BoundedPath::parse(path.trim())
                .map(Extractor::Path)
                .map_err(|e| format!("invalid JSONPath {path:?}: {e}"))
        } else {
            compile_regex(expr)
        }
    }

    /// The extracted value, or `None` when nothing matches. A JSONPath with one match
    /// gives that value, with several an array of them; a JSONPath query over its bounds
    /// (a response too large or too deep for it) is an error that says which.
    pub(crate) fn apply(&self, body: &Value, text: &str) -> Result<Option<Value>, String> {
        match self {
            Extractor::Path(path) => {
                let nodes = path.query(body).map_err(|e| e.to_string())?;
                Ok(match nodes.as_slice() {
                    [] => None,
                    [one] => Some((*one).clone()),
                    many => Some(Value::Array(many.iter().map(|v| (*v).clone()).collect())),
                })
            }
            Extractor::Regex(re) => Ok(re.captures(text).and_then(|caps| {
                let m = caps.get(1).or_else(|| caps.get(0))?;
                Some(Value::String(m.as_str().to_owned()))
            })),
        }
    }

    /// Whether this extractor needs the body parsed as JSON.
    pub(crate) fn needs_json(&self) -> bool {
        matches!(self, Extractor::Path(_))
    }
}

fn compile_regex(re: &str) -> Result<Extractor, String> {
    regex::RegexBuilder::new(re)
        .size_limit(EXTRACT_REGEX_SIZE_LIMIT)
        .build()
        .map(Extractor::Regex)
        .map_err(|e| format!("invalid regular expression: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jsonpath_one_and_many() {
        let body = json!({"a": [{"n": 1}, {"n": 2}], "b": "x"});
        let one = Extractor::parse("$.b").unwrap();
        assert_eq!(one.apply(&body, "").unwrap(), Some(json!("x")));
        let many = Extractor::parse("$.a[*].n").unwrap();
        assert_eq!(many.apply(&body, "").unwrap(), Some(json!([1, 2])));
        assert_eq!(
            Extractor::parse("$.zzz").unwrap().apply(&body, "").unwrap(),
            None
        );
    }

    #[test]
    fn regex_group() {
        let re = Extractor::parse(r"temp=(\d+)").unwrap();
        assert_eq!(
            re.apply(&Value::Null, "x temp=21 y").unwrap(),
            Some(json!("21"))
        );
        assert!(Extractor::parse("regex:(").is_err());
        assert!(Extractor::parse("$[").is_err());
    }
}
