//! Integration tests of `toolscout-catalog`: one test binary.
//!
//! The race and crash tests start copies of this binary as writer processes: a copy
//! started with `TOOLSCOUT_CATALOG_CHILD` set runs [`child_entry`] as a writer and
//! nothing else.

#![allow(clippy::unwrap_used, missing_docs)]

mod archive;
mod builtins;
mod bundles;
mod crash;
mod errors;
mod events;
mod heads;
mod interrupted;
mod lint;
#[cfg(feature = "postgres")]
mod postgres;
mod race;
mod reserved;
mod tenants;
mod tools;
mod usage;
mod views;

use std::path::Path;

use serde_json::json;
use toolscout_catalog::{BundlePut, Catalog, CatalogOptions, ToolPut, builtin};
use toolscout_spec::ToolSpec;
use uuid::Uuid;

/// The environment variable that turns this binary into a writer process.
pub(crate) const CHILD_ENV: &str = "TOOLSCOUT_CATALOG_CHILD";

/// Runs a writer when started by the race or crash test; passes at once otherwise.
#[test]
fn child_entry() {
    match std::env::var(CHILD_ENV).as_deref() {
        Ok("race") => race::writer(),
        Ok("crash") => crash::writer(),
        Ok("import") => interrupted::importer(),
        _ => {}
    }
}

/// Starts this test binary as a writer process of `role`, with `vars` set.
pub(crate) fn spawn_child(role: &str, vars: &[(&str, String)]) -> std::process::Child {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "child_entry",
        "--exact",
        "--nocapture",
        "--test-threads=1",
        "-q",
    ])
    .env(CHILD_ENV, role)
    .stdout(std::process::Stdio::null());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

/// Set to `postgres` (by [`the_suite_passes_on_postgres`], in a copy of this binary):
/// every catalog the tests open is kept in PostgreSQL, a database per directory, so the
/// same tests run against both stores.
const STORE_ENV: &str = "TOOLSCOUT_CATALOG_TEST_STORE";

/// Whether this run keeps its catalogs in PostgreSQL (see [`STORE_ENV`]).
pub(crate) fn on_postgres() -> bool {
    std::env::var(STORE_ENV).as_deref() == Ok("postgres")
}

/// Skips the rest of a test that is about the flat files themselves (their layout,
/// journal, hand edits, crash recovery) when the suite runs on PostgreSQL.
macro_rules! files_only {
    () => {
        if crate::on_postgres() {
            return;
        }
    };
}
pub(crate) use files_only;

/// `options` for a catalog in `dir`: on PostgreSQL, with the database of `dir` (the same
/// one every time the directory is opened, as two processes on one store).
pub(crate) fn options_for(dir: &Path, options: CatalogOptions) -> CatalogOptions {
    #[cfg(feature = "postgres")]
    if on_postgres() {
        use std::collections::HashMap;
        use std::sync::{Mutex, OnceLock};
        type Databases = Mutex<HashMap<std::path::PathBuf, toolscout_pgtest::TestDatabase>>;
        static DATABASES: OnceLock<Databases> = OnceLock::new();
        let mut dbs = DATABASES
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let db = dbs.entry(dir.to_owned()).or_insert_with(|| {
            toolscout_pgtest::database("the catalog suite on PostgreSQL")
                .expect("the suite runs on PostgreSQL only when it is not skipped")
        });
        return options.with_postgres(db.url());
    }
    let _ = dir;
    options
}

/// [`Catalog::open_with`] on this run's store.
pub(crate) fn open_with(dir: &Path, options: CatalogOptions) -> toolscout_catalog::Result<Catalog> {
    Catalog::open_with(dir, options_for(dir, options))
}

/// A catalog in `dir` whose binary registers every built-in native function.
pub(crate) fn open(dir: &Path) -> Catalog {
    open_with(
        dir,
        CatalogOptions::default().with_natives(&builtin::NATIVE_FUNCTIONS),
    )
    .unwrap()
}

/// A catalog in `dir` without the built-in bundles.
pub(crate) fn open_bare(dir: &Path) -> Catalog {
    open_with(dir, CatalogOptions::default().with_builtins(false)).unwrap()
}

/// The whole suite again, every catalog in PostgreSQL (a copy of this binary with
/// [`STORE_ENV`] set, on this run's server): the same tests over both stores. Tests about
/// the flat files themselves say `files_only!()`.
#[cfg(feature = "postgres")]
#[test]
fn the_suite_passes_on_postgres() {
    if on_postgres() {
        return;
    }
    let Some(db) = toolscout_pgtest::database("the_suite_passes_on_postgres") else {
        return;
    };
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--skip",
            "the_suite_passes_on_postgres",
            "--skip",
            "child_entry",
            // Already run against PostgreSQL by this binary.
            "--skip",
            "postgres::",
            "--test-threads=4",
            "-q",
        ])
        .env(STORE_ENV, "postgres")
        .env(toolscout_pgtest::URL_VAR, db.admin_url())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the suite failed on PostgreSQL:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A fixed UUIDv7, so that snapshots are stable.
pub(crate) fn id(n: u128) -> Uuid {
    Uuid::from_u128(0x0191_0000_0000_7000_8000_0000_0000_0000 | n)
}

/// A new enabled bundle with this slug.
pub(crate) fn bundle(catalog: &Catalog, n: u128, slug: &str) -> Uuid {
    let id = id(n);
    catalog.put_bundle(id, &BundlePut::new(slug)).unwrap();
    id
}

/// A small valid spec.
pub(crate) fn spec(name: &str) -> ToolSpec {
    ToolSpec::builder(name, format!("Does {name}"))
        .description(format!("Does {name}, for tests."))
        .parameters(json!({
            "type": "object",
            "properties": {"q": {"type": "string", "description": "Query"}},
            "required": ["q"]
        }))
        .tag("test")
        .build()
        .unwrap()
}

/// An HTTP tool: callable in any binary.
pub(crate) fn http_put(name: &str) -> ToolPut {
    ToolPut::http(
        spec(name),
        json!({"method": "GET", "urlTemplate": "https://api.example.com/${q}"}),
    )
}
