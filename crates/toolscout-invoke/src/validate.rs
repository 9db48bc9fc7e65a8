//! Argument and output validation with `jsonschema`, phrased for the model: which path
//! failed and what was expected.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolscout_spec::ToolSpec;

use crate::{ErrorKind, ToolError};

/// At most this many problems are reported at once.
const MAX_PROBLEMS: usize = 8;
/// Messages longer than this are cut (a message may quote the whole offending value).
const MAX_MESSAGE: usize = 300;

/// Most compiled schemas kept; the cache starts over when it is full.
const MAX_CACHED: usize = 4096;

/// The check of arguments (and results) against a tool's JSON Schema, with its compiled
/// schemas kept by their JSON text: a tool's schema is compiled once, not per call.
///
/// The [`Invoker`](crate::Invoker) checks every call with one; so does the agent loop of
/// `toolscout-agent` before it asks for approval, so that the model reads the same
/// error either way.
///
/// ```
/// use serde_json::json;
/// use toolscout_invoke::{ErrorKind, Validators};
/// use toolscout_spec::ToolSpec;
///
/// let spec = ToolSpec::builder("get_weather", "Current weather for a city")
///     .parameters(json!({
///         "type": "object",
///         "properties": {"city": {"type": "string"}},
///         "required": ["city"]
///     }))
///     .build()
///     .unwrap();
/// let error = Validators::default().check_arguments(&spec, &json!({})).unwrap_err();
/// assert_eq!(error.kind, ErrorKind::InvalidArguments);
/// assert!(error.message.contains("\"city\" is a required property"));
/// ```
#[derive(Default)]
pub struct Validators {
    compiled: Mutex<HashMap<String, Compiled>>,
}

/// A compiled schema and how many of its references recurse.
#[derive(Clone)]
struct Compiled {
    validator: Arc<jsonschema::Validator>,
    recursive_refs: usize,
}

/// The most schema evaluations a check may cost by the estimate of
/// [`recursive_refs`]: (references on a cycle) ^ (depth of the value).
///
/// **Rationale:** jsonschema evaluates every branch of a `oneOf` (and the failing ones of
/// an `anyOf`) again at each level a reference recurses through, so a catalog entry's
/// `{"oneOf": [{"items": {"$ref": "#"}}, {"items": {"$ref": "#"}}]}` checked against
/// arguments 16 arrays deep took a second, and 20 deep ran out of memory (found by
/// fuzzing, #36). A schema whose references do not recurse, or recurse through one
/// reference (a tree of nodes), costs time in proportion to the value and is not bounded
/// here.
const MAX_RECURSIVE_WORK: f64 = 4096.0;

impl std::fmt::Debug for Validators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Validators").finish_non_exhaustive()
    }
}

impl Validators {
    /// Checks `args` against the tool's parameter schema: an
    /// [`ErrorKind::InvalidArguments`] error names each failing path, what was expected,
    /// and the tool's usage line.
    pub fn check_arguments(&self, spec: &ToolSpec, args: &Value) -> Result<(), ToolError> {
        check_arguments(self, spec, args)
    }

    fn get(&self, schema: &Value) -> Result<Compiled, String> {
        let key = schema.to_string();
        // A poisoned lock only means another call panicked mid-insert; the map is still usable.
        if let Some(v) = self
            .compiled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(v.clone());
        }
        let compiled = Compiled {
            validator: Arc::new(
                jsonschema::options()
                    .with_pattern_options(pattern_options())
                    .build(schema)
                    .map_err(|e| e.to_string())?,
            ),
            recursive_refs: recursive_refs(schema),
        };
        let mut map = self.compiled.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_CACHED {
            map.clear();
        }
        map.insert(key, compiled.clone());
        Ok(compiled)
    }
}

/// How a schema's `pattern` and `patternProperties` are compiled and run.
///
/// **Rationale:** a schema comes from a catalog entry and the value it checks from a
/// model, both hostile. Patterns without look-around or back-references run on the regex
/// crate's engine, in linear time; the others backtrack, at most 10,000 times a match
/// (the library's default is a million, so an array of ten thousand strings could cost
/// minutes); a pattern compiles to at most 1 MiB.
fn pattern_options() -> jsonschema::PatternOptions<jsonschema::FancyRegex> {
    jsonschema::PatternOptions::fancy_regex()
        .backtrack_limit(10_000)
        .size_limit(1 << 20)
        .dfa_size_limit(2 << 20)
}

/// Checks `args` against the tool's parameter schema.
pub(crate) fn check_arguments(
    cache: &Validators,
    spec: &ToolSpec,
    args: &Value,
) -> Result<(), ToolError> {
    let problems = problems(cache, &spec.parameters, args).map_err(|reason| {
        ToolError::new(
            ErrorKind::Misconfigured,
            format!(
                "the argument schema of '{}' is not a valid JSON Schema: {reason}",
                spec.name
            ),
        )
    })?;
    if problems.is_empty() {
        return Ok(());
    }
    let mut message = format!("invalid arguments for '{}':", spec.name);
    for p in &problems {
        message.push_str(&format!("\n- {}: {}", p.shown_path, p.message));
    }
    message.push_str(&format!("\nExpected: {}", spec.usage()));
    Err(
        ToolError::new(ErrorKind::InvalidArguments, message).with_details(json!({
            "errors": problems.iter().map(Problem::to_json).collect::<Vec<_>>(),
            "usage": spec.usage(),
        })),
    )
}

/// Checks a result against the tool's output schema, when it has one.
pub(crate) fn check_output(
    cache: &Validators,
    spec: &ToolSpec,
    value: &Value,
) -> Result<(), ToolError> {
    let Some(schema) = &spec.output_schema else {
        return Ok(());
    };
    let problems = problems(cache, schema, value).map_err(|reason| {
        ToolError::new(
            ErrorKind::Misconfigured,
            format!(
                "the output schema of '{}' is not a valid JSON Schema: {reason}",
                spec.name
            ),
        )
    })?;
    if problems.is_empty() {
        return Ok(());
    }
    let mut message = format!(
        "'{}' returned a result that does not match its output schema (the tool or the service \
         behind it misbehaved; retrying with other arguments will not help):",
        spec.name
    );
    for p in &problems {
        message.push_str(&format!("\n- {}: {}", p.shown_path, p.message));
    }
    Err(
        ToolError::new(ErrorKind::OutputInvalid, message).with_details(json!({
            "errors": problems.iter().map(Problem::to_json).collect::<Vec<_>>(),
        })),
    )
}

struct Problem {
    pointer: String,
    shown_path: String,
    message: String,
    schema_path: String,
}

impl Problem {
    fn to_json(&self) -> Value {
        json!({"path": self.pointer, "message": self.message, "schema_path": self.schema_path})
    }
}

fn problems(cache: &Validators, schema: &Value, instance: &Value) -> Result<Vec<Problem>, String> {
    let Compiled {
        validator,
        recursive_refs,
    } = cache.get(schema)?;
    if recursive_refs >= 2 {
        let depth = depth(instance);
        if (recursive_refs as f64).powi(i32::try_from(depth).unwrap_or(i32::MAX))
            > MAX_RECURSIVE_WORK
        {
            let most = (MAX_RECURSIVE_WORK.ln() / (recursive_refs as f64).ln()).floor();
            return Ok(vec![Problem {
                pointer: String::new(),
                shown_path: shown_path(""),
                message: format!(
                    "the value nests {depth} levels deep; this schema recurses through \
                     {recursive_refs} references and is checked at most {most} levels deep"
                ),
                schema_path: String::new(),
            }]);
        }
    }
    let mut out: Vec<Problem> = validator
        .iter_errors(instance)
        .take(MAX_PROBLEMS)
        .map(|e| {
            let pointer = e.instance_path().as_str().to_owned();
            Problem {
                shown_path: shown_path(&pointer),
                message: cut(&e.to_string()),
                schema_path: e.schema_path().as_str().to_owned(),
                pointer,
            }
        })
        .collect();
    out.sort_by(|a, b| a.pointer.cmp(&b.pointer));
    Ok(out)
}

/// How deep a value nests: a scalar is 0, `[1]` is 1.
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    deepest
}

/// The number of a schema's references that lie on a cycle: from the place a reference
/// points to, following the references found there, it is reached again. Local
/// references (`#…`) are followed by their JSON pointer; `$recursiveRef`, `$dynamicRef`
/// and anchors (`#name`) are taken to point to the root, which over-counts, never
/// under-counts.
fn recursive_refs(schema: &Value) -> usize {
    // (where the reference is, the pointer it points to)
    let mut refs: Vec<(String, String)> = Vec::new();
    let mut stack = vec![(schema, String::new())];
    while let Some((v, at)) = stack.pop() {
        match v {
            Value::Object(o) => {
                for (k, child) in o {
                    let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                    if matches!(k.as_str(), "$ref" | "$recursiveRef" | "$dynamicRef")
                        && let Some(target) = child.as_str()
                    {
                        let pointer = match target.strip_prefix('#') {
                            Some(p) if p.is_empty() || p.starts_with('/') => p.to_owned(),
                            // An anchor, or another document (never fetched): the root.
                            _ => String::new(),
                        };
                        refs.push((at.clone(), pointer));
                    } else {
                        stack.push((child, here));
                    }
                }
            }
            Value::Array(a) => {
                for (i, child) in a.iter().enumerate() {
                    stack.push((child, format!("{at}/{i}")));
                }
            }
            _ => {}
        }
    }
    // The search below is cubic in the references: past a few hundred, take them all as
    // recursive.
    if refs.len() > 200 {
        return refs.len();
    }
    let within = |place: &str, target: &str| {
        place == target || place.starts_with(&format!("{target}/")) || target.is_empty()
    };
    // A reference reaches another when the other sits inside what the first points to.
    (0..refs.len())
        .filter(|&start| {
            let mut seen = vec![false; refs.len()];
            let mut todo = vec![start];
            while let Some(i) = todo.pop() {
                for (j, (place, _)) in refs.iter().enumerate() {
                    if within(place, &refs[i].1) {
                        if j == start {
                            return true;
                        }
                        if !seen[j] {
                            seen[j] = true;
                            todo.push(j);
                        }
                    }
                }
            }
            false
        })
        .count()
}

/// `/items/0/name` → `items[0].name`; the root is `(arguments)`.
fn shown_path(pointer: &str) -> String {
    if pointer.is_empty() {
        return "(arguments)".to_owned();
    }
    let mut out = String::new();
    for seg in pointer.split('/').skip(1) {
        let seg = seg.replace("~1", "/").replace("~0", "~");
        if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{seg}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        }
    }
    out
}

fn cut(s: &str) -> String {
    if s.chars().count() <= MAX_MESSAGE {
        s.to_owned()
    } else {
        s.chars().take(MAX_MESSAGE - 1).collect::<String>() + "…"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_on_a_cycle_are_counted() {
        // Two branches that both come back to the root.
        let twice = json!({"oneOf": [{"items": {"$ref": "#"}}, {"items": {"$ref": "#"}}]});
        assert_eq!(recursive_refs(&twice), 2);
        // A tree of nodes: one reference back.
        let tree = json!({"$defs": {"node": {"properties": {"children": {"items": {"$ref": "#/$defs/node"}}}}}, "$ref": "#/$defs/node"});
        assert_eq!(recursive_refs(&tree), 1);
        // Definitions that do not recurse (what pydantic writes for nested models).
        let nested = json!({"$defs": {"a": {"properties": {"b": {"$ref": "#/$defs/b"}}}, "b": {"type": "string"}}, "properties": {"x": {"$ref": "#/$defs/a"}, "y": {"$ref": "#/$defs/a"}}});
        assert_eq!(recursive_refs(&nested), 0);
    }

    /// Found by fuzzing (#36): arguments 20 arrays deep under a schema whose `oneOf`
    /// recursed twice took over a second and gigabytes.
    #[test]
    fn a_doubly_recursive_schema_over_deep_arguments_is_refused() {
        let cache = Validators::default();
        let schema = json!({"oneOf": [{"items": {"$ref": "#"}}, {"items": {"$ref": "#"}}, {"type": "integer"}]});
        let mut deep = json!(1);
        for _ in 0..40 {
            deep = json!([deep]);
        }
        let found = problems(&cache, &schema, &deep).unwrap();
        assert_eq!(found.len(), 1);
        assert!(
            found[0].message.contains("nests 40 levels deep"),
            "{}",
            found[0].message
        );
        // Shallow values are checked as usual.
        assert!(problems(&cache, &schema, &json!([[1]])).unwrap().len() <= 1);
    }

    #[test]
    fn paths_are_readable() {
        assert_eq!(shown_path(""), "(arguments)");
        assert_eq!(shown_path("/items/0/name"), "items[0].name");
        assert_eq!(shown_path("/a~1b"), "a/b");
    }
}
