//! HTTP tool templates: line 1 is the template, line 2 the call's arguments (a JSON
//! object, else the string of `x`), line 3 the allowed hosts (comma-separated). The
//! template is expanded for a URL, a header, a JSON and a text body; the URL is parsed
//! and checked against the allowed hosts (never resolved: no DNS).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};
use toolscout_invoke::fuzzing::{TemplateTarget, check_url, expand_template};
use toolscout_invoke::{AllowedHosts, SecretStore};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut lines = text.splitn(3, '\n');
    let template = lines.next().unwrap_or_default();
    let args_text = lines.next().unwrap_or_default();
    let hosts_text = lines.next().unwrap_or_default();
    let args: Map<String, Value> = match serde_json::from_str::<Value>(args_text) {
        Ok(Value::Object(map)) => map,
        _ => {
            let mut map = Map::new();
            map.insert("x".to_owned(), json!(args_text));
            map.insert("n".to_owned(), json!(7));
            map
        }
    };
    let mut secrets = SecretStore::default();
    secrets.insert("KEY", "k&y=1/..");
    secrets.insert("TOKEN", "line\nbreak");
    for target in [
        TemplateTarget::Header,
        TemplateTarget::Json,
        TemplateTarget::Text,
    ] {
        let _ = expand_template(template, target, &args, &secrets);
    }
    let Ok(url) = expand_template(template, TemplateTarget::Url, &args, &secrets) else {
        return;
    };
    let Ok(url) = url::Url::parse(&url) else {
        return;
    };
    let hosts = AllowedHosts::new(hosts_text.split(','));
    let _ = hosts.matches_url(&url);
    let _ = check_url(&hosts, &url);
    let _ = check_url(&hosts.clone().allow_private(true), &url);
});
