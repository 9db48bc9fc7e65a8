//! The one error type of `toolscout-server`, and [`AppError`]: the one place where
//! errors become HTTP responses.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// What can go wrong while setting up or running a server or a remote catalog.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The catalog failed.
    #[error(transparent)]
    Catalog(#[from] toolscout_catalog::Error),
    /// The toolbox (search index) failed.
    #[error(transparent)]
    Discover(#[from] toolscout_discover::Error),
    /// A socket could not be bound or served.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, e.g. `binding 127.0.0.1:7411`.
        context: String,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// A remote catalog failed.
    #[error(transparent)]
    Remote(#[from] toolscout_remote::Error),
    /// The Model Context Protocol service failed.
    #[error("MCP: {reason}")]
    Mcp {
        /// What went wrong.
        reason: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An error answer: a status and a JSON body `{"error": {"code", "message"}}` (plus
/// `details` when there are any).
///
/// Every handler returns `Result<_, AppError>`; catalog errors convert with `?` and get
/// their status here:
///
/// | status | code | when |
/// |---|---|---|
/// | 400 | `invalid` | a bad label, id, spec, `impl` block, recipe (its `details` name the step), page token, body or query |
/// | 400 | `stale_page_token` | a manifest page token of an earlier version of the catalog: start again from the first page |
/// | 401 | `unauthorized` | no token where one is needed, or a token that is neither the server's nor a live tenant's |
/// | 403 | `forbidden` | `"approved": true` from a client without the server's token; a tenant on a route of the operator's, or sending a bundle `PATCH`'s `shared` or `owner` |
/// | 404 | `not_found` | no such bundle or tool |
/// | 409 | `conflict` | the `<slug, version>` exists (versions are immutable) |
/// | 409 | `built_in` | a change to a built-in bundle or tool other than its enabled flag, or a new tool or bundle named like a built-in one (in any case): permanent |
/// | 409 | `bundle_deleted` | a write to or inside a soft-deleted bundle |
/// | 423 | `bundle_disabled` | a write inside a disabled bundle: enabling it lifts the lock |
/// | 500 | `unlisted_route` | a route the router has but [`crate::routes()`] does not list: nobody may use it |
/// | 503 | `unavailable` | the catalog cannot be read now |
#[derive(Debug, Clone, PartialEq)]
pub struct AppError {
    /// The HTTP status.
    pub status: StatusCode,
    /// A short machine-friendly code.
    pub code: &'static str,
    /// What went wrong and what to do, for a person or a model.
    pub message: String,
    /// Structured context, when there is any.
    pub details: Option<Value>,
}

impl AppError {
    /// An error with this status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        AppError {
            status,
            code,
            message: message.into(),
            details: None,
        }
    }

    /// A 400 `invalid` error.
    pub fn invalid(message: impl Into<String>) -> Self {
        AppError::new(StatusCode::BAD_REQUEST, "invalid", message)
    }

    /// A 404 `not_found` error.
    pub fn not_found(message: impl Into<String>) -> Self {
        AppError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// A 503 `unavailable` error.
    pub fn unavailable(message: impl Into<String>) -> Self {
        AppError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
    }

    /// Sets the details.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The JSON body.
    pub fn body(&self) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(d) = &self.details {
            error["details"] = d.clone();
        }
        json!({ "error": error })
    }
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

impl std::error::Error for AppError {}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.body())).into_response();
        match self.status {
            StatusCode::UNAUTHORIZED => {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            StatusCode::SERVICE_UNAVAILABLE => {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            }
            _ => {}
        }
        response
    }
}

impl From<toolscout_catalog::Error> for AppError {
    fn from(e: toolscout_catalog::Error) -> Self {
        use toolscout_catalog::Error as E;
        let message = e.to_string();
        let (status, code) = match &e {
            E::Label { .. }
            | E::Id { .. }
            | E::Spec { .. }
            | E::Implementation { .. }
            | E::Recipe { .. }
            | E::PageToken { .. }
            | E::ToolBody { .. }
            | E::Archive { .. }
            | E::TenantName { .. }
            | E::Invalid { .. } => (StatusCode::BAD_REQUEST, "invalid"),
            E::BundleNotFound { .. }
            | E::ToolNotFound { .. }
            | E::ToolIdNotFound { .. }
            | E::TenantNotFound { .. }
            | E::TokenNotFound { .. } => (StatusCode::NOT_FOUND, "not_found"),
            E::Conflict { .. } | E::SlugTaken { .. } | E::TenantExists { .. } => {
                (StatusCode::CONFLICT, "conflict")
            }
            // A bundle the caller sees but does not own (shared, built-in for a tenant).
            E::NotOwner { .. } => (StatusCode::FORBIDDEN, "forbidden"),
            E::TenantLimit { .. } => (StatusCode::FORBIDDEN, "limit_exceeded"),
            E::Random { .. } => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            // Permanent: a built-in's content never changes, so this is a conflict with
            // the resource's nature, not a lock that could be lifted.
            E::BuiltIn { .. } | E::ReservedName { .. } => (StatusCode::CONFLICT, "built_in"),
            E::BundleDeleted { .. } => (StatusCode::CONFLICT, "bundle_deleted"),
            // Temporary: enabling the bundle lifts it, which is what 423 Locked means.
            E::BundleDisabled { .. } => (StatusCode::LOCKED, "bundle_disabled"),
            E::Io { .. }
            | E::Json { .. }
            | E::Journal { .. }
            | E::Database { .. }
            | E::SchemaTooNew { .. } => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        let error = AppError::new(status, code, message);
        match &e {
            E::ReservedName {
                what,
                name,
                builtin,
            } => {
                let mut details = serde_json::Map::new();
                details.insert((*what).to_owned(), json!(name));
                details.insert("builtIn".to_owned(), json!(builtin));
                error.with_details(Value::Object(details))
            }
            // Which step is wrong, for a client to point at it (the console's builder).
            E::Recipe { name, source } => error.with_details(json!({
                "recipe": name,
                "step": source.step.as_deref().map(|s| s.trim_matches('\'')),
                "problem": source.message,
            })),
            E::TenantLimit {
                what,
                limit,
                held,
                adding,
            } => error.with_details(
                json!({"what": what, "limit": limit, "held": held, "adding": adding}),
            ),
            _ => error,
        }
    }
}

impl From<Error> for AppError {
    fn from(e: Error) -> Self {
        match e {
            Error::Catalog(c) => c.into(),
            Error::Remote(_) => AppError::new(StatusCode::BAD_GATEWAY, "remote", e.to_string()),
            other => AppError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                other.to_string(),
            ),
        }
    }
}

impl From<toolscout_discover::Error> for AppError {
    fn from(e: toolscout_discover::Error) -> Self {
        match e {
            toolscout_discover::Error::Catalog(c) => c.into(),
            other => AppError::unavailable(other.to_string()),
        }
    }
}

impl From<axum::extract::rejection::JsonRejection> for AppError {
    fn from(r: axum::extract::rejection::JsonRejection) -> Self {
        body_rejection(r.status(), r.body_text())
    }
}

impl From<axum::extract::rejection::QueryRejection> for AppError {
    fn from(r: axum::extract::rejection::QueryRejection) -> Self {
        AppError::invalid(format!("invalid query string: {}", r.body_text()))
    }
}

impl From<axum::extract::rejection::BytesRejection> for AppError {
    fn from(r: axum::extract::rejection::BytesRejection) -> Self {
        body_rejection(r.status(), r.body_text())
    }
}

fn body_rejection(status: StatusCode, text: String) -> AppError {
    match status {
        StatusCode::PAYLOAD_TOO_LARGE => AppError::new(
            status,
            "too_large",
            format!("the request body is larger than the server accepts: {text}"),
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => AppError::new(
            status,
            "unsupported_media_type",
            format!("{text}; send the body as JSON with Content-Type: application/json"),
        ),
        _ => AppError::invalid(text),
    }
}
