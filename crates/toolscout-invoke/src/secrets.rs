//! [`SecretStore`]: app-scoped secrets for `${NAME}` placeholders of HTTP tools.
//!
//! Values never leave the store except into an outgoing request: `Debug` prints names
//! only, and [`SecretStore::redact`] removes every value (raw, URL-encoded and
//! JSON-escaped) from the error messages the invoker returns and the logs it writes.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde_json::Value;

use crate::{Error, Result};

/// The text that replaces a secret's value wherever it would appear.
pub const REDACTED: &str = "[REDACTED]";

/// Named secrets, from the environment, a JSON file, or code.
///
/// ```
/// use toolscout_invoke::SecretStore;
///
/// let mut secrets = SecretStore::default();
/// secrets.insert("API_KEY", "s3cr3t-value");
/// assert_eq!(secrets.get("API_KEY"), Some("s3cr3t-value"));
/// assert_eq!(format!("{secrets:?}"), "SecretStore { names: [\"API_KEY\"] }");
/// assert_eq!(secrets.redact("key=s3cr3t-value"), "key=[REDACTED]");
/// ```
#[derive(Clone, Default)]
pub struct SecretStore {
    values: BTreeMap<String, String>,
}

impl SecretStore {
    /// Adds or replaces a secret.
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.values.insert(name.into(), value.into());
    }

    /// Secrets from `(name, value)` pairs whose name starts with `prefix`; the prefix is
    /// removed (`TOOLSCOUT_SECRET_API_KEY` becomes `API_KEY` with prefix `TOOLSCOUT_SECRET_`).
    pub fn from_vars(prefix: &str, vars: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut store = SecretStore::default();
        for (name, value) in vars {
            if let Some(short) = name.strip_prefix(prefix)
                && !short.is_empty()
            {
                store.insert(short, value);
            }
        }
        store
    }

    /// Secrets from the process environment (see [`SecretStore::from_vars`]).
    pub fn from_env(prefix: &str) -> Self {
        SecretStore::from_vars(prefix, std::env::vars())
    }

    /// Secrets from a JSON file holding one object of `name: "value"` strings.
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
        // The parse error is not shown: serde_json quotes input around the failure.
        let value: Value = serde_json::from_str(&text).map_err(|e| Error::SecretsFile {
            path: path.to_owned(),
            reason: format!("not valid JSON (line {}, column {})", e.line(), e.column()),
        })?;
        let obj = value.as_object().ok_or_else(|| Error::SecretsFile {
            path: path.to_owned(),
            reason: "expected a JSON object of name: value strings".to_owned(),
        })?;
        let mut store = SecretStore::default();
        for (name, v) in obj {
            let s = v.as_str().ok_or_else(|| Error::SecretsFile {
                path: path.to_owned(),
                reason: format!("the value of '{name}' is not a string"),
            })?;
            store.insert(name.clone(), s);
        }
        Ok(store)
    }

    /// Adds every secret of `other`, replacing those of the same name.
    pub fn extend(&mut self, other: SecretStore) {
        self.values.extend(other.values);
    }

    /// A secret's value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Whether a secret of this name exists.
    pub fn contains(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// The secrets' names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.values.keys().map(String::as_str)
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// `text` with every secret value, in any of the forms a template writes it
    /// (raw, URL-encoded, JSON-escaped), replaced by [`REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        let mut forms: Vec<String> = Vec::new();
        for v in self.values.values().filter(|v| !v.is_empty()) {
            forms.push(v.clone());
            forms.push(crate::template::url_encode(v));
            forms.push(crate::template::json_escape(v));
        }
        // Longest first, so that a secret containing another is removed whole.
        forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
        forms.dedup();
        let mut out = text.to_owned();
        for f in &forms {
            if out.contains(f.as_str()) {
                out = out.replace(f.as_str(), REDACTED);
            }
        }
        out
    }

    /// `value` with every string redacted (see [`SecretStore::redact`]), keys included.
    pub fn redact_value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.redact(s)),
            Value::Array(a) => Value::Array(a.iter().map(|v| self.redact_value(v)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, v)| (self.redact(k), self.redact_value(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

impl fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretStore")
            .field("names", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}
