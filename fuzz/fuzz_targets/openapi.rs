//! OpenAPI import: `openapi::parse` (JSON, or YAML through serde-saphyr) then
//! `from_openapi`, with and without a base URL; each tool's usage line and HTTP template
//! are read as the catalog reads them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolscout_invoke::HttpImpl;
use toolscout_spec::adapters::openapi;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(doc) = openapi::parse(text) else {
        return;
    };
    for base in [None, Some("https://api.example.com/v2/")] {
        let Ok(api) = openapi::from_openapi(&doc, base) else {
            continue;
        };
        for tool in &api.tools {
            let _ = tool.spec.usage();
            let _ = serde_json::from_value::<HttpImpl>(tool.template.clone());
        }
        for skipped in &api.skipped {
            let _ = skipped.to_string();
        }
    }
});
