//! Approval of calls to tools with `requires_approval`: the caller supplies an
//! [`Approver`]; a refusal is an error result, never a panic.
//!
//! The one approver of the workspace: the [`Invoker`](crate::Invoker) asks it before a
//! call, and so does the agent loop of `toolscout-agent` (which fills in the agent and
//! the model's call id).

use serde::Serialize;
use serde_json::Value;
use toolscout_spec::name::QualifiedName;

use crate::native::BoxFuture;

/// A call waiting for approval.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The tool (its real name, not an OpenAI alias).
    pub tool: String,
    /// Where a catalog keeps the tool: what an approval rule names it by
    /// ([`crate::ToolSelector`]); `None` for a tool in no catalog.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qualified: Option<QualifiedName>,
    /// The validated arguments.
    pub arguments: Value,
    /// The tool's one-line summary.
    pub summary: String,
    /// The agent that made the call, when an agent loop asks.
    pub agent: Option<String>,
    /// The model's id of the call, when an agent loop asks.
    pub call_id: Option<String>,
    /// What a recipe's call will run, step by step: one approval covers them all.
    /// Empty for any other tool.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<PlannedStep>,
}

/// One step of a composite call (a recipe), as its approval lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedStep {
    /// The step's id (`outer.inner` for a step of a nested recipe).
    pub step: String,
    /// The tool it calls.
    pub tool: String,
    /// Where a catalog keeps that tool (the exact tool the run calls).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qualified: Option<QualifiedName>,
    /// Whether the tool asks for approval of its own.
    pub requires_approval: bool,
}

impl ApprovalRequest {
    /// A request to call `tool` with `arguments`.
    pub fn new(tool: impl Into<String>, arguments: Value, summary: impl Into<String>) -> Self {
        ApprovalRequest {
            tool: tool.into(),
            qualified: None,
            arguments,
            summary: summary.into(),
            agent: None,
            call_id: None,
            steps: Vec::new(),
        }
    }

    /// Says where a catalog keeps the tool ([`ApprovalRequest::qualified`]).
    #[must_use]
    pub fn with_qualified(mut self, qualified: Option<QualifiedName>) -> Self {
        self.qualified = qualified;
        self
    }

    /// Lists what a recipe's call will run ([`ApprovalRequest::steps`]).
    #[must_use]
    pub fn with_steps(mut self, steps: Vec<PlannedStep>) -> Self {
        self.steps = steps;
        self
    }

    /// Says which agent asks, and the model's id of the call.
    #[must_use]
    pub fn with_call(mut self, agent: impl Into<String>, call_id: impl Into<String>) -> Self {
        self.agent = Some(agent.into());
        self.call_id = Some(call_id.into());
        self
    }
}

/// A decision on an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Approval {
    /// The call may run.
    Approved,
    /// The call must not run, optionally with a reason the model will see.
    Refused(Option<String>),
}

/// Decides whether a call that requires approval may run (a person in a UI, a policy).
///
/// The call waits until the future resolves (an agent loop's tool timeout does not run
/// meanwhile; cancelling the run does stop the wait). Any
/// `Fn(&ApprovalRequest) -> Approval` is an approver:
///
/// ```
/// use toolscout_invoke::{Approval, ApprovalRequest, Approver};
/// let deny_writes = |r: &ApprovalRequest| {
///     if r.tool == "write_file" { Approval::Refused(Some("read-only session".into())) } else { Approval::Approved }
/// };
/// fn takes(_: &dyn Approver) {}
/// takes(&deny_writes);
/// ```
pub trait Approver: Send + Sync {
    /// Decides on `request`.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval>;
}

impl<F> Approver for F
where
    F: Fn(&ApprovalRequest) -> Approval + Send + Sync,
{
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        let decision = self(request);
        Box::pin(async move { decision })
    }
}

/// Approves everything. For tests and trusted setups.
#[derive(Debug, Clone, Copy, Default)]
pub struct AutoApprove;

impl Approver for AutoApprove {
    fn approve<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async { Approval::Approved })
    }
}

/// Refuses everything: an agent's approver when the caller supplies none.
#[derive(Debug, Clone, Copy, Default)]
pub struct RefuseAll;

impl Approver for RefuseAll {
    fn approve<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async {
            Approval::Refused(Some("no approver is configured for this agent".to_owned()))
        })
    }
}
