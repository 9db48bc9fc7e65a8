//! `toolscout eval agent`: does a model, browsing with toolscout, call the right tool?
//!
//! Every task of a queries file (`query` + `expected` tool names, and `offered` for the
//! oracle policy) runs through the real agent loop against an OpenAI-compatible endpoint,
//! over the whole tool catalog stored in a temporary flat-file catalog. Every tool is
//! answered by a stub that returns a plausible success once its arguments pass the
//! tool's schema; a task succeeds when the model makes such a call to an expected tool.
//! Each task's line and the figures also count the calls nobody asked for: calls of
//! catalog tools outside the task's `expected` that ran; and, of them, the calls of a
//! tool of another server (the bundle its line names) than the task's.
//! The catalog, the oracle host, the reading of each run and the figures are
//! `toolscout_eval::agent`'s; this module wires them to the command line and prints.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Result, bail};
use serde_json::{Value, json};
use toolscout_agent::host::ToolHost;
use toolscout_agent::{
    Agent, AgentConfig, AgentEvent, ChatClient, Policy, StopReason, ToolboxHost,
};
use toolscout_eval::agent::{self as harness, OfferedHost, Totals, first_turn_tokens};
use toolscout_eval::read;
use toolscout_eval::results::Results;
use toolscout_spec::{ToolSpec, tokens};

use crate::cmd::agent_opts::ActivationArgs;

/// Which tools the model gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum EvalPolicy {
    /// The tools that best match the task, activated before the first request, plus the
    /// discover tools and `call_tool` (toolscout's default).
    Retrieve,
    /// Only the discover tools and `call_tool`; tools it finds or describes are activated.
    Browse,
    /// Every tool of the catalog in the tools array (the baseline).
    Upfront,
    /// Only the tools the benchmark offered for the task, up front (the oracle).
    Offered,
}

/// Arguments of `eval agent`.
#[derive(Debug, clap::Args)]
pub(crate) struct AgentArgs {
    /// Tasks, JSONL with `query`, `expected` and `offered`. A task whose `expected` is
    /// empty is an irrelevance task: it runs over its own `offered` tools (the whole
    /// catalog when it has none), none of which fits, and succeeds when the model calls
    /// none of them.
    #[arg(long)]
    tasks: PathBuf,
    /// The tool catalog, JSONL (`.jsonl` or `.jsonl.gz`).
    #[arg(long)]
    tools: PathBuf,
    /// Base URL of the OpenAI-compatible endpoint (default: $OPENAI_BASE_URL).
    #[arg(long, env = "OPENAI_BASE_URL")]
    base_url: String,
    /// Model name (default: $TOOLSCOUT_MODEL).
    #[arg(long, env = "TOOLSCOUT_MODEL")]
    model: String,
    /// API key (default: $OPENAI_API_KEY, or "none" for local servers).
    #[arg(
        long,
        env = "OPENAI_API_KEY",
        default_value = "none",
        hide_env_values = true
    )]
    api_key: String,
    /// Which tools the model gets.
    #[arg(long, value_enum, default_value_t = EvalPolicy::Retrieve)]
    policy: EvalPolicy,
    #[command(flatten)]
    activation: ActivationArgs,
    /// Run only this many tasks, spread evenly over the file.
    #[arg(long)]
    limit: Option<usize>,
    /// Recipes to add to the catalog, JSONL: one tool body a line as `tool put` takes it
    /// (`"type": "recipe"`); a recipe's successful steps count as calls of their tools.
    #[arg(long)]
    recipes: Option<PathBuf>,
    /// Model requests per task before giving up.
    #[arg(long, default_value_t = 6)]
    max_steps: u32,
    /// Stream responses (server-sent events).
    #[arg(long)]
    stream: bool,
    /// Completion tokens per model request (`max_tokens`): a small model can otherwise
    /// ramble until the context is full.
    #[arg(long, default_value_t = 512)]
    max_completion_tokens: u32,
    /// Print every tool call with its arguments and result, and the final answer.
    #[arg(long)]
    trace: bool,
    /// Keep each task's outcome in this JSONL file as it finishes, and take the outcomes
    /// already there instead of running their tasks again: a run that stops resumes
    /// where it was. The file must hold results of the same settings only. A task the
    /// endpoint cut short (no answer, a 5xx, 408 or 429) is not kept: it runs again.
    #[arg(long, value_name = "FILE")]
    results: Option<PathBuf>,
}

/// One line of `--trace` output for an event, on stderr.
fn trace(event: &AgentEvent) {
    let cut = |text: &str| -> String {
        let short: String = text.chars().take(400).collect();
        if short.len() < text.len() {
            format!("{short}…")
        } else {
            short
        }
    };
    match event {
        AgentEvent::Retrieved {
            tools, confidence, ..
        } => eprintln!(
            "    ? retrieved [{}]{}",
            tools.join(", "),
            confidence.map_or_else(String::new, |c| format!(" confidence {c:.2}"))
        ),
        AgentEvent::ToolCallStarted {
            tool, arguments, ..
        } => eprintln!("    → {tool} {}", cut(arguments)),
        AgentEvent::ToolCallFinished { result, .. } => {
            eprintln!("    ← {}", cut(&result.to_string()));
        }
        AgentEvent::Activated { tool, .. } => eprintln!("    + activated {tool}"),
        AgentEvent::Planned { steps, .. } => eprintln!("    ✎ planned [{}]", steps.join("; ")),
        AgentEvent::Translated { language, text, .. } => {
            eprintln!("    ✎ in English (from {language}): {}", cut(text));
        }
        AgentEvent::Offered { tools, .. } => {
            eprintln!("    + offered compactly [{}]", tools.join(", "));
        }
        AgentEvent::ToolRequested { need, tools, .. } => {
            eprintln!("    ? asked for: {} [{}]", cut(need), tools.join(", "));
        }
        AgentEvent::ToolProgress { progress, .. } if progress["event"] == "step_finished" => {
            eprintln!(
                "    · step {} {} ok={}",
                progress["step"].as_str().unwrap_or_default(),
                progress["tool"].as_str().unwrap_or_default(),
                progress["ok"]
            );
        }
        AgentEvent::NeedFollowedUp { need, tools, .. } => {
            eprintln!("    ↻ followed up: {} [{}]", cut(need), tools.join(", "));
        }
        AgentEvent::AnswerQuestioned { answer, .. } => {
            eprintln!("    ? no call yet: {}", cut(answer));
        }
        AgentEvent::FinalAnswer { text, .. } => eprintln!("    = {}", cut(text)),
        _ => {}
    }
}

pub(crate) fn run(
    args: &AgentArgs,
    global: &crate::cmd::context::Global,
    json_out: bool,
) -> Result<()> {
    let lines = super::read_tool_lines(&args.tools)?;
    if lines.is_empty() {
        bail!("{} has no tools", args.tools.display());
    }
    let tools = &lines.specs;
    let tasks = read::tasks(&args.tasks, args.limit).map_err(super::explain)?;
    let embedder = global.meaning.embedder(None)?;
    let started = Instant::now();
    let toolbox = harness::build_toolbox(&lines, embedder.clone())?;
    if let Some(path) = &args.recipes {
        let mut bodies = Vec::new();
        for (i, line) in super::read_text(path)?.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str(line) {
                Ok(serde_json::Value::Object(body)) => bodies.push(body),
                Ok(_) => bail!(
                    "{} line {}: a recipe must be a JSON object",
                    path.display(),
                    i + 1
                ),
                Err(e) => bail!("{} line {}: {e}", path.display(), i + 1),
            }
        }
        let added = harness::add_recipes(&toolbox, &bodies)?;
        eprintln!("recipes: {added} added from {}", path.display());
    }
    eprintln!(
        "catalog: {} tools stored and indexed in {:.1} s; {} tasks ({} irrelevance), policy {:?}, model {}",
        tools.len(),
        started.elapsed().as_secs_f64(),
        tasks.len(),
        tasks.iter().filter(|t| t.irrelevant()).count(),
        args.policy,
        args.model
    );
    let whole = args.activation.apply_host(ToolboxHost::new(toolbox));
    let whole_names: HashSet<String> = tools.iter().map(|t| t.name.to_string()).collect();
    // Each tool's server, the bundle its line names: which stray calls are of another
    // server than the task's.
    let servers = lines.servers();
    let server_of = |tool: &str| servers.get(tool).copied();
    let system = "You are a helpful assistant. Use the tools to do what the user asks.";
    let config = |policy: Policy| {
        args.activation
            .apply(AgentConfig::builder("eval", &args.model))
            .system_prompt(system)
            .policy(policy)
            .max_steps(args.max_steps)
            .stream(args.stream)
            .request_param("temperature", json!(0))
            .request_param("max_tokens", json!(args.max_completion_tokens))
            .build()
    };
    let by_name = |names: &[String]| -> Vec<ToolSpec> {
        names.iter().filter_map(|n| whole.spec(n)).collect()
    };
    let browse_tokens = first_turn_tokens(system, &whole.initial_tools(Policy::Browse))
        + tokens::count(toolscout_agent::prompts::BROWSE);
    let upfront_tokens = first_turn_tokens(system, &whole.initial_tools(Policy::Upfront));

    // What a kept result must have been run with (`--results`), and the head of the figures.
    let settings = json!({
        "policy": format!("{:?}", args.policy).to_lowercase(),
        "model": args.model,
        "top_k": args.activation.top_k,
        "activate_hits": args.activation.activate_hits,
        "server_tools": args.activation.server_tools,
        "tool_choice": format!("{:?}", args.activation.tool_choice),
        "ground_arguments": args.activation.ground_arguments,
        "follow_needs": args.activation.follow_needs,
        "plan_needs": args.activation.plan_needs,
        "tool_requests": args.activation.tool_requests,
        "translate_requests": args.activation.translate_requests,
        "twin_similarity": args.activation.twin_similarity,
        "margin": args.activation.margin,
        "tools": tools.len(),
        "first_turn_prompt_tokens_o200k": {"browse": browse_tokens, "upfront": upfront_tokens},
        "max_steps": args.max_steps,
        "max_completion_tokens": args.max_completion_tokens,
        "stream": args.stream,
    });
    let mut results = match &args.results {
        Some(path) => {
            let results = Results::open(path, &settings)?;
            if !results.is_empty() {
                eprintln!(
                    "results: {} tasks' outcomes kept in {}",
                    results.len(),
                    path.display()
                );
            }
            Some(results)
        }
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let client = ChatClient::new(&args.base_url, &args.api_key);
    let mut relevant = Totals::default();
    let mut irrelevant = Totals::default();
    for (i, task) in tasks.iter().enumerate() {
        let kept = results.as_ref().and_then(|r| r.kept(task)).cloned();
        let from = if kept.is_some() { " (kept)" } else { "" };
        let seen = match kept {
            Some(outcome) => outcome,
            None => {
                // An irrelevance task runs over its own offered tools, none of which fits.
                let own = harness::own_toolbox(task, &lines, embedder.as_ref())?
                    .map(|toolbox| args.activation.apply_host(ToolboxHost::new(toolbox)));
                let host = own.as_ref().unwrap_or(&whole);
                let catalog: HashSet<String> = if own.is_some() {
                    task.offered.iter().cloned().collect()
                } else {
                    whole_names.clone()
                };
                let agent = match args.policy {
                    EvalPolicy::Retrieve => Agent::new(
                        config(Policy::Retrieve)?,
                        client.clone(),
                        Arc::new(host.clone()),
                    ),
                    EvalPolicy::Browse => Agent::new(
                        config(Policy::Browse)?,
                        client.clone(),
                        Arc::new(host.clone()),
                    ),
                    EvalPolicy::Upfront => Agent::new(
                        config(Policy::Upfront)?,
                        client.clone(),
                        Arc::new(host.clone()),
                    ),
                    EvalPolicy::Offered => Agent::new(
                        config(Policy::Upfront)?,
                        client.clone(),
                        Arc::new(OfferedHost::new(host.clone(), by_name(&task.offered))),
                    ),
                };
                if args.trace {
                    let short: String = task.query.chars().take(300).collect();
                    eprintln!("[{}/{}] task: {short}", i + 1, tasks.len());
                }
                let mut run = runtime.block_on(harness::run_task(&agent, task, &catalog));
                run.outcome = run.outcome.with_servers(task, server_of);
                if args.trace {
                    run.events.iter().for_each(trace);
                }
                if let Some(results) = &mut results {
                    if run.outcome.endpoint_failed() {
                        eprintln!(
                            "[{}/{}] not kept: the endpoint failed, so a resumed run runs this task again",
                            i + 1,
                            tasks.len(),
                        );
                    } else {
                        results.keep(task, &run.outcome)?;
                    }
                }
                run.outcome
            }
        };
        // An outcome kept before the servers were recorded is told them now.
        let seen = &match seen.unasked_elsewhere {
            Some(_) => seen,
            None => seen.with_servers(task, server_of),
        };
        let totals = if task.irrelevant() {
            &mut irrelevant
        } else {
            &mut relevant
        };
        let success = totals.add(task, seen);
        let stop = match seen.stop.as_ref().unwrap_or(&StopReason::Answer) {
            StopReason::EndpointError { status, message } => {
                let short: String = message.chars().take(120).collect();
                format!(
                    "endpoint error {}: {short}",
                    status.map_or("-".to_owned(), |s| s.to_string())
                )
            }
            other => format!("{other:?}").to_lowercase(),
        };
        let expected = if task.irrelevant() {
            "none (irrelevance)".to_owned()
        } else {
            task.expected.join("|")
        };
        let retrieved = if args.policy == EvalPolicy::Retrieve {
            let hit = seen.retrieved_hit(task);
            format!(" retrieved={}", if hit { "hit" } else { "miss" })
        } else {
            String::new()
        };
        eprintln!(
            "[{}/{}] {} {:.1}s steps={} prompt_tokens={} calls=[{}] expected={expected} unasked={}[{}]{retrieved} stop={stop}{from}",
            i + 1,
            tasks.len(),
            if success { "ok  " } else { "FAIL" },
            seen.seconds,
            seen.steps,
            seen.usage.prompt_tokens,
            seen.calls.join(", "),
            seen.unasked.len(),
            seen.unasked.join(", "),
        );
    }
    let retrieve = args.policy == EvalPolicy::Retrieve;
    let mut figures = settings;
    if let Some(o) = figures.as_object_mut() {
        if relevant.tasks > 0 {
            o.insert(
                "relevant".to_owned(),
                serde_json::to_value(relevant.figures(retrieve))?,
            );
        }
        if irrelevant.tasks > 0 {
            o.insert(
                "irrelevance".to_owned(),
                serde_json::to_value(irrelevant.irrelevance_figures())?,
            );
        }
    }
    if json_out {
        return crate::cmd::print_json(&figures);
    }
    let mut out = format!(
        "policy {:?}, {} tasks over {} tools, model {}, top-k {}, activate-hits {}, server-tools {}, tool-choice {:?}, ground-arguments {}, follow-needs {}, plan-needs {}, tool-requests {}, translate-requests {}, twin-similarity {}, margin {}\n",
        args.policy,
        tasks.len(),
        tools.len(),
        args.model,
        args.activation.top_k,
        args.activation.activate_hits,
        args.activation.server_tools,
        args.activation.tool_choice,
        args.activation.ground_arguments,
        args.activation.follow_needs,
        args.activation.plan_needs,
        args.activation.tool_requests,
        args.activation.translate_requests,
        args.activation.twin_similarity,
        args.activation.margin,
    );
    for (name, group) in [
        ("relevant", &figures["relevant"]),
        ("irrelevance", &figures["irrelevance"]),
    ] {
        let Some(g) = group.as_object() else { continue };
        out.push_str(&format!("{name} tasks: {}\n", g["tasks"]));
        for (key, value) in g {
            if key == "tasks" {
                continue;
            }
            let shown = match value {
                Value::Number(n) if n.is_f64() => format!("{:.3}", n.as_f64().unwrap_or(0.0)),
                other => other.to_string(),
            };
            out.push_str(&format!("  {key:<32} {shown}\n"));
        }
    }
    out.push_str(&format!(
        "first-turn prompt tokens of the catalog (o200k, system prompt + tools array): browse {browse_tokens}, upfront {upfront_tokens}"
    ));
    crate::cmd::emit(out)
}
