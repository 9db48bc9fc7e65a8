//! `Validators::check_arguments` with a catalog entry's schema and a model's arguments,
//! both hostile: line 1 is the schema, the rest the arguments (both JSON). A schema that
//! is not a tool's parameter schema is checked as the schema of its one property `x`
//! (and the arguments as the value of `x`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use toolscout_invoke::Validators;
use toolscout_spec::ToolSpec;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (schema, args) = text.split_once('\n').unwrap_or((text, "{}"));
    let (Ok(schema_value), Ok(args)) = (
        serde_json::from_str::<Value>(schema),
        serde_json::from_str::<Value>(args),
    ) else {
        return;
    };
    let schema = schema_value;
    let (spec, args) = match ToolSpec::builder("fuzzed", "A fuzzed tool")
        .parameters(schema.clone())
        .build()
    {
        Ok(spec) => (spec, args),
        Err(_) => {
            let wrapped = json!({"type": "object", "properties": {"x": schema}});
            let Ok(spec) = ToolSpec::builder("fuzzed", "A fuzzed tool")
                .parameters(wrapped)
                .build()
            else {
                return;
            };
            (spec, json!({ "x": args }))
        }
    };
    let _ = Validators::default().check_arguments(&spec, &args);
});
