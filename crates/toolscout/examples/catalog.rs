//! A tour of the catalog: create it in a temporary directory, add a bundle and a tool,
//! list, disable, watch the changes, and export the bundle as a ZIP file.
//!
//! Run with `cargo run --example catalog`.

use std::fs::File;

use serde_json::json;
use toolscout::catalog::{BundlePut, Catalog, ToolPut, ToolQuery, builtin};
use toolscout::spec::ToolSpec;
use uuid::Uuid;

fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    // This binary registers the built-in native functions (as toolscout-invoke does).
    let catalog = Catalog::open(dir.path(), &builtin::NATIVE_FUNCTIONS)?;
    catalog.subscribe(|change| {
        println!(
            "  change: {:?} -> identity {}",
            change.events, change.identity
        );
    });

    let bundle = Uuid::now_v7();
    catalog.put_bundle(
        bundle,
        &BundlePut::new("weather")
            .with_display_name("Weather")
            .with_description("Forecasts from a public API"),
    )?;
    let spec = ToolSpec::builder("get_weather", "Current weather for a city")
        .description("Returns the current temperature and conditions for a city.")
        .parameters(json!({
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"]
        }))
        .example("Weather in Paris", json!({"city": "Paris"}))
        .tag("weather")
        .build()?;
    let put = ToolPut::http(
        spec,
        json!({"method": "GET", "urlTemplate": "https://api.example.com/weather?q=${city}"}),
    );
    let tool = catalog.put_tool(bundle, "get-weather", "v1", &put)?;
    println!("put {}@{} as {}", tool.slug, tool.version, tool.id);

    if let Err(e) = catalog.put_tool(bundle, "get-weather", "v1", &put) {
        println!("second put: {e}");
    }

    println!("callable tools:");
    for t in catalog.list_tools(&ToolQuery::default())?.items {
        println!("  {:<14} {}", t.spec.name.as_str(), t.spec.summary);
    }

    catalog.patch_tool(bundle, "get-weather", "v1", false)?;
    let t = catalog.get_tool(bundle, "get-weather", "v1")?;
    if let Some(reason) = &t.disabled_reason {
        println!("get-weather is now disabled: {reason}");
    }

    let zip_path = dir.path().join("weather.zip");
    catalog.export_bundle(bundle, File::create(&zip_path)?)?;
    println!(
        "exported to {} ({} bytes)",
        zip_path.display(),
        std::fs::metadata(&zip_path)?.len()
    );
    Ok(())
}
