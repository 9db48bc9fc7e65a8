//! JSON-RPC 2.0 at `POST /rpc`: `tools/list`, `tools/call`, `tools/describe`,
//! `tools/search` and `server/identity`, single requests and batches.

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{Value, json};
use toolscout_catalog::Tool;
use toolscout_discover::{Lookup, listed_spec, marked};
use toolscout_search::SearchQuery;
use toolscout_spec::Level;
use toolscout_spec::adapters::manifest::PROTOCOL_VERSION;
use toolscout_spec::adapters::mcp::to_mcp;

use crate::error::AppError;
use crate::{AppState, Principal};

/// The methods `POST /rpc` answers.
pub const METHODS: [&str; 5] = [
    "tools/list",
    "tools/call",
    "tools/describe",
    "tools/search",
    "server/identity",
];

/// Invalid JSON was received.
pub const PARSE_ERROR: i64 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub const INVALID_PARAMS: i64 = -32602;
/// Internal error.
pub const INTERNAL_ERROR: i64 = -32603;
/// `tools/call` without the server's bearer token (a server-defined code).
pub const UNAUTHORIZED: i64 = -32001;
/// The answer would be larger than [`MAX_RESPONSE_BYTES`] (a server-defined code).
pub const RESPONSE_TOO_LARGE: i64 = -32002;
/// A request of a batch past its tenant's request rate (a server-defined code; the data
/// says when to try again).
pub const RATE_LIMITED: i64 = -32003;

/// The most requests in one batch.
pub const MAX_BATCH: usize = 100;
/// The largest answer to one HTTP body, in bytes of JSON: a reply that would pass it is
/// replaced by a [`RESPONSE_TOO_LARGE`] error.
pub const MAX_RESPONSE_BYTES: usize = 8 << 20;

/// A JSON-RPC error: code, message, optional data.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The standard code.
    pub code: i64,
    /// What was wrong and how to fix it.
    pub message: String,
    /// Structured context.
    pub data: Option<Value>,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    fn params(message: impl Into<String>) -> Self {
        RpcError::new(INVALID_PARAMS, message)
    }

    fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    fn to_json(&self, id: Value) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(d) = &self.data {
            error["data"] = d.clone();
        }
        json!({"jsonrpc": "2.0", "error": error, "id": id})
    }
}

/// `POST /rpc`. When the server has a token, the `authenticate` middleware lets no
/// request without one through; `tools/call` is the operator's, checked again here.
pub(crate) async fn handle(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    limiter: Option<Extension<std::sync::Arc<crate::limit::Limiter>>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, AppError> {
    let body = body?;
    // Only a client that proved it holds the server's token may approve a call: with no
    // token (`--no-auth`) anyone could.
    let caller = Caller {
        may_approve: principal.may_approve(state.options()),
        principal,
        limiter: limiter.map(|Extension(l)| l),
    };
    match answer_with(&state, &body, caller).await {
        Some(reply) => Ok(Json(reply).into_response()),
        None => Ok(StatusCode::NO_CONTENT.into_response()),
    }
}

/// The reply to one HTTP body: a response, an array of responses, or nothing (only
/// notifications). Every method may be called: this is the in-process entry point.
pub async fn answer(state: &AppState, body: &[u8]) -> Option<Value> {
    answer_with(
        state,
        body,
        Caller {
            may_approve: true,
            principal: Principal::Operator,
            limiter: None,
        },
    )
    .await
}

/// Who sent a request, and what it may do.
#[derive(Debug, Clone)]
struct Caller {
    /// `tools/call` with `"approved": true`, for a tool that requires approval.
    may_approve: bool,
    /// Whose view of the catalog every method reads and calls in.
    principal: Principal,
    /// The tenants' request buckets: each request of a batch past the first (which the
    /// `authenticate` middleware took) takes one more.
    limiter: Option<std::sync::Arc<crate::limit::Limiter>>,
}

impl Caller {
    /// Takes one request of a tenant's rate for a request of a batch; the error to
    /// answer it with when the tenant is over its rate. The operator is not limited.
    fn take_one(&self) -> Result<(), Value> {
        let (Principal::Tenant { id, limits, .. }, Some(limiter)) =
            (&self.principal, &self.limiter)
        else {
            return Ok(());
        };
        limiter
            .take(*id, limits, std::time::Instant::now())
            .map_err(|wait| {
                let seconds = crate::limit::retry_after(wait);
                json!({
                    "message": format!(
                        "rate limited: this tenant may send {} requests a second (bursts of {}), each request of a batch counted; try again in {seconds} s",
                        limits.requests_per_second, limits.burst
                    ),
                    "retry_after": seconds,
                })
            })
    }
}

/// Like [`answer`], for `caller`.
async fn answer_with(state: &AppState, body: &[u8], caller: Caller) -> Option<Value> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => {
            return Some(
                RpcError::new(
                    PARSE_ERROR,
                    format!("parse error: the body is not JSON ({e}); send one JSON-RPC 2.0 request object or an array of them"),
                )
                .to_json(Value::Null),
            );
        }
    };
    match value {
        Value::Array(items) if items.is_empty() => Some(
            RpcError::new(
                INVALID_REQUEST,
                "invalid request: an empty batch; send at least one request object",
            )
            .to_json(Value::Null),
        ),
        Value::Array(items) if items.len() > MAX_BATCH => Some(
            RpcError::new(
                INVALID_REQUEST,
                format!(
                    "invalid request: a batch of {} requests; at most {MAX_BATCH} are answered at once, send them in several batches",
                    items.len()
                ),
            )
            .with_data(json!({"batch": items.len(), "max_batch": MAX_BATCH}))
            .to_json(Value::Null),
        ),
        Value::Array(items) => {
            let mut replies = Vec::new();
            let mut budget = MAX_RESPONSE_BYTES;
            for (i, item) in items.into_iter().enumerate() {
                // The first was counted with the HTTP request; each other is a request
                // of its own against a tenant's rate (100 `tools/call` in one batch
                // were 100 calls at the price of one).
                if i > 0
                    && let Err(limited) = caller.take_one()
                {
                    // A notification gets no answer, refused or not.
                    let Some(id) = item.get("id").cloned() else {
                        continue;
                    };
                    let message = limited["message"].as_str().unwrap_or_default().to_owned();
                    let error = RpcError::new(RATE_LIMITED, message)
                        .with_data(json!({"retry_after_seconds": limited["retry_after"]}));
                    replies.push(bounded(error.to_json(id), &mut budget));
                    continue;
                }
                if let Some(r) = one(state, item, &caller).await {
                    replies.push(bounded(r, &mut budget));
                }
            }
            (!replies.is_empty()).then_some(Value::Array(replies))
        }
        other => {
            let mut budget = MAX_RESPONSE_BYTES;
            one(state, other, &caller)
                .await
                .map(|r| bounded(r, &mut budget))
        }
    }
}

/// `reply`, or a [`RESPONSE_TOO_LARGE`] error in its place when it does not fit in the
/// `budget` of bytes left (which it then uses up).
fn bounded(reply: Value, budget: &mut usize) -> Value {
    let size = json_size(&reply);
    if size <= *budget {
        *budget -= size;
        return reply;
    }
    let id = reply.get("id").cloned().unwrap_or(Value::Null);
    let error = RpcError::new(
        RESPONSE_TOO_LARGE,
        format!(
            "the answer is larger than the {MAX_RESPONSE_BYTES} bytes one HTTP answer may hold; ask for less (a smaller page, fewer requests per batch)"
        ),
    )
    .with_data(json!({"max_response_bytes": MAX_RESPONSE_BYTES}))
    .to_json(id);
    *budget = budget.saturating_sub(json_size(&error));
    error
}

/// The length of `value` written as JSON, without writing it anywhere.
fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

async fn one(state: &AppState, request: Value, caller: &Caller) -> Option<Value> {
    let Value::Object(req) = request else {
        return Some(
            RpcError::new(
                INVALID_REQUEST,
                format!("invalid request: expected an object like {{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\",\"id\":1}}, found {request}"),
            )
            .to_json(Value::Null),
        );
    };
    let id = req.get("id").cloned();
    let reply_id = match &id {
        None => Value::Null,
        Some(v @ (Value::Null | Value::String(_) | Value::Number(_))) => v.clone(),
        Some(other) => {
            return Some(
                RpcError::new(
                    INVALID_REQUEST,
                    format!(
                        "invalid request: \"id\" must be a string, a number or null, found {other}"
                    ),
                )
                .to_json(Value::Null),
            );
        }
    };
    if req.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(
            RpcError::new(
                INVALID_REQUEST,
                "invalid request: \"jsonrpc\" must be \"2.0\"",
            )
            .to_json(reply_id),
        );
    }
    let Some(method) = req.get("method").and_then(Value::as_str) else {
        return Some(
            RpcError::new(
                INVALID_REQUEST,
                format!(
                    "invalid request: \"method\" must be a string, one of {}",
                    METHODS.join(", ")
                ),
            )
            .to_json(reply_id),
        );
    };
    let params = req.get("params").cloned().unwrap_or(Value::Null);
    let result = match &params {
        Value::Null | Value::Object(_) => dispatch(state, method, &params, caller).await,
        other => Err(RpcError::params(format!(
            "invalid params: \"params\" must be an object, found {other}"
        ))),
    };
    // A notification (no id) gets no reply, whatever happened.
    id.as_ref()?;
    Some(match result {
        Ok(v) => json!({"jsonrpc": "2.0", "result": v, "id": reply_id}),
        Err(e) => e.to_json(reply_id),
    })
}

fn str_param<'a>(params: &'a Value, key: &str) -> Result<Option<&'a str>, RpcError> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(RpcError::params(format!(
            "invalid params: \"{key}\" must be a string, found {other}"
        ))),
    }
}

fn required<'a>(
    params: &'a Value,
    key: &str,
    method: &str,
    shape: &str,
) -> Result<&'a str, RpcError> {
    str_param(params, key)?.ok_or_else(|| {
        RpcError::params(format!(
            "invalid params: {method} needs \"{key}\"; params are {shape}"
        ))
    })
}

async fn dispatch(
    state: &AppState,
    method: &str,
    params: &Value,
    caller: &Caller,
) -> Result<Value, RpcError> {
    match method {
        "tools/list" => tools_list(state, &caller.principal, params),
        "tools/call" => {
            let name = required(params, "name", method, "{name, arguments, approved}")?;
            let args = match params.get("arguments") {
                None | Some(Value::Null) => json!({}),
                Some(a @ Value::Object(_)) => a.clone(),
                Some(other) => {
                    return Err(RpcError::params(format!(
                        "invalid params: \"arguments\" must be an object, found {other}"
                    )));
                }
            };
            let approved = match params.get("approved") {
                None | Some(Value::Null | Value::Bool(false)) => false,
                Some(Value::Bool(true)) if caller.may_approve => true,
                Some(Value::Bool(true)) => {
                    return Err(RpcError::new(
                        UNAUTHORIZED,
                        format!("unauthorized: {}", crate::manifest::why_not_approved(state)),
                    ));
                }
                Some(other) => {
                    return Err(RpcError::params(format!(
                        "invalid params: \"approved\" must be true or false, found {other}"
                    )));
                }
            };
            Ok(state
                .call_for(&caller.principal.viewer(), name, args, approved)
                .await
                .to_json())
        }
        "tools/describe" => describe(state, &caller.principal, params),
        "tools/search" => search(state, &caller.principal, params).await,
        "server/identity" => {
            // The identity and count of what this caller can call.
            let toolbox = state.toolbox_for(caller.principal.viewer());
            Ok(json!({
                "server_id": toolbox.view().identity(),
                "tools_count": toolbox.callable_heads().len(),
                "protocol_version": PROTOCOL_VERSION,
            }))
        }
        other => Err(RpcError::new(
            METHOD_NOT_FOUND,
            format!(
                "method not found: '{other}'; the methods are {}",
                METHODS.join(", ")
            ),
        )
        .with_data(json!({"methods": METHODS}))),
    }
}

fn tools_list(state: &AppState, principal: &Principal, params: &Value) -> Result<Value, RpcError> {
    let size = state.options().page_size;
    let start = match str_param(params, "cursor")? {
        None => 0,
        Some(c) => c.parse::<usize>().map_err(|_| {
            RpcError::params(format!(
                "invalid params: cursor {c:?} was not issued by this server; pass the nextCursor of a previous page"
            ))
        })?,
    };
    // Only this page's tools are read whole.
    let toolbox = state.toolbox_for(principal.viewer());
    let heads = toolbox.callable_heads();
    let view = toolbox.view();
    let tools: Vec<Value> = heads
        .iter()
        .skip(start)
        .take(size)
        .filter_map(|h| view.tool(h.id).ok())
        .map(listed_tool)
        .collect();
    let mut out = json!({ "tools": tools });
    if start.saturating_add(size) < heads.len() {
        out["nextCursor"] = json!((start + size).to_string());
    }
    Ok(out)
}

/// The `_meta` key that marks a spec-only tool in a `tools/list` (MCP and JSON-RPC).
pub const SPEC_ONLY_META: &str = "toolscout/spec_only";

/// A catalog tool as an MCP tool object, the form of a `tools/list` (JSON-RPC and MCP
/// alike): a spec-only tool's description starts with the note that it cannot be called
/// ([`listed_spec`]), and its `_meta` says [`SPEC_ONLY_META`]`: true`.
pub(crate) fn listed_tool(tool: Tool) -> Value {
    let spec_only = tool.is_spec_only();
    let mut v = to_mcp(&listed_spec(tool));
    if spec_only && let Some(obj) = v.as_object_mut() {
        obj.insert("_meta".to_owned(), json!({ SPEC_ONLY_META: true }));
    }
    v
}

fn unknown_tool(name: &str, did_you_mean: Vec<String>) -> RpcError {
    let hint = toolscout_search::did_you_mean(&did_you_mean)
        .unwrap_or_else(|| "use tools/search to find the right tool".to_owned());
    RpcError::params(format!("invalid params: no tool named '{name}'; {hint}"))
        .with_data(json!({"tool": name, "did_you_mean": did_you_mean}))
}

fn describe(state: &AppState, principal: &Principal, params: &Value) -> Result<Value, RpcError> {
    let shape = "{name, level (1, 2 or 3; default 2), parameter}";
    let name = required(params, "name", "tools/describe", shape)?;
    let tool = match state.toolbox_for(principal.viewer()).lookup(name) {
        Lookup::Found(tool) => tool,
        Lookup::Disabled { reason, .. } => {
            return Err(RpcError::params(format!(
                "invalid params: tool '{name}' is not available: {reason}"
            ))
            .with_data(json!({"tool": name, "reason": reason})));
        }
        Lookup::NotFound { did_you_mean } => return Err(unknown_tool(name, did_you_mean)),
    };
    if let Some(p) = str_param(params, "parameter")? {
        let detail = tool.spec.parameter(p).map_err(|e| {
            RpcError::params(format!("invalid params: {e}"))
                .with_data(json!({"parameters": tool.spec.parameter_names()}))
        })?;
        return Ok(marked(
            json!({"name": name, "parameter": serde_json::to_value(&detail).unwrap_or(Value::Null)}),
            tool.is_spec_only(),
        ));
    }
    let level = match params.get("level") {
        None | Some(Value::Null) => Level::L2,
        Some(v) => v
            .as_u64()
            .and_then(|n| u8::try_from(n).ok())
            .and_then(Level::from_number)
            .ok_or_else(|| {
                RpcError::params(format!(
                    "invalid params: \"level\" must be 1, 2 or 3, found {v}"
                ))
            })?,
    };
    let d = tool.spec.disclose(level);
    Ok(marked(
        json!({"name": name, "level": level.number(), "tool": d.to_json(), "text": d.to_text()}),
        tool.is_spec_only(),
    ))
}

async fn search(
    state: &AppState,
    principal: &Principal,
    params: &Value,
) -> Result<Value, RpcError> {
    let query = required(
        params,
        "query",
        "tools/search",
        "{query, page_token, limit}",
    )?;
    let limit = match params.get("limit") {
        None | Some(Value::Null) => toolscout_search::DEFAULT_PAGE_SIZE,
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                RpcError::params(format!(
                    "invalid params: \"limit\" must be a positive integer, found {v}"
                ))
            })?,
    };
    let q = SearchQuery::new(query)
        .with_limit(limit.clamp(1, toolscout_search::MAX_PAGE_SIZE))
        .with_page_token(str_param(params, "page_token")?.map(str::to_owned));
    let toolbox = state.toolbox_for(principal.viewer());
    let hits = tokio::task::spawn_blocking(move || toolbox.search(&q))
        .await
        .map_err(|e| RpcError::new(INTERNAL_ERROR, format!("search failed: {e}")))?
        .map_err(|e| RpcError::params(format!("invalid params: {e}")))?;
    let tools: Vec<Value> = hits
        .hits
        .iter()
        .map(|(t, h)| {
            marked(
                json!({"name": t.spec.name.as_str(), "summary": t.spec.summary, "match": h.tier.as_str()}),
                t.is_spec_only(),
            )
        })
        .collect();
    let mut out = json!({"tools": tools, "next_page_token": hits.next_page});
    if !hits.did_you_mean.is_empty() {
        out["did_you_mean"] = json!(hits.did_you_mean);
    }
    Ok(out)
}
