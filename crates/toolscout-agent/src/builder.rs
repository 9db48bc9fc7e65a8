//! [`AgentBuilder`]: an agent over a toolbox, in a few lines.

use std::sync::Arc;

use toolscout_discover::Toolbox;

use crate::config::AgentConfigBuilder;
use crate::event::EventHandler;
use crate::{
    Agent, AgentConfig, AgentEvent, ChatClient, Error, Policy, Result, ToolHost, ToolboxHost,
};

/// Builds an [`Agent`]: a name and a model, the tools (a [`Toolbox`] or any
/// [`ToolHost`]), the endpoint, and what to do with its events. Made by
/// [`Agent::builder`]; the config's other settings have their [`AgentConfig::builder`]
/// defaults and can be changed through [`AgentBuilder::config`].
///
/// ```no_run
/// use toolscout_agent::{Agent, AgentEvent};
/// use toolscout_discover::Toolbox;
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let toolbox = Toolbox::builder().build()?;
/// let agent = Agent::builder("assistant", "qwen2.5")
///     .endpoint("http://127.0.0.1:8080/v1", "none")
///     .toolbox(toolbox)
///     .on_event(|event| {
///         if let AgentEvent::ToolCallStarted { tool, .. } = event {
///             eprintln!("→ {tool}");
///         }
///     })
///     .build()?;
/// let answer = agent.ask("What's the weather in Paris?").await?;
/// # Ok(())
/// # }
/// ```
#[must_use]
pub struct AgentBuilder {
    config: AgentConfigBuilder,
    client: Option<ChatClient>,
    host: Option<Arc<dyn ToolHost>>,
    subagents: Vec<AgentConfig>,
    on_event: Option<EventHandler>,
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("config", &self.config)
            .field("client", &self.client.is_some())
            .field("host", &self.host.is_some())
            .field("subagents", &self.subagents)
            .finish_non_exhaustive()
    }
}

impl AgentBuilder {
    pub(crate) fn new(name: impl Into<String>, model: impl Into<String>) -> Self {
        AgentBuilder {
            config: AgentConfig::builder(name, model),
            client: None,
            host: None,
            subagents: Vec::new(),
            on_event: None,
        }
    }

    /// The OpenAI-compatible endpoint: its base URL with the version (e.g.
    /// `https://api.openai.com/v1`, `http://127.0.0.1:8080/v1`) and an API key (any
    /// text for a local server that asks for none). See [`ChatClient::new`].
    pub fn endpoint(mut self, base_url: &str, api_key: &str) -> Self {
        self.client = Some(ChatClient::new(base_url, api_key));
        self
    }

    /// The client to talk through, for settings [`AgentBuilder::endpoint`] lacks.
    pub fn client(mut self, client: ChatClient) -> Self {
        self.client = Some(client);
        self
    }

    /// The tools: a [`ToolboxHost`] over `toolbox`, which the model browses, searches
    /// and calls.
    pub fn toolbox(self, toolbox: Toolbox) -> Self {
        self.host(Arc::new(ToolboxHost::new(toolbox)))
    }

    /// The tools, from any host.
    pub fn host(mut self, host: Arc<dyn ToolHost>) -> Self {
        self.host = Some(host);
        self
    }

    /// The system prompt (the policy's guidance is appended to it).
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.config = self.config.system_prompt(prompt);
        self
    }

    /// How tools are offered ([`Policy::Retrieve`] by default).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.config = self.config.policy(policy);
        self
    }

    /// Any other setting of the config, e.g. `.config(|c| c.max_steps(8).stream(false))`.
    pub fn config(mut self, f: impl FnOnce(AgentConfigBuilder) -> AgentConfigBuilder) -> Self {
        self.config = f(self.config);
        self
    }

    /// Adds a specialist agent (see [`Agent::with_subagent`]).
    pub fn subagent(mut self, config: AgentConfig) -> Self {
        self.subagents.push(config);
        self
    }

    /// Calls `handler` with every event of every run as it happens: text as it streams,
    /// searches, activations, tool calls and their results, the answer. It runs on the
    /// agent's task, so keep it quick (print, count, forward).
    pub fn on_event(mut self, handler: impl Fn(&AgentEvent) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(handler));
        self
    }

    /// Checks the config and returns the agent. Fails on an invalid config
    /// ([`AgentConfigBuilder::build`]), or without an endpoint or tools.
    pub fn build(self) -> Result<Agent> {
        let config = self.config.build()?;
        let missing = |what: &str| Error::Config {
            agent: config.name.clone(),
            reason: format!("no {what}: call AgentBuilder::{what}"),
        };
        let client = self.client.ok_or_else(|| missing("endpoint"))?;
        let host = self.host.ok_or_else(|| missing("toolbox"))?;
        let mut agent = Agent::new(config, client, host);
        for subagent in self.subagents {
            agent = agent.with_subagent(subagent);
        }
        if let Some(handler) = self.on_event {
            agent = agent.with_event_handler(handler);
        }
        Ok(agent)
    }
}
