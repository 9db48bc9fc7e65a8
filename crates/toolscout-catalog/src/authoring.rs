//! [`AuthoredTool`]: a tool version as a person writes it (or sends it to the REST API),
//! without the fields the catalog fills in.

use serde_json::{Map, Value, json};
use toolscout_spec::adapters::tool_file::ToolFile;
use uuid::Uuid;

use crate::{Error, Result, ToolPut};

/// A tool version in its authoring form: `slug`, `version`, `description`, `type`,
/// `impl` and, optionally, `argSchema` (no arguments when absent), `name`, `summary`,
/// `examples` and the other fields of a `tool.json`. `toolID`, `createdAt` and
/// `modifiedAt` are filled (the catalog gives a stored tool its own id and times), and
/// `bundleID` may come from the caller instead.
///
/// ```
/// use serde_json::json;
/// use toolscout_catalog::AuthoredTool;
///
/// let body = json!({
///     "slug": "get-weather",
///     "version": "1",
///     "name": "get_weather",
///     "description": "Current weather for a city.",
///     "type": "http",
///     "argSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
///     "impl": {"method": "GET", "urlTemplate": "https://api.example.com/weather?q=${city}"}
/// });
/// let bundle = uuid::Uuid::now_v7();
/// let tool = AuthoredTool::from_json(body.as_object().unwrap().clone(), Some(bundle))?;
/// assert_eq!((tool.bundle, tool.slug.as_str(), tool.version.as_str()), (bundle, "get-weather", "1"));
/// assert_eq!(tool.put.spec.name, "get_weather");
/// # Ok::<(), toolscout_catalog::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AuthoredTool {
    /// The bundle it goes into.
    pub bundle: Uuid,
    /// Its slug in the bundle.
    pub slug: String,
    /// Its version label.
    pub version: String,
    /// What [`crate::Catalog::put_tool`] stores.
    pub put: ToolPut,
}

impl AuthoredTool {
    /// Reads an authoring body. `bundle`, when given, is the bundle (the body's
    /// `bundleID` is then ignored); otherwise the body must name it. Fails with
    /// [`Error::ToolBody`] saying what is missing or wrong.
    pub fn from_json(mut body: Map<String, Value>, bundle: Option<Uuid>) -> Result<AuthoredTool> {
        let invalid = |reason: String| Error::ToolBody { reason };
        if let Some(bundle) = bundle {
            body.insert("bundleID".to_owned(), json!(bundle.to_string()));
        }
        if matches!(body.get("bundleID"), None | Some(Value::Null)) {
            return Err(invalid(
                "no bundle: give \"bundleID\" in the body, or name the bundle".to_owned(),
            ));
        }
        let now = json!(chrono::Utc::now());
        body.entry("createdAt").or_insert_with(|| now.clone());
        body.entry("modifiedAt").or_insert(now);
        body.entry("argSchema")
            .or_insert_with(toolscout_spec::empty_object_schema);
        if !body.contains_key("type") {
            return Err(invalid(
                "the body needs \"type\": \"native\" (or \"go\") with impl {\"func\": …}, \"http\" with an HTTP template, or \"recipe\" with impl {\"steps\": […]}".to_owned(),
            ));
        }
        let file: ToolFile = serde_json::from_value(Value::Object(body))
            .map_err(|e| invalid(format!("invalid tool body: {e}")))?;
        let spec = file
            .to_spec()
            .map_err(|e| invalid(format!("invalid tool body: {e}")))?;
        Ok(AuthoredTool {
            bundle: file.bundle_id,
            put: ToolPut {
                spec,
                tool_type: file.tool_type,
                implementation: file.implementation,
                is_enabled: file.is_enabled,
            },
            slug: file.slug,
            version: file.version,
        })
    }
}
