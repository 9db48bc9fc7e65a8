//! Outgoing HTTP: one request with manual redirects, each hop checked against
//! [`AllowedHosts`] and pinned to the addresses that were checked; size limits;
//! retries with exponential back-off and jitter.

use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use reqwest::{Method, Url};
use serde_json::json;

use crate::hosts::display_url;
use crate::{AllowedHosts, ErrorKind, ToolError};

/// Retries of idempotent calls that failed in a way that may pass (connection errors,
/// timeouts, statuses 408, 425, 429, 500, 502, 503, 504).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Delay before the first retry; it doubles each time, with jitter.
    pub base_delay: Duration,
    /// Longest delay between attempts (also caps a server's `Retry-After`).
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(5),
        }
    }
}

impl RetryPolicy {
    /// No retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The delay before retry number `retry` (from 0): `base * 2^retry`, capped, with
    /// "equal jitter" (a random point in its upper half).
    pub fn delay(&self, retry: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32.checked_shl(retry.min(20)).unwrap_or(u32::MAX));
        let capped = exp.min(self.max_delay);
        let half = capped / 2;
        let jitter_ms = u64::try_from(half.as_millis()).unwrap_or(u64::MAX);
        half + Duration::from_millis(fastrand::u64(0..=jitter_ms))
    }
}

/// Policy and limits of outgoing HTTP, shared by HTTP tools and `http_get`.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Where requests may go.
    pub allowed_hosts: AllowedHosts,
    /// Largest request (URL plus body), in bytes.
    pub max_request_bytes: usize,
    /// Largest response body, in bytes.
    pub max_response_bytes: usize,
    /// Most redirects followed by one request.
    pub max_redirects: usize,
    /// Retries of idempotent tools.
    pub retry: RetryPolicy,
    /// Timeout of one attempt when the tool sets none.
    pub default_timeout: Duration,
    /// The `User-Agent` sent when the tool sets none.
    pub user_agent: String,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            allowed_hosts: AllowedHosts::none(),
            max_request_bytes: 1 << 20,
            max_response_bytes: 4 << 20,
            max_redirects: 5,
            retry: RetryPolicy::default(),
            default_timeout: Duration::from_secs(30),
            user_agent: concat!("toolscout/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

impl HttpConfig {
    /// The default limits with these allowed hosts.
    pub fn with_allowed_hosts(allowed_hosts: AllowedHosts) -> Self {
        HttpConfig {
            allowed_hosts,
            ..HttpConfig::default()
        }
    }
}

/// One request, ready to send.
#[derive(Debug, Clone)]
pub(crate) struct HttpRequest {
    pub(crate) method: Method,
    pub(crate) url: Url,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    /// Cut a response body over the limit instead of failing.
    pub(crate) truncate_body: bool,
    /// The names of the headers whose value carries a secret: dropped on a redirect to
    /// another origin, like `Authorization`.
    pub(crate) secret_headers: Vec<String>,
    /// Whether the body carries a secret: a redirect to another origin that would
    /// resend it is refused.
    pub(crate) secret_body: bool,
}

/// A response, body read whole (or cut at the limit, when asked).
#[derive(Debug, Clone)]
pub(crate) struct HttpResponse {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    pub(crate) url: Url,
    pub(crate) truncated: bool,
}

impl HttpResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Sends `req`, retrying transient failures up to `retries` times.
pub(crate) async fn send_with_retry(
    config: &HttpConfig,
    req: &HttpRequest,
    timeout: Duration,
    max_response_bytes: usize,
    retries: u32,
) -> Result<HttpResponse, ToolError> {
    let mut attempt = 0;
    loop {
        let result = send(config, req.clone(), timeout, max_response_bytes).await;
        let retry_after = match &result {
            Ok(resp) if is_transient_status(resp.status) => Some(
                resp.header("retry-after")
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs),
            ),
            Err(e) if matches!(e.kind, ErrorKind::Transport | ErrorKind::Timeout) => Some(None),
            _ => None,
        };
        let Some(server_delay) = retry_after.filter(|_| attempt < retries) else {
            return result.map_err(|e| with_attempts(e, attempt + 1));
        };
        let delay = match server_delay {
            Some(d) if d <= config.retry.max_delay => d,
            _ => config.retry.delay(attempt),
        };
        tracing::debug!(attempt, ?delay, "retrying a transient HTTP failure");
        tokio::time::sleep(delay).await;
        attempt += 1;
    }
}

fn with_attempts(mut e: ToolError, attempts: u32) -> ToolError {
    if attempts > 1 {
        e.message = format!("{} (after {attempts} attempts)", e.message);
        if let Some(obj) = e.details.as_object_mut() {
            obj.insert("attempts".to_owned(), json!(attempts));
        } else if e.details.is_null() {
            e.details = json!({"attempts": attempts});
        }
    }
    e
}

fn is_transient_status(status: u16) -> bool {
    matches!(status, 408 | 425 | 429 | 500 | 502 | 503 | 504)
}

/// Sends `req`, following redirects by hand so that each hop is checked.
pub(crate) async fn send(
    config: &HttpConfig,
    mut req: HttpRequest,
    timeout: Duration,
    max_response_bytes: usize,
) -> Result<HttpResponse, ToolError> {
    let size = req.url.as_str().len() + req.body.len();
    if size > config.max_request_bytes {
        return Err(ToolError::new(
            ErrorKind::TooLarge,
            format!(
                "the request is {size} bytes, over the limit of {} bytes; send less data",
                config.max_request_bytes
            ),
        )
        .with_details(json!({"bytes": size, "limit": config.max_request_bytes})));
    }
    let run = async {
        let mut hops = 0;
        loop {
            let resp = send_one(config, &req, timeout, max_response_bytes)
                .await
                .map_err(|mut e| {
                    if hops > 0 && e.kind == ErrorKind::HostNotAllowed {
                        e.message.push_str(" (reached through a redirect)");
                    }
                    e
                })?;
            let location = resp.header("location").map(str::to_owned);
            let Some(location) = location.filter(|_| is_redirect(resp.status)) else {
                return Ok(resp);
            };
            hops += 1;
            if hops > config.max_redirects {
                return Err(ToolError::new(
                    ErrorKind::Transport,
                    format!(
                        "{} redirected more than {} times",
                        display_url(&req.url),
                        config.max_redirects
                    ),
                ));
            }
            let next = req.url.join(&location).map_err(|e| {
                ToolError::new(
                    ErrorKind::Transport,
                    format!(
                        "{} redirected to an invalid location: {e}",
                        display_url(&req.url)
                    ),
                )
            })?;
            let body_dropped = resp.status == 303
                || (matches!(resp.status, 301 | 302) && req.method == Method::POST);
            if next.origin() != req.url.origin() {
                // Credentials were meant for the first origin only: the standard ones,
                // and every header a secret went into.
                let secret = req.secret_headers.clone();
                req.headers.retain(|(k, _)| {
                    !["authorization", "cookie", "proxy-authorization"]
                        .iter()
                        .any(|h| k.eq_ignore_ascii_case(h))
                        && !secret.iter().any(|h| k.eq_ignore_ascii_case(h))
                });
                if req.secret_body && !body_dropped && !req.body.is_empty() {
                    return Err(ToolError::new(
                        ErrorKind::HostNotAllowed,
                        format!(
                            "{} redirected to another origin, which would receive the request body and the secret in it; not followed",
                            display_url(&req.url)
                        ),
                    ));
                }
            }
            if body_dropped {
                req.method = Method::GET;
                req.body.clear();
            }
            // No URL in the log: a path may carry a secret, and logs are not redacted here.
            tracing::debug!(hops, "following a redirect");
            req.url = next;
        }
    };
    match tokio::time::timeout(timeout, run).await {
        Ok(r) => r,
        Err(_) => Err(timeout_error(&req.url, timeout)),
    }
}

fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

fn timeout_error(url: &Url, timeout: Duration) -> ToolError {
    ToolError::new(
        ErrorKind::Timeout,
        format!(
            "{} did not answer within {} ms",
            display_url(url),
            timeout.as_millis()
        ),
    )
    .with_details(json!({"timeout_ms": u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX)}))
}

async fn send_one(
    config: &HttpConfig,
    req: &HttpRequest,
    timeout: Duration,
    max_response_bytes: usize,
) -> Result<HttpResponse, ToolError> {
    let addrs = config.allowed_hosts.check(&req.url).await?;
    let shown = display_url(&req.url);
    // reqwest is built without a TLS provider (aws-lc is not built): ring, unless the
    // process has installed one already, which is just as good.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        // A backstop: the caller's tokio timeout, which gives the clearer message, fires first.
        .timeout(timeout + Duration::from_millis(500))
        .user_agent(config.user_agent.as_str());
    if let Some(domain) = req.url.host_str()
        && domain.parse::<std::net::IpAddr>().is_err()
        && !domain.starts_with('[')
    {
        // Connect to the addresses that were checked, not to a second lookup's answer.
        builder = builder.resolve_to_addrs(domain, &addrs);
    }
    let client = builder.build().map_err(|e| {
        ToolError::new(
            ErrorKind::Misconfigured,
            format!("cannot build an HTTP client: {e}"),
        )
    })?;
    let mut rb = client.request(req.method.clone(), req.url.clone());
    for (k, v) in &req.headers {
        let name = HeaderName::from_bytes(k.as_bytes()).map_err(|_| {
            ToolError::new(
                ErrorKind::Misconfigured,
                format!("invalid header name {k:?}"),
            )
        })?;
        let value = HeaderValue::from_str(v).map_err(|_| {
            ToolError::invalid_arguments(format!(
                "the value of header '{k}' contains characters not allowed in a header"
            ))
        })?;
        rb = rb.header(name, value);
    }
    if !req.body.is_empty() {
        rb = rb.body(req.body.clone());
    }
    let mut resp = rb
        .send()
        .await
        .map_err(|e| transport_error(&req.url, timeout, e))?;
    let status = resp.status().as_u16();
    let headers = resp
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let too_large = |bytes: u64| {
        ToolError::new(
            ErrorKind::TooLarge,
            format!(
                "the response of {shown} is larger than the limit of {max_response_bytes} bytes"
            ),
        )
        .with_details(json!({"bytes_at_least": bytes, "limit": max_response_bytes}))
    };
    let limit = u64::try_from(max_response_bytes).unwrap_or(u64::MAX);
    if let Some(len) = resp.content_length()
        && len > limit
        && !req.truncate_body
    {
        return Err(too_large(len));
    }
    let mut body = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| transport_error(&req.url, timeout, e))?
    {
        if body.len() + chunk.len() > max_response_bytes {
            if !req.truncate_body {
                return Err(too_large((body.len() + chunk.len()) as u64));
            }
            // Keep what fits and stop reading: the rest is never downloaded.
            let room = max_response_bytes - body.len();
            body.extend_from_slice(&chunk[..room]);
            truncated = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(HttpResponse {
        status,
        headers,
        body,
        url: req.url.clone(),
        truncated,
    })
}

fn transport_error(url: &Url, timeout: Duration, e: reqwest::Error) -> ToolError {
    if e.is_timeout() {
        return timeout_error(url, timeout);
    }
    let shown = display_url(url);
    // The URL is left out: it may carry a key in its query.
    let e = e.without_url();
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    ToolError::new(
        ErrorKind::Transport,
        format!("request to {shown} failed: {text}"),
    )
}
