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
    compiled: Mutex<HashMap<String, Arc<jsonschema::Validator>>>,
}

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

    fn get(&self, schema: &Value) -> Result<Arc<jsonschema::Validator>, String> {
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
        let validator = Arc::new(
            jsonschema::options()
                .with_pattern_options(pattern_options())
                .build(schema)
                .map_err(|e| e.to_string())?,
        );
        let mut map = self.compiled.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MAX_CACHED {
            map.clear();
        }
        map.insert(key, validator.clone());
        Ok(validator)
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
    let validator = cache.get(schema)?;
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
    fn paths_are_readable() {
        assert_eq!(shown_path(""), "(arguments)");
        assert_eq!(shown_path("/items/0/name"), "items[0].name");
        assert_eq!(shown_path("/a~1b"), "a/b");
    }
}
