//! [`Outcome`]: what a call returns to the model, `{ok:true, value}` or
//! `{ok:false, error:{kind, message, details}}`.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a call failed, as a short `snake_case` word a model or a program can branch on.
///
/// The one list of kinds the workspace puts on the wire: the invoker's, the servers' and
/// the agent loop's failures all say one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The arguments do not match the tool's argument schema.
    InvalidArguments,
    /// No tool of that name exists.
    UnknownTool,
    /// The tool exists but its native function is not registered in this process.
    NotRegistered,
    /// The tool is spec only: described, with no implementation to run
    /// ([`SPEC_ONLY_FUNC`](toolscout_spec::adapters::tool_file::SPEC_ONLY_FUNC)).
    SpecOnly,
    /// The tool (or its bundle) is disabled.
    Disabled,
    /// The call needed approval and was refused.
    ApprovalRefused,
    /// The tool's calls-per-minute limit is reached.
    RateLimited,
    /// The call took longer than its timeout.
    Timeout,
    /// The HTTP server answered with a status the tool does not accept.
    HttpStatus,
    /// The HTTP request could not be sent or its response not read.
    Transport,
    /// The destination host is not allowed.
    HostNotAllowed,
    /// A request or response is larger than the configured limit.
    TooLarge,
    /// The result does not match the tool's output schema.
    OutputInvalid,
    /// The tool is set up wrongly (a bad template, a missing secret); the caller cannot fix it.
    Misconfigured,
    /// A file or directory does not exist.
    NotFound,
    /// A path leaves the workspace root.
    OutsideWorkspace,
    /// The operating system refused access.
    PermissionDenied,
    /// The tool ran and failed.
    ToolFailed,
    /// The run was cancelled while the call ran (the agent loop).
    Cancelled,
    /// A sub-agent may not delegate further (the agent loop).
    DepthLimit,
    /// The agent's tool scope does not include the tool (the agent loop).
    OutOfScope,
    /// A sub-agent stopped without an answer (the agent loop).
    SubagentFailed,
    /// Required arguments that nothing in the conversation gave: the model should ask
    /// the user (the agent loop's grounding check).
    UngroundedArguments,
}

impl ErrorKind {
    /// The `snake_case` word used on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidArguments => "invalid_arguments",
            ErrorKind::UnknownTool => "unknown_tool",
            ErrorKind::NotRegistered => "not_registered",
            ErrorKind::SpecOnly => "spec_only",
            ErrorKind::Disabled => "disabled",
            ErrorKind::ApprovalRefused => "approval_refused",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::Timeout => "timeout",
            ErrorKind::HttpStatus => "http_status",
            ErrorKind::Transport => "transport",
            ErrorKind::HostNotAllowed => "host_not_allowed",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::OutputInvalid => "output_invalid",
            ErrorKind::Misconfigured => "misconfigured",
            ErrorKind::NotFound => "not_found",
            ErrorKind::OutsideWorkspace => "outside_workspace",
            ErrorKind::PermissionDenied => "permission_denied",
            ErrorKind::ToolFailed => "tool_failed",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::DepthLimit => "depth_limit",
            ErrorKind::OutOfScope => "out_of_scope",
            ErrorKind::SubagentFailed => "subagent_failed",
            ErrorKind::UngroundedArguments => "ungrounded_arguments",
        }
    }

    /// Whether trying the same call again later may succeed.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            ErrorKind::Timeout | ErrorKind::Transport | ErrorKind::RateLimited
        )
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a listing says of a spec-only tool (the first line of its description where a
/// listing has no field of its own for it, as in an MCP `tools/list`).
pub const SPEC_ONLY_NOTE: &str = include_str!("../prompts/spec_only_note.txt");

/// The message of [`ToolError::spec_only`]; `{tool}` is the tool's name.
const SPEC_ONLY_CALL: &str = include_str!("../prompts/spec_only_call.txt");

/// A failed call, as the model sees it: `{kind, message, details}`.
///
/// `message` is one or two sentences that say what failed and what to do about it;
/// `details` is structured data (failing paths, status codes, limits) or `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolError {
    /// Why the call failed.
    pub kind: ErrorKind,
    /// What happened and what to do, for a model to read.
    pub message: String,
    /// Structured context, or `null`.
    #[serde(default)]
    pub details: Value,
}

impl ToolError {
    /// An error without details.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
            details: Value::Null,
        }
    }

    /// The [`ErrorKind::SpecOnly`] error of a call of the spec-only tool `tool`: what the
    /// model reads is in `prompts/spec_only_call.txt`.
    pub fn spec_only(tool: &str) -> Self {
        ToolError::new(
            ErrorKind::SpecOnly,
            toolscout_spec::template::fill(SPEC_ONLY_CALL.trim(), &[("{tool}", tool)]),
        )
        .with_details(serde_json::json!({"tool": tool}))
    }

    /// A [`ErrorKind::ToolFailed`] error: the usual way for a native tool to fail.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::new(ErrorKind::ToolFailed, message)
    }

    /// An [`ErrorKind::InvalidArguments`] error.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        ToolError::new(ErrorKind::InvalidArguments, message)
    }

    /// Sets the details.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for ToolError {}

/// The result of one call: a value, or a [`ToolError`] for the model to read.
///
/// It serialises exactly as the tools spec says:
///
/// ```
/// use serde_json::json;
/// use toolscout_invoke::{ErrorKind, Outcome, ToolError};
///
/// let ok = Outcome::Ok(json!(42));
/// assert_eq!(serde_json::to_value(&ok).unwrap(), json!({"ok": true, "value": 42}));
/// let err = Outcome::Err(ToolError::new(ErrorKind::Timeout, "took too long"));
/// assert_eq!(
///     serde_json::to_value(&err).unwrap(),
///     json!({"ok": false, "error": {"kind": "timeout", "message": "took too long", "details": null}})
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "Wire", try_from = "Wire")]
pub enum Outcome {
    /// The call succeeded with this value.
    Ok(Value),
    /// The call failed.
    Err(ToolError),
}

impl Outcome {
    /// Whether the call succeeded.
    pub fn is_ok(&self) -> bool {
        matches!(self, Outcome::Ok(_))
    }

    /// The value, when the call succeeded.
    pub fn value(&self) -> Option<&Value> {
        match self {
            Outcome::Ok(v) => Some(v),
            Outcome::Err(_) => None,
        }
    }

    /// The error, when the call failed.
    pub fn error(&self) -> Option<&ToolError> {
        match self {
            Outcome::Ok(_) => None,
            Outcome::Err(e) => Some(e),
        }
    }

    /// As a standard `Result`.
    pub fn into_result(self) -> Result<Value, ToolError> {
        self.into()
    }

    /// The JSON form, `{"ok":…}`.
    pub fn to_json(&self) -> Value {
        Value::from(Wire::from(self.clone()))
    }
}

impl From<Result<Value, ToolError>> for Outcome {
    fn from(r: Result<Value, ToolError>) -> Self {
        match r {
            Ok(v) => Outcome::Ok(v),
            Err(e) => Outcome::Err(e),
        }
    }
}

impl From<Outcome> for Result<Value, ToolError> {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Ok(v) => Ok(v),
            Outcome::Err(e) => Err(e),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Wire {
    ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    value: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<ToolError>,
}

impl From<Wire> for Value {
    fn from(w: Wire) -> Self {
        let mut map = serde_json::Map::new();
        map.insert("ok".to_owned(), Value::Bool(w.ok));
        if let Some(v) = w.value {
            map.insert("value".to_owned(), v);
        }
        if let Some(e) = w.error {
            map.insert(
                "error".to_owned(),
                serde_json::json!({"kind": e.kind, "message": e.message, "details": e.details}),
            );
        }
        Value::Object(map)
    }
}

impl From<Outcome> for Wire {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Ok(v) => Wire {
                ok: true,
                value: Some(v),
                error: None,
            },
            Outcome::Err(e) => Wire {
                ok: false,
                value: None,
                error: Some(e),
            },
        }
    }
}

impl TryFrom<Wire> for Outcome {
    type Error = String;
    fn try_from(w: Wire) -> Result<Self, String> {
        match (w.ok, w.error) {
            (true, _) => Ok(Outcome::Ok(w.value.unwrap_or(Value::Null))),
            (false, Some(e)) => Ok(Outcome::Err(e)),
            (false, None) => Err("an outcome with \"ok\": false needs an \"error\"".to_owned()),
        }
    }
}
