//! What a remote discovery server sends: a manifest page (`GET /api/v1/tools`), read as
//! `toolscout-remote` reads it (JSON, then `ToolManifest`), and each `ToolDefinition`
//! made a spec (`from_definition`), its slug, canonical JSON and usage line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolscout_spec::adapters::manifest::{ToolManifest, from_definition, to_definition};
use toolscout_spec::identity::canonical_json;
use toolscout_spec::name::slug_from_name;

fuzz_target!(|data: &[u8]| {
    let Ok(body) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Ok(manifest) = serde_json::from_value::<ToolManifest>(body) else {
        return;
    };
    for def in &manifest.tools {
        let Ok(spec) = from_definition(def) else {
            continue;
        };
        let _ = slug_from_name(&spec.name);
        let _ = canonical_json(&serde_json::to_value(def).unwrap_or(Value::Null));
        let _ = spec.usage();
        let _ = to_definition(&spec);
    }
});
