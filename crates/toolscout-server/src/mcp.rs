//! The Model Context Protocol, with rmcp: [`McpServer`] over stdio ([`serve_stdio`]) and
//! streamable HTTP at `/mcp` ([`mcp_service`]).
//!
//! In [`Expose::Discover`] mode the server lists two tools, `discover_tools` (browse and
//! search the catalog) and `call_tool` (`{name, arguments}`: call any tool found), so a
//! client that caps its tools at 40 or 128 still reaches the whole catalog. Each session
//! then *activates* the tools it is likely to call, since over MCP the client runs the
//! model and a model calls the tools of its tools array far more reliably than through
//! `call_tool`: a tool the session described at level 2 or 3, or found among the best
//! [`ServerOptions::search_activations`] hits of a search, is appended to that session's
//! `tools/list` under its own name (at most [`ServerOptions::activation_cap`], least
//! recently used evicted first), and the session gets `notifications/tools/list_changed`.
//! A stdio connection is one session; over streamable HTTP each `Mcp-Session-Id` is one
//! (requests of the session-less protocol version, 2026-07-28, activate nothing).
//!
//! In [`Expose::All`] mode the server lists every callable tool, a page at a time (cursor
//! pagination). Results carry the value as `structuredContent` and as JSON text; failed
//! calls have `isError: true`. A catalog change (this process's, or another replica's) sends
//! `notifications/tools/list_changed` to each initialized session whose list it moves:
//! in [`Expose::All`] mode any tool name added, removed, enabled, disabled or changed; in
//! [`Expose::Discover`] mode only one of the session's activated tools (the change feed
//! of [`crate::feed`] names them).
//!
//! Every request is answered as its sender sees the catalog: the [`Principal`] the
//! `authenticate` middleware put in the HTTP request (rmcp hands the request's parts to
//! the handler), so a tenant's `tools/list`, `discover_tools`, activations and calls
//! reach only its own, the shared and the built-in tools, and its session hears only of
//! changes in that view. Over stdio the client is the operator. A streamable HTTP
//! session is bound to the principal that opened it ([`McpService`]): its id used with
//! another token is answered as an unknown one, and a revoked token's sessions are
//! closed.
//!
//! A tool that requires approval, called in an operator's session whose client declared
//! the elicitation capability, is first approved by the server's own approver (`--approve
//! TOOL`) or else put to the client's user as an elicitation (the tool, its arguments, a
//! yes/no); only an accepted "yes" runs it. Any other answer, any client without the
//! capability, and every tenant's session get the server's approver's refusal, which
//! says how to allow it: a tenant's user may not approve what runs on the server's one
//! workspace.
//!
//! Catalog and index work (a discover answer, a lookup, a listing) runs on tokio's
//! blocking threads, never on the async threads that serve every session.
//!
//! [`ServerOptions::search_activations`]: crate::ServerOptions::search_activations
//! [`ServerOptions::activation_cap`]: crate::ServerOptions::activation_cap

mod binding;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ElicitationAction, ElicitationSchema, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::ElicitationMode;
use rmcp::service::{NotificationContext, Peer, RequestContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use toolscout_catalog::Viewer;
use toolscout_discover::{Activated, ActivationList, DiscoverTools, Lookup, Toolbox};
use toolscout_invoke::{Approval, ApprovalRequest, ErrorKind, Outcome};
use toolscout_spec::adapters::mcp::to_mcp;

pub use self::binding::McpService;
use crate::rpc::listed_tool;
use crate::{AppState, Error, Expose, Principal, Result};

/// The name of the meta-tool that calls any tool (the discover crate's, as the agent
/// loop's).
pub use toolscout_discover::CALL_TOOL;

/// The server's instructions to the client's model in [`Expose::Discover`] mode.
const INSTRUCTIONS_DISCOVER: &str = include_str!("../prompts/mcp_instructions_discover.md");
/// The server's instructions in [`Expose::All`] mode.
const INSTRUCTIONS_ALL: &str = include_str!("../prompts/mcp_instructions_all.md");
/// The question an elicitation puts to the client's user before a call that requires
/// approval (`{tool}`, `{summary}`, `{arguments}`).
const APPROVAL_QUESTION: &str = include_str!("../prompts/mcp_approval.md");
/// The elicitation's one property: `true` allows the call.
const APPROVAL_FIELD: &str = "approve";
/// How long the client's user has to answer an approval; no answer is a refusal.
const APPROVAL_TIMEOUT: Duration = Duration::from_secs(600);
/// At most this many characters of the arguments are shown in the question.
const APPROVAL_ARGS_CHARS: usize = 1000;

/// How long a session's `notifications/tools/list_changed` may take to be queued: a
/// client that does not read its stream does not hold up the call that activated a tool.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(2);

/// One MCP session's handler over an [`AppState`], with the tools the session has
/// activated (see the [module documentation](self)).
///
/// Each session gets its own handler ([`mcp_service`] makes one per streamable HTTP
/// session, [`serve_io`] one per connection); clones share the session's tools.
#[derive(Debug, Clone)]
pub struct McpServer {
    state: AppState,
    activated: Arc<Mutex<ActivationList<()>>>,
}

impl McpServer {
    /// A handler for a new session over `state`, with no tool activated.
    pub fn new(state: AppState) -> Self {
        let cap = state.options().activation_cap;
        McpServer {
            state,
            activated: Arc::new(Mutex::new(ActivationList::new(cap))),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ActivationList<()>> {
        // The list is valid after any panic: every change is one push or remove.
        self.activated.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The tools this session has activated, in the order `tools/list` shows them (after
    /// `discover_tools` and `call_tool`). Always empty in [`Expose::All`] mode.
    pub fn activated(&self) -> Vec<String> {
        self.lock().names()
    }

    /// The toolbox as `viewer` sees the catalog.
    fn toolbox(&self, viewer: &Viewer) -> Toolbox {
        self.state.toolbox_for(viewer.clone())
    }

    fn discover(toolbox: &Toolbox) -> DiscoverTools {
        DiscoverTools::new(toolbox.clone())
    }

    /// The session's `tools/list` as the operator sees the catalog (see
    /// [`McpServer::tool_list_for`]).
    ///
    /// It reads the catalog: async code calls it through `spawn_blocking`.
    pub fn tool_list(&self) -> Vec<Value> {
        self.tool_list_for(&Viewer::Operator)
    }

    /// The session's `tools/list` in `viewer`'s view, as MCP tool objects:
    /// `discover_tools`, `call_tool` and the session's activated tools that the view
    /// holds and can still call (an activation is a name, looked up in the view at each
    /// listing); in [`Expose::All`] mode every callable tool of the view. A spec-only tool
    /// says so: its description starts with the note, and its `_meta` has
    /// [`SPEC_ONLY_META`](crate::rpc::SPEC_ONLY_META).
    ///
    /// It reads the catalog: async code calls it through `spawn_blocking`.
    pub fn tool_list_for(&self, viewer: &Viewer) -> Vec<Value> {
        let toolbox = self.toolbox(viewer);
        match self.state.options().expose {
            Expose::Discover => {
                let mut list: Vec<Value> = [
                    Self::discover(&toolbox).spec().ok(),
                    Some(toolscout_discover::call_tool_spec()),
                ]
                .iter()
                .flatten()
                .map(to_mcp)
                .collect();
                for name in self.activated() {
                    if let Lookup::Found(tool) = toolbox.lookup(&name) {
                        list.push(listed_tool(*tool));
                    }
                }
                list
            }
            Expose::All => {
                let view = toolbox.view();
                toolbox
                    .callable_heads()
                    .iter()
                    .filter_map(|h| view.tool(h.id).ok())
                    .map(listed_tool)
                    .collect()
            }
        }
    }

    /// Answers one `tools/call` as the operator: discover, call_tool, or (in either mode)
    /// a tool by name. In [`Expose::Discover`] mode a discover answer activates the tools
    /// it disclosed and its best search hits; see [`McpServer::activated`].
    ///
    /// A failed call is a result with `isError: true`; `Err` means the server itself
    /// failed (the catalog could not be read).
    pub async fn call(
        &self,
        name: &str,
        args: Value,
    ) -> std::result::Result<CallToolResult, ErrorData> {
        Ok(self
            .answer(&Principal::Operator, name, args, true, None)
            .await?
            .0)
    }

    /// [`McpServer::call`] for `principal`, in its view, and whether the session's tool
    /// list changed; `activate` is false for a request outside any session; `peer` is the
    /// session's client, asked to approve calls when it can be and the principal is the
    /// operator (see the [module documentation](self)).
    async fn answer(
        &self,
        principal: &Principal,
        name: &str,
        args: Value,
        activate: bool,
        peer: Option<&Peer<RoleServer>>,
    ) -> std::result::Result<(CallToolResult, bool), ErrorData> {
        let discover_mode = self.state.options().expose == Expose::Discover;
        let toolbox = self.toolbox(&principal.viewer());
        if discover_mode && name == Self::discover(&toolbox).name() {
            return self.discover_call(toolbox, args, activate).await;
        }
        let (target, arguments) = if discover_mode && name == CALL_TOOL {
            let Some(target) = args.get("name").and_then(Value::as_str) else {
                return Ok((
                    structured(
                        json!({"error": {"kind": ErrorKind::InvalidArguments, "message": "call_tool needs \"name\": the exact name of the tool to call (find it with discover_tools)"}}),
                        true,
                    ),
                    false,
                ));
            };
            let arguments = args.get("arguments").cloned().unwrap_or_else(|| json!({}));
            (target.to_owned(), arguments)
        } else {
            (name.to_owned(), args)
        };
        let peer = peer.filter(|_| principal.is_operator());
        let outcome = self.invoke(toolbox, &target, arguments, peer).await?;
        Ok((outcome_result(outcome), false))
    }

    /// Answers a `discover_tools` call off the async threads, then activates what it
    /// disclosed and (on the first page of a search) its best hits.
    async fn discover_call(
        &self,
        toolbox: Toolbox,
        args: Value,
        activate: bool,
    ) -> std::result::Result<(CallToolResult, bool), ErrorData> {
        let this = self.clone();
        let (reply, wanted) = blocking(move || {
            let answer = Self::discover(&toolbox).answer(&args);
            if !activate {
                return (answer.reply, Vec::new());
            }
            let found = answer.found();
            let mut wanted = answer.disclosed;
            let first_page = args.get("page").is_none_or(Value::is_null);
            if first_page {
                wanted.extend(
                    found
                        .into_iter()
                        .take(this.state.options().search_activations),
                );
            }
            let wanted = this.activatable(&toolbox, wanted);
            (answer.reply, wanted)
        })
        .await?;
        let changed = {
            let mut list = self.lock();
            let mut changed = false;
            for name in &wanted {
                changed |= matches!(list.activate(name, || ()), Activated::Added { .. });
            }
            changed
        };
        Ok((structured(reply, false), changed))
    }

    /// The names among `names` that may join the session's list: callable catalog tools
    /// of `toolbox`'s view that are enabled by default and not named like a meta-tool.
    fn activatable(&self, toolbox: &Toolbox, names: Vec<String>) -> Vec<String> {
        if self.state.options().activation_cap == 0 {
            return Vec::new();
        }
        let discover = Self::discover(toolbox);
        names
            .into_iter()
            .filter(|n| n != discover.name() && n != CALL_TOOL)
            .filter(|n| {
                matches!(toolbox.lookup(n),
                    Lookup::Found(t) if t.spec.metadata.enabled_by_default)
            })
            .collect()
    }

    /// Calls the catalog tool `name` of `toolbox`'s view: looked up off the async
    /// threads, then called, remotely or locally, through [`AppState::call_tool_for`]. A
    /// call of an activated tool counts as a use (the least recently used is evicted
    /// first). A tool that requires approval is put to `peer`'s user first when the
    /// client can elicit (`peer` is only given for the operator's sessions).
    async fn invoke(
        &self,
        toolbox: Toolbox,
        name: &str,
        args: Value,
        peer: Option<&Peer<RoleServer>>,
    ) -> std::result::Result<Outcome, ErrorData> {
        self.lock().touch(name);
        let viewer = toolbox.viewer().clone();
        let owned = name.to_owned();
        let lookup = blocking(move || toolbox.lookup(&owned)).await?;
        Ok(match lookup.into_callable(name) {
            Ok(tool) => {
                let approved = match peer {
                    Some(peer)
                        if can_elicit(peer) && self.state.toolbox().requires_approval(&tool) =>
                    {
                        self.approve(peer, &tool, &args).await
                    }
                    _ => false,
                };
                self.state
                    .call_tool_for(&viewer, &tool, args, approved)
                    .await
            }
            Err(e) => Outcome::Err(e),
        })
    }

    /// Whether a call of `tool` that requires approval may run: the server's own approver
    /// allows it (`--approve TOOL`), or else the client's user accepts the elicitation
    /// with a "yes". `false` leaves the decision (a refusal) to the toolbox's approver.
    async fn approve(
        &self,
        peer: &Peer<RoleServer>,
        tool: &toolscout_catalog::Tool,
        args: &Value,
    ) -> bool {
        let name = tool.spec.name.as_str();
        // A recipe's one approval lists what it will run.
        let steps = self.state.toolbox().recipe_plan(tool).unwrap_or_default();
        let request =
            ApprovalRequest::new(name, args.clone(), tool.spec.summary.clone()).with_steps(steps);
        if let Some(approver) = self.state.toolbox().invoker().approver()
            && approver.approve(&request).await == Approval::Approved
        {
            return true;
        }
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: approval_question(&request),
            requested_schema: approval_schema(name),
        };
        match peer
            .create_elicitation_with_timeout(params, Some(APPROVAL_TIMEOUT))
            .await
        {
            Ok(answer) => {
                answer.action == ElicitationAction::Accept
                    && answer
                        .content
                        .as_ref()
                        .and_then(|c| c.get(APPROVAL_FIELD))
                        .and_then(Value::as_bool)
                        == Some(true)
            }
            Err(e) => {
                tracing::debug!(tool = name, error = %e, "the client did not answer the approval");
                false
            }
        }
    }
}

/// Whether the session's client takes form elicitations: it declared the capability,
/// and its protocol version allows requests from the server.
fn can_elicit(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|info| info.protocol_version.has_initialize())
        && peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
}

/// The question of an approval: the tool, its summary, its arguments (cut short).
fn approval_question(request: &ApprovalRequest) -> String {
    let mut arguments = serde_json::to_string_pretty(&request.arguments).unwrap_or_default();
    if arguments.chars().count() > APPROVAL_ARGS_CHARS {
        arguments = arguments
            .chars()
            .take(APPROVAL_ARGS_CHARS - 1)
            .collect::<String>()
            + "…";
    }
    let mut question = toolscout_spec::template::fill(
        APPROVAL_QUESTION.trim(),
        &[
            ("{tool}", &request.tool),
            ("{summary}", &request.summary),
            ("{arguments}", &arguments),
        ],
    );
    if !request.steps.is_empty() {
        question.push_str("\n\nIt is a recipe; this one approval covers every step it runs:");
        for s in &request.steps {
            let mark = if s.requires_approval {
                " (asks for approval)"
            } else {
                ""
            };
            question.push_str(&format!("\n- {}: {}{mark}", s.step, s.tool));
        }
    }
    question
}

/// The approval's schema: one required boolean, `approve`.
fn approval_schema(tool: &str) -> ElicitationSchema {
    ElicitationSchema::builder()
        .required_bool_with(APPROVAL_FIELD, |b| {
            b.title("Allow this call")
                .description(format!("Run {tool} once with the arguments shown"))
                .with_default(false)
        })
        .build_unchecked()
}

/// Runs catalog or index work on a blocking thread; a panic there is an internal error.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> std::result::Result<T, ErrorData> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ErrorData::internal_error(format!("reading the catalog failed: {e}"), None))
}

/// Tells the session that its tool list changed. Bounded in time, and a session that is
/// gone is no error: the list is read again on the next `tools/list`.
async fn notify_list_changed(peer: &Peer<RoleServer>) {
    let _ = tokio::time::timeout(NOTIFY_TIMEOUT, peer.notify_tool_list_changed()).await;
}

fn mcp_tool(mut v: Value) -> Option<Tool> {
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
        .with_instructions(
            match self.state.options().expose {
                Expose::Discover => INSTRUCTIONS_DISCOVER,
                Expose::All => INSTRUCTIONS_ALL,
            }
            .trim(),
        )
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        let this = self.clone();
        let viewer = principal_of(&context.extensions).viewer();
        let listed = blocking(move || this.tool_list_for(&viewer)).await?;
        let total = listed.len();
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
        let tools: Vec<Tool> = listed
            .into_iter()
            .skip(start)
            .take(size)
            .filter_map(mcp_tool)
            .collect();
        let mut result = ListToolsResult::with_all_items(tools);
        if start.saturating_add(size) < total {
            result.next_cursor = Some((start + size).to_string());
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let args = request
            .arguments
            .map(Value::Object)
            .unwrap_or_else(|| json!({}));
        // Requests of protocol versions without `initialize` (2026-07-28) stand alone:
        // there is no session to keep tools for.
        let session = context
            .peer
            .peer_info()
            .is_none_or(|info| info.protocol_version.has_initialize());
        let principal = principal_of(&context.extensions);
        let answer = self.answer(
            &principal,
            &request.name,
            args,
            session,
            Some(&context.peer),
        );
        // A cancelled request (the client said so, or went away: see `McpService`) stops
        // its call, a recipe's run with it.
        let (result, changed) = tokio::select! {
            answered = answer => answered?,
            () = context.ct.cancelled() => {
                return Err(ErrorData::internal_error(
                    "the call was cancelled: its client cancelled it or went away",
                    None,
                ));
            }
        };
        if changed {
            // Before the result, so that a client reads the new list before the model's
            // next turn.
            notify_list_changed(&context.peer).await;
        }
        Ok(result.into())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // The changes of the session's view only: a tenant's session never hears of
        // another tenant's tools, not even that they moved.
        let viewer = principal_of(&context.extensions).viewer();
        let mut changes = if viewer == Viewer::Operator {
            self.state.feed().subscribe()
        } else {
            let state = self.state.clone();
            let listen = move || state.feed().listen(state.toolbox().catalog(), &viewer);
            match blocking(listen).await {
                Ok(changes) => changes,
                Err(e) => {
                    tracing::warn!(error = %e.message, "an MCP session hears no catalog changes");
                    return;
                }
            }
        };
        let peer = context.peer;
        let activated = Arc::clone(&self.activated);
        let all = self.state.options().expose == Expose::All;
        tokio::spawn(async move {
            let mut check = tokio::time::interval(Duration::from_secs(30));
            loop {
                tokio::select! {
                    change = changes.recv() => {
                        let mut moved = match change {
                            Ok(event) => touches(&event, all, &activated),
                            Err(RecvError::Closed) => break,
                            // Fallen behind: something may have moved.
                            Err(RecvError::Lagged(_)) => true,
                        };
                        // One notification for a burst of changes (an import, a refresh).
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        loop {
                            match changes.try_recv() {
                                Ok(event) => moved |= touches(&event, all, &activated),
                                Err(TryRecvError::Lagged(_)) => moved = true,
                                Err(_) => break,
                            }
                        }
                        if moved && peer.notify_tool_list_changed().await.is_err() {
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

/// Whether `event` changes what a session lists: in [`Expose::All`] mode any name that
/// moved; in [`Expose::Discover`] mode only one of the session's activated tools (the two
/// meta tools never change).
fn touches(
    event: &crate::feed::FeedEvent,
    all: bool,
    activated: &Mutex<ActivationList<()>>,
) -> bool {
    let names: Vec<&str> = event.names().collect();
    if all {
        return !names.is_empty();
    }
    let activated = activated.lock().unwrap_or_else(|e| e.into_inner());
    names.iter().any(|n| activated.contains(n))
}

/// Who sent an MCP request or notification: the principal the `authenticate` middleware
/// put in the HTTP request's extensions (rmcp hands the request's parts to the handler).
/// A message without HTTP parts (stdio, [`serve_io`]) is the operator's, and so is one of
/// a service mounted without the middleware (no principal), as before there were tenants.
fn principal_of(extensions: &rmcp::model::Extensions) -> Principal {
    extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>())
        .cloned()
        .unwrap_or(Principal::Operator)
}

/// The streamable HTTP service of `state`, to mount at `/mcp` (see [`crate::router`]):
/// rmcp's, with each session bound to the principal that opened it ([`McpService`]).
///
/// Sessions are kept in memory. Only loopback `Host` headers are accepted (rmcp's guard
/// against DNS rebinding) unless [`ServerOptions::mcp_allowed_hosts`] says otherwise.
///
/// [`ServerOptions::mcp_allowed_hosts`]: crate::ServerOptions::mcp_allowed_hosts
pub fn mcp_service(state: AppState) -> McpService {
    let options = state.options();
    let mut config =
        StreamableHttpServerConfig::default().with_max_request_body_bytes(options.body_limit);
    if let Some(hosts) = &options.mcp_allowed_hosts {
        config = config.with_allowed_hosts(hosts.iter().cloned());
    }
    let sessions = Arc::new(LocalSessionManager::default());
    let factory = state.clone();
    let service = StreamableHttpService::new(
        move || Ok(McpServer::new(factory.clone())),
        Arc::clone(&sessions),
        config,
    );
    McpService::new(state, service, sessions)
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

#[cfg(test)]
mod tests {
    use super::approval_question;
    use toolscout_invoke::ApprovalRequest;

    /// A summary is the tool author's text: a placeholder in it is shown as written, and
    /// the arguments are said once, where the question puts them.
    #[test]
    fn a_placeholder_in_a_tool_summary_is_not_filled() {
        let request = ApprovalRequest::new(
            "wipe",
            serde_json::json!({"path": "/"}),
            "Deletes {arguments} after {tool}",
        );
        let question = approval_question(&request);
        assert!(
            question.starts_with("The model asks to call the tool wipe (Deletes {arguments} after {tool}) with these arguments:\n{\n  \"path\": \"/\"\n}"),
            "{question}"
        );
        assert_eq!(question.matches("\"path\"").count(), 1, "{question}");
    }
}
