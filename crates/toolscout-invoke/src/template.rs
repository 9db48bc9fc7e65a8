//! `${var}` templates of HTTP tools: values from the call's arguments or from secrets,
//! encoded for where they land (URL, header, JSON body, text body).
//!
//! | placeholder | expands to |
//! |---|---|
//! | `${name}` | the argument `name` (when given and not `null`), else the secret `name` |
//! | `${@args}` | the whole arguments object, as JSON |
//!
//! `${@args}` forwards a call as it is, optional members included, e.g. to another
//! server's invoke route: `"bodyTemplate": "{\"args\":${@args}}"`. In a JSON body it is
//! written as raw JSON, so it goes where a JSON value goes, never inside quotes; in a URL
//! it is percent-encoded as one component; in a header or a text body it is the compact
//! JSON text (which has no line breaks). Names that start with `@` are reserved for such
//! built-in placeholders: an unknown one is a configuration error, never an argument.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value, json};

use crate::{ErrorKind, SecretStore, ToolError};

/// Where an expanded value lands, which decides its encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// A URL: values are percent-encoded as one component.
    Url,
    /// A header value: raw, but CR and LF are refused.
    Header,
    /// A JSON body: inside a string literal, strings are JSON-escaped (without quotes)
    /// and other values written as their JSON text escaped; where a whole value goes,
    /// see [`Target::JsonValue`].
    Json,
    /// A JSON body, where a whole value goes (`"n": ${n}`): every value is written as
    /// JSON, a string with its quotes, so that no argument can add keys or close the
    /// object. Chosen by [`expand`] from the template's text.
    JsonValue,
    /// Any other body: raw.
    Text,
}

/// Everything but RFC 3986's unreserved characters is encoded.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `s` percent-encoded as one URL component.
pub(crate) fn url_encode(s: &str) -> String {
    utf8_percent_encode(s, COMPONENT).to_string()
}

/// `s` escaped for the inside of a JSON string (no surrounding quotes).
pub(crate) fn json_escape(s: &str) -> String {
    let quoted = Value::String(s.to_owned()).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// Expands `template` for `target`. `field` names the template in errors
/// (`urlTemplate`, `headers.User-Agent`, `bodyTemplate`).
pub(crate) fn expand(
    template: &str,
    target: Target,
    field: &str,
    args: &Map<String, Value>,
    secrets: &SecretStore,
) -> Result<String, ToolError> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    // In a JSON body: whether the text written so far leaves us inside a string literal.
    let mut json = JsonScan::default();
    // In a URL: whether the text written so far has begun the query or the fragment.
    // Kept as the literal text is written (values are encoded and add neither): looking
    // at the whole output for each placeholder made a template of many placeholders cost
    // their number times the output's length.
    let mut past_path = false;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        json.scan(&rest[..start]);
        past_path = past_path || rest[..start].contains(['?', '#']);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            // An unterminated placeholder is kept as text.
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let name = &after[..end];
        let target = match target {
            Target::Json if !json.in_string => Target::JsonValue,
            other => other,
        };
        let value = render(name, target, field, args, secrets)?;
        // In a URL's path, `.` and `..` (which no encoding hides: `%2e` is a dot too)
        // would move the request up the path.
        if target == Target::Url && !past_path && (value == "." || value == "..") {
            return Err(ToolError::invalid_arguments(format!(
                "'{name}' is {value:?}, which cannot be a segment of a URL path ({field}); give a name"
            ))
            .with_details(json!({"argument": name, "template": field})));
        }
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The names of the `${…}` placeholders of `template`, in order.
pub(crate) fn placeholders(template: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        names.push(&after[..end]);
        rest = &after[end + 1..];
    }
    names
}

/// Follows the literal text of a JSON template to know whether a placeholder stands
/// inside a string literal (`"q": "${q}"`) or where a whole value goes (`"n": ${n}`).
#[derive(Debug, Default)]
struct JsonScan {
    in_string: bool,
    escaped: bool,
}

impl JsonScan {
    fn scan(&mut self, text: &str) {
        for c in text.chars() {
            if self.escaped {
                self.escaped = false;
            } else if self.in_string && c == '\\' {
                self.escaped = true;
            } else if c == '"' {
                self.in_string = !self.in_string;
            }
        }
    }
}

/// The placeholder of the whole arguments object.
pub(crate) const ALL_ARGS: &str = "@args";

fn render(
    name: &str,
    target: Target,
    field: &str,
    args: &Map<String, Value>,
    secrets: &SecretStore,
) -> Result<String, ToolError> {
    if name.starts_with('@') {
        return render_builtin(name, target, field, args);
    }
    if let Some(value) = args.get(name).filter(|v| !v.is_null()) {
        let raw = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        return match target {
            Target::Url => Ok(url_encode(&raw)),
            Target::Header => {
                if raw.contains(['\r', '\n']) {
                    Err(ToolError::invalid_arguments(format!(
                        "argument '{name}' goes into a header ({field}) and must not contain line breaks"
                    ))
                    .with_details(json!({"argument": name, "template": field})))
                } else {
                    Ok(raw)
                }
            }
            Target::Json => Ok(json_escape(&raw)),
            Target::JsonValue => Ok(value.to_string()),
            Target::Text => Ok(raw),
        };
    }
    if let Some(secret) = secrets.get(name) {
        return match target {
            Target::Url => Ok(url_encode(secret)),
            Target::Json => Ok(json_escape(secret)),
            Target::JsonValue => Ok(Value::String(secret.to_owned()).to_string()),
            Target::Header if secret.contains(['\r', '\n']) => Err(ToolError::new(
                ErrorKind::Misconfigured,
                format!(
                    "secret '{name}' contains a line break and cannot go into a header ({field})"
                ),
            )),
            Target::Header | Target::Text => Ok(secret.to_owned()),
        };
    }
    if secrets.is_withheld(name) {
        return Err(ToolError::new(
            ErrorKind::Misconfigured,
            format!(
                "the template {field} needs the secret '{name}', which is not granted to this tool \
                 or to the host it calls; the operator grants secrets to tools and hosts"
            ),
        )
        .with_details(json!({"secret": name, "template": field})));
    }
    Err(ToolError::new(
        ErrorKind::InvalidArguments,
        format!(
            "the template {field} needs '${{{name}}}', which is neither an argument of this call \
             nor a configured secret; pass '{name}' as an argument"
        ),
    )
    .with_details(json!({"missing": name, "template": field})))
}

/// A built-in placeholder (`@…`): only [`ALL_ARGS`] exists.
fn render_builtin(
    name: &str,
    target: Target,
    field: &str,
    args: &Map<String, Value>,
) -> Result<String, ToolError> {
    if name != ALL_ARGS {
        return Err(ToolError::new(
            ErrorKind::Misconfigured,
            format!(
                "the template {field} has the unknown placeholder '${{{name}}}'; names that \
                 start with '@' are built in, and the only one is '${{{ALL_ARGS}}}' (the whole \
                 arguments object as JSON)"
            ),
        )
        .with_details(json!({"placeholder": name, "template": field})));
    }
    // Serialising a map of JSON values cannot fail; compact JSON escapes every control
    // character, so the text has no line break and is safe in a header.
    let text = Value::Object(args.clone()).to_string();
    Ok(match target {
        Target::Url => url_encode(&text),
        // Inside a string literal the object's text is escaped like any string.
        Target::Json => json_escape(&text),
        Target::Header | Target::JsonValue | Target::Text => text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(template: &str, target: Target, args: Value) -> String {
        let mut secrets = SecretStore::default();
        secrets.insert("KEY", "k&y=1");
        let args = args.as_object().cloned().unwrap_or_default();
        match expand(template, target, "t", &args, &secrets) {
            Ok(s) => s,
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn dot_segments_are_refused_in_a_url_path() {
        // Found by the property test: `..` in a path segment climbed up the path.
        assert!(
            check("https://h/files/${v}/x", Target::Url, json!({"v": ".."}))
                .starts_with("error: invalid_arguments")
        );
        assert!(check("https://h/files/${v}", Target::Url, json!({"v": "."})).starts_with("error"));
        assert_eq!(
            check("https://h/files?q=${v}", Target::Url, json!({"v": ".."})),
            "https://h/files?q=.."
        );
        assert_eq!(
            check("https://h/files/${v}", Target::Url, json!({"v": "..."})),
            "https://h/files/..."
        );
    }

    #[test]
    fn url_values_are_encoded() {
        assert_eq!(
            check(
                "https://h/q?city=${city}&key=${KEY}",
                Target::Url,
                json!({"city": "São Paulo/&x"})
            ),
            "https://h/q?city=S%C3%A3o%20Paulo%2F%26x&key=k%26y%3D1"
        );
    }

    #[test]
    fn json_values_are_escaped() {
        assert_eq!(
            check(
                r#"{"q":"${q}","n":${n}}"#,
                Target::Json,
                json!({"q": "a\"b\n", "n": 3})
            ),
            r#"{"q":"a\"b\n","n":3}"#
        );
    }

    #[test]
    fn a_string_where_a_value_goes_cannot_add_keys() {
        // Regression: `{"q": ${q}}` with q = `1, "admin": true` added a key.
        let out = check(
            r#"{"q": ${q}, "s": "${q}"}"#,
            Target::Json,
            json!({"q": "1, \"admin\": true"}),
        );
        let body: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            body,
            json!({"q": "1, \"admin\": true", "s": "1, \"admin\": true"})
        );
        assert_eq!(
            check(r#"{"n": ${n}}"#, Target::Json, json!({"n": 3})),
            r#"{"n": 3}"#
        );
        // A quote escaped in the template's text does not end the string.
        assert_eq!(
            check(r#"{"a": "x\"${q}"}"#, Target::Json, json!({"q": "\"}"})),
            r#"{"a": "x\"\"}"}"#
        );
        // A secret where a value goes is a JSON string.
        assert_eq!(
            check(r#"{"k": ${KEY}}"#, Target::Json, json!({})),
            r#"{"k": "k&y=1"}"#
        );
    }

    #[test]
    fn header_refuses_line_breaks() {
        insta::assert_snapshot!(check("x ${v}", Target::Header, json!({"v": "a\r\nEvil: 1"})), @"error: invalid_arguments: argument 'v' goes into a header (t) and must not contain line breaks");
    }

    #[test]
    fn missing_variable() {
        insta::assert_snapshot!(check("${nope} ${", Target::Text, json!({})), @"error: invalid_arguments: the template t needs '${nope}', which is neither an argument of this call nor a configured secret; pass 'nope' as an argument");
    }

    #[test]
    fn all_args_in_a_json_body_is_raw_json() {
        assert_eq!(
            check(
                r#"{"args":${@args}}"#,
                Target::Json,
                json!({"q": "a\"b\n}", "n": null, "o": {"k": [1, 2]}})
            ),
            r#"{"args":{"q":"a\"b\n}","n":null,"o":{"k":[1,2]}}}"#
        );
        assert_eq!(check("${@args}", Target::Json, json!({})), "{}");
    }

    #[test]
    fn all_args_in_a_url_is_one_encoded_component() {
        assert_eq!(
            check(
                "https://h/run?args=${@args}",
                Target::Url,
                json!({"city": "São Paulo&x"})
            ),
            "https://h/run?args=%7B%22city%22%3A%22S%C3%A3o%20Paulo%26x%22%7D"
        );
    }

    #[test]
    fn all_args_in_a_header_has_no_line_breaks() {
        assert_eq!(
            check("${@args}", Target::Header, json!({"v": "a\r\nEvil: 1"})),
            r#"{"v":"a\r\nEvil: 1"}"#
        );
    }

    #[test]
    fn all_args_is_not_an_argument_or_a_secret() {
        // An argument named like the placeholder does not replace it.
        assert_eq!(
            check("${@args}", Target::Text, json!({"@args": 1})),
            r#"{"@args":1}"#
        );
    }

    /// Found by fuzzing (#36): each placeholder looked at the whole output so far, so a
    /// 3 KB URL template of 500 placeholders took 4.5 s. Linear now; the dot-segment rule
    /// still holds before the query and not after it.
    #[test]
    fn many_placeholders_expand_in_linear_time() {
        let template = format!("http://h/{}", "${x}".repeat(100_000));
        let started = std::time::Instant::now();
        let out = check(&template, Target::Url, json!({"x": "ab"}));
        assert_eq!(out.len(), "http://h/".len() + 200_000);
        // Far from both: the quadratic scan is 10^10 byte comparisons (minutes in a debug
        // build), the linear one milliseconds.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        let args = json!({"x": ".."});
        let (args, secrets) = (args.as_object().unwrap().clone(), SecretStore::default());
        assert!(expand("http://h/${x}", Target::Url, "urlTemplate", &args, &secrets).is_err());
        assert!(
            expand(
                "http://h/a?q=${x}",
                Target::Url,
                "urlTemplate",
                &args,
                &secrets
            )
            .is_ok()
        );
    }

    #[test]
    fn unknown_builtin_placeholder() {
        insta::assert_snapshot!(check("${@arg}", Target::Json, json!({"@arg": 1})), @"error: misconfigured: the template t has the unknown placeholder '${@arg}'; names that start with '@' are built in, and the only one is '${@args}' (the whole arguments object as JSON)");
    }
}

/// Property tests: any argument, anywhere in a template, lands encoded for its place.
/// `cargo test -p toolscout-invoke -- --ignored props` runs 10⁶ cases per property.
#[cfg(test)]
mod props {
    use proptest::prelude::*;
    use proptest::test_runner::TestCaseError;

    use super::*;

    fn json_body(v: &str) -> Result<(), TestCaseError> {
        let args = json!({"v": v}).as_object().cloned().unwrap_or_default();
        let secrets = SecretStore::default();
        let out = expand(
            r#"{"k": ${v}, "s": "${v}", "n": [${v}]}"#,
            Target::Json,
            "t",
            &args,
            &secrets,
        )
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let body: Value =
            serde_json::from_str(&out).map_err(|e| TestCaseError::fail(format!("{e}: {out}")))?;
        prop_assert_eq!(body, json!({"k": v, "s": v, "n": [v]}));
        Ok(())
    }

    fn url(v: &str) -> Result<(), TestCaseError> {
        let args = json!({"v": v}).as_object().cloned().unwrap_or_default();
        let out = expand(
            "https://api.example.com/p/${v}?q=${v}#${v}",
            Target::Url,
            "t",
            &args,
            &SecretStore::default(),
        );
        if v == "." || v == ".." {
            // Found by the long run: `..` in a path climbed to the root.
            prop_assert!(out.is_err());
            return Ok(());
        }
        let out = out.map_err(|e| TestCaseError::fail(e.to_string()))?;
        let parsed = reqwest::Url::parse(&out).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(parsed.host_str(), Some("api.example.com"));
        prop_assert_eq!(parsed.path_segments().map(Iterator::count), Some(2));
        prop_assert_eq!(parsed.query_pairs().count(), 1);
        let q = parsed.query_pairs().next().map(|(_, v)| v.into_owned());
        prop_assert_eq!(q.as_deref(), Some(v));
        Ok(())
    }

    fn header(v: &str) -> Result<(), TestCaseError> {
        let args = json!({"v": v}).as_object().cloned().unwrap_or_default();
        match expand(
            "x ${v}",
            Target::Header,
            "t",
            &args,
            &SecretStore::default(),
        ) {
            Ok(out) => prop_assert!(!out.contains(['\r', '\n'])),
            Err(e) => prop_assert_eq!(e.kind, ErrorKind::InvalidArguments),
        }
        Ok(())
    }

    fn any_template(template: &str, v: &str) -> Result<(), TestCaseError> {
        // No template, however broken, panics.
        let args = json!({"v": v}).as_object().cloned().unwrap_or_default();
        for target in [Target::Url, Target::Header, Target::Json, Target::Text] {
            let _ = expand(template, target, "t", &args, &SecretStore::default());
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn props_template_json(v in ".*") { json_body(&v)?; }
        #[test]
        fn props_template_url(v in ".*") { url(&v)?; }
        #[test]
        fn props_template_header(v in ".*") { header(&v)?; }
        #[test]
        fn props_template_any(t in r#"[${}@"\\a-z ]{0,40}"#, v in ".*") { any_template(&t, &v)?; }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1_000_000))]
        #[test]
        #[ignore = "long run: cargo test -- --ignored"]
        fn props_long_template_json(v in ".*") { json_body(&v)?; }
        #[test]
        #[ignore = "long run: cargo test -- --ignored"]
        fn props_long_template_url(v in ".*") { url(&v)?; }
        #[test]
        #[ignore = "long run: cargo test -- --ignored"]
        fn props_long_template_header(v in ".*") { header(&v)?; }
        #[test]
        #[ignore = "long run: cargo test -- --ignored"]
        fn props_long_template_any(t in r#"[${}@"\\a-z ]{0,40}"#, v in ".*") { any_template(&t, &v)?; }
    }
}
