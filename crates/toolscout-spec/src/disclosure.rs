//! Progressive disclosure: what a model sees of a tool at each level.
//!
//! Each level is a struct with a fixed field order, so its JSON is byte-for-byte
//! reproducible, and a compact text form meant for a model's context. Both can be
//! measured in tokens ([`Disclosure::tokens`]).

use std::fmt::Write as _;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::usage::{literal, type_name};
use crate::{Error, ErrorCase, Example, Result, ToolSpec, tokens};

/// A level of detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Level {
    /// Name and one-line summary: for browsing.
    #[serde(rename = "1")]
    L1,
    /// Description, usage, parameter names, returns: for deciding.
    #[serde(rename = "2")]
    L2,
    /// Full schemas, examples, errors, notes: for calling.
    #[serde(rename = "3")]
    L3,
}

impl Level {
    /// All levels, shallowest first.
    pub const ALL: [Level; 3] = [Level::L1, Level::L2, Level::L3];

    /// The level's number, 1 to 3.
    pub fn number(self) -> u8 {
        match self {
            Level::L1 => 1,
            Level::L2 => 2,
            Level::L3 => 3,
        }
    }

    /// The level with that number.
    pub fn from_number(n: u8) -> Option<Level> {
        match n {
            1 => Some(Level::L1),
            2 => Some(Level::L2),
            3 => Some(Level::L3),
            _ => None,
        }
    }
}

/// Level 1: name and summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Level1 {
    /// Tool name.
    pub name: String,
    /// One-line summary.
    pub summary: String,
}

/// Level 2: enough to decide whether this is the tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Level2 {
    /// Tool name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Parameter names, in schema order.
    pub parameters: Vec<String>,
    /// Usage line.
    pub usage: String,
    /// What a call returns.
    pub returns: String,
}

/// Level 3: everything needed to call the tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level3 {
    /// Tool name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Each parameter's schema, with a `required` flag first.
    pub parameters: IndexMap<String, Value>,
    /// Usage line.
    pub usage: String,
    /// What a call returns.
    pub returns: String,
    /// Example calls.
    pub examples: Vec<Example>,
    /// Failure modes.
    pub errors: Vec<ErrorCase>,
    /// Notes.
    pub notes: Vec<String>,
    /// A recipe's steps: the tool each calls and what it waits for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<crate::recipe::StepOutline>,
}

/// The detail of one parameter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParameterDetail {
    /// Tool name.
    pub tool: String,
    /// Parameter name.
    pub parameter: String,
    /// JSON type (`string`, `integer`, `string|integer`…), when the schema says.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether a call must give it.
    pub required: bool,
    /// Default value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// Allowed values.
    #[serde(rename = "enum", skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<Value>>,
    /// Other schema keywords: `minimum`, `pattern`, `format`, `items`…
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub constraints: Map<String, Value>,
}

/// One disclosure of a tool, at some level.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Disclosure {
    /// Level 1.
    L1(Level1),
    /// Level 2.
    L2(Level2),
    /// Level 3.
    L3(Level3),
    /// One parameter.
    Parameter(ParameterDetail),
}

impl Disclosure {
    /// The JSON form.
    pub fn to_json(&self) -> Value {
        // Serialising these structs cannot fail: every map key is a string.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The compact text form meant for a model.
    pub fn to_text(&self) -> String {
        match self {
            Disclosure::L1(d) => level1_text(d),
            Disclosure::L2(d) => level2_text(d),
            Disclosure::L3(d) => level3_text(d),
            Disclosure::Parameter(d) => parameter_text(d),
        }
    }

    /// Tokens of the text form.
    pub fn tokens(&self) -> usize {
        tokens::count(&self.to_text())
    }

    /// Tokens of the compact JSON form.
    pub fn json_tokens(&self) -> usize {
        tokens::count_json(&self.to_json())
    }
}

impl ToolSpec {
    /// Level 1: name and summary.
    pub fn level1(&self) -> Level1 {
        Level1 {
            name: self.name.to_string(),
            summary: self.summary.clone(),
        }
    }

    /// Level 2: description, parameter names, usage, returns.
    pub fn level2(&self) -> Level2 {
        Level2 {
            name: self.name.to_string(),
            description: self.description_or_summary().to_owned(),
            parameters: self.parameter_names(),
            usage: self.usage(),
            returns: self.returns.clone(),
        }
    }

    /// Level 3: full parameter schemas with required flags, examples, errors, notes.
    pub fn level3(&self) -> Level3 {
        let required = crate::spec::required_names(&self.parameters);
        let parameters = self
            .properties()
            .map(|(name, schema)| {
                let mut entry = Map::new();
                let is_required = required.contains(name.as_str());
                entry.insert("required".to_owned(), Value::Bool(is_required));
                if let Some(obj) = schema.as_object() {
                    for (k, v) in obj {
                        // An object parameter's own `required` list would clobber the flag.
                        let key = if k == "required" {
                            "required_fields"
                        } else {
                            k.as_str()
                        };
                        entry.insert(key.to_owned(), v.clone());
                    }
                }
                (name.clone(), Value::Object(entry))
            })
            .collect();
        Level3 {
            name: self.name.to_string(),
            description: self.description_or_summary().to_owned(),
            parameters,
            usage: self.usage(),
            returns: self.returns.clone(),
            examples: self.examples.clone(),
            errors: self.errors.clone(),
            notes: self.notes.clone(),
            steps: self.steps.clone(),
        }
    }

    /// The detail of one parameter; an unknown name is an error that lists the real ones.
    ///
    /// ```
    /// # let spec = toolscout_spec::sample::catalog().into_iter().find(|t| t.name == "read_file").unwrap();
    /// let err = spec.parameter("ofset").unwrap_err();
    /// assert_eq!(err.to_string(), "tool 'read_file' has no parameter 'ofset'; its parameters are: file_path, offset, limit");
    /// ```
    pub fn parameter(&self, name: &str) -> Result<ParameterDetail> {
        let schema = self
            .properties()
            .find(|(k, _)| k.as_str() == name)
            .map(|(_, v)| v)
            .ok_or_else(|| Error::UnknownParameter {
                tool: self.name.to_string(),
                parameter: name.to_owned(),
                available: self.parameter_names(),
            })?;
        let mut constraints = Map::new();
        if let Some(obj) = schema.as_object() {
            for (k, v) in obj {
                if !matches!(
                    k.as_str(),
                    "type" | "description" | "default" | "enum" | "title"
                ) {
                    constraints.insert(k.clone(), v.clone());
                }
            }
        }
        Ok(ParameterDetail {
            tool: self.name.to_string(),
            parameter: name.to_owned(),
            kind: type_name(schema),
            description: schema
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            required: self.is_required(name),
            default: schema.get("default").cloned(),
            allowed: schema.get("enum").and_then(Value::as_array).cloned(),
            constraints,
        })
    }

    /// This tool at `level`.
    pub fn disclose(&self, level: Level) -> Disclosure {
        match level {
            Level::L1 => Disclosure::L1(self.level1()),
            Level::L2 => Disclosure::L2(self.level2()),
            Level::L3 => Disclosure::L3(self.level3()),
        }
    }
}

fn level1_text(d: &Level1) -> String {
    format!("{} — {}", d.name, d.summary)
}

fn level2_text(d: &Level2) -> String {
    let mut out = format!("{}\n{}\n", d.usage, d.description);
    if d.parameters.is_empty() {
        out.push_str("Parameters: (none)\n");
    } else {
        let _ = writeln!(out, "Parameters: {}", d.parameters.join(", "));
    }
    if !d.returns.is_empty() {
        let _ = writeln!(out, "Returns: {}", d.returns);
    }
    out
}

fn level3_text(d: &Level3) -> String {
    let mut out = format!("# {}\n{}\nUsage: {}\n", d.name, d.description, d.usage);
    if !d.returns.is_empty() {
        let _ = writeln!(out, "Returns: {}", d.returns);
    }
    if d.parameters.is_empty() {
        out.push_str("Parameters: (none)\n");
    } else {
        out.push_str("Parameters:\n");
        let mut budget = MAX_NESTED_FIELD_CHARS;
        for (name, schema) in &d.parameters {
            let _ = writeln!(out, "- {}", param_line(name, schema));
            // The level's own entry renamed the object's `required` list.
            let own = schema.get("required_fields").map_or_else(
                || schema.clone(),
                |r| {
                    let mut s = schema.clone();
                    s["required"] = r.clone();
                    s
                },
            );
            let mut lines = Vec::new();
            nested_fields(&own, 1, &mut lines);
            let mut shown = 0;
            for line in &lines {
                let cost = line.chars().count() + 1;
                if cost > budget {
                    break;
                }
                budget -= cost;
                out.push_str(line);
                out.push('\n');
                shown += 1;
            }
            if shown < lines.len() {
                let _ = writeln!(
                    out,
                    "  - … {} more field(s): describe the parameter '{name}' for them",
                    lines.len() - shown
                );
            }
        }
    }
    if !d.examples.is_empty() {
        out.push_str("Examples:\n");
        for ex in &d.examples {
            let _ = writeln!(
                out,
                "- {}({}) — {}",
                d.name,
                call_args(&ex.input),
                ex.description
            );
        }
    }
    if !d.errors.is_empty() {
        out.push_str("Errors:\n");
        for e in &d.errors {
            let _ = writeln!(out, "- {}: {}", e.kind, e.when);
        }
    }
    if !d.notes.is_empty() {
        out.push_str("Notes:\n");
        for n in &d.notes {
            let _ = writeln!(out, "- {n}");
        }
    }
    if !d.steps.is_empty() {
        out.push_str("Steps (one call runs them all):\n");
        for s in &d.steps {
            let _ = writeln!(out, "- {s}");
        }
    }
    out
}

/// Most characters of nested fields (an object parameter's properties, an array's
/// items' properties, [`MAX_NESTED_DEPTH`] levels down) the text of level 3 lists, about
/// 300 tokens over all its parameters; the fields past it are counted, and
/// [`ToolSpec::parameter`] shows them.
///
/// **Rationale:** an imported OpenAPI POST takes one `body` object; its level 3 said only
/// `- body (object, required)`, so a model reading it could not fill the body in (#63).
pub const MAX_NESTED_FIELD_CHARS: usize = 1200;

/// How deep level 3 lists nested fields.
pub const MAX_NESTED_DEPTH: usize = 3;

/// The lines of the fields nested in `schema` (an object's properties, or an array's
/// items' properties), each indented by its `depth`, in schema order, depth first.
fn nested_fields(schema: &Value, depth: usize, out: &mut Vec<String>) {
    if depth > MAX_NESTED_DEPTH {
        return;
    }
    let object = match schema.get("items") {
        Some(items) if schema.get("properties").is_none() => items,
        _ => schema,
    };
    let Some(props) = object.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, field) in props {
        let mut flagged = field.clone();
        if let Some(obj) = flagged.as_object_mut() {
            obj.insert(
                "required".to_owned(),
                Value::Bool(required.contains(&name.as_str())),
            );
        }
        out.push(format!(
            "{}- {}",
            "  ".repeat(depth),
            param_line(name, &flagged)
        ));
        nested_fields(field, depth + 1, out);
    }
}

/// `name (type, required, default 1, one of: a|b, minimum 0): description`
fn param_line(name: &str, schema: &Value) -> String {
    let mut facts = Vec::new();
    if let Some(t) = type_name(schema) {
        facts.push(t);
    }
    if schema.get("required").and_then(Value::as_bool) == Some(true) {
        facts.push("required".to_owned());
    }
    if let Some(d) = schema.get("default").filter(|d| !d.is_null()) {
        facts.push(format!("default {}", literal(d)));
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = e.iter().map(literal).collect();
        facts.push(format!("one of: {}", values.join("|")));
    }
    if let Some(obj) = schema.as_object() {
        for (k, v) in obj {
            if matches!(
                k.as_str(),
                "minimum"
                    | "maximum"
                    | "minLength"
                    | "maxLength"
                    | "pattern"
                    | "format"
                    | "minItems"
                    | "maxItems"
            ) {
                facts.push(format!("{k} {}", literal(v)));
            }
        }
        if let Some(items) = obj.get("items").and_then(type_name) {
            facts.push(format!("items {items}"));
        }
    }
    let desc = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut line = name.to_owned();
    if !facts.is_empty() {
        let _ = write!(line, " ({})", facts.join(", "));
    }
    if !desc.is_empty() {
        let _ = write!(line, ": {desc}");
    }
    line
}

/// Arguments of an example as they would be written in a call: `a="x", n=1`.
fn call_args(input: &Value) -> String {
    match input.as_object() {
        Some(obj) => obj
            .iter()
            .map(|(k, v)| format!("{k}={}", literal(v)))
            .collect::<Vec<_>>()
            .join(", "),
        None => input.to_string(),
    }
}

fn parameter_text(d: &ParameterDetail) -> String {
    let mut out = format!("{}.{}", d.tool, d.parameter);
    let mut facts = Vec::new();
    if let Some(t) = &d.kind {
        facts.push(t.clone());
    }
    facts.push(if d.required { "required" } else { "optional" }.to_owned());
    let _ = writeln!(out, " ({})", facts.join(", "));
    if let Some(desc) = &d.description {
        let _ = writeln!(out, "{desc}");
    }
    if let Some(def) = &d.default {
        let _ = writeln!(out, "Default: {}", literal(def));
    }
    if let Some(allowed) = &d.allowed {
        let values: Vec<String> = allowed.iter().map(literal).collect();
        let _ = writeln!(out, "One of: {}", values.join(", "));
    }
    for (k, v) in &d.constraints {
        let _ = writeln!(out, "{k}: {v}");
    }
    out
}
