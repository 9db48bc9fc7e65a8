//! The tool-discovery manifest: `GET /api/v1/tools`, `GET /api/v1/tools/{name}`, and
//! `POST /api/v1/tools/{name}/invoke` (the route remote catalogs call tools through).

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use toolscout_discover::Lookup;
use toolscout_invoke::{ErrorKind, Outcome};
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::manifest::{
    PROTOCOL_VERSION, ToolCategory, ToolManifest, to_definition,
};

use crate::AppState;
use crate::error::AppError;

/// The `Cache-Control` of manifest answers.
pub const CACHE_CONTROL: &str = "public, max-age=60";

/// The manifest of the callable tools of `state`, generated now.
pub fn build_manifest(state: &AppState) -> ToolManifest {
    let specs = state.toolbox().callable_specs();
    let categories = if state.options().categories.is_empty() {
        derive_categories(&specs)
    } else {
        state.options().categories.clone()
    };
    ToolManifest {
        protocol_version: PROTOCOL_VERSION.to_owned(),
        scenario: state.options().scenario.clone(),
        tools: specs.iter().map(to_definition).collect(),
        categories,
        generated_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    }
}

/// One category per distinct `category` of `specs`, sorted by id; the name is the id
/// title-cased (`agent_lifecycle` → `Agent Lifecycle`).
pub fn derive_categories(specs: &[ToolSpec]) -> Vec<ToolCategory> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in specs {
        if let Some(c) = s.category.as_deref() {
            *counts.entry(c).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .map(|(id, n)| ToolCategory {
            id: id.to_owned(),
            name: title_case(id),
            description: Some(format!("{n} tool{}", if n == 1 { "" } else { "s" })),
            icon: None,
        })
        .collect()
}

fn title_case(id: &str) -> String {
    id.split(['_', '-', ' '])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            chars.next().map_or_else(String::new, |c| {
                c.to_uppercase().chain(chars).collect::<String>()
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Catches up with other processes' writes; 503 while the catalog cannot be served.
pub(crate) async fn ready(state: &AppState) -> Result<(), AppError> {
    if !state.is_serving() {
        return Err(AppError::unavailable(
            "the catalog is not being served right now; try again shortly",
        ));
    }
    let toolbox = state.toolbox().clone();
    match tokio::task::spawn_blocking(move || toolbox.catalog().reload()).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(AppError::unavailable(format!(
            "the catalog cannot be read: {e}"
        ))),
        Err(e) => Err(AppError::unavailable(format!(
            "the catalog cannot be read: {e}"
        ))),
    }
}

fn etag(state: &AppState) -> String {
    format!("\"{}\"", state.toolbox().catalog().identity())
}

fn not_modified(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().trim_start_matches("W/"))
        .any(|t| t == "*" || t == etag)
}

fn cached(mut response: Response, etag: &str) -> Response {
    let h = response.headers_mut();
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL),
    );
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    response
}

/// `GET /api/v1/tools`.
pub(crate) async fn get_manifest(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    ready(&state).await?;
    let etag = etag(&state);
    if not_modified(&headers, &etag) {
        return Ok(cached(StatusCode::NOT_MODIFIED.into_response(), &etag));
    }
    let manifest = build_manifest(&state);
    Ok(cached(Json(manifest).into_response(), &etag))
}

/// `GET /api/v1/tools/{name}`.
pub(crate) async fn get_definition(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    ready(&state).await?;
    let etag = etag(&state);
    match state.toolbox().lookup(&name) {
        Lookup::Found(tool) => {
            if not_modified(&headers, &etag) {
                return Ok(cached(StatusCode::NOT_MODIFIED.into_response(), &etag));
            }
            Ok(cached(
                Json(to_definition(&tool.spec)).into_response(),
                &etag,
            ))
        }
        Lookup::Disabled { reason, .. } => Err(AppError::not_found(format!(
            "tool '{name}' is not available: {reason}"
        ))
        .with_details(json!({"tool": name, "reason": reason}))),
        Lookup::NotFound { did_you_mean } => Err(unknown_tool(&name, did_you_mean)),
    }
}

/// The 404 of an unknown tool name, with the closest names.
pub(crate) fn unknown_tool(name: &str, did_you_mean: Vec<String>) -> AppError {
    let hint = if did_you_mean.is_empty() {
        String::new()
    } else {
        format!("; did you mean: {}?", did_you_mean.join(", "))
    };
    AppError::not_found(format!("no tool named '{name}'{hint}"))
        .with_details(json!({"tool": name, "did_you_mean": did_you_mean}))
}

/// The body of an invoke request: `{"args": {…}, "approved": true}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct InvokeBody {
    #[serde(default)]
    pub(crate) args: Value,
    /// The client approves the call of a tool that requires approval; honoured only from
    /// a client with the server's token.
    #[serde(default)]
    pub(crate) approved: bool,
}

impl InvokeBody {
    /// Whether the call is approved: refused (403) when the client asked for it without
    /// proving it holds the server's token, or the server has none.
    pub(crate) fn approval(&self, state: &AppState, headers: &HeaderMap) -> Result<bool, AppError> {
        if !self.approved {
            return Ok(false);
        }
        if state.options().token.is_some() && crate::has_token(state, headers) {
            return Ok(true);
        }
        Err(AppError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "only a client with the server's token may approve a call, and this server has none (--no-auth); start it with a token, or pre-approve the tool with --approve TOOL",
        ))
    }
}

/// The status of an invoke answer. The body is always the outcome; the status says
/// whether the request itself was wrong (400, 404, 423) or the call was made (200, even
/// when the tool failed: a failure is data).
pub(crate) fn outcome_response(outcome: &Outcome) -> Response {
    let status = match outcome.error().map(|e| e.kind) {
        Some(ErrorKind::InvalidArguments) => StatusCode::BAD_REQUEST,
        Some(ErrorKind::UnknownTool) => StatusCode::NOT_FOUND,
        Some(ErrorKind::Disabled | ErrorKind::NotRegistered) => StatusCode::LOCKED,
        _ => StatusCode::OK,
    };
    (status, Json(outcome.to_json())).into_response()
}

/// `POST /api/v1/tools/{name}/invoke` with `{"args": {…}}`.
pub(crate) async fn invoke_by_name(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Result<Json<InvokeBody>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, AppError> {
    let Json(body) = body?;
    let approved = body.approval(&state, &headers)?;
    let outcome = state.call_as(&name, body.args, approved).await;
    Ok(outcome_response(&outcome))
}
