//! The loop: request, assemble, run the calls in parallel, activate, repeat.

use futures_util::future::join_all;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use toolscout_spec::tokens;
use tracing::Instrument;
use tracing::field::Empty;

use crate::agent::subagent_spec;
use crate::approval::Approver;
use crate::event::Emitter;
use crate::exec::{Executed, execute};
use crate::toolset::{Activation, ToolSet};
use crate::wire::Completion;
use crate::{
    AgentConfig, AgentEvent, BoxFuture, ChatClient, Message, Policy, RunReport, StopReason,
    ToolHost, ToolScope, Usage,
};

/// What every loop of one run (the top-level agent's and its sub-agents') shares.
pub(crate) struct Runtime<'a> {
    pub(crate) client: &'a ChatClient,
    pub(crate) host: &'a dyn ToolHost,
    pub(crate) approver: &'a dyn Approver,
    pub(crate) subagents: &'a [AgentConfig],
    /// The top-level agent's depth limit.
    pub(crate) max_depth: u32,
    pub(crate) emitter: Emitter,
}

impl Runtime<'_> {
    /// The sub-agent called `name`, if the agent at `depth` may delegate to it.
    pub(crate) fn subagent(&self, name: &str) -> Option<&AgentConfig> {
        self.subagents.iter().find(|s| s.name == name)
    }
}

/// The tools a loop at `depth` starts with: the host's, within the scope, then the
/// sub-agents while delegation is allowed.
fn initial_tools(
    rt: &Runtime<'_>,
    config: &AgentConfig,
    depth: u32,
) -> Vec<toolscout_spec::ToolSpec> {
    let mut tools = rt.host.initial_tools(config.policy);
    if config.policy == Policy::Upfront || config.tool_scope == ToolScope::None {
        tools.retain(|t| config.tool_scope.allows(&t.name));
    }
    if depth < rt.max_depth {
        tools.extend(rt.subagents.iter().map(subagent_spec));
    }
    tools
}

/// Runs one agent's loop; boxed because sub-agents recurse into it.
pub(crate) fn run_loop<'a>(
    rt: &'a Runtime<'a>,
    config: &'a AgentConfig,
    depth: u32,
    mut messages: Vec<Message>,
    cancel: CancellationToken,
) -> BoxFuture<'a, RunReport> {
    Box::pin(async move {
        let agent = config.name.clone();
        let mut tools = ToolSet::new(initial_tools(rt, config, depth), config.activation_cap);
        let mut usage = Usage::default();
        let mut steps = 0u32;
        let mut answer = None;
        let stop = loop {
            if cancel.is_cancelled() {
                break StopReason::Cancelled;
            }
            if steps >= config.max_steps {
                break StopReason::MaxSteps;
            }
            if config.max_tokens.is_some_and(|max| usage.total() >= max) {
                break StopReason::MaxTokens;
            }
            steps += 1;
            let span = tracing::info_span!(
                "agent_step",
                agent = %agent,
                depth,
                step = steps,
                prompt_tokens = Empty,
                completion_tokens = Empty,
                tool_calls = Empty,
                finish_reason = Empty,
            );
            rt.emitter.emit(AgentEvent::StepStarted {
                agent: agent.clone(),
                depth,
                step: steps,
            });
            let body = request_body(config, &messages, &tools);
            let emitter = rt.emitter.clone();
            let on_text = |text: &str| {
                emitter.emit(AgentEvent::TextDelta {
                    agent: agent.clone(),
                    depth,
                    text: text.to_owned(),
                });
            };
            let request = rt
                .client
                .complete(body.clone(), config.stream, steps, on_text);
            let result = tokio::select! {
                biased;
                () = cancel.cancelled() => None,
                r = request.instrument(span.clone()) => Some(r),
            };
            let completion = match result {
                None => break StopReason::Cancelled,
                Some(Err(e)) => {
                    tracing::warn!(parent: &span, error = %e, "the endpoint failed");
                    break StopReason::EndpointError {
                        status: e.status(),
                        message: e.to_string(),
                    };
                }
                Some(Ok(c)) => c,
            };
            let step_usage = completion
                .usage
                .unwrap_or_else(|| estimate(&body, &completion));
            span.record("prompt_tokens", step_usage.prompt_tokens);
            span.record("completion_tokens", step_usage.completion_tokens);
            span.record("tool_calls", completion.tool_calls.len());
            if let Some(reason) = &completion.finish_reason {
                span.record("finish_reason", reason.as_str());
            }
            usage.add(step_usage);
            rt.emitter.emit(AgentEvent::StepFinished {
                agent: agent.clone(),
                depth,
                step: steps,
                usage: step_usage,
            });
            // `null` content is only valid next to tool calls; a bare empty turn keeps "".
            let content = (!completion.content.is_empty() || completion.tool_calls.is_empty())
                .then(|| completion.content.clone());
            messages.push(Message::Assistant {
                content: content.clone(),
                tool_calls: completion.tool_calls.clone(),
            });
            if completion.tool_calls.is_empty() {
                let text = content.unwrap_or_default();
                rt.emitter.emit(AgentEvent::FinalAnswer {
                    agent: agent.clone(),
                    depth,
                    text: text.clone(),
                });
                answer = Some(text);
                break StopReason::Answer;
            }
            let executed: Vec<Executed> = join_all(
                completion
                    .tool_calls
                    .iter()
                    .map(|call| execute(rt, config, depth, &tools, call, &cancel)),
            )
            .instrument(span)
            .await;
            for (call, done) in completion.tool_calls.iter().zip(&executed) {
                messages.push(Message::Tool {
                    tool_call_id: call.id.clone(),
                    content: done.outcome.result.to_string(),
                });
            }
            for done in executed {
                usage.add(done.usage);
                tools.touch(&done.tool);
                activate(rt, config, depth, &mut tools, &done.outcome.disclosed);
            }
        };
        RunReport {
            agent,
            messages,
            answer,
            usage,
            steps,
            stop,
            tools: tools.names(),
        }
    })
}

/// Appends the tools a call disclosed (browse policy), within the scope.
fn activate(
    rt: &Runtime<'_>,
    config: &AgentConfig,
    depth: u32,
    tools: &mut ToolSet,
    disclosed: &[String],
) {
    if disclosed.is_empty() {
        return;
    }
    rt.emitter.emit(AgentEvent::Disclosed {
        agent: config.name.clone(),
        depth,
        tools: disclosed.to_vec(),
    });
    if config.policy != Policy::Browse {
        return;
    }
    for name in disclosed {
        if !config.tool_scope.allows(name) {
            continue;
        }
        let Some(spec) = rt.host.spec(name) else {
            continue;
        };
        if !spec.metadata.enabled_by_default {
            continue;
        }
        if let Activation::Added { alias, evicted } = tools.activate(spec) {
            tracing::debug!(tool = %name, %alias, ?evicted, "activated");
            rt.emitter.emit(AgentEvent::Activated {
                agent: config.name.clone(),
                depth,
                tool: name.clone(),
                alias,
                evicted,
            });
        }
    }
}

fn request_body(config: &AgentConfig, messages: &[Message], tools: &ToolSet) -> Map<String, Value> {
    let mut body = config.request_params.clone();
    for key in ["stream", "stream_options", "tools"] {
        body.remove(key);
    }
    body.insert("model".to_owned(), json!(config.model));
    body.insert("messages".to_owned(), json!(messages));
    let tools = tools.to_openai();
    if !tools.is_empty() {
        body.insert("tools".to_owned(), Value::Array(tools));
    }
    body
}

/// Usage counted locally, for endpoints that report none.
fn estimate(body: &Map<String, Value>, completion: &Completion) -> Usage {
    let prompt = ["messages", "tools"]
        .iter()
        .filter_map(|k| body.get(*k))
        .map(tokens::count_json)
        .sum::<usize>();
    let completion_tokens = tokens::count(&completion.content)
        + completion
            .tool_calls
            .iter()
            .map(|c| tokens::count(&c.function.name) + tokens::count(&c.function.arguments))
            .sum::<usize>();
    Usage {
        prompt_tokens: prompt as u64,
        completion_tokens: completion_tokens as u64,
        estimated: true,
    }
}
