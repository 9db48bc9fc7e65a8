//! [`SecretStore`]: app-scoped secrets for `${NAME}` placeholders of HTTP tools.
//!
//! Values never leave the store except into an outgoing request: `Debug` prints names
//! only, and [`SecretStore::redact`] removes every value (raw, URL-encoded and
//! JSON-escaped) from the results and error messages the invoker returns and the logs it
//! writes.
//!
//! A secret may be **granted** to some tools ([`SecretStore::grant_tool`]) and some hosts
//! ([`SecretStore::grant_host`]): then only those tools, or requests to those hosts, may
//! use it; any other tool that names it is refused. A secret without grants may be used
//! by every tool (what a library user who builds the store in code expects); the CLI
//! grants every secret it reads.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use aho_corasick::AhoCorasick;
use toolscout_spec::name::QualifiedName;

use serde_json::Value;

use crate::{Error, Result, ToolSelector};

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
    grants: BTreeMap<String, Grant>,
    /// The names of secrets left out by [`SecretStore::scoped`], for its error messages.
    withheld: BTreeSet<String>,
    /// What finds the values in a text, made at the first redaction after a change.
    redactor: OnceLock<Arc<Redactor>>,
}

/// The shortest run of a secret that is redacted wherever it appears: a piece of a key
/// shorter than this says little of it, and shorter runs would match ordinary text.
pub const MIN_REDACTED_RUN: usize = 4;

/// The values of a store, made ready to be found in text.
struct Redactor {
    /// Every form a value is written in (raw, URL-encoded, JSON-escaped), longest first.
    whole: Vec<String>,
    /// Every run of [`MIN_REDACTED_RUN`] characters of those forms.
    pieces: Option<AhoCorasick>,
    /// The values' bytes, for base64.
    secrets: Vec<Vec<u8>>,
    /// Every run of [`MIN_REDACTED_RUN`] bytes of the values, for base64.
    byte_runs: HashSet<Vec<u8>>,
}

/// Who may use a secret.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Grant {
    tools: BTreeSet<ToolSelector>,
    hosts: Vec<String>,
}

impl SecretStore {
    /// Lets the tool `tool` use the secret `name` (wherever its request goes, within the
    /// allowed hosts). `tool` is a [`ToolSelector`]: `[owner:]bundle/tool` for one tool
    /// of one bundle, or a bare name for the operator's tools of that name (never a
    /// tenant's: a tenant could name a tool like the operator's). Text that reads as
    /// neither grants nothing.
    pub fn grant_tool(&mut self, name: &str, tool: &str) {
        let tools = &mut self.grants.entry(name.to_owned()).or_default().tools;
        if let Ok(selector) = ToolSelector::parse(tool) {
            tools.insert(selector);
        }
    }

    /// Lets requests to `host` (the syntax of [`crate::AllowedHosts`]: `api.example.com`,
    /// `*.example.com`, `localhost:8080`, `host:*`) use the secret `name`.
    pub fn grant_host(&mut self, name: &str, host: &str) {
        self.grants
            .entry(name.to_owned())
            .or_default()
            .hosts
            .push(host.to_owned());
    }

    /// Whether the secret `name` has grants (and so is limited to them).
    pub fn is_granted(&self, name: &str) -> bool {
        self.grants.contains_key(name)
    }

    /// Whether the tool named `tool`, kept at `qualified` (`None`: in no catalog),
    /// sending a request to `host` on `port`, may use the secret `name`: it has no
    /// grants, or one of them names this tool ([`ToolSelector::matches`]) or this host.
    pub fn may_use(
        &self,
        name: &str,
        tool: &str,
        qualified: Option<&QualifiedName>,
        host: &str,
        port: u16,
    ) -> bool {
        match self.grants.get(name) {
            None => true,
            Some(g) => {
                g.tools.iter().any(|s| s.matches(tool, qualified))
                    || crate::AllowedHosts::new(&g.hosts).matches(host, port)
            }
        }
    }

    /// The secrets the tool `tool` (kept at `qualified`) may use in a request to `host`
    /// on `port` (see [`SecretStore::may_use`]); the others are withheld, and a
    /// template that names one says it is not granted.
    pub fn scoped(
        &self,
        tool: &str,
        qualified: Option<&QualifiedName>,
        host: &str,
        port: u16,
    ) -> SecretStore {
        let mut out = SecretStore::default();
        for (name, value) in &self.values {
            if self.may_use(name, tool, qualified, host, port) {
                out.values.insert(name.clone(), value.clone());
            } else {
                out.withheld.insert(name.clone());
            }
        }
        out
    }

    /// Whether the secret `name` exists but was left out of this scoped store.
    pub(crate) fn is_withheld(&self, name: &str) -> bool {
        self.withheld.contains(name)
    }

    /// Adds or replaces a secret.
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.values.insert(name.into(), value.into());
        self.redactor = OnceLock::new();
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

    /// Secrets from a JSON file: one object whose members are `"NAME": "value"`, or
    /// `"NAME": {"value": "…", "hosts": ["api.example.com"], "tools": ["weather/get-weather"]}`
    /// to grant the secret (see [`SecretStore::grant_host`], [`SecretStore::grant_tool`]:
    /// a tool is `[tenant:]bundle/tool`, or a bare name for the operator's own tools).
    ///
    /// On Unix the file must not be readable or writable by the group or others (mode
    /// `0600` or stricter): a secrets file anyone can read is refused, not used.
    pub fn from_file(path: &Path) -> Result<Self> {
        let bad = |reason: String| Error::SecretsFile {
            path: path.to_owned(),
            reason,
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let meta = std::fs::metadata(path).map_err(|source| Error::Io {
                path: path.to_owned(),
                source,
            })?;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(bad(format!(
                    "its permissions are {mode:o}: others may read it; make it private with chmod 600"
                )));
            }
        }
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_owned(),
            source,
        })?;
        // The parse error is not shown: serde_json quotes input around the failure.
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            bad(format!(
                "not valid JSON (line {}, column {})",
                e.line(),
                e.column()
            ))
        })?;
        let obj = value.as_object().ok_or_else(|| {
            bad(
                "expected a JSON object of name: value strings (or {value, hosts, tools} objects)"
                    .to_owned(),
            )
        })?;
        let mut store = SecretStore::default();
        for (name, v) in obj {
            match v {
                Value::String(s) => store.insert(name.clone(), s.as_str()),
                Value::Object(entry) => {
                    let value = entry.get("value").and_then(Value::as_str).ok_or_else(|| {
                        bad(format!("the entry of '{name}' has no \"value\" string"))
                    })?;
                    store.insert(name.clone(), value);
                    for (key, grant) in entry {
                        let list = match key.as_str() {
                            "value" => continue,
                            "hosts" | "tools" => grant.as_array().ok_or_else(|| {
                                bad(format!("\"{key}\" of '{name}' must be an array of strings"))
                            })?,
                            other => {
                                return Err(bad(format!(
                                    "the entry of '{name}' has an unknown member \"{other}\"; the members are value, hosts and tools"
                                )));
                            }
                        };
                        for item in list {
                            let item = item.as_str().ok_or_else(|| {
                                bad(format!("\"{key}\" of '{name}' must be an array of strings"))
                            })?;
                            if key == "hosts" {
                                store.grant_host(name, item);
                            } else {
                                ToolSelector::parse(item)
                                    .map_err(|e| bad(format!("\"tools\" of '{name}': {e}")))?;
                                store.grant_tool(name, item);
                            }
                        }
                    }
                }
                _ => {
                    return Err(bad(format!(
                        "the value of '{name}' is not a string or a {{value, hosts, tools}} object"
                    )));
                }
            }
        }
        Ok(store)
    }

    /// Adds every secret of `other` (and its grants), replacing those of the same name.
    pub fn extend(&mut self, other: SecretStore) {
        self.values.extend(other.values);
        self.grants.extend(other.grants);
        self.redactor = OnceLock::new();
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
    /// (raw, URL-encoded, JSON-escaped), replaced by [`REDACTED`]; every run of base64
    /// whose decoding holds a secret, or a run of [`MIN_REDACTED_RUN`] bytes of one (an
    /// echoed `Authorization: Basic` header carries `user:secret` so), replaced whole;
    /// and every run of [`MIN_REDACTED_RUN`] characters or more of a value's forms,
    /// wherever it stands, replaced too.
    ///
    /// **Rationale:** the pieces. An extraction (a regular expression's group, a
    /// JSONPath), a cut excerpt or a service that splits what it echoes can return a
    /// secret a few characters at a time, and no piece is the whole value. What is left
    /// between two marks never holds 4 characters of a secret; the cost is that a
    /// result's text that happens to share 4 characters with a secret loses them too.
    ///
    /// ```
    /// use toolscout_invoke::SecretStore;
    ///
    /// let mut secrets = SecretStore::default();
    /// secrets.insert("API_KEY", "sk-4f9a8b7c6d5e");
    /// assert_eq!(secrets.redact("key=sk-4f9a8b7c6d5e"), "key=[REDACTED]");
    /// assert_eq!(secrets.redact("part=8b7c6d"), "part=[REDACTED]");
    /// assert_eq!(secrets.redact("short=8b7"), "short=8b7");
    /// ```
    pub fn redact(&self, text: &str) -> String {
        let r = self.redactor();
        if r.secrets.is_empty() {
            return text.to_owned();
        }
        let mut out = text.to_owned();
        for f in &r.whole {
            if out.contains(f.as_str()) {
                out = out.replace(f.as_str(), REDACTED);
            }
        }
        let out = redact_base64(&out, r);
        redact_pieces(&out, r)
    }

    /// The store's [`Redactor`], made once per change of its values.
    fn redactor(&self) -> &Redactor {
        self.redactor.get_or_init(|| {
            let values: Vec<&String> = self.values.values().filter(|v| !v.is_empty()).collect();
            let mut whole: Vec<String> = Vec::new();
            for v in &values {
                whole.push((*v).clone());
                whole.push(crate::template::url_encode(v));
                whole.push(crate::template::json_escape(v));
            }
            // Longest first, so that a secret containing another is removed whole.
            whole.sort_by_key(|f| std::cmp::Reverse(f.len()));
            whole.dedup();
            let mut runs: BTreeSet<String> = BTreeSet::new();
            for form in &whole {
                let chars: Vec<char> = form.chars().collect();
                for w in chars.windows(MIN_REDACTED_RUN) {
                    runs.insert(w.iter().collect());
                }
            }
            let mut byte_runs = HashSet::new();
            for v in &values {
                for w in v.as_bytes().windows(MIN_REDACTED_RUN) {
                    byte_runs.insert(w.to_vec());
                }
            }
            let pieces = if runs.is_empty() {
                None
            } else {
                // Patterns of a few characters each, some hundreds of them: the
                // automaton is small, and a failure to build one only costs the pieces'
                // redaction (never the whole values').
                AhoCorasick::new(&runs).ok()
            };
            Arc::new(Redactor {
                whole,
                pieces,
                secrets: values.iter().map(|v| v.as_bytes().to_vec()).collect(),
                byte_runs,
            })
        })
    }

    /// `value` with every secret redacted (see [`SecretStore::redact`]): in strings
    /// (keys included), and a number whose digits hold one becomes the string
    /// [`REDACTED`].
    pub fn redact_value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.redact(s)),
            Value::Array(a) => Value::Array(a.iter().map(|v| self.redact_value(v)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, v)| (self.redact(k), self.redact_value(v)))
                    .collect(),
            ),
            Value::Number(n) => {
                let digits = n.to_string();
                if self.redact(&digits) == digits {
                    value.clone()
                } else {
                    Value::String(REDACTED.to_owned())
                }
            }
            other => other.clone(),
        }
    }
}

/// `text` with every base64 run (standard or URL-safe alphabet, padded or not) whose
/// decoding contains a secret's value, or a run of [`MIN_REDACTED_RUN`] bytes of one,
/// replaced by [`REDACTED`].
fn redact_base64(text: &str, r: &Redactor) -> String {
    // The shortest run that can hold a piece: 4 characters for every 3 bytes.
    let shortest = r
        .secrets
        .iter()
        .map(|s| s.len().min(MIN_REDACTED_RUN))
        .min()
        .unwrap_or(1)
        .div_ceil(3)
        * 4;
    let is_b64 = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'-' | b'_');
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if !is_b64(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && is_b64(bytes[i]) {
            i += 1;
        }
        // Padding ends a run: `key=<base64>` is two runs.
        let mut padding = 0;
        while padding < 2 && bytes.get(i) == Some(&b'=') {
            i += 1;
            padding += 1;
        }
        if i - start >= shortest.max(4) && decodes_to_secret(&text[start..i], r) {
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = i;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Whether `run`, read as base64 in any of its usual forms and from any of its first
/// four characters (a run may start mid-group: text before it in the alphabet, or a cut
/// excerpt), decodes to bytes that contain a secret or a run of [`MIN_REDACTED_RUN`]
/// bytes of one.
fn decodes_to_secret(run: &str, r: &Redactor) -> bool {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let holds = |decoded: &[u8]| {
        r.secrets
            .iter()
            .any(|s| decoded.windows(s.len()).any(|w| w == s.as_slice()))
            || decoded
                .windows(MIN_REDACTED_RUN)
                .any(|w| r.byte_runs.contains(w))
    };
    if [&STANDARD, &URL_SAFE]
        .iter()
        .filter_map(|engine| engine.decode(run).ok())
        .any(|d| holds(&d))
    {
        return true;
    }
    let trimmed = run.trim_end_matches('=');
    (0..4.min(trimmed.len())).any(|skip| {
        let candidate = &trimmed[skip..];
        // A run may carry characters too many for whole groups of four: drop them.
        let candidate = &candidate[..candidate.len() - candidate.len() % 4];
        [&STANDARD_NO_PAD, &URL_SAFE_NO_PAD]
            .iter()
            .filter_map(|engine| engine.decode(candidate).ok())
            .any(|d| holds(&d))
    })
}

/// `text` with every run of [`MIN_REDACTED_RUN`] characters of a secret's forms, and
/// so every longer run, replaced by one [`REDACTED`] per stretch of overlapping runs.
fn redact_pieces(text: &str, r: &Redactor) -> String {
    let Some(pieces) = &r.pieces else {
        return text.to_owned();
    };
    let mut found: Vec<(usize, usize)> = pieces
        .find_overlapping_iter(text)
        .map(|m| (m.start(), m.end()))
        .collect();
    if found.is_empty() {
        return text.to_owned();
    }
    found.sort_unstable();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (start, end) in found {
        match spans.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => spans.push((start, end)),
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end) in spans {
        // Patterns are whole characters of valid UTF-8, so spans fall on boundaries.
        out.push_str(&text[copied..start]);
        out.push_str(REDACTED);
        copied = end;
    }
    out.push_str(&text[copied..]);
    out
}

impl fmt::Debug for SecretStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretStore")
            .field("names", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}
