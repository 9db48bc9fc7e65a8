//! [`InvokableTool`]: a [`ToolSpec`] plus how it runs ([`Implementation`]), read from the `impl`
//! block of a `tool.json`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::tool_file::{SPEC_ONLY_FUNC, ToolFile, ToolType};
use toolscout_spec::name::QualifiedName;

use crate::auth::AuthConfig;
use crate::extract::Extractor;
use crate::{Error, Result};

/// A tool that can be invoked: its spec, its implementation and its enabled flag.
#[derive(Debug, Clone, PartialEq)]
pub struct InvokableTool {
    /// What the model sees; its `parameters` validate the arguments.
    pub spec: ToolSpec,
    /// How the tool runs.
    pub implementation: Implementation,
    /// Whether calls are allowed.
    pub enabled: bool,
    /// Why calls are not allowed, shown to the model (e.g. "its bundle is disabled").
    pub disabled_reason: Option<String>,
    /// Where a catalog keeps it (owner, bundle, slug); `None` for a tool in no catalog.
    /// Approvals, secrets' grants and rate limits tell tools apart by it, never by name
    /// alone ([`crate::ToolSelector`]).
    pub qualified: Option<QualifiedName>,
    /// Who calls (a catalog viewer, say), for rate limits: each caller has its own
    /// budget of a tool's calls. `None`: one budget for every caller without one.
    pub caller: Option<String>,
}

impl InvokableTool {
    /// A native tool whose function has the spec's name.
    pub fn native(spec: ToolSpec) -> InvokableTool {
        let func = spec.name.to_string();
        InvokableTool {
            spec,
            implementation: Implementation::Native(NativeImpl { func }),
            enabled: true,
            disabled_reason: None,
            qualified: None,
            caller: None,
        }
    }

    /// An HTTP tool; the block is validated (see [`HttpImpl::validate`]).
    pub fn http(spec: ToolSpec, http: HttpImpl) -> Result<InvokableTool> {
        http.validate(&spec.name)?;
        Ok(InvokableTool {
            spec,
            implementation: Implementation::Http(Box::new(http)),
            enabled: true,
            disabled_reason: None,
            qualified: None,
            caller: None,
        })
    }

    /// A tool from its spec, type and `impl` block.
    pub fn from_parts(spec: ToolSpec, tool_type: ToolType, block: &Value) -> Result<InvokableTool> {
        let implementation = Implementation::parse(&spec.name, tool_type, block)?;
        Ok(InvokableTool {
            spec,
            implementation,
            enabled: true,
            disabled_reason: None,
            qualified: None,
            caller: None,
        })
    }

    /// A tool from a flat-file `tool.json`.
    pub fn from_tool_file(file: &ToolFile) -> Result<InvokableTool> {
        let spec = file.to_spec()?;
        let mut tool = InvokableTool::from_parts(spec, file.tool_type, &file.implementation)?;
        tool.enabled = file.is_enabled;
        Ok(tool)
    }

    /// Sets the enabled flag.
    #[must_use]
    pub fn with_enabled(mut self, enabled: bool) -> InvokableTool {
        self.enabled = enabled;
        self
    }

    /// Disables the tool, saying why.
    #[must_use]
    pub fn with_disabled_reason(mut self, reason: impl Into<String>) -> InvokableTool {
        self.enabled = false;
        self.disabled_reason = Some(reason.into());
        self
    }

    /// Says where a catalog keeps the tool ([`InvokableTool::qualified`]).
    #[must_use]
    pub fn with_qualified(mut self, qualified: Option<QualifiedName>) -> InvokableTool {
        self.qualified = qualified;
        self
    }

    /// Says who calls ([`InvokableTool::caller`]).
    #[must_use]
    pub fn with_caller(mut self, caller: impl Into<String>) -> InvokableTool {
        self.caller = Some(caller.into());
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The tool as rules and budgets know it: its qualified name when a catalog keeps
    /// it, else its name.
    pub fn identity(&self) -> String {
        self.qualified
            .as_ref()
            .map_or_else(|| self.spec.name.to_string(), ToString::to_string)
    }

    /// Whether the tool is spec only: a native tool of the function
    /// [`SPEC_ONLY_FUNC`], which no process registers; a call of it fails with
    /// [`ErrorKind::SpecOnly`](crate::ErrorKind::SpecOnly) once its arguments are checked.
    pub fn is_spec_only(&self) -> bool {
        matches!(&self.implementation, Implementation::Native(n) if n.func == SPEC_ONLY_FUNC)
    }
}

/// How a tool runs: the parsed `impl` block.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Implementation {
    /// A Rust function registered on the [`crate::Invoker`].
    Native(NativeImpl),
    /// A templated HTTP call.
    Http(Box<HttpImpl>),
    /// Calls of other catalog tools ([`toolscout_spec::recipe`]); it runs through a
    /// [`Composite`](crate::Composite) that knows the catalog
    /// ([`Invoker::invoke_composite`](crate::Invoker::invoke_composite)).
    Recipe(Box<toolscout_spec::recipe::Recipe>),
}

impl Implementation {
    /// Reads the `impl` block of a tool of type `tool_type`.
    pub fn parse(tool: &str, tool_type: ToolType, block: &Value) -> Result<Implementation> {
        let err = |reason: String| Error::ImplBlock {
            tool: tool.to_owned(),
            reason,
        };
        match tool_type {
            ToolType::Native => {
                let native: NativeImpl = serde_json::from_value(block.clone())
                    .map_err(|e| err(format!("expected {{\"func\": \"<name>\"}}: {e}")))?;
                if native.func.is_empty() {
                    return Err(err("\"func\" must not be empty".to_owned()));
                }
                Ok(Implementation::Native(native))
            }
            ToolType::Http => {
                let http: HttpImpl = serde_json::from_value(block.clone())
                    .map_err(|e| err(format!("not a valid HTTP block: {e}")))?;
                http.validate(tool)?;
                Ok(Implementation::Http(Box::new(http)))
            }
            ToolType::Recipe => toolscout_spec::recipe::Recipe::parse(block)
                .map(|r| Implementation::Recipe(Box::new(r)))
                .map_err(|e| err(e.to_string())),
            // `ToolType` may grow; an unknown kind is refused rather than guessed.
            #[allow(unreachable_patterns)]
            _ => Err(err(format!("unsupported tool type {tool_type:?}"))),
        }
    }

    /// The block as JSON, the form it has in `tool.json`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The `impl` block of a native tool: `{"func": "<name>"}` (the spec's `goFunc` reads too).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NativeImpl {
    /// The name the function is registered under.
    #[serde(alias = "goFunc")]
    pub func: String,
}

/// How an HTTP response body is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponseEncoding {
    /// Parsed as JSON.
    #[default]
    Json,
    /// Kept as text.
    Text,
    /// A toolscout outcome, as another toolscout server's invoke route answers:
    /// `{"ok": true, "value": …}` gives `value` (then `extractExpr`, if any, applies to
    /// it), `{"ok": false, "error": {"kind", "message", "details"}}` gives that error,
    /// whatever the HTTP status. A body that is not an outcome is read as JSON.
    Outcome,
}

/// What a non-success status or an extraction that finds nothing returns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorMode {
    /// An error result.
    #[default]
    Fail,
    /// A success with a `null` value. Transport errors, timeouts and refused hosts still fail.
    Empty,
}

/// The `impl` block of an HTTP tool (camelCase keys, as in `tool.json`).
///
/// ```
/// use serde_json::json;
/// use toolscout_invoke::HttpImpl;
///
/// let block: HttpImpl = serde_json::from_value(json!({
///     "method": "GET",
///     "urlTemplate": "https://api.example.com/v1/current.json?q=${city}&key=${WEATHER_API_KEY}",
///     "extractExpr": "$.current.condition.text"
/// })).unwrap();
/// assert_eq!(block.success_codes, Vec::<u16>::new());
/// assert!(block.validate("weather").is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpImpl {
    /// HTTP method, `GET` by default.
    #[serde(default = "get")]
    pub method: String,
    /// The URL, with `${var}` placeholders; must start with `http://` or `https://`.
    pub url_template: String,
    /// Arguments added to the URL's query as `name=value` when the call gives them (and
    /// they are not `null`): the optional query parameters a template cannot leave out.
    /// An array repeats the name for each item; an object is sent as JSON text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub query_params: Vec<String>,
    /// Header templates.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Body template; JSON-escaped values when the body is JSON (it starts with `{` or `[`,
    /// or a `Content-Type` header says JSON). `${@args}` stands for the whole arguments
    /// object, written as raw JSON (`{"args":${@args}}`). Empty: no body.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body_template: String,
    /// Accepted statuses; empty means any 2xx.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub success_codes: Vec<u16>,
    /// Timeout of one attempt, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// How the body is read.
    #[serde(default)]
    pub response_encoding: ResponseEncoding,
    /// A JSONPath (RFC 9535, starts with `$`) or a regular expression (`regex:` prefix, or
    /// anything not starting with `$`) that picks the value out of the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extract_expr: Option<String>,
    /// What a non-success status returns.
    #[serde(default)]
    pub error_mode: ErrorMode,
    /// Request signing or OAuth2 tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthConfig>,
}

fn get() -> String {
    "GET".to_owned()
}

impl HttpImpl {
    /// A `GET` of `url_template` with every other field at its default.
    pub fn get(url_template: impl Into<String>) -> HttpImpl {
        HttpImpl {
            method: get(),
            url_template: url_template.into(),
            query_params: Vec::new(),
            headers: BTreeMap::new(),
            body_template: String::new(),
            success_codes: Vec::new(),
            timeout_ms: None,
            response_encoding: ResponseEncoding::Json,
            extract_expr: None,
            error_mode: ErrorMode::Fail,
            auth: None,
        }
    }

    /// Checks the rules of the tools spec: the URL template starts with `http://` or
    /// `https://`, the method and status codes are valid, the extraction compiles.
    pub fn validate(&self, tool: &str) -> Result<()> {
        let err = |reason: String| Error::ImplBlock {
            tool: tool.to_owned(),
            reason,
        };
        let lower = self.url_template.to_ascii_lowercase();
        if !(lower.starts_with("http://") || lower.starts_with("https://")) {
            return Err(err(format!(
                "urlTemplate must start with http:// or https://, found {:?}",
                self.url_template
            )));
        }
        if reqwest::Method::from_bytes(self.method.to_ascii_uppercase().as_bytes()).is_err() {
            return Err(err(format!("invalid HTTP method {:?}", self.method)));
        }
        if let Some(bad) = self
            .success_codes
            .iter()
            .find(|c| !(100..=599).contains(*c))
        {
            return Err(err(format!("successCodes: {bad} is not an HTTP status")));
        }
        if self.timeout_ms == Some(0) {
            return Err(err("timeoutMs must be greater than 0".to_owned()));
        }
        if let Some(expr) = &self.extract_expr {
            Extractor::parse(expr).map_err(|reason| err(format!("extractExpr: {reason}")))?;
        }
        if let Some(auth) = &self.auth {
            auth.validate()
                .map_err(|reason| err(format!("auth: {reason}")))?;
        }
        Ok(())
    }

    /// Whether `status` counts as success.
    pub fn is_success(&self, status: u16) -> bool {
        if self.success_codes.is_empty() {
            (200..300).contains(&status)
        } else {
            self.success_codes.contains(&status)
        }
    }

    /// Whether the body template is JSON.
    pub(crate) fn body_is_json(&self) -> bool {
        let header_says_json = self.headers.iter().any(|(k, v)| {
            k.eq_ignore_ascii_case("content-type") && v.to_ascii_lowercase().contains("json")
        });
        let t = self.body_template.trim_start();
        header_says_json || t.starts_with('{') || t.starts_with('[')
    }
}
