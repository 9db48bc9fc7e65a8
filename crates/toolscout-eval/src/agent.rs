//! The agent evaluation: does a model, finding tools with toolscout, call the right ones?
//!
//! The pieces, in the order a run uses them:
//!
//! - [`build_toolbox`] stores [`ToolLines`] in a temporary catalog, the tools of one
//!   named bundle together, every tool answered by a stub that returns a plausible
//!   success once its arguments pass the tool's schema; [`own_toolbox`] is the catalog of
//!   an irrelevance task with tools of its own.
//! - [`OfferedHost`] is the oracle: a host that offers only the tools the benchmark
//!   offered with the task, up front.
//! - [`run_task`] runs one [`Task`] through an [`Agent`] and reads what happened from
//!   its events into an [`Outcome`] ([`Outcome::from_events`] does the reading alone).
//! - [`Totals`] sums outcomes; [`Totals::figures`] turns them into the rates of
//!   [`Figures`] (serde `Serialize`): success, complete success, tool recall, calls
//!   nobody asked for, pre-activation recall, grounding refusals and false refusals,
//!   needs, steps, tokens.
//!
//! ```no_run
//! use std::collections::HashSet;
//! use std::sync::Arc;
//! use toolscout_agent::{Agent, AgentConfig, ChatClient, ToolboxHost};
//! use toolscout_eval::{agent, read};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let tools = read::tool_lines("data/tools.jsonl".as_ref())?;
//! let tasks = read::tasks("data/queries.jsonl".as_ref(), Some(20))?;
//! let host = Arc::new(ToolboxHost::new(agent::build_toolbox(&tools, None)?));
//! let names: HashSet<String> = tools.specs.iter().map(|t| t.name.to_string()).collect();
//! let client = ChatClient::new("http://127.0.0.1:8080/v1", "none");
//! let mut totals = agent::Totals::default();
//! for task in &tasks {
//!     let config = AgentConfig::builder("eval", "qwen2.5-coder-1.5b").build()?;
//!     let agent = Agent::new(config, client.clone(), host.clone());
//!     let run = agent::run_task(&agent, task, &names).await;
//!     totals.add(task, &run.outcome);
//! }
//! println!("{}", serde_json::to_string_pretty(&totals.figures(true))?);
//! # Ok(())
//! # }
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolscout_agent::host::{BoxFuture, CallContext, CallOutcome, ToolHost};
use toolscout_agent::{
    Agent, AgentEvent, ErrorKind, Policy, RunOptions, RunReport, StopReason, TokenUsage,
    ToolboxHost,
};
use toolscout_catalog::{BundlePut, Catalog, CatalogOptions, ToolPut};
use toolscout_discover::Toolbox;
use toolscout_invoke::{DynTool, Invoker, ToolError};
use toolscout_search::{Embedder, SearchIndex};
use toolscout_spec::adapters::openai::{NameMap, to_openai_named};
use toolscout_spec::name::slug_from_name;
use toolscout_spec::{ToolSpec, tokens};

use crate::Result;
use crate::read::{Task, ToolLines};

/// The stub behind every tool: a plausible success, once the invoker has checked the
/// arguments against the tool's schema.
struct Stub;

/// The native function every evaluated tool is stored on.
const STUB: &str = "eval_stub";

impl DynTool for Stub {
    fn name(&self) -> &str {
        STUB
    }

    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        ToolSpec::builder(STUB, "Answer any call with a plausible success").build()
    }

    fn call_json(
        &self,
        args: Value,
    ) -> toolscout_invoke::BoxFuture<'_, std::result::Result<Value, ToolError>> {
        Box::pin(
            async move { Ok(json!({"status": "success", "result": "done", "arguments": args})) },
        )
    }
}

/// Stores the tools in a temporary catalog, removed when the toolbox and its clones are
/// dropped (see [`build_toolbox_in`]).
pub fn build_toolbox(tools: &ToolLines, embedder: Option<Arc<dyn Embedder>>) -> Result<Toolbox> {
    let catalog = Catalog::temporary(options())?;
    toolbox_over(catalog, tools, embedder)
}

/// Stores the tools in a catalog in `dir`, every tool on the stub: the tools of one
/// named bundle (the API or server its line names) together, the others in one bundle
/// `eval`; and indexes them, by meaning too with an `embedder`.
pub fn build_toolbox_in(
    dir: &Path,
    tools: &ToolLines,
    embedder: Option<Arc<dyn Embedder>>,
) -> Result<Toolbox> {
    let catalog = Catalog::open_with(dir, options())?;
    toolbox_over(catalog, tools, embedder)
}

/// Adds recipes to the toolbox's catalog, in a bundle `recipes`: each a tool body as
/// `tool put` takes it (`"type": "recipe"`, its `impl` steps over the catalog's tools),
/// checked as every put is. Returns how many were added.
pub fn add_recipes(toolbox: &Toolbox, recipes: &[serde_json::Map<String, Value>]) -> Result<usize> {
    if recipes.is_empty() {
        return Ok(0);
    }
    let catalog = toolbox.catalog();
    let bundle = uuid::Uuid::now_v7();
    catalog.put_bundle(
        bundle,
        &BundlePut::new("recipes")
            .with_description("Chains of calls that go together, run as one call"),
    )?;
    for body in recipes {
        let authored = toolscout_catalog::AuthoredTool::from_json(body.clone(), Some(bundle))?;
        catalog.put_tool(bundle, &authored.slug, &authored.version, &authored.put)?;
    }
    Ok(recipes.len())
}

fn options() -> CatalogOptions {
    CatalogOptions::default()
        .with_natives(&[STUB])
        .with_builtins(false)
}

fn toolbox_over(
    catalog: Catalog,
    tools: &ToolLines,
    embedder: Option<Arc<dyn Embedder>>,
) -> Result<Toolbox> {
    // Bundle slugs, by the bundle's name; two names with one slug are numbered.
    let mut bundle_ids: HashMap<Option<&str>, uuid::Uuid> = HashMap::new();
    let mut bundle_slugs = HashSet::new();
    let mut groups: BTreeMap<uuid::Uuid, Vec<&ToolSpec>> = BTreeMap::new();
    for (i, spec) in tools.specs.iter().enumerate() {
        let line = tools.bundles.get(i).and_then(Option::as_ref);
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
        catalog.put_tools(
            bundle,
            puts.iter().map(|(slug, put)| (slug.as_str(), "1", put)),
        )?;
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

/// The toolbox of an irrelevance task with its own `offered` tools, none of which fits:
/// those of `tools` alone, in a temporary catalog. `None` for any other task, which runs
/// over the whole catalog.
pub fn own_toolbox(
    task: &Task,
    tools: &ToolLines,
    embedder: Option<&Arc<dyn Embedder>>,
) -> Result<Option<Toolbox>> {
    if !task.irrelevant() || task.offered.is_empty() {
        return Ok(None);
    }
    let specs: Vec<ToolSpec> = task
        .offered
        .iter()
        .filter_map(|n| tools.specs.iter().find(|s| s.name.as_str() == n.as_str()))
        .cloned()
        .collect();
    build_toolbox(&ToolLines::new(specs), embedder.cloned()).map(Some)
}

/// A host that offers only some tools, up front: the oracle, handed the tools the
/// benchmark offered with the task. Calls go to the inner host.
#[derive(Clone)]
pub struct OfferedHost {
    inner: ToolboxHost,
    offered: Vec<ToolSpec>,
}

impl OfferedHost {
    /// Offers `offered` over `inner`.
    pub fn new(inner: ToolboxHost, offered: Vec<ToolSpec>) -> Self {
        OfferedHost { inner, offered }
    }

    /// Offers the task's `offered` tools that `inner` knows.
    pub fn for_task(inner: ToolboxHost, task: &Task) -> Self {
        let offered = task.offered.iter().filter_map(|n| inner.spec(n)).collect();
        OfferedHost { inner, offered }
    }
}

impl ToolHost for OfferedHost {
    fn initial_tools(&self, _policy: Policy) -> Vec<ToolSpec> {
        self.offered.clone()
    }

    fn spec(&self, name: &str) -> Option<ToolSpec> {
        self.inner.spec(name)
    }

    fn approval_steps(&self, name: &str) -> Vec<toolscout_invoke::PlannedStep> {
        self.inner.approval_steps(name)
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

/// Tokens (o200k) of a first request's fixed part: the system prompt and the tools
/// array.
pub fn first_turn_tokens(system: &str, tools: &[ToolSpec]) -> usize {
    let names = NameMap::new(tools.iter().map(|t| t.name.as_str()));
    let array: Vec<Value> = tools
        .iter()
        .map(|t| to_openai_named(t, names.alias(&t.name).unwrap_or(&t.name), false))
        .collect();
    tokens::count(system) + tokens::count_json(&Value::Array(array))
}

/// Whether a call's arguments give what the benchmark's answer gives: each of the
/// answer's arguments, with the same value (numbers compared as numbers, text without
/// regard to case or surrounding spaces).
pub fn same_arguments(gold: &Value, made: &Value) -> bool {
    let (Some(gold), Some(made)) = (gold.as_object(), made.as_object()) else {
        return false;
    };
    let text = |v: &Value| match v {
        Value::String(s) => s.trim().to_lowercase(),
        other => other.to_string(),
    };
    let close = |a: Option<f64>, b: Option<f64>| matches!((a, b), (Some(a), Some(b)) if (a - b).abs() < 1e-9);
    gold.iter().all(|(k, g)| {
        made.get(k).is_some_and(|m| {
            g == m
                || text(g) == text(m)
                || close(g.as_f64(), m.as_f64().or_else(|| text(m).parse().ok()))
                || close(text(g).parse().ok(), m.as_f64())
        })
    })
}

/// What one task's run did, read from its events (and its report, with
/// [`Outcome::with_run`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Outcome {
    /// Calls, in order: the tool and, for a failure, its error kind (`tool(kind)`).
    pub calls: Vec<String>,
    /// Whether an expected tool was called successfully.
    pub expected_called: bool,
    /// Whether a tool of the task's catalog was called (successfully or not).
    pub catalog_called: bool,
    /// Whether a call of the task's catalog tools ran: it succeeded, or failed or timed
    /// out while running (not refused before: unknown, invalid or ungrounded arguments,
    /// disabled, out of scope, not approved).
    pub catalog_ran: bool,
    /// Tools retrieved before the first request.
    pub retrieved: Vec<String>,
    /// Tools in the first request's array beyond the retrieved ones: offered compactly
    /// (the retrieved tools' server's, [`AgentEvent::Offered`]) before the first request.
    pub first_offered: Vec<String>,
    /// Every tool that was in the array at some point of the run (retrieved, activated
    /// or offered compactly).
    pub ever_offered: HashSet<String>,
    /// The first request's prompt tokens.
    pub first_prompt_tokens: Option<u64>,
    /// Tools called successfully.
    pub called_ok: HashSet<String>,
    /// Calls nobody asked for, in order: calls of catalog tools outside the task's
    /// `expected` that ran (succeeded, or failed or timed out while running; a recipe's
    /// step counts as a call of its tool). A call refused before it ran did nothing and
    /// is not among them.
    pub unasked: Vec<String>,
    /// Of [`Outcome::unasked`], the calls of a tool of another server than the task's:
    /// its server (the bundle its line names) holds no tool the task expects; a tool in
    /// no server is a server of its own. A stray call within a server the task uses (a
    /// matrix tool beside the asked-for matrix tools) may still serve it where the
    /// benchmark lists only some of the tools that do; a call of another server's (a
    /// flight search for a route between national parks) rarely does. `None` when the
    /// servers were not told ([`Outcome::with_servers`]), as in results kept before
    /// this was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unasked_elsewhere: Option<Vec<String>>,
    /// Calls refused as `ungrounded_arguments`: the tool and the arguments.
    pub refused: Vec<(String, Value)>,
    /// The needs the first message was split into (0 when it was not).
    pub needs: usize,
    /// Model requests made.
    pub steps: u32,
    /// Tokens used.
    pub usage: TokenUsage,
    /// Why the run stopped (`None` until [`Outcome::with_run`]).
    pub stop: Option<StopReason>,
    /// How long the run took.
    pub seconds: f64,
}

impl Outcome {
    /// Reads a run's events (top-level ones count; a sub-agent's calls count as calls
    /// too): `catalog` holds the names of the task's catalog tools.
    pub fn from_events(events: &[AgentEvent], task: &Task, catalog: &HashSet<String>) -> Self {
        let mut seen = Outcome::default();
        let mut arguments: HashMap<&str, &str> = HashMap::new();
        let mut first_retrieval = true;
        let mut started = false;
        for event in events {
            match event {
                AgentEvent::StepStarted { depth: 0, .. } => started = true,
                AgentEvent::Offered {
                    tools, depth: 0, ..
                } => {
                    if !started {
                        seen.first_offered.extend(tools.iter().cloned());
                    }
                    seen.ever_offered.extend(tools.iter().cloned());
                }
                AgentEvent::Activated { tool, depth: 0, .. } => {
                    seen.ever_offered.insert(tool.clone());
                }
                AgentEvent::Retrieved {
                    tools,
                    depth: 0,
                    needs,
                    ..
                } => {
                    seen.ever_offered.extend(tools.iter().cloned());
                    seen.retrieved.extend(tools.iter().cloned());
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
                    let ok = *ok;
                    seen.expected_called |= ok && task.expected.contains(tool);
                    if ok {
                        seen.called_ok.insert(tool.clone());
                    }
                    seen.catalog_called |= catalog.contains(tool);
                    let kind = result.pointer("/error/kind").and_then(Value::as_str);
                    if kind == Some(ErrorKind::UngroundedArguments.as_str()) {
                        let args = arguments
                            .get(call_id.as_str())
                            .and_then(|a| serde_json::from_str(a).ok())
                            .unwrap_or(Value::Null);
                        seen.refused.push((tool.clone(), args));
                    }
                    let ran = ok
                        || [ErrorKind::ToolFailed, ErrorKind::Timeout]
                            .iter()
                            .any(|k| kind == Some(k.as_str()));
                    seen.catalog_ran |= catalog.contains(tool) && ran;
                    if ran && catalog.contains(tool) && !task.expected.contains(tool) {
                        seen.unasked.push(tool.clone());
                    }
                    seen.calls.push(match kind {
                        Some(k) if !ok => format!("{tool}({k})"),
                        _ => tool.clone(),
                    });
                }
                // A recipe's step is a call of its tool, made for the model: a step that
                // succeeded counts as that tool called with valid arguments.
                AgentEvent::ToolProgress { progress, .. }
                    if progress["event"] == "step_finished" && progress["ok"] == true =>
                {
                    if let Some(step_tool) = progress["tool"].as_str() {
                        let expected = task.expected.iter().any(|t| t == step_tool);
                        seen.expected_called |= expected;
                        seen.called_ok.insert(step_tool.to_owned());
                        if !expected {
                            seen.unasked.push(step_tool.to_owned());
                        }
                        seen.calls.push(format!("{step_tool}(step)"));
                    }
                }
                _ => {}
            }
        }
        seen
    }

    /// With [`Outcome::unasked_elsewhere`]: `server_of` tells the server of a tool
    /// (`None`: it is in none).
    ///
    /// ```
    /// use toolscout_eval::agent::Outcome;
    /// use toolscout_eval::read::Task;
    ///
    /// let task = Task::new("find a flight to Oslo", &["search_flights"]);
    /// let mut outcome = Outcome::default();
    /// outcome.unasked = vec!["book_flight".into(), "get_weather".into()];
    /// let servers = |tool: &str| match tool {
    ///     "search_flights" | "book_flight" => Some("Flights"),
    ///     _ => None,
    /// };
    /// let outcome = outcome.with_servers(&task, servers);
    /// assert_eq!(outcome.unasked_elsewhere, Some(vec!["get_weather".to_owned()]));
    /// ```
    pub fn with_servers<'s>(
        mut self,
        task: &Task,
        server_of: impl Fn(&str) -> Option<&'s str>,
    ) -> Self {
        let servers: Vec<&str> = task.expected.iter().filter_map(|t| server_of(t)).collect();
        self.unasked_elsewhere = Some(
            self.unasked
                .iter()
                .filter(|t| server_of(t).is_none_or(|s| !servers.contains(&s)))
                .cloned()
                .collect(),
        );
        self
    }

    /// With the run's steps, tokens and stop reason, and how long it took.
    pub fn with_run(mut self, report: &RunReport, seconds: f64) -> Self {
        self.steps = report.steps;
        self.usage = report.usage;
        self.stop = Some(report.stop.clone());
        self.seconds = seconds;
        self
    }

    /// Whether the endpoint cut the run short for a reason of its own, not the agent's:
    /// it gave no answer at all, a server error (5xx, such as llama.cpp's 500 "Context
    /// size has been exceeded" when parallel requests share its context), a timeout
    /// (408) or a rate limit (429). Running the task again may give an outcome; `eval
    /// agent --results` keeps none of these, so that a resumed run runs them again. A
    /// refusal of the request itself (another 4xx) is the agent's outcome and is kept.
    pub fn endpoint_failed(&self) -> bool {
        matches!(
            &self.stop,
            Some(StopReason::EndpointError { status, .. })
                if status.is_none_or(|s| s >= 500 || s == 408 || s == 429)
        )
    }

    /// Whether the task succeeded: an expected tool was called successfully, or, for an
    /// irrelevance task, no catalog tool was called.
    pub fn success(&self, task: &Task) -> bool {
        if task.irrelevant() {
            !self.catalog_called
        } else {
            self.expected_called
        }
    }

    /// Whether an expected tool was among the tools retrieved before the first request.
    pub fn retrieved_hit(&self, task: &Task) -> bool {
        self.retrieved.iter().any(|t| task.expected.contains(t))
    }
}

/// One task's run: the agent's report, its events, and what they say.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TaskRun {
    /// The agent's report.
    pub report: RunReport,
    /// Every event of the run, in order.
    pub events: Vec<AgentEvent>,
    /// What the run did ([`Outcome::from_events`] and [`Outcome::with_run`]).
    pub outcome: Outcome,
}

/// Runs the task's query through `agent` and reads its outcome; `catalog` holds the
/// names of the task's catalog tools.
pub async fn run_task(agent: &Agent, task: &Task, catalog: &HashSet<String>) -> TaskRun {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let started = Instant::now();
    let report = agent
        .run(&task.query, RunOptions::default().with_events(tx))
        .await;
    let seconds = started.elapsed().as_secs_f64();
    let mut events = Vec::new();
    while let Ok(event) = rx.try_recv() {
        events.push(event);
    }
    let outcome = Outcome::from_events(&events, task, catalog).with_run(&report, seconds);
    TaskRun {
        report,
        events,
        outcome,
    }
}

/// The sums over a group of tasks (relevant or irrelevance) of their outcomes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Totals {
    /// Tasks.
    pub tasks: usize,
    /// Tasks that succeeded ([`Outcome::success`]).
    pub successes: usize,
    /// Relevant tasks whose expected tool was among the retrieved ones.
    pub hits: usize,
    /// Those of them that succeeded.
    pub hit_successes: usize,
    /// Tasks without such a hit that succeeded.
    pub miss_successes: usize,
    /// Model requests.
    pub steps: u64,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Prompt tokens of each task's first request.
    pub first_turn_prompt_tokens: u64,
    /// Seconds.
    pub seconds: f64,
    /// Tasks stopped at the step limit.
    pub max_steps: usize,
    /// Tasks stopped by an endpoint error.
    pub endpoint_errors: usize,
    /// Whether some tokens were counted locally (the endpoint did not say).
    pub estimated: bool,
    /// Tasks in which no catalog tool ran (a call refused before running, such as one
    /// with ungrounded arguments, does not count as run).
    pub none_ran: usize,
    /// Relevant tasks in which every expected tool was called successfully (its
    /// arguments passed its schema).
    pub complete: usize,
    /// The sum over tasks of the share of the expected tools called successfully.
    pub recall: f64,
    /// Calls nobody asked for ([`Outcome::unasked`]).
    pub unasked_calls: usize,
    /// Tasks with such a call.
    pub unasked_tasks: usize,
    /// Those calls of another server than the task's ([`Outcome::unasked_elsewhere`]).
    pub unasked_elsewhere_calls: usize,
    /// Tasks whose outcome tells those calls (the others were kept before it was
    /// recorded).
    pub unasked_elsewhere_told: usize,
    /// The sum over tasks of the share of the expected tools activated before the first
    /// request.
    pub pre_activation: f64,
    /// The same, of the tools in the first request's array (activated, or offered
    /// compactly).
    pub first_array: f64,
    /// The same, of the tools in the array at some point of the run.
    pub ever_offered: f64,
    /// Calls refused as `ungrounded_arguments`.
    pub refusals: usize,
    /// Tasks with such a refusal.
    pub refused_tasks: usize,
    /// Refused calls of a tool the task expects.
    pub refused_expected: usize,
    /// Refused calls that the benchmark's answer makes with the same arguments
    /// ([`same_arguments`]).
    pub false_refusals: usize,
    /// The sum over tasks of the needs the first message was split into (1 when whole).
    pub needs: usize,
}

impl Totals {
    /// Adds one task's outcome; returns whether it succeeded.
    pub fn add(&mut self, task: &Task, outcome: &Outcome) -> bool {
        let success = outcome.success(task);
        let hit = outcome.retrieved_hit(task);
        let share = |set: &dyn Fn(&String) -> bool| {
            if task.expected.is_empty() {
                0.0
            } else {
                task.expected.iter().filter(|t| set(t)).count() as f64 / task.expected.len() as f64
            }
        };
        self.complete += usize::from(
            !task.irrelevant() && task.expected.iter().all(|t| outcome.called_ok.contains(t)),
        );
        self.recall += share(&|t| outcome.called_ok.contains(t));
        self.unasked_calls += outcome.unasked.len();
        self.unasked_tasks += usize::from(!outcome.unasked.is_empty());
        if let Some(elsewhere) = &outcome.unasked_elsewhere {
            self.unasked_elsewhere_calls += elsewhere.len();
            self.unasked_elsewhere_told += 1;
        }
        self.pre_activation += share(&|t| outcome.retrieved.contains(t));
        self.first_array +=
            share(&|t| outcome.retrieved.contains(t) || outcome.first_offered.contains(t));
        self.ever_offered += share(&|t| outcome.ever_offered.contains(t));
        self.refusals += outcome.refused.len();
        self.refused_tasks += usize::from(!outcome.refused.is_empty());
        self.refused_expected += outcome
            .refused
            .iter()
            .filter(|(t, _)| task.expected.contains(t))
            .count();
        self.false_refusals += outcome
            .refused
            .iter()
            .filter(|(tool, args)| {
                task.calls
                    .iter()
                    .any(|c| &c.tool == tool && same_arguments(&c.arguments, args))
            })
            .count();
        self.needs += outcome.needs.max(1);
        self.tasks += 1;
        self.successes += usize::from(success);
        self.none_ran += usize::from(!outcome.catalog_ran);
        self.hits += usize::from(hit);
        self.hit_successes += usize::from(hit && success);
        self.miss_successes += usize::from(!hit && success);
        self.steps += u64::from(outcome.steps);
        self.prompt_tokens += outcome.usage.prompt_tokens;
        self.completion_tokens += outcome.usage.completion_tokens;
        self.first_turn_prompt_tokens += outcome.first_prompt_tokens.unwrap_or(0);
        self.seconds += outcome.seconds;
        self.estimated |= outcome.usage.estimated;
        match &outcome.stop {
            Some(StopReason::MaxSteps) => self.max_steps += 1,
            Some(StopReason::EndpointError { .. }) => self.endpoint_errors += 1,
            _ => {}
        }
        success
    }

    /// The rates of relevant tasks; with `retrieve` (the retrieve policy), the
    /// retrieval's too.
    pub fn figures(&self, retrieve: bool) -> Figures {
        let n = self.tasks.max(1) as f64;
        let rate = |k: usize, of: usize| (of > 0).then(|| k as f64 / of as f64);
        Figures {
            tasks: self.tasks,
            success_rate: self.successes as f64 / n,
            complete_success_rate: self.complete as f64 / n,
            tool_recall: self.recall / n,
            unasked_calls_per_task: self.unasked_calls as f64 / n,
            tasks_with_an_unasked_call_rate: self.unasked_tasks as f64 / n,
            unasked_calls_of_other_servers_per_task: (self.tasks > 0
                && self.unasked_elsewhere_told == self.tasks)
                .then(|| self.unasked_elsewhere_calls as f64 / n),
            mean_needs: self.needs as f64 / n,
            grounding_refusals_per_task: self.refusals as f64 / n,
            tasks_with_a_refusal_rate: self.refused_tasks as f64 / n,
            refusals_of_expected_tools: self.refused_expected,
            false_refusals: self.false_refusals,
            mean_steps: self.steps as f64 / n,
            mean_prompt_tokens: self.prompt_tokens as f64 / n,
            mean_completion_tokens: self.completion_tokens as f64 / n,
            mean_first_turn_prompt_tokens: self.first_turn_prompt_tokens as f64 / n,
            seconds_per_task: self.seconds / n,
            max_steps_rate: self.max_steps as f64 / n,
            endpoint_error_rate: self.endpoint_errors as f64 / n,
            tokens_estimated: self.estimated,
            retrieval: retrieve.then(|| RetrievalFigures {
                retrieved_hit_rate: rate(self.hits, self.tasks),
                pre_activation_recall: self.pre_activation / n,
                first_array_recall: self.first_array / n,
                end_activation_recall: self.ever_offered / n,
                success_given_hit: rate(self.hit_successes, self.hits),
                success_given_miss: rate(self.miss_successes, self.tasks - self.hits),
            }),
            abstention: None,
        }
    }

    /// The rates of irrelevance tasks: those of [`Totals::figures`] and the abstention's.
    pub fn irrelevance_figures(&self) -> Figures {
        let mut figures = self.figures(false);
        figures.abstention = Some(AbstentionFigures {
            // Success on an irrelevance task is abstaining: no catalog tool called.
            abstention_rate: figures.success_rate,
            // Looser: no catalog tool ran, though one may have been called and refused
            // before running (by grounding, or as invalid).
            no_tool_ran_rate: self.none_ran as f64 / self.tasks.max(1) as f64,
        });
        figures
    }
}

/// The rates of a group of tasks, per task: what `toolscout eval agent --json` prints
/// under `relevant` and `irrelevance`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Figures {
    /// Tasks.
    pub tasks: usize,
    /// Tasks that succeeded.
    pub success_rate: f64,
    /// Tasks in which every expected tool was called successfully.
    pub complete_success_rate: f64,
    /// The mean share of a task's expected tools called successfully.
    pub tool_recall: f64,
    /// Calls nobody asked for (of tools outside the task's `expected`, that ran), per
    /// task: what the user pays for and gets nothing from.
    pub unasked_calls_per_task: f64,
    /// Tasks with such a call.
    pub tasks_with_an_unasked_call_rate: f64,
    /// Of those calls, the ones of a tool of another server than the task's, per task
    /// ([`Outcome::unasked_elsewhere`]); `None` unless every task's outcome tells them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unasked_calls_of_other_servers_per_task: Option<f64>,
    /// The mean number of needs a first message was split into.
    pub mean_needs: f64,
    /// Calls refused as `ungrounded_arguments`, per task.
    pub grounding_refusals_per_task: f64,
    /// Tasks with such a refusal.
    pub tasks_with_a_refusal_rate: f64,
    /// Refused calls of expected tools.
    pub refusals_of_expected_tools: usize,
    /// Refused calls the benchmark's answer makes with the same arguments.
    pub false_refusals: usize,
    /// Model requests per task.
    pub mean_steps: f64,
    /// Prompt tokens per task.
    pub mean_prompt_tokens: f64,
    /// Completion tokens per task.
    pub mean_completion_tokens: f64,
    /// Prompt tokens of the first request, per task.
    pub mean_first_turn_prompt_tokens: f64,
    /// Seconds per task.
    pub seconds_per_task: f64,
    /// Tasks stopped at the step limit.
    pub max_steps_rate: f64,
    /// Tasks stopped by an endpoint error.
    pub endpoint_error_rate: f64,
    /// Whether some tokens were counted locally.
    pub tokens_estimated: bool,
    /// Under the retrieve policy, the retrieval's figures.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub retrieval: Option<RetrievalFigures>,
    /// For irrelevance tasks, the abstention's.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub abstention: Option<AbstentionFigures>,
}

/// How retrieval before the first request served the tasks (`None`: no task to divide
/// by).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RetrievalFigures {
    /// Tasks with an expected tool among the retrieved ones.
    pub retrieved_hit_rate: Option<f64>,
    /// The mean share of a task's expected tools retrieved (activated before the first
    /// request).
    pub pre_activation_recall: f64,
    /// The mean share of a task's expected tools in the first request's array: activated,
    /// or offered compactly ([`AgentEvent::Offered`]).
    pub first_array_recall: f64,
    /// The mean share of a task's expected tools that were in the array at some point of
    /// the run (activated, or offered compactly): what the model could call.
    pub end_activation_recall: f64,
    /// The success rate of tasks with such a hit.
    pub success_given_hit: Option<f64>,
    /// The success rate of the others.
    pub success_given_miss: Option<f64>,
}

/// How irrelevance tasks were declined.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct AbstentionFigures {
    /// Tasks in which no catalog tool was called.
    pub abstention_rate: f64,
    /// Tasks in which no catalog tool ran (a call refused before running aside).
    pub no_tool_ran_rate: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_arguments_compares_numbers_as_numbers_and_text_without_case() {
        let gold = json!({"city": "Paris", "days": 3});
        assert!(same_arguments(
            &gold,
            &json!({"city": " paris ", "days": "3"})
        ));
        assert!(same_arguments(
            &gold,
            &json!({"city": "PARIS", "days": 3.0, "unit": "C"})
        ));
        assert!(!same_arguments(&gold, &json!({"city": "Rome", "days": 3})));
        assert!(!same_arguments(&gold, &json!({"city": "Paris"})));
        assert!(!same_arguments(&gold, &Value::Null));
        assert!(same_arguments(&json!({"n": "2.50"}), &json!({"n": 2.5})));
    }

    #[test]
    fn unique_slug_numbers_the_later_ones() {
        let mut taken = HashSet::new();
        assert_eq!(unique_slug("a", &mut taken), "a");
        assert_eq!(unique_slug("a", &mut taken), "a-2");
        assert_eq!(unique_slug("a", &mut taken), "a-3");
        let long = "x".repeat(64);
        assert_eq!(unique_slug(&long, &mut taken), long);
        let second = unique_slug(&long, &mut taken);
        assert_eq!(second.len(), 64);
        assert!(second.ends_with("-2"));
    }
}
