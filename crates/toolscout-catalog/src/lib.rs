//! `toolscout-catalog`: the tool catalog, stored as flat-file JSON (or, with the
//! `postgres` feature, in a PostgreSQL database shared by many processes).
//!
//! A [`Catalog`] holds [`Bundle`]s, named groups of tools with one on/off switch, and
//! [`Tool`]s, one per `<slug, version>` of a bundle, each with its full
//! [`toolscout_spec::ToolSpec`], its type (native or HTTP) and its `impl` block.
//!
//! * Writes: [`Catalog::put_bundle`], [`Catalog::patch_bundle`], [`Catalog::delete_bundle`]
//!   (soft), [`Catalog::reap`]; [`Catalog::put_tool`], [`Catalog::patch_tool`],
//!   [`Catalog::delete_tool`]; [`Catalog::put_tools`] for many at once,
//!   [`Catalog::add_tools`] into a bundle named by its slug (what an import does;
//!   [`Catalog::add_tools_with`] stores changed tools as new versions);
//!   [`Catalog::import_bundle`] from a ZIP.
//! * Reads: [`Catalog::list_bundles`] and [`Catalog::list_tools`] with a [`BundleQuery`] or
//!   [`ToolQuery`] and page tokens, [`Catalog::get_tool`], [`Catalog::tool`],
//!   [`Catalog::export_bundle`] to a ZIP.
//! * Changes: [`Catalog::subscribe`] hears every committed change as a [`CatalogChange`]
//!   with the new [`Catalog::identity`] (the tool-set id of the tools that can be called)
//!   and [`Catalog::generation`] (a counter of writes); [`Catalog::reload`] catches up
//!   with other processes' writes, [`Catalog::rescan`] with hand edits.
//! * Views: [`Catalog::view`] is the catalog as one [`Viewer`] sees it, a [`CatalogView`]
//!   with its reads and writes (a tenant's: its own bundles, within its limits);
//!   [`Catalog::operator`] is the operator's handle, an [`Operator`] with the upkeep no
//!   one else may do (tenants, owners, sharing, the reaper). A view gives no way back to
//!   the catalog or to an `Operator`: what a tenant's request is handed, it cannot
//!   outgrow. The `Catalog`'s own writes are the operator's.
//! * Usage: [`Catalog::record_call`] counts calls in a file per tool, written in batches.
//! * Checks: [`lint::lint`] finds what would confuse a model or be refused by a provider.
//!
//! The [`builtin`] bundles `files`, `web` and `data` are compiled in and served through
//! the same API; only their enabled flags change. A native tool whose function the
//! binary does not register, or a stored tool whose file does not check out, is listed
//! as disabled with a [`DisabledReason`]; its file is left as it is.
//!
//! # Storage
//!
//! ```text
//! <root>/catalog.lock                          file lock: shared to read, exclusive to write
//! <root>/generation                            "<counter> <uuid>", changed before every write
//! <root>/batch-journal.json                    the renames of a batch being committed
//! <root>/builtin-overlay.json                  enabled flags of built-in bundles and tools
//! <root>/bundles/<bundle-id>/bundle.json       one bundle
//! <root>/bundles/<bundle-id>/tools/<tool-id>.json   one tool version (the spec's tool.json)
//! <root>/usage/<tool-id>.json                  call count and latest call of one tool
//! ```
//!
//! Every write is atomic (temporary file, fsync, rename, directory fsync) and holds an
//! exclusive file lock on the directory (std `File::lock`), so `<slug, version>` stays
//! unique in a bundle even when several processes write at once; a writer killed
//! half-way leaves the old file or the new one, never half of one. A write of many files
//! ([`Catalog::put_tools`], [`Catalog::add_tools`], [`Catalog::import_bundle`]) is all or
//! nothing the same way: its renames are journalled (`batch-journal.json`), and the next
//! process to take the lock completes a journal a killed writer left. A malformed or
//! foreign file is skipped and reported by [`Catalog::issues`] with its path. The crate
//! is synchronous, and without the `postgres` feature it does no network IO.
//!
//! # PostgreSQL (feature `postgres`)
//!
//! [`CatalogOptions::with_postgres`] keeps the catalog in a database instead: every
//! process, on any machine, that opens the same database shares one catalog, with the
//! same guarantees (a write is one transaction under an advisory lock, so
//! `<bundle, slug, version>` has one holder; a write is seen whole or not at all; usage
//! counts add up; the reaper removes a bundle once), and the same identity at the same
//! generation. The directory given to [`Catalog::open_with`] then holds only the heads
//! snapshot. The schema is created and migrated at open; the catalog stays synchronous
//! (the client runs on a thread of its own, so any thread may call it). Errors
//! ([`Error::Database`]) name the database without its password.
//!
//! The built-in tools' names and bundles' slugs are reserved, in any case: every write
//! that adds a tool or a bundle refuses them ([`Catalog::check_tool_name`],
//! [`Error::ReservedName`]), unless the catalog is opened without the built-ins.
//!
//! ```
//! use toolscout_catalog::{BundlePut, Catalog, ToolPut, ToolQuery, builtin};
//! use toolscout_spec::ToolSpec;
//!
//! let dir = tempfile::tempdir()?;
//! let catalog = Catalog::open(dir.path(), &builtin::NATIVE_FUNCTIONS)?;
//!
//! let bundle = uuid::Uuid::now_v7();
//! catalog.put_bundle(bundle, &BundlePut::new("weather").with_display_name("Weather"))?;
//! let spec = ToolSpec::builder("get_weather", "Current weather for a city").build()?;
//! let put = ToolPut::http(spec, serde_json::json!({
//!     "method": "GET",
//!     "urlTemplate": "https://api.example.com/weather?q=${city}",
//! }));
//! let tool = catalog.put_tool(bundle, "get-weather", "v1", &put)?;
//! assert!(tool.is_callable());
//!
//! // A second PUT of the same <slug, version> is a conflict.
//! assert!(catalog.put_tool(bundle, "get-weather", "v1", &put).is_err());
//!
//! // The six built-in tools and the new one.
//! let page = catalog.list_tools(&ToolQuery::default())?;
//! assert_eq!(page.items.len(), 7);
//!
//! let before = catalog.identity();
//! catalog.patch_tool(bundle, "get-weather", "v1", false)?;
//! assert_ne!(catalog.identity(), before);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used))]

// The modules in layers, each importing only from the layers above it in this list
// (`cargo xtask cycles` checks that no two import each other):
// records and their checks; the stores; the in-memory state and its snapshot; then
// `Catalog` and its operations.
mod authoring;
pub mod builtin;
mod catalog;
mod error;
mod events;
mod journal;
pub mod lint;
mod model;
mod state;
mod store;
mod tenant;
mod validate;
mod viewer;

pub use authoring::AuthoredTool;
pub use catalog::add::{Added, OnExisting};
pub use catalog::archive::{
    ARCHIVE_FORMAT, Imported, MAX_ARCHIVE_BYTES, MAX_ENTRY_BYTES, MAX_TOOLS,
};
pub use catalog::operator::Operator;
pub use catalog::ops::{REAP_AFTER, USAGE_FLUSH_INTERVAL};
pub use catalog::view::CatalogView;
pub use catalog::{Catalog, CatalogOptions, FOLLOW_CHECK};
pub use error::{Error, Result};
pub use events::{CatalogChange, CatalogEvent, Subscription};
pub use model::{
    Bundle, BundlePut, BundleQuery, DEFAULT_LISTING_PAGE_SIZE, DisabledReason, LoadIssue,
    MAX_LISTING_PAGE_SIZE, NameClaim, Page, TenantId, Tool, ToolHead, ToolPut, ToolQuery, Usage,
};
pub use state::visible::NameRank;
pub use tenant::{
    Authenticated, MAX_TENANT_NAME, NewToken, TOKEN_PREFIX, Tenant, TenantLimits, TokenInfo,
    check_tenant_name,
};
/// Re-exported: the tool type of [`Tool::tool_type`] and [`ToolPut::tool_type`].
pub use toolscout_spec::adapters::tool_file::ToolType;
pub use viewer::{SCOPE_OPERATOR, SCOPE_SHARED, Viewer, Visibility, scope_of};
