//! `http_get`: fetch a URL of an allowed host.

use std::collections::BTreeMap;

use reqwest::{Method, Url};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolscout_spec::ToolSpec;

use crate::http::{HttpConfig, HttpRequest, send_with_retry};
use crate::{NativeTool, ToolError};

/// Fetches a URL with an HTTP GET and returns the status, headers and body as text.
/// Only allowed hosts can be reached.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpGetArgs {
    /// Absolute http:// or https:// URL
    #[schemars(pattern("^https?://"))]
    pub url: String,
    /// Extra request headers
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>", transform = super::no_default)]
    pub headers: Option<BTreeMap<String, String>>,
    /// Largest body to read, in bytes; the rest is cut off
    #[serde(default)]
    #[schemars(with = "u64", range(min = 1), transform = super::no_default)]
    pub max_bytes: Option<u64>,
}

/// What `http_get` returns. Any status is a success of the tool: read `status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct HttpGetOutput {
    /// The HTTP status.
    pub status: u16,
    /// Response headers (lowercase names; repeated headers joined with ", ").
    pub headers: BTreeMap<String, String>,
    /// The body, as text.
    pub body: String,
    /// Whether the body was cut at the size limit.
    pub truncated: bool,
}

/// The `http_get` tool.
#[derive(Debug, Clone)]
pub struct HttpGet {
    config: HttpConfig,
}

impl HttpGet {
    /// `http_get` with this policy.
    pub fn new(config: HttpConfig) -> Self {
        HttpGet { config }
    }
}

impl NativeTool for HttpGet {
    const NAME: &'static str = "http_get";
    const SUMMARY: &'static str = "Fetch a URL with HTTP GET";
    type Args = HttpGetArgs;
    type Output = HttpGetOutput;

    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        ToolSpec::from_args::<HttpGetArgs>(Self::NAME, Self::SUMMARY)
            .title("HTTP GET")
            .returns("object: status, headers and body")
            .category("web")
            .with_metadata(|m| {
                m.read_only = true;
                m.idempotent = true;
                m.open_world = true;
            })
            .build()?
            .with_output::<HttpGetOutput>()
    }

    async fn call(&self, args: HttpGetArgs) -> Result<HttpGetOutput, ToolError> {
        let url = Url::parse(&args.url).map_err(|e| {
            ToolError::invalid_arguments(format!(
                "url {:?} is not a valid URL ({e}); give an absolute http:// or https:// URL",
                args.url
            ))
        })?;
        let limit = args
            .max_bytes
            .map(|m| usize::try_from(m).unwrap_or(usize::MAX))
            .map_or(self.config.max_response_bytes, |m| {
                m.min(self.config.max_response_bytes)
            });
        let req = HttpRequest {
            method: Method::GET,
            url,
            headers: args.headers.unwrap_or_default().into_iter().collect(),
            body: Vec::new(),
            truncate_body: true,
            secret_headers: Vec::new(),
            secret_body: false,
        };
        let resp = send_with_retry(
            &self.config,
            &req,
            self.config.default_timeout,
            limit,
            self.config.retry.max_retries,
        )
        .await?;
        let mut headers: BTreeMap<String, String> = BTreeMap::new();
        for (k, v) in resp.headers {
            headers
                .entry(k.to_ascii_lowercase())
                .and_modify(|e| {
                    e.push_str(", ");
                    e.push_str(&v);
                })
                .or_insert(v);
        }
        Ok(HttpGetOutput {
            status: resp.status,
            headers,
            body: String::from_utf8_lossy(&resp.body).into_owned(),
            truncated: resp.truncated,
        })
    }
}
