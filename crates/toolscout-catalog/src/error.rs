//! The one error type of `toolscout-catalog`.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use uuid::Uuid;

/// What went wrong while reading or changing a [`crate::Catalog`].
///
/// Variants carry the bundle, slug, version or path involved, so that a message can be
/// shown as it is to a person or a model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The database of a PostgreSQL store could not be reached, or refused or did not
    /// answer a statement. `target` is the database without its password.
    #[error("PostgreSQL at {target}: {reason}")]
    Database {
        /// `postgres://user@host:port/database`.
        target: String,
        /// What failed, and why.
        reason: String,
    },
    /// The database holds a catalog schema newer than this binary knows.
    #[error(
        "PostgreSQL at {target}: the database holds catalog schema version {database}, this toolscout knows up to {binary}: upgrade toolscout"
    )]
    SchemaTooNew {
        /// `postgres://user@host:port/database`.
        target: String,
        /// The newest migration applied to the database.
        database: i64,
        /// The newest migration this binary has.
        binary: i64,
    },
    /// A file or directory of the catalog could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// A catalog file holds JSON that does not parse.
    #[error("{}: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// A bundle slug, tool slug or version label breaks the naming rules.
    #[error("{source}")]
    Label {
        /// The rule that was broken, with the rejected label.
        source: toolscout_spec::Error,
    },
    /// An id is not a UUIDv7.
    #[error("invalid {what} id {id}: expected a UUIDv7, found version {version}")]
    Id {
        /// `"bundle"` or `"tool"`.
        what: &'static str,
        /// The rejected id.
        id: Uuid,
        /// Its UUID version number.
        version: usize,
    },
    /// A tool's definition is not a valid [`toolscout_spec::ToolSpec`].
    #[error("tool {slug}@{version}: {source}")]
    Spec {
        /// The tool's slug.
        slug: String,
        /// The tool's version.
        version: String,
        /// What is wrong with the definition.
        source: toolscout_spec::Error,
    },
    /// A recipe's steps do not fit together or do not fit the tools they call; the
    /// error names the step and the field.
    #[error("recipe '{name}': {source}")]
    Recipe {
        /// The recipe's tool name.
        name: String,
        /// What is wrong, and where.
        source: toolscout_spec::recipe::RecipeError,
    },
    /// A tool's `impl` block does not fit its type.
    #[error("tool {slug}@{version}: invalid impl block: {reason}")]
    Implementation {
        /// The tool's slug.
        slug: String,
        /// The tool's version.
        version: String,
        /// What is wrong with the block.
        reason: String,
    },
    /// No bundle has this id.
    #[error("bundle {bundle} not found")]
    BundleNotFound {
        /// The id asked for.
        bundle: Uuid,
    },
    /// The bundle has no tool with this slug and version.
    #[error("tool {slug}@{version} not found in bundle {bundle}")]
    ToolNotFound {
        /// The bundle searched.
        bundle: Uuid,
        /// The slug asked for.
        slug: String,
        /// The version asked for.
        version: String,
    },
    /// No tool has this id.
    #[error("tool {tool} not found")]
    ToolIdNotFound {
        /// The id asked for.
        tool: Uuid,
    },
    /// A tool with this slug and version already exists in the bundle.
    #[error(
        "tool {slug}@{version} already exists in bundle '{bundle_slug}' ({bundle}) as {existing}; \
         versions are immutable: put a new version instead"
    )]
    Conflict {
        /// The bundle.
        bundle: Uuid,
        /// The bundle's slug.
        bundle_slug: String,
        /// The slug.
        slug: String,
        /// The version.
        version: String,
        /// The id of the tool that holds the pair.
        existing: Uuid,
    },
    /// The bundle's tools changed (another process wrote to it) between the moment
    /// [`crate::Catalog::add_tools_with`] read them and the moment it could write;
    /// nothing was written.
    #[error(
        "bundle '{bundle_slug}' ({bundle}) changed while tools were being added to it \
         (another process wrote to it); nothing was written: try again"
    )]
    BundleChanged {
        /// The bundle.
        bundle: Uuid,
        /// The bundle's slug.
        bundle_slug: String,
    },
    /// A write inside a disabled bundle.
    #[error("bundle '{slug}' ({bundle}) is disabled: enable it before changing its tools")]
    BundleDisabled {
        /// The bundle.
        bundle: Uuid,
        /// Its slug.
        slug: String,
    },
    /// A write to or inside a soft-deleted bundle.
    #[error("bundle '{slug}' ({bundle}) was deleted at {deleted_at}")]
    BundleDeleted {
        /// The bundle.
        bundle: Uuid,
        /// Its slug.
        slug: String,
        /// When it was soft-deleted.
        deleted_at: DateTime<Utc>,
    },
    /// A change to a built-in bundle or tool other than its enabled flag.
    #[error("{what} '{slug}' is built in: only its enabled flag can change")]
    BuiltIn {
        /// `"bundle"` or `"tool"`.
        what: &'static str,
        /// Its slug.
        slug: String,
    },
    /// A new tool or bundle would take the name of a built-in one: a tool name that is a
    /// built-in tool's, or a bundle slug that is a built-in bundle's, compared without
    /// regard to case. Refused by every write of a catalog that serves the built-in
    /// bundles (see [`crate::Catalog::check_tool_name`]).
    #[error(
        "{what} {label} '{name}' is reserved for the built-in {what} '{builtin}' \
         ({label}s are compared without regard to case): give the {what} another {label}",
        label = reserved_label(what)
    )]
    ReservedName {
        /// `"tool"` or `"bundle"`.
        what: &'static str,
        /// The name (of a tool) or slug (of a bundle) refused.
        name: String,
        /// The built-in tool's name or bundle's slug it collides with.
        builtin: String,
    },
    /// A page token that this catalog did not issue.
    #[error("invalid page token {token:?}")]
    PageToken {
        /// The rejected token.
        token: String,
    },
    /// A tool in its authoring form ([`crate::AuthoredTool`]) does not check out.
    #[error("{reason}")]
    ToolBody {
        /// What is missing or wrong, e.g. `invalid tool body: missing field \`slug\``.
        reason: String,
    },
    /// The journal of an interrupted batch of writes is not one this crate wrote (another
    /// format, or an entry that is absolute, climbs with `..` or leads out of the catalog
    /// directory). Nothing of it was applied, and the catalog cannot be read until the
    /// file is removed.
    #[error(
        "{}: {reason}; nothing of it was applied: check the catalog directory, then remove the file",
        path.display()
    )]
    Journal {
        /// The journal file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Another live bundle of the same owner has this slug.
    #[error("bundle slug '{slug}' is taken by bundle {bundle}: choose another slug")]
    SlugTaken {
        /// The slug.
        slug: String,
        /// The bundle that has it (one of the writer's own).
        bundle: Uuid,
    },
    /// A write into a bundle the writer sees but does not own (a shared or built-in
    /// bundle, for a tenant).
    #[error("bundle '{slug}' ({bundle}) is not yours: only its owner changes it")]
    NotOwner {
        /// The bundle.
        bundle: Uuid,
        /// Its slug.
        slug: String,
    },
    /// A tenant's write would take it past one of its limits; nothing was written.
    #[error("the tenant may hold {limit} {what}: it holds {held} and this write adds {adding}")]
    TenantLimit {
        /// `"tools"` or `"bundles"`.
        what: &'static str,
        /// The limit.
        limit: u32,
        /// How many it holds now.
        held: u64,
        /// How many the write adds.
        adding: u64,
    },
    /// A tenant name (or a token label) that breaks the rule of
    /// [`crate::check_tenant_name`]; nothing was written.
    #[error("invalid tenant name {name:?}: {reason}")]
    TenantName {
        /// The name refused (its first 80 characters).
        name: String,
        /// The rule it breaks.
        reason: String,
    },
    /// A token label or tenant limits that cannot be used; nothing was written.
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// `"token label"` or `"tenant limits"`.
        what: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A live tenant already has this name.
    #[error("a tenant named '{name}' exists: choose another name, or remove it first")]
    TenantExists {
        /// The name.
        name: String,
    },
    /// No live tenant has this name or id.
    #[error("tenant {tenant} not found")]
    TenantNotFound {
        /// The name or id asked for (its first 80 characters).
        tenant: String,
    },
    /// No tenant has a token with this id.
    #[error("token {token} not found")]
    TokenNotFound {
        /// The token id asked for.
        token: Uuid,
    },
    /// The system's random source failed, so no token could be made.
    #[error("no random bytes for a token: {reason}")]
    Random {
        /// The system's error.
        reason: String,
    },
    /// A bundle archive that cannot be imported.
    #[error("bundle archive{}: {reason}", entry.as_deref().map(|e| format!(" entry {e}")).unwrap_or_default())]
    Archive {
        /// The archive entry at fault; `None` for the file as a whole.
        entry: Option<String>,
        /// What is wrong.
        reason: String,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// An archive error; `entry` is `""` for the archive as a whole.
    pub(crate) fn archive(entry: &str, reason: impl std::fmt::Display) -> Self {
        Error::Archive {
            entry: (!entry.is_empty()).then(|| entry.to_owned()),
            reason: reason.to_string(),
        }
    }
}

/// What a [`Error::ReservedName`] refuses of a tool or a bundle.
fn reserved_label(what: &str) -> &'static str {
    if what == "bundle" { "slug" } else { "name" }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
