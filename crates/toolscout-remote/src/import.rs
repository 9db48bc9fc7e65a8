//! Importing a manifest into a source's bundle, and the small parsers it needs.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use headers::HeaderMapExt as _;
use serde_json::{Value, json};
use toolscout_catalog::{BundlePut, Catalog, Tool, ToolPut};
use toolscout_discover::Toolbox;
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::manifest::{ToolManifest, from_definition};
use toolscout_spec::identity::canonical_json;
use uuid::Uuid;

use super::{ALL_ARGS, DEFAULT_MAX_AGE, MAX_MAX_AGE, RemoteSource, SUPPORTED_MAJOR};
use crate::Result;

/// `max-age` of a `Cache-Control` header, at most [`MAX_MAX_AGE`]; [`DEFAULT_MAX_AGE`]
/// when there is none (or the header cannot be read), zero for `no-cache`/`no-store`.
///
/// **Rationale:** the value comes from another server; `Instant + Duration` panics on
/// overflow, so `max-age=18446744073709551615` must not reach it.
pub(super) fn max_age(headers: &reqwest::header::HeaderMap) -> Duration {
    let Some(cc) = headers.typed_get::<headers::CacheControl>() else {
        return DEFAULT_MAX_AGE;
    };
    if cc.no_cache() || cc.no_store() {
        return Duration::ZERO;
    }
    cc.max_age()
        .map_or(DEFAULT_MAX_AGE, |age| age.min(MAX_MAX_AGE))
}

/// Whether a manifest's `protocol_version` has a major version this consumer reads.
pub(super) fn check_version(body: &Value) -> std::result::Result<(), String> {
    let version = body
        .get("protocol_version")
        .and_then(Value::as_str)
        .ok_or_else(|| "the manifest has no protocol_version".to_owned())?;
    let major = version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u64>().ok())
        .ok_or_else(|| format!("protocol_version {version:?} is not a version number"))?;
    if major == SUPPORTED_MAJOR {
        Ok(())
    } else {
        Err(format!(
            "protocol_version {version} has an unknown major version (this consumer reads {SUPPORTED_MAJOR}.x); skipped"
        ))
    }
}

/// A slug for a source's bundle: `remote-` and the scenario name's letters and digits.
fn bundle_slug(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .take(50)
        .collect();
    let cleaned = cleaned.trim_matches('-');
    if cleaned.is_empty() {
        "remote".to_owned()
    } else {
        format!("remote-{cleaned}")
    }
}

/// Brings the source's bundle in line with `manifest`; returns each tool's
/// `enabled_by_default`, by name. A changed definition gets a new version label (a
/// hash of the definition), because versions are immutable.
pub(super) fn import(
    toolbox: &Toolbox,
    source: &RemoteSource,
    manifest: &ToolManifest,
    overrides: &BTreeMap<String, bool>,
) -> Result<BTreeMap<String, bool>> {
    let catalog = toolbox.catalog();
    let bundle = source.bundle_id();
    let put = BundlePut::new(bundle_slug(&manifest.scenario.name))
        .with_display_name(format!("{} (remote)", manifest.scenario.name))
        .with_description(format!(
            "{} — served by {}",
            manifest.scenario.description, source.endpoint
        ));
    match catalog.bundle(bundle) {
        Ok(b) if b.slug == put.slug && b.is_enabled => {}
        Ok(b) if b.slug == put.slug => {
            catalog.patch_bundle(bundle, true)?;
        }
        _ => {
            catalog.put_bundle(bundle, &put)?;
        }
    }
    let mut existing: HashMap<String, Tool> = bundle_tools(catalog, bundle)
        .into_iter()
        .map(|t| (t.slug.clone(), t))
        .collect();
    let mut defaults = BTreeMap::new();
    for def in &manifest.tools {
        let spec = match from_definition(def) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(endpoint = %source.endpoint, tool = %def.name, error = %e, "remote tool skipped");
                continue;
            }
        };
        let slug = toolscout_spec::name::slug_from_name(&spec.name);
        let implementation = invoke_route(source, &spec);
        // The version covers how the tool is called too, so that a new token or a
        // catalog imported by an older release is brought up to date.
        let def_json = json!({
            "definition": serde_json::to_value(def).unwrap_or(Value::Null),
            "impl": implementation,
        });
        let hash = Uuid::new_v5(&Uuid::NAMESPACE_OID, canonical_json(&def_json).as_bytes());
        let version = format!("r{}", &hash.simple().to_string()[..12]);
        let enabled = overrides
            .get(spec.name.as_str())
            .copied()
            .unwrap_or(def.metadata.enabled_by_default);
        defaults.insert(spec.name.to_string(), def.metadata.enabled_by_default);
        match existing.remove(&slug) {
            Some(t) if t.version == version => {
                if t.is_enabled != enabled {
                    catalog.patch_tool(bundle, &slug, &version, enabled)?;
                }
                continue;
            }
            Some(t) => {
                catalog.delete_tool(bundle, &t.slug, &t.version)?;
            }
            None => {}
        }
        let put = ToolPut::http(spec, implementation).with_enabled(enabled);
        // The remote's built-ins come under their own names (see `put_remote_tool`).
        catalog.put_remote_tool(bundle, &slug, &version, &put)?;
    }
    for gone in existing.into_values() {
        catalog.delete_tool(bundle, &gone.slug, &gone.version)?;
    }
    Ok(defaults)
}

/// The `impl` block of an imported tool: an HTTP call of the remote's invoke route,
/// `POST {endpoint}/api/v1/tools/{name}/invoke` with `{"args": <the arguments>}`, whose
/// answer is an outcome read as such (`responseEncoding: outcome`): its `value` is the
/// result, its `error` (kind, message, details) the error the caller sees. A source with a token sends it as a bearer token
/// read from the secret [`RemoteSource::token_secret`], so that the token is never
/// stored in the catalog.
pub(super) fn invoke_route(source: &RemoteSource, spec: &ToolSpec) -> Value {
    let mut headers = serde_json::Map::new();
    headers.insert("Content-Type".to_owned(), json!("application/json"));
    if source.token.is_some() {
        headers.insert(
            "Authorization".to_owned(),
            json!(format!("Bearer ${{{}}}", source.token_secret())),
        );
    }
    let mut implementation = json!({
        "method": "POST",
        "urlTemplate": format!("{}/api/v1/tools/{}/invoke", source.endpoint, spec.name),
        "headers": headers,
        "bodyTemplate": format!("{{\"args\":${{{ALL_ARGS}}}}}"),
        "responseEncoding": "outcome",
    });
    if let Some(secs) = spec.metadata.timeout_seconds {
        implementation["timeoutMs"] = json!(u64::from(secs) * 1000);
    }
    implementation
}

/// Sets each tool of the bundle to its override, or to its manifest default.
pub(super) fn apply_overrides(
    toolbox: &Toolbox,
    bundle: Uuid,
    defaults: &BTreeMap<String, bool>,
    overrides: &BTreeMap<String, bool>,
) -> Result<()> {
    let catalog = toolbox.catalog();
    if !catalog.bundle(bundle).is_ok_and(|b| b.is_active()) {
        // Writes inside a disabled bundle are refused; the next import applies them.
        return Ok(());
    }
    for t in bundle_tools(catalog, bundle) {
        let name = t.spec.name.as_str();
        let Some(default) = defaults.get(name) else {
            continue;
        };
        let want = overrides.get(name).copied().unwrap_or(*default);
        if t.is_enabled != want {
            catalog.patch_tool(bundle, &t.slug, &t.version, want)?;
        }
    }
    Ok(())
}

/// The tools of one bundle, whole (only that bundle's files are read).
fn bundle_tools(catalog: &Catalog, bundle: Uuid) -> Vec<Tool> {
    catalog
        .heads()
        .into_iter()
        .filter(|h| h.bundle_id == bundle)
        .filter_map(|h| catalog.tool(h.id).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn age(value: &str) -> Duration {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::CACHE_CONTROL, value.parse().unwrap());
        max_age(&headers)
    }

    #[test]
    fn max_age_is_clamped() {
        assert_eq!(age("public, max-age=60"), Duration::from_secs(60));
        assert_eq!(age("max-age=18446744073709551615"), MAX_MAX_AGE);
        assert_eq!(age("no-store"), Duration::ZERO);
        assert_eq!(age("no-cache, max-age=60"), Duration::ZERO);
        assert_eq!(age("max-age=\"30\""), Duration::from_secs(30));
        assert_eq!(age("max-age=soon"), DEFAULT_MAX_AGE);
        // What the clamp protects: the deadline computed from it.
        assert!(
            std::time::Instant::now()
                .checked_add(age("max-age=18446744073709551615"))
                .is_some()
        );
    }
}
