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
    toolset_id_of_digests(specs.into_iter().map(tool_digest))
}

/// One tool's part of a [`toolset_id`]: a deterministic UUID (v5) over its
/// `(name, version, description, schema)`.
///
/// A store that keeps each tool's digest beside it (the catalog does) computes the
/// identity of many tools with [`toolset_id_of_digests`] without reading their specs again.
pub fn tool_digest(spec: &ToolSpec) -> Uuid {
    // Length-prefixed fields, so that no two different tuples share an encoding.
    let fields = [
        spec.name.as_str(),
        spec.version.as_deref().unwrap_or(""),
        spec.description_or_summary(),
        &canonical_json(&spec.parameters),
    ];
    let entry: String = fields.iter().map(|f| format!("{}:{f}", f.len())).collect();
    Uuid::new_v5(&NAMESPACE, entry.as_bytes())
}

/// [`toolset_id`] from the tools' [`tool_digest`]s, in any order.
///
/// ```
/// use toolscout_spec::identity::{tool_digest, toolset_id, toolset_id_of_digests};
/// let tools = toolscout_spec::sample::catalog();
/// let id = toolset_id_of_digests(tools.iter().map(tool_digest).rev());
/// assert_eq!(id, toolset_id(&tools));
/// ```
pub fn toolset_id_of_digests(digests: impl IntoIterator<Item = Uuid>) -> Uuid {
    let mut digests: Vec<Uuid> = digests.into_iter().collect();
    digests.sort_unstable();
    let mut bytes = Vec::with_capacity(digests.len() * 16);
    for d in &digests {
        bytes.extend_from_slice(d.as_bytes());
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
