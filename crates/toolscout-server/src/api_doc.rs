//! `GET /api/v1/openapi.json`: the server's own API as an OpenAPI 3.1 document, every
//! route of [`crate::routes()`] with an example (`assets/openapi.json`, compiled in).
//!
//! **Rationale:** the write API was found only in the code (#63); the document is what a
//! user of a REST API reads first, and a test holds it to the route table, so a route is
//! not added without being documented.

use std::sync::LazyLock;

use axum::Json;
use serde_json::Value;

/// The document as written, before its version is set.
const DOCUMENT: &str = include_str!("../assets/openapi.json");

/// The server's API as an OpenAPI 3.1 document, `info.version` this crate's version.
///
/// ```
/// let doc = toolscout_server::api_document();
/// assert_eq!(doc["openapi"], "3.1.0");
/// assert!(doc["paths"]["/tools/bundles"]["post"]["responses"]["201"].is_object());
/// ```
pub fn api_document() -> &'static Value {
    static PARSED: LazyLock<Value> = LazyLock::new(|| {
        let mut doc: Value = serde_json::from_str(DOCUMENT).unwrap_or_else(|e| {
            // A test reads the document: it cannot be broken in a build that passed.
            serde_json::json!({"openapi": "3.1.0", "info": {"title": format!("broken document: {e}")}})
        });
        doc["info"]["version"] = Value::String(env!("CARGO_PKG_VERSION").to_owned());
        doc
    });
    &PARSED
}

/// `GET /api/v1/openapi.json`.
pub(crate) async fn get() -> Json<&'static Value> {
    Json(api_document())
}
