//! The tool-discovery manifest: `GET /api/v1/tools` and its `ToolDefinition`s.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::derive_summary;
use crate::{Cost, Example, Metadata, Result, ToolSpec};

/// The protocol version this crate writes.
pub const PROTOCOL_VERSION: &str = "1.0";

/// The most tools one page of the manifest holds: the largest `?limit=` a server
/// answers.
pub const MAX_PAGE_LIMIT: usize = 1000;

/// The tools of one page of the manifest when a request gives `page_token` without
/// `limit`: what a server answers, and what a client asks for per page.
pub const DEFAULT_PAGE_LIMIT: usize = 500;

/// The error code of a page token issued for an earlier version of the catalog (status
/// 400): start again from the first page.
pub const STALE_PAGE_TOKEN: &str = "stale_page_token";

/// A whole manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolManifest {
    /// Protocol version, e.g. `"1.0"`.
    pub protocol_version: String,
    /// Who serves the tools.
    pub scenario: ScenarioInfo,
    /// The tools.
    pub tools: Vec<ToolDefinition>,
    /// Categories the tools point to.
    #[serde(default)]
    pub categories: Vec<ToolCategory>,
    /// When the manifest was generated, ISO 8601.
    pub generated_at: String,
    /// The token of the next page: present only on a page (a manifest asked for with
    /// `?limit=N`) that more tools follow, absent from a whole manifest and from the last
    /// page. Pass it back as `?page_token=` for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
}

/// The provider of a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioInfo {
    /// Identifier, e.g. `agent-manager`.
    pub name: String,
    /// Version (semver).
    pub version: String,
    /// What it is.
    #[serde(default)]
    pub description: String,
    /// Base URL for remote calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
}

/// A category of tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCategory {
    /// Identifier, referred to by `ToolDefinition::category`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// What the tools in it do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icon identifier for a UI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
}

/// One tool in a manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Tool name.
    pub name: String,
    /// What it does (shown to a model).
    pub description: String,
    /// Category id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Input schema.
    pub parameters: Value,
    /// Orchestration metadata.
    #[serde(default)]
    pub metadata: ManifestMetadata,
}

/// The `metadata` of a [`ToolDefinition`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestMetadata {
    /// Active by default.
    #[serde(default = "yes")]
    pub enabled_by_default: bool,
    /// Needs approval before each call.
    #[serde(default)]
    pub requires_approval: bool,
    /// Default timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u32>,
    /// Calls a minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_per_minute: Option<u32>,
    /// Relative cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_estimate: Option<Cost>,
    /// May take long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long_running: Option<bool>,
    /// Safe to retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// Labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Example calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<Example>,
    /// Described only: the tool has no implementation, and a call fails with
    /// `spec_only` (see [`SPEC_ONLY_FUNC`](crate::adapters::tool_file::SPEC_ONLY_FUNC)).
    /// Written only when true.
    #[serde(default, skip_serializing_if = "is_false")]
    pub spec_only: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn yes() -> bool {
    true
}

impl Default for ManifestMetadata {
    fn default() -> Self {
        ManifestMetadata {
            enabled_by_default: true,
            requires_approval: false,
            timeout_seconds: None,
            rate_limit_per_minute: None,
            cost_estimate: None,
            long_running: None,
            idempotent: None,
            tags: Vec::new(),
            examples: Vec::new(),
            spec_only: false,
        }
    }
}

/// The manifest definition of `spec`.
pub fn to_definition(spec: &ToolSpec) -> ToolDefinition {
    let m = &spec.metadata;
    ToolDefinition {
        name: spec.name.to_string(),
        description: spec.description_or_summary().to_owned(),
        category: spec.category.clone(),
        parameters: spec.parameters.clone(),
        metadata: ManifestMetadata {
            enabled_by_default: m.enabled_by_default,
            requires_approval: m.requires_approval,
            timeout_seconds: m.timeout_seconds,
            rate_limit_per_minute: m.rate_limit_per_minute,
            cost_estimate: Some(m.cost_estimate),
            long_running: Some(m.long_running),
            idempotent: Some(m.idempotent),
            tags: spec.tags.clone(),
            examples: spec.examples.clone(),
            spec_only: false,
        },
    }
}

/// Reads a manifest definition into a spec; the summary is the description's first sentence.
pub fn from_definition(def: &ToolDefinition) -> Result<ToolSpec> {
    let m = &def.metadata;
    let mut builder = ToolSpec::builder(&def.name, derive_summary(&def.name, &def.description))
        .description(&def.description)
        .parameters(def.parameters.clone())
        .metadata(Metadata {
            enabled_by_default: m.enabled_by_default,
            requires_approval: m.requires_approval,
            timeout_seconds: m.timeout_seconds,
            rate_limit_per_minute: m.rate_limit_per_minute,
            cost_estimate: m.cost_estimate.unwrap_or_default(),
            long_running: m.long_running.unwrap_or(false),
            idempotent: m.idempotent.unwrap_or(false),
            ..Metadata::default()
        });
    if let Some(c) = &def.category {
        builder = builder.category(c);
    }
    for t in &m.tags {
        builder = builder.tag(t);
    }
    for e in &m.examples {
        builder = builder.example(&e.description, e.input.clone());
    }
    builder.build()
}
