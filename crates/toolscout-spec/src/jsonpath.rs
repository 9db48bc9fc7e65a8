//! JSONPath (RFC 9535) over hostile input, within bounds that are checked before any work
//! is done: [`BoundedPath`].
//!
//! A path is written by a model (`json_query`'s argument) or by a catalog entry (an HTTP
//! tool's `extractExpr`), and the value it runs over comes from a model or a remote
//! service. Run unchecked, each can take the process down or keep a core busy for
//! minutes:
//!
//! | what | bound | checked |
//! |---|---|---|
//! | the path's parser recurses once per nesting level | [`MAX_PATH_BYTES`], [`MAX_NESTING`] brackets and parentheses | on the text, before it is parsed |
//! | nested filters parse in exponential time (about ×2 a level) | [`MAX_FILTER_NESTING`] | on the text, before it is parsed |
//! | each descendant segment multiplies the nodes visited | [`MAX_NODES`] of the value, [`MAX_COST`] estimated visits ([`query_cost`]) | before the query runs |
//! | `match()` and `search()` compile their pattern for every node | [`MAX_REGEXES`] distinct patterns of at most [`MAX_REGEX_BYTES`], each compiled once per query within [`REGEX_SIZE_LIMIT`]; [`MAX_REGEX_WORK`] of matching | while the query runs (a budget) |
//!
//! ```
//! use serde_json::json;
//! use toolscout_spec::jsonpath::BoundedPath;
//!
//! let path = BoundedPath::parse("$.items[?search(@.name, 'ap+le')].price")?;
//! let value = json!({"items": [{"name": "apple", "price": 3}, {"name": "pear", "price": 2}]});
//! assert_eq!(path.query(&value)?, vec![&json!(3)]);
//!
//! let deep = format!("$[?{}@.a{}]", "@[?".repeat(30), "]".repeat(30));
//! assert!(BoundedPath::parse(&deep).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cell::RefCell;
use std::collections::HashMap;

use regex::Regex;
use serde_json::Value;
use serde_json_path::JsonPath;
use serde_json_path::functions::{LogicalType, ValueType};

/// Longest path, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;
/// Deepest nesting of brackets and parentheses in a path.
pub const MAX_NESTING: usize = 16;
/// Deepest nesting of filters (`[?…]` inside `[?…]`) in a path.
///
/// **Rationale:** the parser tries several readings of a filter and of each filter
/// within it, so its time doubles with every level (measured: 4 levels 0.2 ms, 10
/// levels 18 ms, 14 levels 0.35 s, 22 levels 7 s); four levels cover every real query.
pub const MAX_FILTER_NESTING: usize = 4;
/// Most nodes (values, arrays and objects, nested ones included) of a queried value.
pub const MAX_NODES: u64 = 200_000;
/// Most nodes a query may visit, by the estimate of [`query_cost`].
pub const MAX_COST: u64 = 10_000_000;
/// Longest pattern of `match()` or `search()`, in bytes.
pub const MAX_REGEX_BYTES: usize = 1000;
/// Most distinct patterns one query may compile.
pub const MAX_REGEXES: usize = 16;
/// Largest compiled pattern, in bytes of the regex crate's size limit (compiling one
/// takes at most about 10 ms).
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Most matching work of one query: the sum over every `match()` and `search()` of the
/// text's length times the pattern's compiled size in KiB.
pub const MAX_REGEX_WORK: u64 = 1 << 30;

/// Why a path was refused before it was parsed, or could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The path is longer than [`MAX_PATH_BYTES`].
    #[error("the path is {len} bytes long, over the limit of {MAX_PATH_BYTES}")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// Brackets and parentheses nest deeper than [`MAX_NESTING`].
    #[error(
        "brackets and parentheses nest more than {MAX_NESTING} deep (at byte {at}); write a flatter path"
    )]
    TooDeep {
        /// Where the limit was passed, in bytes from the start.
        at: usize,
    },
    /// Filters nest deeper than [`MAX_FILTER_NESTING`].
    #[error(
        "filters ([?…]) nest more than {MAX_FILTER_NESTING} deep (at byte {at}); query in steps instead"
    )]
    FiltersTooDeep {
        /// Where the limit was passed, in bytes from the start.
        at: usize,
    },
    /// The path is not RFC 9535 JSONPath.
    #[error("{0}")]
    Invalid(String),
}

/// Why a query was stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// The value has more than [`MAX_NODES`] nodes.
    #[error(
        "the value has {nodes} nodes, over the limit of {MAX_NODES}; query a smaller part of it"
    )]
    ValueTooLarge {
        /// The value's nodes.
        nodes: u64,
    },
    /// The path could visit more than [`MAX_COST`] nodes of the value.
    #[error(
        "the path could visit up to {cost} nodes of this value, over the limit of {MAX_COST}; \
         use fewer '..' (descendant) segments, wildcards and filters, or a smaller value"
    )]
    TooCostly {
        /// The estimate of [`query_cost`].
        cost: u64,
    },
    /// A `match()` or `search()` pattern passed a bound.
    #[error("{0}")]
    Regex(String),
}

/// A parsed JSONPath whose text passed the bounds of this module.
#[derive(Debug, Clone)]
pub struct BoundedPath {
    path: JsonPath,
    text: String,
}

impl BoundedPath {
    /// Checks the text's length and nesting ([`check_shape`]), then parses it.
    pub fn parse(text: &str) -> Result<BoundedPath, PathError> {
        check_shape(text)?;
        let path = JsonPath::parse(text).map_err(|e| PathError::Invalid(e.to_string()))?;
        Ok(BoundedPath {
            path,
            text: text.to_owned(),
        })
    }

    /// The path as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The nodes of `value` the path selects, in document order, after checking the
    /// value's size and the query's estimated cost; `match()` and `search()` run within
    /// their budget.
    pub fn query<'v>(&self, value: &'v Value) -> Result<Vec<&'v Value>, QueryError> {
        let (nodes, fan_out) = shape(value);
        if nodes > MAX_NODES {
            return Err(QueryError::ValueTooLarge { nodes });
        }
        let cost = query_cost(&self.text, nodes, fan_out);
        if cost > MAX_COST {
            return Err(QueryError::TooCostly { cost });
        }
        let (matches, refused) = with_regex_scope(|| self.path.query(value).all());
        match refused {
            Some(why) => Err(QueryError::Regex(why)),
            None => Ok(matches),
        }
    }
}

/// Checks a path's text against [`MAX_PATH_BYTES`], [`MAX_NESTING`] and
/// [`MAX_FILTER_NESTING`] (string literals are skipped), without parsing it.
pub fn check_shape(text: &str) -> Result<(), PathError> {
    if text.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong { len: text.len() });
    }
    // Each open bracket or parenthesis, and whether it is a filter's.
    let mut open: Vec<(u8, bool)> = Vec::new();
    let mut filters = 0usize;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"') => {
                let opened = i;
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                // serde_json_path 0.7 panics on a path that ends inside a `\u` escape
                // of a literal (its parser reports "incomplete", which it treats as
                // unreachable); a literal left open is never valid anyway.
                if i >= bytes.len() {
                    return Err(PathError::Invalid(format!(
                        "the string that starts at byte {opened} is not closed"
                    )));
                }
            }
            c @ (b'[' | b'(') => {
                open.push((c, false));
                if open.len() > MAX_NESTING {
                    return Err(PathError::TooDeep { at: i });
                }
            }
            b']' | b')' => {
                if let Some((_, true)) = open.pop() {
                    filters -= 1;
                }
            }
            b'?' => {
                if let Some((b'[', is_filter @ false)) = open.last_mut() {
                    *is_filter = true;
                    filters += 1;
                    if filters > MAX_FILTER_NESTING {
                        return Err(PathError::FiltersTooDeep { at: i });
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// The number of nodes of `value` and the most children any node has.
pub(crate) fn shape(value: &Value) -> (u64, u64) {
    let mut nodes = 0u64;
    let mut fan_out = 1u64;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        nodes += 1;
        match v {
            Value::Array(a) => {
                fan_out = fan_out.max(a.len() as u64);
                stack.extend(a.iter());
            }
            Value::Object(o) => {
                fan_out = fan_out.max(o.len() as u64);
                stack.extend(o.values());
            }
            _ => {}
        }
    }
    (nodes, fan_out)
}

/// An upper bound of the nodes a JSONPath query visits over a value of `nodes` nodes
/// whose largest array or object has `fan_out` members, read from the path's text: each
/// descendant segment (`..`) may visit every node once per node it starts from; a
/// wildcard, a slice or a filter every member; a filter's own queries run once per
/// member; the selectors of a union add up. Quoted names count for nothing.
pub fn query_cost(path: &str, nodes: u64, fan_out: u64) -> u64 {
    let chars: Vec<char> = path.chars().collect();
    let mut i = 0;
    cost_of(&chars, &mut i, nodes.max(1), fan_out.max(1), None)
}

/// The cost of `chars[*i..]` up to `end` (a closing `]` or `)`), or to the end.
fn cost_of(chars: &[char], i: &mut usize, n: u64, f: u64, end: Option<char>) -> u64 {
    let mut cost = 1u64;
    while *i < chars.len() {
        let c = chars[*i];
        match c {
            '\'' | '"' => skip_string(chars, i),
            '.' if chars.get(*i + 1) == Some(&'.') => {
                cost = cost.saturating_mul(n);
                *i += 2;
                // `..*` is every descendant: already counted.
                if chars.get(*i) == Some(&'*') {
                    *i += 1;
                }
            }
            '.' if chars.get(*i + 1) == Some(&'*') => {
                cost = cost.saturating_mul(f);
                *i += 2;
            }
            '[' => {
                *i += 1;
                let union = bracket_cost(chars, i, n, f);
                cost = cost.saturating_mul(union);
            }
            '(' => {
                *i += 1;
                let inner = cost_of(chars, i, n, f, Some(')'));
                cost = cost.saturating_mul(inner);
            }
            _ if Some(c) == end => {
                *i += 1;
                return cost;
            }
            _ => *i += 1,
        }
    }
    cost
}

/// The cost of the selectors of a bracket, `*i` just past its `[`; leaves `*i` past
/// its `]`.
fn bracket_cost(chars: &[char], i: &mut usize, n: u64, f: u64) -> u64 {
    let mut total = 0u64;
    loop {
        // One selector, up to a top-level ',' or the closing ']'.
        while chars.get(*i).is_some_and(|c| c.is_whitespace()) {
            *i += 1;
        }
        let selector = match chars.get(*i) {
            None => return total.max(1),
            Some('?' | '*') => {
                *i += 1;
                f.saturating_mul(selector_rest(chars, i, n, f))
            }
            Some(_) => {
                let start = *i;
                let inner = selector_rest(chars, i, n, f);
                let slice = chars[start..*i].contains(&':');
                if slice {
                    f.saturating_mul(inner)
                } else {
                    inner
                }
            }
        };
        total = total.saturating_add(selector);
        match chars.get(*i) {
            Some(',') => *i += 1,
            Some(']') => {
                *i += 1;
                return total.max(1);
            }
            _ => return total.max(1),
        }
    }
}

/// The cost of the rest of one selector, stopping (without consuming) at a top-level
/// `,` or `]`.
fn selector_rest(chars: &[char], i: &mut usize, n: u64, f: u64) -> u64 {
    let mut cost = 1u64;
    while let Some(&c) = chars.get(*i) {
        match c {
            ',' | ']' => return cost,
            '\'' | '"' => skip_string(chars, i),
            '.' if chars.get(*i + 1) == Some(&'.') => {
                cost = cost.saturating_mul(n);
                *i += 2;
            }
            '[' => {
                *i += 1;
                cost = cost.saturating_mul(bracket_cost(chars, i, n, f));
            }
            '(' => {
                *i += 1;
                cost = cost.saturating_mul(cost_of(chars, i, n, f, Some(')')));
            }
            '*' => {
                cost = cost.saturating_mul(f);
                *i += 1;
            }
            _ => *i += 1,
        }
    }
    cost
}

/// Moves `*i` past the quoted string that starts there.
fn skip_string(chars: &[char], i: &mut usize) {
    let quote = chars[*i];
    *i += 1;
    while let Some(&c) = chars.get(*i) {
        *i += 1;
        if c == '\\' {
            *i += 1;
        } else if c == quote {
            return;
        }
    }
}

/// The patterns of `match()` and `search()` compiled during one query, and what is left
/// of its budget.
#[derive(Default)]
struct RegexScope {
    /// By pattern and whether it is anchored (`match`): the regex and its weight (its
    /// compiled size in KiB), or `None` when it is not a valid pattern.
    compiled: HashMap<(String, bool), Option<(Regex, u64)>>,
    work: u64,
    refused: Option<String>,
}

thread_local! {
    static REGEX_SCOPE: RefCell<Option<RegexScope>> = const { RefCell::new(None) };
}

/// Runs `f` (a query) with a fresh regex budget on this thread; returns its result and
/// why a pattern was refused, if one was.
fn with_regex_scope<T>(f: impl FnOnce() -> T) -> (T, Option<String>) {
    let outer = REGEX_SCOPE.with(|s| s.replace(Some(RegexScope::default())));
    let out = f();
    let scope = REGEX_SCOPE.with(|s| s.replace(outer));
    (out, scope.and_then(|s| s.refused))
}

/// RFC 9535 `match()`: whether the whole string matches the pattern. Registered in place
/// of the `serde_json_path` one, which compiles the pattern again for every node.
#[serde_json_path::function(name = "match")]
fn match_func(value: ValueType, rgx: ValueType) -> LogicalType {
    regex_test(&value, &rgx, true)
}

/// RFC 9535 `search()`: whether some part of the string matches the pattern (see
/// [`match_func`]).
#[serde_json_path::function(name = "search")]
fn search_func(value: ValueType, rgx: ValueType) -> LogicalType {
    regex_test(&value, &rgx, false)
}

fn regex_test(value: &ValueType, rgx: &ValueType, anchored: bool) -> LogicalType {
    let (Some(Value::String(text)), Some(Value::String(pattern))) =
        (value.as_value(), rgx.as_value())
    else {
        return LogicalType::False;
    };
    REGEX_SCOPE.with(|cell| {
        let mut cell = cell.borrow_mut();
        // Outside a [`BoundedPath`] query (another user of `serde_json_path` in this
        // process), the same bounds hold for the one call.
        let scope = cell.get_or_insert_with(RegexScope::default);
        match scope.test(text, pattern, anchored) {
            Ok(found) => LogicalType::from(found),
            Err(why) => {
                scope.refused.get_or_insert(why);
                LogicalType::False
            }
        }
    })
}

impl RegexScope {
    fn test(&mut self, text: &str, pattern: &str, anchored: bool) -> Result<bool, String> {
        if self.refused.is_some() {
            return Ok(false);
        }
        let key = (pattern.to_owned(), anchored);
        if !self.compiled.contains_key(&key) {
            if pattern.len() > MAX_REGEX_BYTES {
                return Err(format!(
                    "a pattern of match() or search() is {} bytes long, over the limit of {MAX_REGEX_BYTES}",
                    pattern.len()
                ));
            }
            if self.compiled.len() >= MAX_REGEXES {
                return Err(format!(
                    "the query compiles more than {MAX_REGEXES} different patterns of match() or search(); use fewer"
                ));
            }
            let compiled = compile(pattern, anchored)?;
            self.compiled.insert(key.clone(), compiled);
        }
        let Some(Some((regex, weight))) = self.compiled.get(&key) else {
            // Not a valid pattern: RFC 9535 makes that a non-match.
            return Ok(false);
        };
        self.work = self
            .work
            .saturating_add((text.len() as u64 + 1).saturating_mul(*weight));
        if self.work > MAX_REGEX_WORK {
            return Err(format!(
                "match() and search() would scan too much text with these patterns (a budget of \
                 {MAX_REGEX_WORK} units: bytes scanned times the pattern's compiled size in KiB); \
                 use simpler patterns or query a smaller value"
            ));
        }
        Ok(regex.is_match(text))
    }
}

/// The pattern compiled at the smallest size limit it fits (its weight is that limit in
/// KiB); `Ok(None)` for a pattern that is not valid, an error for one over
/// [`REGEX_SIZE_LIMIT`].
fn compile(pattern: &str, anchored: bool) -> Result<Option<(Regex, u64)>, String> {
    let full = if anchored {
        format!("(?R)^({pattern})$")
    } else {
        format!("(?R)({pattern})")
    };
    let mut limit = 1 << 10;
    loop {
        match regex::RegexBuilder::new(&full)
            .size_limit(limit)
            .dfa_size_limit(2 << 20)
            .nest_limit(64)
            .build()
        {
            Ok(regex) => return Ok(Some((regex, (limit >> 10) as u64))),
            Err(regex::Error::CompiledTooBig(_)) if limit < REGEX_SIZE_LIMIT => limit <<= 2,
            Err(regex::Error::CompiledTooBig(_)) => {
                return Err(format!(
                    "a pattern of match() or search() compiles to more than {REGEX_SIZE_LIMIT} bytes; \
                     use a simpler one (fewer counted repetitions such as {{1,100}}, fewer Unicode classes)"
                ));
            }
            Err(_) => return Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shape_skips_quoted_brackets() {
        let quoted = format!("$['{}']", "[".repeat(100));
        assert_eq!(check_shape(&quoted), Ok(()));
        let deep = format!("$.a{}0{}", "[".repeat(20), "]".repeat(20));
        assert!(matches!(check_shape(&deep), Err(PathError::TooDeep { .. })));
        let filters = format!("$[?{}@.a{}]", "@[?".repeat(4), "]".repeat(4));
        assert!(matches!(
            check_shape(&filters),
            Err(PathError::FiltersTooDeep { .. })
        ));
        let siblings = "$[?@.a][?@.b][?@.c][?@.d][?@.e][?@.f]";
        assert_eq!(check_shape(siblings), Ok(()));
    }

    /// Found by fuzzing (#36): a path ending inside a `\u` escape of a string literal
    /// made serde_json_path 0.7.2 panic (`unreachable!()` on its parser's "incomplete").
    #[test]
    fn a_path_ending_inside_a_literal_is_refused_not_a_panic() {
        for path in ["$[\"\\u", "$['\\u00", "$[?@.a == 'x"] {
            let err = BoundedPath::parse(path).unwrap_err();
            assert!(matches!(err, PathError::Invalid(_)), "{path}: {err}");
        }
    }

    #[test]
    fn regex_functions_keep_rfc_semantics() {
        let value = json!(["apple", "pineapple", "pear", 7]);
        let q = |p: &str| {
            BoundedPath::parse(p)
                .unwrap()
                .query(&value)
                .unwrap()
                .into_iter()
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(q("$[?match(@, 'a.*e')]"), vec![json!("apple")]);
        assert_eq!(
            q("$[?search(@, 'apple')]"),
            vec![json!("apple"), json!("pineapple")]
        );
        // An invalid pattern matches nothing, as RFC 9535 says.
        assert!(q("$[?search(@, '(')]").is_empty());
    }

    #[test]
    fn too_many_patterns_are_refused() {
        let items: Vec<Value> = (0..40)
            .map(|i| json!({"s": "x", "p": format!("x{i}?")}))
            .collect();
        let err = BoundedPath::parse("$[?search(@.s, @.p)]")
            .unwrap()
            .query(&Value::Array(items))
            .unwrap_err();
        assert!(matches!(err, QueryError::Regex(_)), "{err}");
    }

    #[test]
    fn a_huge_pattern_is_refused() {
        let err = BoundedPath::parse(r"$[?match(@, '\\w{1,1000}')]")
            .unwrap()
            .query(&json!(["a"]))
            .unwrap_err();
        assert!(err.to_string().contains("compiles to more than"), "{err}");
    }
}
