//! `toolscout import openapi SPEC`: one HTTP tool per operation of an OpenAPI document.
//!
//! JSON documents only (OpenAPI 3 or Swagger 2; convert YAML first). Each operation
//! becomes a tool named by its `operationId` (else `method_path`), whose parameters are
//! the path parameters, the query parameters, and `body` for a JSON request body.
//! Required query parameters are in the URL template; optional ones are `queryParams`,
//! sent only when a call gives them.

use anyhow::{Context as _, Result, bail};
use serde_json::{Map, Value, json};
use toolscout_spec::ToolSpec;
use toolscout_spec::name::sanitize_name;

/// The tools of an OpenAPI document, with their HTTP templates; bad operations are
/// reported on stderr and skipped.
pub(crate) fn tools(doc: &Value, base: Option<&str>) -> Result<Vec<(ToolSpec, Value)>> {
    let base = match base {
        Some(b) => b.to_owned(),
        None => base_url(doc)?,
    };
    let base = base.trim_end_matches('/').to_owned();
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        bail!("the document has no \"paths\": is it an OpenAPI document in JSON?");
    };
    let mut out = Vec::new();
    for (path, item) in paths {
        let shared: Vec<Value> = item
            .get("parameters")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for method in ["get", "post", "put", "patch", "delete"] {
            let Some(op) = item.get(method) else {
                continue;
            };
            match operation(doc, &base, path, method, op, &shared) {
                Ok(t) => out.push(t),
                Err(e) => eprintln!("warning: skipped {} {path}: {e:#}", method.to_uppercase()),
            }
        }
    }
    Ok(out)
}

fn base_url(doc: &Value) -> Result<String> {
    if let Some(url) = doc
        .pointer("/servers/0/url")
        .and_then(Value::as_str)
        .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
    {
        return Ok(url.to_owned());
    }
    if let Some(host) = doc.get("host").and_then(Value::as_str) {
        let scheme = doc
            .pointer("/schemes/0")
            .and_then(Value::as_str)
            .unwrap_or("https");
        let base = doc.get("basePath").and_then(Value::as_str).unwrap_or("");
        return Ok(format!("{scheme}://{host}{base}"));
    }
    bail!("the document names no absolute server URL: pass --base-url")
}

/// Follows a local `$ref` (`#/components/…`), once.
fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    match v.get("$ref").and_then(Value::as_str) {
        Some(r) if r.starts_with("#/") => doc.pointer(&r[1..]).unwrap_or(v),
        _ => v,
    }
}

fn operation(
    doc: &Value,
    base: &str,
    path: &str,
    method: &str,
    op: &Value,
    shared: &[Value],
) -> Result<(ToolSpec, Value)> {
    let raw_name = op
        .get("operationId")
        .and_then(Value::as_str)
        .map_or_else(|| format!("{method}_{path}"), str::to_owned);
    let name = sanitize_name(&raw_name);
    let summary = op.get("summary").and_then(Value::as_str).unwrap_or("");
    let description = op.get("description").and_then(Value::as_str).unwrap_or("");
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut query = Vec::new();
    let mut optional_query = Vec::new();
    let params = shared.iter().chain(
        op.get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten(),
    );
    for p in params {
        let p = resolve(doc, p);
        let (Some(pname), Some(place)) = (
            p.get("name").and_then(Value::as_str),
            p.get("in").and_then(Value::as_str),
        ) else {
            continue;
        };
        let mut schema = p.get("schema").map_or_else(
            || {
                // Swagger 2 puts the type on the parameter itself.
                let mut s = Map::new();
                for k in ["type", "format", "enum", "items", "default"] {
                    if let Some(v) = p.get(k) {
                        s.insert(k.to_owned(), v.clone());
                    }
                }
                Value::Object(s)
            },
            |s| resolve(doc, s).clone(),
        );
        if let Some(d) = p.get("description").and_then(Value::as_str)
            && let Some(obj) = schema.as_object_mut()
        {
            obj.insert("description".to_owned(), json!(d));
        }
        let is_required = place == "path" || p.get("required") == Some(&json!(true));
        match place {
            "path" => {}
            "query" if is_required => {
                query.push(pname.to_owned());
            }
            "query" => optional_query.push(json!(pname)),
            _ => continue,
        }
        if is_required {
            required.push(json!(pname));
        }
        properties.insert(pname.to_owned(), schema);
    }
    let body_schema = op
        .pointer("/requestBody/content/application~1json/schema")
        .map(|s| resolve(doc, s).clone());
    if let Some(schema) = &body_schema {
        properties.insert("body".to_owned(), schema.clone());
        required.push(json!("body"));
    }
    let url_path = path.replace('{', "${");
    let mut url = format!("{base}{url_path}");
    for (i, q) in query.iter().enumerate() {
        url.push(if i == 0 { '?' } else { '&' });
        url.push_str(&format!("{q}=${{{q}}}"));
    }
    let mut template = json!({"method": method.to_uppercase(), "urlTemplate": url});
    if !optional_query.is_empty() {
        template["queryParams"] = json!(optional_query);
    }
    if body_schema.is_some() {
        template["bodyTemplate"] = json!("${body}");
        template["headers"] = json!({"Content-Type": "application/json"});
    }
    let summary = if summary.is_empty() {
        description
            .split(". ")
            .next()
            .filter(|s| !s.is_empty())
            .map_or_else(
                || format!("{} {path}", method.to_uppercase()),
                str::to_owned,
            )
    } else {
        summary.to_owned()
    };
    let spec = ToolSpec::builder(name, summary)
        .description(description)
        .parameters(json!({"type": "object", "properties": properties, "required": required}))
        .build()
        .with_context(|| format!("operation {raw_name}"))?;
    Ok((spec, template))
}
