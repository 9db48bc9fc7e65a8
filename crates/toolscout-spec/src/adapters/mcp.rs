//! The Model Context Protocol `Tool`: `name, title, description, inputSchema,
//! outputSchema, annotations`.
//!
//! Annotations come from [`crate::Metadata`]: `readOnlyHint` ← `read_only`,
//! `destructiveHint` ← `destructive`, `idempotentHint` ← `idempotent`,
//! `openWorldHint` ← `open_world`.

use serde_json::{Map, Value, json};

use super::{derive_summary, str_field};
use crate::{Error, Result, ToolSpec};

/// The MCP tool object of `spec`.
pub fn to_mcp(spec: &ToolSpec) -> Value {
    let mut tool = Map::new();
    tool.insert("name".to_owned(), json!(spec.name.as_str()));
    if let Some(title) = &spec.title {
        tool.insert("title".to_owned(), json!(title));
    }
    tool.insert(
        "description".to_owned(),
        json!(spec.description_or_summary()),
    );
    tool.insert("inputSchema".to_owned(), spec.parameters.clone());
    if let Some(out) = &spec.output_schema {
        tool.insert("outputSchema".to_owned(), out.clone());
    }
    let m = &spec.metadata;
    let mut annotations = Map::new();
    if let Some(title) = &spec.title {
        annotations.insert("title".to_owned(), json!(title));
    }
    annotations.insert("readOnlyHint".to_owned(), json!(m.read_only));
    annotations.insert("destructiveHint".to_owned(), json!(m.destructive));
    annotations.insert("idempotentHint".to_owned(), json!(m.idempotent));
    annotations.insert("openWorldHint".to_owned(), json!(m.open_world));
    tool.insert("annotations".to_owned(), Value::Object(annotations));
    Value::Object(tool)
}

/// Reads an MCP tool object into a spec; the summary is the description's first sentence.
pub fn from_mcp(value: &Value) -> Result<ToolSpec> {
    if !value.is_object() {
        return Err(Error::format("mcp", "expected a tool object"));
    }
    let name = str_field(value, "name").ok_or_else(|| Error::format("mcp", "name is missing"))?;
    let description = str_field(value, "description").unwrap_or("");
    let mut builder =
        ToolSpec::builder(name, derive_summary(name, description)).description(description);
    if let Some(title) = str_field(value, "title")
        .or_else(|| value.get("annotations").and_then(|a| str_field(a, "title")))
    {
        builder = builder.title(title);
    }
    if let Some(schema) = value.get("inputSchema") {
        builder = builder.parameters(schema.clone());
    }
    if let Some(schema) = value.get("outputSchema") {
        builder = builder.output_schema(schema.clone());
    }
    let hint = |key: &str| {
        value
            .get("annotations")
            .and_then(|a| a.get(key))
            .and_then(Value::as_bool)
    };
    builder = builder.with_metadata(|m| {
        m.read_only = hint("readOnlyHint").unwrap_or(false);
        m.destructive = hint("destructiveHint").unwrap_or(false);
        m.idempotent = hint("idempotentHint").unwrap_or(false);
        m.open_world = hint("openWorldHint").unwrap_or(false);
    });
    builder.build()
}
