//! Local `$ref`s resolved to any depth, with every hostile case bounded.
//!
//! A `$ref` is a JSON pointer into the same document (`#/components/schemas/Pet`, percent
//! and `~`-escaped). A schema is copied with each `$ref` inside replaced by a copy of what
//! it points to, itself expanded, so that a tool's parameters stand alone. Three things
//! cut the expansion and leave a placeholder (the target's `type`, if it names one, and a
//! description saying why) instead of looping or growing without end:
//!
//! * a cycle: a `$ref` met again inside its own expansion (a tree node whose children are
//!   nodes) is shown once, and inside itself as "recursive";
//! * depth: more than [`MAX_REF_DEPTH`] `$ref`s inside one another, or values nested more
//!   than [`MAX_NESTING`] deep;
//! * size: an operation whose schemas grow past [`MAX_OPERATION_VALUES`] values, or a
//!   document whose tools together grow past [`MAX_DOCUMENT_VALUES`].
//!
//! A `$ref` that points nowhere, or outside the document, is an error: the operation is
//! skipped and the reason names the `$ref`.

use percent_encoding::percent_decode_str;
use serde_json::{Map, Value, json};

/// The most `$ref`s followed inside one another before the rest is cut.
pub const MAX_REF_DEPTH: usize = 32;

/// The deepest nesting of objects and arrays copied into a tool's schema.
pub const MAX_NESTING: usize = 64;

/// The most JSON values (objects, arrays, scalars) one operation's schemas expand to.
pub const MAX_OPERATION_VALUES: usize = 20_000;

/// The most JSON values all the operations of one document expand to together.
pub const MAX_DOCUMENT_VALUES: usize = 1_000_000;

/// Keys whose value maps names to schemas (rather than being a schema).
const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "definitions",
    "$defs",
    "dependentSchemas",
];

/// Keys whose value is data (an instance, not a schema): copied, never searched for `$ref`s.
const DATA: [&str; 5] = ["example", "examples", "default", "enum", "const"];

/// Why a `$ref` was not expanded.
#[derive(Clone, Copy)]
enum Cut {
    Cycle,
    Depth,
    Size,
}

/// Expands the `$ref`s of one document, keeping count of what it produced.
pub(super) struct Resolver<'a> {
    doc: &'a Value,
    /// Values this operation may still produce.
    operation_left: usize,
    /// Values the document may still produce.
    document_left: usize,
}

impl<'a> Resolver<'a> {
    pub(super) fn new(doc: &'a Value) -> Self {
        Resolver {
            doc,
            operation_left: MAX_OPERATION_VALUES,
            document_left: MAX_DOCUMENT_VALUES,
        }
    }

    /// Starts the count of a new operation.
    pub(super) fn start_operation(&mut self) {
        self.operation_left = MAX_OPERATION_VALUES;
    }

    /// Follows `v`'s `$ref` (and the target's, and so on) to the object it ends at, for
    /// the parts of a document that are not schemas: path items, parameters, request
    /// bodies.
    pub(super) fn follow(&self, mut v: &'a Value) -> Result<&'a Value, String> {
        let mut seen: Vec<&str> = Vec::new();
        while let Some(r) = v.get("$ref").and_then(Value::as_str) {
            if seen.contains(&r) {
                return Err(format!("`$ref` {r:?} refers to itself"));
            }
            if seen.len() >= MAX_REF_DEPTH {
                return Err(format!(
                    "`$ref` {r:?} is more than {MAX_REF_DEPTH} `$ref`s away from a value"
                ));
            }
            seen.push(r);
            v = self.target(r)?;
        }
        Ok(v)
    }

    /// `schema` with every `$ref` inside it expanded.
    pub(super) fn schema(&mut self, schema: &Value) -> Result<Value, String> {
        let mut stack = Vec::new();
        self.expand(schema, &mut stack, 0)
    }

    /// What the local `$ref` `r` points to.
    fn target(&self, r: &str) -> Result<&'a Value, String> {
        let Some(fragment) = r.strip_prefix('#') else {
            return Err(format!(
                "`$ref` {r:?} points outside the document: bundle the document into one file first"
            ));
        };
        let pointer = percent_decode_str(fragment)
            .decode_utf8()
            .map_err(|_| format!("`$ref` {r:?} is not UTF-8 once percent-decoded"))?;
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(format!(
                "`$ref` {r:?} is not a JSON pointer (`#/components/schemas/Name`)"
            ));
        }
        self.doc
            .pointer(&pointer)
            .ok_or_else(|| format!("`$ref` {r:?} points nowhere in the document"))
    }

    /// Counts one value produced.
    fn spend(&mut self) {
        self.spend_n(1);
    }

    /// Counts `n` values produced.
    fn spend_n(&mut self, n: usize) {
        self.operation_left = self.operation_left.saturating_sub(n);
        self.document_left = self.document_left.saturating_sub(n);
    }

    fn expand(
        &mut self,
        v: &Value,
        stack: &mut Vec<String>,
        nesting: usize,
    ) -> Result<Value, String> {
        self.spend();
        let Value::Object(map) = v else {
            let Value::Array(items) = v else {
                return Ok(v.clone());
            };
            if nesting >= MAX_NESTING {
                return Ok(json!([]));
            }
            return items
                .iter()
                .map(|item| self.expand(item, stack, nesting + 1))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array);
        };
        if nesting >= MAX_NESTING {
            let cut = placeholder(map.get("type"), "value", Cut::Depth);
            self.spend_n(3);
            return Ok(cut);
        }
        let mut out = match map.get("$ref").and_then(Value::as_str) {
            Some(r) => self.reference(r, stack, nesting)?,
            None => Map::new(),
        };
        for (key, value) in map {
            if key == "$ref" && value.is_string() {
                continue;
            }
            // A schema's own words win over its target's (OpenAPI 3.1 lets a `$ref`
            // carry a `description`).
            let value = if DATA.contains(&key.as_str()) || key.starts_with("x-") {
                self.copy(value, nesting + 1)
            } else if SCHEMA_MAPS.contains(&key.as_str())
                && let Value::Object(named) = value
            {
                self.spend();
                let mut schemas = Map::new();
                for (name, schema) in named {
                    schemas.insert(name.clone(), self.expand(schema, stack, nesting + 2)?);
                }
                Value::Object(schemas)
            } else {
                self.expand(value, stack, nesting + 1)?
            };
            out.insert(key.clone(), value);
        }
        merge_all_of(&mut out);
        Ok(Value::Object(out))
    }

    /// The expansion of the `$ref` `r`, as an object to which its siblings are added.
    fn reference(
        &mut self,
        r: &str,
        stack: &mut Vec<String>,
        nesting: usize,
    ) -> Result<Map<String, Value>, String> {
        let target = self.target(r)?;
        let cut = if stack.iter().any(|s| s == r) {
            Some(Cut::Cycle)
        } else if stack.len() >= MAX_REF_DEPTH {
            Some(Cut::Depth)
        } else if self.operation_left == 0 || self.document_left == 0 {
            Some(Cut::Size)
        } else {
            None
        };
        let expanded = match cut {
            Some(cut) => {
                self.spend_n(3);
                placeholder(target.get("type"), ref_name(r), cut)
            }
            None => {
                stack.push(r.to_owned());
                let expanded = self.expand(target, stack, nesting + 1);
                stack.pop();
                expanded?
            }
        };
        Ok(match expanded {
            Value::Object(map) => map,
            // A `$ref` to a non-object (`true`, a bare value): kept as the schema's `allOf`.
            other => Map::from_iter([("allOf".to_owned(), json!([other]))]),
        })
    }

    /// A copy of a data value, within the nesting and size bounds.
    fn copy(&mut self, v: &Value, nesting: usize) -> Value {
        self.spend();
        match v {
            Value::Array(items) if nesting < MAX_NESTING => Value::Array(
                items
                    .iter()
                    .map(|item| self.copy(item, nesting + 1))
                    .collect(),
            ),
            Value::Object(map) if nesting < MAX_NESTING => Value::Object(
                map.iter()
                    .map(|(k, item)| (k.clone(), self.copy(item, nesting + 1)))
                    .collect(),
            ),
            Value::Array(_) => json!([]),
            Value::Object(_) => json!({}),
            scalar => scalar.clone(),
        }
    }
}

/// The last segment of a `$ref`: the component's name.
fn ref_name(r: &str) -> &str {
    r.rsplit('/').next().unwrap_or(r)
}

/// What stands for a schema that is not expanded: its type, when it names one (so a
/// validator still checks that much), and why it stops here.
fn placeholder(ty: Option<&Value>, name: &str, cut: Cut) -> Value {
    let why = match cut {
        Cut::Cycle => format!("{name} again (recursive): the same shape as the enclosing {name}"),
        Cut::Depth => format!("{name}: not expanded (nested too deep)"),
        Cut::Size => format!("{name}: not expanded (the schema is too large)"),
    };
    let mut out = Map::new();
    if let Some(ty) = ty.filter(|t| t.is_string() || t.is_array()) {
        out.insert("type".to_owned(), ty.clone());
    }
    out.insert("description".to_owned(), json!(why));
    Value::Object(out)
}

/// The keys an `allOf` member may have for the members to be merged into one object.
const MERGEABLE: [&str; 5] = ["type", "properties", "required", "description", "title"];

/// Merges an `allOf` of plain object schemas (an `$ref`ed base plus the fields a schema
/// adds, the usual inheritance) into one object, which a model reads more easily. Left
/// as it is when a member is anything else or two members define the same property.
fn merge_all_of(schema: &mut Map<String, Value>) {
    let Some(Value::Array(members)) = schema.get("allOf") else {
        return;
    };
    let plain = |m: &Value| {
        m.as_object().is_some_and(|m| {
            m.keys().all(|k| MERGEABLE.contains(&k.as_str()))
                && m.get("type").is_none_or(|t| t == "object")
                && m.get("properties").is_none_or(Value::is_object)
                && m.get("required").is_none_or(Value::is_array)
        })
    };
    if !members.iter().all(plain)
        || schema.get("type").is_some_and(|t| t != "object")
        || schema.contains_key("properties")
    {
        return;
    }
    let mut properties = Map::new();
    let mut required: Vec<Value> = Vec::new();
    // By their JSON text: a long list is deduplicated in linear time.
    let mut seen = fnv::FnvHashSet::default();
    let mut description = None;
    for member in members.iter().filter_map(Value::as_object) {
        if let Some(Value::Object(props)) = member.get("properties") {
            for (name, s) in props {
                if properties.insert(name.clone(), s.clone()).is_some() {
                    return;
                }
            }
        }
        for name in member
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if seen.insert(name.to_string()) {
                required.push(name.clone());
            }
        }
        if description.is_none() {
            description = member.get("description").cloned();
        }
    }
    schema.remove("allOf");
    schema.insert("type".to_owned(), json!("object"));
    if !schema.contains_key("description")
        && let Some(d) = description
    {
        schema.insert("description".to_owned(), d);
    }
    schema.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".to_owned(), Value::Array(required));
    }
}
