//! The Model Context Protocol, with rmcp: [`McpServer`] over stdio ([`serve_stdio`]) and
//! streamable HTTP at `/mcp` ([`mcp_service`]).
//!
//! In [`Expose::Discover`] mode the server lists two tools, `discover_tools` (browse and
//! search the catalog) and `call_tool` (`{name, arguments}`: call any tool found), so a
//! client that caps its tools at 40 or 128 still reaches the whole catalog. In
//! [`Expose::All`] mode it lists every callable tool, a page at a time (cursor
//! pagination). Results carry the value as `structuredContent` and as JSON text; failed
//! calls have `isError: true`. Every catalog change sends
//! `notifications/tools/list_changed` to each initialized session.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use toolscout_discover::DiscoverTools;
use toolscout_invoke::Outcome;
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::mcp::to_mcp;

use crate::{AppState, Error, Expose, Result};

/// The name of the meta-tool that calls any tool.
pub const CALL_TOOL: &str = "call_tool";

/// One MCP session's handler over an [`AppState`].
#[derive(Debug, Clone)]
pub struct McpServer {
    state: AppState,
}

impl McpServer {
    /// A handler over `state`.
    pub fn new(state: AppState) -> Self {
        McpServer { state }
    }

    fn discover(&self) -> DiscoverTools {
        DiscoverTools::new(self.state.toolbox().clone())
    }

    /// The spec of `call_tool`.
    pub fn call_tool_spec() -> toolscout_spec::Result<ToolSpec> {
        ToolSpec::builder(CALL_TOOL, "Call a tool of the catalog by name")
            .description(
                "Calls any tool of the catalog. Find the tool and its parameters with \
                 discover_tools first, then pass its exact name and its arguments.",
            )
            .parameters(json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The tool's exact name, as discover_tools shows it"},
                    "arguments": {"type": "object", "description": "The tool's arguments, as its parameters say"}
                },
                "required": ["name"],
                "additionalProperties": false
            }))
            .returns("the tool's result, or an error that says what to change")
            .example(
                "Read a file",
                json!({"name": "read_file", "arguments": {"file_path": "README.md"}}),
            )
            .with_metadata(|m| m.open_world = true)
            .build()
    }

    /// The tools this server lists, all of them (both modes).
    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        match self.state.options().expose {
            Expose::Discover => [
                self.discover().spec().ok(),
                McpServer::call_tool_spec().ok(),
            ]
            .into_iter()
            .flatten()
            .collect(),
            Expose::All => self.state.toolbox().callable_specs(),
        }
    }

    /// Answers one `tools/call`: discover, call_tool, or (in either mode) a tool by name.
    pub async fn call(&self, name: &str, args: Value) -> CallToolResult {
        let discover = self.discover();
        if self.state.options().expose == Expose::Discover && name == discover.name() {
            let answer = discover.answer(&args);
            return structured(answer.reply, false);
        }
        if self.state.options().expose == Expose::Discover && name == CALL_TOOL {
            let Some(target) = args.get("name").and_then(Value::as_str) else {
                return structured(
                    json!({"error": {"kind": "invalid_arguments", "message": "call_tool needs \"name\": the exact name of the tool to call (find it with discover_tools)"}}),
                    true,
                );
            };
            let arguments = args.get("arguments").cloned().unwrap_or_else(|| json!({}));
            return outcome_result(self.state.call(target, arguments).await);
        }
        outcome_result(self.state.call(name, args).await)
    }
}

fn mcp_tool(spec: &ToolSpec) -> Option<Tool> {
    let mut v = to_mcp(spec);
    // MCP output schemas describe objects; other schemas are left out.
    if v.get("outputSchema")
        .is_some_and(|s| s.get("type").and_then(Value::as_str) != Some("object"))
        && let Some(o) = v.as_object_mut()
    {
        o.remove("outputSchema");
    }
    serde_json::from_value(v).ok()
}

fn structured(value: Value, is_error: bool) -> CallToolResult {
    let text = serde_json::to_string(&value).unwrap_or_default();
    let structured = if value.is_object() {
        value
    } else {
        json!({ "value": value })
    };
    let mut r = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    r.structured_content = Some(structured);
    r
}

/// The MCP result of an outcome: the value, or `{"error": …}` with `isError`.
pub fn outcome_result(outcome: Outcome) -> CallToolResult {
    match outcome {
        Outcome::Ok(v) => structured(v, false),
        Outcome::Err(e) => {
            let mut r = structured(
                json!({"error": {"kind": e.kind, "message": e.message, "details": e.details}}),
                true,
            );
            // The message first, so that a client that shows only text shows it plainly.
            r.content = vec![ContentBlock::text(format!("{}: {}", e.kind, e.message))];
            r
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let scenario = &self.state.options().scenario;
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new(&scenario.name, &scenario.version))
        .with_instructions(match self.state.options().expose {
            Expose::Discover => "This server holds a large tool catalog. Use discover_tools to browse or search it and to read a tool's parameters, then call_tool with the tool's name and arguments.",
            Expose::All => "Every tool of the catalog is listed; page through tools/list with its cursor.",
        })
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        let specs = self.tool_specs();
        let size = self.state.options().page_size;
        let start = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(c) => c.parse::<usize>().map_err(|_| {
                ErrorData::invalid_params(
                    format!("cursor {c:?} was not issued by this server; pass the nextCursor of a previous page"),
                    None,
                )
            })?,
        };
        let tools: Vec<Tool> = specs
            .iter()
            .skip(start)
            .take(size)
            .filter_map(mcp_tool)
            .collect();
        let mut result = ListToolsResult::with_all_items(tools);
        if start.saturating_add(size) < specs.len() {
            result.next_cursor = Some((start + size).to_string());
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let args = request
            .arguments
            .map(Value::Object)
            .unwrap_or_else(|| json!({}));
        Ok(self.call(&request.name, args).await.into())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let mut changes = self.state.changes();
        let peer = context.peer;
        tokio::spawn(async move {
            let mut check = tokio::time::interval(Duration::from_secs(30));
            loop {
                tokio::select! {
                    change = changes.recv() => {
                        if let Err(RecvError::Closed) = change {
                            break;
                        }
                        // One notification for a burst of changes (an import, a refresh).
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        while changes.try_recv().is_ok() {}
                        if peer.notify_tool_list_changed().await.is_err() {
                            break;
                        }
                    }
                    _ = check.tick() => {
                        if peer.is_transport_closed() {
                            break;
                        }
                    }
                }
            }
        });
    }
}

/// The streamable HTTP service of `state`, to mount at `/mcp` (see [`crate::router`]).
///
/// Sessions are kept in memory. Only loopback `Host` headers are accepted (rmcp's guard
/// against DNS rebinding) unless [`ServerOptions::mcp_allowed_hosts`] says otherwise.
///
/// [`ServerOptions::mcp_allowed_hosts`]: crate::ServerOptions::mcp_allowed_hosts
pub fn mcp_service(state: AppState) -> StreamableHttpService<McpServer, LocalSessionManager> {
    let options = state.options();
    let mut config =
        StreamableHttpServerConfig::default().with_max_request_body_bytes(options.body_limit);
    if let Some(hosts) = &options.mcp_allowed_hosts {
        config = config.with_allowed_hosts(hosts.iter().cloned());
    }
    StreamableHttpService::new(
        move || Ok(McpServer::new(state.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// Serves MCP over stdin and stdout until the client closes them.
pub async fn serve_stdio(state: AppState) -> Result<()> {
    let (stdin, stdout) = rmcp::transport::stdio();
    serve_io(state, stdin, stdout).await
}

/// Serves MCP as newline-delimited JSON-RPC over any reader and writer (what
/// [`serve_stdio`] does with stdin and stdout) until the reader ends.
pub async fn serve_io<R, W>(state: AppState, reader: R, writer: W) -> Result<()>
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let service = McpServer::new(state)
        .serve((reader, writer))
        .await
        .map_err(|e| Error::Mcp {
            reason: e.to_string(),
        })?;
    service.waiting().await.map_err(|e| Error::Mcp {
        reason: e.to_string(),
    })?;
    Ok(())
}
