//! Usage lines generated from a parameter schema.

use serde_json::Value;

/// `name(req="…", opt=default)`: required parameters with a placeholder of their type,
/// then optional parameters that have a default, in schema order.
pub(crate) fn generate(name: &str, schema: &Value) -> String {
    let required = crate::spec::required_names(schema);
    let mut args = Vec::new();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (key, prop) in props {
            if required.contains(&key.as_str()) {
                args.push(format!("{key}={}", placeholder(prop)));
            }
        }
        for (key, prop) in props {
            if !required.contains(&key.as_str())
                && let Some(default) = prop.get("default").filter(|d| !d.is_null())
            {
                args.push(format!("{key}={}", literal(default)));
            }
        }
    }
    format!("{name}({})", args.join(", "))
}

/// A value written the way a model reads a call: strings quoted, others as JSON.
pub(crate) fn literal(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn placeholder(prop: &Value) -> String {
    if let Some(first) = prop
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return literal(first);
    }
    match type_name(prop).as_deref() {
        Some("string") => "\"…\"".to_owned(),
        Some("integer") => "0".to_owned(),
        Some("number") => "0.0".to_owned(),
        Some("boolean") => "true".to_owned(),
        Some("array") => "[…]".to_owned(),
        Some("object") => "{…}".to_owned(),
        _ => "…".to_owned(),
    }
}

/// The `type` of a property schema: a string, or the non-null types joined by `|`.
pub(crate) fn type_name(prop: &Value) -> Option<String> {
    match prop.get("type")? {
        Value::String(t) => Some(t.clone()),
        Value::Array(ts) => {
            let names: Vec<&str> = ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            (!names.is_empty()).then(|| names.join("|"))
        }
        _ => None,
    }
}
