//! Approval of calls to tools with `requires_approval`: the caller supplies an
//! [`Approver`]; a refusal is an error result, never a panic.

use serde_json::Value;

use crate::native::BoxFuture;

/// A call waiting for approval.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The tool.
    pub tool: String,
    /// The validated arguments.
    pub arguments: Value,
    /// The tool's one-line summary.
    pub summary: String,
}

/// A decision on an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// The call may run.
    Approved,
    /// The call must not run, optionally with a reason the model will see.
    Refused(Option<String>),
}

/// Decides whether a call that requires approval may run (a person in a UI, a policy).
///
/// Any `Fn(&ApprovalRequest) -> Approval` is an approver:
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
