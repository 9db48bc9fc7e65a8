//! Integration tests of `toolscout-invoke`: native tools, HTTP tools against a local
//! server on 127.0.0.1, built-in tools, and snapshots of what the model sees.

#![allow(clippy::unwrap_used, missing_docs)]

mod builtin;
mod http;
#[cfg(feature = "mcp-client")]
mod mcp_client;
mod native;
mod props;
mod redaction;
mod server;
mod setup;
mod whole_args;

use toolscout_invoke::Outcome;

/// An outcome as the model reads it, pretty JSON, with the test server's port hidden.
pub(crate) fn show(outcome: &Outcome) -> String {
    let text = serde_json::to_string_pretty(&outcome.to_json()).unwrap();
    let re = regex::Regex::new(r"(127\.0\.0\.1|localhost):\d+").unwrap();
    re.replace_all(&text, "$1:[port]").into_owned()
}
