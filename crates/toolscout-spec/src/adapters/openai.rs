//! OpenAI function calling: `{"type":"function","function":{name, description, parameters, strict}}`.
//!
//! OpenAI function names allow `a-z A-Z 0-9 _ -` and at most 64 characters, so a
//! [`NameMap`] gives every tool of a set a legal alias, without collisions, and maps the
//! model's calls back.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Map, Value, json};

use super::{derive_summary, str_field};
use crate::name::short_hash;
use crate::{Error, Result, ToolSpec};

/// The longest function name OpenAI accepts.
pub const MAX_OPENAI_NAME_LEN: usize = 64;

/// Whether `name` is a legal OpenAI function name as it is.
pub fn is_legal(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_OPENAI_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A two-way mapping between tool names and OpenAI function names.
///
/// Legal names map to themselves. Others (with dots, or too long) become a sanitised
/// alias: `.` → `_`, cut to fit, with a short hash of the original when that is needed
/// to stay unique. The mapping depends only on the set of names, never on their order.
///
/// ```
/// use toolscout_spec::adapters::openai::NameMap;
/// let map = NameMap::new(["math.factorial", "math_factorial", "get_weather"]);
/// assert_eq!(map.alias("get_weather"), Some("get_weather"));
/// let alias = map.alias("math.factorial").unwrap();
/// assert_ne!(alias, "math_factorial"); // taken by the other tool
/// assert_eq!(map.original(alias), Some("math.factorial"));
/// ```
#[derive(Debug, Clone, Default)]
pub struct NameMap {
    to_alias: HashMap<String, String>,
    to_name: HashMap<String, String>,
}

impl NameMap {
    /// Builds the mapping for a set of names.
    pub fn new<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let names: BTreeSet<String> = names.into_iter().map(|n| n.as_ref().to_owned()).collect();
        let mut taken: BTreeSet<String> = names.iter().filter(|n| is_legal(n)).cloned().collect();
        let mut pairs: BTreeMap<String, String> = BTreeMap::new();
        for name in &names {
            if is_legal(name) {
                pairs.insert(name.clone(), name.clone());
                continue;
            }
            let alias = alias_for(name, &taken);
            taken.insert(alias.clone());
            pairs.insert(name.clone(), alias);
        }
        let to_name = pairs.iter().map(|(n, a)| (a.clone(), n.clone())).collect();
        NameMap {
            to_alias: pairs.into_iter().collect(),
            to_name,
        }
    }

    /// The OpenAI name of a tool.
    pub fn alias(&self, name: &str) -> Option<&str> {
        self.to_alias.get(name).map(String::as_str)
    }

    /// The tool behind an OpenAI name.
    pub fn original(&self, alias: &str) -> Option<&str> {
        self.to_name.get(alias).map(String::as_str)
    }

    /// How many names the map holds.
    pub fn len(&self) -> usize {
        self.to_alias.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.to_alias.is_empty()
    }
}

/// Whether a [`NameMap`] could call `name` `alias`, whatever other names the map holds:
/// `alias` is `name` itself when that is legal, else its sanitised form, or that form cut
/// and followed by the name's short hash. This resolves an alias without the map it came
/// from, e.g. a name pasted from `export --format openai`.
///
/// ```
/// use toolscout_spec::adapters::openai::{NameMap, could_alias};
/// let map = NameMap::new(["math.gcd", "math_gcd"]);
/// let alias = map.alias("math.gcd").unwrap();
/// assert!(could_alias("math.gcd", alias));
/// assert!(could_alias("math.gcd", "math_gcd"));
/// assert!(!could_alias("math.lcm", alias));
/// ```
pub fn could_alias(name: &str, alias: &str) -> bool {
    if is_legal(name) {
        return name == alias;
    }
    let base = sanitized(name);
    if base == alias && base.len() <= MAX_OPENAI_NAME_LEN {
        return true;
    }
    let hash = short_hash(name);
    let keep = MAX_OPENAI_NAME_LEN - hash.len() - 1;
    let head: String = base.chars().take(keep).collect();
    alias.len() == head.len() + 1 + hash.len()
        && alias.starts_with(head.as_str())
        && alias.ends_with(hash.as_str())
        && alias.as_bytes().get(head.len()) == Some(&b'_')
}

/// `.` and every other character OpenAI refuses become `_`.
fn sanitized(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn alias_for(name: &str, taken: &BTreeSet<String>) -> String {
    let base = sanitized(name);
    if base.len() <= MAX_OPENAI_NAME_LEN && !taken.contains(&base) {
        return base;
    }
    // Add a hash of the original; on the (astronomically rare) chance that collides
    // too, hash again with a counter.
    let mut salt = 0u32;
    loop {
        let hash = if salt == 0 {
            short_hash(name)
        } else {
            short_hash(&format!("{name}#{salt}"))
        };
        let keep = MAX_OPENAI_NAME_LEN - hash.len() - 1;
        let head: String = base.chars().take(keep).collect();
        let candidate = format!("{head}_{hash}");
        if !taken.contains(&candidate) {
            return candidate;
        }
        salt += 1;
    }
}

/// The OpenAI tool object of `spec`, under `name` (its alias; see [`NameMap`]).
///
/// With `strict`, the schema is rewritten as OpenAI's strict mode demands: every object
/// has `additionalProperties: false` and lists all its properties as required, and
/// optional properties accept `null` instead.
///
/// Without `strict`, a property schema with no `type` (JSON Schema's "any value", common
/// in imported catalogs) gets an explicit list of every type: the same meaning, and
/// servers that turn schemas into grammars (llama.cpp's) accept it, where they reject
/// `{"description": …}` alone.
pub fn to_openai_named(spec: &ToolSpec, name: &str, strict: bool) -> Value {
    let parameters = if strict {
        strict_schema(&spec.parameters)
    } else {
        let mut p = spec.parameters.clone();
        type_untyped(&mut p, 0);
        p
    };
    json!({
        "type": "function",
        "function": {
            "name": name,
            "description": spec.description_or_summary(),
            "parameters": parameters,
            "strict": strict,
        }
    })
}

/// Every JSON type, for a schema that accepts any value.
const ANY_TYPE: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// Gives the untyped property and item schemas under `schema` an explicit "any" type.
fn type_untyped(schema: &mut Value, depth: usize) {
    /// Keywords that already say what a value may be.
    const SHAPED: [&str; 8] = [
        "type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const", "not",
    ];
    if depth > 32 {
        return;
    }
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for prop in props.values_mut() {
            if let Some(p) = prop.as_object_mut()
                && !SHAPED.iter().any(|k| p.contains_key(*k))
            {
                p.insert("type".to_owned(), json!(ANY_TYPE));
            }
            type_untyped(prop, depth + 1);
        }
    }
    if let Some(items) = obj.get_mut("items") {
        if let Some(i) = items.as_object_mut()
            && !SHAPED.iter().any(|k| i.contains_key(*k))
        {
            i.insert("type".to_owned(), json!(ANY_TYPE));
        }
        type_untyped(items, depth + 1);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(subs)) = obj.get_mut(key) {
            for sub in subs {
                type_untyped(sub, depth + 1);
            }
        }
    }
}

/// The OpenAI tool object of `spec` under its own name, which must be legal for OpenAI.
pub fn to_openai(spec: &ToolSpec, strict: bool) -> Result<Value> {
    if !is_legal(&spec.name) {
        return Err(Error::format(
            "openai",
            format!(
                "'{}' is not a legal OpenAI function name (a-z, A-Z, 0-9, '_', '-', at most 64); map it with NameMap",
                spec.name
            ),
        ));
    }
    Ok(to_openai_named(spec, &spec.name, strict))
}

/// Reads an OpenAI tool object (or a bare `function` object) into a spec; the summary is
/// the description's first sentence.
pub fn from_openai(value: &Value) -> Result<ToolSpec> {
    let function = match value.get("function") {
        Some(f) => f,
        None if value.get("name").is_some() => value,
        None => {
            return Err(Error::format(
                "openai",
                "expected {\"type\":\"function\",\"function\":{…}}",
            ));
        }
    };
    if let Some(t) = str_field(value, "type")
        && t != "function"
    {
        return Err(Error::format(
            "openai",
            format!("unsupported tool type '{t}'"),
        ));
    }
    let name = str_field(function, "name")
        .ok_or_else(|| Error::format("openai", "function.name is missing"))?;
    let description = str_field(function, "description").unwrap_or("");
    let mut builder =
        ToolSpec::builder(name, derive_summary(name, description)).description(description);
    if let Some(p) = function.get("parameters") {
        builder = builder.parameters(p.clone());
    }
    builder.build()
}

fn strict_schema(schema: &Value) -> Value {
    let Some(obj) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (k, v) in obj {
        let v = match k.as_str() {
            "items" => strict_schema(v),
            "anyOf" | "oneOf" | "allOf" => match v.as_array() {
                Some(a) => Value::Array(a.iter().map(strict_schema).collect()),
                None => v.clone(),
            },
            _ => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        let required = crate::spec::required_names(schema);
        let mut new_props = Map::new();
        for (name, prop) in props {
            let mut prop = strict_schema(prop);
            if !required.contains(&name.as_str()) {
                prop = nullable(prop);
            }
            new_props.insert(name.clone(), prop);
        }
        out.insert("properties".to_owned(), Value::Object(new_props));
        out.insert(
            "required".to_owned(),
            Value::Array(props.keys().map(|k| Value::String(k.clone())).collect()),
        );
        out.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    Value::Object(out)
}

fn nullable(mut prop: Value) -> Value {
    if let Some(obj) = prop.as_object_mut() {
        match obj.get("type").cloned() {
            Some(Value::String(t)) if t != "null" => {
                obj.insert("type".to_owned(), json!([t, "null"]));
            }
            Some(Value::Array(mut ts)) if !ts.iter().any(|t| t == "null") => {
                ts.push(json!("null"));
                obj.insert("type".to_owned(), Value::Array(ts));
            }
            _ => {}
        }
        obj.remove("default");
    }
    prop
}
