//! [`Agent`]: a config, a client, a tool host and an approver; [`Agent::run`] runs
//! the loop and returns a [`RunReport`].

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use toolscout_discover::{AgentProfile, DiscoverAgents};
use toolscout_spec::ToolSpec;

use crate::builder::AgentBuilder;
use crate::event::{Emitter, EventHandler};
use crate::run::{Runtime, run_loop};
use crate::{
    AgentConfig, AgentEvent, ChatClient, Message, Policy, TokenUsage, ToolHost, ToolScope, prompts,
};
use crate::{Approver, RefuseAll, Validators};

/// An agent ready to run.
///
/// Cheap to clone: the client, host and approver are shared.
#[derive(Clone)]
pub struct Agent {
    config: AgentConfig,
    client: ChatClient,
    host: Arc<dyn ToolHost>,
    approver: Arc<dyn Approver>,
    /// The argument check, the invoker's, its compiled schemas kept across runs.
    validators: Arc<Validators>,
    subagents: Vec<AgentConfig>,
    /// `discover_agents` over the sub-agents' profiles, when there are sub-agents.
    discover_agents: Option<DiscoverAgents>,
    on_event: Option<EventHandler>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("config", &self.config)
            .field("subagents", &self.subagents)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// An agent over `host`, talking to `client`. Calls that require approval are
    /// refused until an approver is set ([`Agent::with_approver`]).
    pub fn new(config: AgentConfig, client: ChatClient, host: Arc<dyn ToolHost>) -> Self {
        Agent {
            config,
            client,
            host,
            approver: Arc::new(RefuseAll),
            validators: Arc::default(),
            subagents: Vec::new(),
            discover_agents: None,
            on_event: None,
        }
    }

    /// An agent called `name` on `model`, built step by step: its tools
    /// ([`AgentBuilder::toolbox`]), its endpoint, its events (see [`AgentBuilder`]).
    pub fn builder(name: impl Into<String>, model: impl Into<String>) -> AgentBuilder {
        AgentBuilder::new(name, model)
    }

    /// Hands every event of every run to `handler` as it happens, beside
    /// [`RunOptions::events`].
    #[must_use]
    pub fn with_event_handler(mut self, handler: EventHandler) -> Self {
        self.on_event = Some(handler);
        self
    }

    /// Runs the loop on one user message and returns the final answer; a run that
    /// stops without one (steps or tokens used up, an endpoint error) is an
    /// [`Error::Stopped`](crate::Error::Stopped). [`Agent::run`] returns the whole
    /// report instead.
    pub async fn ask(&self, input: &str) -> crate::Result<String> {
        let report = self.run(input, RunOptions::default()).await;
        match (report.stop, report.answer) {
            (StopReason::Answer, Some(answer)) => Ok(answer),
            (StopReason::Answer, None) => Ok(String::new()),
            (stop, _) => Err(crate::Error::Stopped {
                agent: report.agent,
                reason: stop.to_string(),
            }),
        }
    }

    /// Sets the approver of calls to tools with `metadata.requires_approval`.
    #[must_use]
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Adds a specialist agent, called like a tool (see [`subagent_spec`]): calling it
    /// runs a nested loop with the specialist's prompt, model, policy and tool scope over
    /// the same host, and returns its final answer. Specialists may delegate to each
    /// other (and to themselves) until the top-level agent's [`AgentOptions::max_depth`](crate::AgentOptions::max_depth)
    /// is reached.
    ///
    /// How the model meets them follows the policy, as for tools: under
    /// [`Policy::Upfront`] every sub-agent's tool is offered; under [`Policy::Browse`]
    /// and [`Policy::Retrieve`] the model gets `discover_agents`, which lists the
    /// sub-agents (their [`profile`](AgentConfig::profile)s: names and summaries, by
    /// category), describes one at level 2 (when to use it) or 3 (its system prompt and
    /// tools), and activates the sub-agents it described; a sub-agent called by name runs
    /// whether or not it was activated. Without sub-agents, no such tool is offered.
    #[must_use]
    pub fn with_subagent(mut self, config: AgentConfig) -> Self {
        self.subagents.push(config);
        self.discover_agents = Some(DiscoverAgents::new(
            self.subagents.iter().map(AgentConfig::profile).collect(),
        ));
        self
    }

    /// The agent's config.
    pub fn config(&self) -> &AgentConfig {
        &self.config
    }

    /// Runs the loop on one user message.
    pub async fn run(&self, input: &str, options: RunOptions) -> RunReport {
        self.run_messages(vec![Message::user(input)], options).await
    }

    /// Runs the loop on a conversation (e.g. a previous run's transcript plus a new user
    /// message). A system message is put first unless the conversation starts with one.
    pub async fn run_messages(&self, messages: Vec<Message>, options: RunOptions) -> RunReport {
        let rt = Runtime {
            client: &self.client,
            host: self.host.as_ref(),
            approver: self.approver.as_ref(),
            validators: &self.validators,
            subagents: &self.subagents,
            discover_agents: self.discover_agents.as_ref(),
            max_depth: self.config.options.max_depth,
            emitter: Emitter::new(options.events, self.on_event.clone()),
        };
        let messages = with_system(&self.config, messages);
        run_loop(&rt, &self.config, 0, messages, options.cancel).await
    }
}

/// What a policy appends to the system prompt about using the tools, and, with
/// [`AgentOptions::tool_requests`](crate::AgentOptions::tool_requests), about asking for more.
pub(crate) fn guidance(config: &AgentConfig) -> Option<String> {
    let base = match config.options.policy {
        Policy::Upfront => return None,
        Policy::Browse => prompts::BROWSE,
        Policy::Retrieve => prompts::RETRIEVE,
    };
    let mut guidance = base.trim().to_owned();
    if config.options.tool_requests {
        guidance.push_str("\n\n");
        guidance.push_str(prompts::TOOL_REQUEST.trim());
    }
    Some(guidance)
}

/// The conversation with the agent's system prompt first.
pub(crate) fn with_system(config: &AgentConfig, mut messages: Vec<Message>) -> Vec<Message> {
    if matches!(messages.first(), Some(Message::System { .. })) {
        return messages;
    }
    let mut prompt = config.system_prompt.trim().to_owned();
    if let Some(guidance) = guidance(config) {
        if !prompt.is_empty() {
            prompt.push_str("\n\n");
        }
        prompt.push_str(&guidance);
    }
    if !prompt.is_empty() {
        messages.insert(0, Message::system(prompt));
    }
    messages
}

impl AgentConfig {
    /// The agent as `discover_agents` shows it when it is a sub-agent: its name; the
    /// first line of its description as its summary (level 1) and the rest as when to
    /// use it (level 2); its category; its system prompt and the tools its scope allows
    /// (level 3: tool names, `*` for every tool).
    pub fn profile(&self) -> AgentProfile {
        let description = subagent_description(self);
        let (summary, rest) = description
            .split_once('\n')
            .unwrap_or((description.as_str(), ""));
        let mut profile = AgentProfile::new(&self.name, summary.trim());
        profile.category.clone_from(&self.category);
        profile.when_to_use = rest.trim().to_owned();
        profile.system_prompt = self.system_prompt.trim().to_owned();
        profile.tools = match &self.options.tool_scope {
            ToolScope::All => vec!["*".to_owned()],
            ToolScope::Only(names) => names.clone(),
            ToolScope::None => Vec::new(),
        };
        profile
    }
}

/// A sub-agent's description, or one made from its name.
fn subagent_description(config: &AgentConfig) -> String {
    if config.description.trim().is_empty() {
        format!("Delegate a task to the {} agent", config.name)
    } else {
        config.description.trim().to_owned()
    }
}

/// The tool a specialist agent is offered as: its name, its description, and one
/// parameter, `task`.
pub fn subagent_spec(config: &AgentConfig) -> ToolSpec {
    let description = subagent_description(config);
    let summary = description.lines().next().unwrap_or_default().to_owned();
    ToolSpec::builder(&config.name, summary)
        .description(description.clone())
        .parameters(json!({
            "type": "object",
            "properties": {"task": {"type": "string", "description": prompts::SUBAGENT_TASK.trim()}},
            "required": ["task"]
        }))
        .returns("the agent's final answer")
        .build()
        .unwrap_or_else(|_| fallback_subagent_spec(&description))
}

/// A spec under a fixed name, for a name the tool spec refuses though
/// [`AgentConfig::builder`]'s checks passed it; calls to it report an unknown tool.
fn fallback_subagent_spec(description: &str) -> ToolSpec {
    let mut spec = crate::host::call_tool_spec();
    spec.name = toolscout_spec::ToolName::new("invalid_agent_name").unwrap_or(spec.name);
    spec.summary = "An agent with an invalid name".to_owned();
    spec.description = description.to_owned();
    spec
}

/// How one run is watched and stopped.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Cancel it to stop the run: the current request or tool calls are abandoned and
    /// the run ends with [`StopReason::Cancelled`].
    pub cancel: CancellationToken,
    /// Where [`AgentEvent`]s go, if anywhere.
    pub events: Option<UnboundedSender<AgentEvent>>,
}

impl RunOptions {
    /// Uses `cancel` to stop the run.
    #[must_use]
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Sends events to `tx`.
    #[must_use]
    pub fn with_events(mut self, tx: UnboundedSender<AgentEvent>) -> Self {
        self.events = Some(tx);
        self
    }
}

/// Why a run stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model answered (a turn without tool calls).
    Answer,
    /// [`AgentOptions::max_steps`](crate::AgentOptions::max_steps) requests were made without an answer.
    MaxSteps,
    /// [`AgentOptions::max_tokens`](crate::AgentOptions::max_tokens) was reached.
    MaxTokens,
    /// [`RunOptions::cancel`] was cancelled.
    Cancelled,
    /// The endpoint rejected a request or could not be read (see [`crate::Error`]).
    EndpointError {
        /// The HTTP status, when there was one.
        status: Option<u16>,
        /// What went wrong.
        message: String,
    },
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::Answer => f.write_str("the model answered"),
            StopReason::MaxSteps => f.write_str("the step limit (max_steps) was reached"),
            StopReason::MaxTokens => f.write_str("the token limit (max_tokens) was reached"),
            StopReason::Cancelled => f.write_str("the run was cancelled"),
            StopReason::EndpointError {
                status: Some(status),
                message,
            } => write!(f, "the endpoint failed ({status}): {message}"),
            StopReason::EndpointError {
                status: None,
                message,
            } => write!(f, "the endpoint failed: {message}"),
        }
    }
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    /// The agent's name.
    pub agent: String,
    /// The transcript, system prompt first; every assistant tool call is followed by
    /// its `tool` message.
    pub messages: Vec<Message>,
    /// The final answer, when the run stopped with [`StopReason::Answer`].
    pub answer: Option<String>,
    /// Tokens used, sub-agents included.
    pub usage: TokenUsage,
    /// Model requests made (sub-agents' not included).
    pub steps: u32,
    /// Why the run stopped.
    pub stop: StopReason,
    /// The tools array at the end, by tool name, in order.
    pub tools: Vec<String>,
}
