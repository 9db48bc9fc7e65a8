//! Running a recipe ([`toolscout_spec::recipe`]): its steps' tools found in the caller's
//! view of the catalog, one approval for the whole call, the steps run as a graph
//! (those that do not wait for each other at the same time), each step an invoker call of
//! its own (validated, counted, its secrets its own), progress told as it goes.
//!
//! **Writes last.** A step whose tool is not `read_only` starts only once every
//! read-only step that does not depend on it has succeeded, and after a failure no step
//! starts: a recipe that reads, then writes, never writes when a read fails. What a
//! finished write did cannot be undone by toolscout; the error of a failed run lists
//! the steps that finished and those of them that may have written (`completed`,
//! `wrote`).
//!
//! **The plan is what runs.** Every step's tool, nested recipes' steps included, is
//! found once, when the call starts, as exact tool versions; the approval lists that
//! tree, and the run calls those tools and no others: a name is never looked up again
//! during the run (a recipe put in place of a nested one meanwhile runs at the next
//! call, with its own approval).
//!
//! **Bounds.** One run makes at most [`MAX_CALLS_PER_RUN`] calls of tools (every item of
//! every `forEach`, at every depth) and keeps at most [`MAX_RESULT_BYTES`] of the results
//! of its tools (counted as each result arrives, so a run over the bound stops there,
//! not once a whole `forEach` is done).
//!
//! **Drafts.** [`crate::Toolbox::call_recipe_draft`] runs a recipe that is not in the
//! catalog (the console's recipe builder tries one before it is saved) through the same
//! runner; its approval is the caller's alone (see there).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde::Serialize;
use serde_json::{Map, Value, json};
use toolscout_catalog::{Catalog, Tool, Viewer};
use toolscout_invoke::{
    BoxFuture, Composite, ErrorKind, Implementation, InvokableTool, Invoker, Outcome, PlannedStep,
    ToolError,
};
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::tool_file::ToolType;
use toolscout_spec::recipe::{
    FOR_EACH_PARALLEL, MAX_CALLS_PER_RUN, MAX_DEPTH, MAX_FOR_EACH, MAX_RESULT_BYTES, Recipe,
    RecipeResult, Step, truthy,
};

/// What a recipe's run tells as it goes (see [`crate::Call::observed`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RecipeEvent {
    /// A step (or one item of a `forEach` step) started.
    StepStarted {
        /// The recipe's name (the innermost, for a nested recipe).
        recipe: String,
        /// The step's id.
        step: String,
        /// The tool it calls.
        tool: String,
        /// The item's position, for a `forEach` step.
        #[serde(skip_serializing_if = "Option::is_none")]
        item: Option<usize>,
    },
    /// A step (or one item) finished.
    StepFinished {
        /// The recipe's name.
        recipe: String,
        /// The step's id.
        step: String,
        /// The tool it called.
        tool: String,
        /// The item's position, for a `forEach` step.
        #[serde(skip_serializing_if = "Option::is_none")]
        item: Option<usize>,
        /// Whether it succeeded.
        ok: bool,
        /// How long it took, in milliseconds.
        ms: u64,
        /// The error's message, when it failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A step did not run: its `when` selected nothing true, or a step it waits for was
    /// skipped.
    StepSkipped {
        /// The recipe's name.
        recipe: String,
        /// The step's id.
        step: String,
        /// The tool it would have called.
        tool: String,
    },
}

/// Where a recipe's progress goes: called once per [`RecipeEvent`], in order, on the
/// run's task (keep it quick: hand the event to a channel).
pub type Progress = Arc<dyn Fn(&RecipeEvent) + Send + Sync>;

/// What one call of a catalog tool runs with.
#[derive(Clone, Copy)]
pub(crate) struct CallContext<'a> {
    pub catalog: &'a Catalog,
    pub invoker: &'a Invoker,
    pub viewer: &'a Viewer,
    pub progress: Option<&'a Progress>,
    /// How many recipes this call is inside.
    pub depth: usize,
    /// What the recipe run this call is part of has used; `None` outside a run (a run
    /// starts its own).
    pub budget: Option<&'a Budget>,
}

/// What one recipe run has used, nested recipes included: calls of tools and bytes of
/// their results (see the module's notes on bounds).
#[derive(Debug, Default)]
pub(crate) struct Budget {
    calls: AtomicUsize,
    bytes: AtomicUsize,
}

/// Who calls, for the rate limits of the invoker: each viewer has its own budget of a
/// tool's calls.
fn caller_of(viewer: &Viewer) -> String {
    match viewer {
        Viewer::Operator => "operator".to_owned(),
        Viewer::Tenant(t) => format!("tenant:{}", t.simple()),
        Viewer::Public => "public".to_owned(),
    }
}

/// `tool` as the invoker calls it: where the catalog keeps it and who calls, so that
/// approvals, secrets and rate limits tell it from another owner's tool of its name.
fn invocable_of(cx: CallContext<'_>, tool: &Tool) -> Result<InvokableTool, String> {
    InvokableTool::from_parts(tool.spec.clone(), tool.tool_type, &tool.implementation)
        .map(|t| {
            t.with_qualified(cx.catalog.qualified_name(tool.bundle_id, &tool.slug))
                .with_caller(caller_of(cx.viewer))
        })
        .map_err(|e| e.to_string())
}

/// The one call path of a catalog tool: enabled check, invoke (a recipe through its
/// steps, found now), count the call.
pub(crate) fn call_catalog_tool<'a>(
    cx: CallContext<'a>,
    tool: &'a Tool,
    args: Value,
    approved: bool,
) -> BoxFuture<'a, Outcome> {
    Box::pin(async move {
        let name = tool.spec.name.as_str();
        if let Some(reason) = &tool.disabled_reason {
            return Outcome::Err(crate::toolbox::disabled(name, name, &reason.to_string()));
        }
        let invocable = match invocable_of(cx, tool) {
            Ok(t) => t,
            Err(e) => {
                return Outcome::Err(ToolError::new(
                    ErrorKind::Disabled,
                    format!("tool '{name}' cannot be called: {e}"),
                ));
            }
        };
        let budget = Budget::default();
        let cx = CallContext {
            budget: Some(cx.budget.unwrap_or(&budget)),
            ..cx
        };
        let at = chrono::Utc::now();
        let outcome = match &invocable.implementation {
            Implementation::Recipe(recipe) => {
                let runner = RecipeRunner::new(cx, name, recipe);
                cx.invoker
                    .invoke_composite(&invocable, args, approved, &runner)
                    .await
            }
            _ if approved => cx.invoker.invoke_approved(&invocable, args).await,
            _ => cx.invoker.invoke(&invocable, args).await,
        };
        // Usage is batched in memory by the catalog; a failure to count is not the call's.
        let _ = cx.catalog.record_call(tool.id, at);
        outcome
    })
}

/// One step's tool as the run calls it, found when the call started.
pub(crate) struct PlannedTool {
    tool: Arc<Tool>,
    invocable: InvokableTool,
    /// Its steps' tools, found too, when it is a recipe.
    nested: Option<NestedPlan>,
}

/// A nested recipe of a plan: its steps, and their tools.
struct NestedPlan {
    recipe: Recipe,
    steps: Arc<Vec<PlannedTool>>,
}

/// Calls a step's tool of the plan, approved by the plan's approval: a nested recipe
/// runs its own planned steps, never found again.
fn call_planned<'a>(
    cx: CallContext<'a>,
    planned: &'a PlannedTool,
    args: Value,
) -> BoxFuture<'a, Outcome> {
    Box::pin(async move {
        let at = chrono::Utc::now();
        let outcome = match &planned.nested {
            Some(nested) => {
                let runner = RecipeRunner::planned(
                    cx,
                    planned.tool.spec.name.as_str(),
                    &nested.recipe,
                    Arc::clone(&nested.steps),
                );
                cx.invoker
                    .invoke_composite(&planned.invocable, args, true, &runner)
                    .await
            }
            None => cx.invoker.invoke_approved(&planned.invocable, args).await,
        };
        let _ = cx.catalog.record_call(planned.tool.id, at);
        outcome
    })
}

/// The steps of one recipe call.
pub(crate) struct RecipeRunner<'a> {
    cx: CallContext<'a>,
    name: &'a str,
    recipe: &'a Recipe,
    /// The steps' tools: found by [`RecipeRunner::plan_steps`], or given (a nested
    /// recipe of a plan).
    plan: OnceLock<Arc<Vec<PlannedTool>>>,
}

impl<'a> RecipeRunner<'a> {
    pub(crate) fn new(cx: CallContext<'a>, name: &'a str, recipe: &'a Recipe) -> Self {
        RecipeRunner {
            cx,
            name,
            recipe,
            plan: OnceLock::new(),
        }
    }

    /// A runner of a nested recipe whose steps' tools were found with its caller's.
    fn planned(
        cx: CallContext<'a>,
        name: &'a str,
        recipe: &'a Recipe,
        steps: Arc<Vec<PlannedTool>>,
    ) -> Self {
        let plan = OnceLock::new();
        let _ = plan.set(steps);
        RecipeRunner {
            cx,
            name,
            recipe,
            plan,
        }
    }

    /// Finds every step's tool in the caller's view (nested recipes' too), once, and
    /// lists what the call will run; a missing or disabled tool is an error naming the
    /// step.
    pub(crate) fn plan_steps(&self) -> Result<Vec<PlannedStep>, ToolError> {
        let plan = match self.plan.get() {
            Some(plan) => Arc::clone(plan),
            None => {
                let found = Arc::new(find_steps(self.cx, self.name, self.recipe, self.cx.depth)?);
                Arc::clone(self.plan.get_or_init(|| found))
            }
        };
        let mut out = Vec::new();
        list_steps(self.cx, self.recipe, &plan, "", &mut out);
        Ok(out)
    }

    fn emit(&self, event: RecipeEvent) {
        if let Some(p) = self.cx.progress {
            p(&event);
        }
    }

    /// Runs the steps as a graph; see the module's notes on writes.
    async fn run_steps(&self, args: Value) -> Result<Value, ToolError> {
        if self.plan.get().is_none() {
            self.plan_steps()?;
        }
        let plan = self
            .plan
            .get()
            .map(Arc::clone)
            .ok_or_else(|| ToolError::failed("the recipe's steps were not planned"))?;
        let steps = &self.recipe.steps;
        let n = steps.len();
        if plan.len() != n {
            return Err(ToolError::failed("the recipe's steps were not planned"));
        }
        let tools: &[PlannedTool] = &plan;
        let writes: Vec<bool> = tools
            .iter()
            .map(|t| !t.tool.spec.metadata.read_only)
            .collect();
        let dependents = self.descendants();
        let mut state = vec![State::Pending; n];
        let mut results = Map::new();
        let mut failure: Option<ToolError> = None;
        let mut running = FuturesUnordered::new();
        loop {
            if failure.is_none() {
                let mut started = self.start_ready(
                    &mut state,
                    &writes,
                    &dependents,
                    &args,
                    &results,
                    tools,
                    &mut running,
                    false,
                );
                if let Err(e) = &started {
                    failure = Some(e.clone());
                    started = Ok(0);
                }
                if matches!(started, Ok(0)) && running.is_empty() && failure.is_none() {
                    // Writes waiting for each other's reads: let the first go.
                    if let Err(e) = self.start_ready(
                        &mut state,
                        &writes,
                        &dependents,
                        &args,
                        &results,
                        tools,
                        &mut running,
                        true,
                    ) {
                        failure = Some(e);
                    }
                }
            }
            let Some((i, result)) = running.next().await else {
                break;
            };
            match result {
                Ok(value) => {
                    state[i] = State::Done;
                    results.insert(steps[i].id.clone(), value);
                }
                Err(e) => {
                    state[i] = State::Failed;
                    if failure.is_none() {
                        failure = Some(e);
                    }
                }
            }
        }
        if let Some(mut e) = failure {
            let completed: Vec<&str> = (0..n)
                .filter(|&i| state[i] == State::Done)
                .map(|i| steps[i].id.as_str())
                .collect();
            let wrote: Vec<&str> = (0..n)
                .filter(|&i| state[i] == State::Done && writes[i])
                .map(|i| steps[i].id.as_str())
                .collect();
            if let Value::Object(d) = &mut e.details {
                d.insert("completed".to_owned(), json!(completed));
                d.insert("wrote".to_owned(), json!(wrote));
            }
            return Err(e);
        }
        if let Some(i) = (0..n).find(|&i| state[i] == State::Pending) {
            return Err(self.step_error(
                i,
                ToolError::failed("the step never became ready"),
                None,
                None,
            ));
        }
        let cx = json!({"args": args, "steps": results});
        match &self.recipe.result {
            None => Ok(cx["steps"].clone()),
            Some(RecipeResult::One(sel)) => sel
                .select(&cx)
                .map(|v| v.unwrap_or(Value::Null))
                .map_err(|e| self.result_error(&e)),
            Some(RecipeResult::Object(map)) => {
                let mut out = Map::new();
                for (k, sel) in map {
                    let v = sel.select(&cx).map_err(|e| self.result_error(&e))?;
                    out.insert(k.clone(), v.unwrap_or(Value::Null));
                }
                Ok(Value::Object(out))
            }
        }
    }

    fn result_error(&self, why: &str) -> ToolError {
        ToolError::new(
            ErrorKind::ToolFailed,
            format!(
                "recipe '{}': its result could not be selected: {why}",
                self.name
            ),
        )
    }

    /// For each step, the steps that wait for it, directly or not.
    fn descendants(&self) -> Vec<BTreeSet<usize>> {
        let n = self.recipe.steps.len();
        let mut out = vec![BTreeSet::new(); n];
        // Steps are acyclic: repeat until nothing is added (n is at most 32).
        let mut changed = true;
        while changed {
            changed = false;
            for j in 0..n {
                for d in self.recipe.dependencies(j) {
                    let mut add: BTreeSet<usize> = out[j].clone();
                    add.insert(j);
                    let before = out[d].len();
                    out[d].extend(add);
                    changed |= out[d].len() != before;
                }
            }
        }
        out
    }

    /// Starts every step whose turn it is; returns how many started. With `ignore_gate`,
    /// a write may start before unrelated reads finish (only when nothing else can).
    #[allow(clippy::too_many_arguments)]
    fn start_ready<'s>(
        &'s self,
        state: &mut [State],
        writes: &[bool],
        dependents: &[BTreeSet<usize>],
        args: &Value,
        results: &Map<String, Value>,
        tools: &'s [PlannedTool],
        running: &mut FuturesUnordered<BoxFuture<'s, (usize, Result<Value, ToolError>)>>,
        ignore_gate: bool,
    ) -> Result<usize, ToolError> {
        let steps = &self.recipe.steps;
        let mut started = 0;
        let mut moved = true;
        while moved {
            moved = false;
            for i in 0..steps.len() {
                if state[i] != State::Pending {
                    continue;
                }
                let deps = self.recipe.dependencies(i);
                if deps.iter().any(|&d| state[d] == State::Skipped) {
                    state[i] = State::Skipped;
                    self.skipped(i);
                    moved = true;
                    continue;
                }
                if !deps.iter().all(|&d| state[d] == State::Done) {
                    continue;
                }
                let gated = writes[i]
                    && (0..steps.len()).any(|r| {
                        r != i
                            && !writes[r]
                            && !dependents[i].contains(&r)
                            && matches!(state[r], State::Pending | State::Running)
                    });
                if gated && !ignore_gate {
                    continue;
                }
                let cx = json!({"args": args, "steps": results});
                if let Some(when) = &steps[i].when {
                    let on = when.select(&cx).map_err(|e| {
                        self.step_error(
                            i,
                            ToolError::invalid_arguments(format!("when: {e}")),
                            None,
                            None,
                        )
                    })?;
                    if !truthy(on.as_ref()) {
                        state[i] = State::Skipped;
                        self.skipped(i);
                        moved = true;
                        continue;
                    }
                }
                state[i] = State::Running;
                let tool = &tools[i];
                running.push(Box::pin(async move {
                    let r = self.run_step(i, tool, cx).await;
                    (i, r)
                }));
                started += 1;
                if ignore_gate {
                    return Ok(started);
                }
            }
        }
        Ok(started)
    }

    fn skipped(&self, i: usize) {
        let s = &self.recipe.steps[i];
        self.emit(RecipeEvent::StepSkipped {
            recipe: self.name.to_owned(),
            step: s.id.clone(),
            tool: s.tool.clone(),
        });
    }

    /// One step: once, or once per item of its `forEach` ([`FOR_EACH_PARALLEL`] at a time).
    async fn run_step(
        &self,
        i: usize,
        tool: &PlannedTool,
        mut cx: Value,
    ) -> Result<Value, ToolError> {
        let step = &self.recipe.steps[i];
        let Some(each) = &step.for_each else {
            let args = self.step_args(i, step, &tool.tool, &cx)?;
            return self.call_step(i, tool, args, None).await;
        };
        let items = match each.select(&cx) {
            Ok(None) => Vec::new(),
            Ok(Some(Value::Array(items))) => items,
            Ok(Some(other)) => {
                return Err(self.step_error(
                    i,
                    ToolError::invalid_arguments(format!(
                        "forEach: {} selected {}, not a list",
                        each.as_str(),
                        kind_of(&other)
                    )),
                    None,
                    None,
                ));
            }
            Err(e) => {
                return Err(self.step_error(
                    i,
                    ToolError::invalid_arguments(format!("forEach: {e}")),
                    None,
                    None,
                ));
            }
        };
        if items.len() > MAX_FOR_EACH {
            return Err(self.step_error(
                i,
                ToolError::invalid_arguments(format!(
                    "forEach: {} selected {} items, at most {MAX_FOR_EACH} are allowed",
                    each.as_str(),
                    items.len()
                )),
                None,
                None,
            ));
        }
        let mut calls = Vec::with_capacity(items.len());
        for (k, item) in items.into_iter().enumerate() {
            cx["item"] = item;
            cx["index"] = json!(k);
            calls.push((k, self.step_args(i, step, &tool.tool, &cx)));
        }
        let mut out = Vec::with_capacity(calls.len());
        let mut stream = futures_util::stream::iter(calls)
            .map(|(k, args)| async move {
                match args {
                    Ok(args) => self.call_step(i, tool, args, Some(k)).await,
                    Err(e) => Err(e),
                }
            })
            .buffered(FOR_EACH_PARALLEL);
        while let Some(r) = stream.next().await {
            out.push(r?);
        }
        Ok(Value::Array(out))
    }

    /// The step's arguments: its literals, then its selections.
    fn step_args(
        &self,
        i: usize,
        step: &Step,
        tool: &Tool,
        cx: &Value,
    ) -> Result<Value, ToolError> {
        let mut out = step.args.clone();
        for (key, sel) in &step.from {
            match sel.select(cx) {
                Ok(Some(v)) => {
                    out.insert(key.clone(), v);
                }
                Ok(None) => {
                    let required = tool
                        .spec
                        .parameters
                        .get("required")
                        .and_then(Value::as_array)
                        .is_some_and(|r| r.iter().any(|x| x == key.as_str()));
                    if required {
                        return Err(self.step_error(
                            i,
                            ToolError::invalid_arguments(format!(
                                "from.{key}: {} selected nothing, and '{}' requires '{key}'",
                                sel.as_str(),
                                step.tool
                            )),
                            Some(&Value::Object(out)),
                            item_of(cx),
                        ));
                    }
                }
                Err(e) => {
                    return Err(self.step_error(
                        i,
                        ToolError::invalid_arguments(format!("from.{key}: {e}")),
                        Some(&Value::Object(out)),
                        item_of(cx),
                    ));
                }
            }
        }
        Ok(Value::Object(out))
    }

    async fn call_step(
        &self,
        i: usize,
        tool: &PlannedTool,
        args: Value,
        item: Option<usize>,
    ) -> Result<Value, ToolError> {
        let step = &self.recipe.steps[i];
        if let Some(budget) = self.cx.budget
            && budget.calls.fetch_add(1, Ordering::Relaxed) >= MAX_CALLS_PER_RUN
        {
            return Err(self.step_error(
                i,
                ToolError::new(
                    ErrorKind::TooLarge,
                    format!(
                        "the run made {MAX_CALLS_PER_RUN} calls of tools, the most one run may make; nothing more was called"
                    ),
                ),
                Some(&args),
                item,
            ));
        }
        self.emit(RecipeEvent::StepStarted {
            recipe: self.name.to_owned(),
            step: step.id.clone(),
            tool: step.tool.clone(),
            item,
        });
        let started = Instant::now();
        let cx = CallContext {
            depth: self.cx.depth + 1,
            ..self.cx
        };
        let outcome = call_planned(cx, tool, args.clone()).await;
        let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.emit(RecipeEvent::StepFinished {
            recipe: self.name.to_owned(),
            step: step.id.clone(),
            tool: step.tool.clone(),
            item,
            ok: outcome.is_ok(),
            ms,
            error: outcome.error().map(|e| e.message.clone()),
        });
        let value = outcome
            .into_result()
            .map_err(|e| self.step_error(i, e, Some(&args), item))?;
        // A tool's result counts as it arrives (a nested recipe's are its steps'): a run
        // past the bound stops at the result that passed it.
        if tool.nested.is_none()
            && let Some(budget) = self.cx.budget
        {
            let size = json_len(&value);
            if budget.bytes.fetch_add(size, Ordering::Relaxed) + size > MAX_RESULT_BYTES {
                return Err(self.step_error(
                    i,
                    ToolError::new(
                        ErrorKind::TooLarge,
                        format!(
                            "the steps' results pass {MAX_RESULT_BYTES} bytes; select less from each step"
                        ),
                    ),
                    None,
                    item,
                ));
            }
        }
        Ok(value)
    }

    /// The error of step `i`: its kind kept, the message and details naming the step, its
    /// tool, the item and the arguments it got.
    fn step_error(
        &self,
        i: usize,
        inner: ToolError,
        args: Option<&Value>,
        item: Option<usize>,
    ) -> ToolError {
        let step = &self.recipe.steps[i];
        let which = item.map(|k| format!(", item {k}")).unwrap_or_default();
        ToolError::new(
            inner.kind,
            format!(
                "step '{}' ({}{which}) of recipe '{}' failed: {}",
                step.id, step.tool, self.name, inner.message
            ),
        )
        .with_details(json!({
            "recipe": self.name,
            "step": step.id,
            "tool": step.tool,
            "item": item,
            "arguments": args,
            "error": serde_json::to_value(&inner).unwrap_or(Value::Null),
        }))
    }
}

impl Composite for RecipeRunner<'_> {
    fn plan(&self) -> BoxFuture<'_, Result<Vec<PlannedStep>, ToolError>> {
        let plan = self.plan_steps();
        Box::pin(async move { plan })
    }

    fn run(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(self.run_steps(args))
    }
}

/// A recipe that is not in the catalog: its [`RecipeRunner`], whose plan refuses, rather
/// than asks for, an approval the caller did not give.
struct DraftRunner<'a> {
    runner: RecipeRunner<'a>,
    /// The caller approved the run.
    approved: bool,
    /// The draft's own spec asks for approval.
    requires_approval: bool,
}

impl DraftRunner<'_> {
    /// `plan`, or the refusal of a run that needs an approval it was not given.
    fn gate(&self, plan: Vec<PlannedStep>) -> Result<Vec<PlannedStep>, ToolError> {
        let needing: Vec<&PlannedStep> = plan.iter().filter(|s| s.requires_approval).collect();
        if self.approved || (!self.requires_approval && needing.is_empty()) {
            return Ok(plan);
        }
        let name = self.runner.name;
        let why = if needing.is_empty() {
            format!("recipe '{name}' requires approval")
        } else {
            let steps: Vec<String> = needing
                .iter()
                .map(|s| format!("'{}' ({})", s.step, s.tool))
                .collect();
            let plural = if steps.len() == 1 { "" } else { "s" };
            format!(
                "step{plural} {} of recipe '{name}' require{} approval",
                steps.join(", "),
                if steps.len() == 1 { "s" } else { "" }
            )
        };
        Err(ToolError::new(
            ErrorKind::ApprovalRefused,
            format!(
                "{why}, and a recipe that is not saved runs only with its caller's approval: approve this run to try it; nothing ran"
            ),
        )
        .with_details(json!({
            "tool": name,
            "steps": needing.iter().map(|s| s.step.as_str()).collect::<Vec<_>>(),
        })))
    }
}

impl Composite for DraftRunner<'_> {
    fn plan(&self) -> BoxFuture<'_, Result<Vec<PlannedStep>, ToolError>> {
        let plan = self.runner.plan_steps().and_then(|plan| self.gate(plan));
        Box::pin(async move { plan })
    }

    fn run(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        Box::pin(self.runner.run_steps(args))
    }
}

impl crate::Toolbox {
    /// Runs a recipe that is not in the catalog, a draft (the console's recipe builder
    /// tries one before it is saved), as [`crate::Call::observed`] runs a stored
    /// one: `spec` and `block` as a put of it would store them (check them first with
    /// [`toolscout_catalog::CatalogView::check_recipe`]), the arguments validated
    /// against `spec`, the steps' tools found in this toolbox's view, each step an
    /// invoker call of its own, `progress` told how they go. Nothing is counted in the
    /// catalog's usage but the steps' calls: the draft has no id there.
    ///
    /// **Approval.** The invoker's approver is never asked about a draft: an approver
    /// knows tools by name, and a draft's name is whatever its author typed (a
    /// pre-approved tool's, say). A draft that requires approval, or one of whose steps
    /// does, runs only when `approved` (its caller asked the person, who may approve);
    /// otherwise the outcome is an `approval_refused` error naming those steps, and
    /// nothing runs.
    pub async fn call_recipe_draft(
        &self,
        spec: ToolSpec,
        block: &Value,
        args: Value,
        approved: bool,
        progress: Option<Progress>,
    ) -> Outcome {
        let name = spec.name.to_string();
        let requires_approval = spec.metadata.requires_approval;
        let invocable = match InvokableTool::from_parts(spec, ToolType::Recipe, block) {
            Ok(t) => t,
            Err(e) => {
                return Outcome::Err(ToolError::new(
                    ErrorKind::Misconfigured,
                    format!("recipe '{name}' cannot run: {e}"),
                ));
            }
        };
        let Implementation::Recipe(recipe) = &invocable.implementation else {
            return Outcome::Err(ToolError::new(
                ErrorKind::Misconfigured,
                format!("tool '{name}' is not a recipe"),
            ));
        };
        let cx = self.call_context(progress.as_ref());
        let draft = DraftRunner {
            runner: RecipeRunner::new(cx, &name, recipe),
            approved,
            requires_approval,
        };
        // Approved here: `DraftRunner::gate` has decided, before anything runs.
        cx.invoker
            .invoke_composite(&invocable, args, true, &draft)
            .await
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Pending,
    Running,
    Done,
    Skipped,
    Failed,
}

fn item_of(cx: &Value) -> Option<usize> {
    cx.get("index")
        .and_then(Value::as_u64)
        .and_then(|k| usize::try_from(k).ok())
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Whether `tool` is a recipe.
pub(crate) fn is_recipe(tool: &Tool) -> bool {
    tool.tool_type == ToolType::Recipe
}

/// The length of `value` as JSON, without writing it anywhere.
fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Finds the tool of every step of `recipe` (the recipe `name`, `depth` recipes deep) in
/// the caller's view, and those of nested recipes' steps, as exact tool versions.
fn find_steps(
    cx: CallContext<'_>,
    name: &str,
    recipe: &Recipe,
    depth: usize,
) -> Result<Vec<PlannedTool>, ToolError> {
    if depth >= MAX_DEPTH {
        return Err(ToolError::new(
            ErrorKind::DepthLimit,
            format!(
                "recipe '{name}' runs inside {MAX_DEPTH} recipes already; recipes nest at most {MAX_DEPTH} deep"
            ),
        ));
    }
    let view = cx.catalog.view(cx.viewer);
    let mut out = Vec::with_capacity(recipe.steps.len());
    for step in &recipe.steps {
        let found = view
            .name_holder(&step.tool)
            .and_then(|(id, _)| view.tool(id).ok());
        let Some(tool) = found else {
            return Err(ToolError::new(
                ErrorKind::UnknownTool,
                format!(
                    "step '{}' of recipe '{name}' calls '{}', which is no tool of the catalog; nothing ran",
                    step.id, step.tool
                ),
            )
            .with_details(json!({"step": step.id, "tool": step.tool})));
        };
        if let Some(reason) = &tool.disabled_reason {
            return Err(ToolError::new(
                ErrorKind::Disabled,
                format!(
                    "step '{}' of recipe '{name}' calls '{}', which cannot be called: {reason}; nothing ran",
                    step.id, step.tool
                ),
            )
            .with_details(json!({"step": step.id, "tool": step.tool, "reason": reason.to_string()})));
        }
        let invocable = invocable_of(cx, &tool).map_err(|e| {
            ToolError::new(
                ErrorKind::Disabled,
                format!(
                    "step '{}' of recipe '{name}' calls '{}', which cannot be called: {e}; nothing ran",
                    step.id, step.tool
                ),
            )
        })?;
        let nested = match &invocable.implementation {
            Implementation::Recipe(inner) => Some(NestedPlan {
                steps: Arc::new(find_steps(cx, tool.spec.name.as_str(), inner, depth + 1)?),
                recipe: (**inner).clone(),
            }),
            _ => None,
        };
        out.push(PlannedTool {
            tool: Arc::new(tool),
            invocable,
            nested,
        });
    }
    Ok(out)
}

/// What a plan runs, step by step, as its approval lists it: `prefix` before a nested
/// recipe's step ids (`outer.inner`).
fn list_steps(
    cx: CallContext<'_>,
    recipe: &Recipe,
    plan: &[PlannedTool],
    prefix: &str,
    out: &mut Vec<PlannedStep>,
) {
    for (step, planned) in recipe.steps.iter().zip(plan) {
        let id = format!("{prefix}{}", step.id);
        out.push(PlannedStep {
            step: id.clone(),
            tool: step.tool.clone(),
            qualified: planned.invocable.qualified.clone(),
            requires_approval: cx.invoker.requires_approval(&planned.invocable),
        });
        if let Some(nested) = &planned.nested {
            list_steps(cx, &nested.recipe, &nested.steps, &format!("{id}."), out);
        }
    }
}
