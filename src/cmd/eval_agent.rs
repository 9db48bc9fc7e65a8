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
use toolscout_agent::ErrorKind;
use toolscout_agent::host::{BoxFuture, CallContext, CallOutcome, ToolHost};
use toolscout_agent::{
    Agent, AgentConfig, AgentEvent, ChatClient, Policy, RunOptions, StopReason, ToolboxHost,
};
use toolscout_catalog::{BundlePut, Catalog, CatalogOptions, ToolPut};
use toolscout_discover::Toolbox;
use toolscout_invoke::{DynTool, Invoker, ToolError};
use toolscout_search::SearchIndex;
use toolscout_spec::adapters::jsonl::LineBundle;
use toolscout_spec::adapters::openai::{NameMap, to_openai_named};
use toolscout_spec::name::{sanitize_name, slug_from_name};
use toolscout_spec::{ToolSpec, tokens};

use super::agent_opts::ActivationArgs;

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

/// One task of a tasks file.
pub(crate) struct Task {
    pub(crate) query: String,
    /// Empty for an irrelevance task.
    pub(crate) expected: Vec<String>,
    pub(crate) offered: Vec<String>,
    /// The calls of the benchmark's answer (`calls`: `{tool, arguments}`), when it has
    /// them: what a refused call is compared with.
    pub(crate) calls: Vec<(String, Value)>,
}

impl Task {
    pub(crate) fn irrelevant(&self) -> bool {
        self.expected.is_empty()
    }
}

/// The tasks of a JSONL file (`query`, `expected`, `offered`), `limit` of them spread
/// over the file.
pub(crate) fn read_tasks(path: &std::path::Path, limit: Option<usize>) -> Result<Vec<Task>> {
    let text = super::eval::read_text(path)?;
    let mut tasks = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .with_context(|| format!("{} line {}", path.display(), i + 1))?;
        let names = |key: &str| -> Vec<String> {
            v.get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(sanitize_name)
                .collect()
        };
        let Some(query) = v.get("query").and_then(Value::as_str) else {
            bail!(
                "{} line {}: a task needs \"query\", a string",
                path.display(),
                i + 1
            );
        };
        let calls = v
            .get("calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let tool = c.get("tool").and_then(Value::as_str)?;
                Some((
                    sanitize_name(tool),
                    c.get("arguments").cloned().unwrap_or(Value::Null),
                ))
            })
            .collect();
        tasks.push(Task {
            query: query.to_owned(),
            offered: names("offered"),
            expected: names("expected"),
            calls,
        });
    }
    Ok(match limit {
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

/// Stores the tools in a temporary catalog (native tools on the stub): the tools of one
/// named bundle (`bundles[i]` for `tools[i]`, the API or server it belongs to) together,
/// the others in one bundle `eval`.
pub(crate) fn build_toolbox(
    tools: &[ToolSpec],
    bundles: &[Option<LineBundle>],
    dir: &std::path::Path,
    embedder: Option<Arc<dyn toolscout_search::Embedder>>,
) -> Result<Toolbox> {
    let catalog = Catalog::open_with(
        dir,
        CatalogOptions::default()
            .with_natives(&[STUB])
            .with_builtins(false),
    )?;
    // Bundle slugs, by the bundle's name; two names with one slug are numbered.
    let mut bundle_ids: std::collections::HashMap<Option<&str>, uuid::Uuid> =
        std::collections::HashMap::new();
    let mut bundle_slugs = HashSet::new();
    let mut groups: std::collections::BTreeMap<uuid::Uuid, Vec<&ToolSpec>> =
        std::collections::BTreeMap::new();
    for (i, spec) in tools.iter().enumerate() {
        let line = bundles.get(i).and_then(Option::as_ref);
        let key = line.map(|b| b.name.as_str());
        let id = match bundle_ids.get(&key) {
            Some(id) => *id,
            None => {
                let id = uuid::Uuid::now_v7();
                let put = match line {
                    Some(b) => {
                        BundlePut::new(unique_slug(&slug_from_name(&b.name), &mut bundle_slugs))
                            .with_display_name(&b.name)
                            .with_description(b.description.as_deref().unwrap_or_default())
                    }
                    None => BundlePut::new(unique_slug("eval", &mut bundle_slugs))
                        .with_display_name("Evaluated tools"),
                };
                catalog.put_bundle(id, &put)?;
                bundle_ids.insert(key, id);
                id
            }
        };
        groups.entry(id).or_default().push(spec);
    }
    for (bundle, specs) in groups {
        // Names that differ only in punctuation share a slug: number the later ones.
        let mut slugs = HashSet::new();
        let puts: Vec<(String, ToolPut)> = specs
            .into_iter()
            .map(|spec| {
                let slug = unique_slug(&slug_from_name(&spec.name), &mut slugs);
                (slug, ToolPut::native(spec.clone(), STUB))
            })
            .collect();
        catalog
            .put_tools(
                bundle,
                puts.iter().map(|(slug, put)| (slug.as_str(), "1", put)),
            )
            .context("storing the tools")?;
    }
    let mut invoker = Invoker::default();
    invoker.register_dyn(Arc::new(Stub))?;
    let mut index = SearchIndex::in_memory()?;
    if let Some(e) = embedder {
        index = index.with_embedder(e);
    }
    Ok(Toolbox::new(catalog, index, invoker)?)
}

/// `base`, or `base-2`, `base-3`… when taken (at most 64 characters); marks it taken.
fn unique_slug(base: &str, taken: &mut HashSet<String>) -> String {
    let mut slug = base.to_owned();
    let mut n = 2;
    while !taken.insert(slug.clone()) {
        let suffix = format!("-{n}");
        slug = base.chars().take(64 - suffix.len()).collect::<String>() + &suffix;
        n += 1;
    }
    slug
}

/// The catalog of an irrelevance task with its own `offered` tools (`None` for any other
/// task): those tools alone, in a temporary directory that lives as long as it is kept.
pub(crate) fn own_catalog(
    task: &Task,
    by_name: &std::collections::HashMap<&str, &ToolSpec>,
    embedder: Option<&Arc<dyn toolscout_search::Embedder>>,
) -> Result<Option<(Toolbox, tempfile::TempDir)>> {
    if !task.irrelevant() || task.offered.is_empty() {
        return Ok(None);
    }
    let specs: Vec<ToolSpec> = task
        .offered
        .iter()
        .filter_map(|n| by_name.get(n.as_str()).map(|s| (*s).clone()))
        .collect();
    let dir = tempfile::tempdir()?;
    let toolbox = build_toolbox(&specs, &[], dir.path(), embedder.cloned())?;
    Ok(Some((toolbox, dir)))
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
        AgentEvent::FitChecked { reply, fits, .. } => eprintln!(
            "    ? fit check: {:?} ({})",
            cut(reply),
            if *fits {
                "call required"
            } else {
                "not required"
            }
        ),
        AgentEvent::Activated { tool, .. } => eprintln!("    + activated {tool}"),
        AgentEvent::NeedFollowedUp { need, tools, .. } => {
            eprintln!("    ↻ followed up: {} [{}]", cut(need), tools.join(", "));
        }
        AgentEvent::FinalAnswer { text, .. } => eprintln!("    = {}", cut(text)),
        _ => {}
    }
}

/// The figures of one group of tasks (relevant or irrelevance).
#[derive(Default)]
struct Totals {
    tasks: usize,
    successes: usize,
    /// Relevant tasks whose expected tool was among the retrieved ones, and how many of
    /// those (and of the others) succeeded.
    hits: usize,
    hit_successes: usize,
    miss_successes: usize,
    steps: u64,
    prompt_tokens: u64,
    completion_tokens: u64,
    first_turn_prompt_tokens: u64,
    seconds: f64,
    max_steps: usize,
    endpoint_errors: usize,
    estimated: bool,
    /// Irrelevance tasks in which no catalog tool ran (a call refused before running,
    /// such as one with ungrounded arguments, does not count as run).
    none_ran: usize,
    /// Relevant tasks in which every expected tool was called successfully (its
    /// arguments passed its schema).
    complete: usize,
    /// The sum over tasks of the share of the expected tools called successfully.
    recall: f64,
    /// The sum over tasks of the share of the expected tools activated before the first
    /// request.
    pre_activation: f64,
    /// Calls refused as `ungrounded_arguments`, and the tasks with one.
    refusals: usize,
    refused_tasks: usize,
    /// Refused calls of a tool the task expects.
    refused_expected: usize,
    /// Refused calls that the benchmark's answer makes with the same arguments.
    false_refusals: usize,
    /// The sum over tasks of the needs the first message was split into (1 when whole).
    needs: usize,
}

impl Totals {
    fn figures(&self, retrieve: bool) -> Value {
        let n = self.tasks.max(1) as f64;
        let rate = |k: usize, of: usize| {
            if of == 0 {
                Value::Null
            } else {
                json!(k as f64 / of as f64)
            }
        };
        let mut v = json!({
            "tasks": self.tasks,
            "success_rate": self.successes as f64 / n,
            "complete_success_rate": self.complete as f64 / n,
            "tool_recall": self.recall / n,
            "mean_needs": self.needs as f64 / n,
            "grounding_refusals_per_task": self.refusals as f64 / n,
            "tasks_with_a_refusal_rate": self.refused_tasks as f64 / n,
            "refusals_of_expected_tools": self.refused_expected,
            "false_refusals": self.false_refusals,
            "mean_steps": self.steps as f64 / n,
            "mean_prompt_tokens": self.prompt_tokens as f64 / n,
            "mean_completion_tokens": self.completion_tokens as f64 / n,
            "mean_first_turn_prompt_tokens": self.first_turn_prompt_tokens as f64 / n,
            "seconds_per_task": self.seconds / n,
            "max_steps_rate": self.max_steps as f64 / n,
            "endpoint_error_rate": self.endpoint_errors as f64 / n,
            "tokens_estimated": self.estimated,
        });
        if retrieve && let Some(o) = v.as_object_mut() {
            o.insert("retrieved_hit_rate".to_owned(), rate(self.hits, self.tasks));
            o.insert(
                "pre_activation_recall".to_owned(),
                json!(self.pre_activation / n),
            );
            o.insert(
                "success_given_hit".to_owned(),
                rate(self.hit_successes, self.hits),
            );
            o.insert(
                "success_given_miss".to_owned(),
                rate(self.miss_successes, self.tasks - self.hits),
            );
        }
        v
    }
}

/// Whether a call's arguments give what the benchmark's answer gives: each of the
/// answer's arguments, with the same value (numbers compared as numbers, text without
/// regard to case).
fn same_arguments(gold: &Value, made: &Value) -> bool {
    let (Some(gold), Some(made)) = (gold.as_object(), made.as_object()) else {
        return false;
    };
    let text = |v: &Value| match v {
        Value::String(s) => s.trim().to_lowercase(),
        other => other.to_string(),
    };
    gold.iter().all(|(k, g)| {
        made.get(k).is_some_and(|m| {
            g == m
                || text(g) == text(m)
                || matches!((g.as_f64(), m.as_f64().or_else(|| text(m).parse().ok())), (Some(a), Some(b)) if (a - b).abs() < 1e-9)
                || matches!((text(g).parse::<f64>().ok(), m.as_f64()), (Some(a), Some(b)) if (a - b).abs() < 1e-9)
        })
    })
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

/// What one task's run did, read from its events.
#[derive(Default)]
struct Seen {
    /// Calls, in order: the tool and, for a failure, its error kind.
    calls: Vec<String>,
    /// Successful calls of expected tools.
    expected_called: bool,
    /// Calls (successful or not) of the task's catalog tools.
    catalog_called: bool,
    /// Calls of the task's catalog tools that ran: they succeeded, or failed or timed out
    /// while running (not refused before: unknown, invalid or ungrounded arguments,
    /// disabled, out of scope, not approved).
    catalog_ran: bool,
    /// Tools retrieved before the first request.
    retrieved: Vec<String>,
    first_prompt_tokens: Option<u64>,
    /// Tools called successfully.
    called_ok: HashSet<String>,
    /// Calls refused as `ungrounded_arguments`: the tool and the arguments.
    refused: Vec<(String, Value)>,
    /// The needs the first message was split into (0 when it was not).
    needs: usize,
}

fn watch(
    events: &mut tokio::sync::mpsc::UnboundedReceiver<AgentEvent>,
    task: &Task,
    catalog: &HashSet<String>,
    trace_on: bool,
) -> Seen {
    let mut seen = Seen::default();
    let mut arguments: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    let mut first_retrieval = true;
    while let Ok(event) = events.try_recv() {
        if trace_on {
            trace(&event);
        }
        match event {
            AgentEvent::Retrieved {
                tools,
                depth: 0,
                needs,
                ..
            } => {
                seen.retrieved.extend(tools);
                if first_retrieval {
                    seen.needs = needs.len();
                    first_retrieval = false;
                }
            }
            AgentEvent::ToolCallStarted {
                call_id,
                arguments: args,
                depth: 0,
                ..
            } => {
                arguments.insert(call_id, args);
            }
            AgentEvent::StepFinished {
                usage, depth: 0, ..
            } if seen.first_prompt_tokens.is_none() => {
                seen.first_prompt_tokens = Some(usage.prompt_tokens);
            }
            AgentEvent::ToolCallFinished {
                tool,
                ok,
                result,
                call_id,
                ..
            } => {
                seen.expected_called |= ok && task.expected.contains(&tool);
                if ok {
                    seen.called_ok.insert(tool.clone());
                }
                seen.catalog_called |= catalog.contains(&tool);
                let kind = result.pointer("/error/kind").and_then(Value::as_str);
                if kind == Some(ErrorKind::UngroundedArguments.as_str()) {
                    let args = arguments
                        .get(&call_id)
                        .and_then(|a| serde_json::from_str(a).ok())
                        .unwrap_or(Value::Null);
                    seen.refused.push((tool.clone(), args));
                }
                seen.catalog_ran |= catalog.contains(&tool)
                    && (ok
                        || [ErrorKind::ToolFailed, ErrorKind::Timeout]
                            .iter()
                            .any(|k| kind == Some(k.as_str())));
                seen.calls.push(match kind {
                    Some(k) if !ok => format!("{tool}({k})"),
                    _ => tool,
                });
            }
            _ => {}
        }
    }
    seen
}

pub(crate) fn run(args: &AgentArgs, global: &super::context::Global, json_out: bool) -> Result<()> {
    let super::eval::ToolLines {
        specs: tools,
        bundles,
    } = super::eval::read_tool_lines(&args.tools)?;
    if tools.is_empty() {
        bail!("{} has no tools", args.tools.display());
    }
    let tasks = read_tasks(&args.tasks, args.limit)?;
    let by_name_all: std::collections::HashMap<&str, &ToolSpec> =
        tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let embedder = global.meaning.embedder(None)?;
    let dir = tempfile::tempdir()?;
    let started = Instant::now();
    let toolbox = build_toolbox(&tools, &bundles, dir.path(), embedder.clone())?;
    eprintln!(
        "catalog: {} tools stored and indexed in {:.1} s; {} tasks ({} irrelevance), policy {:?}, model {}",
        tools.len(),
        started.elapsed().as_secs_f64(),
        tasks.len(),
        tasks.iter().filter(|t| t.irrelevant()).count(),
        args.policy,
        args.model
    );
    let whole = args
        .activation
        .apply_host(ToolboxHost::new(toolbox.clone()));
    let whole_names: HashSet<String> = tools.iter().map(|t| t.name.to_string()).collect();
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

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let client = ChatClient::new(&args.base_url, &args.api_key);
    let mut relevant = Totals::default();
    let mut irrelevant = Totals::default();
    for (i, task) in tasks.iter().enumerate() {
        // An irrelevance task runs over its own offered tools, none of which fits.
        let own = own_catalog(task, &by_name_all, embedder.as_ref())?
            .map(|(toolbox, dir)| (args.activation.apply_host(ToolboxHost::new(toolbox)), dir));
        let host = own.as_ref().map_or(&whole, |(h, _)| h);
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
        let seconds = t0.elapsed().as_secs_f64();
        let seen = watch(&mut rx, task, &catalog, args.trace);
        let (totals, success) = if task.irrelevant() {
            (&mut irrelevant, !seen.catalog_called)
        } else {
            (&mut relevant, seen.expected_called)
        };
        let hit = seen.retrieved.iter().any(|t| task.expected.contains(t));
        let share = |set: &dyn Fn(&String) -> bool| {
            if task.expected.is_empty() {
                0.0
            } else {
                task.expected.iter().filter(|t| set(t)).count() as f64 / task.expected.len() as f64
            }
        };
        let recall = share(&|t| seen.called_ok.contains(t));
        let pre_activation = share(&|t| seen.retrieved.contains(t));
        totals.complete += usize::from(
            !task.irrelevant() && task.expected.iter().all(|t| seen.called_ok.contains(t)),
        );
        totals.recall += recall;
        totals.pre_activation += pre_activation;
        totals.refusals += seen.refused.len();
        totals.refused_tasks += usize::from(!seen.refused.is_empty());
        totals.refused_expected += seen
            .refused
            .iter()
            .filter(|(t, _)| task.expected.contains(t))
            .count();
        totals.false_refusals += seen
            .refused
            .iter()
            .filter(|(tool, args)| {
                task.calls
                    .iter()
                    .any(|(t, gold)| t == tool && same_arguments(gold, args))
            })
            .count();
        totals.needs += seen.needs.max(1);
        totals.tasks += 1;
        totals.successes += usize::from(success);
        totals.none_ran += usize::from(!seen.catalog_ran);
        totals.hits += usize::from(hit);
        totals.hit_successes += usize::from(hit && success);
        totals.miss_successes += usize::from(!hit && success);
        totals.steps += u64::from(report.steps);
        totals.prompt_tokens += report.usage.prompt_tokens;
        totals.completion_tokens += report.usage.completion_tokens;
        totals.first_turn_prompt_tokens += seen.first_prompt_tokens.unwrap_or(0);
        totals.seconds += seconds;
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
        let expected = if task.irrelevant() {
            "none (irrelevance)".to_owned()
        } else {
            task.expected.join("|")
        };
        let retrieved = if args.policy == EvalPolicy::Retrieve {
            format!(" retrieved={}", if hit { "hit" } else { "miss" })
        } else {
            String::new()
        };
        eprintln!(
            "[{}/{}] {} {seconds:.1}s steps={} calls=[{}] expected={expected}{retrieved} stop={stop}",
            i + 1,
            tasks.len(),
            if success { "ok  " } else { "FAIL" },
            report.steps,
            seen.calls.join(", "),
        );
    }
    let retrieve = args.policy == EvalPolicy::Retrieve;
    let mut figures = json!({
        "policy": format!("{:?}", args.policy).to_lowercase(),
        "model": args.model,
        "top_k": args.activation.top_k,
        "activate_hits": args.activation.activate_hits,
        "tool_choice": format!("{:?}", args.activation.tool_choice),
        "activation_order": format!("{:?}", args.activation.activation_order),
        "confidence_floor": args.activation.confidence_floor,
        "fit_check": args.activation.fit_check,
        "ground_arguments": args.activation.ground_arguments,
        "twin_similarity": args.activation.twin_similarity,
        "margin": args.activation.margin,
        "tools": tools.len(),
        "first_turn_prompt_tokens_o200k": {"browse": browse_tokens, "upfront": upfront_tokens},
    });
    if let Some(o) = figures.as_object_mut() {
        if relevant.tasks > 0 {
            o.insert("relevant".to_owned(), relevant.figures(retrieve));
        }
        if irrelevant.tasks > 0 {
            let mut f = irrelevant.figures(false);
            if let Some(f) = f.as_object_mut() {
                // Success on an irrelevance task is abstaining: no catalog tool called.
                f.insert("abstention_rate".to_owned(), f["success_rate"].clone());
                // Looser: no catalog tool ran, though one may have been called and
                // refused before running (by `--ground-arguments`, or as invalid).
                f.insert(
                    "no_tool_ran_rate".to_owned(),
                    json!(irrelevant.none_ran as f64 / irrelevant.tasks as f64),
                );
            }
            o.insert("irrelevance".to_owned(), f);
        }
    }
    if json_out {
        return super::print_json(&figures);
    }
    let mut out = format!(
        "policy {:?}, {} tasks over {} tools, model {}, top-k {}, activate-hits {}, tool-choice {:?}, activation-order {:?}, confidence-floor {}, fit-check {}, ground-arguments {}, twin-similarity {}, margin {}\n",
        args.policy,
        tasks.len(),
        tools.len(),
        args.model,
        args.activation.top_k,
        args.activation.activate_hits,
        args.activation.tool_choice,
        args.activation.activation_order,
        args.activation.confidence_floor,
        args.activation.fit_check,
        args.activation.ground_arguments,
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
    super::emit(out)
}
