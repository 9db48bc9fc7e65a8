//! Auth helpers for HTTP tools: HMAC request signing and OAuth2 client-credentials
//! tokens, refreshed before they expire.
//!
//! Both read their keys from the [`SecretStore`]; the model never sees or sets them.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use base64::Engine;
use hmac::{Hmac, Mac};
use reqwest::{Method, Url};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::InvokableTool;
use crate::http::{HttpConfig, HttpRequest, send};
use crate::template::{Target, expand, url_encode};
use crate::{ErrorKind, SecretStore, ToolError};

/// The `auth` key of an HTTP tool's `impl` block.
///
/// ```
/// use serde_json::json;
/// use toolscout_invoke::AuthConfig;
///
/// let hmac: AuthConfig = serde_json::from_value(json!({"type": "hmac", "secret": "SIGNING_KEY"})).unwrap();
/// let oauth: AuthConfig = serde_json::from_value(json!({
///     "type": "oauth2",
///     "tokenUrl": "https://auth.example.com/token",
///     "clientId": "${CLIENT_ID}",
///     "clientSecret": "${CLIENT_SECRET}"
/// })).unwrap();
/// # let _ = (hmac, oauth);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum AuthConfig {
    /// Sign each request with HMAC-SHA256 (see [`hmac_signature`]).
    Hmac(HmacAuth),
    /// Get a bearer token with the OAuth2 client-credentials grant.
    #[serde(rename = "oauth2")]
    OAuth2(OAuth2Auth),
}

impl AuthConfig {
    pub(crate) fn validate(&self) -> Result<(), String> {
        match self {
            AuthConfig::Hmac(h) if h.secret.is_empty() => {
                Err("hmac needs \"secret\", the name of the secret holding the key".to_owned())
            }
            AuthConfig::OAuth2(o) => {
                let lower = o.token_url.to_ascii_lowercase();
                if lower.starts_with("http://") || lower.starts_with("https://") {
                    Ok(())
                } else {
                    Err(format!(
                        "tokenUrl must start with http:// or https://, found {:?}",
                        o.token_url
                    ))
                }
            }
            AuthConfig::Hmac(_) => Ok(()),
        }
    }
}

/// HMAC-SHA256 request signing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HmacAuth {
    /// Name of the secret that holds the key.
    pub secret: String,
    /// Header that carries the hex signature.
    #[serde(default = "signature_header")]
    pub header: String,
    /// Header that carries the Unix timestamp that was signed.
    #[serde(default = "timestamp_header")]
    pub timestamp_header: String,
}

fn signature_header() -> String {
    "X-Signature".to_owned()
}

fn timestamp_header() -> String {
    "X-Timestamp".to_owned()
}

/// OAuth2 client credentials (RFC 6749 §4.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuth2Auth {
    /// The token endpoint; it must be in the allowed hosts too.
    pub token_url: String,
    /// Client id, a template over secrets (e.g. `${CLIENT_ID}`).
    pub client_id: String,
    /// Client secret, a template over secrets (e.g. `${CLIENT_SECRET}`).
    pub client_secret: String,
    /// Space-separated scopes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// The HMAC-SHA256 signature of a request, hex-encoded, over
/// `"{timestamp}\n{METHOD}\n{path_and_query}\n{hex(sha256(body))}"`.
///
/// A server verifies a request by computing the same value.
///
/// ```
/// let sig = toolscout_invoke::hmac_signature(b"key", "POST", "/v1/items?x=1", 1_700_000_000, b"{}");
/// assert_eq!(sig.len(), 64);
/// ```
pub fn hmac_signature(
    key: &[u8],
    method: &str,
    path_and_query: &str,
    timestamp: i64,
    body: &[u8],
) -> String {
    let canonical = format!(
        "{timestamp}\n{}\n{path_and_query}\n{}",
        method.to_ascii_uppercase(),
        hex::encode(Sha256::digest(body))
    );
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = match Hmac::<Sha256>::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => return String::new(),
    };
    mac.update(canonical.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// Adds the signature headers of `auth` to `req`.
pub(crate) fn sign(
    auth: &HmacAuth,
    req: &mut HttpRequest,
    secrets: &SecretStore,
) -> Result<(), ToolError> {
    let key = secrets.get(&auth.secret).ok_or_else(|| {
        ToolError::new(
            ErrorKind::Misconfigured,
            format!(
                "the signing secret '{}' is not configured; ask the operator to set it",
                auth.secret
            ),
        )
    })?;
    let timestamp = chrono::Utc::now().timestamp();
    let path_and_query = match req.url.query() {
        Some(q) => format!("{}?{q}", req.url.path()),
        None => req.url.path().to_owned(),
    };
    let sig = hmac_signature(
        key.as_bytes(),
        req.method.as_str(),
        &path_and_query,
        timestamp,
        &req.body,
    );
    req.headers
        .push((auth.timestamp_header.clone(), timestamp.to_string()));
    req.headers.push((auth.header.clone(), sig));
    Ok(())
}

#[derive(Debug, Clone)]
struct CachedToken {
    access_token: String,
    refresh_at: Instant,
}

/// What a cached token was obtained with: the tool it was obtained for and every input
/// of its request.
///
/// **Rationale:** a token is sent to the host of the tool that asked for it; two tools
/// that share a token endpoint and client id may differ in everything else (the secret,
/// the scope, where the token goes, which secrets they were granted), so a token is never
/// handed to a tool other than the one it was fetched for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct TokenKey {
    tool: String,
    token_url: String,
    client_id: String,
    /// SHA-256 of the client secret: the secret itself is not kept beside the token.
    secret_digest: [u8; 32],
    scope: Option<String>,
}

/// Most tokens kept; past it, expired ones are dropped, then the one due first.
const MAX_TOKENS: usize = 1024;

/// OAuth2 tokens by tool and everything their request was made of, refreshed before
/// expiry.
#[derive(Debug, Default)]
pub(crate) struct TokenCache {
    // A tokio mutex held across the fetch, so that concurrent calls fetch one token.
    tokens: tokio::sync::Mutex<HashMap<TokenKey, CachedToken>>,
}

/// The client id and secret of `auth`, expanded with the secrets the tool `tool` may
/// send to the token endpoint's host (not the secrets granted to the host of the tool's
/// own request: the token endpoint is another host).
fn credentials(
    tool: &InvokableTool,
    auth: &OAuth2Auth,
    secrets: &SecretStore,
) -> Result<(Url, TokenKey, String), ToolError> {
    let url = Url::parse(&auth.token_url).map_err(|e| {
        ToolError::new(
            ErrorKind::Misconfigured,
            format!("invalid OAuth2 tokenUrl: {e}"),
        )
    })?;
    let scoped = secrets.scoped(
        tool.name(),
        tool.qualified.as_ref(),
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or(0),
    );
    let no_args = Map::new();
    let client_id = expand(
        &auth.client_id,
        Target::Text,
        "auth.clientId",
        &no_args,
        &scoped,
    )
    .map_err(misconfigured)?;
    let client_secret = expand(
        &auth.client_secret,
        Target::Text,
        "auth.clientSecret",
        &no_args,
        &scoped,
    )
    .map_err(misconfigured)?;
    let key = TokenKey {
        // By where the tool is kept, not its name: two owners' tools of one name never
        // share a token.
        tool: tool.identity(),
        token_url: auth.token_url.clone(),
        client_id,
        secret_digest: Sha256::digest(client_secret.as_bytes()).into(),
        scope: auth.scope.clone(),
    };
    Ok((url, key, client_secret))
}

impl TokenCache {
    /// A valid access token for the tool `tool` with `auth`, fetched when there is none
    /// or it is about to expire. `secrets` is the invoker's whole store: the client
    /// credentials are expanded with what the tool may send to the token endpoint.
    pub(crate) async fn token(
        &self,
        tool: &InvokableTool,
        auth: &OAuth2Auth,
        secrets: &SecretStore,
        config: &HttpConfig,
        timeout: Duration,
    ) -> Result<String, ToolError> {
        let (url, key, client_secret) = credentials(tool, auth, secrets)?;
        let mut tokens = self.tokens.lock().await;
        if let Some(t) = tokens.get(&key)
            && Instant::now() < t.refresh_at
        {
            return Ok(t.access_token.clone());
        }
        let fetched = fetch(auth, url, &key.client_id, &client_secret, config, timeout).await?;
        let token = fetched.access_token.clone();
        if tokens.len() >= MAX_TOKENS && !tokens.contains_key(&key) {
            let now = Instant::now();
            tokens.retain(|_, t| now < t.refresh_at);
            if tokens.len() >= MAX_TOKENS
                && let Some(first) = tokens
                    .iter()
                    .min_by_key(|(_, t)| t.refresh_at)
                    .map(|(k, _)| k.clone())
            {
                tokens.remove(&first);
            }
        }
        tokens.insert(key, fetched);
        Ok(token)
    }

    /// Forgets the token of the tool `tool` with `auth` (after a 401).
    pub(crate) async fn invalidate(
        &self,
        tool: &InvokableTool,
        auth: &OAuth2Auth,
        secrets: &SecretStore,
    ) {
        if let Ok((_, key, _)) = credentials(tool, auth, secrets) {
            self.tokens.lock().await.remove(&key);
        }
    }
}

fn misconfigured(mut e: ToolError) -> ToolError {
    e.kind = ErrorKind::Misconfigured;
    e
}

async fn fetch(
    auth: &OAuth2Auth,
    url: Url,
    client_id: &str,
    client_secret: &str,
    config: &HttpConfig,
    timeout: Duration,
) -> Result<CachedToken, ToolError> {
    let mut body = "grant_type=client_credentials".to_owned();
    if let Some(scope) = &auth.scope {
        body.push_str("&scope=");
        body.push_str(&url_encode(scope));
    }
    let basic = base64::engine::general_purpose::STANDARD.encode(format!(
        "{}:{}",
        url_encode(client_id),
        url_encode(client_secret)
    ));
    let req = HttpRequest {
        method: Method::POST,
        url,
        headers: vec![
            (
                "Content-Type".to_owned(),
                "application/x-www-form-urlencoded".to_owned(),
            ),
            ("Accept".to_owned(), "application/json".to_owned()),
            ("Authorization".to_owned(), format!("Basic {basic}")),
        ],
        body: body.into_bytes(),
        truncate_body: false,
        secret_headers: vec!["Authorization".to_owned()],
        secret_body: true,
    };
    let started = Instant::now();
    let resp = send(config, req, timeout, 64 * 1024).await?;
    let failed = |why: String| {
        ToolError::new(
            ErrorKind::Transport,
            format!("could not get an OAuth2 token: {why}"),
        )
    };
    if !(200..300).contains(&resp.status) {
        return Err(
            failed(format!("the token endpoint answered {}", resp.status))
                .with_details(json!({"status": resp.status})),
        );
    }
    let v: Value = serde_json::from_slice(&resp.body)
        .map_err(|_| failed("the token endpoint did not answer JSON".to_owned()))?;
    let access_token = v
        .get("access_token")
        .and_then(Value::as_str)
        .ok_or_else(|| failed("the answer has no access_token".to_owned()))?
        .to_owned();
    let lifetime = Duration::from_secs(v.get("expires_in").and_then(Value::as_u64).unwrap_or(3600));
    // Refresh a minute early, or halfway through short lifetimes.
    let margin = (lifetime / 2).min(Duration::from_secs(60));
    Ok(CachedToken {
        access_token,
        refresh_at: started + lifetime - margin,
    })
}
