//! MCP-Bench (Wang et al. 2025, <https://github.com/Accenture/mcp-bench>): 28 real MCP
//! servers and 104 tasks written against them, 48 of which span two or three servers.
//! A task is told to the agent as a person would say it (`fuzzy_description`: "I'm
//! working on a project about why melanoma patients … become resistant to treatment"),
//! which names no tool; the task's concrete plan (`task_description`) names each tool it
//! uses ("Retrieve gene annotation for BRAF with BioMCP:gene_getter").

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::{Map, Value, json};
use toolscout_spec::name::sanitize_name;

use super::Converted;
use crate::{Error, Result};

/// The task files of an MCP-Bench clone, and the `source` each of their tasks gets.
const TASK_FILES: &[(&str, &str)] = &[
    (
        "tasks/mcpbench_tasks_single_runner_format.json",
        "mcp-bench/single",
    ),
    (
        "tasks/mcpbench_tasks_multi_2server_runner_format.json",
        "mcp-bench/2server",
    ),
    (
        "tasks/mcpbench_tasks_multi_3server_runner_format.json",
        "mcp-bench/3server",
    ),
];

/// Converts MCP-Bench: the tasks of the clone `dir` (its `tasks/` folder) over the
/// servers' tools in `servers`, the `tools/list` answers of MCP-Bench's servers as its
/// `utils/collect_mcp_info.py` writes them (`mcp_servers_info.json`: `{"servers":
/// {NAME: {"tools": {TOOL: {"name", "description", "input_schema"}}}}}`).
///
/// Each tool's server is its bundle (`bundle`, and `meta.server` with the server's own
/// tool name in `meta.tool`); a name two servers share (`search`, `convert_time`) is
/// qualified by its server in each, `<server>_<name>` as `import mcp` does
/// (`time_mcp_convert_time`). A task's `query` is what MCP-Bench's agent is told, its
/// `fuzzy_description`; its `expected` tools are the tools of its servers its
/// `task_description` names, in the order first named, as `Server:tool` or, for a name
/// that reads as an identifier (with `_`, a capital or a digit), bare; `offered` is the
/// same (the oracle's tools). `servers` and `distraction_servers` are kept. A task that
/// names no tool of its servers is skipped, and said so in [`Converted::skipped`], as is
/// a server that answered no tools.
///
/// ```no_run
/// let converted = toolscout_eval::convert::mcp_bench(
///     "mcp-bench".as_ref(),
///     "mcp-bench/mcp_servers_info.json".as_ref(),
/// )?;
/// converted.write("data/mcp-bench".as_ref())?;
/// # Ok::<(), toolscout_eval::Error>(())
/// ```
pub fn mcp_bench(dir: &Path, servers: &Path) -> Result<Converted> {
    let info = read_json(servers)?;
    let Some(listed) = info.get("servers").and_then(Value::as_object) else {
        return Err(Error::Line {
            path: servers.to_owned(),
            line: 1,
            reason: "no \"servers\" object: not the mcp_servers_info.json that MCP-Bench's utils/collect_mcp_info.py writes".to_owned(),
        });
    };
    let mut converted = Converted::default();
    // Each server's tools: (the server's own name, the name in the converted set).
    let mut by_server: HashMap<&str, Vec<(String, String)>> = HashMap::new();
    let mut count: HashMap<String, usize> = HashMap::new();
    for server in listed.values() {
        for tool in server_tools(server) {
            *count.entry(sanitize_name(&tool.0)).or_default() += 1;
        }
    }
    for (name, server) in listed {
        let tools = server_tools(server);
        if tools.is_empty() {
            let why = server
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("it listed none");
            converted
                .skipped
                .push(format!("server {name}: no tools ({why})"));
            continue;
        }
        for (own, raw) in tools {
            let plain = sanitize_name(&own);
            let qualified = if count.get(&plain).copied().unwrap_or(0) > 1 {
                sanitize_name(&format!("{}_{own}", server_prefix(name)))
            } else {
                plain
            };
            let line = json!({
                "name": qualified,
                "description": raw.get("description").and_then(Value::as_str).unwrap_or_default(),
                "parameters": parameters(raw.get("input_schema").or_else(|| raw.get("inputSchema"))),
                "source": "mcp-bench",
                "bundle": name,
                "meta": {"server": name, "tool": own},
            });
            // Only lines the evaluation reads back: a schema the spec refuses is said.
            if let Err(e) = toolscout_spec::adapters::jsonl::from_value(&line) {
                converted
                    .skipped
                    .push(format!("server {name}: tool {own}: {e}"));
                continue;
            }
            converted.tools.push(line);
            by_server
                .entry(name.as_str())
                .or_default()
                .push((own, qualified));
        }
    }
    for (file, source) in TASK_FILES {
        let path = dir.join(file);
        let tasks = read_json(&path)?;
        let groups = tasks
            .get("server_tasks")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::Line {
                path: path.clone(),
                line: 1,
                reason: "no \"server_tasks\" array".to_owned(),
            })?;
        for group in groups {
            let names: Vec<&str> = match group.get("servers").and_then(Value::as_array) {
                Some(list) => list.iter().filter_map(Value::as_str).collect(),
                None => group
                    .get("server_name")
                    .and_then(Value::as_str)
                    .into_iter()
                    .collect(),
            };
            for raw in group
                .get("tasks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match task(raw, &names, &by_server, source) {
                    Ok(task) => converted.tasks.push(task),
                    Err(reason) => converted.skipped.push(format!("{file}: {reason}")),
                }
            }
        }
    }
    Ok(converted)
}

/// A server's name as a name's prefix, as `import mcp` prefixes a bundle's tools:
/// lower case, words joined by `_` ("Time MCP" → `time_mcp`).
fn server_prefix(server: &str) -> String {
    server
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect::<Vec<_>>()
        .join("_")
}

fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| Error::Line {
        path: path.to_owned(),
        line: e.line(),
        reason: e.to_string(),
    })
}

/// A server's tools as listed: (name, the listed object). `tools` is a map by name in
/// MCP-Bench's file; a list is read too.
fn server_tools(server: &Value) -> Vec<(String, &Value)> {
    fn named(t: &Value) -> Option<(String, &Value)> {
        t.get("name")
            .and_then(Value::as_str)
            .map(|n| (n.to_owned(), t))
    }
    match server.get("tools") {
        Some(Value::Object(map)) => map
            .iter()
            .filter_map(|(key, t)| named(t).or(Some((key.clone(), t))))
            .collect(),
        Some(Value::Array(list)) => list.iter().filter_map(named).collect(),
        _ => Vec::new(),
    }
}

/// A tool's input schema as the parameters object: an empty or missing one is an object
/// of no properties.
fn parameters(schema: Option<&Value>) -> Value {
    match schema {
        Some(Value::Object(map)) if !map.is_empty() => {
            let mut map: Map<String, Value> = map.clone();
            map.entry("type").or_insert_with(|| json!("object"));
            Value::Object(map)
        }
        _ => json!({"type": "object", "properties": {}}),
    }
}

fn task(
    raw: &Value,
    servers: &[&str],
    by_server: &HashMap<&str, Vec<(String, String)>>,
    source: &str,
) -> std::result::Result<Value, String> {
    let id = raw
        .get("task_id")
        .and_then(Value::as_str)
        .ok_or("a task has no \"task_id\"")?;
    let query = raw
        .get("fuzzy_description")
        .and_then(Value::as_str)
        .filter(|q| !q.trim().is_empty())
        .ok_or_else(|| format!("{id} has no \"fuzzy_description\""))?;
    let plan = raw
        .get("task_description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // (where the plan first names the tool, its name in the converted set)
    let mut named: Vec<(usize, &str)> = Vec::new();
    let mut seen = HashSet::new();
    for server in servers {
        for (own, name) in by_server.get(server).into_iter().flatten() {
            let at = first_mention(plan, server, own);
            if let Some(at) = at
                && seen.insert(name.as_str())
            {
                named.push((at, name));
            }
        }
    }
    if named.is_empty() {
        return Err(format!(
            "{id} names no tool of its servers ({})",
            servers.join(", ")
        ));
    }
    named.sort_unstable();
    let expected: Vec<&str> = named.into_iter().map(|(_, n)| n).collect();
    let distraction: Vec<&str> = raw
        .get("distraction_servers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    Ok(json!({
        "id": id,
        "query": query,
        "expected": expected,
        "offered": expected,
        "servers": servers,
        "distraction_servers": distraction,
        "source": source,
    }))
}

/// Where `plan` first names the tool `own` of `server`: `Server:tool`, or the bare
/// name when it reads as an identifier (a plain word such as `search` or `think` is
/// also English), as a whole word.
fn first_mention(plan: &str, server: &str, own: &str) -> Option<usize> {
    let qualified = format!("{server}:{own}");
    let with_server = whole_word(plan, &qualified);
    let identifier = own
        .chars()
        .any(|c| c == '_' || c.is_ascii_uppercase() || c.is_ascii_digit());
    let bare = identifier.then(|| whole_word(plan, own)).flatten();
    match (with_server, bare) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The first place `word` occurs in `text` with no name character on either side.
fn whole_word(text: &str, word: &str) -> Option<usize> {
    let name_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).map(|(at, _)| at).find(|&at| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(name_char) && !after.is_some_and(name_char)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_is_named_with_its_server_or_bare_when_it_reads_as_an_identifier() {
        let plan = "1) Use BioMCP:think to plan. 2) Call gene_getter, then search the web.";
        assert_eq!(first_mention(plan, "BioMCP", "think"), Some(7));
        assert_eq!(first_mention(plan, "BioMCP", "gene_getter"), Some(37));
        // A plain word is English unless qualified.
        assert_eq!(first_mention(plan, "BioMCP", "search"), None);
        // Part of a longer name is not the name.
        assert_eq!(
            first_mention("use gene_getter_v2", "BioMCP", "gene_getter"),
            None
        );
    }
}
