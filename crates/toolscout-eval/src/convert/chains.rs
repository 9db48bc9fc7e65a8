//! Chains: the tasks whose answer feeds one call's result into another call's arguments
//! (Seal-Tools writes such an argument as `API_call_1`, the result of the answer's
//! second call), and for each chain a **recipe** that runs it as one call
//! ([`toolscout_spec::recipe`]). `eval agent --recipes` offers them, to measure what
//! a recipe changes for a request that needs a chain.
//!
//! A recipe is made from the chain's calls alone, never from the answer's values: its
//! steps call the chain's tools in the answer's order; an argument the answer fills
//! with an earlier call's result is taken from that step's result (the evaluation's
//! stub answers `{"status", "result", "arguments"}`, so `$.steps.<id>.result`); every
//! other parameter of a step becomes a parameter of the recipe, with the step tool's
//! schema (required when the step tool requires it). A chain whose fed parameter is not
//! text is skipped (the stub's result is text), and said so.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use toolscout_spec::name::slug_from_name;

use super::{read_jsonl, write_lines};
use crate::{Error, Result};

/// Chain tasks and their recipes.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Chains {
    /// One tool body a recipe, as `tool put` takes it.
    pub recipes: Vec<Map<String, Value>>,
    /// The tasks that need a chain, as they were.
    pub tasks: Vec<Value>,
    /// What was left out, and why.
    pub skipped: Vec<String>,
}

impl Chains {
    /// Writes `recipes.jsonl` and `chain-queries.jsonl` into `dir`; returns their paths.
    pub fn write(&self, dir: &Path) -> Result<(PathBuf, PathBuf)> {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            path: dir.to_owned(),
            source,
        })?;
        let recipes = dir.join("recipes.jsonl");
        let tasks = dir.join("chain-queries.jsonl");
        let bodies: Vec<Value> = self.recipes.iter().cloned().map(Value::Object).collect();
        write_lines(&recipes, &bodies)?;
        write_lines(&tasks, &self.tasks)?;
        Ok((recipes, tasks))
    }
}

/// Reads converted tools and tasks (`tools.jsonl` and a tasks file with `calls`) and
/// returns the chain tasks with a recipe for each distinct chain.
pub fn chains(tools: &Path, tasks: &Path) -> Result<Chains> {
    let mut by_name: BTreeMap<String, Value> = BTreeMap::new();
    for (_, tool) in read_jsonl(tools)? {
        if let Some(name) = tool.get("name").and_then(Value::as_str) {
            by_name.insert(name.to_owned(), tool.clone());
        }
    }
    let mut out = Chains::default();
    let mut made = HashSet::new();
    for (line, task) in read_jsonl(tasks)? {
        let Some(calls) = task.get("calls").and_then(Value::as_array) else {
            continue;
        };
        let mut found = false;
        for chain in components(calls) {
            match recipe(calls, &chain, &by_name) {
                Ok(body) => {
                    found = true;
                    let name = body["name"].as_str().unwrap_or_default().to_owned();
                    if made.insert(name) {
                        out.recipes.push(body);
                    }
                }
                Err(why) => out
                    .skipped
                    .push(format!("{} line {line}: {why}", tasks.display())),
            }
        }
        if found {
            out.tasks.push(task);
        }
    }
    Ok(out)
}

/// The index of the call whose result `value` stands for (`API_call_2` → 2).
fn fed_by(value: &Value) -> Option<usize> {
    value.as_str()?.strip_prefix("API_call_")?.parse().ok()
}

/// The groups of calls linked by fed arguments, of two calls or more, each in call order.
fn components(calls: &[Value]) -> Vec<Vec<usize>> {
    let n = calls.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for (j, call) in calls.iter().enumerate() {
        let Some(args) = call.get("arguments").and_then(Value::as_object) else {
            continue;
        };
        for v in args.values() {
            if let Some(k) = fed_by(v).filter(|&k| k < n && k != j) {
                let (a, b) = (root(&mut parent, j), root(&mut parent, k));
                parent[a] = b;
            }
        }
    }
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..n {
        let r = root(&mut parent, i);
        groups.entry(r).or_default().push(i);
    }
    groups.into_values().filter(|g| g.len() > 1).collect()
}

/// The recipe of one chain.
fn recipe(
    calls: &[Value],
    chain: &[usize],
    tools: &BTreeMap<String, Value>,
) -> std::result::Result<Map<String, Value>, String> {
    let mut ids: BTreeMap<usize, String> = BTreeMap::new();
    let mut taken = HashSet::new();
    for &i in chain {
        let tool = calls[i]["tool"].as_str().ok_or("a call without a tool")?;
        let mut id: String = tool
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        if !id.starts_with(|c: char| c.is_ascii_alphabetic()) {
            id.insert(0, 's');
        }
        id.truncate(48);
        let mut unique = id.clone();
        let mut n = 2;
        while !taken.insert(unique.clone()) {
            unique = format!("{id}_{n}");
            n += 1;
        }
        ids.insert(i, unique);
    }
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut steps = Vec::new();
    let mut names = Vec::new();
    let mut parts = Vec::new();
    for &i in chain {
        let tool = calls[i]["tool"].as_str().unwrap_or_default();
        let spec = tools
            .get(tool)
            .ok_or(format!("no tool '{tool}' in the tools"))?;
        let schema = &spec["parameters"];
        let props = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let needs: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let given = calls[i]["arguments"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let mut from = Map::new();
        let mut fed = Vec::new();
        for (param, param_schema) in &props {
            if let Some(k) = given
                .get(param)
                .and_then(fed_by)
                .filter(|k| ids.contains_key(k))
            {
                if param_schema["type"] != "string" {
                    return Err(format!(
                        "{tool}.{param} is fed by a call's result but takes {}, not text",
                        param_schema["type"]
                    ));
                }
                from.insert(param.clone(), json!(format!("$.steps.{}.result", ids[&k])));
                fed.push(format!(
                    "{param} from {}",
                    calls[k]["tool"].as_str().unwrap_or_default()
                ));
                continue;
            }
            // The recipe's own parameter: its name, or the step's id with it when two
            // steps share a name.
            let own = if properties.contains_key(param) {
                format!("{}_{param}", ids[&i])
            } else {
                param.clone()
            };
            properties.insert(own.clone(), param_schema.clone());
            if needs.contains(&param.as_str()) {
                required.push(Value::String(own.clone()));
            }
            from.insert(param.clone(), json!(format!("$.args.{own}")));
        }
        steps.push(json!({"id": ids[&i], "tool": tool, "from": from}));
        names.push(tool.to_owned());
        let description = spec["description"]
            .as_str()
            .unwrap_or_default()
            .trim_end_matches('.');
        parts.push(if fed.is_empty() {
            format!("{tool}: {description}.")
        } else {
            format!("then {tool} ({}): {description}.", fed.join(", "))
        });
    }
    let mut name = names.join("_then_");
    name.truncate(64);
    let mut body = Map::new();
    body.insert("slug".to_owned(), json!(slug_from_name(&name)));
    body.insert("version".to_owned(), json!("1"));
    body.insert("name".to_owned(), json!(name));
    body.insert(
        "description".to_owned(),
        json!(format!(
            "Runs {} as one call. {}",
            names.join(", then "),
            parts.join(" ")
        )),
    );
    body.insert("type".to_owned(), json!("recipe"));
    body.insert(
        "argSchema".to_owned(),
        json!({"type": "object", "properties": properties, "required": required}),
    );
    body.insert("impl".to_owned(), json!({"steps": steps}));
    Ok(body)
}
