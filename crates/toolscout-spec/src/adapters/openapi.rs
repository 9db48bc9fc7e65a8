//! OpenAPI: one HTTP tool per operation of an OpenAPI document.
//!
//! JSON documents only (OpenAPI 3 or Swagger 2; convert YAML first). Each operation
//! becomes a tool named by its `operationId` (else `method_path`), whose parameters are
//! the path parameters, the query parameters, and `body` for a JSON request body.
//! Required query parameters are in the URL template; optional ones are `queryParams`,
//! sent only when a call gives them. The template is the `impl` block of an HTTP tool
//! (`toolscout-invoke`'s `HttpImpl`).
//!
//! ```
//! use serde_json::json;
//! use toolscout_spec::adapters::openapi;
//!
//! let doc = json!({
//!     "openapi": "3.0.0",
//!     "servers": [{"url": "https://api.example.com/v1"}],
//!     "paths": {"/pets/{petId}": {"get": {
//!         "operationId": "getPet",
//!         "summary": "Get one pet by id",
//!         "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "integer"}}]
//!     }}}
//! });
//! let api = openapi::from_openapi(&doc, None)?;
//! assert_eq!(api.tools[0].spec.name, "getPet");
//! assert_eq!(api.tools[0].template["urlTemplate"], "https://api.example.com/v1/pets/${petId}");
//! assert!(api.skipped.is_empty());
//! # Ok::<(), toolscout_spec::Error>(())
//! ```

use serde_json::{Map, Value, json};

use crate::name::sanitize_name;
use crate::{Error, Result, ToolSpec};

/// The format name in this adapter's errors.
const FORMAT: &str = "openapi";

/// The HTTP methods whose operations become tools.
const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// One operation as a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenApiTool {
    /// What the model sees.
    pub spec: ToolSpec,
    /// The HTTP template: the `impl` block of an HTTP tool.
    pub template: Value,
}

/// An operation that could not become a tool, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The method, upper case.
    pub method: String,
    /// The path, as the document writes it.
    pub path: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The tools of an OpenAPI document.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OpenApiTools {
    /// One per usable operation, in the document's order.
    pub tools: Vec<OpenApiTool>,
    /// The operations left out.
    pub skipped: Vec<Skipped>,
}

/// The tools of an OpenAPI document, with their HTTP templates, calling `base` (default:
/// the document's first absolute server URL, or Swagger 2's `host` and `basePath`).
/// Operations that cannot become tools are listed in [`OpenApiTools::skipped`].
pub fn from_openapi(doc: &Value, base: Option<&str>) -> Result<OpenApiTools> {
    let base = match base {
        Some(b) => b.to_owned(),
        None => base_url(doc)?,
    };
    let base = base.trim_end_matches('/').to_owned();
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return Err(Error::format(
            FORMAT,
            "the document has no \"paths\": is it an OpenAPI document in JSON?",
        ));
    };
    let mut out = OpenApiTools::default();
    for (path, item) in paths {
        let shared: Vec<Value> = item
            .get("parameters")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for method in METHODS {
            let Some(op) = item.get(method) else {
                continue;
            };
            match operation(doc, &base, path, method, op, &shared) {
                Ok(t) => out.tools.push(t),
                Err(e) => out.skipped.push(Skipped {
                    method: method.to_uppercase(),
                    path: path.clone(),
                    reason: e.to_string(),
                }),
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
    Err(Error::format(
        FORMAT,
        "the document names no absolute server URL: give the API's base URL",
    ))
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
) -> Result<OpenApiTool> {
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
        .build()?;
    Ok(OpenApiTool { spec, template })
}
