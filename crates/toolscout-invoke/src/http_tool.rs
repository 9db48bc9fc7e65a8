//! Running an HTTP tool: expand the templates, authenticate, send with retries, check
//! the status, decode and extract.

use std::time::Duration;

use reqwest::{Method, Url};
use serde_json::{Map, Value, json};

use crate::auth::{self, AuthConfig, TokenCache};
use crate::extract::Extractor;
use crate::hosts::display_url;
use crate::http::{HttpConfig, HttpRequest, HttpResponse, send_with_retry};
use crate::template::{Target, expand, placeholders};
use crate::tool::{ErrorMode, HttpImpl, ResponseEncoding};
use crate::{ErrorKind, InvokableTool, SecretStore, ToolError};

/// Longest excerpt of a response body quoted in an error.
const EXCERPT: usize = 500;

/// What an HTTP tool needs from the invoker.
pub(crate) struct HttpContext<'a> {
    pub(crate) config: &'a HttpConfig,
    pub(crate) secrets: &'a SecretStore,
    pub(crate) tokens: &'a TokenCache,
}

pub(crate) async fn run(
    cx: &HttpContext<'_>,
    tool: &InvokableTool,
    http: &HttpImpl,
    args: &Value,
) -> Result<Value, ToolError> {
    let empty = Map::new();
    let args = args.as_object().unwrap_or(&empty);
    let timeout = http
        .timeout_ms
        .map(Duration::from_millis)
        .unwrap_or(cx.config.default_timeout);
    let retries = if tool.spec.metadata.idempotent {
        cx.config.retry.max_retries
    } else {
        0
    };
    let (mut req, secrets) = build_request(cx, tool, http, args)?;
    let secrets = &secrets;
    // The access token is as secret as the credentials it was bought with: whatever the
    // service echoes of it is redacted like a secret.
    let mut token_secret = SecretStore::default();
    match &http.auth {
        Some(AuthConfig::Hmac(h)) => auth::sign(h, &mut req, secrets)?,
        Some(AuthConfig::OAuth2(o)) => {
            let token = cx
                .tokens
                .token(tool, o, cx.secrets, cx.config, timeout)
                .await?;
            req.headers
                .push(("Authorization".to_owned(), format!("Bearer {token}")));
            token_secret.insert("oauth2 access token", token);
        }
        None => {}
    }
    let result = send_and_decode(
        cx,
        tool,
        http,
        &mut req,
        &mut token_secret,
        timeout,
        retries,
    )
    .await;
    if token_secret.is_empty() {
        return result;
    }
    result
        .map(|v| token_secret.redact_value(&v))
        .map_err(|mut e| {
            e.message = token_secret.redact(&e.message);
            e.details = token_secret.redact_value(&e.details);
            e
        })
}

/// Sends the request built by [`run`] (again once with a fresh OAuth2 token after a
/// 401), and turns the response into the call's value.
async fn send_and_decode(
    cx: &HttpContext<'_>,
    tool: &InvokableTool,
    http: &HttpImpl,
    req: &mut HttpRequest,
    token_secret: &mut SecretStore,
    timeout: Duration,
    retries: u32,
) -> Result<Value, ToolError> {
    let oauth_token_used = matches!(http.auth, Some(AuthConfig::OAuth2(_)));
    let mut resp = send_with_retry(
        cx.config,
        req,
        timeout,
        cx.config.max_response_bytes,
        retries,
    )
    .await?;
    if resp.status == 401
        && oauth_token_used
        && let Some(AuthConfig::OAuth2(o)) = &http.auth
    {
        // The token may have been revoked early: fetch a fresh one and try once more.
        cx.tokens.invalidate(tool, o, cx.secrets).await;
        let token = cx
            .tokens
            .token(tool, o, cx.secrets, cx.config, timeout)
            .await?;
        req.headers
            .retain(|(k, _)| !k.eq_ignore_ascii_case("authorization"));
        req.headers
            .push(("Authorization".to_owned(), format!("Bearer {token}")));
        token_secret.insert("oauth2 access token, refreshed", token);
        resp = send_with_retry(cx.config, req, timeout, cx.config.max_response_bytes, 0).await?;
    }
    // Every secret of the invoker and the access tokens of this call: what the service
    // echoes of them is redacted before an extraction or an excerpt picks from it, so
    // that no expression can take a secret a piece at a time.
    let mut secrets = cx.secrets.clone();
    secrets.extend(token_secret.clone());
    finish(&req.method, http, &resp, &secrets)
}

/// What a response gives the call: a remote outcome's value or error, a status error, or
/// the body decoded and extracted, with `secrets` redacted before an extraction or an
/// excerpt picks from it.
pub(crate) fn finish(
    method: &Method,
    http: &HttpImpl,
    resp: &HttpResponse,
    secrets: &SecretStore,
) -> Result<Value, ToolError> {
    if http.response_encoding == ResponseEncoding::Outcome
        && let Some(outcome) = remote_outcome(resp)
    {
        return match outcome {
            Ok(value) => extract(http, resp, secrets.redact_value(&value), secrets),
            Err(e) => empty_or(http.error_mode, e),
        };
    }
    if !http.is_success(resp.status) {
        return empty_or(http.error_mode, status_error(method, http, resp, secrets));
    }
    decode(http, resp, secrets)
}

/// The body as a toolscout outcome (`{"ok": true, "value"}` or `{"ok": false, "error"}`),
/// or `None` when it is not one.
fn remote_outcome(resp: &HttpResponse) -> Option<Result<Value, ToolError>> {
    let body: Value = serde_json::from_slice(&resp.body).ok()?;
    match body.get("ok")?.as_bool()? {
        true => Some(Ok(body.get("value").cloned().unwrap_or(Value::Null))),
        false => {
            let error = body.get("error")?;
            let word = error
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("tool_failed");
            let kind = serde_json::from_value::<ErrorKind>(Value::String(word.to_owned()))
                .unwrap_or(ErrorKind::ToolFailed);
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("the remote tool failed without a message");
            let mut details = Map::new();
            if let Some(Value::Object(d)) = error.get("details") {
                details.extend(d.clone());
            }
            details.insert("remote_status".to_owned(), json!(resp.status));
            if kind.as_str() != word {
                details.insert("remote_kind".to_owned(), json!(word));
            }
            Some(Err(
                ToolError::new(kind, message).with_details(Value::Object(details))
            ))
        }
    }
}

/// The request of one call, and the secrets it may use: those granted to the tool or to
/// the host its URL names (see [`SecretStore::scoped`]).
fn build_request(
    cx: &HttpContext<'_>,
    tool: &InvokableTool,
    http: &HttpImpl,
    args: &Map<String, Value>,
) -> Result<(HttpRequest, SecretStore), ToolError> {
    let url_text = expand(
        &http.url_template,
        Target::Url,
        "urlTemplate",
        args,
        cx.secrets,
    )?;
    let mut url = Url::parse(&url_text).map_err(|e| {
        ToolError::new(
            ErrorKind::Misconfigured,
            format!("the urlTemplate does not expand to a valid URL: {e}"),
        )
    })?;
    let secrets = cx.secrets.scoped(
        tool.name(),
        tool.qualified.as_ref(),
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or(0),
    );
    // A secret in the URL itself must be granted to this tool or to that host too.
    for name in placeholders(&http.url_template) {
        if args.get(name).is_none_or(Value::is_null) && secrets.is_withheld(name) {
            expand(
                &format!("${{{name}}}"),
                Target::Url,
                "urlTemplate",
                args,
                &secrets,
            )?;
        }
    }
    add_query_params(&mut url, &http.query_params, args);
    let method = Method::from_bytes(http.method.to_ascii_uppercase().as_bytes()).map_err(|_| {
        ToolError::new(
            ErrorKind::Misconfigured,
            format!("invalid HTTP method {:?}", http.method),
        )
    })?;
    let mut headers = Vec::with_capacity(http.headers.len());
    let mut secret_headers = Vec::new();
    for (name, template) in &http.headers {
        let field = format!("headers.{name}");
        let value = expand(template, Target::Header, &field, args, &secrets)?;
        if carries_secret(template, args, &secrets) {
            secret_headers.push(name.clone());
        }
        headers.push((name.clone(), value));
    }
    let body = if http.body_template.is_empty() {
        Vec::new()
    } else {
        let target = if http.body_is_json() {
            if !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            {
                headers.push(("Content-Type".to_owned(), "application/json".to_owned()));
            }
            Target::Json
        } else {
            Target::Text
        };
        expand(&http.body_template, target, "bodyTemplate", args, &secrets)?.into_bytes()
    };
    let secret_body = carries_secret(&http.body_template, args, &secrets);
    Ok((
        HttpRequest {
            method,
            url,
            headers,
            body,
            truncate_body: false,
            secret_headers,
            secret_body,
        },
        secrets,
    ))
}

/// Whether a template puts a secret in (a placeholder that no argument fills).
fn carries_secret(template: &str, args: &Map<String, Value>, secrets: &SecretStore) -> bool {
    placeholders(template)
        .into_iter()
        .any(|n| args.get(n).is_none_or(Value::is_null) && secrets.contains(n))
}

/// Appends the given `queryParams` arguments to the URL's query.
fn add_query_params(url: &mut Url, names: &[String], args: &Map<String, Value>) {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    for name in names {
        match args.get(name) {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for item in items.iter().filter(|v| !v.is_null()) {
                    url.query_pairs_mut().append_pair(name, &text(item));
                }
            }
            Some(v) => {
                url.query_pairs_mut().append_pair(name, &text(v));
            }
        }
    }
}

fn status_error(
    method: &Method,
    http: &HttpImpl,
    resp: &HttpResponse,
    secrets: &SecretStore,
) -> ToolError {
    let expected = if http.success_codes.is_empty() {
        "a 2xx status".to_owned()
    } else {
        format!("one of {:?}", http.success_codes)
    };
    let excerpt = excerpt(&resp.body, secrets);
    let hint = match resp.status {
        400 | 404 | 409 | 422 => " Check the arguments.",
        401 | 403 => " The credentials were refused; this is not fixable by changing arguments.",
        429 => " The service is rate-limiting; try again later.",
        s if s >= 500 => " The service failed; try again later.",
        _ => "",
    };
    ToolError::new(
        ErrorKind::HttpStatus,
        format!(
            "{method} {} answered {}, expected {expected}.{hint}",
            display_url(&resp.url),
            resp.status
        ),
    )
    .with_details(json!({"status": resp.status, "body": excerpt}))
}

/// The response's value: its body as JSON or text, with `secrets` redacted before the
/// extraction picks from it.
fn decode(http: &HttpImpl, resp: &HttpResponse, secrets: &SecretStore) -> Result<Value, ToolError> {
    let raw = String::from_utf8_lossy(&resp.body);
    let extractor = extractor(http)?;
    let wants_json = http.response_encoding != ResponseEncoding::Text
        || extractor.as_ref().is_some_and(Extractor::needs_json);
    // JSON is parsed first and redacted as a value: redacting its text could break it.
    let text = secrets.redact(&raw);
    let body = if wants_json {
        match serde_json::from_str::<Value>(&raw) {
            Ok(v) => secrets.redact_value(&v),
            Err(e) => {
                return empty_or(
                    http.error_mode,
                    ToolError::failed(format!(
                        "the response of {} is not valid JSON ({e}); the tool expects JSON",
                        display_url(&resp.url)
                    ))
                    .with_details(json!({"status": resp.status, "body": excerpt_of(&text)})),
                );
            }
        }
    } else {
        Value::String(text.clone())
    };
    apply(http, resp, extractor, body, &text)
}

/// The value of a remote outcome (already redacted), through `extractExpr` when there
/// is one.
fn extract(
    http: &HttpImpl,
    resp: &HttpResponse,
    value: Value,
    secrets: &SecretStore,
) -> Result<Value, ToolError> {
    let extractor = extractor(http)?;
    let text = match &value {
        Value::String(s) => s.clone(),
        other => secrets.redact(&other.to_string()),
    };
    apply(http, resp, extractor, value, &text)
}

fn extractor(http: &HttpImpl) -> Result<Option<Extractor>, ToolError> {
    http.extract_expr
        .as_deref()
        .map(|expr| {
            Extractor::parse(expr).map_err(|reason| {
                ToolError::new(ErrorKind::Misconfigured, format!("extractExpr: {reason}"))
            })
        })
        .transpose()
}

fn apply(
    http: &HttpImpl,
    resp: &HttpResponse,
    extractor: Option<Extractor>,
    body: Value,
    text: &str,
) -> Result<Value, ToolError> {
    let Some(extractor) = extractor else {
        return Ok(body);
    };
    match extractor.apply(&body, text) {
        Ok(Some(v)) => Ok(v),
        Err(why) => Err(ToolError::new(
            ErrorKind::TooLarge,
            format!(
                "the response of {} was not searched with {}: {why}",
                display_url(&resp.url),
                http.extract_expr.as_deref().unwrap_or_default()
            ),
        )),
        Ok(None) => empty_or(
            http.error_mode,
            ToolError::failed(format!(
                "the response of {} has nothing at {}",
                display_url(&resp.url),
                http.extract_expr.as_deref().unwrap_or_default()
            ))
            .with_details(json!({
                "extract_expr": http.extract_expr,
                "body": excerpt_of(text),
            })),
        ),
    }
}

fn empty_or(mode: ErrorMode, e: ToolError) -> Result<Value, ToolError> {
    match mode {
        ErrorMode::Fail => Err(e),
        ErrorMode::Empty => Ok(Value::Null),
    }
}

/// The start of a response body, with `secrets` redacted first (a cut could otherwise
/// leave a piece of one).
fn excerpt(body: &[u8], secrets: &SecretStore) -> String {
    excerpt_of(&secrets.redact(&String::from_utf8_lossy(body)))
}

fn excerpt_of(text: &str) -> String {
    if text.chars().count() <= EXCERPT {
        text.to_owned()
    } else {
        text.chars().take(EXCERPT).collect::<String>() + "…"
    }
}
