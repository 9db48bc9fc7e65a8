//! Approvals: tools whose `metadata.requires_approval` is set wait for an [`Approver`].

use serde::Serialize;
use serde_json::Value;

use crate::BoxFuture;

/// A call waiting for approval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApprovalRequest {
    /// The agent that made the call.
    pub agent: String,
    /// The tool (its real name, not the OpenAI alias).
    pub tool: String,
    /// The arguments, already checked against the schema.
    pub arguments: Value,
    /// The call id.
    pub call_id: String,
}

/// The approver's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Decision {
    /// Run the call.
    Approve,
    /// Do not run it; the model is told why (`approval_refused`).
    Refuse {
        /// Shown to the model, when given.
        reason: Option<String>,
    },
}

/// Decides whether a call that requires approval may run, e.g. by asking a person.
///
/// The call waits until the future resolves (the tool timeout does not run meanwhile;
/// cancelling the run does stop the wait).
pub trait Approver: Send + Sync {
    /// Approves or refuses one call.
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision>;
}

/// Approves everything. For tests and trusted setups.
#[derive(Debug, Clone, Copy, Default)]
pub struct AutoApprove;

impl Approver for AutoApprove {
    fn approve<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async { Decision::Approve })
    }
}

/// Refuses everything: the default when the caller supplies no approver.
#[derive(Debug, Clone, Copy, Default)]
pub struct RefuseAll;

impl Approver for RefuseAll {
    fn approve<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async {
            Decision::Refuse {
                reason: Some("no approver is configured for this agent".to_owned()),
            }
        })
    }
}

/// An approver from a synchronous function.
///
/// ```
/// use toolscout_agent::{Decision, FnApprover};
/// let approver = FnApprover(|req: &toolscout_agent::ApprovalRequest| {
///     if req.tool == "write_file" {
///         Decision::Refuse { reason: Some("read-only session".into()) }
///     } else {
///         Decision::Approve
///     }
/// });
/// # let _ = approver;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct FnApprover<F>(pub F);

impl<F> Approver for FnApprover<F>
where
    F: Fn(&ApprovalRequest) -> Decision + Send + Sync,
{
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        let decision = (self.0)(request);
        Box::pin(async move { decision })
    }
}
