//! `toolscout import mcp -- COMMAND…`: the tools of another MCP server (over stdio), in a
//! bundle, with calls proxied to it by the library's `toolscout_invoke::mcp_client`.
//!
//! Each imported tool is a native tool whose function, `mcp:<bundle>:<tool>`, this
//! binary registers at start-up from `<catalog>/mcp-servers.json` (the command of each
//! imported server and its tool names). The server is started on the first call and
//! kept for the life of the process. A binary without that file lists the tools as
//! disabled ("not registered").

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result};
use serde_json::{Value, json};
use toolscout_invoke::Invoker;
use toolscout_invoke::mcp_client::McpClient;
use toolscout_spec::ToolSpec;

/// The file that lists the imported MCP servers, in the catalog directory.
const SERVERS_FILE: &str = "mcp-servers.json";

/// One imported server: the bundle it fills, how to start it, its tools.
#[derive(Debug, Clone)]
pub(crate) struct Server {
    pub(crate) bundle: String,
    pub(crate) command: Vec<String>,
    pub(crate) tools: Vec<String>,
}

impl Server {
    fn to_json(&self) -> Value {
        json!({"bundle": self.bundle, "command": self.command, "tools": self.tools})
    }

    fn from_json(v: &Value) -> Option<Server> {
        let strings = |k: &str| -> Option<Vec<String>> {
            v.get(k)?
                .as_array()?
                .iter()
                .map(|s| s.as_str().map(str::to_owned))
                .collect()
        };
        Some(Server {
            bundle: v.get("bundle")?.as_str()?.to_owned(),
            command: strings("command")?,
            tools: strings("tools")?,
        })
    }
}

/// The native function of an imported tool.
pub(crate) fn func(bundle: &str, tool: &str) -> String {
    format!("mcp:{bundle}:{tool}")
}

fn servers_path(dir: &Path) -> PathBuf {
    dir.join(SERVERS_FILE)
}

/// The imported servers of the catalog in `dir` (none when the file is missing).
pub(crate) fn load(dir: &Path) -> Result<Vec<Server>> {
    let path = servers_path(dir);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let v: Value =
        serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
    Ok(v.get("servers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Server::from_json)
        .collect())
}

/// Records `server` (replacing the entry of its bundle, keeping its known tools).
pub(crate) fn save(dir: &Path, server: &Server) -> Result<()> {
    let mut servers = load(dir)?;
    let mut merged = server.clone();
    if let Some(old) = servers.iter().find(|s| s.bundle == server.bundle) {
        for t in &old.tools {
            if !merged.tools.contains(t) {
                merged.tools.push(t.clone());
            }
        }
    }
    servers.retain(|s| s.bundle != server.bundle);
    servers.push(merged);
    let body = json!({"servers": servers.iter().map(Server::to_json).collect::<Vec<_>>()});
    let path = servers_path(dir);
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(&body)?)
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Registers a proxy for every tool of every imported server.
pub(crate) fn register(invoker: &mut Invoker, servers: &[Server]) -> Result<()> {
    for server in servers {
        let client = Arc::new(McpClient::new(server.command.clone())?);
        let funcs: Vec<(String, &str)> = server
            .tools
            .iter()
            .map(|tool| (func(&server.bundle, tool), tool.as_str()))
            .collect();
        client.register(invoker, funcs.iter().map(|(f, t)| (f.as_str(), *t)))?;
    }
    Ok(())
}

/// The specs of the tools of the MCP server started by `command`.
pub(crate) fn list_tools(command: &[String]) -> Result<Vec<ToolSpec>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = McpClient::new(command.iter().cloned())?;
        let listed = client.list_tools().await;
        client.shutdown().await;
        let listed = listed?;
        for (name, reason) in &listed.skipped {
            eprintln!("warning: skipped tool {name}: {reason}");
        }
        Ok(listed.tools)
    })
}
