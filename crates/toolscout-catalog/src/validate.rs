//! The checks every write goes through: PUT, import, and loading from disk.

use serde_json::Value;
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::tool_file::{ToolFile, ToolType};
use toolscout_spec::name::{sanitize_name, validate_slug, validate_version};
use uuid::Uuid;

use crate::{Error, Result};

/// HTTP methods an HTTP tool may use.
const METHODS: [&str; 6] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"];

/// An id must be a UUIDv7.
pub(crate) fn check_id(what: &'static str, id: Uuid) -> Result<()> {
    let version = id.get_version_num();
    if version == 7 {
        Ok(())
    } else {
        Err(Error::Id { what, id, version })
    }
}

/// What [`check_unreserved`] looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claim {
    /// The name of a new tool.
    ToolName,
    /// The slug of a new bundle.
    BundleSlug,
}

/// The one rule that decides whether a tool name or a bundle slug may be taken: in a
/// catalog that serves the built-in bundles (`builtins`), not the name of a built-in tool
/// or the slug of a built-in bundle, in any case.
///
/// **Rationale:** a model asks for a tool by name; a stored tool named `read_file` (or
/// `READ_FILE`, which a model or a provider may treat as the same name) would answer in
/// the built-in's place once the built-in is disabled, with another implementation and
/// other guards. Without the built-ins the names mean nothing in particular, and a
/// program may define its own `read_file`.
pub(crate) fn check_unreserved(builtins: bool, claim: Claim, name: &str) -> Result<()> {
    if !builtins {
        return Ok(());
    }
    let (what, builtin) = match claim {
        Claim::ToolName => ("tool", crate::builtin::tool_name_like(name)),
        Claim::BundleSlug => ("bundle", crate::builtin::bundle_slug_like(name)),
    };
    match builtin {
        Some(builtin) => Err(Error::ReservedName {
            what,
            name: name.to_owned(),
            builtin: builtin.to_owned(),
        }),
        None => Ok(()),
    }
}

pub(crate) fn check_slug(slug: &str) -> Result<()> {
    validate_slug(slug).map_err(|source| Error::Label { source })
}

pub(crate) fn check_version(version: &str) -> Result<()> {
    validate_version(version).map_err(|source| Error::Label { source })
}

/// Checks a tool file as a PUT does and returns its spec.
pub(crate) fn check_tool_file(file: &ToolFile) -> Result<ToolSpec> {
    check_slug(&file.slug)?;
    check_version(&file.version)?;
    let spec = file.to_spec().map_err(|source| Error::Spec {
        slug: file.slug.clone(),
        version: file.version.clone(),
        source,
    })?;
    if file.tool_type == ToolType::Recipe {
        // Named as the checks against the catalog name it (`recipe 'r': step 'a': …`).
        toolscout_spec::recipe::Recipe::parse(&file.implementation).map_err(|source| {
            Error::Recipe {
                name: spec.name.to_string(),
                source,
            }
        })?;
    }
    check_implementation(
        &file.slug,
        &file.version,
        file.tool_type,
        &file.implementation,
    )?;
    Ok(spec)
}

fn check_implementation(slug: &str, version: &str, ty: ToolType, block: &Value) -> Result<()> {
    let err = |reason: String| Error::Implementation {
        slug: slug.to_owned(),
        version: version.to_owned(),
        reason,
    };
    let Some(obj) = block.as_object() else {
        return Err(err(format!("expected an object, found {block}")));
    };
    match ty {
        ToolType::Native => match obj.get("func") {
            Some(Value::String(f)) if !f.trim().is_empty() => Ok(()),
            Some(other) => Err(err(format!(
                "\"func\" must name a registered native function, found {other}"
            ))),
            None => Err(err(
                "a native tool needs {\"func\": \"<registered function name>\"}".to_owned(),
            )),
        },
        ToolType::Recipe => toolscout_spec::recipe::Recipe::parse(block)
            .map(|_| ())
            .map_err(|e| err(e.to_string())),
        ToolType::Http => {
            match obj.get("urlTemplate") {
                Some(Value::String(u)) if u.starts_with("http://") || u.starts_with("https://") => {
                }
                Some(other) => {
                    return Err(err(format!(
                        "\"urlTemplate\" must start with http:// or https://, found {other}"
                    )));
                }
                None => return Err(err("an HTTP tool needs a \"urlTemplate\"".to_owned())),
            }
            match obj.get("method") {
                None => Ok(()),
                Some(Value::String(m)) if METHODS.contains(&m.as_str()) => Ok(()),
                Some(other) => Err(err(format!(
                    "\"method\" must be one of {}, found {other}",
                    METHODS.join(", ")
                ))),
            }
        }
    }
}

/// A spec to show for a tool whose definition cannot be loaded: its name and a summary,
/// nothing to call. `None` when even that cannot be made.
pub(crate) fn placeholder_spec(file: &ToolFile) -> Option<ToolSpec> {
    let name = sanitize_name(file.name.as_deref().unwrap_or(&file.slug));
    let summary = [
        file.summary.as_deref().unwrap_or(""),
        &file.display_name,
        &file.slug,
    ]
    .into_iter()
    .map(|s| s.lines().next().unwrap_or("").trim())
    .find(|s| !s.is_empty())
    .unwrap_or("unavailable tool")
    .to_owned();
    ToolSpec::builder(name, summary)
        .description(&file.description)
        .version(&file.version)
        .build()
        .ok()
}
