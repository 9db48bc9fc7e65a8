//! The flat-file `tool.json` of the tools spec: one file per tool version.
//!
//! The spec's fields (`bundleID`, `slug`, `version`, `displayName`, `argSchema`,
//! `outputSchema`, `impl`, `isEnabled`, `isBuiltIn`, `createdAt`, `modifiedAt`) are kept
//! as they are; the ToolSpec fields the spec has no place for (`name`, `summary`,
//! `usage`, `returns`, `examples`, `errors`, `notes`, `utterances`, `category`, `tags`,
//! `metadata`) are
//! extra keys, all optional, so a plain spec file still reads.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::derive_summary;
use crate::name::{slug_from_name, validate_slug, validate_version};
use crate::{ErrorCase, Example, Metadata, Result, ToolSpec};

/// The `schemaVersion` this crate writes.
pub const SCHEMA_VERSION: &str = "toolscout.tool/1";

/// The native function of a *spec-only* tool: one with a spec and no way to run it (no
/// native function, no HTTP template), e.g. a tool imported from a JSONL tool list. Such a
/// tool is stored as a native tool whose `impl` is `{"func": "spec_only"}`; it is found,
/// listed and described like any other, every listing says it is spec only, and a call
/// fails with the `spec_only` error kind.
pub const SPEC_ONLY_FUNC: &str = "spec_only";

/// How a tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolType {
    /// A Rust function registered in the binary (the spec's `"go"` type reads as this).
    #[serde(alias = "go")]
    Native,
    /// A templated HTTP call.
    Http,
    /// Calls of other catalog tools, run as one call ([`crate::recipe`]).
    Recipe,
}

/// One `tool.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolFile {
    /// Format version of the file.
    #[serde(default = "schema_version")]
    pub schema_version: String,
    /// The tool's id (UUIDv7), when it has one.
    #[serde(rename = "toolID", default, skip_serializing_if = "Option::is_none")]
    pub tool_id: Option<Uuid>,
    /// The bundle the tool belongs to (UUIDv7).
    #[serde(rename = "bundleID")]
    pub bundle_id: Uuid,
    /// Short identifier, unique with `version` inside the bundle.
    pub slug: String,
    /// Opaque version label.
    pub version: String,
    /// Human display name.
    #[serde(default)]
    pub display_name: String,
    /// What the tool does.
    #[serde(default)]
    pub description: String,
    /// How the tool runs.
    #[serde(rename = "type")]
    pub tool_type: ToolType,
    /// Whether calls are allowed.
    #[serde(default = "yes")]
    pub is_enabled: bool,
    /// Whether the tool is compiled into the binary (read-only but for `isEnabled`).
    #[serde(default)]
    pub is_built_in: bool,
    /// JSON Schema of the arguments.
    pub arg_schema: Value,
    /// JSON Schema of the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The implementation block: `{"func": …}` for native tools, the HTTP template otherwise.
    #[serde(rename = "impl", default)]
    pub implementation: Value,
    /// First insertion (immutable).
    pub created_at: DateTime<Utc>,
    /// Last structural change.
    pub modified_at: DateTime<Utc>,
    /// Tool name shown to models (defaults to the slug).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// One-line summary (defaults to the description's first sentence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Usage line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<String>,
    /// What a call returns.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub returns: String,
    /// Example calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Example>,
    /// Failure modes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorCase>,
    /// Notes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Sample requests in a user's words ([`ToolSpec::utterances`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub utterances: Vec<String>,
    /// Category id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Orchestration metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

fn schema_version() -> String {
    SCHEMA_VERSION.to_owned()
}

fn yes() -> bool {
    true
}

/// Where a tool file lives and how it runs: what a [`ToolSpec`] does not say.
#[derive(Debug, Clone, PartialEq)]
pub struct FileInfo {
    /// The bundle.
    pub bundle_id: Uuid,
    /// The tool's id.
    pub tool_id: Option<Uuid>,
    /// How it runs.
    pub tool_type: ToolType,
    /// Its implementation block.
    pub implementation: Value,
    /// Enabled flag.
    pub is_enabled: bool,
    /// Built-in flag.
    pub is_built_in: bool,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub modified_at: DateTime<Utc>,
}

impl ToolFile {
    /// The file for `spec`. The slug derives from the name (`read_file` → `read-file`), the
    /// version is the spec's or `"1"`.
    pub fn from_spec(spec: &ToolSpec, info: FileInfo) -> ToolFile {
        ToolFile {
            schema_version: schema_version(),
            tool_id: info.tool_id,
            bundle_id: info.bundle_id,
            slug: slug_from_name(&spec.name),
            version: spec.version.clone().unwrap_or_else(|| "1".to_owned()),
            display_name: spec.title.clone().unwrap_or_else(|| spec.name.to_string()),
            description: spec.description.clone(),
            tool_type: info.tool_type,
            is_enabled: info.is_enabled,
            is_built_in: info.is_built_in,
            arg_schema: spec.parameters.clone(),
            output_schema: spec.output_schema.clone(),
            implementation: info.implementation,
            created_at: info.created_at,
            modified_at: info.modified_at,
            name: Some(spec.name.to_string()),
            summary: Some(spec.summary.clone()),
            usage: spec.usage.clone(),
            returns: spec.returns.clone(),
            examples: spec.examples.clone(),
            errors: spec.errors.clone(),
            notes: spec.notes.clone(),
            utterances: spec.utterances.clone(),
            category: spec.category.clone(),
            tags: spec.tags.clone(),
            metadata: Some(spec.metadata.clone()),
        }
    }

    /// Checks the slug and version rules.
    pub fn validate(&self) -> Result<()> {
        validate_slug(&self.slug)?;
        validate_version(&self.version)
    }

    /// The tool's spec, validated. The name is `name`, or the slug when there is none.
    pub fn to_spec(&self) -> Result<ToolSpec> {
        self.validate()?;
        let name = self.name.clone().unwrap_or_else(|| self.slug.clone());
        let summary = self
            .summary
            .clone()
            .unwrap_or_else(|| derive_summary(&self.display_name, &self.description));
        let mut b = ToolSpec::builder(name, summary)
            .description(&self.description)
            .returns(&self.returns)
            .parameters(self.arg_schema.clone())
            .version(&self.version)
            .metadata(self.metadata.clone().unwrap_or_default());
        if !self.display_name.is_empty() {
            b = b.title(&self.display_name);
        }
        if let Some(u) = &self.usage {
            b = b.usage(u);
        }
        if let Some(o) = &self.output_schema {
            b = b.output_schema(o.clone());
        }
        if let Some(c) = &self.category {
            b = b.category(c);
        }
        for t in &self.tags {
            b = b.tag(t);
        }
        for e in &self.examples {
            b = b.example(&e.description, e.input.clone());
        }
        for e in &self.errors {
            b = b.error(&e.kind, &e.when);
        }
        for n in &self.notes {
            b = b.note(n);
        }
        for u in &self.utterances {
            b = b.utterance(u);
        }
        if self.tool_type == ToolType::Recipe
            && let Ok(recipe) = crate::recipe::Recipe::parse(&self.implementation)
        {
            b = b.steps(recipe.outline());
        }
        b.build()
    }
}
