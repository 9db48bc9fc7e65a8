//! The built-in bundles: `files`, `web` and `data`, compiled into every binary.
//!
//! Their specs live here (in `builtin.json`, full level-3 detail); their native
//! functions live in `toolscout-invoke`, registered under the tool's name
//! ([`NATIVE_FUNCTIONS`]). The catalog serves them through the same API as stored tools;
//! only their enabled flags can change.
//!
//! ```
//! use toolscout_catalog::builtin;
//!
//! let bundles = builtin::bundles();
//! let slugs: Vec<&str> = bundles.iter().map(|b| b.slug.as_str()).collect();
//! assert_eq!(slugs, ["files", "web", "data"]);
//! let read_file = builtin::tool("read_file").unwrap();
//! assert_eq!(read_file.slug, "read-file");
//! assert_eq!(read_file.implementation(), serde_json::json!({"func": "read_file"}));
//! ```

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Value, json};
use toolscout_spec::ToolSpec;
use uuid::Uuid;

/// The names of the native functions the built-in tools call: one per tool, equal to
/// the tool's name.
pub const NATIVE_FUNCTIONS: [&str; 6] = [
    "read_file",
    "write_file",
    "search_files",
    "http_get",
    "json_query",
    "clock",
];

/// The slugs of the built-in bundles, in their order.
pub const BUNDLE_SLUGS: [&str; 3] = ["files", "web", "data"];

/// The built-in tool whose name `name` is, compared without regard to case: `READ_FILE`
/// is `read_file`'s.
///
/// ```
/// use toolscout_catalog::builtin;
///
/// assert_eq!(builtin::tool_name_like("Read_File"), Some("read_file"));
/// assert_eq!(builtin::tool_name_like("read_files"), None);
/// ```
pub fn tool_name_like(name: &str) -> Option<&'static str> {
    same_but_case(&NATIVE_FUNCTIONS, name)
}

/// The built-in bundle whose slug `slug` is, compared without regard to case.
pub fn bundle_slug_like(slug: &str) -> Option<&'static str> {
    same_but_case(&BUNDLE_SLUGS, slug)
}

/// The one of `builtins` (all lower case) that `name` is in another case.
fn same_but_case(builtins: &[&'static str], name: &str) -> Option<&'static str> {
    if name.is_ascii() {
        return builtins
            .iter()
            .find(|b| b.eq_ignore_ascii_case(name))
            .copied();
    }
    // Some letters outside ASCII are upper-case forms of ASCII ones (the Kelvin sign).
    let lower = name.to_lowercase();
    builtins.iter().find(|b| **b == lower).copied()
}

/// The version label of every built-in tool.
pub const VERSION: &str = "1";

const BUILTIN_JSON: &str = include_str!("builtin.json");

/// A bundle compiled into the binary.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuiltinBundle {
    /// Fixed id (a UUIDv7).
    pub id: Uuid,
    /// Slug: `files`, `web` or `data`.
    pub slug: String,
    /// Display name.
    pub display_name: String,
    /// What the bundle is for.
    pub description: String,
    /// Its tools.
    pub tools: Vec<BuiltinTool>,
}

/// A tool compiled into the binary: a native tool whose function has the tool's name.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BuiltinTool {
    /// Fixed id (a UUIDv7).
    pub id: Uuid,
    /// Slug, e.g. `read-file`.
    pub slug: String,
    /// The full spec; its version is [`VERSION`].
    pub spec: ToolSpec,
}

impl BuiltinTool {
    /// The native function's name (the tool's name).
    pub fn func(&self) -> &str {
        self.spec.name.as_str()
    }

    /// The `impl` block: `{"func": "<name>"}`.
    pub fn implementation(&self) -> Value {
        json!({ "func": self.func() })
    }
}

/// When the built-in tools were first released: their `createdAt` and `modifiedAt`.
pub fn released_at() -> DateTime<Utc> {
    DateTime::from_timestamp(1_717_200_000, 0).unwrap_or_default()
}

/// The built-in bundles, in a fixed order.
///
/// # Panics
/// Never in a released build: a test checks that the embedded JSON parses and validates.
pub fn bundles() -> Vec<BuiltinBundle> {
    let mut bundles: Vec<BuiltinBundle> =
        serde_json::from_str(BUILTIN_JSON).expect("the embedded built-in catalog is valid JSON");
    for b in &mut bundles {
        for t in &mut b.tools {
            t.spec.version = Some(VERSION.to_owned());
        }
    }
    bundles
}

/// The specs of every built-in tool.
pub fn specs() -> Vec<ToolSpec> {
    bundles()
        .into_iter()
        .flat_map(|b| b.tools)
        .map(|t| t.spec)
        .collect()
}

/// The built-in tool with this name.
pub fn tool(name: &str) -> Option<BuiltinTool> {
    bundles()
        .into_iter()
        .flat_map(|b| b.tools)
        .find(|t| t.spec.name == name)
}

#[cfg(test)]
mod tests {
    use toolscout_spec::Level;
    use toolscout_spec::name::{validate_slug, validate_version};

    use super::*;

    #[test]
    fn builtin_catalog_is_valid_and_complete() {
        let bundles = bundles();
        let mut funcs = Vec::new();
        for b in &bundles {
            validate_slug(&b.slug).unwrap();
            assert_eq!(b.id.get_version_num(), 7, "{}", b.slug);
            for t in &b.tools {
                validate_slug(&t.slug).unwrap();
                validate_version(VERSION).unwrap();
                assert_eq!(t.id.get_version_num(), 7, "{}", t.slug);
                t.spec.validate().unwrap();
                assert!(!t.spec.examples.is_empty(), "{} has no examples", t.slug);
                assert!(!t.spec.errors.is_empty(), "{} has no errors", t.slug);
                assert!(!t.spec.notes.is_empty(), "{} has no notes", t.slug);
                assert!(t.spec.disclose(Level::L3).tokens() > 100);
                funcs.push(t.func().to_owned());
            }
        }
        assert_eq!(funcs, NATIVE_FUNCTIONS);
        let slugs: Vec<&str> = bundles.iter().map(|b| b.slug.as_str()).collect();
        assert_eq!(slugs, BUNDLE_SLUGS);
        for name in NATIVE_FUNCTIONS.iter().chain(&BUNDLE_SLUGS) {
            assert_eq!(*name, name.to_lowercase());
        }
    }

    #[test]
    fn names_like_a_builtin_are_found_in_any_case() {
        assert_eq!(tool_name_like("read_file"), Some("read_file"));
        assert_eq!(tool_name_like("READ_FILE"), Some("read_file"));
        assert_eq!(tool_name_like("Clock"), Some("clock"));
        // The Kelvin sign is an upper-case k.
        assert_eq!(tool_name_like("cloc\u{212A}"), Some("clock"));
        assert_eq!(tool_name_like("read-file"), None);
        assert_eq!(tool_name_like("my_read_file"), None);
        assert_eq!(bundle_slug_like("FILES"), Some("files"));
        assert_eq!(bundle_slug_like("Web"), Some("web"));
        assert_eq!(bundle_slug_like("files-2"), None);
    }

    #[test]
    fn argument_schemas_match_the_native_functions() {
        let required = |name: &str| -> Vec<String> {
            let t = tool(name).unwrap();
            t.spec
                .parameter_names()
                .into_iter()
                .filter(|p| t.spec.is_required(p))
                .collect()
        };
        assert_eq!(required("read_file"), ["file_path"]);
        assert_eq!(required("write_file"), ["file_path", "content"]);
        assert_eq!(required("search_files"), ["pattern"]);
        assert_eq!(required("http_get"), ["url"]);
        assert_eq!(required("json_query"), ["value", "path"]);
        assert_eq!(required("clock"), ["action"]);
        let names = |name: &str| tool(name).unwrap().spec.parameter_names();
        assert_eq!(names("read_file"), ["file_path", "offset", "limit"]);
        assert_eq!(names("write_file"), ["file_path", "content", "mode"]);
        assert_eq!(names("search_files"), ["pattern", "path", "max_results"]);
        assert_eq!(names("http_get"), ["url", "headers", "max_bytes"]);
        assert_eq!(names("clock"), ["action", "time_zone", "time"]);
    }
}
