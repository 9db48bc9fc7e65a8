//! The catalog's records and the arguments of its operations.

use std::fmt;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::tool_file::{FileInfo, SPEC_ONLY_FUNC, ToolFile, ToolType};
use uuid::Uuid;

use crate::Result;
use crate::validate::{check_slug, check_tool_file, check_version};

/// A tenant's id (a UUIDv7, never reused).
pub type TenantId = Uuid;

/// A named group of tools with one on/off switch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Bundle {
    /// The bundle's id (UUIDv7).
    pub id: Uuid,
    /// Short identifier: Unicode letters, digits and `-`.
    pub slug: String,
    /// Human display name.
    pub display_name: String,
    /// What the bundle's tools are for.
    pub description: String,
    /// Whether the bundle's tools may be called.
    pub is_enabled: bool,
    /// Whether the bundle is compiled into the binary.
    pub is_built_in: bool,
    /// When the bundle was soft-deleted, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soft_deleted_at: Option<DateTime<Utc>>,
    /// First insertion.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub modified_at: DateTime<Utc>,
    /// The tenant that owns the bundle; `None`: the operator's (and the built-ins').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<TenantId>,
    /// Whether every tenant may read and call its tools (only its owner writes it).
    #[serde(default)]
    pub shared: bool,
}

impl Bundle {
    /// Whether the bundle's tools may be listed as enabled: it is enabled and not deleted.
    pub fn is_active(&self) -> bool {
        self.is_enabled && self.soft_deleted_at.is_none()
    }
}

/// The body of a bundle PUT: everything but the id.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct BundlePut {
    /// Short identifier.
    pub slug: String,
    /// Human display name (defaults to the slug when empty).
    pub display_name: String,
    /// What the bundle's tools are for.
    pub description: String,
    /// Whether the bundle's tools may be called.
    pub is_enabled: bool,
}

impl BundlePut {
    /// An enabled bundle with this slug and no description.
    pub fn new(slug: impl Into<String>) -> Self {
        BundlePut {
            slug: slug.into(),
            display_name: String::new(),
            description: String::new(),
            is_enabled: true,
        }
    }
    /// Sets the display name.
    pub fn with_display_name(mut self, name: impl Into<String>) -> Self {
        self.display_name = name.into();
        self
    }
    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = description.into();
        self
    }
    /// Sets the enabled flag.
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.is_enabled = enabled;
        self
    }
}

/// How often a tool was called.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Calls recorded with [`crate::Catalog::record_call`].
    pub call_count: u64,
    /// The latest call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_called_at: Option<DateTime<Utc>>,
}

/// Why a tool is listed as disabled. The first reason that applies is given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum DisabledReason {
    /// The tool's own flag is off.
    Disabled,
    /// Its bundle is disabled.
    BundleDisabled,
    /// Its bundle was soft-deleted.
    BundleDeleted,
    /// It is a native tool whose function this binary does not register.
    NativeNotRegistered {
        /// The function named by the `impl` block.
        func: String,
    },
    /// Its stored definition cannot be loaded; the file is left as it is.
    InvalidDefinition {
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for DisabledReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DisabledReason::Disabled => f.write_str("the tool is disabled"),
            DisabledReason::BundleDisabled => f.write_str("its bundle is disabled"),
            DisabledReason::BundleDeleted => f.write_str("its bundle was deleted"),
            DisabledReason::NativeNotRegistered { func } => write!(
                f,
                "native function '{func}' is not registered in this binary"
            ),
            DisabledReason::InvalidDefinition { reason } => {
                write!(f, "its definition cannot be loaded: {reason}")
            }
        }
    }
}

/// One version of one tool, as the catalog serves it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The tool's id (UUIDv7).
    pub id: Uuid,
    /// The bundle it belongs to.
    pub bundle_id: Uuid,
    /// Short identifier, unique with `version` inside the bundle.
    pub slug: String,
    /// Opaque version label.
    pub version: String,
    /// The full description at every disclosure level.
    pub spec: ToolSpec,
    /// How the tool runs.
    #[serde(rename = "type")]
    pub tool_type: ToolType,
    /// The `impl` block: `{"func": …}` for native tools, the HTTP template otherwise.
    #[serde(rename = "impl")]
    pub implementation: Value,
    /// The tool's own enabled flag, as stored.
    pub is_enabled: bool,
    /// Whether the tool is compiled into the binary.
    pub is_built_in: bool,
    /// First insertion (immutable).
    pub created_at: DateTime<Utc>,
    /// Last structural change.
    pub modified_at: DateTime<Utc>,
    /// Call count and latest call.
    pub usage: Usage,
    /// Why the tool cannot be called now; `None` when it can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled_reason: Option<DisabledReason>,
    /// The file the tool is stored in; `None` for built-in tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
}

impl Tool {
    /// Whether the tool can be called: it, its bundle and its implementation are all there.
    pub fn is_callable(&self) -> bool {
        self.disabled_reason.is_none()
    }

    /// How strongly this tool holds its name against others of the same name.
    pub fn name_claim(&self) -> NameClaim {
        NameClaim::new(self.is_callable(), self.is_built_in, self.modified_at)
    }

    /// A stored, non-built-in tool read from its `tool.json` (`spec` is the file's checked
    /// spec), with no usage counted yet.
    pub(crate) fn from_file(
        id: Uuid,
        file: &ToolFile,
        spec: ToolSpec,
        path: Option<PathBuf>,
        disabled_reason: Option<DisabledReason>,
    ) -> Tool {
        Tool {
            id,
            bundle_id: file.bundle_id,
            slug: file.slug.clone(),
            version: file.version.clone(),
            spec,
            tool_type: file.tool_type,
            implementation: file.implementation.clone(),
            is_enabled: file.is_enabled,
            is_built_in: false,
            created_at: file.created_at,
            modified_at: file.modified_at,
            usage: Usage::default(),
            disabled_reason,
            path,
        }
    }

    /// The tool as a `tool.json` (what the catalog stores, and what import and export carry).
    pub fn to_file(&self) -> ToolFile {
        let mut file = ToolFile::from_spec(
            &self.spec,
            FileInfo {
                bundle_id: self.bundle_id,
                tool_id: Some(self.id),
                tool_type: self.tool_type,
                implementation: self.implementation.clone(),
                is_enabled: self.is_enabled,
                is_built_in: self.is_built_in,
                created_at: self.created_at,
                modified_at: self.modified_at,
            },
        );
        file.slug.clone_from(&self.slug);
        file.version.clone_from(&self.version);
        file
    }

    /// The native function of a native tool.
    pub fn native_func(&self) -> Option<&str> {
        match self.tool_type {
            ToolType::Native => self.implementation.get("func").and_then(Value::as_str),
            ToolType::Http | ToolType::Recipe => None,
        }
    }

    /// Whether the tool is spec only: described, never run
    /// ([`SPEC_ONLY_FUNC`](toolscout_spec::adapters::tool_file::SPEC_ONLY_FUNC)).
    pub fn is_spec_only(&self) -> bool {
        self.native_func() == Some(SPEC_ONLY_FUNC)
    }
}

/// What the catalog keeps in memory of every tool: enough to list, filter, count and find
/// it by name without reading its file. [`crate::Catalog::heads`] lists them; the whole
/// [`Tool`] (its spec at every level, its implementation) is read from its file when it
/// is asked for ([`crate::Catalog::tool`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolHead {
    /// The tool's id (UUIDv7).
    pub id: Uuid,
    /// The bundle it belongs to.
    pub bundle_id: Uuid,
    /// Short identifier, unique with `version` inside the bundle.
    pub slug: String,
    /// Opaque version label.
    pub version: String,
    /// The tool name the model calls.
    pub name: String,
    /// The one-line summary (level 1).
    pub summary: String,
    /// The spec's category, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The spec's tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// How the tool runs.
    #[serde(rename = "type")]
    pub tool_type: ToolType,
    /// The native function of a native tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub func: Option<String>,
    /// The tool's own enabled flag, as stored.
    pub is_enabled: bool,
    /// Whether the tool is compiled into the binary.
    pub is_built_in: bool,
    /// First insertion (immutable).
    pub created_at: DateTime<Utc>,
    /// Last structural change.
    pub modified_at: DateTime<Utc>,
    /// Why the tool cannot be called now; `None` when it can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled_reason: Option<DisabledReason>,
    /// The spec's part of the catalog identity
    /// ([`toolscout_spec::identity::tool_digest`]): it changes with the name, version,
    /// description or parameters.
    pub digest: Uuid,
}

impl ToolHead {
    /// The head of `tool`.
    pub fn of(tool: &Tool) -> ToolHead {
        ToolHead {
            id: tool.id,
            bundle_id: tool.bundle_id,
            slug: tool.slug.clone(),
            version: tool.version.clone(),
            name: tool.spec.name.to_string(),
            summary: tool.spec.summary.clone(),
            category: tool.spec.category.clone(),
            tags: tool.spec.tags.clone(),
            tool_type: tool.tool_type,
            func: tool.native_func().map(str::to_owned),
            is_enabled: tool.is_enabled,
            is_built_in: tool.is_built_in,
            created_at: tool.created_at,
            modified_at: tool.modified_at,
            disabled_reason: tool.disabled_reason.clone(),
            digest: toolscout_spec::identity::tool_digest(&tool.spec),
        }
    }

    /// Whether the tool can be called: it, its bundle and its implementation are all there.
    pub fn is_callable(&self) -> bool {
        self.disabled_reason.is_none()
    }

    /// Whether the tool is spec only (see [`Tool::is_spec_only`]).
    pub fn is_spec_only(&self) -> bool {
        self.tool_type == ToolType::Native && self.func.as_deref() == Some(SPEC_ONLY_FUNC)
    }

    /// How strongly this tool holds its name against others of the same name.
    pub fn name_claim(&self) -> NameClaim {
        NameClaim::new(self.is_callable(), self.is_built_in, self.modified_at)
    }

    /// Level 1: the name and the one-line summary, as the spec discloses them.
    pub fn level1(&self) -> toolscout_spec::Level1 {
        toolscout_spec::Level1 {
            name: self.name.clone(),
            summary: self.summary.clone(),
        }
    }
}

/// The body of a tool PUT: the spec and how the tool runs.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct ToolPut {
    /// The tool's description (its `version` is replaced by the PUT's version label).
    pub spec: ToolSpec,
    /// How the tool runs.
    pub tool_type: ToolType,
    /// `{"func": "<name>"}` for native tools; the HTTP template for HTTP tools; the
    /// steps for recipes.
    pub implementation: Value,
    /// Whether calls are allowed.
    pub is_enabled: bool,
}

impl ToolPut {
    /// A native tool run by the registered function `func`.
    pub fn native(spec: ToolSpec, func: &str) -> Self {
        ToolPut {
            spec,
            tool_type: ToolType::Native,
            implementation: serde_json::json!({ "func": func }),
            is_enabled: true,
        }
    }
    /// A spec-only tool: described, never run (see [`Tool::is_spec_only`]).
    pub fn spec_only(spec: ToolSpec) -> Self {
        ToolPut::native(spec, SPEC_ONLY_FUNC)
    }
    /// Whether this is a spec-only tool (see [`Tool::is_spec_only`]).
    pub fn is_spec_only(&self) -> bool {
        self.tool_type == ToolType::Native
            && self.implementation.get("func").and_then(Value::as_str) == Some(SPEC_ONLY_FUNC)
    }
    /// An HTTP tool with this template (see the tools spec for its fields).
    pub fn http(spec: ToolSpec, template: Value) -> Self {
        ToolPut {
            spec,
            tool_type: ToolType::Http,
            implementation: template,
            is_enabled: true,
        }
    }
    /// A recipe: calls of other catalog tools, the `impl` block of
    /// [`toolscout_spec::recipe`] (`{"steps": […], "result": …}`).
    pub fn recipe(spec: ToolSpec, block: Value) -> Self {
        ToolPut {
            spec,
            tool_type: ToolType::Recipe,
            implementation: block,
            is_enabled: true,
        }
    }
    /// Sets the enabled flag.
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.is_enabled = enabled;
        self
    }
}

/// Which bundles [`crate::Catalog::list_bundles`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct BundleQuery {
    /// Only these bundles (all when empty).
    pub bundle_ids: Vec<Uuid>,
    /// Include disabled bundles.
    pub include_disabled: bool,
    /// Include soft-deleted bundles (implies disabled ones).
    pub include_deleted: bool,
    /// Page size; 0 means [`DEFAULT_LISTING_PAGE_SIZE`].
    pub page_size: usize,
    /// The `next_page_token` of the previous page.
    pub page_token: Option<String>,
}

impl BundleQuery {
    /// Only these bundles.
    pub fn with_bundle_ids(mut self, ids: &[Uuid]) -> Self {
        self.bundle_ids = ids.to_vec();
        self
    }
    /// Include disabled bundles.
    pub fn with_include_disabled(mut self, yes: bool) -> Self {
        self.include_disabled = yes;
        self
    }
    /// Include soft-deleted bundles.
    pub fn with_include_deleted(mut self, yes: bool) -> Self {
        self.include_deleted = yes;
        self
    }
    /// Sets the page size.
    pub fn with_page_size(mut self, size: usize) -> Self {
        self.page_size = size;
        self
    }
    /// Continues after a previous page.
    pub fn with_page_token(mut self, token: Option<&str>) -> Self {
        self.page_token = token.map(str::to_owned);
        self
    }
}

/// Which tools [`crate::Catalog::list_tools`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[must_use]
pub struct ToolQuery {
    /// Only tools that carry every one of these tags.
    pub tags: Vec<String>,
    /// Only tools in these bundles (all when empty).
    pub bundle_ids: Vec<Uuid>,
    /// Include tools that cannot be called (see [`Tool::disabled_reason`]).
    pub include_disabled: bool,
    /// Page size; 0 means [`DEFAULT_LISTING_PAGE_SIZE`].
    pub page_size: usize,
    /// The `next_page_token` of the previous page.
    pub page_token: Option<String>,
}

impl ToolQuery {
    /// Only tools with every one of these tags.
    pub fn with_tags(mut self, tags: &[&str]) -> Self {
        self.tags = tags.iter().map(|t| (*t).to_owned()).collect();
        self
    }
    /// Only tools in these bundles.
    pub fn with_bundle_ids(mut self, ids: &[Uuid]) -> Self {
        self.bundle_ids = ids.to_vec();
        self
    }
    /// Include tools that cannot be called.
    pub fn with_include_disabled(mut self, yes: bool) -> Self {
        self.include_disabled = yes;
        self
    }
    /// Sets the page size.
    pub fn with_page_size(mut self, size: usize) -> Self {
        self.page_size = size;
        self
    }
    /// Continues after a previous page.
    pub fn with_page_token(mut self, token: Option<&str>) -> Self {
        self.page_token = token.map(str::to_owned);
        self
    }
}

/// The page size of a listing (bundles, tool versions, the servers' `tools/list`) that
/// does not set one: pages for programs, larger than the pages of tools a model reads
/// (`toolscout_search::DEFAULT_LISTING_PAGE_SIZE`).
pub const DEFAULT_LISTING_PAGE_SIZE: usize = 100;
/// The most items one page of a listing may hold.
pub const MAX_LISTING_PAGE_SIZE: usize = 1000;

/// Which of several tools of one name (versions, bundles) a name stands for: the greater
/// claim. Callable first, then a built-in one, then the one changed last.
///
/// **Rationale:** a catalog entry must not shadow a built-in tool (and its approval rules)
/// by taking its name; only a disabled built-in gives its name up. Every lookup by name
/// (the toolbox's, the discover listing's, the CLI's) orders by this one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct NameClaim {
    // The field order is the order of precedence (the derived `Ord` compares in it).
    callable: bool,
    built_in: bool,
    modified_at: DateTime<Utc>,
}

impl NameClaim {
    /// The claim of a tool that is callable or not, built in or not, changed at
    /// `modified_at`.
    pub fn new(callable: bool, built_in: bool, modified_at: DateTime<Utc>) -> Self {
        NameClaim {
            callable,
            built_in,
            modified_at,
        }
    }

    /// Whether the tool can be called now.
    pub fn callable(&self) -> bool {
        self.callable
    }
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Page<T> {
    /// The items, ordered by id (so by creation time).
    pub items: Vec<T>,
    /// Pass this as `page_token` for the next page; `None` on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
}

/// A file the catalog found but could not use; it was skipped and left as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadIssue {
    /// The file or directory.
    pub path: PathBuf,
    /// Why it was skipped.
    pub reason: String,
}

impl fmt::Display for LoadIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

/// The time a write records, to the microsecond: what every store keeps (PostgreSQL's
/// `timestamptz` has no finer unit), so that a tool or bundle read back from any store is
/// the one written, and a head (whose `modified_at` decides a name) is the same in every
/// process that reads it.
pub(crate) fn now() -> DateTime<Utc> {
    to_micros(Utc::now())
}

/// `t` to the microsecond (see [`now`]): for times that come in from outside, as an
/// archive's.
pub(crate) fn to_micros(t: DateTime<Utc>) -> DateTime<Utc> {
    use chrono::SubsecRound;
    t.trunc_subsecs(6)
}

/// The bundle `put` makes (or replaces) at `now`: created at `created_at`.
pub(crate) fn new_bundle(
    id: Uuid,
    put: &BundlePut,
    created_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Bundle {
    Bundle {
        id,
        slug: put.slug.clone(),
        display_name: if put.display_name.is_empty() {
            put.slug.clone()
        } else {
            put.display_name.clone()
        },
        description: put.description.clone(),
        is_enabled: put.is_enabled,
        is_built_in: false,
        soft_deleted_at: None,
        created_at,
        modified_at: now,
        owner: None,
        shared: false,
    }
}

/// The tool file a PUT writes, checked; its spec as the catalog will serve it.
pub(crate) fn new_tool_file(
    bundle: Uuid,
    id: Uuid,
    slug: &str,
    version: &str,
    put: &ToolPut,
    now: DateTime<Utc>,
) -> Result<(ToolFile, toolscout_spec::ToolSpec)> {
    check_slug(slug)?;
    check_version(version)?;
    let mut spec = put.spec.clone();
    spec.version = Some(version.to_owned());
    let mut file = ToolFile::from_spec(
        &spec,
        FileInfo {
            bundle_id: bundle,
            tool_id: Some(id),
            tool_type: put.tool_type,
            implementation: put.implementation.clone(),
            is_enabled: put.is_enabled,
            is_built_in: false,
            created_at: now,
            modified_at: now,
        },
    );
    file.slug = slug.to_owned();
    file.version = version.to_owned();
    let spec = check_tool_file(&file)?;
    Ok((file, spec))
}
