//! JSON Lines of `{name, description, parameters}`: the format of the evaluation data
//! in `shared/data/*/tools.jsonl` (extra keys `source` and `meta` are read when present,
//! and `utterances`, sample requests in a user's words, a list of strings). A line may
//! say which API or server its tool belongs to: `bundle` (its name) and
//! `bundle_description` ([`bundle_of`]); an import puts the tools of one bundle together.
//!
//! Names that break the naming rules are repaired with
//! [`sanitize_name`]; apply the same function to names that
//! refer to those tools (e.g. a query's expected tools).

use serde_json::{Map, Value, json};

use super::{derive_summary, str_field};
use crate::name::sanitize_name;
use crate::{Error, Result, ToolSpec};

/// Reads one line into a spec. `line_no` (from 1) only labels errors.
///
/// The summary is the description's first sentence; `meta.tags` become tags and
/// `meta.api` the category, when present.
///
/// ```
/// let spec = toolscout_spec::adapters::jsonl::from_line(
///     r#"{"name":"math.factorial","description":"Calculate the factorial. Uses integers.","parameters":{"type":"object","properties":{"number":{"type":"integer"}},"required":["number"]}}"#,
///     1,
/// )?;
/// assert_eq!(spec.summary, "Calculate the factorial.");
/// # Ok::<(), toolscout_spec::Error>(())
/// ```
pub fn from_line(line: &str, line_no: usize) -> Result<ToolSpec> {
    let where_ = || format!("jsonl line {line_no}");
    let value: Value = serde_json::from_str(line).map_err(|e| Error::format(where_(), e))?;
    from_value(&value).map_err(|e| match e {
        Error::Format { reason, .. } => Error::format(where_(), reason),
        other => Error::format(where_(), other),
    })
}

/// Reads one parsed JSONL object into a spec.
pub fn from_value(value: &Value) -> Result<ToolSpec> {
    let raw = str_field(value, "name")
        .ok_or_else(|| Error::format("jsonl", "\"name\" is missing or not a string"))?;
    let name = sanitize_name(raw);
    let description = str_field(value, "description").unwrap_or("");
    let mut b =
        ToolSpec::builder(&name, derive_summary(&name, description)).description(description);
    if let Some(p) = value.get("parameters") {
        b = b.parameters(normalise_parameters(p));
    }
    if let Some(list) = value.get("utterances") {
        let list = list
            .as_array()
            .ok_or_else(|| Error::format("jsonl", "\"utterances\" is not an array"))?;
        for u in list {
            let u = u.as_str().ok_or_else(|| {
                Error::format(
                    "jsonl",
                    "\"utterances\" holds something other than a string",
                )
            })?;
            b = b.utterance(u);
        }
    }
    if let Some(meta) = value.get("meta") {
        if let Some(api) = str_field(meta, "api") {
            b = b.category(api);
        }
        for tag in meta
            .get("tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(t) = tag.as_str() {
                b = b.tag(t);
            }
        }
    }
    b.build()
}

/// The API or server a JSONL line's tool belongs to (`bundle`, `bundle_description`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct LineBundle {
    /// The bundle's name, e.g. `Numbers API` or `github` (an MCP server).
    pub name: String,
    /// What the API or server is for, when the line says.
    pub description: Option<String>,
}

/// The bundle a line names, if it names one (a non-empty `bundle` string).
///
/// ```
/// use serde_json::json;
/// use toolscout_spec::adapters::jsonl::{LineBundle, bundle_of};
///
/// let line = json!({"name": "get_trivia", "bundle": "Numbers API", "bundle_description": "Facts about numbers"});
/// assert_eq!(
///     bundle_of(&line),
///     Some(LineBundle { name: "Numbers API".into(), description: Some("Facts about numbers".into()) })
/// );
/// assert_eq!(bundle_of(&json!({"name": "x"})), None);
/// ```
pub fn bundle_of(value: &Value) -> Option<LineBundle> {
    let name = str_field(value, "bundle")?.trim();
    if name.is_empty() {
        return None;
    }
    Some(LineBundle {
        name: name.to_owned(),
        description: str_field(value, "bundle_description")
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(str::to_owned),
    })
}

/// Real catalogs sometimes omit `"type":"object"` or send `"dict"` (Python-style); both
/// mean an object schema.
fn normalise_parameters(p: &Value) -> Value {
    let mut p = p.clone();
    if let Some(obj) = p.as_object_mut()
        && obj.get("type").and_then(Value::as_str) == Some("dict")
    {
        obj.insert("type".to_owned(), json!("object"));
    }
    p
}

/// Reads a whole JSONL text: the specs of the good lines, and an error for each bad one
/// (blank lines are skipped). One bad line never loses the rest.
pub fn from_str(text: &str) -> (Vec<ToolSpec>, Vec<Error>) {
    let mut specs = Vec::new();
    let mut errors = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match from_line(line, i + 1) {
            Ok(s) => specs.push(s),
            Err(e) => errors.push(e),
        }
    }
    (specs, errors)
}

/// The JSONL object of a spec: `{name, description, parameters}`, and `utterances` when
/// it has some (so that a catalog exported and imported again keeps them, and `enrich`
/// asks only for the tools without).
pub fn to_value(spec: &ToolSpec) -> Value {
    let mut obj = Map::new();
    obj.insert("name".to_owned(), json!(spec.name.as_str()));
    obj.insert(
        "description".to_owned(),
        json!(spec.description_or_summary()),
    );
    obj.insert("parameters".to_owned(), spec.parameters.clone());
    if !spec.utterances.is_empty() {
        obj.insert("utterances".to_owned(), json!(spec.utterances));
    }
    Value::Object(obj)
}

/// The JSONL object of a spec in a bundle: [`to_value`] with `bundle` and
/// `bundle_description` (when it has one).
pub fn to_value_in(spec: &ToolSpec, bundle: &LineBundle) -> Value {
    let mut value = to_value(spec);
    if let Value::Object(obj) = &mut value {
        obj.insert("bundle".to_owned(), json!(bundle.name));
        if let Some(d) = &bundle.description {
            obj.insert("bundle_description".to_owned(), json!(d));
        }
    }
    value
}

/// One JSONL line (no trailing newline).
pub fn to_line(spec: &ToolSpec) -> String {
    to_value(spec).to_string()
}
