//! `toolscout eval agent`: does a model, browsing with toolscout, call the right tool?
//!
//! Every task of a queries file (`query` + `expected` tool names, and `offered` for the
//! oracle policy) runs through the real agent loop against an OpenAI-compatible endpoint,
//! over the whole tool catalog stored in a temporary flat-file catalog. Every tool is
//! answered by a stub that returns a plausible success once its arguments pass the
//! tool's schema; a task succeeds when the model makes such a call to an expected tool.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use toolscout_agent::host::{BoxFuture, CallContext, CallOutcome, ToolHost};
use toolscout_agent::{
    Agent, AgentConfig, AgentEvent, ChatClient, Policy, RunOptions, StopReason, ToolboxHost,
};
use toolscout_catalog::{BundlePut, Catalog, CatalogOptions, ToolPut};
use toolscout_discover::Toolbox;
use toolscout_invoke::{DynTool, Invoker, ToolError};
use toolscout_search::SearchIndex;
use toolscout_spec::adapters::openai::{NameMap, to_openai_named};
use toolscout_spec::name::{sanitize_name, slug_from_name};
use toolscout_spec::{ToolSpec, tokens};

/// Which tools the model gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum EvalPolicy {
    /// Only the discover tools and `call_tool`; tools it describes are activated.
    Browse,
    /// Every tool of the catalog in the tools array (the baseline).
    Upfront,
    /// Only the tools the benchmark offered for the task, up front (the oracle).
    Offered,
}

/// Arguments of `eval agent`.
#[derive(Debug, clap::Args)]
pub(crate) struct AgentArgs {
    /// Tasks, JSONL with `query`, `expected` and (for `--policy offered`) `offered`.
    #[arg(long, default_value = "../shared/data/bfcl/queries.jsonl")]
    tasks: PathBuf,
    /// The tool catalog, JSONL (`.jsonl` or `.jsonl.gz`).
    #[arg(long, default_value = "../shared/data/bfcl/tools.jsonl")]
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
    #[arg(long, value_enum, default_value_t = EvalPolicy::Browse)]
    policy: EvalPolicy,
    /// Run only this many tasks, spread evenly over the file.
    #[arg(long)]
    limit: Option<usize>,
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
}

struct Task {
    query: String,
    expected: Vec<String>,
    offered: Vec<String>,
}

fn read_tasks(args: &AgentArgs) -> Result<Vec<Task>> {
    let text = super::eval::read_text(&args.tasks)?;
    let mut tasks = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .with_context(|| format!("{} line {}", args.tasks.display(), i + 1))?;
        let names = |key: &str| -> Vec<String> {
            v.get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(sanitize_name)
                .collect()
        };
        let expected = names("expected");
        let Some(query) = v.get("query").and_then(Value::as_str) else {
            continue;
        };
        if expected.is_empty() {
            continue;
        }
        tasks.push(Task {
            query: query.to_owned(),
            offered: names("offered"),
            expected,
        });
    }
    Ok(match args.limit {
        Some(n) => super::eval::spread(tasks, n),
        None => tasks,
    })
}

/// The stub behind every tool: a plausible success, once the invoker has checked the
/// arguments against the tool's schema.
struct Stub;

const STUB: &str = "eval_stub";

impl DynTool for Stub {
    fn name(&self) -> &str {
        STUB
    }

    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        ToolSpec::builder(STUB, "Answer any call with a plausible success").build()
    }

    fn call_json(&self, args: Value) -> toolscout_invoke::BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(
            async move { Ok(json!({"status": "success", "result": "done", "arguments": args})) },
        )
    }
}

/// Stores the tools in a temporary catalog (one bundle, native tools on the stub).
fn build_toolbox(
    tools: &[ToolSpec],
    dir: &std::path::Path,
    embedder: Option<Arc<dyn toolscout_search::Embedder>>,
) -> Result<Toolbox> {
    let catalog = Catalog::open_with(
        dir,
        CatalogOptions::default()
            .with_natives(&[STUB])
            .with_builtins(false),
    )?;
    let bundle = uuid::Uuid::now_v7();
    catalog.put_bundle(
        bundle,
        &BundlePut::new("eval").with_display_name("Evaluated tools"),
    )?;
    // Names that differ only in punctuation share a slug: number the later ones.
    let mut slugs = HashSet::new();
    let mut puts = Vec::with_capacity(tools.len());
    for spec in tools {
        let base = slug_from_name(&spec.name);
        let mut slug = base.clone();
        let mut n = 2;
        while !slugs.insert(slug.clone()) {
            let suffix = format!("-{n}");
            slug = base.chars().take(64 - suffix.len()).collect::<String>() + &suffix;
            n += 1;
        }
        puts.push((slug, ToolPut::native(spec.clone(), STUB)));
    }
    catalog
        .put_tools(
            bundle,
            puts.iter().map(|(slug, put)| (slug.as_str(), "1", put)),
        )
        .context("storing the tools")?;
    let mut invoker = Invoker::default();
    invoker.register_dyn(Arc::new(Stub))?;
    let mut index = SearchIndex::in_memory()?;
    if let Some(e) = embedder {
        index = index.with_embedder(e);
    }
    Ok(Toolbox::new(catalog, index, invoker)?)
}

/// A host that offers only some tools up front (the oracle policy).
struct Offered {
    inner: ToolboxHost,
    offered: Vec<ToolSpec>,
}

impl ToolHost for Offered {
    fn initial_tools(&self, _policy: Policy) -> Vec<ToolSpec> {
        self.offered.clone()
    }

    fn spec(&self, name: &str) -> Option<ToolSpec> {
        self.inner.spec(name)
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
        AgentEvent::ToolCallStarted {
            tool, arguments, ..
        } => eprintln!("    → {tool} {}", cut(arguments)),
        AgentEvent::ToolCallFinished { result, .. } => {
            eprintln!("    ← {}", cut(&result.to_string()));
        }
        AgentEvent::Activated { tool, .. } => eprintln!("    + activated {tool}"),
        AgentEvent::FinalAnswer { text, .. } => eprintln!("    = {}", cut(text)),
        _ => {}
    }
}

#[derive(Default)]
struct Totals {
    tasks: usize,
    successes: usize,
    steps: u64,
    prompt_tokens: u64,
    completion_tokens: u64,
    max_steps: usize,
    endpoint_errors: usize,
    estimated: bool,
}

/// Tokens of the first request's fixed part: system prompt and tools array.
fn first_turn_tokens(system: &str, tools: &[ToolSpec]) -> usize {
    let names = NameMap::new(tools.iter().map(|t| t.name.as_str()));
    let array: Vec<Value> = tools
        .iter()
        .map(|t| to_openai_named(t, names.alias(&t.name).unwrap_or(&t.name), false))
        .collect();
    tokens::count(system) + tokens::count_json(&Value::Array(array))
}

pub(crate) fn run(args: &AgentArgs, global: &super::context::Global, json_out: bool) -> Result<()> {
    let tools = super::eval::read_tools(&args.tools)?;
    if tools.is_empty() {
        bail!("{} has no tools", args.tools.display());
    }
    let tasks = read_tasks(args)?;
    let dir = tempfile::tempdir()?;
    let started = Instant::now();
    let toolbox = build_toolbox(&tools, dir.path(), global.meaning.embedder(None)?)?;
    eprintln!(
        "catalog: {} tools stored and indexed in {:.1} s; {} tasks, policy {:?}, model {}",
        tools.len(),
        started.elapsed().as_secs_f64(),
        tasks.len(),
        args.policy,
        args.model
    );
    let host = ToolboxHost::new(toolbox.clone());
    let system = "You are a helpful assistant. Use the tools to do what the user asks.";
    let config = |policy: Policy| {
        AgentConfig::builder("eval", &args.model)
            .system_prompt(system)
            .policy(policy)
            .max_steps(args.max_steps)
            .stream(args.stream)
            .request_param("temperature", json!(0))
            .request_param("max_tokens", json!(args.max_completion_tokens))
            .build()
    };
    let by_name =
        |names: &[String]| -> Vec<ToolSpec> { names.iter().filter_map(|n| host.spec(n)).collect() };
    let browse_tokens = first_turn_tokens(system, &host.initial_tools(Policy::Browse))
        + tokens::count(toolscout_agent::prompts::BROWSE);
    let upfront_tokens = first_turn_tokens(system, &host.initial_tools(Policy::Upfront));
    let offered_tokens = if tasks.is_empty() {
        0
    } else {
        tasks
            .iter()
            .map(|t| first_turn_tokens(system, &by_name(&t.offered)))
            .sum::<usize>()
            / tasks.len()
    };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let client = ChatClient::new(&args.base_url, &args.api_key);
    let mut totals = Totals::default();
    for (i, task) in tasks.iter().enumerate() {
        let agent = match args.policy {
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
                Arc::new(Offered {
                    inner: host.clone(),
                    offered: by_name(&task.offered),
                }),
            ),
        };
        if args.trace {
            let short: String = task.query.chars().take(300).collect();
            eprintln!("[{}/{}] task: {short}", i + 1, tasks.len());
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let t0 = Instant::now();
        let report =
            runtime.block_on(agent.run(&task.query, RunOptions::default().with_events(tx)));
        let mut called = Vec::new();
        let mut success = false;
        while let Ok(event) = rx.try_recv() {
            if args.trace {
                trace(&event);
            }
            if let AgentEvent::ToolCallFinished {
                tool, ok, result, ..
            } = event
            {
                success |= ok && task.expected.contains(&tool);
                let kind = result.pointer("/error/kind").and_then(Value::as_str);
                called.push(match kind {
                    Some(k) if !ok => format!("{tool}({k})"),
                    _ => tool,
                });
            }
        }
        totals.tasks += 1;
        totals.successes += usize::from(success);
        totals.steps += u64::from(report.steps);
        totals.prompt_tokens += report.usage.prompt_tokens;
        totals.completion_tokens += report.usage.completion_tokens;
        totals.estimated |= report.usage.estimated;
        match &report.stop {
            StopReason::MaxSteps => totals.max_steps += 1,
            StopReason::EndpointError { .. } => totals.endpoint_errors += 1,
            _ => {}
        }
        let stop = match &report.stop {
            StopReason::EndpointError { status, message } => {
                let short: String = message.chars().take(120).collect();
                format!(
                    "endpoint error {}: {short}",
                    status.map_or("-".to_owned(), |s| s.to_string())
                )
            }
            other => format!("{other:?}").to_lowercase(),
        };
        eprintln!(
            "[{}/{}] {} {:.1}s steps={} calls=[{}] expected={} stop={stop}",
            i + 1,
            tasks.len(),
            if success { "ok  " } else { "FAIL" },
            t0.elapsed().as_secs_f64(),
            report.steps,
            called.join(", "),
            task.expected.join("|"),
        );
    }
    let n = totals.tasks.max(1) as f64;
    let figures = json!({
        "tasks": totals.tasks,
        "success_rate": totals.successes as f64 / n,
        "mean_steps": totals.steps as f64 / n,
        "mean_prompt_tokens": totals.prompt_tokens as f64 / n,
        "mean_completion_tokens": totals.completion_tokens as f64 / n,
        "max_steps_rate": totals.max_steps as f64 / n,
        "endpoint_error_rate": totals.endpoint_errors as f64 / n,
        "first_turn_prompt_tokens": {"browse": browse_tokens, "upfront": upfront_tokens, "offered_mean": offered_tokens},
    });
    if json_out {
        return super::print_json(&figures);
    }
    super::emit(format!(
        "policy {:?}, {} tasks over {} tools, model {}\n\
         success rate        {:.3}\n\
         mean steps          {:.2}\n\
         mean prompt tokens  {:.0}{}\n\
         mean completion     {:.0}\n\
         hit max steps       {:.3}\n\
         endpoint errors     {:.3} (requests the endpoint rejected, e.g. for context length; counted as failures)\n\
         first-turn prompt tokens (o200k, system prompt + tools array): browse {browse_tokens}, upfront {upfront_tokens}, offered (mean) {offered_tokens}",
        args.policy,
        totals.tasks,
        tools.len(),
        args.model,
        figures["success_rate"].as_f64().unwrap_or(0.0),
        figures["mean_steps"].as_f64().unwrap_or(0.0),
        figures["mean_prompt_tokens"].as_f64().unwrap_or(0.0),
        if totals.estimated {
            " (partly estimated with o200k)"
        } else {
            ""
        },
        figures["mean_completion_tokens"].as_f64().unwrap_or(0.0),
        figures["max_steps_rate"].as_f64().unwrap_or(0.0),
        figures["endpoint_error_rate"].as_f64().unwrap_or(0.0),
    ))
}
