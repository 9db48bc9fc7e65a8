//! `toolscout-agent`: the agent loop of toolscout.
//!
//! An [`Agent`] talks to any OpenAI-compatible chat-completions endpoint through a
//! [`ChatClient`] (OpenAI, OpenRouter, vLLM, llama.cpp's server…), streaming or not,
//! and runs the tools the model calls through a [`ToolHost`]:
//!
//! * **Policies** ([`Policy`]): `Upfront` puts every enabled tool's schema in the tools
//!   array; `Browse` offers only the `discover_*` tools and [`call_tool`](CALL_TOOL),
//!   and *activates* a tool once the model has disclosed it at level 2 or 3, or a search
//!   ranked it among the [`AgentOptions::activate_hits`](crate::AgentOptions::activate_hits) best: its schema
//!   is appended to the tools array (never reordered, so prompt caches stay valid),
//!   up to [`AgentOptions::activation_cap`](crate::AgentOptions::activation_cap) tools, least recently used evicted first.
//!   `Retrieve` (the default) is `Browse` without `call_tool` plus, before the first
//!   request, the [`AgentOptions::retrieve_top_k`](crate::AgentOptions::retrieve_top_k) tools the host's search ranks best for
//!   each user message ([`ToolHost::retrieve`], near-twins dropped and tools well
//!   behind the first in meaning left out), activated up front.
//!   Tool names go through [`NameMap`](toolscout_spec::adapters::openai::NameMap)
//!   aliases, since OpenAI names allow no dots.
//! * **Making the model act** ([`ToolChoice`]): with `RequiredAfterActivation`, the
//!   default, the request after new activations says `tool_choice: "required"` until a
//!   real tool has been called, and the [`answer`](ANSWER_TOOL) tool lets the model
//!   decline.
//! * **Calls** run in parallel, each with its own timeout. Every failure — unknown or
//!   disabled tool, invalid arguments (including JSON that does not parse), timeout,
//!   refused approval — becomes a tool result the model reads ([`CallOutcome`]). With
//!   [`AgentOptions::ground_arguments`](crate::AgentOptions::ground_arguments), a call whose required arguments are nowhere in
//!   what the user said or a tool returned is not run: the model is told to ask.
//! * **Approvals**: tools with `metadata.requires_approval` wait for the [`Approver`].
//! * **Sub-agents**: an [`AgentConfig`] added with [`Agent::with_subagent`] is a tool
//!   whose call runs a nested loop and returns its final answer, up to
//!   [`AgentOptions::max_depth`](crate::AgentOptions::max_depth) levels deep.
//! * **Limits**: steps, tokens per run, cancellation ([`RunOptions::cancel`]).
//! * **Events** ([`AgentEvent`]) stream to a UI over a channel; `tracing` spans
//!   (`agent_step`, `tool_call`) carry token usage.
//!
//! A run returns a [`RunReport`]: transcript ([`Message`]s), answer, [`TokenUsage`], steps
//! and [`StopReason`]. An endpoint error ends the run with
//! [`StopReason::EndpointError`]; it is never a panic.
//!
//! [`ToolboxHost`] is the real host: the `discover_*` tools of `toolscout-discover` over a
//! catalog and its index, and calls through its invoker. [`StaticHost`] is a small
//! in-memory host (tools as async closures, a minimal discovery) for tests and examples.
//!
//! ```no_run
//! use std::sync::Arc;
//! use serde_json::{json, Value};
//! use toolscout_agent::{Agent, AgentConfig, ChatClient, Policy, RunOptions, StaticHost};
//! use toolscout_spec::ToolSpec;
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let weather = ToolSpec::builder("get_weather", "Current weather for a city")
//!     .parameters(json!({
//!         "type": "object",
//!         "properties": {"city": {"type": "string"}},
//!         "required": ["city"]
//!     }))
//!     .build()?;
//! let host = StaticHost::default().tool(weather, |args: Value| async move {
//!     Ok(json!({"city": args["city"], "celsius": 21}))
//! });
//! let config = AgentConfig::builder("assistant", "gpt-4o-mini")
//!     .system_prompt("You are a helpful assistant.")
//!     .policy(Policy::Browse)
//!     .build()?;
//! let client = ChatClient::new("https://api.openai.com/v1", "sk-…");
//! let agent = Agent::new(config, client, Arc::new(host));
//! let report = agent.run("What's the weather in Oslo?", RunOptions::default()).await;
//! println!("{:?}: {}", report.stop, report.answer.unwrap_or_default());
//! # Ok(())
//! # }
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used))]

mod agent;
mod builder;
mod claims;
mod client;
mod config;
mod error;
mod event;
mod exec;
mod followup;
mod grounding;
pub mod host;
pub mod language;
mod message;
pub mod needs;
pub mod prompts;
pub mod relax;
mod request;
mod retrieval;
mod run;
mod static_host;
mod toolbox_host;
mod toolset;
mod translation;
mod utterances;
mod wire;

pub use agent::{Agent, RunOptions, RunReport, StopReason, subagent_spec};
pub use builder::AgentBuilder;
pub use client::ChatClient;
pub use config::{
    AgentConfig, AgentConfigBuilder, AgentOptions, DEFAULT_ACTIVATE_HITS, DEFAULT_RETRIEVE_TOP_K,
    DEFAULT_SERVER_TOOLS, MAX_TOOL_REQUESTS, Policy, ToolChoice, ToolScope,
};
pub use error::{BoxError, Error, Result};
pub use event::{AgentEvent, EventHandler};
pub use host::{
    ANSWER_TOOL, CALL_TOOL, CallContext, CallOutcome, ProgressSink, Retrieval, Suggestion,
    ToolHost, answer_tool_spec, call_tool_spec,
};
pub use message::{FunctionCall, Message, TokenUsage, ToolCall};
pub use retrieval::retrieve_for;
pub use static_host::{DISCOVER_DESCRIBE, DISCOVER_SEARCH, StaticHost};
pub use toolbox_host::{DEFAULT_MARGIN, DEFAULT_TWIN_SIMILARITY, ToolboxHost};
pub use utterances::{UTTERANCES_PER_TOOL, parse_utterances, utterance_prompt, write_utterances};

/// Re-exported for [`ChatClient::from_config`].
pub use async_openai::config::OpenAIConfig;
/// Re-exported for [`RunOptions::cancel`].
pub use tokio_util::sync::CancellationToken;
/// The approval of calls, shared with the invoker: one [`Approver`] serves both.
pub use toolscout_invoke::{
    Approval, ApprovalRequest, Approver, AutoApprove, BoxFuture, PlannedStep, RefuseAll,
};
/// The kinds of failure a [`CallOutcome`] reports and the argument check: the invoker's.
pub use toolscout_invoke::{ErrorKind, Validators};
