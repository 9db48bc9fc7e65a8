//! Tenants: several teams on one catalog, each with its own bearer tokens and limits.
//!
//! A tenant has a name (a DNS label), limits, and tokens. A token is `tsk_` and 64 hex
//! digits (256 random bits), shown once when it is made ([`NewToken::reveal`]); the
//! catalog keeps only its SHA-256 digest, a short prefix to recognise it by, a label and
//! its times. Removing a tenant keeps its record (so that its id is never reused) and
//! revokes every token of it.
//!
//! **Rationale:** the digest is plain SHA-256, without salt or a slow hash. Those defend
//! passwords, which people choose from a small space; a token is 256 random bits, so
//! there is no dictionary to precompute and nothing to slow down, while a slow hash would
//! cost every request its time and turn random bad tokens into a CPU attack. Without a
//! salt a presented token is found by its digest in a map, so a token needs no id part.
//!
//! ```
//! use toolscout_catalog::{Catalog, TenantLimits};
//!
//! let dir = tempfile::tempdir()?;
//! let catalog = Catalog::open(dir.path(), &[])?;
//! let (tenant, token) = catalog.add_tenant("acme", TenantLimits::default())?;
//! // The token's text is shown once; the catalog keeps its digest.
//! let who = catalog.authenticate(token.reveal()).expect("a live token");
//! assert_eq!(who.tenant, tenant.id);
//! catalog.revoke_token(token.info().id)?;
//! assert!(catalog.authenticate(token.reveal()).is_none());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::events::CatalogEvent;

use crate::model::{TenantId, now};
use crate::{Error, Result};

/// What a token's text starts with.
pub const TOKEN_PREFIX: &str = "tsk_";

/// The longest tenant name: a DNS label's.
pub const MAX_TENANT_NAME: usize = 63;

/// Names no tenant may take: they name the other parties of a server.
const RESERVED: [&str; 4] = ["operator", "public", "admin", "built-in"];

/// What a tenant may hold and how fast it may ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TenantLimits {
    /// The most tool versions its live bundles may hold.
    pub max_tools: u32,
    /// The most live bundles it may own.
    pub max_bundles: u32,
    /// Requests a second a server admits from it (all its tokens together), on average.
    pub requests_per_second: u32,
    /// Requests it may send at once after a quiet spell.
    pub burst: u32,
}

impl Default for TenantLimits {
    /// 10,000 tools, 100 bundles, 50 requests a second with bursts of 100.
    fn default() -> Self {
        TenantLimits {
            max_tools: 10_000,
            max_bundles: 100,
            requests_per_second: 50,
            burst: 100,
        }
    }
}

/// One token of a tenant, as listed: never its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    /// The token's id, to revoke it by.
    #[serde(rename = "tokenID")]
    pub id: Uuid,
    /// The first 12 characters of its text (`tsk_` and 8 hex digits), to recognise it.
    pub prefix: String,
    /// What the tenant or the operator called it.
    #[serde(default)]
    pub label: String,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it was revoked, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<DateTime<Utc>>,
}

impl TokenInfo {
    /// Whether the token is still accepted (its tenant's removal revokes it too).
    pub fn is_live(&self) -> bool {
        self.revoked_at.is_none()
    }
}

/// A tenant, as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tenant {
    /// Its id.
    #[serde(rename = "tenantID")]
    pub id: TenantId,
    /// Its name: unique among live tenants.
    pub name: String,
    /// What it may hold and how fast it may ask.
    pub limits: TenantLimits,
    /// When it was made.
    pub created_at: DateTime<Utc>,
    /// When it was removed, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed_at: Option<DateTime<Utc>>,
    /// Its tokens, live and revoked, oldest first.
    pub tokens: Vec<TokenInfo>,
}

impl Tenant {
    /// Whether the tenant has not been removed.
    pub fn is_live(&self) -> bool {
        self.removed_at.is_none()
    }
}

/// A token just made: its text, shown once, and what is kept of it.
pub struct NewToken {
    pub(crate) info: TokenInfo,
    pub(crate) secret: String,
}

impl NewToken {
    /// What the catalog keeps of the token.
    pub fn info(&self) -> &TokenInfo {
        &self.info
    }

    /// The token's text: give it to the tenant now; the catalog cannot show it again.
    pub fn reveal(&self) -> &str {
        &self.secret
    }
}

impl fmt::Debug for NewToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewToken")
            .field("info", &self.info)
            .field("secret", &"<hidden>")
            .finish()
    }
}

/// Who a presented token belongs to ([`Catalog::authenticate`](crate::Catalog::authenticate)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authenticated {
    /// The tenant.
    pub tenant: TenantId,
    /// Its name.
    pub name: String,
    /// The token's id.
    pub token: Uuid,
    /// The tenant's limits now.
    pub limits: TenantLimits,
}

/// A token as stored: what is listed, and the digest of its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TokenRecord {
    #[serde(flatten)]
    pub(crate) info: TokenInfo,
    /// SHA-256 of the token's text, 64 hex digits.
    pub(crate) sha256: String,
}

/// A tenant as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TenantRecord {
    #[serde(rename = "tenantID")]
    pub(crate) id: TenantId,
    pub(crate) name: String,
    pub(crate) limits: TenantLimits,
    pub(crate) created_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) removed_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub(crate) tokens: Vec<TokenRecord>,
}

impl TenantRecord {
    pub(crate) fn public(&self) -> Tenant {
        Tenant {
            id: self.id,
            name: self.name.clone(),
            limits: self.limits,
            created_at: self.created_at,
            removed_at: self.removed_at,
            tokens: self.tokens.iter().map(|t| t.info.clone()).collect(),
        }
    }
}

/// The `schemaVersion` of the flat store's `tenants.json`.
pub(crate) const TENANTS_SCHEMA: &str = "toolscout.tenants/1";

/// The flat store's `tenants.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TenantsFile {
    pub(crate) schema_version: String,
    pub(crate) tenants: Vec<TenantRecord>,
}

/// The live tokens of live tenants, by the digest of their text.
pub(crate) type TokenMap = std::collections::HashMap<[u8; 32], (TenantId, Uuid)>;

/// The map [`Catalog::authenticate`] looks tokens up in.
pub(crate) fn token_map(tenants: &BTreeMap<TenantId, TenantRecord>) -> TokenMap {
    let mut map = TokenMap::new();
    for t in tenants.values().filter(|t| t.removed_at.is_none()) {
        for token in t.tokens.iter().filter(|k| k.info.is_live()) {
            if let Some(digest) = from_hex(&token.sha256) {
                map.insert(digest, (t.id, token.info.id));
            }
        }
    }
    map
}

/// The events that turn the tenants `old` into `new`.
pub(crate) fn diff(
    old: &BTreeMap<TenantId, TenantRecord>,
    new: &BTreeMap<TenantId, TenantRecord>,
) -> Vec<CatalogEvent> {
    let mut events = Vec::new();
    for (id, t) in new {
        let before = old.get(id);
        if before == Some(t) {
            continue;
        }
        let was_live = before.is_some_and(|b| b.removed_at.is_none());
        if was_live && t.removed_at.is_some() {
            events.push(CatalogEvent::TenantRemoved { tenant: *id });
            continue;
        }
        // A change that only revoked tokens is told as the revocations.
        let only_revoked = before.is_some_and(|b| {
            let mut b = b.clone();
            for k in &mut b.tokens {
                if let Some(n) = t.tokens.iter().find(|n| n.info.id == k.info.id) {
                    k.info.revoked_at = n.info.revoked_at;
                }
            }
            b == *t
        });
        if !only_revoked {
            events.push(CatalogEvent::TenantPut { tenant: *id });
        }
        for token in &t.tokens {
            let revoked_now = token.info.revoked_at.is_some()
                && before
                    .and_then(|b| b.tokens.iter().find(|k| k.info.id == token.info.id))
                    .is_some_and(|k| k.info.revoked_at.is_none());
            if revoked_now {
                events.push(CatalogEvent::TokenRevoked {
                    tenant: *id,
                    token: token.info.id,
                });
            }
        }
    }
    for id in old.keys() {
        if !new.contains_key(id) {
            events.push(CatalogEvent::TenantRemoved { tenant: *id });
        }
    }
    events
}

/// A tenant name: 1–63 of `a-z`, `0-9` and `-`, not starting or ending with `-` (a DNS
/// label), and not one of the names of a server's other parties.
///
/// **Rationale:** a name appears in paths (`/admin/tenants/{name}`), in files and in
/// logs; the narrow rule keeps out `..`, `/`, `\`, spaces, case twins and look-alikes.
pub fn check_tenant_name(name: &str) -> Result<()> {
    let refuse = |reason: &str| {
        Err(Error::TenantName {
            name: name.chars().take(80).collect(),
            reason: reason.to_owned(),
        })
    };
    if name.is_empty() {
        return refuse("a tenant name cannot be empty");
    }
    if name.len() > MAX_TENANT_NAME {
        return refuse("a tenant name has at most 63 characters");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return refuse("a tenant name holds only a-z, 0-9 and '-'");
    }
    if name.starts_with('-') || name.ends_with('-') {
        return refuse("a tenant name cannot start or end with '-'");
    }
    if RESERVED.contains(&name) {
        return refuse("the name is reserved");
    }
    Ok(())
}

/// A token's label: up to 100 printable characters.
pub(crate) fn check_label(label: &str) -> Result<()> {
    let count = label.chars().count();
    if count > 100 || label.chars().any(char::is_control) {
        return Err(Error::Invalid {
            what: "token label",
            reason: format!(
                "{count} characters{}; a label has at most 100 and no control characters",
                if label.chars().any(char::is_control) {
                    ", with a control character"
                } else {
                    ""
                }
            ),
        });
    }
    Ok(())
}

impl TenantLimits {
    /// Whether the limits can be enforced: a rate and a burst of at least 1 (0 would
    /// refuse every request, which removing the tenant says better).
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] naming the limit.
    pub fn check(&self) -> Result<()> {
        for (name, value) in [
            ("requestsPerSecond", self.requests_per_second),
            ("burst", self.burst),
        ] {
            if value == 0 {
                return Err(Error::Invalid {
                    what: "tenant limits",
                    reason: format!("{name} must be at least 1"),
                });
            }
        }
        Ok(())
    }
}

/// The SHA-256 digest of a token's text.
pub(crate) fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

fn to_hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn from_hex(text: &str) -> Option<[u8; 32]> {
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in text.as_bytes().chunks(2).enumerate() {
        let pair = std::str::from_utf8(pair).ok()?;
        out[i] = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

/// A fresh token: its text and its record.
pub(crate) fn mint(label: &str) -> Result<(String, TokenRecord)> {
    let mut random = [0u8; 32];
    getrandom::fill(&mut random).map_err(|e| Error::Random {
        reason: e.to_string(),
    })?;
    let secret = format!("{TOKEN_PREFIX}{}", to_hex(&random));
    let record = TokenRecord {
        info: TokenInfo {
            id: Uuid::now_v7(),
            prefix: secret.chars().take(TOKEN_PREFIX.len() + 8).collect(),
            label: label.to_owned(),
            created_at: now(),
            revoked_at: None,
        },
        sha256: to_hex(&digest(&secret)),
    };
    Ok((secret, record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_dns_label_rule() {
        for ok in ["a", "acme", "team-7", "0", &"x".repeat(63)] {
            assert!(check_tenant_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "a/b",
            "a\\b",
            "UPPER",
            "a b",
            "-a",
            "a-",
            "é",
            "operator",
            &"x".repeat(64),
        ] {
            assert!(check_tenant_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn hex_round_trips_and_refuses_what_is_not_a_digest() {
        let d = digest("tsk_x");
        assert_eq!(from_hex(&to_hex(&d)), Some(d));
        assert_eq!(from_hex("zz"), None);
        assert_eq!(from_hex(&"g".repeat(64)), None);
    }
}
