//! Tool schemas an endpoint cannot turn into a grammar, sent without the keywords it
//! refuses.
//!
//! llama.cpp's server turns each tool's parameter schema into a grammar
//! (`json-schema-to-grammar`) and answers 400 when it cannot: "JSON schema conversion
//! failed: Pattern must start with '^' and end with '$'" for a `pattern` such as the
//! built-in `http_get`'s `^https?://`, "Failed to parse grammar" when the grammar it
//! built does not parse. `rejects_schemas` tells such an answer; `relax_tools` leaves
//! the value constraints ([`RELAXED_KEYWORDS`]) out of the schemas of a request's tools
//! array. Only the endpoint sees the relaxed schemas: a call is still checked against the
//! tool's full schema before it runs, and an invalid one goes back to the model with the
//! tool's usage, as any invalid call does.

use serde_json::{Map, Value};

use crate::Error;

/// The keywords left out of a relaxed schema: the value constraints that
/// llama.cpp's `json-schema-to-grammar` turns into grammar rules and refuses or
/// mis-converts — `pattern` (anchors required, a subset of regex syntax), `format`,
/// and the bounds it reads as integers (`minLength`/`maxLength`, `minItems`/`maxItems`,
/// `minimum`/`maximum` and their exclusive forms: a fraction or a huge bound fails).
///
/// **Rationale:** these only narrow which values are valid; the tool still checks them,
/// so the model loses nothing it needs to make a call (types, properties, `required`,
/// `enum` and descriptions stay).
pub const RELAXED_KEYWORDS: &[&str] = &[
    "pattern",
    "format",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
];

/// Whether an endpoint's error says it could not take the request's tool schemas or the
/// grammar built from them: a 400 whose message names a schema or a grammar.
pub(crate) fn rejects_schemas(e: &Error) -> bool {
    let Error::Endpoint {
        status: 400,
        message,
    } = e
    else {
        return false;
    };
    let message = message.to_ascii_lowercase();
    message.contains("grammar") || message.contains("schema")
}

/// Whether a request requires a call (`tool_choice` `"required"` or a named function):
/// its refusal is first sent again unforced, by the caller.
pub(crate) fn forced(body: &Map<String, Value>) -> bool {
    body.get("tool_choice")
        .is_some_and(|c| c != "auto" && c != "none" && !c.is_null())
}

/// Leaves [`RELAXED_KEYWORDS`] out of the parameter schemas of the request's tools
/// array; returns whether any was there.
pub(crate) fn relax_tools(body: &mut Map<String, Value>) -> bool {
    let Some(Value::Array(tools)) = body.get_mut("tools") else {
        return false;
    };
    let mut changed = false;
    for tool in tools {
        if let Some(parameters) = tool.pointer_mut("/function/parameters") {
            changed |= relax_schema(parameters);
        }
    }
    changed
}

/// Leaves [`RELAXED_KEYWORDS`] out of `schema` and every schema inside it; a property
/// *named* like a keyword (a parameter called `pattern`) stays. Returns whether any
/// keyword was left out.
pub(crate) fn relax_schema(schema: &mut Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    let mut changed = false;
    for keyword in RELAXED_KEYWORDS {
        changed |= map.remove(*keyword).is_some();
    }
    // Keywords whose value is a map of names to schemas.
    for key in ["properties", "patternProperties", "$defs", "definitions"] {
        if let Some(Value::Object(named)) = map.get_mut(key) {
            for sub in named.values_mut() {
                changed |= relax_schema(sub);
            }
        }
    }
    // Keywords whose value is a schema, or a list of schemas.
    for key in [
        "items",
        "prefixItems",
        "additionalProperties",
        "additionalItems",
        "contains",
        "not",
        "anyOf",
        "oneOf",
        "allOf",
        "if",
        "then",
        "else",
    ] {
        match map.get_mut(key) {
            Some(Value::Array(list)) => {
                for sub in list {
                    changed |= relax_schema(sub);
                }
            }
            Some(sub @ Value::Object(_)) => changed |= relax_schema(sub),
            _ => {}
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_two_llama_cpp_answers_reject_schemas_other_400s_do_not() {
        let endpoint = |status, message: &str| Error::Endpoint {
            status,
            message: message.to_owned(),
        };
        assert!(rejects_schemas(&endpoint(400, "Failed to parse grammar")));
        assert!(rejects_schemas(&endpoint(
            400,
            "JSON schema conversion failed: Pattern must start with '^' and end with '$'"
        )));
        assert!(!rejects_schemas(&endpoint(
            400,
            "the request exceeds the available context size"
        )));
        assert!(!rejects_schemas(&endpoint(500, "Failed to parse grammar")));
        assert!(!rejects_schemas(&Error::Http("schema".into())));
    }

    #[test]
    fn relaxing_keeps_types_names_and_enums_and_reaches_nested_schemas() {
        let mut body = json!({"tools": [{"type": "function", "function": {"name": "fetch", "parameters": {
            "type": "object",
            "properties": {
                "url": {"type": "string", "format": "uri", "pattern": "^https?://"},
                "pattern": {"type": "string", "minLength": 1, "description": "A glob"},
                "tags": {"type": "array", "maxItems": 3, "items": {"type": "string", "pattern": "^[a-z]+$"}},
                "mode": {"anyOf": [{"type": "integer", "minimum": 0.5}, {"enum": ["all"]}]}
            },
            "required": ["url", "pattern"]
        }}}]});
        assert!(relax_tools(body.as_object_mut().unwrap()));
        assert_eq!(
            body["tools"][0]["function"]["parameters"],
            json!({
                "type": "object",
                "properties": {
                    "url": {"type": "string"},
                    "pattern": {"type": "string", "description": "A glob"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "mode": {"anyOf": [{"type": "integer"}, {"enum": ["all"]}]}
                },
                "required": ["url", "pattern"]
            })
        );
        // Nothing left to relax: said so.
        assert!(!relax_tools(body.as_object_mut().unwrap()));
        assert!(!relax_tools(&mut Map::new()));
    }
}
