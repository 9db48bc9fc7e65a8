//! Filling the text templates toolscout shows a model or a user (`prompts/*.md`,
//! approval questions, the discover tools' descriptions): one filler, one pass.

/// `template` with each placeholder replaced by its value, in one pass from left to
/// right: a value that holds a placeholder (a tool summary that says `{arguments}`, a
/// request that says `{tools}`) is text, never expanded again. Where two placeholders
/// start at one place the first in `values` wins; an empty placeholder is ignored.
///
/// ```
/// use toolscout_spec::template::fill;
///
/// let text = fill(
///     "Call {tool}? It {summary}. Arguments: {arguments}",
///     &[("{tool}", "rm"), ("{summary}", "says {arguments}"), ("{arguments}", "{}")],
/// );
/// assert_eq!(text, "Call rm? It says {arguments}. Arguments: {}");
/// ```
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    loop {
        let next = values
            .iter()
            .filter(|(key, _)| !key.is_empty())
            .filter_map(|(key, value)| rest.find(key).map(|at| (at, *key, *value)))
            .min_by_key(|(at, _, _)| *at);
        let Some((at, key, value)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at]);
        out.push_str(value);
        rest = &rest[at + key.len()..];
    }
}

#[cfg(test)]
mod tests {
    use super::fill;

    #[test]
    fn fill_replaces_each_placeholder_once_and_never_a_value() {
        let question = fill(
            "Request: {request}\nTools: {tools}\n{request}",
            &[("{request}", "say {tools}"), ("{tools}", "- a")],
        );
        // The request's own "{tools}" is text, not a placeholder.
        assert_eq!(question, "Request: say {tools}\nTools: - a\nsay {tools}");
        assert_eq!(fill("no placeholders", &[("{x}", "y")]), "no placeholders");
        assert_eq!(fill("{x}{x}", &[("{x}", "")]), "");
        assert_eq!(fill("a{x}b", &[("", "z"), ("{x}", "-")]), "a-b");
        assert_eq!(fill("é{x}ü", &[("{x}", "ß")]), "éßü");
    }
}
