//! The console's chat: one turn of the agent loop per `POST /console/api/chat`, its
//! [`AgentEvent`]s streamed back as server-sent events.
//!
//! The request is `{"messages": [...], "pinned": ["tool", ...]}`: the transcript so far
//! (the `messages` of the previous turn's `done` event, plus the new user message) and
//! the tools the person pinned with the "+" palette, whose schemas are in the tools
//! array from the first step (activated, as if the model had disclosed them). The
//! stream is:
//!
//! * `event: run`, `{"run": id}` — the id that approvals refer to;
//! * `event: agent`, one [`AgentEvent`] each (text deltas, searches and calls,
//!   disclosures, activations, approval requests, the answer);
//! * `event: done`, `{"stop", "answer", "steps", "usage", "messages"}`.
//!
//! A call to a tool that requires approval waits until the person answers
//! `POST /console/api/chat/approve` with `{"run", "callId", "approve"}` (refused after
//! [`APPROVAL_WAIT`]). Closing the stream cancels the run.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use toolscout_agent::{
    Agent, AgentConfig, AgentEvent, Approval, ApprovalRequest, Approver, BoxFuture, CallContext,
    CallOutcome, CancellationToken, ChatClient, Message, Policy, RunOptions, Suggestion, ToolHost,
    ToolboxHost,
};
use toolscout_discover::Lookup;
use toolscout_spec::ToolSpec;

use super::Console;
use crate::error::AppError;
use crate::{AppState, Principal};

/// The system prompt; the browse policy adds how to find tools.
const SYSTEM: &str = "You are a helpful assistant. Use the tools when they help; find them first.";

/// The most messages a turn may carry.
pub const MAX_MESSAGES: usize = 400;
/// The most tools a turn may pin.
pub const MAX_PINNED: usize = 16;
/// How long a call waits for a person's approval before it is refused.
pub const APPROVAL_WAIT: Duration = Duration::from_secs(300);
/// The most calls that may wait for approval at once, across runs.
const MAX_PENDING: usize = 64;

/// The OpenAI-compatible endpoint the console's chat talks to.
#[derive(Clone)]
pub struct ChatSettings {
    /// Base URL with its version, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// The API key (may be empty for local servers); never shown.
    pub api_key: String,
    /// The model name.
    pub model: String,
    /// Model requests per turn before giving up.
    pub max_steps: u32,
    /// The specialist agents the chat's model may delegate to: it finds them with
    /// `discover_agents` (see [`Agent::with_subagent`]).
    pub subagents: Vec<AgentConfig>,
}

impl ChatSettings {
    /// Settings for `model` at `base_url`, with 16 steps per turn.
    pub fn new(base_url: &str, api_key: &str, model: &str) -> Self {
        ChatSettings {
            base_url: base_url.to_owned(),
            api_key: api_key.to_owned(),
            model: model.to_owned(),
            max_steps: 16,
            subagents: Vec::new(),
        }
    }

    /// Sets the model requests per turn.
    #[must_use]
    pub fn with_max_steps(mut self, steps: u32) -> Self {
        self.max_steps = steps.max(1);
        self
    }

    /// Sets the specialist agents the chat may delegate to.
    #[must_use]
    pub fn with_subagents(mut self, subagents: Vec<AgentConfig>) -> Self {
        self.subagents = subagents;
        self
    }
}

impl std::fmt::Debug for ChatSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatSettings")
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field("model", &self.model)
            .field("max_steps", &self.max_steps)
            .field(
                "subagents",
                &self.subagents.iter().map(|s| s.name()).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// A run id and a call id.
type CallKey = (String, String);

/// Calls waiting for a person's decision, by run and call id.
#[derive(Debug, Clone, Default)]
pub(crate) struct Approvals {
    pending: Arc<Mutex<HashMap<CallKey, oneshot::Sender<Approval>>>>,
}

impl Approvals {
    fn wait(&self, run: &str, call: &str) -> Option<oneshot::Receiver<Approval>> {
        let (tx, rx) = oneshot::channel();
        let mut pending = self.pending.lock().ok()?;
        pending.retain(|_, tx| !tx.is_closed());
        if pending.len() >= MAX_PENDING {
            return None;
        }
        pending.insert((run.to_owned(), call.to_owned()), tx);
        Some(rx)
    }

    fn decide(&self, run: &str, call: &str, decision: Approval) -> bool {
        let sender = self
            .pending
            .lock()
            .ok()
            .and_then(|mut p| p.remove(&(run.to_owned(), call.to_owned())));
        sender.is_some_and(|tx| tx.send(decision).is_ok())
    }
}

/// A tenant's runs: approvals are the operator's alone (the built-in file tools share one
/// workspace, so one tenant's approved write would be another's read).
struct OperatorApproves;

impl Approver for OperatorApproves {
    fn approve<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async {
            Approval::Refused(Some(
                "only the operator approves calls of tools that require approval on this server: ask them to pre-approve the tool (serve --approve TOOL)".to_owned(),
            ))
        })
    }
}

/// Asks the person in the console, through the `approval_requested` event.
struct ConsoleApprover {
    run: String,
    approvals: Approvals,
}

impl Approver for ConsoleApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async move {
            let Some(call_id) = request.call_id.as_deref() else {
                return Approval::Refused(Some("the call has no id to approve".to_owned()));
            };
            let Some(rx) = self.approvals.wait(&self.run, call_id) else {
                return Approval::Refused(Some(
                    "too many calls are waiting for approval".to_owned(),
                ));
            };
            match tokio::time::timeout(APPROVAL_WAIT, rx).await {
                Ok(Ok(decision)) => decision,
                Ok(Err(_)) => {
                    Approval::Refused(Some("the console closed before anyone answered".to_owned()))
                }
                Err(_) => Approval::Refused(Some(format!(
                    "nobody approved the call within {} s",
                    APPROVAL_WAIT.as_secs()
                ))),
            }
        })
    }
}

/// A [`ToolboxHost`] whose runs start with some tools already activated.
struct PinnedHost {
    inner: ToolboxHost,
    pinned: Vec<ToolSpec>,
}

impl ToolHost for PinnedHost {
    fn initial_tools(&self, policy: Policy) -> Vec<ToolSpec> {
        let mut tools = self.inner.initial_tools(policy);
        if policy.browses() {
            tools.extend(self.pinned.iter().cloned());
        }
        tools
    }

    fn spec(&self, name: &str) -> Option<ToolSpec> {
        self.inner.spec(name)
    }

    fn suggest(&self, name: &str) -> Vec<Suggestion> {
        self.inner.suggest(name)
    }

    fn retrieve(&self, message: &str, limit: usize) -> toolscout_agent::Retrieval {
        self.inner.retrieve(message, limit)
    }

    fn server_tools(&self, message: &str, found: &[String], limit: usize) -> Vec<String> {
        self.inner.server_tools(message, found, limit)
    }

    fn server_of(&self, tool: &str) -> Option<String> {
        self.inner.server_of(tool)
    }

    fn retrieve_within(
        &self,
        message: &str,
        servers: &[String],
        limit: usize,
    ) -> toolscout_agent::Retrieval {
        self.inner.retrieve_within(message, servers, limit)
    }

    fn qualified_name(&self, name: &str) -> Option<toolscout_spec::name::QualifiedName> {
        self.inner.qualified_name(name)
    }

    fn resolve_alias(&self, name: &str) -> Option<String> {
        self.inner.resolve_alias(name)
    }

    fn approval_steps(&self, name: &str) -> Vec<toolscout_invoke::PlannedStep> {
        self.inner.approval_steps(name)
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
        ctx: CallContext,
    ) -> BoxFuture<'a, CallOutcome> {
        self.inner.call(name, arguments, ctx)
    }
}

fn no_endpoint() -> AppError {
    AppError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "no_endpoint",
        "no OpenAI-compatible endpoint is configured for the chat: start the server with --model (or $TOOLSCOUT_MODEL) and --base-url (or $OPENAI_BASE_URL), e.g. a local llama.cpp server at http://127.0.0.1:8080/v1",
    )
}

/// `GET /console/api/chat`: whether the chat has an endpoint, and its model.
pub(crate) async fn status(console: Option<Extension<Arc<Console>>>) -> Json<Value> {
    match console.as_ref().and_then(|c| c.chat.as_ref()) {
        Some(chat) => Json(json!({"configured": true, "model": chat.model})),
        None => Json(json!({"configured": false, "message": no_endpoint().message})),
    }
}

/// The body of `POST /console/api/chat`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Turn {
    messages: Vec<Message>,
    #[serde(default)]
    pinned: Vec<String>,
}

/// `POST /console/api/chat`: one turn, streamed.
pub(crate) async fn turn(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    console: Option<Extension<Arc<Console>>>,
    body: Result<Json<Turn>, JsonRejection>,
) -> Result<Response, AppError> {
    let Some(Extension(console)) = console else {
        return Err(no_endpoint());
    };
    let Some(settings) = console.chat.clone() else {
        return Err(no_endpoint());
    };
    let Json(turn) = body?;
    if turn.messages.is_empty() {
        return Err(AppError::invalid(
            "messages is empty: send the conversation so far and the new user message",
        ));
    }
    if turn.messages.len() > MAX_MESSAGES {
        return Err(AppError::invalid(format!(
            "{} messages is more than the {MAX_MESSAGES} a turn may carry; start a new chat",
            turn.messages.len()
        )));
    }
    if turn.pinned.len() > MAX_PINNED {
        return Err(AppError::invalid(format!(
            "{} pinned tools is more than {MAX_PINNED}; unpin some",
            turn.pinned.len()
        )));
    }
    // The principal's tools only: pinned, searched and called.
    let toolbox = state.toolbox_for(principal.viewer());
    let mut pinned = Vec::new();
    for name in &turn.pinned {
        match toolbox.lookup(name) {
            Lookup::Found(tool) => pinned.push(tool.spec.clone()),
            Lookup::Disabled { reason, .. } => {
                return Err(AppError::invalid(format!(
                    "pinned tool '{name}' cannot be called: {reason}"
                )));
            }
            Lookup::NotFound { did_you_mean } => {
                return Err(AppError::invalid(format!(
                    "pinned tool '{name}' does not exist{}",
                    toolscout_search::did_you_mean(&did_you_mean)
                        .map(|hint| format!("; {hint}"))
                        .unwrap_or_default()
                )));
            }
        }
    }
    let config = AgentConfig::builder("console", settings.model.as_str())
        .system_prompt(SYSTEM)
        .policy(Policy::Browse)
        .max_steps(settings.max_steps)
        .stream(true)
        .build()
        .map_err(|e| AppError::invalid(format!("chat settings: {e}")))?;
    let run = uuid::Uuid::now_v7().to_string();
    let host = PinnedHost {
        inner: ToolboxHost::new(toolbox),
        pinned,
    };
    let approver: Arc<dyn Approver> = if principal.is_operator() {
        Arc::new(ConsoleApprover {
            run: run.clone(),
            approvals: console.approvals.clone(),
        })
    } else {
        Arc::new(OperatorApproves)
    };
    let client = console
        .client
        .clone()
        .unwrap_or_else(|| ChatClient::new(&settings.base_url, &settings.api_key));
    let mut agent = Agent::new(config, client, Arc::new(host)).with_approver(approver);
    for subagent in &settings.subagents {
        agent = agent.with_subagent(subagent.clone());
    }
    let (out_tx, out_rx) = mpsc::channel::<Event>(256);
    tokio::spawn(drive(agent, turn.messages, run, out_tx));
    let stream = futures_util::stream::unfold(out_rx, |mut rx| async move {
        rx.recv().await.map(|e| (Ok::<_, Infallible>(e), rx))
    });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

fn event(name: &str, data: &Value) -> Event {
    Event::default().event(name).data(data.to_string())
}

/// Runs the agent, forwarding its events to `out`; cancels the run when `out` closes.
async fn drive(agent: Agent, messages: Vec<Message>, run: String, out: mpsc::Sender<Event>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<AgentEvent>();
    let cancel = CancellationToken::new();
    let options = RunOptions::default()
        .with_events(tx)
        .with_cancel(cancel.clone());
    if out.send(event("run", &json!({"run": run}))).await.is_err() {
        return;
    }
    let running = agent.run_messages(messages, options);
    tokio::pin!(running);
    let report = loop {
        tokio::select! {
            Some(e) = rx.recv() => {
                let data = serde_json::to_value(&e).unwrap_or(Value::Null);
                if out.send(event("agent", &data)).await.is_err() {
                    cancel.cancel();
                }
            }
            report = &mut running => break report,
        }
    };
    while let Ok(e) = rx.try_recv() {
        let data = serde_json::to_value(&e).unwrap_or(Value::Null);
        let _ = out.send(event("agent", &data)).await;
    }
    let done = json!({
        "stop": report.stop,
        "answer": report.answer,
        "steps": report.steps,
        "usage": report.usage,
        "messages": report.messages,
    });
    let _ = out.send(event("done", &done)).await;
}

/// The body of `POST /console/api/chat/approve`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Approve {
    run: String,
    call_id: String,
    approve: bool,
    #[serde(default)]
    reason: Option<String>,
}

/// `POST /console/api/chat/approve`.
pub(crate) async fn approve(
    Extension(principal): Extension<Principal>,
    console: Option<Extension<Arc<Console>>>,
    body: Result<Json<Approve>, JsonRejection>,
) -> Result<Json<Value>, AppError> {
    let Json(a) = body?;
    let decision = if a.approve {
        Approval::Approved
    } else {
        Approval::Refused(Some(
            a.reason
                .filter(|r| !r.trim().is_empty())
                .unwrap_or_else(|| "the person refused the call".to_owned()),
        ))
    };
    // Only the operator's runs wait for approval: anyone else finds no waiting call.
    let found = principal.is_operator()
        && console.is_some_and(|c| c.approvals.decide(&a.run, &a.call_id, decision));
    if !found {
        return Err(AppError::not_found(format!(
            "no call {:?} of run {:?} is waiting for approval (it may have been answered or timed out)",
            a.call_id, a.run
        )));
    }
    Ok(Json(
        json!({"run": a.run, "callId": a.call_id, "approved": a.approve}),
    ))
}
