//! [`AgentEvent`]: what a UI shows while a run goes on.
//!
//! Events go to the [`tokio::sync::mpsc::UnboundedSender`] in
//! [`RunOptions::events`](crate::RunOptions::events); sub-agents send theirs to the
//! same channel, tagged with their own name and depth. The channel is unbounded so
//! that a slow UI never stalls the loop; dropping the receiver is harmless.

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use crate::TokenUsage;

/// One thing that happened during a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum AgentEvent {
    /// A model request is about to be sent.
    StepStarted {
        /// Agent name.
        agent: String,
        /// Nesting depth (0: top level).
        depth: u32,
        /// Step number, from 1.
        step: u32,
    },
    /// Text streamed from the model.
    TextDelta {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The new text.
        text: String,
    },
    /// A model response is complete.
    StepFinished {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// Step number.
        step: u32,
        /// Tokens of this request.
        usage: TokenUsage,
    },
    /// A tool call starts.
    ToolCallStarted {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The model's call id.
        call_id: String,
        /// The tool name (resolved from its alias; the target of `call_tool`).
        tool: String,
        /// The arguments as the model wrote them.
        arguments: String,
    },
    /// A tool call finished, successfully or not.
    ToolCallFinished {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The model's call id.
        call_id: String,
        /// The tool name.
        tool: String,
        /// Whether it succeeded.
        ok: bool,
        /// The result the model reads.
        result: Value,
    },
    /// A call waits for the approver.
    ApprovalRequested {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The model's call id.
        call_id: String,
        /// The tool name.
        tool: String,
        /// The arguments, checked against the schema.
        arguments: Value,
        /// What a recipe's call will run: the one approval covers every step.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        steps: Vec<toolscout_invoke::PlannedStep>,
    },
    /// A call that runs in steps (a recipe) told how it goes.
    ToolProgress {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The model's call id.
        call_id: String,
        /// The tool name.
        tool: String,
        /// What happened, e.g. `{"event": "step_finished", "step": "fetch", …}`.
        progress: Value,
    },
    /// A call disclosed tools at level 2 or 3.
    Disclosed {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The tools disclosed.
        tools: Vec<String>,
    },
    /// [`Policy::Retrieve`](crate::Policy::Retrieve) searched the catalog with a user
    /// message, before the model's first request for it.
    Retrieved {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The tools found, best first (those not yet in the tools array are activated).
        tools: Vec<String>,
        /// How sure the host is of the first (see [`crate::Retrieval::confidence`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        confidence: Option<f32>,
        /// The needs the message was split into and searched for one by one (see
        /// [`crate::needs::split_needs`]); empty when it asked for one thing.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        needs: Vec<String>,
    },
    /// The model answered a request of several needs after serving only some, and was
    /// asked once more for the first need left (see
    /// [`AgentOptions::follow_needs`](crate::AgentOptions::follow_needs)).
    NeedFollowedUp {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The need, as the request states it.
        need: String,
        /// The tools found for it (activated again if they had left the array).
        tools: Vec<String>,
    },
    /// The model answered a request it was required to call a tool for, before any call
    /// ran, with an account of work that no call did ("I found a house in Long Beach"):
    /// it was told that nothing has run yet and asked once more to call a tool or decline.
    AnswerQuestioned {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The answer.
        answer: String,
    },
    /// A tool's schema was appended to the tools array.
    Activated {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The tool name.
        tool: String,
        /// Its OpenAI name.
        alias: String,
        /// The tool evicted to make room (least recently used), if any.
        evicted: Option<String>,
    },
    /// The model listed the tools a request of several steps needs, before its first
    /// request ([`AgentOptions::plan_needs`](crate::AgentOptions::plan_needs)): these steps are the request's needs.
    Planned {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The steps, one tool's function each.
        steps: Vec<String>,
    },
    /// The model asked for a tool it lacks with a `NEED:` line
    /// ([`AgentOptions::tool_requests`](crate::AgentOptions::tool_requests)): what it asked for and the tools its search
    /// activated (none when it found none).
    ToolRequested {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// What the model said the tool must do.
        need: String,
        /// The tools activated for it, best first.
        tools: Vec<String>,
    },
    /// Tools offered compactly (name, summary, parameters' names and types): the other
    /// tools of the server the retrieved tools belong to ([`AgentOptions::server_tools`](crate::AgentOptions::server_tools)).
    /// A call of one offers it whole ([`AgentEvent::Activated`]).
    Offered {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The tool names, best first.
        tools: Vec<String>,
    },
    /// The model answered.
    FinalAnswer {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The answer.
        text: String,
    },
    /// The model wrote a request that is not in English as it reads in English, before
    /// its first request ([`AgentOptions::translate_requests`](crate::AgentOptions::translate_requests)):
    /// the catalog is searched with this text, and the request's needs are its needs.
    Translated {
        /// Agent name.
        agent: String,
        /// Nesting depth.
        depth: u32,
        /// The language the request was detected in (see
        /// [`language::detect`](crate::language::detect)).
        language: String,
        /// The request in English, as the model wrote it.
        text: String,
    },
}

/// A function that sees every [`AgentEvent`] of a run as it happens (see
/// [`crate::AgentBuilder::on_event`]). It runs on the agent's task: keep it quick.
pub type EventHandler = std::sync::Arc<dyn Fn(&AgentEvent) + Send + Sync>;

/// Sends events when the caller asked for them: to the run's channel, to the agent's
/// handler, or both.
#[derive(Clone, Default)]
pub(crate) struct Emitter {
    tx: Option<UnboundedSender<AgentEvent>>,
    handler: Option<EventHandler>,
}

impl std::fmt::Debug for Emitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emitter")
            .field("tx", &self.tx)
            .field("handler", &self.handler.is_some())
            .finish()
    }
}

impl Emitter {
    pub(crate) fn new(
        tx: Option<UnboundedSender<AgentEvent>>,
        handler: Option<EventHandler>,
    ) -> Self {
        Emitter { tx, handler }
    }

    pub(crate) fn emit(&self, event: AgentEvent) {
        if let Some(handler) = &self.handler {
            handler(&event);
        }
        if let Some(tx) = &self.tx {
            // A closed receiver only means nobody is watching.
            let _ = tx.send(event);
        }
    }
}
