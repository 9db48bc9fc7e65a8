//! `toolscout-invoke`: call the tools of a toolscout catalog, safely.
//!
//! An [`Invoker`] calls an [`InvokableTool`] (a [`ToolSpec`](toolscout_spec::ToolSpec) plus an
//! [`Implementation`] read from the `impl` block of its `tool.json`) with JSON
//! arguments, and returns an [`Outcome`]: `{"ok":true,"value":…}` or
//! `{"ok":false,"error":{"kind","message","details"}}`. A failed call is data for the
//! model, never a panic or an `Err`; its [`ToolError`] says which argument path failed
//! and what was expected, or what else went wrong ([`ErrorKind`]).
//!
//! | piece | what |
//! |---|---|
//! | [`NativeTool`] / [`DynTool`] | Rust tools: typed arguments (`Deserialize + JsonSchema`) and output (`Serialize`), registered by name |
//! | [`HttpImpl`] | templated HTTP tools: `${var}` from arguments or [`SecretStore`], JSONPath or regex extraction |
//! | [`HttpConfig`], [`AllowedHosts`], [`RetryPolicy`] | where HTTP may go (checked after expansion, on each redirect, on resolved addresses), size limits, retries |
//! | [`AuthConfig`] | HMAC request signing ([`hmac_signature`]) and OAuth2 client-credentials tokens |
//! | [`Approver`] | decides on calls to tools with `requires_approval` |
//! | [`UsageSink`] | receives a [`UsageEvent`] per call, off the call's path |
//! | [`jsonpath`] | RFC 9535 JSONPath over hostile paths and values, bounded before it runs ([`jsonpath::BoundedPath`]) |
//! | [`builtin`] | the built-in tools: `read_file`, `write_file`, `search_files`, `http_get`, `json_query`, `clock` |
//! | `mcp_client` | (feature `mcp-client`) another MCP server's tools, listed and called through it as native tools |
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//! use toolscout_invoke::{ErrorKind, Invoker, NativeTool, ToolError};
//!
//! /// Greets someone.
//! #[derive(Deserialize, JsonSchema)]
//! struct GreetArgs {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! struct Greet;
//!
//! impl NativeTool for Greet {
//!     const NAME: &'static str = "greet";
//!     const SUMMARY: &'static str = "Say hello to someone";
//!     type Args = GreetArgs;
//!     type Output = String;
//!
//!     async fn call(&self, args: GreetArgs) -> Result<String, ToolError> {
//!         Ok(format!("Hello, {}!", args.name))
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let mut invoker = Invoker::default();
//! invoker.register(Greet).unwrap();
//!
//! let ok = invoker.invoke_native("greet", json!({"name": "Ada"})).await;
//! assert_eq!(ok.to_json(), json!({"ok": true, "value": "Hello, Ada!"}));
//!
//! let bad = invoker.invoke_native("greet", json!({"name": 7})).await;
//! let error = bad.error().unwrap();
//! assert_eq!(error.kind, ErrorKind::InvalidArguments);
//! assert!(error.message.contains("- name: 7 is not of type \"string\""));
//! # });
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used))]

mod approval;
mod auth;
pub mod builtin;
mod error;
mod extract;
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;
mod hosts;
mod http;
mod http_tool;
mod invoker;
pub use toolscout_spec::jsonpath;
#[cfg(feature = "mcp-client")]
pub mod mcp_client;
mod native;
mod outcome;
mod ratelimit;
mod secrets;
mod selector;
mod template;
mod tool;
mod usage;
mod validate;

pub use approval::{Approval, ApprovalRequest, Approver, AutoApprove, PlannedStep, RefuseAll};
pub use auth::{AuthConfig, HmacAuth, OAuth2Auth, hmac_signature};
pub use error::{Error, Result};
pub use hosts::{AllowedHosts, is_public_ip};
pub use http::{HttpConfig, RetryPolicy};
pub use invoker::{Composite, DEFAULT_MAX_TIMEOUT, Invoker};
pub use native::{BoxFuture, DynTool, NativeTool};
pub use outcome::{ErrorKind, Outcome, SPEC_ONLY_NOTE, ToolError};
pub use secrets::{MIN_REDACTED_RUN, REDACTED, SecretStore};
pub use selector::ToolSelector;
pub use tool::{ErrorMode, HttpImpl, Implementation, InvokableTool, NativeImpl, ResponseEncoding};
pub use usage::{UsageEvent, UsageSink};
pub use validate::Validators;
