//! Recipes: tools made of other tools' calls, authored once and run as one call.
//!
//! A recipe is a tool of type `recipe` (see
//! [`ToolType::Recipe`](crate::adapters::tool_file::ToolType::Recipe)) whose `impl`
//! block lists **steps**. Each step calls one catalog tool with arguments built from the
//! recipe's own arguments and the results of earlier steps; steps that do not depend on
//! each other run in parallel; the recipe's result is a selection of the steps' results.
//!
//! ```json
//! {
//!   "steps": [
//!     {"id": "now", "tool": "clock", "args": {"action": "now", "time_zone": "Asia/Tokyo"}},
//!     {"id": "offset", "tool": "json_query", "args": {"path": "$.utc_offset"},
//!      "from": {"value": "$.steps.now"}}
//!   ],
//!   "result": "$.steps.offset[0]"
//! }
//! ```
//!
//! | key of a step | what |
//! |---|---|
//! | `id` | the step's name: a letter or `_`, then letters, digits or `_` (at most 64), unique in the recipe |
//! | `tool` | the name of the catalog tool it calls |
//! | `args` | literal values of the tool's parameters |
//! | `from` | parameters whose value is a [`Selection`] |
//! | `forEach` | a selection of a list: the step runs once per item (at most [`MAX_FOR_EACH`], [`FOR_EACH_PARALLEL`] at a time), `$.item` is the item and `$.index` its position; its result is the list of results |
//! | `when` | a selection: the step runs only when it selects a truthy value (not `null`, `false`, `0`, `""`, `[]` or `{}`); a skipped step's dependents are skipped too |
//! | `after` | ids of steps this one waits for, besides those its selections read |
//!
//! A **selection** is an RFC 9535 JSONPath over the context
//! `{"args": <the recipe's arguments>, "steps": {<id>: <result>}, "item": …, "index": …}`
//! that starts at `$.args`, `$.steps.<id>`, `$.item` or `$.index`, or the object
//! `{"path": "…", "parse": "json"}`, which parses the selected text as JSON (an HTTP
//! body). A *singular* path (names and indexes only: `$.steps.now.time`,
//! `$.steps.list[0]`) gives the one value it finds, or nothing, and then the parameter is
//! left out; any other path (`[*]`, `..`, filters, slices) gives the list of what it
//! matches. The recipe's `result` is a selection, an object of name → selection, or, when
//! it is left out, `$.steps` (every step's result by id).
//!
//! [`Recipe::parse`] checks the block on its own (shapes, ids, paths, references, cycles,
//! [`MAX_STEPS`]); [`Recipe::check_tools`] checks it against the tools it calls (every
//! tool exists, parameters exist, required ones are given, literal and selected values
//! have the parameter's type where it can be told, every argument a selection reads is a
//! parameter the recipe declares, nested recipes at most [`MAX_DEPTH`] deep and never
//! calling themselves).
//!
//! ```
//! use serde_json::json;
//! use toolscout_spec::recipe::Recipe;
//!
//! let recipe = Recipe::parse(&json!({
//!     "steps": [
//!         {"id": "a", "tool": "clock", "args": {"action": "now"}},
//!         {"id": "b", "tool": "json_query", "args": {"path": "$.time"}, "from": {"value": "$.steps.a"}}
//!     ]
//! }))?;
//! assert_eq!(recipe.dependencies(1), vec![0]);
//!
//! let cycle = Recipe::parse(&json!({"steps": [
//!     {"id": "a", "tool": "t", "after": ["b"]},
//!     {"id": "b", "tool": "t", "from": {"x": "$.steps.a"}}
//! ]})).unwrap_err();
//! assert_eq!(cycle.to_string(), "the steps a, b wait for each other (a cycle)");
//! # Ok::<(), toolscout_spec::recipe::RecipeError>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::jsonpath::BoundedPath;

/// Most steps in one recipe.
pub const MAX_STEPS: usize = 32;
/// Most items a `forEach` step runs for.
pub const MAX_FOR_EACH: usize = 100;
/// How many items of a `forEach` step run at a time.
pub const FOR_EACH_PARALLEL: usize = 4;
/// Deepest nesting of recipes that call recipes (a recipe that calls only plain tools
/// has depth 1).
pub const MAX_DEPTH: usize = 4;
/// The whole run's timeout when the recipe's metadata gives none, in seconds.
pub const DEFAULT_TIMEOUT_SECONDS: u32 = 120;
/// Most bytes of step results one run keeps (as JSON).
pub const MAX_RESULT_BYTES: usize = 8 << 20;
/// Most calls of tools one run of a recipe makes, its nested recipes' included (each
/// item of a `forEach` is one call). A recipe that could make more is refused when it is
/// put ([`Recipe::most_calls`]), and a run that gets there anyway (a nested recipe
/// changed since) stops.
///
/// **Rationale:** four nested 100-item `forEach` levels made 10⁸ calls from one
/// request; one run is one request's worth of work.
pub const MAX_CALLS_PER_RUN: usize = 10_000;
/// Longest step id.
pub const MAX_ID_CHARS: usize = 64;
/// Longest `impl` block of a recipe, in bytes of JSON.
pub const MAX_BLOCK_BYTES: usize = 256 << 10;

/// What is wrong with a recipe, and where: the step (by id, or by position when its id
/// is not readable) and the field. It reads `step 'b': from.time: …`, or the message
/// alone for the recipe as a whole; whoever shows it names the recipe
/// (`recipe 'tokyo_offset': step 'b': …`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", where_(.step))]
pub struct RecipeError {
    /// The step, as `'id'` or `steps[i]`; `None` for the recipe as a whole.
    pub step: Option<String>,
    /// What is wrong, naming the field.
    pub message: String,
}

fn where_(step: &Option<String>) -> String {
    match step {
        Some(s) => format!("step {s}: "),
        None => String::new(),
    }
}

impl RecipeError {
    fn recipe(message: impl Into<String>) -> Self {
        RecipeError {
            step: None,
            message: message.into(),
        }
    }

    fn step(step: &str, message: impl Into<String>) -> Self {
        RecipeError {
            step: Some(format!("'{step}'")),
            message: message.into(),
        }
    }
}

type Result<T, E = RecipeError> = std::result::Result<T, E>;

/// Where a selection starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Root {
    /// `$.args`: the recipe's arguments.
    Args,
    /// `$.steps.<id>`: one step's result.
    Step(String),
    /// `$.steps`: every step's result (the recipe's `result` only).
    Steps,
    /// `$.item`: the current item of a `forEach` step.
    Item,
    /// `$.index`: the current item's position.
    Index,
}

/// A JSONPath over the run's context, checked and parsed (see the [module](self)).
#[derive(Debug, Clone)]
pub struct Selection {
    path: BoundedPath,
    root: Root,
    /// The names and indexes after the root, when the path is singular.
    rest: Option<Vec<Segment>>,
    parse_json: bool,
}

/// One segment of a singular path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// `.name` or `['name']`.
    Name(String),
    /// `[3]` (or `[-1]`).
    Index(i64),
}

impl PartialEq for Selection {
    fn eq(&self, other: &Self) -> bool {
        self.path.as_str() == other.path.as_str() && self.parse_json == other.parse_json
    }
}

impl Serialize for Selection {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl Selection {
    /// Reads a selection: a path, or `{"path": …, "parse": "json"}`. `field` names it in
    /// errors.
    pub fn read(value: &Value, field: &str) -> std::result::Result<Selection, String> {
        match value {
            Value::String(text) => {
                Selection::parse(text, false).map_err(|e| format!("{field}: {e}"))
            }
            Value::Object(obj) => {
                for key in obj.keys() {
                    if key != "path" && key != "parse" {
                        return Err(format!(
                            "{field}: unknown key \"{key}\" (a selection is a path, or {{\"path\", \"parse\": \"json\"}})"
                        ));
                    }
                }
                let Some(Value::String(text)) = obj.get("path") else {
                    return Err(format!("{field}: \"path\" must be a JSONPath string"));
                };
                let parse_json = match obj.get("parse") {
                    None => false,
                    Some(Value::String(p)) if p == "json" => true,
                    Some(other) => {
                        return Err(format!(
                            "{field}: \"parse\" can only be \"json\", found {other}"
                        ));
                    }
                };
                Selection::parse(text, parse_json).map_err(|e| format!("{field}: {e}"))
            }
            other => Err(format!(
                "{field}: expected a JSONPath string such as \"$.args.city\", found {}",
                short(other)
            )),
        }
    }

    /// Parses `text`, a path that starts at `$.args`, `$.steps`, `$.item` or `$.index`.
    pub fn parse(text: &str, parse_json: bool) -> std::result::Result<Selection, String> {
        let path = BoundedPath::parse(text).map_err(|e| format!("{e} in \"{text}\""))?;
        let (root, rest) = split_root(text)?;
        Ok(Selection {
            path,
            root,
            rest: singular_segments(rest),
            parse_json,
        })
    }

    /// The path as written.
    pub fn as_str(&self) -> &str {
        self.path.as_str()
    }

    /// Where it starts.
    pub fn root(&self) -> &Root {
        &self.root
    }

    /// Whether it gives one value (names and indexes only) rather than a list.
    pub fn is_singular(&self) -> bool {
        self.rest.is_some()
    }

    /// The names and indexes after the root, for a singular path.
    pub fn segments(&self) -> Option<&[Segment]> {
        self.rest.as_deref()
    }

    /// Whether the selected text is parsed as JSON.
    pub fn parses_json(&self) -> bool {
        self.parse_json
    }

    /// The selection as written in a recipe.
    pub fn to_json(&self) -> Value {
        if self.parse_json {
            json!({"path": self.as_str(), "parse": "json"})
        } else {
            Value::String(self.as_str().to_owned())
        }
    }

    /// What it selects in `context`: `Ok(None)` when a singular path finds nothing.
    /// Errors say why the query or the parse failed.
    pub fn select(&self, context: &Value) -> std::result::Result<Option<Value>, String> {
        let found = self
            .path
            .query(context)
            .map_err(|e| format!("{} could not run: {e}", self.as_str()))?;
        let value = if self.is_singular() {
            match found.first() {
                Some(v) => (*v).clone(),
                None => return Ok(None),
            }
        } else {
            Value::Array(found.into_iter().cloned().collect())
        };
        if !self.parse_json {
            return Ok(Some(value));
        }
        match value {
            Value::String(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
                format!(
                    "{} selected text that is not JSON ({e}): {}",
                    self.as_str(),
                    short(&Value::String(text.clone()))
                )
            }),
            other => Err(format!(
                "{} selected {}, not text to parse as JSON",
                self.as_str(),
                short(&other)
            )),
        }
    }
}

/// The root of `text` and what follows it.
fn split_root(text: &str) -> std::result::Result<(Root, &str), String> {
    const EXPECTED: &str = "a selection starts at $.args, $.steps.<step id>, $.item or $.index";
    let Some(after) = text.strip_prefix("$.") else {
        return Err(format!("{EXPECTED}, not \"{text}\""));
    };
    let (name, rest) = split_ident(after);
    let root = match name {
        "args" => Root::Args,
        "item" => Root::Item,
        "index" => Root::Index,
        "steps" => match rest.strip_prefix('.') {
            Some(after) => {
                let (id, rest) = split_ident(after);
                if id.is_empty() {
                    return Err(format!("{EXPECTED}, not \"{text}\""));
                }
                return check_rest(text, rest).map(|()| (Root::Step(id.to_owned()), rest));
            }
            None => Root::Steps,
        },
        _ => return Err(format!("{EXPECTED}, not \"{text}\"")),
    };
    check_rest(text, rest).map(|()| (root, rest))
}

fn check_rest(text: &str, rest: &str) -> std::result::Result<(), String> {
    if rest.is_empty() || rest.starts_with('.') || rest.starts_with('[') {
        Ok(())
    } else {
        Err(format!(
            "cannot read \"{text}\": expected '.' or '[' after the root"
        ))
    }
}

fn split_ident(s: &str) -> (&str, &str) {
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(s.len(), |(i, _)| i);
    s.split_at(end)
}

/// The segments of a path made only of `.name`, `['name']` and `[n]`; `None` otherwise.
fn singular_segments(mut rest: &str) -> Option<Vec<Segment>> {
    let mut out = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let (name, r) = split_ident(after);
            if name.is_empty() {
                return None; // `..`, `.*`
            }
            out.push(Segment::Name(name.to_owned()));
            rest = r;
        } else if let Some(inner) = rest.strip_prefix('[') {
            let close = inner.find(']')?;
            let body = inner[..close].trim();
            if let Some(q) = body.chars().next().filter(|c| *c == '\'' || *c == '"') {
                let name = body.strip_prefix(q)?.strip_suffix(q)?;
                if name.contains(['\\', '\'', '"']) {
                    return None;
                }
                out.push(Segment::Name(name.to_owned()));
            } else {
                out.push(Segment::Index(body.parse().ok()?));
            }
            rest = &inner[close + 1..];
        } else {
            return None;
        }
    }
    Some(out)
}

/// One step, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// Its id.
    pub id: String,
    /// The tool it calls.
    pub tool: String,
    /// Literal arguments.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub args: Map<String, Value>,
    /// Arguments selected from the context.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub from: BTreeMap<String, Selection>,
    /// The list it runs once per item of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub for_each: Option<Selection>,
    /// The condition it runs under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<Selection>,
    /// Steps it waits for besides those its selections read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
}

impl Step {
    /// Every selection of the step, with the field it is in.
    pub fn selections(&self) -> impl Iterator<Item = (String, &Selection)> {
        self.from
            .iter()
            .map(|(k, s)| (format!("from.{k}"), s))
            .chain(self.for_each.iter().map(|s| ("forEach".to_owned(), s)))
            .chain(self.when.iter().map(|s| ("when".to_owned(), s)))
    }
}

/// What a recipe returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RecipeResult {
    /// One selection.
    One(Selection),
    /// An object of name → selection.
    Object(BTreeMap<String, Selection>),
}

/// A recipe's `impl` block, checked on its own (see the [module](self)).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recipe {
    /// The steps, as written.
    pub steps: Vec<Step>,
    /// What the recipe returns; `None`: `$.steps`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<RecipeResult>,
    #[serde(skip)]
    deps: Vec<Vec<usize>>,
}

impl Recipe {
    /// Reads and checks an `impl` block: its shape, the steps' ids, tools, arguments and
    /// paths, what each selection refers to, and that no steps wait for each other.
    /// The error names the step and the field.
    pub fn parse(block: &Value) -> Result<Recipe> {
        let bytes = serde_json::to_string(block).map_or(usize::MAX, |s| s.len());
        if bytes > MAX_BLOCK_BYTES {
            return Err(RecipeError::recipe(format!(
                "the block is {bytes} bytes, at most {MAX_BLOCK_BYTES} are allowed"
            )));
        }
        let Some(obj) = block.as_object() else {
            return Err(RecipeError::recipe(format!(
                "expected an object with \"steps\", found {}",
                short(block)
            )));
        };
        for key in obj.keys() {
            if key != "steps" && key != "result" {
                return Err(RecipeError::recipe(format!(
                    "unknown key \"{key}\" (a recipe has \"steps\" and \"result\")"
                )));
            }
        }
        let Some(Value::Array(raw)) = obj.get("steps") else {
            return Err(RecipeError::recipe(
                "\"steps\" must be a list of steps, each {\"id\", \"tool\", …}",
            ));
        };
        if raw.is_empty() {
            return Err(RecipeError::recipe(
                "\"steps\" is empty: a recipe calls at least one tool",
            ));
        }
        if raw.len() > MAX_STEPS {
            return Err(RecipeError::recipe(format!(
                "{} steps, at most {MAX_STEPS} are allowed",
                raw.len()
            )));
        }
        let mut steps = Vec::with_capacity(raw.len());
        for (i, value) in raw.iter().enumerate() {
            steps.push(read_step(i, value)?);
        }
        let result = match obj.get("result") {
            None | Some(Value::Null) => None,
            Some(Value::Object(map)) if !map.contains_key("path") => {
                let mut out = BTreeMap::new();
                for (k, v) in map {
                    let s =
                        Selection::read(v, &format!("result.{k}")).map_err(RecipeError::recipe)?;
                    out.insert(k.clone(), s);
                }
                Some(RecipeResult::Object(out))
            }
            Some(v) => Some(RecipeResult::One(
                Selection::read(v, "result").map_err(RecipeError::recipe)?,
            )),
        };
        let mut recipe = Recipe {
            steps,
            result,
            deps: Vec::new(),
        };
        recipe.link()?;
        Ok(recipe)
    }

    /// Resolves references and finds cycles.
    fn link(&mut self) -> Result<()> {
        let mut index = BTreeMap::new();
        for (i, s) in self.steps.iter().enumerate() {
            if index.insert(s.id.clone(), i).is_some() {
                return Err(RecipeError::step(
                    &s.id,
                    "this id is used by another step too",
                ));
            }
        }
        let mut deps = Vec::with_capacity(self.steps.len());
        for s in &self.steps {
            let mut mine = BTreeSet::new();
            for (field, sel) in s.selections() {
                match sel.root() {
                    Root::Step(id) => match index.get(id) {
                        Some(&j) if id == &s.id => {
                            let _ = j;
                            return Err(RecipeError::step(
                                &s.id,
                                format!("{field} reads the step's own result"),
                            ));
                        }
                        Some(&j) => {
                            mine.insert(j);
                        }
                        None => {
                            return Err(RecipeError::step(
                                &s.id,
                                format!(
                                    "{field} reads step '{id}', which the recipe does not have{}",
                                    known(&index)
                                ),
                            ));
                        }
                    },
                    Root::Steps => {
                        return Err(RecipeError::step(
                            &s.id,
                            format!("{field}: select one step's result, $.steps.<id>"),
                        ));
                    }
                    Root::Item | Root::Index if s.for_each.is_none() => {
                        return Err(RecipeError::step(
                            &s.id,
                            format!(
                                "{field} reads {}, which only a forEach step has",
                                sel.as_str()
                            ),
                        ));
                    }
                    Root::Item | Root::Index if field == "forEach" || field == "when" => {
                        return Err(RecipeError::step(
                            &s.id,
                            format!(
                                "{field} is read once for the step, before any item: it cannot read {}",
                                sel.as_str()
                            ),
                        ));
                    }
                    _ => {}
                }
            }
            for a in &s.after {
                match index.get(a) {
                    Some(_) if a == &s.id => {
                        return Err(RecipeError::step(&s.id, "\"after\" names the step itself"));
                    }
                    Some(&j) => {
                        mine.insert(j);
                    }
                    None => {
                        return Err(RecipeError::step(
                            &s.id,
                            format!(
                                "\"after\" names step '{a}', which the recipe does not have{}",
                                known(&index)
                            ),
                        ));
                    }
                }
            }
            deps.push(mine.into_iter().collect::<Vec<_>>());
        }
        if let Some(result) = &self.result {
            for (field, sel) in result.selections() {
                match sel.root() {
                    Root::Step(id) if !index.contains_key(id) => {
                        return Err(RecipeError::recipe(format!(
                            "{field} reads step '{id}', which the recipe does not have{}",
                            known(&index)
                        )));
                    }
                    Root::Item | Root::Index => {
                        return Err(RecipeError::recipe(format!(
                            "{field} reads {}, which only a forEach step has",
                            sel.as_str()
                        )));
                    }
                    _ => {}
                }
            }
        }
        self.deps = deps;
        if let Some(cycle) = self.cycle() {
            let names: Vec<&str> = cycle.iter().map(|&i| self.steps[i].id.as_str()).collect();
            return Err(RecipeError::recipe(format!(
                "the steps {} wait for each other (a cycle)",
                names.join(", ")
            )));
        }
        Ok(())
    }

    /// The steps on a cycle, in step order, if any (Kahn's algorithm: what is left).
    fn cycle(&self) -> Option<Vec<usize>> {
        let n = self.steps.len();
        let mut waiting: Vec<usize> = self.deps.iter().map(Vec::len).collect();
        let mut ready: Vec<usize> = (0..n).filter(|&i| waiting[i] == 0).collect();
        let mut done = vec![false; n];
        while let Some(i) = ready.pop() {
            done[i] = true;
            for (j, d) in self.deps.iter().enumerate() {
                if d.contains(&i) {
                    waiting[j] -= 1;
                    if waiting[j] == 0 {
                        ready.push(j);
                    }
                }
            }
        }
        let left: Vec<usize> = (0..n).filter(|&i| !done[i]).collect();
        (!left.is_empty()).then_some(left)
    }

    /// The positions of the steps step `i` waits for, ascending.
    pub fn dependencies(&self, i: usize) -> Vec<usize> {
        self.deps.get(i).cloned().unwrap_or_default()
    }

    /// The position of the step with this id.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.steps.iter().position(|s| s.id == id)
    }

    /// The names of the tools the steps call, each once, in step order.
    pub fn tools(&self) -> Vec<&str> {
        let mut seen = BTreeSet::new();
        self.steps
            .iter()
            .map(|s| s.tool.as_str())
            .filter(|t| seen.insert(*t))
            .collect()
    }

    /// What level 3 shows of the steps.
    pub fn outline(&self) -> Vec<StepOutline> {
        self.steps
            .iter()
            .enumerate()
            .map(|(i, s)| StepOutline {
                id: s.id.clone(),
                tool: s.tool.clone(),
                after: self.deps[i]
                    .iter()
                    .map(|&j| self.steps[j].id.clone())
                    .collect(),
                for_each: s.for_each.as_ref().map(|x| x.as_str().to_owned()),
                when: s.when.as_ref().map(|x| x.as_str().to_owned()),
            })
            .collect()
    }

    /// The block as written in a `tool.json` (what [`Recipe::parse`] reads back).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Checks the recipe against the tools it calls; `name` is the recipe's own name and
    /// `resolve` finds a tool by name (see [`StepTool`]). Each error names the step.
    pub fn check_tools(
        &self,
        name: &str,
        arg_schema: &Value,
        resolve: &mut dyn FnMut(&str) -> Option<StepTool>,
    ) -> Result<()> {
        self.check_result_args(arg_schema)?;
        let mut path = vec![name.to_owned()];
        self.check_nested(&mut path, resolve)?;
        for (i, step) in self.steps.iter().enumerate() {
            let Some(tool) = resolve(&step.tool) else {
                return Err(RecipeError::step(
                    &step.id,
                    format!(
                        "calls '{}', which no tool of the catalog is named",
                        step.tool
                    ),
                ));
            };
            self.check_step(i, step, &tool, arg_schema, resolve)?;
        }
        let calls = self.step_calls(arg_schema, resolve);
        let total = calls
            .iter()
            .fold(0u64, |sum, (_, n)| sum.saturating_add(*n));
        if total > MAX_CALLS_PER_RUN as u64
            && let Some((i, (fan, n))) = calls.iter().enumerate().max_by_key(|(_, (_, n))| *n)
        {
            let step = &self.steps[i];
            let inner = (n / fan).saturating_sub(1);
            let how = match (step.for_each.is_some(), inner) {
                (true, 0) => format!("a forEach of up to {fan} items"),
                (true, _) => format!(
                    "a forEach of up to {fan} items, each a run of '{}' of up to {inner} calls",
                    step.tool
                ),
                (false, _) => format!("a run of '{}' of up to {inner} calls", step.tool),
            };
            return Err(RecipeError::step(
                &step.id,
                format!(
                    "one run could make {total} tool calls, more than the {MAX_CALLS_PER_RUN} a run may make ({n} here: {how}); give the list a forEach goes over a smaller maxItems, or split the recipe"
                ),
            ));
        }
        Ok(())
    }

    /// The most calls of tools one run of this recipe can make, its nested recipes'
    /// included: each step once, a `forEach` step once per item of at most the
    /// `maxItems` its list's schema declares (else [`MAX_FOR_EACH`]), a nested recipe
    /// once plus its own most. `arg_schema` is the recipe's parameters; `resolve` as in
    /// [`Recipe::check_tools`] (a step whose tool it does not find counts once).
    pub fn most_calls(
        &self,
        arg_schema: &Value,
        resolve: &mut dyn FnMut(&str) -> Option<StepTool>,
    ) -> u64 {
        self.step_calls(arg_schema, resolve)
            .iter()
            .fold(0u64, |sum, (_, n)| sum.saturating_add(*n))
    }

    /// For each step, its fan-out (items of its `forEach`, or 1) and the most calls it
    /// makes (see [`Recipe::most_calls`]). Nesting is bounded by [`MAX_DEPTH`] here too,
    /// so that a cycle (which `check_nested` refuses first) cannot recurse forever.
    fn step_calls(
        &self,
        arg_schema: &Value,
        resolve: &mut dyn FnMut(&str) -> Option<StepTool>,
    ) -> Vec<(u64, u64)> {
        self.step_calls_at(arg_schema, resolve, 1)
    }

    fn step_calls_at(
        &self,
        arg_schema: &Value,
        resolve: &mut dyn FnMut(&str) -> Option<StepTool>,
        depth: usize,
    ) -> Vec<(u64, u64)> {
        let most = MAX_FOR_EACH as u64;
        (0..self.steps.len())
            .map(|i| {
                let step = &self.steps[i];
                let fan = match &step.for_each {
                    None => 1,
                    Some(each) => self
                        .selected_schema(i, each, arg_schema, resolve)
                        .and_then(|s| s.get("maxItems").and_then(Value::as_u64))
                        .map_or(most, |m| m.min(most)),
                };
                let inner = match resolve(&step.tool) {
                    Some(StepTool {
                        recipe: Some(inner),
                        parameters,
                        ..
                    }) if depth < MAX_DEPTH => inner
                        .step_calls_at(&parameters, resolve, depth + 1)
                        .iter()
                        .fold(0u64, |sum, (_, n)| sum.saturating_add(*n)),
                    _ => 0,
                };
                (fan.max(1), fan.saturating_mul(inner.saturating_add(1)))
            })
            .collect()
    }

    /// The arguments the recipe's `result` reads are parameters it declares (see
    /// [`check_declared`]).
    fn check_result_args(&self, arg_schema: &Value) -> Result<()> {
        let Some(result) = &self.result else {
            return Ok(());
        };
        for (field, sel) in result.selections() {
            if let Some(why) = undeclared(sel, arg_schema, None) {
                return Err(RecipeError::recipe(format!("{field}: {why}")));
            }
        }
        Ok(())
    }

    /// Nested recipes: no recipe on the way calls itself, at most [`MAX_DEPTH`] deep.
    fn check_nested(
        &self,
        path: &mut Vec<String>,
        resolve: &mut dyn FnMut(&str) -> Option<StepTool>,
    ) -> Result<()> {
        for step in &self.steps {
            if path.contains(&step.tool) {
                let mut chain = path.clone();
                chain.push(step.tool.clone());
                return Err(RecipeError::step(
                    &step.id,
                    format!(
                        "calls '{}', which is a recipe on the way here ({}): recipes may not call themselves",
                        step.tool,
                        chain.join(" → ")
                    ),
                ));
            }
            let Some(StepTool {
                recipe: Some(inner),
                ..
            }) = resolve(&step.tool)
            else {
                continue;
            };
            if path.len() >= MAX_DEPTH {
                let mut chain = path.clone();
                chain.push(step.tool.clone());
                return Err(RecipeError::step(
                    &step.id,
                    format!(
                        "recipes nest more than {MAX_DEPTH} deep ({})",
                        chain.join(" → ")
                    ),
                ));
            }
            path.push(step.tool.clone());
            let nested = inner.check_nested(path, resolve);
            path.pop();
            nested?;
        }
        Ok(())
    }

    fn check_step(
        &self,
        i: usize,
        step: &Step,
        tool: &StepTool,
        arg_schema: &Value,
        resolve: &mut dyn FnMut(&str) -> Option<StepTool>,
    ) -> Result<()> {
        check_declared(step, tool, arg_schema)?;
        let props = tool.parameters.get("properties").and_then(Value::as_object);
        let open = !matches!(
            tool.parameters.get("additionalProperties"),
            Some(Value::Bool(false))
        ) && props.is_none_or(Map::is_empty);
        let names = || -> String {
            props.map_or_else(
                || "(none)".to_owned(),
                |p| p.keys().cloned().collect::<Vec<_>>().join(", "),
            )
        };
        for (key, value) in &step.args {
            if step.from.contains_key(key) {
                return Err(RecipeError::step(
                    &step.id,
                    format!("parameter '{key}' is in both \"args\" and \"from\"; give it once"),
                ));
            }
            match props.and_then(|p| p.get(key)) {
                Some(schema) => {
                    if let Some(why) = literal_mismatch(value, schema) {
                        return Err(RecipeError::step(
                            &step.id,
                            format!("args.{key}: {why} for '{}'", step.tool),
                        ));
                    }
                }
                None if open => {}
                None => {
                    return Err(RecipeError::step(
                        &step.id,
                        format!(
                            "args.{key}: '{}' has no parameter '{key}'; its parameters are: {}",
                            step.tool,
                            names()
                        ),
                    ));
                }
            }
        }
        for (key, sel) in &step.from {
            let Some(schema) = props.and_then(|p| p.get(key)) else {
                if open {
                    continue;
                }
                return Err(RecipeError::step(
                    &step.id,
                    format!(
                        "from.{key}: '{}' has no parameter '{key}'; its parameters are: {}",
                        step.tool,
                        names()
                    ),
                ));
            };
            let want = types_of(schema);
            if want.is_empty() {
                continue;
            }
            if let Some(have) = self.selected_types(i, sel, arg_schema, resolve)
                && !compatible(&have, &want)
            {
                return Err(RecipeError::step(
                    &step.id,
                    format!(
                        "from.{key}: {} gives {}, but '{}' takes {} for '{key}'",
                        sel.as_str(),
                        have.iter().cloned().collect::<Vec<_>>().join(" or "),
                        step.tool,
                        want.iter().cloned().collect::<Vec<_>>().join(" or "),
                    ),
                ));
            }
        }
        let required = tool
            .parameters
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect::<Vec<_>>())
            .unwrap_or_default();
        for r in required {
            let has_default = props
                .and_then(|p| p.get(r))
                .is_some_and(|s| s.get("default").is_some());
            if !step.args.contains_key(r) && !step.from.contains_key(r) && !has_default {
                return Err(RecipeError::step(
                    &step.id,
                    format!(
                        "'{}' requires '{r}'; give it in \"args\" or \"from\"",
                        step.tool
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The JSON types a selection can give, when they can be told.
    fn selected_types(
        &self,
        i: usize,
        sel: &Selection,
        arg_schema: &Value,
        resolve: &mut dyn FnMut(&str) -> Option<StepTool>,
    ) -> Option<BTreeSet<String>> {
        if sel.parses_json() {
            return None;
        }
        if !sel.is_singular() {
            return Some(BTreeSet::from(["array".to_owned()]));
        }
        let types = types_of(&self.selected_schema(i, sel, arg_schema, resolve)?);
        (!types.is_empty()).then_some(types)
    }

    /// The schema a singular selection of step `i` lands on, when it can be told.
    fn selected_schema(
        &self,
        i: usize,
        sel: &Selection,
        arg_schema: &Value,
        resolve: &mut dyn FnMut(&str) -> Option<StepTool>,
    ) -> Option<Value> {
        let segments = sel.segments()?;
        let root = match sel.root() {
            Root::Args => arg_schema.clone(),
            Root::Index => json!({"type": "integer"}),
            Root::Step(id) => {
                let s = &self.steps[self.position(id)?];
                let output = resolve(&s.tool)?.output_schema?;
                if s.for_each.is_some() {
                    json!({"type": "array", "items": output})
                } else {
                    output
                }
            }
            // An item of the step's list (its `forEach` never reads `$.item` itself).
            Root::Item => {
                let each = self.steps.get(i)?.for_each.as_ref()?;
                self.selected_schema(i, each, arg_schema, resolve)?
                    .get("items")?
                    .clone()
            }
            Root::Steps => return None,
        };
        walk(&root, segments).cloned()
    }
}

impl RecipeResult {
    /// Every selection, with the field it is in.
    pub fn selections(&self) -> Vec<(String, &Selection)> {
        match self {
            RecipeResult::One(s) => vec![("result".to_owned(), s)],
            RecipeResult::Object(m) => m.iter().map(|(k, s)| (format!("result.{k}"), s)).collect(),
        }
    }
}

/// What [`Recipe::check_tools`] needs to know of a tool a step calls.
#[derive(Debug, Clone, Default)]
pub struct StepTool {
    /// Its parameters' JSON Schema.
    pub parameters: Value,
    /// Its result's JSON Schema, when it has one.
    pub output_schema: Option<Value>,
    /// Its steps, when it is a recipe.
    pub recipe: Option<Recipe>,
}

/// What level 3 shows of one step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepOutline {
    /// The step's id.
    pub id: String,
    /// The tool it calls.
    pub tool: String,
    /// The steps it waits for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
    /// The list it runs once per item of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_each: Option<String>,
    /// The condition it runs under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
}

impl fmt::Display for StepOutline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.id, self.tool)?;
        if let Some(e) = &self.for_each {
            write!(f, " for each of {e}")?;
        }
        if let Some(w) = &self.when {
            write!(f, " when {w}")?;
        }
        if !self.after.is_empty() {
            write!(f, " (after {})", self.after.join(", "))?;
        }
        Ok(())
    }
}

/// Every argument `step` reads (`$.args.<name>…`) is a parameter of `arg_schema`, the
/// recipe's own: one it does not declare is never given by a caller who reads the
/// recipe's level 3, so the step would run without it, silently.
///
/// **Rationale:** a recipe that declared `tz` and read `$.args.zone` answered
/// `{"ok": true, "value": "+00:00"}` to `--tz Europe/Paris`: a wrong answer, no error
/// (#63). A schema that allows more properties (`"additionalProperties": true` or a
/// schema) lets a step read any.
fn check_declared(step: &Step, tool: &StepTool, arg_schema: &Value) -> Result<()> {
    for (field, sel) in step.selections() {
        // The type the hint suggests: what the step's parameter takes, a list for a
        // forEach.
        let wanted = match field.strip_prefix("from.") {
            Some(key) => tool
                .parameters
                .pointer(&format!(
                    "/properties/{}",
                    key.replace('~', "~0").replace('/', "~1")
                ))
                .map(types_of)
                .and_then(|t| (t.len() == 1).then(|| t.into_iter().next()).flatten()),
            None if field == "forEach" => Some("array".to_owned()),
            None => None,
        };
        // Only `$.args.<name>` itself takes the parameter's type.
        let whole = sel.segments().is_some_and(|s| s.len() == 1);
        let wanted = wanted.filter(|_| whole);
        if let Some(why) = undeclared(sel, arg_schema, wanted.as_deref()) {
            return Err(RecipeError::step(&step.id, format!("{field}: {why}")));
        }
    }
    Ok(())
}

/// Why `sel` reads an argument `arg_schema` does not declare, with how to declare it
/// (as `wanted`, a JSON type, when it is known); `None` when it reads no argument, a
/// declared one, or the whole of `$.args`.
fn undeclared(sel: &Selection, arg_schema: &Value, wanted: Option<&str>) -> Option<String> {
    if *sel.root() != Root::Args {
        return None;
    }
    let name = arg_name(sel)?;
    let props = arg_schema.get("properties").and_then(Value::as_object);
    if props.is_some_and(|p| p.contains_key(&name)) {
        return None;
    }
    if matches!(
        arg_schema.get("additionalProperties"),
        Some(Value::Bool(true) | Value::Object(_))
    ) {
        return None;
    }
    let declared: Vec<&str> =
        props.map_or_else(Vec::new, |p| p.keys().map(String::as_str).collect());
    let has = if declared.is_empty() {
        "it declares none".to_owned()
    } else {
        format!("it declares {}", declared.join(", "))
    };
    let fix = match crate::suggest::did_you_mean(&crate::suggest::closest_names(
        &name,
        declared.iter().copied(),
    )) {
        Some(hint) => hint,
        None => {
            let schema = match wanted {
                Some(t) => json!({ "type": t }),
                None => json!({}),
            };
            format!(
                "declare it in the recipe's \"argSchema\": \"properties\": {}",
                json!({ name.as_str(): schema })
            )
        }
    };
    Some(format!(
        "{} reads the argument '{name}', which is not a parameter of the recipe ({has}); {fix}",
        sel.as_str()
    ))
}

/// The argument a selection under `$.args` starts with: `zone` of `$.args.zone.name` or
/// `$.args['zone'][0]`; `None` for `$.args` itself and paths that do not name one
/// (`$.args[*]`, `$.args..x`).
fn arg_name(sel: &Selection) -> Option<String> {
    if let Some(segments) = sel.segments() {
        return match segments.first()? {
            Segment::Name(name) => Some(name.clone()),
            Segment::Index(_) => None,
        };
    }
    let rest = sel.as_str().strip_prefix("$.args")?;
    let after = rest.strip_prefix('.')?;
    let (name, _) = split_ident(after);
    (!name.is_empty()).then(|| name.to_owned())
}

fn read_step(i: usize, value: &Value) -> Result<Step> {
    let at = |id: Option<&str>| id.map_or_else(|| format!("steps[{i}]"), |id| format!("'{id}'"));
    let Some(obj) = value.as_object() else {
        return Err(RecipeError {
            step: Some(at(None)),
            message: format!(
                "expected an object {{\"id\", \"tool\", …}}, found {}",
                short(value)
            ),
        });
    };
    let id = match obj.get("id") {
        Some(Value::String(id)) => id.as_str(),
        _ => {
            return Err(RecipeError {
                step: Some(at(None)),
                message: "\"id\" must be a string such as \"fetch\"".to_owned(),
            });
        }
    };
    let fail = |message: String| RecipeError {
        step: Some(if valid_id(id) { at(Some(id)) } else { at(None) }),
        message,
    };
    if !valid_id(id) {
        return Err(fail(format!(
            "id \"{}\" must be a letter or '_', then letters, digits or '_', at most {MAX_ID_CHARS}",
            id.chars().take(80).collect::<String>()
        )));
    }
    for key in obj.keys() {
        if !["id", "tool", "args", "from", "forEach", "when", "after"].contains(&key.as_str()) {
            return Err(fail(format!(
                "unknown key \"{key}\" (a step has id, tool, args, from, forEach, when, after)"
            )));
        }
    }
    let tool = match obj.get("tool") {
        Some(Value::String(t)) if crate::name::validate_name(t).is_ok() => t.clone(),
        Some(Value::String(t)) => {
            return Err(fail(format!(
                "\"tool\": {}",
                crate::name::validate_name(t)
                    .err()
                    .map_or_else(String::new, |e| e.to_string())
            )));
        }
        _ => {
            return Err(fail(
                "\"tool\" must name the catalog tool the step calls".to_owned(),
            ));
        }
    };
    let args = match obj.get("args") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(fail(format!(
                "\"args\" must be an object of parameter → value, found {}",
                short(other)
            )));
        }
    };
    let mut from = BTreeMap::new();
    match obj.get("from") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                from.insert(
                    k.clone(),
                    Selection::read(v, &format!("from.{k}")).map_err(&fail)?,
                );
            }
        }
        Some(other) => {
            return Err(fail(format!(
                "\"from\" must be an object of parameter → selection, found {}",
                short(other)
            )));
        }
    }
    let optional = |key: &str| -> Result<Option<Selection>> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => Selection::read(v, key).map(Some).map_err(&fail),
        }
    };
    let for_each = optional("forEach")?;
    let when = optional("when")?;
    let after = match obj.get("after") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                other => Err(fail(format!(
                    "\"after\" lists step ids, found {}",
                    short(other)
                ))),
            })
            .collect::<Result<_>>()?,
        Some(other) => {
            return Err(fail(format!(
                "\"after\" must be a list of step ids, found {}",
                short(other)
            )));
        }
    };
    Ok(Step {
        id: id.to_owned(),
        tool,
        args,
        from,
        for_each,
        when,
        after,
    })
}

fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && id.len() <= MAX_ID_CHARS
}

fn known(index: &BTreeMap<String, usize>) -> String {
    let ids: Vec<&str> = index.keys().map(String::as_str).collect();
    format!(" (its steps: {})", ids.join(", "))
}

/// A value as an error quotes it: whole when short, else its start.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 60 {
        text
    } else {
        format!("{}…", text.chars().take(60).collect::<String>())
    }
}

/// The JSON types a schema allows, by its `type`, `enum` or `const`; empty: any.
fn types_of(schema: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    match schema.get("type") {
        Some(Value::String(t)) => {
            out.insert(t.clone());
        }
        Some(Value::Array(ts)) => {
            out.extend(ts.iter().filter_map(Value::as_str).map(str::to_owned))
        }
        _ => {
            let values = schema
                .get("enum")
                .and_then(Value::as_array)
                .cloned()
                .or_else(|| schema.get("const").map(|c| vec![c.clone()]));
            for v in values.unwrap_or_default() {
                out.insert(type_name(&v).to_owned());
            }
            for key in ["anyOf", "oneOf"] {
                if let Some(alts) = schema.get(key).and_then(Value::as_array) {
                    let mut all = BTreeSet::new();
                    for a in alts {
                        let t = types_of(a);
                        if t.is_empty() {
                            return BTreeSet::new();
                        }
                        all.extend(t);
                    }
                    out.extend(all);
                }
            }
        }
    }
    out
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether some value of the types `have` fits the types `want`.
fn compatible(have: &BTreeSet<String>, want: &BTreeSet<String>) -> bool {
    have.iter().any(|h| {
        want.contains(h)
            || (h == "integer" && want.contains("number"))
            || (h == "number" && want.contains("integer"))
    })
}

/// Why a literal does not fit a parameter's schema (its types and `enum`), if it does not.
fn literal_mismatch(value: &Value, schema: &Value) -> Option<String> {
    let want = types_of(schema);
    let have = type_name(value);
    let fits = want.is_empty()
        || want.contains(have)
        || (have == "integer" && want.contains("number"))
        || (have == "number"
            && want.contains("integer")
            && value.as_f64().is_some_and(|f| f.fract() == 0.0));
    if !fits {
        return Some(format!(
            "{} is {have}, but the parameter takes {}",
            short(value),
            want.into_iter().collect::<Vec<_>>().join(" or ")
        ));
    }
    if let Some(allowed) = allowed_values(schema)
        && !allowed.contains(value)
    {
        return Some(format!(
            "{} is not one of {}",
            short(value),
            short(&Value::Array(allowed))
        ));
    }
    None
}

/// The values a schema allows when it lists them: `enum`, `const`, or a `oneOf`/`anyOf`
/// of those.
fn allowed_values(schema: &Value) -> Option<Vec<Value>> {
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        return Some(e.clone());
    }
    if let Some(c) = schema.get("const") {
        return Some(vec![c.clone()]);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(alts) = schema.get(key).and_then(Value::as_array) {
            let mut out = Vec::new();
            for a in alts {
                out.extend(allowed_values(a)?);
            }
            return Some(out);
        }
    }
    None
}

/// The sub-schema a singular path lands on (properties by name, `items` by index).
fn walk<'s>(mut schema: &'s Value, segments: &[Segment]) -> Option<&'s Value> {
    for seg in segments {
        schema = match seg {
            Segment::Name(n) => schema.get("properties")?.get(n)?,
            Segment::Index(_) => schema.get("items")?,
        };
    }
    Some(schema)
}

/// Whether a selected value counts as true for `when`: not `null`, `false`, `0`, `""`,
/// `[]` or `{}`.
pub fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null | Value::Bool(false)) => false,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
        Some(Value::Bool(true)) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(block: Value) -> String {
        match Recipe::parse(&block) {
            Ok(_) => panic!("accepted {block}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn selections_know_their_root_and_whether_they_are_singular() {
        let s = Selection::parse("$.steps.fetch.body['a b'][0]", false).unwrap();
        assert_eq!(s.root(), &Root::Step("fetch".to_owned()));
        assert_eq!(
            s.segments().unwrap(),
            &[
                Segment::Name("body".to_owned()),
                Segment::Name("a b".to_owned()),
                Segment::Index(0)
            ]
        );
        for many in [
            "$.args.list[*]",
            "$.steps.a..x",
            "$.steps.a[?@.x]",
            "$.steps.a[0:2]",
            "$.args.a.*",
        ] {
            assert!(
                !Selection::parse(many, false).unwrap().is_singular(),
                "{many}"
            );
        }
        assert_eq!(
            Selection::parse("$.steps", false).unwrap().root(),
            &Root::Steps
        );
        for bad in [
            "$",
            "$.x",
            "args.city",
            "$.stepsx",
            "$['args']",
            "$.steps.",
            "$.args$",
        ] {
            assert!(Selection::parse(bad, false).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_selection_selects_one_value_or_a_list_and_parses_json() {
        let cx = json!({"args": {"n": [1, 2]}, "steps": {"a": {"body": "{\"k\": 3}"}}});
        let one = Selection::parse("$.args.n[1]", false).unwrap();
        assert_eq!(one.select(&cx).unwrap(), Some(json!(2)));
        let none = Selection::parse("$.args.m", false).unwrap();
        assert_eq!(none.select(&cx).unwrap(), None);
        let many = Selection::parse("$.args.n[*]", false).unwrap();
        assert_eq!(many.select(&cx).unwrap(), Some(json!([1, 2])));
        let parsed =
            Selection::read(&json!({"path": "$.steps.a.body", "parse": "json"}), "x").unwrap();
        assert_eq!(parsed.select(&cx).unwrap(), Some(json!({"k": 3})));
        let not_text = Selection::read(&json!({"path": "$.args.n", "parse": "json"}), "x").unwrap();
        assert!(
            not_text
                .select(&cx)
                .unwrap_err()
                .contains("not text to parse as JSON")
        );
    }

    #[test]
    fn bad_blocks_are_refused_naming_the_step_and_field() {
        assert_eq!(
            err(json!({"steps": []})),
            "\"steps\" is empty: a recipe calls at least one tool"
        );
        assert_eq!(
            err(json!({"steps": [{"id": "a", "tool": "t"}, {"id": "a", "tool": "t"}]})),
            "step 'a': this id is used by another step too"
        );
        assert_eq!(
            err(json!({"steps": [{"id": "a", "tool": "t", "from": {"x": "$.steps.b"}}]})),
            "step 'a': from.x reads step 'b', which the recipe does not have (its steps: a)"
        );
        assert_eq!(
            err(json!({"steps": [{"id": "a", "tool": "t", "from": {"x": "$.item"}}]})),
            "step 'a': from.x reads $.item, which only a forEach step has"
        );
        assert_eq!(
            err(json!({"steps": [{"id": "1a", "tool": "t"}]})),
            "step steps[0]: id \"1a\" must be a letter or '_', then letters, digits or '_', at most 64"
        );
        assert_eq!(
            err(json!({"steps": [{"id": "a", "tool": "t", "form": {}}]})),
            "step 'a': unknown key \"form\" (a step has id, tool, args, from, forEach, when, after)"
        );
        assert!(
            err(json!({"steps": [{"id": "a", "tool": "t", "from": {"x": "$.args[?"}}]}))
                .starts_with("step 'a': from.x: ")
        );
        assert_eq!(
            err(json!({"steps": [{"id": "a", "tool": "t"}], "result": "$.steps.b"})),
            "result reads step 'b', which the recipe does not have (its steps: a)"
        );
        let many: Vec<Value> = (0..33)
            .map(|i| json!({"id": format!("s{i}"), "tool": "t"}))
            .collect();
        assert_eq!(
            err(json!({"steps": many})),
            "33 steps, at most 32 are allowed"
        );
    }

    #[test]
    fn checks_against_the_tools_name_the_step() {
        let recipe = Recipe::parse(&json!({"steps": [
            {"id": "a", "tool": "num", "from": {"n": "$.args.text"}},
        ]}))
        .unwrap();
        let mut tools = |name: &str| {
            (name == "num").then(|| StepTool {
                parameters: json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
                ..StepTool::default()
            })
        };
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        let e = recipe.check_tools("r", &schema, &mut tools).unwrap_err();
        assert_eq!(
            e.to_string(),
            "step 'a': from.n: $.args.text gives string, but 'num' takes integer for 'n'"
        );
        let literal =
            Recipe::parse(&json!({"steps": [{"id": "a", "tool": "num", "args": {"n": "x"}}]}))
                .unwrap();
        assert_eq!(
            literal
                .check_tools("r", &schema, &mut tools)
                .unwrap_err()
                .to_string(),
            "step 'a': args.n: \"x\" is string, but the parameter takes integer for 'num'"
        );
        let missing = Recipe::parse(&json!({"steps": [{"id": "a", "tool": "num"}]})).unwrap();
        assert_eq!(
            missing
                .check_tools("r", &schema, &mut tools)
                .unwrap_err()
                .to_string(),
            "step 'a': 'num' requires 'n'; give it in \"args\" or \"from\""
        );
        let items = Recipe::parse(&json!({"steps": [
            {"id": "a", "tool": "num", "forEach": "$.args.words", "from": {"n": "$.item"}}
        ]}))
        .unwrap();
        let words = json!({"type": "object", "properties": {"words": {"type": "array", "items": {"type": "string"}}}});
        assert_eq!(
            items
                .check_tools("r", &words, &mut tools)
                .unwrap_err()
                .to_string(),
            "step 'a': from.n: $.item gives string, but 'num' takes integer for 'n'"
        );
        let index = Recipe::parse(&json!({"steps": [
            {"id": "a", "tool": "num", "forEach": "$.args.words", "from": {"n": "$.index"}}
        ]}))
        .unwrap();
        index.check_tools("r", &words, &mut tools).unwrap();
        let unknown = Recipe::parse(&json!({"steps": [{"id": "a", "tool": "nope"}]})).unwrap();
        assert_eq!(
            unknown
                .check_tools("r", &schema, &mut tools)
                .unwrap_err()
                .to_string(),
            "step 'a': calls 'nope', which no tool of the catalog is named"
        );
    }

    /// Regression (#63): a step that read `$.args.zone` of a recipe declaring `tz` was
    /// put, and ran without it.
    #[test]
    fn an_argument_the_recipe_does_not_declare_is_refused_naming_the_step() {
        let mut tools = |name: &str| {
            (name == "clock").then(|| StepTool {
                parameters: json!({"type": "object", "properties": {"time_zone": {"type": "string"}, "n": {"type": "integer"}}}),
                ..StepTool::default()
            })
        };
        let check =
            |block: Value, schema: Value, tools: &mut dyn FnMut(&str) -> Option<StepTool>| {
                match Recipe::parse(&block)
                    .unwrap()
                    .check_tools("r", &schema, tools)
                {
                    Ok(()) => "ok".to_owned(),
                    Err(e) => e.to_string(),
                }
            };
        let tz = json!({"type": "object", "properties": {"tz": {"type": "string"}}});
        let step = |from: Value| json!({"steps": [{"id": "now", "tool": "clock", "from": from}]});
        let mut out = String::new();
        for (block, schema) in [
            (step(json!({"time_zone": "$.args.zone"})), tz.clone()),
            (
                step(json!({"time_zone": "$.args.city_tz"})),
                json!({"type": "object"}),
            ),
            (step(json!({"time_zone": "$.args.tzz"})), tz.clone()),
            (
                step(json!({"time_zone": "$.args['zone'].name"})),
                tz.clone(),
            ),
            (
                json!({"steps": [{"id": "each", "tool": "clock", "forEach": "$.args.zones", "from": {"time_zone": "$.item"}}]}),
                tz.clone(),
            ),
            (
                json!({"steps": [{"id": "now", "tool": "clock", "from": {"time_zone": "$.args.tz"}}], "result": {"asked": "$.args.zone"}}),
                tz.clone(),
            ),
            // Declared, the whole of $.args, or any property allowed: accepted.
            (step(json!({"time_zone": "$.args.tz"})), tz.clone()),
            (
                step(json!({"time_zone": "$.args"})),
                json!({"type": "object"}),
            ),
            (
                step(json!({"time_zone": "$.args.zone"})),
                json!({"type": "object", "additionalProperties": true}),
            ),
        ] {
            out.push_str(&check(block, schema, &mut tools));
            out.push('\n');
        }
        insta::assert_snapshot!(out, @r#"
        step 'now': from.time_zone: $.args.zone reads the argument 'zone', which is not a parameter of the recipe (it declares tz); declare it in the recipe's "argSchema": "properties": {"zone":{"type":"string"}}
        step 'now': from.time_zone: $.args.city_tz reads the argument 'city_tz', which is not a parameter of the recipe (it declares none); declare it in the recipe's "argSchema": "properties": {"city_tz":{"type":"string"}}
        step 'now': from.time_zone: $.args.tzz reads the argument 'tzz', which is not a parameter of the recipe (it declares tz); did you mean: tz?
        step 'now': from.time_zone: $.args['zone'].name reads the argument 'zone', which is not a parameter of the recipe (it declares tz); declare it in the recipe's "argSchema": "properties": {"zone":{}}
        step 'each': forEach: $.args.zones reads the argument 'zones', which is not a parameter of the recipe (it declares tz); declare it in the recipe's "argSchema": "properties": {"zones":{"type":"array"}}
        result.asked: $.args.zone reads the argument 'zone', which is not a parameter of the recipe (it declares tz); declare it in the recipe's "argSchema": "properties": {"zone":{}}
        ok
        step 'now': from.time_zone: $.args gives object, but 'clock' takes string for 'time_zone'
        ok
        "#);
    }

    #[test]
    fn recipes_that_call_themselves_or_nest_too_deep_are_refused() {
        let outer = Recipe::parse(&json!({"steps": [{"id": "a", "tool": "inner"}]})).unwrap();
        let inner = Recipe::parse(&json!({"steps": [{"id": "b", "tool": "outer"}]})).unwrap();
        let mut tools = |name: &str| match name {
            "inner" => Some(StepTool {
                parameters: json!({"type": "object"}),
                output_schema: None,
                recipe: Some(inner.clone()),
            }),
            "outer" => Some(StepTool {
                parameters: json!({"type": "object"}),
                output_schema: None,
                recipe: Some(outer.clone()),
            }),
            _ => None,
        };
        let e = outer
            .check_tools("outer", &json!({}), &mut tools)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "step 'b': calls 'outer', which is a recipe on the way here (outer → inner → outer): recipes may not call themselves"
        );
    }
}
