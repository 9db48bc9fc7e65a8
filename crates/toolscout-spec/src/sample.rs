//! A small sample catalog (file, search, weather and agent tools) for examples, docs
//! and snapshot tests. It is the canonical ToolSpec JSON format, in
//! `src/sample_catalog.json`.

use crate::ToolSpec;

/// The sample catalog's JSON text.
pub const SAMPLE_JSON: &str = include_str!("sample_catalog.json");

/// The sample tools.
///
/// # Panics
/// Never in a released build: a test checks that the embedded JSON parses and validates.
pub fn catalog() -> Vec<ToolSpec> {
    let specs: Vec<ToolSpec> =
        serde_json::from_str(SAMPLE_JSON).expect("the embedded sample catalog is valid JSON");
    for s in &specs {
        if let Err(e) = s.validate() {
            panic!("the embedded sample catalog is invalid: {e}");
        }
    }
    specs
}
