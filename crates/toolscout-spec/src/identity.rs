//! Tool-set identity: one UUID that changes whenever the set of tools changes.

use uuid::Uuid;

use crate::ToolSpec;

/// The namespace of tool-set identities (a fixed, random UUID).
pub const NAMESPACE: Uuid = Uuid::from_u128(0x6f1c_2a1e_93b4_4c55_9a0e_7d1f_3b8c_5e21);

/// A deterministic UUID (v5) over the sorted `(name, version, description, schema)` of
/// `specs`: the same tools give the same id in any order; any change gives a new id.
///
/// ```
/// use toolscout_spec::{identity::toolset_id, sample};
/// let mut tools = sample::catalog();
/// let id = toolset_id(&tools);
/// tools.reverse();
/// assert_eq!(toolset_id(&tools), id);
/// tools[0].description.push('!');
/// assert_ne!(toolset_id(&tools), id);
/// ```
pub fn toolset_id(specs: &[ToolSpec]) -> Uuid {
    toolset_id_of(specs.iter())
}

/// [`toolset_id`] over any iterator of specs.
pub fn toolset_id_of<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> Uuid {
    let mut entries: Vec<String> = specs
        .into_iter()
        .map(|s| {
            // Length-prefixed fields, so that no two different tuples share an encoding.
            let fields = [
                s.name.as_str(),
                s.version.as_deref().unwrap_or(""),
                s.description_or_summary(),
                &canonical_json(&s.parameters),
            ];
            fields
                .iter()
                .map(|f| format!("{}:{f}", f.len()))
                .collect::<Vec<_>>()
                .join("")
        })
        .collect();
    entries.sort_unstable();
    let mut bytes = Vec::new();
    for e in &entries {
        bytes.extend_from_slice(e.as_bytes());
        bytes.push(0);
    }
    Uuid::new_v5(&NAMESPACE, &bytes)
}

/// JSON with object keys sorted at every depth, so that key order never changes an id.
pub fn canonical_json(value: &serde_json::Value) -> String {
    use serde_json::Value;
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, k) in keys.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String((*k).clone()).to_string());
                    out.push(':');
                    write(&map[k.as_str()], out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out
}
