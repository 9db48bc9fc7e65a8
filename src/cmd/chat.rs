//! `toolscout chat`: the agent loop over the catalog (retrieve policy by default), streamed
//! to the terminal.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::sync::Arc;

use anyhow::{Result, bail};
use tokio::sync::mpsc;
use toolscout_agent::{
    Agent, AgentConfig, AgentEvent, ChatClient, Message, RunOptions, RunReport, StopReason,
    ToolboxHost,
};

use super::agent_opts::{ActivationArgs, EndpointArgs, PolicyArg, SubagentArgs};
use super::context::{Context, Global, Remotes, connect_remotes};

/// The system prompt; the retrieve and browse policies add how to find tools.
const SYSTEM: &str = "You are a helpful assistant. Use the tools when they help.";

/// Arguments of `chat`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    endpoint: EndpointArgs,
    /// One turn with this message, instead of reading a message per line from stdin.
    #[arg(long)]
    prompt: Option<String>,
    /// Model requests per turn before giving up.
    #[arg(long, default_value_t = 16)]
    max_steps: u32,
    /// Wait for whole answers instead of streaming them.
    #[arg(long)]
    no_stream: bool,
    /// Which tools the model sees first.
    #[arg(long, value_enum, default_value_t = PolicyArg::default_value())]
    policy: PolicyArg,
    #[command(flatten)]
    activation: ActivationArgs,
    #[command(flatten)]
    subagents: SubagentArgs,
    #[command(flatten)]
    remotes: Remotes,
}

pub(crate) fn run(args: &Args, global: &Global) -> Result<()> {
    // The cheap checks first: a bad file fails before the catalog is opened.
    let subagents = args
        .subagents
        .subagents(&args.endpoint.model, !args.no_stream)?;
    let sources = args.remotes.sources()?;
    let toolbox = Context::open_with_remotes(global, &sources)?.into_toolbox()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // The remote tools are read once, at start; a remote that is down stays unavailable
    // for this session.
    runtime.block_on(connect_remotes(&toolbox, &sources))?;
    let config = args
        .activation
        .apply(AgentConfig::builder(
            "toolscout",
            args.endpoint.model.as_str(),
        ))
        .system_prompt(SYSTEM)
        .policy(args.policy.into())
        .max_steps(args.max_steps)
        .stream(!args.no_stream)
        .build()?;
    // The person at the terminal approves (y/n/always), or `--approve TOOL` did.
    let approver = super::approve::TerminalApprover::new(&global.approve)?.with_always();
    approver.check_bare_names(toolbox.catalog())?;
    let mut agent = Agent::new(
        config,
        ChatClient::new(&args.endpoint.base_url, &args.endpoint.api_key),
        Arc::new(args.activation.apply_host(ToolboxHost::new(toolbox))),
    )
    .with_approver(Arc::new(approver));
    for subagent in subagents {
        agent = agent.with_subagent(subagent);
    }
    if let Some(prompt) = &args.prompt {
        let report = runtime.block_on(turn(&agent, vec![Message::user(prompt.as_str())]))?;
        return finish(&report, args.max_steps);
    }
    let interactive = std::io::stdin().is_terminal();
    // Turns that ended without an answer, at a terminal: the session goes on, and its
    // exit status says that something did not work.
    let mut failed_turns = 0usize;
    let mut transcript: Vec<Message> = Vec::new();
    let stdin = std::io::stdin();
    loop {
        if interactive {
            eprint!("> ");
            std::io::stderr().flush()?;
        }
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 {
            if failed_turns > 0 {
                bail!("{failed_turns} turn(s) ended without an answer");
            }
            return Ok(());
        }
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let mut messages = transcript.clone();
        messages.push(Message::user(line));
        let report = runtime.block_on(turn(&agent, messages))?;
        match finish(&report, args.max_steps) {
            Ok(()) => {}
            // The endpoint is gone, or the input is not a person who can rephrase.
            Err(e) if !interactive || matches!(report.stop, StopReason::EndpointError { .. }) => {
                return Err(e);
            }
            Err(e) => {
                eprintln!("{e:#}");
                failed_turns += 1;
            }
        }
        transcript = report.messages;
    }
}

/// A failed call's result as one line: `kind: message`, at most 300 characters.
fn failure_line(result: &serde_json::Value) -> String {
    let error = result.get("error").unwrap_or(result);
    let kind = error.get("kind").and_then(serde_json::Value::as_str);
    let message = error
        .get("message")
        .and_then(serde_json::Value::as_str)
        .map_or_else(|| error.to_string(), str::to_owned);
    let line = match kind {
        Some(kind) => format!("{kind}: {message}"),
        None => message,
    };
    let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > 300 {
        line.chars().take(299).collect::<String>() + "…"
    } else {
        line
    }
}

/// Runs one turn, printing text as it streams (stdout) and tool calls (stderr).
async fn turn(agent: &Agent, messages: Vec<Message>) -> Result<RunReport> {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let printer = tokio::spawn(async move {
        let mut streamed = false;
        while let Some(event) = rx.recv().await {
            match event {
                AgentEvent::TextDelta { text, depth: 0, .. } => {
                    streamed = true;
                    print!("{text}");
                    let _ = std::io::stdout().flush();
                }
                AgentEvent::ToolCallStarted {
                    tool, arguments, ..
                } => eprintln!("→ {tool} {arguments}"),
                AgentEvent::ToolCallFinished {
                    tool, ok, result, ..
                } => {
                    if ok {
                        eprintln!("← {tool}: ok");
                    } else {
                        eprintln!("← {tool}: failed: {}", failure_line(&result));
                    }
                }
                AgentEvent::Activated { tool, .. } => eprintln!("+ {tool}"),
                AgentEvent::Offered { tools, .. } => eprintln!("+ {} (compact)", tools.join(", ")),
                AgentEvent::ToolRequested { need, tools, .. } => {
                    eprintln!("? asked for {need}: [{}]", tools.join(", "));
                }
                AgentEvent::Translated { text, .. } => eprintln!("? searched in English: {text}"),
                _ => {}
            }
        }
        streamed
    });
    let report = agent
        .run_messages(messages, RunOptions::default().with_events(tx))
        .await;
    let streamed = printer.await?;
    if !streamed && let Some(answer) = &report.answer {
        super::emit(answer)?;
    } else if streamed {
        super::emit("")?;
    }
    Ok(report)
}

/// Fails, saying why, when the run did not end with an answer.
fn finish(report: &RunReport, max_steps: u32) -> Result<()> {
    match &report.stop {
        StopReason::Answer => Ok(()),
        StopReason::EndpointError { status, message } => match status {
            Some(s) => bail!("the endpoint answered {s}: {message}"),
            None => bail!("the endpoint failed: {message}"),
        },
        StopReason::MaxSteps => bail!(
            "no answer after {max_steps} model requests (--max-steps {max_steps}); the model kept calling tools"
        ),
        StopReason::MaxTokens => bail!(
            "no answer: the run used up its token budget ({} tokens)",
            report.usage.prompt_tokens + report.usage.completion_tokens
        ),
        StopReason::Cancelled => bail!("no answer: the run was cancelled"),
        other => bail!("no answer: the run stopped ({other:?})"),
    }
}
