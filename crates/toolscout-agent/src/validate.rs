//! A light check of arguments against a tool's parameter schema: required properties,
//! top-level types, enums and unknown properties (when `additionalProperties` is
//! false). Enough to catch the usual model mistakes and tell the model what to fix;
//! deeper checks are the host's business.

use serde_json::Value;
use toolscout_spec::ToolSpec;

/// The problems with `args`, each a sentence for the model; empty when none.
pub(crate) fn check(spec: &ToolSpec, args: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(obj) = args.as_object() else {
        problems.push(format!(
            "arguments must be a JSON object, not {}",
            kind(args)
        ));
        return problems;
    };
    let schema = &spec.parameters;
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !obj.contains_key(name) {
                problems.push(format!("missing required parameter '{name}'"));
            }
        }
    }
    let props = schema.get("properties").and_then(Value::as_object);
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (name, value) in obj {
        let Some(prop) = props.and_then(|p| p.get(name)) else {
            if closed {
                problems.push(format!("unknown parameter '{name}'"));
            }
            continue;
        };
        if let Some(expected) = prop.get("type")
            && !type_matches(expected, value)
        {
            problems.push(format!(
                "parameter '{name}' must be {}, not {}",
                type_text(expected),
                kind(value)
            ));
            continue;
        }
        if let Some(allowed) = prop.get("enum").and_then(Value::as_array)
            && !allowed.contains(value)
        {
            let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
            problems.push(format!(
                "parameter '{name}' must be one of {}, not {value}",
                list.join(", ")
            ));
        }
    }
    problems
}

fn type_matches(expected: &Value, value: &Value) -> bool {
    match expected {
        Value::String(t) => one_matches(t, value),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .any(|t| one_matches(t, value)),
        _ => true,
    }
}

fn one_matches(t: &str, value: &Value) -> bool {
    match t {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn type_text(expected: &Value) -> String {
    match expected {
        Value::String(t) if t.starts_with(['a', 'e', 'i', 'o', 'u']) => format!("an {t}"),
        Value::String(t) => format!("a {t}"),
        Value::Array(ts) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            format!("one of {}", names.join("|"))
        }
        other => other.to_string(),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reports_missing_wrong_type_and_enum() {
        let spec = ToolSpec::builder("t", "T")
            .parameters(json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "units": {"type": "string", "enum": ["metric", "imperial"]}
                },
                "required": ["city"]
            }))
            .build()
            .unwrap();
        assert_eq!(
            check(&spec, &json!({"days": "3", "units": "kelvin"})),
            [
                "missing required parameter 'city'",
                "parameter 'days' must be an integer, not a string",
                "parameter 'units' must be one of \"metric\", \"imperial\", not \"kelvin\""
            ]
        );
        assert!(check(&spec, &json!({"city": "Oslo", "days": 2})).is_empty());
    }
}
