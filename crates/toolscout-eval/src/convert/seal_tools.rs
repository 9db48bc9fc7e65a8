//! Seal-Tools (Wu et al. 2024, <https://github.com/fairyshine/Seal-Tools>): 4,076 tools,
//! each in a field (`Science/Geology`), and tasks that need one to six of them, most of
//! them several ("…and the disease resistance… After that, check the timber resources…").

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use toolscout_spec::name::sanitize_name;

use super::{Converted, read_jsonl};
use crate::{Error, Result};

/// Converts the split `split` (`dev`, `test_in_domain`, `test_out_domain`) of the
/// Seal-Tools data in `dir`: a clone of the repository, or its `Seal-Tools_Dataset`
/// folder.
///
/// Each tool's field becomes its bundle (`bundle`), its parameter types (`str`, `int`,
/// `float`, `bool`…) JSON Schema types. Each task's `expected` tools are the distinct
/// tools its answer calls, in order; its `offered` tools are the same (what an oracle is
/// handed), and `calls` its answer's calls with their arguments (a value such as
/// `API_call_0` stands for an earlier call's result). A task that calls a tool the
/// catalog lacks is skipped, and said so in [`Converted::skipped`].
///
/// ```no_run
/// let converted = toolscout_eval::convert::seal_tools("Seal-Tools".as_ref(), "dev")?;
/// converted.write("data/seal-tools".as_ref())?;
/// # Ok::<(), toolscout_eval::Error>(())
/// ```
pub fn seal_tools(dir: &Path, split: &str) -> Result<Converted> {
    let data = dataset_dir(dir);
    let tools_path = data.join("tool.jsonl");
    let mut converted = Converted::default();
    let mut names = HashSet::new();
    for (line, raw) in read_jsonl(&tools_path)? {
        let tool = tool(&raw).map_err(|reason| Error::Line {
            path: tools_path.clone(),
            line,
            reason,
        })?;
        let name = tool["name"].as_str().unwrap_or_default().to_owned();
        if !names.insert(name.clone()) {
            converted
                .skipped
                .push(format!("tool.jsonl line {line}: {name} again"));
            continue;
        }
        converted.tools.push(tool);
    }
    let tasks_path = data.join(format!("{split}.jsonl"));
    for (line, raw) in read_jsonl(&tasks_path)? {
        match task(&raw, split, &names) {
            Ok(task) => converted.tasks.push(task),
            Err(reason) => converted
                .skipped
                .push(format!("{split}.jsonl line {line}: {reason}")),
        }
    }
    Ok(converted)
}

/// `dir` itself when it holds `tool.jsonl`, else its `Seal-Tools_Dataset` folder.
fn dataset_dir(dir: &Path) -> PathBuf {
    if dir.join("tool.jsonl").is_file() {
        dir.to_owned()
    } else {
        dir.join("Seal-Tools_Dataset")
    }
}

fn tool(raw: &Value) -> std::result::Result<Value, String> {
    let name = raw
        .get("api_name")
        .and_then(Value::as_str)
        .ok_or("\"api_name\" is missing")?;
    let description = raw
        .get("api_description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut properties = Map::new();
    if let Some(params) = raw.get("parameters").and_then(Value::as_object) {
        for (param, p) in params {
            let mut schema = Map::new();
            if let Some(t) = p.get("type").and_then(Value::as_str).and_then(json_type) {
                schema.insert("type".to_owned(), json!(t));
            }
            if let Some(d) = p.get("description").and_then(Value::as_str) {
                schema.insert("description".to_owned(), json!(d));
            }
            properties.insert(param.clone(), Value::Object(schema));
        }
    }
    let required: Vec<&str> = raw
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|r| properties.contains_key(*r))
        .collect();
    let mut out = json!({
        "name": sanitize_name(name),
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required},
        "source": "seal-tools",
    });
    if let Some(field) = raw.get("field").and_then(Value::as_str) {
        out["bundle"] = json!(field);
    }
    Ok(out)
}

/// The JSON Schema type of a Seal-Tools parameter type; `None` leaves it untyped.
fn json_type(t: &str) -> Option<&'static str> {
    Some(match t.to_ascii_lowercase().as_str() {
        "str" | "string" => "string",
        "int" | "integer" => "integer",
        "float" | "number" | "double" => "number",
        "bool" | "boolean" => "boolean",
        "list" | "array" => "array",
        "dict" | "object" => "object",
        _ => return None,
    })
}

fn task(raw: &Value, split: &str, names: &HashSet<String>) -> std::result::Result<Value, String> {
    let id = raw.get("id").and_then(Value::as_str).unwrap_or_default();
    let query = raw
        .get("query")
        .and_then(Value::as_str)
        .ok_or("\"query\" is missing")?;
    let mut expected: Vec<String> = Vec::new();
    let mut calls = Vec::new();
    for call in raw
        .get("calling")
        .and_then(Value::as_array)
        .ok_or("\"calling\" is missing")?
    {
        let api = call
            .get("api")
            .and_then(Value::as_str)
            .ok_or("a call has no \"api\"")?;
        let name = sanitize_name(api);
        if !names.contains(&name) {
            return Err(format!("{id} calls {name}, which no tool is"));
        }
        if !expected.contains(&name) {
            expected.push(name.clone());
        }
        calls.push(json!({
            "tool": name,
            "arguments": call.get("parameters").cloned().unwrap_or_else(|| json!({})),
        }));
    }
    if expected.is_empty() {
        return Err(format!("{id} calls no tool"));
    }
    Ok(json!({
        "id": id,
        "query": query,
        "expected": expected,
        "offered": expected,
        "calls": calls,
        "source": format!("seal-tools/{split}"),
    }))
}
