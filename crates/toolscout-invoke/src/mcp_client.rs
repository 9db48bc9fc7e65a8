//! The tools of another MCP server, called through it (feature `mcp-client`).
//!
//! An [`McpClient`] starts an MCP server as a child process, speaking MCP over its stdin
//! and stdout (rmcp), on first use, and keeps it running for as long as the client lives.
//! [`McpClient::list_tools`] reads the server's tools as [`ToolSpec`]s;
//! [`McpClient::register`] registers one [`McpProxy`] per tool with an [`Invoker`], under
//! a native name of the caller's choosing, so that a catalog tool whose `impl` names it
//! is called on the server.
//!
//! ```no_run
//! use std::sync::Arc;
//! use toolscout_invoke::Invoker;
//! use toolscout_invoke::mcp_client::McpClient;
//!
//! # async fn run() -> toolscout_invoke::Result<()> {
//! let client = Arc::new(McpClient::new(["npx", "-y", "@modelcontextprotocol/server-everything"])?);
//! let listed = client.list_tools().await?;
//! let mut invoker = Invoker::default();
//! for spec in &listed.tools {
//!     let name = format!("mcp:everything:{}", spec.name);
//!     invoker.register_dyn(Arc::new(client.proxy(name, spec.name.as_str())))?;
//! }
//! # Ok(())
//! # }
//! ```

use std::sync::Arc;

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tokio::sync::OnceCell;
use toolscout_spec::ToolSpec;

use crate::{BoxFuture, DynTool, Error, ErrorKind, Invoker, Result, ToolError};

/// A connection to one MCP server, started as a child process on first use.
pub struct McpClient {
    command: Vec<String>,
    running: OnceCell<RunningService<RoleClient, ()>>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("command", &self.command)
            .field("running", &self.running.initialized())
            .finish()
    }
}

/// The tools an MCP server lists.
#[derive(Debug, Clone, Default)]
pub struct McpTools {
    /// Each usable tool's spec, in the server's order.
    pub tools: Vec<ToolSpec>,
    /// The tools that could not be read as a [`ToolSpec`]: their name and why.
    pub skipped: Vec<(String, String)>,
}

impl McpClient {
    /// A client of the server that `command` (a program and its arguments) starts. Nothing
    /// is started before the first [`McpClient::list_tools`] or call.
    pub fn new<I, S>(command: I) -> Result<Self>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let command: Vec<String> = command.into_iter().map(Into::into).collect();
        if command.is_empty() {
            return Err(Error::Mcp {
                command: String::new(),
                reason: "no command to start the MCP server with".to_owned(),
            });
        }
        Ok(McpClient {
            command,
            running: OnceCell::new(),
        })
    }

    /// The program and arguments that start the server.
    pub fn command(&self) -> &[String] {
        &self.command
    }

    fn error(&self, reason: String) -> Error {
        Error::Mcp {
            command: self.command.join(" "),
            reason,
        }
    }

    /// The running server, started now if it is not.
    async fn running(&self) -> Result<&RunningService<RoleClient, ()>> {
        self.running
            .get_or_try_init(|| async {
                let (program, args) = self
                    .command
                    .split_first()
                    .ok_or_else(|| self.error("no command".to_owned()))?;
                let mut cmd = tokio::process::Command::new(program);
                cmd.args(args);
                // What the server writes to stderr (a start-up line, logs) is not the
                // caller's output: it is kept, and shown only if the server fails to start.
                let (transport, stderr) = TokioChildProcess::builder(cmd)
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|e| self.error(format!("cannot start it: {e}")))?;
                let said = StderrTail::default();
                let reader = stderr.map(|stderr| tokio::spawn(said.clone().collect(stderr)));
                match ().serve(transport).await {
                    Ok(running) => Ok(running),
                    Err(e) => {
                        // A server that stopped has closed its stderr: its last words are
                        // read to the end (one still running is not waited for long).
                        if let Some(reader) = reader {
                            let _ = tokio::time::timeout(STDERR_WAIT, reader).await;
                        }
                        Err(self.error(format!("cannot connect to it: {e}{}", said.render())))
                    }
                }
            })
            .await
    }

    /// The server's tools, every page of them.
    pub async fn list_tools(&self) -> Result<McpTools> {
        let tools = self
            .running()
            .await?
            .list_all_tools()
            .await
            .map_err(|e| self.error(format!("listing its tools failed: {e}")))?;
        let mut out = McpTools::default();
        for tool in tools {
            let read = serde_json::to_value(&tool)
                .map_err(|e| e.to_string())
                .and_then(|v| {
                    toolscout_spec::adapters::mcp::from_mcp(&v).map_err(|e| e.to_string())
                });
            match read {
                Ok(spec) => out.tools.push(spec),
                Err(reason) => out.skipped.push((tool.name.to_string(), reason)),
            }
        }
        Ok(out)
    }

    /// A native tool named `name` that calls the server's tool `tool`.
    pub fn proxy(self: &Arc<Self>, name: impl Into<String>, tool: impl Into<String>) -> McpProxy {
        McpProxy {
            name: name.into(),
            tool: tool.into(),
            client: Arc::clone(self),
        }
    }

    /// Registers with `invoker` a proxy for each `(name, tool)` pair: the native name the
    /// catalog's tool gives, and the server's name of the tool it calls.
    pub fn register<'a>(
        self: &Arc<Self>,
        invoker: &mut Invoker,
        tools: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<()> {
        for (name, tool) in tools {
            invoker.register_dyn(Arc::new(self.proxy(name, tool)))?;
        }
        Ok(())
    }

    /// Stops the server, if it was started, and waits for it to end.
    pub async fn shutdown(self) {
        if let Some(running) = self.running.into_inner() {
            // The server is gone either way; how it ended changes nothing for the caller.
            let _ = running.cancel().await;
        }
    }
}

/// How long a server that failed to connect is given to finish writing to its stderr.
const STDERR_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// The last lines a server wrote to its stderr, at most [`StderrTail::LINES`].
#[derive(Debug, Clone, Default)]
struct StderrTail(Arc<std::sync::Mutex<std::collections::VecDeque<String>>>);

impl StderrTail {
    const LINES: usize = 20;

    /// Reads `stderr` to its end, keeping the last lines.
    async fn collect(self, stderr: tokio::process::ChildStderr) {
        use tokio::io::AsyncBufReadExt as _;
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
            if kept.len() == Self::LINES {
                kept.pop_front();
            }
            kept.push_back(line);
        }
    }

    /// `"; it said: …"`, or nothing when it said nothing.
    fn render(&self) -> String {
        let kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if kept.is_empty() {
            return String::new();
        }
        let lines: Vec<&str> = kept.iter().map(String::as_str).collect();
        format!("; it said: {}", lines.join("\n"))
    }
}

/// One tool of an MCP server, as a native tool: its arguments are sent as they are, and
/// its result comes back as its one text read as JSON when that is JSON, else the
/// tool's `structuredContent`, else its one text as a string, else its whole `content`.
/// A result the server flags `isError` is a `tool_failed` error.
///
/// **Rationale:** MCP asks a tool with structured content to give the same JSON as text,
/// and that text is the value as the tool returned it; `structuredContent` must be an
/// object, so servers wrap other values (toolscout's server as `{"value": …}`). Read
/// from the text, a proxied tool returns what the same tool called directly returns.
#[derive(Debug)]
pub struct McpProxy {
    name: String,
    tool: String,
    client: Arc<McpClient>,
}

impl DynTool for McpProxy {
    fn name(&self) -> &str {
        &self.name
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
                .running()
                .await
                .map_err(|e| failed(e.to_string()))?;
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
            if let [one] = text.as_slice()
                && let Ok(value) = serde_json::from_str::<Value>(one)
            {
                return Ok(value);
            }
            if let Some(structured) = result.get("structuredContent") {
                return Ok(structured.clone());
            }
            Ok(match text.as_slice() {
                [one] => json!(one),
                _ => result["content"].clone(),
            })
        })
    }
}
