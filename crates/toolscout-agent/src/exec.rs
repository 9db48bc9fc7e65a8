//! One tool call: resolve, parse, check, approve, run with a timeout, report.
//!
//! Whatever goes wrong becomes a [`CallOutcome::error`] the model reads; nothing here
//! returns an `Err` or panics on the model's output.

use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use tracing::field::Empty;

use crate::ErrorKind;
use crate::agent::with_system;
use crate::grounding::Grounding;
use crate::host::{ANSWER_TOOL, CALL_TOOL, CallContext, ProgressSink};
use crate::run::{Runtime, run_loop};
use crate::toolset::ToolSet;
use crate::{
    AgentConfig, AgentEvent, Approval, ApprovalRequest, CallOutcome, Message, StopReason,
    TokenUsage, ToolCall,
};

/// A finished call.
pub(crate) struct Executed {
    /// The tool that ran (resolved from its alias, unwrapped from `call_tool`).
    pub(crate) tool: String,
    pub(crate) outcome: CallOutcome,
    /// Tokens a sub-agent used.
    pub(crate) usage: TokenUsage,
    /// The text of a call of the [answer tool](ANSWER_TOOL): the run's final answer.
    pub(crate) answer: Option<String>,
}

/// Runs one call; with `grounding`, a catalog tool's required arguments must be in it.
pub(crate) async fn execute(
    rt: &Runtime<'_>,
    config: &AgentConfig,
    depth: u32,
    tools: &ToolSet,
    call: &ToolCall,
    grounding: Option<&Grounding<'_>>,
    cancel: &CancellationToken,
) -> Executed {
    let called = &call.function.name;
    let mut tool = tools.original(called).unwrap_or(called).to_owned();
    let span = tracing::info_span!(
        "tool_call",
        agent = %config.name,
        depth,
        call_id = %call.id,
        tool = Empty,
        ok = Empty,
        prompt_tokens = Empty,
        completion_tokens = Empty,
    );
    let parsed = parse_arguments(&call.function.arguments).and_then(|args| {
        // call_tool is unwrapped where it is offered, and where it is not but a model
        // calls it anyway (unless the host has a real tool of that name).
        if tool == CALL_TOOL
            && (tools.get(CALL_TOOL).is_some() || rt.host.spec(CALL_TOOL).is_none())
        {
            let (name, args) = unwrap_call_tool(args)?;
            tool = tools.original(&name).map_or(name, str::to_owned);
            Ok(args)
        } else {
            Ok(args)
        }
    });
    // A name that is no active tool's: the host may know it under another name (an
    // OpenAI alias such as `time_now` for `time.now`); events and approvals use the real one.
    if tools.get(&tool).is_none() && rt.subagent(&tool).is_none() {
        match rt.host.spec(&tool) {
            Some(spec) if spec.name.as_str() != tool => tool = spec.name.to_string(),
            Some(_) => {}
            None => {
                if let Some(real) = rt.host.resolve_alias(&tool) {
                    tool = real;
                }
            }
        }
    }
    span.record("tool", tool.as_str());
    rt.emitter.emit(AgentEvent::ToolCallStarted {
        agent: config.name.clone(),
        depth,
        call_id: call.id.clone(),
        tool: tool.clone(),
        arguments: call.function.arguments.clone(),
    });
    let mut answer = None;
    let (outcome, usage) = match parsed {
        Err(outcome) => (outcome, TokenUsage::default()),
        Ok(args) if tool == ANSWER_TOOL && tools.get(ANSWER_TOOL).is_some() => {
            match args.get("text") {
                Some(Value::String(text)) => {
                    answer = Some(text.clone());
                    (CallOutcome::ok(json!("delivered")), TokenUsage::default())
                }
                _ => (
                    CallOutcome::error(
                        ErrorKind::InvalidArguments,
                        "answer needs 'text': the answer as a string. Usage: answer(text=\"…\")",
                    ),
                    TokenUsage::default(),
                ),
            }
        }
        Ok(args) => {
            dispatch(
                rt, config, depth, tools, &tool, args, &call.id, grounding, cancel,
            )
            .instrument(span.clone())
            .await
        }
    };
    span.record("ok", outcome.is_ok());
    span.record("prompt_tokens", usage.prompt_tokens);
    span.record("completion_tokens", usage.completion_tokens);
    rt.emitter.emit(AgentEvent::ToolCallFinished {
        agent: config.name.clone(),
        depth,
        call_id: call.id.clone(),
        tool: tool.clone(),
        ok: outcome.is_ok(),
        result: outcome.result.clone(),
    });
    Executed {
        tool,
        outcome,
        usage,
        answer,
    }
}

/// The arguments as a JSON object; `""` counts as `{}`.
fn parse_arguments(text: &str) -> Result<Value, CallOutcome> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(CallOutcome::error(
            ErrorKind::InvalidArguments,
            format!(
                "the arguments must be a JSON object, not {other}; send an object matching the tool's parameters"
            ),
        )),
        Err(e) => Err(CallOutcome::error(
            ErrorKind::InvalidArguments,
            format!(
                "the arguments were not valid JSON ({e}); send one JSON object matching the tool's parameters"
            ),
        )),
    }
}

/// `call_tool {name, arguments}` → the target and its arguments (an object, or JSON
/// text of one, as models sometimes send).
fn unwrap_call_tool(args: Value) -> Result<(String, Value), CallOutcome> {
    let invalid = |m: &str| CallOutcome::error(ErrorKind::InvalidArguments, m);
    let Some(name) = args.get("name").and_then(Value::as_str).map(str::to_owned) else {
        return Err(invalid("call_tool needs 'name': the tool's exact name"));
    };
    if name == CALL_TOOL {
        return Err(invalid(
            "call_tool cannot call itself; give the target tool's name",
        ));
    }
    let inner = match args.get("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::String(text)) => parse_arguments(text)?,
        Some(v @ Value::Object(_)) => v.clone(),
        Some(other) => {
            return Err(invalid(&format!(
                "call_tool's 'arguments' must be a JSON object, not {other}"
            )));
        }
    };
    Ok((name, inner))
}

#[allow(clippy::too_many_arguments)]
async fn dispatch(
    rt: &Runtime<'_>,
    config: &AgentConfig,
    depth: u32,
    tools: &ToolSet,
    tool: &str,
    args: Value,
    call_id: &str,
    grounding: Option<&Grounding<'_>>,
    cancel: &CancellationToken,
) -> (CallOutcome, TokenUsage) {
    // The loop's own `discover_agents`, where this run offers it.
    if let Some(agents) = rt
        .discover_agents(tool)
        .filter(|_| tools.get(tool).is_some())
    {
        let answer = agents.answer(&args);
        let outcome = CallOutcome::ok(answer.reply).with_disclosed(answer.disclosed);
        return (outcome, TokenUsage::default());
    }
    if let Some(sub) = rt.subagent(tool) {
        if depth >= rt.max_depth {
            let message = format!(
                "'{tool}' cannot be called here: agents may only delegate {} level(s) deep; do the task yourself",
                rt.max_depth
            );
            return (
                CallOutcome::error(ErrorKind::DepthLimit, message),
                TokenUsage::default(),
            );
        }
        let spec = crate::agent::subagent_spec(sub);
        if let Err(e) = rt.validators.check_arguments(&spec, &args) {
            return (CallOutcome::from_tool_error(&e), TokenUsage::default());
        }
        let task = args.get("task").and_then(Value::as_str).unwrap_or_default();
        return delegate(rt, sub, depth + 1, task, cancel).await;
    }
    (
        call_host(
            rt, config, depth, tools, tool, args, call_id, grounding, cancel,
        )
        .await,
        TokenUsage::default(),
    )
}

#[allow(clippy::too_many_arguments)]
async fn call_host(
    rt: &Runtime<'_>,
    config: &AgentConfig,
    depth: u32,
    tools: &ToolSet,
    tool: &str,
    args: Value,
    call_id: &str,
    grounding: Option<&Grounding<'_>>,
    cancel: &CancellationToken,
) -> CallOutcome {
    let Some(spec) = tools.get(tool).cloned().or_else(|| rt.host.spec(tool)) else {
        return unknown_tool(rt, tool);
    };
    if !spec.metadata.enabled_by_default {
        return CallOutcome::error(
            ErrorKind::Disabled,
            format!("'{tool}' is disabled; choose another tool"),
        );
    }
    if tools.get(tool).is_none() && !config.options.tool_scope.allows(tool) {
        return CallOutcome::error(
            ErrorKind::OutOfScope,
            format!("'{tool}' is not among the tools this agent may use"),
        );
    }
    if let Err(e) = rt.validators.check_arguments(&spec, &args) {
        // The error shows the usage: that discloses the tool, so it is activated and
        // the model's retry can use its schema.
        return CallOutcome::from_tool_error(&e).with_disclosed([spec.name.to_string()]);
    }
    // Before approval: a call with made-up values is not worth a person's attention.
    if let Some(refused) = grounding.and_then(|g| g.refuse(&spec, &args)) {
        return refused;
    }
    if spec.metadata.requires_approval {
        let request = ApprovalRequest::new(tool, args.clone(), spec.summary.clone())
            .with_call(&config.name, call_id)
            .with_qualified(rt.host.qualified_name(tool))
            .with_steps(rt.host.approval_steps(tool));
        rt.emitter.emit(AgentEvent::ApprovalRequested {
            agent: config.name.clone(),
            depth,
            call_id: call_id.to_owned(),
            tool: tool.to_owned(),
            arguments: request.arguments.clone(),
            steps: request.steps.clone(),
        });
        let decision = tokio::select! {
            biased;
            () = cancel.cancelled() => return cancelled(),
            d = rt.approver.approve(&request) => d,
        };
        if let Approval::Refused(reason) = decision {
            let mut message = format!("the user did not approve this call to '{tool}'");
            if let Some(reason) = reason {
                message.push_str(": ");
                message.push_str(&reason);
            }
            message.push_str("; do not retry it unchanged");
            return CallOutcome::error(ErrorKind::ApprovalRefused, message);
        }
    }
    let timeout = spec
        .metadata
        .timeout_seconds
        .map_or(config.options.tool_timeout, |s| {
            Duration::from_secs(u64::from(s))
        });
    let progress = {
        let emitter = rt.emitter.clone();
        let (agent, call_id, tool) = (config.name.clone(), call_id.to_owned(), tool.to_owned());
        ProgressSink::new(move |progress| {
            emitter.emit(AgentEvent::ToolProgress {
                agent: agent.clone(),
                depth,
                call_id: call_id.clone(),
                tool: tool.clone(),
                progress,
            });
        })
    };
    let ctx = CallContext {
        agent: config.name.clone(),
        depth,
        call_id: call_id.to_owned(),
        cancel: cancel.child_token(),
        progress,
    };
    tokio::select! {
        biased;
        () = cancel.cancelled() => cancelled(),
        r = tokio::time::timeout(timeout, rt.host.call(tool, args, ctx)) => match r {
            Ok(outcome) => outcome,
            Err(_) => CallOutcome::error(
                ErrorKind::Timeout,
                format!("'{tool}' did not finish within {} ms", timeout.as_millis()),
            ),
        },
    }
}

/// The `unknown_tool` error, with the host's suggestions when it has some.
fn unknown_tool(rt: &Runtime<'_>, tool: &str) -> CallOutcome {
    let suggestions = rt.host.suggest(tool);
    if suggestions.is_empty() {
        return CallOutcome::error(
            ErrorKind::UnknownTool,
            format!(
                "there is no tool named '{tool}'; find tools with a discover tool first (query: a few words about what you need), then use a name it returns"
            ),
        );
    }
    let lines: Vec<&str> = suggestions.iter().map(|s| s.line.as_str()).collect();
    let mut outcome = CallOutcome::error(
        ErrorKind::UnknownTool,
        format!(
            "there is no tool named '{tool}'. These tools exist and may fit: {}. Call one of them by its exact name, or search with a discover tool",
            lines.join("; ")
        ),
    )
    .with_found(suggestions.iter().map(|s| s.name.clone()));
    if let Some(error) = outcome
        .result
        .get_mut("error")
        .and_then(Value::as_object_mut)
    {
        error.insert("did_you_mean".to_owned(), json!(lines));
    }
    outcome
}

fn cancelled() -> CallOutcome {
    CallOutcome::error(ErrorKind::Cancelled, "the run was cancelled")
}

/// Runs a sub-agent on `task` and returns its answer as the call's value.
async fn delegate(
    rt: &Runtime<'_>,
    sub: &AgentConfig,
    depth: u32,
    task: &str,
    cancel: &CancellationToken,
) -> (CallOutcome, TokenUsage) {
    let messages = with_system(sub, vec![Message::user(task)]);
    let report = run_loop(rt, sub, depth, messages, cancel.child_token()).await;
    let outcome = match (&report.stop, report.answer) {
        (StopReason::Answer, Some(answer)) => CallOutcome::ok(Value::String(answer)),
        (stop, _) => CallOutcome::error(
            ErrorKind::SubagentFailed,
            format!(
                "the {} agent stopped without an answer after {} step(s): {}",
                sub.name,
                report.steps,
                describe(stop)
            ),
        ),
    };
    (outcome, report.usage)
}

fn describe(stop: &StopReason) -> String {
    match stop {
        StopReason::Answer => "answered".to_owned(),
        StopReason::MaxSteps => "it reached its step limit".to_owned(),
        StopReason::MaxTokens => "it reached its token limit".to_owned(),
        StopReason::Cancelled => "the run was cancelled".to_owned(),
        StopReason::EndpointError { message, .. } => format!("the endpoint failed: {message}"),
    }
}
