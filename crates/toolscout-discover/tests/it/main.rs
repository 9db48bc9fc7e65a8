//! Integration tests of `toolscout-discover`: discover replies as the model sees them,
//! and a toolbox that keeps its index in step with the catalog.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agents;
mod builder;
mod discover;
mod owners;
mod props;
mod recipes;
mod tenants;
mod toolbox;

use serde_json::{Value, json};
use tempfile::TempDir;
use toolscout_catalog::{BundlePut, Catalog, ToolPut, builtin};
use toolscout_discover::{Answer, Toolbox, snapshot};
use toolscout_invoke::Invoker;
use toolscout_invoke::builtin::BuiltinConfig;
use toolscout_search::SearchIndex;
use uuid::Uuid;

/// A catalog with the built-in bundles and a `sample` bundle holding the sample tools
/// (as HTTP tools to an example host), a toolbox over it whose invoker has the built-in
/// tools registered on a temporary workspace.
struct Fixture {
    toolbox: Toolbox,
    sample_bundle: Uuid,
    workspace: TempDir,
    _catalog_dir: TempDir,
}

fn fixture() -> Fixture {
    let catalog_dir = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let catalog = Catalog::open(catalog_dir.path(), &builtin::NATIVE_FUNCTIONS).unwrap();
    let sample_bundle = Uuid::now_v7();
    catalog
        .put_bundle(
            sample_bundle,
            &BundlePut::new("sample").with_display_name("Sample tools"),
        )
        .unwrap();
    // The built-in bundles already have read_file, write_file and search_files.
    for spec in toolscout_spec::sample::catalog()
        .into_iter()
        .filter(|s| builtin::tool(&s.name).is_none())
    {
        let slug = toolscout_spec::name::slug_from_name(&spec.name);
        let put = ToolPut::http(
            spec,
            json!({"method": "GET", "urlTemplate": "https://api.example.com/tool"}),
        );
        catalog.put_tool(sample_bundle, &slug, "1", &put).unwrap();
    }
    let mut invoker = Invoker::default();
    toolscout_invoke::builtin::register(
        &mut invoker,
        &BuiltinConfig::new(workspace.path(), toolscout_invoke::AllowedHosts::default()),
    )
    .unwrap();
    let toolbox = Toolbox::new(catalog, SearchIndex::in_memory().unwrap(), invoker).unwrap();
    Fixture {
        toolbox,
        sample_bundle,
        workspace,
        _catalog_dir: catalog_dir,
    }
}

/// A reply as pretty JSON (with the tools it disclosed).
fn show(answer: &Answer) -> String {
    snapshot::answer(answer)
}

fn names(reply: &Value, key: &str) -> Vec<String> {
    reply[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}
