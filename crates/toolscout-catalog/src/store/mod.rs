//! Where the catalog keeps its bundles, tools, built-in flags and usage counts: the seam
//! between the catalog in memory (state, heads, snapshot, events, identity), which knows
//! no file and no SQL, and a store.
//!
//! The store is a [`CatalogStore`]: the flat files of one directory ([`FileStore`],
//! `files.rs`) or a PostgreSQL database (`PgStore`, `postgres/`, feature `postgres`).
//! A catalog reads through a [`StoreRead`] (a consistent view: the shared file lock) and
//! writes through a [`StoreWrite`] (the write lock: the exclusive file lock), and asks the
//! store for one tool's whole definition when it needs it ([`CatalogStore::read_tool`]).
//!
//! **Rationale:** the trait is crate-private and object-safe: [`crate::Catalog`] holds
//! one `Arc<dyn CatalogStore>`, so its public API is the same whatever the store, and the
//! types it carries can still change.

pub(crate) mod files;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use toolscout_spec::adapters::tool_file::ToolFile;
use uuid::Uuid;

use crate::Result;
use crate::events::CatalogEvent;
use crate::model::{LoadIssue, ToolHead, Usage};
use crate::tenant::TenantRecord;

pub(crate) use files::{FileKey, FileStore};

/// The `schemaVersion` of `bundle.json`.
pub(crate) const BUNDLE_SCHEMA: &str = "toolscout.bundle/1";

/// One bundle as stored (the flat store's `bundle.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BundleFile {
    #[serde(default = "bundle_schema")]
    pub(crate) schema_version: String,
    #[serde(rename = "bundleID")]
    pub(crate) bundle_id: Uuid,
    pub(crate) slug: String,
    #[serde(default)]
    pub(crate) display_name: String,
    #[serde(default)]
    pub(crate) description: String,
    #[serde(default = "yes")]
    pub(crate) is_enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) soft_deleted_at: Option<DateTime<Utc>>,
    pub(crate) created_at: DateTime<Utc>,
    pub(crate) modified_at: DateTime<Utc>,
    /// The tenant that owns the bundle; `None`: the operator (every bundle written
    /// before tenants existed).
    #[serde(
        rename = "ownerTenantID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) owner: Option<Uuid>,
    /// Whether every tenant may read and call its tools.
    #[serde(default, skip_serializing_if = "is_false")]
    pub(crate) shared: bool,
}

fn is_false(b: &bool) -> bool {
    !b
}

fn bundle_schema() -> String {
    BUNDLE_SCHEMA.to_owned()
}

fn yes() -> bool {
    true
}

/// Enabled flags of built-in bundles and tools, the only part of them that changes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Overlay {
    #[serde(default)]
    pub(crate) bundles: BTreeMap<Uuid, bool>,
    #[serde(default)]
    pub(crate) tools: BTreeMap<Uuid, bool>,
}

/// What tells one stored version of a tool from another without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoreKey {
    /// A file: its length, modification time and inode (files are replaced by rename, so
    /// a changed file is a new inode with a new time).
    File(FileKey),
    /// A row: the generation that last wrote it.
    Row {
        /// The generation counter of the write.
        generation: u64,
    },
}

/// What the catalog already holds, so that a load reads only what changed.
#[derive(Debug, Default)]
pub(crate) struct Known {
    /// Tool id → its bundle and the key of the version known.
    pub(crate) tools: HashMap<Uuid, (Uuid, StoreKey)>,
}

impl Known {
    /// Whether the version of `tool` in `bundle` with key `key` is the one known.
    pub(crate) fn holds(&self, tool: Uuid, bundle: Uuid, key: Option<&StoreKey>) -> bool {
        key.is_some_and(|key| {
            self.tools
                .get(&tool)
                .is_some_and(|(b, k)| *b == bundle && k == key)
        })
    }
}

/// A stored tool as a load found it.
#[derive(Debug, Clone)]
pub(crate) struct FoundTool {
    pub(crate) id: Uuid,
    /// Its file, for a store of files.
    pub(crate) path: Option<PathBuf>,
    pub(crate) key: Option<StoreKey>,
    /// The definition read, to check and make the head from (a store of files); `None`
    /// with `head`, or when the version is the one the caller already knows ([`Known`]).
    pub(crate) file: Option<ToolFile>,
    /// The head, as checked when it was written (a store of rows).
    pub(crate) head: Option<Box<ToolHead>>,
}

impl FoundTool {
    /// What a load issue about this tool names: its file, or its id.
    pub(crate) fn place(&self) -> PathBuf {
        self.path
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("tool {}", self.id)))
    }
}

/// A stored bundle as a load found it, with its tools.
#[derive(Debug, Clone)]
pub(crate) struct FoundBundle {
    /// Its directory, for a store of files.
    pub(crate) path: Option<PathBuf>,
    pub(crate) file: BundleFile,
    pub(crate) tools: Vec<FoundTool>,
}

impl FoundBundle {
    /// What a load issue about this bundle names: its directory, or its id.
    pub(crate) fn place(&self) -> PathBuf {
        self.path
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("bundle {}", self.file.bundle_id)))
    }
}

/// Everything a load read.
#[derive(Debug, Default)]
pub(crate) struct Loaded {
    pub(crate) stamp: Option<String>,
    pub(crate) bundles: Vec<FoundBundle>,
    pub(crate) overlay: Overlay,
    pub(crate) usage: BTreeMap<Uuid, Usage>,
    pub(crate) tenants: Vec<TenantRecord>,
    pub(crate) issues: Vec<LoadIssue>,
}

/// What tells, besides the generation, whether a heads snapshot still describes the
/// store: for the flat files, the modification times of the directories it read (a file
/// added or removed by hand changes one). Relative names → times.
pub(crate) type Marks = BTreeMap<String, Option<SystemTime>>;

/// Where the catalog keeps what it holds. See the module's documentation.
pub(crate) trait CatalogStore: Send + Sync + Debug {
    /// The local directory: the heads snapshot, and what stays with one process. For the
    /// flat files it is the catalog itself.
    fn local_dir(&self) -> &Path;

    /// A consistent view of the store; it ends when dropped. Files: the shared file
    /// lock, after completing a batch that a killed writer left half done.
    fn read(&self) -> Result<Box<dyn StoreRead + '_>>;

    /// The write lock: until the write is committed or dropped, no other process writes.
    /// Files: the exclusive file lock (after completing a half-done batch).
    fn write(&self) -> Result<Box<dyn StoreWrite + '_>>;

    /// One stored tool's whole definition as it is now, without a lock (a tool is always
    /// replaced whole).
    fn read_tool(&self, bundle: Uuid, tool: Uuid) -> Result<ToolFile>;

    /// The definitions of many stored tools (bundle, tool), as [`CatalogStore::read_tool`]
    /// reads one; those that cannot be read are left out. A store of rows reads them in
    /// one round trip.
    fn read_tools(&self, tools: &[(Uuid, Uuid)]) -> Result<HashMap<Uuid, ToolFile>> {
        Ok(tools
            .iter()
            .filter_map(|(bundle, tool)| Some((*tool, self.read_tool(*bundle, *tool).ok()?)))
            .collect())
    }

    /// Where a stored tool's file is ([`crate::Tool::path`]), for a store of files.
    fn tool_path(&self, bundle: Uuid, tool: Uuid) -> Option<PathBuf>;

    /// Adds recorded calls to the stored counts, so that counts from several processes
    /// add up, and returns the new totals of the tools it counted.
    fn add_usage(&self, deltas: &BTreeMap<Uuid, Usage>) -> Result<BTreeMap<Uuid, Usage>>;

    /// The [`Marks`] of the store now, for a snapshot of these bundles.
    fn marks(&self, bundles: &mut dyn Iterator<Item = Uuid>) -> Marks;

    /// Whether `marks`, taken with a snapshot, still hold.
    fn marks_hold(&self, marks: &Marks) -> bool;

    /// A cheap hint for [`crate::Catalog::reload`]: `false` only when the store is known
    /// not to have moved past `generation` (PostgreSQL: its listener has been up since
    /// before `generation` and heard of nothing newer). The flat files always say `true`:
    /// reading the `generation` file is the cheap check.
    fn may_have_moved(&self, generation: u64) -> bool {
        let _ = generation;
        true
    }

    /// Blocks up to `timeout` for a sign that another process wrote since the state at
    /// `stamp` (`generation`): the `generation` file moved (files, looked at every
    /// 200 ms without a lock), a notice of a later generation, or the listener
    /// reconnecting (PostgreSQL). Returns whether to look.
    fn wait_for_change(&self, stamp: Option<&str>, generation: u64, timeout: Duration) -> bool;

    /// Whether each step of a write is durable when it returns (the flat files), rather
    /// than only at [`StoreWrite::commit`] (a database transaction). A write that fails
    /// half-way on a store whose steps are not durable left nothing, so what the catalog
    /// changed in memory meanwhile is read again whole.
    fn steps_are_durable(&self) -> bool {
        true
    }
}

/// A consistent view of the store, under its read lock.
pub(crate) trait StoreRead {
    /// The generation stamp, `"<counter> <uuid>"` (a fresh UUID at every write, so that a
    /// stamp names one committed state); `None` before the first write.
    fn stamp(&mut self) -> Result<Option<String>>;

    /// Bundles, the built-in overlay, usage and tools. A tool [`Known`] holds comes back
    /// without its file; with `listed`, tools are not enumerated: each bundle's tools are
    /// these (a current snapshot's). What cannot be used becomes a [`LoadIssue`].
    fn load(
        &mut self,
        known: &Known,
        listed: Option<BTreeMap<Uuid, Vec<FoundTool>>>,
    ) -> Result<Loaded>;
}

/// A write in progress, under the store's write lock.
pub(crate) trait StoreWrite: StoreRead {
    /// Moves the generation on from `previous` and returns the new stamp and counter.
    /// Called before the first change, so that a writer killed half-way still makes
    /// every other process read again.
    fn bump(&mut self, previous: Option<&str>) -> Result<(String, u64)>;

    /// Creates or replaces one bundle.
    fn put_bundle(&mut self, bundle: &BundleFile) -> Result<()>;

    /// Creates or replaces one tool version, whose head is `head`; returns the key of the
    /// version written.
    fn put_tool(&mut self, head: &ToolHead, file: &ToolFile) -> Result<Option<StoreKey>>;

    /// Writes a new bundle (when given) and many new tools of `bundle_id` (with their
    /// heads), all or nothing even if the process dies half-way; each tool's definition is
    /// dropped once written. Returns the tools' keys, in order.
    fn put_tools(
        &mut self,
        bundle: Option<&BundleFile>,
        bundle_id: Uuid,
        tools: Vec<(&ToolHead, ToolFile)>,
    ) -> Result<Vec<Option<StoreKey>>>;

    /// Replaces the enabled flags of the built-in bundles and tools.
    fn put_overlay(&mut self, overlay: &Overlay) -> Result<()>;

    /// Creates or replaces one tenant; `all` is every tenant once it is in (a store that
    /// keeps them in one file writes them all).
    fn put_tenant(&mut self, tenant: &TenantRecord, all: &[&TenantRecord]) -> Result<()>;

    /// Deletes one tool version and its usage counts for good; a missing one is not an
    /// error.
    fn remove_tool(&mut self, bundle: Uuid, tool: Uuid) -> Result<()>;

    /// Removes a bundle that holds no tool; returns whether it did.
    fn remove_empty_bundle(&mut self, bundle: Uuid) -> Result<bool>;

    /// Clears what writers killed half-way left behind.
    fn clean_up(&mut self) -> Result<()>;

    /// Makes the write visible to every other process and releases the lock. `events`
    /// are what it changed, at `generation` when it moved the generation on.
    fn commit(self: Box<Self>, generation: Option<u64>, events: &[CatalogEvent]) -> Result<()>;
}
