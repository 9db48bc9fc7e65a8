//! [`McpService`]: rmcp's streamable HTTP service, with each session bound to the
//! principal that opened it.
//!
//! **Rationale:** here rather than in the `authenticate` middleware: the binding is made
//! from rmcp's answer (the id it minted) and undone by rmcp's session manager, which this
//! service holds.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, Method, Request, StatusCode};
use axum::response::{IntoResponse as _, Response};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::sync::broadcast::error::RecvError;
use toolscout_catalog::{TenantId, Viewer};
use uuid::Uuid;

use super::McpServer;
use crate::state::holds;
use crate::{AppState, Principal};

/// The header that names a session.
const SESSION_ID: &str = "mcp-session-id";
/// What a request naming a session it may not use is passed on with: an id rmcp never
/// mints (its ids are UUIDs), so that rmcp answers as for a session that does not exist.
const NO_SESSION: &str = "-";
/// How often the bindings of sessions that ended (a client that left without a
/// `DELETE`) are dropped.
const PRUNE_EVERY: Duration = Duration::from_secs(60);

/// Who a session is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Holder {
    /// The operator (and everyone on a server without a token).
    Operator,
    /// One token of one tenant.
    Tenant { tenant: TenantId, token: Uuid },
    /// A reader without a token (which the route table keeps from `/mcp`).
    Anonymous(Viewer),
}

impl Holder {
    /// The holder of a request's principal; none (a service mounted without the
    /// `authenticate` middleware) is the operator, as the handler reads it.
    fn of(principal: Option<&Principal>) -> Holder {
        match principal {
            None | Some(Principal::Operator) => Holder::Operator,
            Some(Principal::Tenant { id, token, .. }) => Holder::Tenant {
                tenant: *id,
                token: *token,
            },
            Some(Principal::Anonymous(viewer)) => Holder::Anonymous(viewer.clone()),
        }
    }
}

/// The `/mcp` service of [`crate::router`] ([`super::mcp_service`]): rmcp's streamable
/// HTTP service with each session bound to the principal that opened it.
///
/// The `initialize` request that makes a session carries the [`Principal`] the
/// `authenticate` middleware put in it; the session's id (the answer's `Mcp-Session-Id`)
/// is bound to it: the operator, or one token of one tenant. A request that names the
/// session on anyone else's behalf (another tenant, the same tenant with another token,
/// the operator) is handed to rmcp as one naming a session that does not exist, so that
/// its answer is byte for byte that of a made-up id (`404 Not Found: Session not found`;
/// `202` for a `DELETE`, which closes nothing): a stolen or guessed session id looks like
/// none, and the session goes on.
///
/// When a tenant's token is revoked, or the tenant removed (by this process, or by another
/// once the catalog reads it), the sessions opened with it are closed: rmcp stops the
/// session's worker, which ends its SSE streams, and the id is then unknown.
#[derive(Clone)]
pub struct McpService {
    rmcp: StreamableHttpService<McpServer, LocalSessionManager>,
    sessions: Arc<Sessions>,
}

impl std::fmt::Debug for McpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpService")
            .field("sessions", &self.sessions.lock().len())
            .finish()
    }
}

/// The sessions' bindings, and what closes them.
struct Sessions {
    state: AppState,
    manager: Arc<LocalSessionManager>,
    bound: Mutex<HashMap<String, Holder>>,
    /// Whether the task that closes revoked sessions runs.
    watching: AtomicBool,
}

impl McpService {
    /// `rmcp` (whose sessions `manager` keeps) with its sessions bound.
    pub(crate) fn new(
        state: AppState,
        rmcp: StreamableHttpService<McpServer, LocalSessionManager>,
        manager: Arc<LocalSessionManager>,
    ) -> McpService {
        McpService {
            rmcp,
            sessions: Arc::new(Sessions {
                state,
                manager,
                bound: Mutex::new(HashMap::new()),
                watching: AtomicBool::new(false),
            }),
        }
    }

    /// How many sessions are open (bound, and not yet seen to have ended).
    pub fn sessions(&self) -> usize {
        self.sessions.lock().len()
    }

    async fn handle(self, mut request: Request<Body>) -> Response {
        let holder = Holder::of(request.extensions().get::<Principal>());
        let named = request
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let own = named
            .as_deref()
            .is_some_and(|id| self.sessions.bound_to(id, &holder));
        if named.is_some() && !own {
            request
                .headers_mut()
                .insert(SESSION_ID, HeaderValue::from_static(NO_SESSION));
        }
        // The id of a request this POST carries in a session of its own: the request is
        // cancelled when its client goes away before the answer is read.
        let mut cancel_on_drop: Option<(String, serde_json::Value)> = None;
        if request.method() == Method::POST {
            let (parts, body) = request.into_parts();
            let limit = self.sessions.state.options().body_limit;
            let bytes = match axum::body::to_bytes(body, limit).await {
                Ok(bytes) => bytes,
                Err(_) => {
                    return rpc_error(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        crate::rpc::INVALID_REQUEST,
                        format!(
                            "invalid request: the body could not be read whole (at most {limit} bytes)"
                        ),
                    );
                }
            };
            if let Some(refused) = not_a_message(&bytes) {
                return refused;
            }
            if let (Some(session), true) = (&named, own)
                && let Ok(message) = serde_json::from_slice::<serde_json::Value>(&bytes)
                && message.get("method").is_some()
                && let Some(id) = message.get("id").filter(|id| !id.is_null())
            {
                cancel_on_drop = Some((session.clone(), id.clone()));
            }
            request = Request::from_parts(parts, Body::from(bytes));
        }
        let delete = request.method() == Method::DELETE;
        let response = self.rmcp.handle(request).await;
        // rmcp names a session in an answer only when it made it (an `initialize`).
        if let Some(id) = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
        {
            Arc::clone(&self.sessions).bind(id, holder).await;
        } else if let Some(id) = named.filter(|_| own && delete)
            && response.status().is_success()
        {
            self.sessions.lock().remove(&id);
        }
        match cancel_on_drop {
            Some((session, id)) => {
                let manager = Arc::clone(&self.sessions.manager);
                response
                    .map(|body| Body::new(CancelOnDrop::new(Body::new(body), manager, session, id)))
            }
            None => response.map(Body::new),
        }
    }
}

/// The answer's body to a request of a session, which cancels the request when it is
/// dropped before its end: the client went away (it disconnected, or gave up).
///
/// **Rationale:** rmcp runs a session's requests in the session's own task, which goes on
/// when the HTTP request that brought one is gone: a recipe's run went on for its full
/// time after its client left. The cancellation is what a client would send,
/// `notifications/cancelled`, handed to the session; the tool call then stops
/// (`McpServer::call_tool` ends with the request's cancellation).
struct CancelOnDrop {
    inner: Body,
    /// The session and the request's id, until the answer has ended.
    armed: Option<(Arc<LocalSessionManager>, String, serde_json::Value)>,
}

impl CancelOnDrop {
    fn new(
        inner: Body,
        manager: Arc<LocalSessionManager>,
        session: String,
        id: serde_json::Value,
    ) -> CancelOnDrop {
        CancelOnDrop {
            inner,
            armed: Some((manager, session, id)),
        }
    }
}

impl http_body::Body for CancelOnDrop {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.armed = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some((manager, session, id)) = self.armed.take() else {
            return;
        };
        let message = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "the client went away"},
        });
        let Ok(message) = serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(message)
        else {
            return;
        };
        // A drop cannot wait: the message is handed over from a task of its own (a
        // session that ended meanwhile has nothing left to cancel).
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = manager.accept_message(&session.into(), message).await;
            });
        }
    }
}

/// The JSON-RPC error answer to a body that is no MCP message: `-32700` when it is not
/// JSON, `-32600` when it is JSON but no JSON-RPC message; `None` for a message.
///
/// **Rationale:** rmcp answers both with a 415 in plain text; a JSON-RPC client reads
/// the error it expects, with no id (none could be read).
fn not_a_message(body: &[u8]) -> Option<Response> {
    let value: serde_json::Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return Some(rpc_error(
                StatusCode::BAD_REQUEST,
                crate::rpc::PARSE_ERROR,
                format!("parse error: the body is not JSON ({e}); send one JSON-RPC 2.0 message"),
            ));
        }
    };
    match serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value) {
        Ok(_) => None,
        Err(e) => Some(rpc_error(
            StatusCode::BAD_REQUEST,
            crate::rpc::INVALID_REQUEST,
            format!("invalid request: the body is no MCP client message ({e})"),
        )),
    }
}

/// A JSON-RPC error without an id, as an HTTP answer of `status`.
fn rpc_error(status: StatusCode, code: i64, message: String) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    });
    (status, axum::Json(body)).into_response()
}

impl tower_service::Service<Request<Body>> for McpService {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(request).await) })
    }
}

impl Sessions {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Holder>> {
        // The map is valid after any panic: every change is one insert or remove.
        self.bound.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn bound_to(&self, id: &str, holder: &Holder) -> bool {
        self.lock().get(id) == Some(holder)
    }

    /// Binds a new session to its holder; a token revoked since the request was let in
    /// closes it at once.
    async fn bind(self: Arc<Self>, id: &str, holder: Holder) {
        self.lock().insert(id.to_owned(), holder.clone());
        Arc::clone(&self).watch();
        if let Holder::Tenant { tenant, token } = holder
            && !holds(self.state.toolbox().catalog(), tenant, token)
        {
            self.close_where(|h| *h == holder).await;
        }
    }

    /// Starts, once, the task that closes the sessions of revoked tokens and forgets
    /// those that ended. It holds the sessions weakly: it ends with the service.
    fn watch(self: Arc<Self>) {
        if self.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        let mut revocations = self.state.revocations();
        let weak: Weak<Sessions> = Arc::downgrade(&self);
        drop(self);
        tokio::spawn(async move {
            let mut prune = tokio::time::interval(PRUNE_EVERY);
            prune.tick().await;
            loop {
                let heard = tokio::select! {
                    r = revocations.recv() => Some(r),
                    _ = prune.tick() => None,
                };
                let Some(sessions) = weak.upgrade() else {
                    break;
                };
                match heard {
                    Some(Ok(r)) => {
                        sessions
                            .close_where(|h| matches!(h, Holder::Tenant { tenant, token } if r.ends(*tenant, *token)))
                            .await;
                    }
                    // Revocations were missed: the catalog says which tokens still hold.
                    Some(Err(RecvError::Lagged(_))) => {
                        let state = sessions.state.clone();
                        sessions
                            .close_where(|h| matches!(h, Holder::Tenant { tenant, token } if !holds(state.toolbox().catalog(), *tenant, *token)))
                            .await;
                    }
                    Some(Err(RecvError::Closed)) => break,
                    None => sessions.prune().await,
                }
            }
        });
    }

    /// Closes (and unbinds) every session whose holder is `doomed`.
    async fn close_where(&self, doomed: impl Fn(&Holder) -> bool) {
        let ids: Vec<String> = {
            let mut bound = self.lock();
            let ids: Vec<String> = bound
                .iter()
                .filter(|(_, h)| doomed(h))
                .map(|(id, _)| id.clone())
                .collect();
            for id in &ids {
                bound.remove(id);
            }
            ids
        };
        for id in ids {
            if let Err(e) = self.manager.close_session(&Arc::from(id.as_str())).await {
                tracing::warn!(error = %e, "a revoked token's MCP session could not be closed");
            }
        }
    }

    /// Forgets the bindings of sessions rmcp no longer has.
    async fn prune(&self) {
        let ids: Vec<String> = self.lock().keys().cloned().collect();
        for id in ids {
            if let Ok(false) = self.manager.has_session(&Arc::from(id.as_str())).await {
                self.lock().remove(&id);
            }
        }
    }
}
