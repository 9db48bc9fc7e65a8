//! Thin wrappers of crate-private parsers for the fuzz targets in `fuzz/` (issue #36).
//! Compiled only under `--cfg fuzzing`, which `cargo fuzz` passes: never part of the API.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use serde_json::{Map, Value};

use crate::extract::Extractor;
use crate::http::HttpResponse;
use crate::template::{Target, expand};
use crate::{AllowedHosts, HttpImpl, SecretStore, ToolError};

/// An HTTP tool's `extractExpr`, parsed as the tool does, then applied to a response
/// (`body` its JSON, `text` its text).
pub fn extract(expr: &str, body: &Value, text: &str) -> Result<Option<Value>, String> {
    Extractor::parse(expr)?.apply(body, text)
}

/// Whether an `extractExpr` needs the response parsed as JSON (`None`: it does not parse).
pub fn extract_needs_json(expr: &str) -> Option<bool> {
    Extractor::parse(expr).ok().map(|e| e.needs_json())
}

/// Where a template lands, as the fuzz targets name it.
#[derive(Debug, Clone, Copy)]
pub enum TemplateTarget {
    /// `urlTemplate`.
    Url,
    /// A header's template.
    Header,
    /// A JSON `bodyTemplate`.
    Json,
    /// Any other `bodyTemplate`.
    Text,
}

/// A template expanded as an HTTP tool expands it.
pub fn expand_template(
    template: &str,
    target: TemplateTarget,
    args: &Map<String, Value>,
    secrets: &SecretStore,
) -> Result<String, ToolError> {
    let (target, field) = match target {
        TemplateTarget::Url => (Target::Url, "urlTemplate"),
        TemplateTarget::Header => (Target::Header, "headers.X"),
        TemplateTarget::Json => (Target::Json, "bodyTemplate"),
        TemplateTarget::Text => (Target::Text, "bodyTemplate"),
    };
    expand(template, target, field, args, secrets)
}

/// The check of an expanded URL before a request ([`AllowedHosts::check`]) and the URL as
/// errors show it; `None` where the check would resolve a host name (a fuzzer does no DNS).
pub fn check_url(
    hosts: &AllowedHosts,
    url: &reqwest::Url,
) -> Option<(String, Result<Vec<SocketAddr>, ToolError>)> {
    if let Some(host) = url.host_str() {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let port = url.port_or_known_default().unwrap_or(80);
        if host.parse::<IpAddr>().is_err() && hosts.matches(host, port) {
            return None;
        }
    }
    let shown = crate::hosts::display_url(url);
    match pin!(hosts.check(url)).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(checked) => Some((shown, checked)),
        Poll::Pending => None,
    }
}

/// What an HTTP tool of block `http` returns for a response of `status` and `body`, as
/// the invoker hands it back: decoded, extracted (`extractExpr`), redacted of `secrets`
/// before the extraction and again at the end.
pub fn read_response(
    http: &HttpImpl,
    status: u16,
    body: &[u8],
    secrets: &SecretStore,
) -> Result<Value, ToolError> {
    let url = reqwest::Url::parse("http://fuzz.test/r")
        .map_err(|e| ToolError::failed(format!("the fuzzing URL: {e}")))?;
    let resp = HttpResponse {
        status,
        headers: Vec::new(),
        body: body.to_vec(),
        url,
        truncated: false,
    };
    crate::http_tool::finish(&reqwest::Method::GET, http, &resp, secrets)
        .map(|v| secrets.redact_value(&v))
        .map_err(|mut e| {
            e.message = secrets.redact(&e.message);
            e.details = secrets.redact_value(&e.details);
            e
        })
}
