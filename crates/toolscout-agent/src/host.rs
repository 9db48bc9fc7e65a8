//! The boundary between the loop and the tools: [`ToolHost`].
//!
//! The loop knows nothing of catalogs or search. A host answers three questions:
//!
//! 1. *Which tools does a run start with?* ([`ToolHost::initial_tools`]) Under
//!    [`Policy::Upfront`], every enabled tool; under [`Policy::Browse`], the
//!    `discover_*` tools and [`call_tool`](CALL_TOOL) (see [`call_tool_spec`]); under
//!    [`Policy::Retrieve`], the `discover_*` tools (found tools are activated, and any
//!    tool can be called by name, so `call_tool` would only cost tokens).
//! 2. *What is this tool's schema?* ([`ToolHost::spec`]) Used to activate a disclosed
//!    tool, to check arguments, and to read `metadata.requires_approval`,
//!    `metadata.enabled_by_default` (false: the tool is disabled) and
//!    `metadata.timeout_seconds`.
//! 3. *Run this call.* ([`ToolHost::call`]) The answer is a [`CallOutcome`]: the JSON
//!    the model reads, plus the names of tools the call disclosed at level 2 or 3, which
//!    the loop activates, and of the tools a search found, best first, of which the loop
//!    activates the first [`AgentOptions::activate_hits`](crate::AgentOptions::activate_hits).
//! 4. *Which tools fit this user message?* ([`ToolHost::retrieve`]) Under
//!    [`Policy::Retrieve`], the loop activates them before the first request.
//!
//! Before `call` runs, the loop has already resolved OpenAI aliases to tool names,
//! unwrapped `call_tool {name, arguments}` into a call of `name`, refused unknown and
//! disabled tools, checked the arguments against the schema and asked the approver;
//! it applies the timeout and cancellation around it. So `call` only sees real tool
//! names with plausible arguments, and never sees `call_tool`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolscout_spec::ToolSpec;

pub use toolscout_invoke::BoxFuture;
use toolscout_invoke::{ErrorKind, ToolError};

use crate::Policy;

/// The generic meta-tool that calls any tool by name, and its spec, for hosts to offer
/// under [`Policy::Browse`]: `call_tool {name, arguments}`, the same tool the MCP server
/// offers. (Under [`Policy::Retrieve`] found tools are activated and a tool called by
/// name runs, so hosts leave it out; a model that calls it anyway is still understood.)
pub use toolscout_discover::{CALL_TOOL, call_tool_spec};

/// The name of the tool whose call is the final answer, offered with
/// [`ToolChoice::RequiredAfterActivation`](crate::ToolChoice::RequiredAfterActivation):
/// a model that must call a tool can still decline the others.
pub const ANSWER_TOOL: &str = "answer";

/// The spec of [`ANSWER_TOOL`]: `answer {text: string}`.
///
/// **Rationale:** it rides on nearly every forced request, so it is short: one line
/// that names both uses (done, or no tool fits) and no description for `text`. The
/// longer text it replaced (a second sentence and a parameter description) cost 40
/// prompt tokens a request with Qwen2.5's chat template.
pub fn answer_tool_spec() -> ToolSpec {
    ToolSpec::builder(ANSWER_TOOL, "Answer the user with text")
        .description(crate::prompts::ANSWER_TOOL.trim())
        .parameters(json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"}
            },
            "required": ["text"]
        }))
        .build()
        // A fixed, valid spec: the tests build it.
        .unwrap_or_else(|e| unreachable!("the answer spec is valid: {e}"))
}

/// Where a call comes from.
#[derive(Debug, Clone)]
pub struct CallContext {
    /// The agent making the call.
    pub agent: String,
    /// Its nesting depth: 0 for the top-level agent.
    pub depth: u32,
    /// The model's call id.
    pub call_id: String,
    /// Cancelled when the run is; long calls should watch it.
    pub cancel: CancellationToken,
    /// Where a call that runs in steps (a recipe) tells how it goes: each value
    /// becomes an [`AgentEvent::ToolProgress`](crate::AgentEvent::ToolProgress).
    pub progress: ProgressSink,
}

/// Where a call's progress goes ([`CallContext::progress`]); cheap to clone.
#[derive(Clone, Default)]
pub struct ProgressSink(Option<std::sync::Arc<dyn Fn(Value) + Send + Sync>>);

impl ProgressSink {
    /// A sink that hands every report to `f`.
    pub fn new(f: impl Fn(Value) + Send + Sync + 'static) -> Self {
        ProgressSink(Some(std::sync::Arc::new(f)))
    }

    /// Tells one step of progress (a JSON object, e.g. a recipe's step event).
    pub fn report(&self, progress: Value) {
        if let Some(f) = &self.0 {
            f(progress);
        }
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "ProgressSink(..)"
        } else {
            "ProgressSink(none)"
        })
    }
}

/// The result of one call: what the model reads, and what it disclosed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallOutcome {
    /// `{"ok":true,"value":…}` or `{"ok":false,"error":{"kind":…,"message":…}}`.
    pub result: Value,
    /// Tools this call disclosed at level 2 or 3 (tool names, not aliases): under
    /// [`Policy::Browse`] and [`Policy::Retrieve`] the loop activates them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disclosed: Vec<String>,
    /// Tools this call found (a search's hits), best first: the loop activates the
    /// first [`AgentOptions::activate_hits`](crate::AgentOptions::activate_hits).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub found: Vec<String>,
}

impl CallOutcome {
    /// A success: `{"ok":true,"value":value}`.
    pub fn ok(value: Value) -> Self {
        CallOutcome {
            result: json!({"ok": true, "value": value}),
            disclosed: Vec::new(),
            found: Vec::new(),
        }
    }

    /// A failure the model can read and recover from:
    /// `{"ok":false,"error":{"kind":kind,"message":message}}`.
    pub fn error(kind: ErrorKind, message: impl Into<String>) -> Self {
        CallOutcome {
            result: json!({"ok": false, "error": {"kind": kind, "message": message.into()}}),
            disclosed: Vec::new(),
            found: Vec::new(),
        }
    }

    /// The outcome of a failed call of the invoker.
    pub fn from_tool_error(error: &ToolError) -> Self {
        CallOutcome::error(error.kind, error.message.clone())
    }

    /// Records tools disclosed at level 2 or 3 by this call.
    #[must_use]
    pub fn with_disclosed(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.disclosed.extend(names.into_iter().map(Into::into));
        self
    }

    /// Records the tools this call found, best first.
    #[must_use]
    pub fn with_found(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.found.extend(names.into_iter().map(Into::into));
        self
    }

    /// Whether the call succeeded.
    pub fn is_ok(&self) -> bool {
        self.result.get("ok").and_then(Value::as_bool) == Some(true)
    }

    /// The error kind, for a failure (`None` for a kind this crate does not know, which
    /// a remote server may send).
    pub fn error_kind(&self) -> Option<ErrorKind> {
        self.result
            .pointer("/error/kind")
            .and_then(|k| ErrorKind::deserialize(k).ok())
    }
}

/// A tool offered instead of a name that is no tool's: the tool's name, and the line the
/// model reads (a usage line or the name, optionally followed by ` — ` and a summary).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Suggestion {
    /// The tool's name.
    pub name: String,
    /// What the model reads about it, e.g. `read_file(file_path="…") — Read a file`.
    pub line: String,
}

/// What [`ToolHost::retrieve`] found for one user message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Retrieval {
    /// The tools, best first.
    pub tools: Vec<String>,
    /// How sure the host is that the first tool is what the message asks for, from 0 to
    /// 1: 1 when the message is the tool's name, the share of the name it spells when it
    /// is the start of one; for a sentence, how close in meaning the two are (the cosine
    /// of a sentence encoder: about 0.1 for unrelated texts, above 0.3 for one subject).
    /// `None` when the host cannot tell. The loop reports it
    /// ([`crate::AgentEvent::Retrieved`]) and requires a call whatever it is (see
    /// [`crate::ToolChoice::RequiredAfterActivation`]); `toolscout eval retrieve` shows
    /// how well it tells requests a tool serves from requests none does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f32>,
}

impl Retrieval {
    /// Tools found with no measure of confidence.
    pub fn tools(tools: Vec<String>) -> Self {
        Retrieval {
            tools,
            confidence: None,
        }
    }

    /// Whether the host measured a confidence below `floor`.
    pub fn is_below(&self, floor: f32) -> bool {
        self.confidence.is_some_and(|c| c < floor)
    }
}

/// Where tools come from and how they run; see the [module docs](self).
///
/// Implement it for a catalog (the `toolscout-discover` crate does); [`crate::StaticHost`]
/// is a small in-memory implementation for tests and examples.
pub trait ToolHost: Send + Sync {
    /// The tools offered at the start of a run under `policy`.
    ///
    /// `Upfront`: every enabled tool. `Browse`: the `discover_*` tools and
    /// [`call_tool_spec`]. `Retrieve`: the `discover_*` tools. Their order is kept in the
    /// tools array.
    fn initial_tools(&self, policy: Policy) -> Vec<ToolSpec>;

    /// The spec of a tool (any tool the host knows, enabled or not), or `None`.
    fn spec(&self, name: &str) -> Option<ToolSpec>;

    /// Tools to offer instead of `name`, which is not a tool: the closest names, or the
    /// tools its words find, best first. The loop puts their lines in the `unknown_tool`
    /// error, so a model that guessed a name can pick a real one, and activates the
    /// first [`AgentOptions::activate_hits`](crate::AgentOptions::activate_hits). None by
    /// default.
    fn suggest(&self, name: &str) -> Vec<Suggestion> {
        let _ = name;
        Vec::new()
    }

    /// The tools that best fit a user's message, best first, at most `limit`, and how
    /// sure the host is of the first: what [`Policy::Retrieve`] activates before the first
    /// request. Only tools that match the message belong here (a host need not fill
    /// `limit`). Nothing by default.
    fn retrieve(&self, message: &str, limit: usize) -> Retrieval {
        let _ = (message, limit);
        Retrieval::default()
    }

    /// The other tools of the server (the bundle: an API's or an MCP server's tools) that
    /// the tools `found` for `message` belong to, best first for `message`, at most
    /// `limit`, none of `found`: a task that needs one tool of a server often needs
    /// several ("put it in a slide deck": create, add a slide, save). The loop offers
    /// them compactly beside the tools it activated ([`AgentOptions::server_tools`](crate::AgentOptions::server_tools)).
    /// None by default.
    fn server_tools(&self, message: &str, found: &[String], limit: usize) -> Vec<String> {
        let _ = (message, found, limit);
        Vec::new()
    }

    /// The server `tool` belongs to (its bundle, by slug), when its bundle is one: a
    /// bundle of two tools or more, of a server's size, not built in. `None` for a tool
    /// in no such bundle (a catalog of loose functions kept in one bundle), or when the
    /// host cannot tell. None by default.
    fn server_of(&self, tool: &str) -> Option<String> {
        let _ = tool;
        None
    }

    /// [`ToolHost::retrieve`] among the tools of `servers` only (slugs, as
    /// [`ToolHost::server_of`] names them): the loop searches there for a need of a
    /// request whose own search leads off the request's servers (see
    /// [`AgentOptions::split_needs`](crate::AgentOptions::split_needs)). Nothing by default.
    fn retrieve_within(&self, message: &str, servers: &[String], limit: usize) -> Retrieval {
        let _ = (message, servers, limit);
        Retrieval::default()
    }

    /// The tool an OpenAI-style alias stands for, when `name` is no tool's name but the
    /// alias of exactly one (`spotify_play` for `spotify.play`): models write the alias of
    /// a tool they found but have not activated. None by default.
    fn resolve_alias(&self, name: &str) -> Option<String> {
        let _ = name;
        None
    }

    /// What the call of `name` will run, step by step, when it is a composite tool (a
    /// recipe): listed in its approval request ([`ApprovalRequest::steps`]), which covers
    /// them all. Nothing by default.
    ///
    /// [`ApprovalRequest::steps`]: toolscout_invoke::ApprovalRequest::steps
    fn approval_steps(&self, name: &str) -> Vec<toolscout_invoke::PlannedStep> {
        let _ = name;
        Vec::new()
    }

    /// Where a catalog keeps the tool `name` stands for ([`ApprovalRequest::qualified`]),
    /// so that an approval rule names it by owner, bundle and slug rather than by a name
    /// another owner's tool may share. None by default (a tool in no catalog).
    ///
    /// [`ApprovalRequest::qualified`]: toolscout_invoke::ApprovalRequest::qualified
    fn qualified_name(&self, name: &str) -> Option<toolscout_spec::name::QualifiedName> {
        let _ = name;
        None
    }

    /// Runs one call. `name` is a real tool name (never [`CALL_TOOL`]) and `arguments`
    /// a JSON object that passed the schema check. Failures are [`CallOutcome::error`]s,
    /// never panics.
    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
        ctx: CallContext,
    ) -> BoxFuture<'a, CallOutcome>;
}
