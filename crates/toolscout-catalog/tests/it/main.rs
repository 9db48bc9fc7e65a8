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
mod tools;
mod usage;

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

/// A catalog in `dir` whose binary registers every built-in native function.
pub(crate) fn open(dir: &Path) -> Catalog {
    Catalog::open(dir, &builtin::NATIVE_FUNCTIONS).unwrap()
}

/// A catalog in `dir` without the built-in bundles.
pub(crate) fn open_bare(dir: &Path) -> Catalog {
    Catalog::open_with(dir, CatalogOptions::default().with_builtins(false)).unwrap()
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
