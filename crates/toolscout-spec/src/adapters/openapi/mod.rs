//! OpenAPI: one HTTP tool per operation of an OpenAPI document.
//!
//! OpenAPI 3 or Swagger 2, JSON or YAML ([`parse`] reads either; YAML needs the `yaml`
//! feature). Each operation becomes a tool named by its `operationId` (else
//! `method_path`), whose parameters are the path parameters, the query parameters, and
//! `body` for a JSON request body. Required query parameters are in the URL template;
//! optional ones are `queryParams`, sent only when a call gives them. The template is the
//! `impl` block of an HTTP tool (`toolscout-invoke`'s `HttpImpl`).
//!
//! Every local `$ref` (`#/components/schemas/…`, `#/components/parameters/…`,
//! `#/definitions/…`, any JSON pointer into the document) is resolved, to any depth, so a
//! tool's schema stands alone; an `allOf` of plain objects is merged into one. A recursive
//! schema is expanded once and then cut with a placeholder that says so, and so are
//! schemas nested too deep or grown too large ([`MAX_REF_DEPTH`], [`MAX_NESTING`],
//! [`MAX_OPERATION_VALUES`], [`MAX_DOCUMENT_VALUES`]). An operation with a `$ref` that
//! points nowhere, or to another file, is [`Skipped`], and the reason names the `$ref`.
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
//!         "parameters": [{"$ref": "#/components/parameters/PetId"}]
//!     }}},
//!     "components": {
//!         "parameters": {"PetId": {"name": "petId", "in": "path", "required": true,
//!             "schema": {"$ref": "#/components/schemas/Id"}}},
//!         "schemas": {"Id": {"type": "integer", "minimum": 1}}
//!     }
//! });
//! let api = openapi::from_openapi(&doc, None)?;
//! assert_eq!(api.tools[0].spec.name, "getPet");
//! assert_eq!(api.tools[0].template["urlTemplate"], "https://api.example.com/v1/pets/${petId}");
//! assert_eq!(api.tools[0].spec.parameters["properties"]["petId"]["minimum"], 1);
//! assert!(api.skipped.is_empty());
//! # Ok::<(), toolscout_spec::Error>(())
//! ```

mod refs;

use serde_json::{Map, Value, json};

use crate::name::sanitize_name;
use crate::{Error, Result, ToolSpec};
use refs::Resolver;
pub use refs::{MAX_DOCUMENT_VALUES, MAX_NESTING, MAX_OPERATION_VALUES, MAX_REF_DEPTH};

/// The format name in this adapter's errors.
const FORMAT: &str = "openapi";

/// The HTTP methods whose operations become tools.
const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// The largest document [`parse`] reads, in bytes.
pub const MAX_DOCUMENT_BYTES: usize = 64 << 20;

/// The most YAML events that anchors may record and aliases replay in one document
/// ([`parse`]).
///
/// **Rationale:** an alias costs a few bytes and replays everything its anchor holds, so
/// the parser's default (a million) let a 500-byte document keep a core busy for seconds
/// before it was refused (#36, timed with `fuzz/`'s `openapi` target); real documents name
/// shared parts with `$ref`, and the few that use anchors replay far less.
pub const MAX_YAML_ALIAS_EVENTS: usize = 100_000;

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
    /// The method, upper case (`*` for a path item whose own `$ref` cannot be followed).
    pub method: String,
    /// The path, as the document writes it.
    pub path: String,
    /// The operation's `operationId`, when it has one.
    pub operation_id: Option<String>,
    /// What is wrong with it.
    pub reason: String,
}

impl std::fmt::Display for Skipped {
    /// `GET /pets/{id} (getPet): reason`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.method, self.path)?;
        if let Some(id) = &self.operation_id {
            write!(f, " ({id})")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// The tools of an OpenAPI document.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OpenApiTools {
    /// One per usable operation, in the document's order.
    pub tools: Vec<OpenApiTool>,
    /// The operations left out.
    pub skipped: Vec<Skipped>,
}

/// Reads the text of an OpenAPI document: JSON when its first character (after white
/// space and a byte-order mark) is `{`, YAML otherwise. YAML needs this crate's `yaml`
/// feature; without it a YAML document is refused with an error that says so. YAML
/// aliases and nesting are bounded by the parser, so a hostile document fails rather than
/// growing without end.
pub fn parse(text: &str) -> Result<Value> {
    if text.len() > MAX_DOCUMENT_BYTES {
        return Err(Error::format(
            FORMAT,
            format!(
                "the document is {} bytes, more than the {MAX_DOCUMENT_BYTES} read",
                text.len()
            ),
        ));
    }
    let body = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    if body.starts_with('{') {
        return serde_json::from_str(body)
            .map_err(|e| Error::format(FORMAT, format!("the document is not valid JSON: {e}")));
    }
    parse_yaml(body)
}

#[cfg(feature = "yaml")]
fn parse_yaml(text: &str) -> Result<Value> {
    // The parser's budget, raised for real APIs (a large one is a million YAML nodes)
    // and still bounded: nesting and anchors keep their default limits, and what aliases
    // replay is lowered to MAX_YAML_ALIAS_EVENTS.
    let mut budget = serde_saphyr::budget::Budget::default();
    budget.max_nodes = 5_000_000;
    budget.max_events = 10_000_000;
    budget.max_recorded_anchor_events = MAX_YAML_ALIAS_EVENTS;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = MAX_YAML_ALIAS_EVENTS;
    let doc: Value = serde_saphyr::from_str_with_options(text, options)
        .map_err(|e| Error::format(FORMAT, format!("the document is not valid YAML: {e}")))?;
    if doc.is_object() {
        Ok(doc)
    } else {
        Err(Error::format(
            FORMAT,
            "the document is neither a JSON object nor a YAML mapping",
        ))
    }
}

#[cfg(not(feature = "yaml"))]
fn parse_yaml(_text: &str) -> Result<Value> {
    Err(Error::format(
        FORMAT,
        "the document is not JSON (it does not start with '{'); reading YAML needs the `yaml` \
         feature of toolscout-spec (or of toolscout)",
    ))
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
            "the document has no \"paths\": is it an OpenAPI or Swagger document?",
        ));
    };
    let mut resolver = Resolver::new(doc);
    let mut out = OpenApiTools::default();
    for (path, item) in paths {
        let item = match resolver.follow(item) {
            Ok(item) => item,
            Err(reason) => {
                out.skipped.push(Skipped {
                    method: "*".to_owned(),
                    path: path.clone(),
                    operation_id: None,
                    reason,
                });
                continue;
            }
        };
        for method in METHODS {
            let Some(op) = item.get(method) else {
                continue;
            };
            resolver.start_operation();
            match operation(
                &mut resolver,
                &base,
                path,
                method,
                op,
                item.get("parameters"),
            ) {
                Ok(t) => out.tools.push(t),
                Err(e) => out.skipped.push(Skipped {
                    method: method.to_uppercase(),
                    path: path.clone(),
                    operation_id: op
                        .get("operationId")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
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

fn operation(
    resolver: &mut Resolver<'_>,
    base: &str,
    path: &str,
    method: &str,
    op: &Value,
    shared: Option<&Value>,
) -> Result<OpenApiTool> {
    let fail = |reason: String| Error::format(FORMAT, reason);
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
    let mut body_schema = None;
    let params = shared
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(
            op.get("parameters")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        );
    for (i, p) in params.enumerate() {
        let p = resolver
            .follow(p)
            .map_err(|e| fail(format!("parameter {}: {e}", i + 1)))?;
        let (Some(pname), Some(place)) = (
            p.get("name").and_then(Value::as_str),
            p.get("in").and_then(Value::as_str),
        ) else {
            continue;
        };
        let in_parameter = |e: String| fail(format!("parameter '{pname}': {e}"));
        let mut schema = match p.get("schema") {
            Some(s) => resolver.schema(s).map_err(in_parameter)?,
            None => {
                // Swagger 2 puts the type on the parameter itself.
                let mut s = Map::new();
                for k in ["type", "format", "enum", "items", "default"] {
                    if let Some(v) = p.get(k) {
                        s.insert(k.to_owned(), v.clone());
                    }
                }
                resolver.schema(&Value::Object(s)).map_err(in_parameter)?
            }
        };
        let is_required = place == "path" || p.get("required") == Some(&json!(true));
        if place == "body" {
            // Swagger 2's request body (required: the template always sends it).
            body_schema = Some(schema);
            continue;
        }
        if let Some(d) = p.get("description").and_then(Value::as_str)
            && let Some(obj) = schema.as_object_mut()
        {
            obj.insert("description".to_owned(), json!(d));
        }
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
    if let Some(body) = op.get("requestBody") {
        let body = resolver
            .follow(body)
            .map_err(|e| fail(format!("request body: {e}")))?;
        if let Some(schema) = json_media(body) {
            let schema = resolver
                .schema(schema)
                .map_err(|e| fail(format!("request body: {e}")))?;
            // Required even where OpenAPI 3 says optional: the template always sends it.
            body_schema = Some(schema);
        }
    }
    let has_body = body_schema.is_some();
    if let Some(schema) = body_schema {
        properties.insert("body".to_owned(), schema);
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
    if has_body {
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

/// The schema of a request body's JSON content (`application/json`, with parameters or
/// not, or any `+json` type).
fn json_media(body: &Value) -> Option<&Value> {
    let content = body.get("content")?.as_object()?;
    content
        .iter()
        .find(|(media, _)| {
            let essence = media.split(';').next().unwrap_or("").trim();
            essence.eq_ignore_ascii_case("application/json") || essence.ends_with("+json")
        })
        .and_then(|(_, m)| m.get("schema"))
}
