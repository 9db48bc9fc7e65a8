//! JSONL tool lists (`adapters::jsonl::from_str`), each spec read written back as a line
//! and its usage line generated.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolscout_spec::adapters::jsonl;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (specs, _errors) = jsonl::from_str(text);
    for spec in &specs {
        let _ = spec.usage();
        let _ = jsonl::to_line(spec);
    }
});
