//! `toolscout import mcp -- COMMAND…`: the tools of another MCP server (over stdio), in a
//! bundle, with calls proxied to it.
//!
//! Each imported tool is a native tool whose function, `mcp:<bundle>:<tool>`, this
//! binary registers at start-up from `<catalog>/mcp-servers.json` (the command of each
//! imported server and its tool names). The server is started on the first call and
//! kept for the life of the process. A binary without that file lists the tools as
//! disabled ("not registered").

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tokio::sync::OnceCell;
use toolscout_invoke::{BoxFuture, DynTool, ErrorKind, Invoker, ToolError};
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
        let client = Arc::new(Client {
            command: server.command.clone(),
            running: OnceCell::new(),
        });
        for tool in &server.tools {
            invoker.register_dyn(Arc::new(Proxy {
                func: func(&server.bundle, tool),
                tool: tool.clone(),
                client: client.clone(),
            }))?;
        }
    }
    Ok(())
}

/// A connection to one MCP server, started on first use.
struct Client {
    command: Vec<String>,
    running: OnceCell<RunningService<RoleClient, ()>>,
}

impl Client {
    async fn get(&self) -> Result<&RunningService<RoleClient, ()>> {
        self.running.get_or_try_init(|| start(&self.command)).await
    }
}

async fn start(command: &[String]) -> Result<RunningService<RoleClient, ()>> {
    let Some((program, args)) = command.split_first() else {
        bail!("no command to start the MCP server with");
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args);
    let transport =
        TokioChildProcess::new(cmd).with_context(|| format!("starting {}", command.join(" ")))?;
    ().serve(transport)
        .await
        .with_context(|| format!("connecting to the MCP server {}", command.join(" ")))
}

/// One imported tool, called on its server.
struct Proxy {
    func: String,
    tool: String,
    client: Arc<Client>,
}

impl DynTool for Proxy {
    fn name(&self) -> &str {
        &self.func
    }

    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        ToolSpec::builder("mcp_proxy", "Calls a tool of another MCP server")
            .parameters(json!({"type": "object"}))
            .build()
    }

    fn call_json(&self, args: Value) -> BoxFuture<'_, std::result::Result<Value, ToolError>> {
        Box::pin(async move {
            let failed = |e: String| ToolError::new(ErrorKind::ToolFailed, e);
            let client = self
                .client
                .get()
                .await
                .map_err(|e| failed(format!("{e:#}")))?;
            let mut params = CallToolRequestParams::new(self.tool.clone());
            params.arguments = args.as_object().cloned();
            let result = client
                .call_tool(params)
                .await
                .map_err(|e| failed(format!("the MCP server failed: {e}")))?;
            let result = serde_json::to_value(&result).map_err(|e| failed(e.to_string()))?;
            let text: Vec<&str> = result["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["text"].as_str())
                .collect();
            if result["isError"] == json!(true) {
                return Err(failed(text.join("\n")).with_details(result));
            }
            if let Some(structured) = result.get("structuredContent") {
                return Ok(structured.clone());
            }
            Ok(match text.as_slice() {
                [one] => serde_json::from_str(one).unwrap_or_else(|_| json!(one)),
                _ => result["content"].clone(),
            })
        })
    }
}

/// The specs of the tools of the MCP server started by `command`.
pub(crate) fn list_tools(command: &[String]) -> Result<Vec<ToolSpec>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let client = start(command).await?;
        let tools = client
            .list_all_tools()
            .await
            .context("listing the server's tools")?;
        let mut specs = Vec::new();
        for t in tools {
            let v = serde_json::to_value(&t)?;
            match toolscout_spec::adapters::mcp::from_mcp(&v) {
                Ok(spec) => specs.push(spec),
                Err(e) => eprintln!("warning: skipped tool {}: {e}", t.name),
            }
        }
        let _ = client.cancel().await;
        Ok(specs)
    })
}
