//! [`Invoker`]: validate, dispatch, validate again, report.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolscout_spec::ToolSpec;

use crate::approval::{Approval, ApprovalRequest, Approver, PlannedStep};
use crate::auth::TokenCache;
use crate::http_tool::{self, HttpContext};
use crate::native::BoxFuture;
use crate::native::DynTool;
use crate::ratelimit::RateLimiter;
use crate::tool::Implementation;
use crate::usage::{Dispatch, UsageEvent, UsageSink};
use crate::validate::{Validators, check_arguments, check_output};
use crate::{
    Error, ErrorKind, HttpConfig, InvokableTool, NativeTool, Outcome, Result, SecretStore,
    ToolError,
};

/// Calls tools: native ones registered on it, and HTTP ones described by their `impl`
/// block.
///
/// Each [`Invoker::invoke`] runs these steps and never panics or returns `Err`; a
/// failure at any step is an [`Outcome::Err`] for the model:
///
/// 1. refuse a disabled tool (`disabled`);
/// 2. validate the arguments against the tool's schema (`invalid_arguments`, naming each
///    failing path and what was expected);
/// 3. take a slot of the tool's calls-per-minute limit (`rate_limited`);
/// 4. ask the [`Approver`] when the tool requires approval (`approval_refused`): its spec
///    says so, or the native function it calls was registered so (an edited spec cannot
///    lower that);
/// 5. dispatch within the tool's timeout (`timeout`, and the dispatch's own kinds);
/// 6. validate the result against the output schema (`output_invalid`);
/// 7. redact secrets from the result or the error, and send a [`UsageEvent`] off the
///    call's path.
///
/// Cloning is cheap and shares the rate limits, token cache and sinks.
#[derive(Clone)]
pub struct Invoker {
    natives: BTreeMap<String, Registered>,
    http: Arc<HttpConfig>,
    secrets: Arc<SecretStore>,
    approver: Option<Arc<dyn Approver>>,
    usage: Option<Arc<Dispatch>>,
    limiter: Arc<RateLimiter>,
    tokens: Arc<TokenCache>,
    validators: Arc<Validators>,
    native_timeout: Duration,
    max_timeout: Duration,
}

/// The longest any one call may run by default, whatever its `timeout_seconds` says
/// ([`Invoker::with_max_timeout`]): 10 minutes.
///
/// **Rationale:** `timeout_seconds` comes from a catalog entry, which anyone who may put
/// a tool writes; `4000000000` was accepted (126 years). An HTTP tool without one was
/// bounded only per attempt.
pub const DEFAULT_MAX_TIMEOUT: Duration = Duration::from_secs(600);

/// The steps of a composite tool (a recipe), for
/// [`Invoker::invoke_composite`]: the invoker validates the call, asks one approval for
/// the whole plan, bounds the time and checks, redacts and reports the result; the
/// composite resolves and runs the steps (each of them an invoker call of its own,
/// approved by the one approval).
pub trait Composite: Send + Sync {
    /// What the call will run. An error ends the call before anything runs (a step's
    /// tool that is missing or disabled).
    fn plan(&self) -> BoxFuture<'_, std::result::Result<Vec<PlannedStep>, ToolError>>;
    /// Runs the steps on the validated arguments.
    fn run(&self, args: Value) -> BoxFuture<'_, std::result::Result<Value, ToolError>>;
}

#[derive(Clone)]
struct Registered {
    tool: Arc<dyn DynTool>,
    spec: ToolSpec,
}

impl Default for Invoker {
    fn default() -> Self {
        Invoker {
            natives: BTreeMap::new(),
            http: Arc::new(HttpConfig::default()),
            secrets: Arc::new(SecretStore::default()),
            approver: None,
            usage: None,
            limiter: Arc::default(),
            tokens: Arc::default(),
            validators: Arc::default(),
            native_timeout: Duration::from_secs(60),
            max_timeout: DEFAULT_MAX_TIMEOUT,
        }
    }
}

impl fmt::Debug for Invoker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Invoker")
            .field("natives", &self.natives.keys().collect::<Vec<_>>())
            .field("http", &self.http)
            .field("secrets", &self.secrets)
            .field("approver", &self.approver.is_some())
            .field("usage", &self.usage.is_some())
            .field("native_timeout", &self.native_timeout)
            .field("max_timeout", &self.max_timeout)
            .finish()
    }
}

impl Invoker {
    /// Sets the HTTP policy and limits (allowed hosts, sizes, retries).
    #[must_use]
    pub fn with_http_config(mut self, config: HttpConfig) -> Self {
        self.http = Arc::new(config);
        self
    }

    /// Sets the secrets that `${NAME}` placeholders may use.
    #[must_use]
    pub fn with_secrets(mut self, secrets: SecretStore) -> Self {
        self.secrets = Arc::new(secrets);
        self
    }

    /// Sets who approves calls to tools with `requires_approval`. Without one, such
    /// calls are refused.
    #[must_use]
    pub fn with_approver(mut self, approver: impl Approver + 'static) -> Self {
        self.approver = Some(Arc::new(approver));
        self
    }

    /// Who approves calls to tools with `requires_approval`, when anyone does (see
    /// [`Invoker::with_approver`]).
    pub fn approver(&self) -> Option<&dyn Approver> {
        self.approver.as_deref()
    }

    /// Sets where usage events go.
    #[must_use]
    pub fn with_usage_sink(mut self, sink: impl UsageSink) -> Self {
        self.usage = Some(Arc::new(Dispatch::new(Arc::new(sink))));
        self
    }

    /// Sets the timeout of native calls whose spec has no `timeout_seconds` (60 s by default).
    #[must_use]
    pub fn with_native_timeout(mut self, timeout: Duration) -> Self {
        self.native_timeout = timeout;
        self
    }

    /// Sets the longest any one call may run, a recipe's whole run included, whatever
    /// the tool's `timeout_seconds` says ([`DEFAULT_MAX_TIMEOUT`] by default; at least
    /// 1 ms).
    #[must_use]
    pub fn with_max_timeout(mut self, max: Duration) -> Self {
        self.max_timeout = max.max(Duration::from_millis(1));
        self
    }

    /// The longest any one call may run ([`Invoker::with_max_timeout`]).
    pub fn max_timeout(&self) -> Duration {
        self.max_timeout
    }

    /// The HTTP policy.
    pub fn http_config(&self) -> &HttpConfig {
        &self.http
    }

    /// Registers a typed native tool; returns its spec.
    pub fn register<T: NativeTool>(&mut self, tool: T) -> Result<ToolSpec> {
        self.register_dyn(Arc::new(tool))
    }

    /// Registers an object-safe native tool; returns its spec.
    pub fn register_dyn(&mut self, tool: Arc<dyn DynTool>) -> Result<ToolSpec> {
        let name = tool.name().to_owned();
        if self.natives.contains_key(&name) {
            return Err(Error::DuplicateTool { name });
        }
        let spec = tool.spec()?;
        self.natives.insert(
            name,
            Registered {
                tool,
                spec: spec.clone(),
            },
        );
        Ok(spec)
    }

    /// Whether a native function of this name is registered.
    pub fn is_registered(&self, func: &str) -> bool {
        self.natives.contains_key(func)
    }

    /// The names of the registered native tools, sorted (what a catalog needs to know
    /// which native tools can run).
    pub fn native_names(&self) -> Vec<&str> {
        self.natives.keys().map(String::as_str).collect()
    }

    /// The specs of the registered native tools, by name.
    pub fn native_specs(&self) -> Vec<ToolSpec> {
        self.natives.values().map(|r| r.spec.clone()).collect()
    }

    /// A registered native tool as an [`InvokableTool`], with the spec it registered with.
    pub fn native_tool(&self, name: &str) -> Option<InvokableTool> {
        self.natives
            .get(name)
            .map(|r| InvokableTool::native(r.spec.clone()))
    }

    /// Calls a registered native tool by name (`unknown_tool` when there is none).
    pub async fn invoke_native(&self, name: &str, args: Value) -> Outcome {
        match self.native_tool(name) {
            Some(tool) => self.invoke(&tool, args).await,
            None => {
                let known: Vec<&String> = self.natives.keys().collect();
                let e = ToolError::new(
                    ErrorKind::UnknownTool,
                    format!(
                        "there is no tool named '{name}'; check the name against the tool list"
                    ),
                )
                .with_details(json!({"tool": name, "registered": known}));
                self.report(name, chrono::Utc::now(), Duration::ZERO, &Err(e.clone()));
                Outcome::Err(e)
            }
        }
    }

    /// Calls `tool` with `args` (a JSON object; `null` reads as `{}`).
    pub async fn invoke(&self, tool: &InvokableTool, args: Value) -> Outcome {
        self.invoke_inner(tool, args, false, None).await
    }

    /// Like [`Invoker::invoke`], for a call the caller has had approved already (an
    /// agent loop's own approver): the [`Approver`] step is skipped.
    pub async fn invoke_approved(&self, tool: &InvokableTool, args: Value) -> Outcome {
        self.invoke_inner(tool, args, true, None).await
    }

    /// Calls a composite tool (a recipe, [`crate::Implementation::Recipe`]) whose steps
    /// `composite` runs, with every guarantee of [`Invoker::invoke`]: the arguments
    /// are validated, the rate limit taken, **one** approval asked for the whole call
    /// when the recipe or any of its steps requires approval (the request lists the
    /// steps, [`ApprovalRequest::steps`]; refused, nothing runs), the run bounded by
    /// the recipe's `timeout_seconds` (default
    /// [`DEFAULT_TIMEOUT_SECONDS`](toolscout_spec::recipe::DEFAULT_TIMEOUT_SECONDS)),
    /// the result checked against its output schema, secrets redacted, the call reported.
    pub async fn invoke_composite(
        &self,
        tool: &InvokableTool,
        args: Value,
        approved: bool,
        composite: &dyn Composite,
    ) -> Outcome {
        self.invoke_inner(tool, args, approved, Some(composite))
            .await
    }

    /// Whether a call of `tool` needs approval: its spec says so, or the native function
    /// it calls was registered so. **Rationale:** a catalog entry can be edited; the
    /// native function's own registration cannot, so an entry may ask for more, never
    /// for less.
    pub fn requires_approval(&self, tool: &InvokableTool) -> bool {
        tool.spec.metadata.requires_approval
            || match &tool.implementation {
                Implementation::Native(native) => self
                    .natives
                    .get(&native.func)
                    .is_some_and(|r| r.spec.metadata.requires_approval),
                Implementation::Http(_) | Implementation::Recipe(_) => false,
            }
    }

    async fn invoke_inner(
        &self,
        tool: &InvokableTool,
        args: Value,
        approved: bool,
        composite: Option<&dyn Composite>,
    ) -> Outcome {
        let at = chrono::Utc::now();
        let started = Instant::now();
        let result = self
            .run(tool, args, approved, composite)
            .await
            .map(|v| self.redact_result(v))
            .map_err(|e| self.redact(e));
        let elapsed = started.elapsed();
        match &result {
            Ok(_) => tracing::debug!(tool = %tool.spec.name, ?elapsed, "tool call succeeded"),
            Err(e) => {
                tracing::debug!(tool = %tool.spec.name, kind = %e.kind, message = %e.message, "tool call failed")
            }
        }
        self.report(tool.name(), at, elapsed, &result);
        Outcome::from(result)
    }

    async fn run(
        &self,
        tool: &InvokableTool,
        args: Value,
        approved: bool,
        composite: Option<&dyn Composite>,
    ) -> std::result::Result<Value, ToolError> {
        let spec = &tool.spec;
        let name = spec.name.as_str();
        if !tool.enabled {
            let why = tool
                .disabled_reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default();
            return Err(ToolError::new(
                ErrorKind::Disabled,
                format!(
                    "tool '{name}' is disabled{why}; use another tool or ask the user to enable it"
                ),
            )
            .with_details(json!({"tool": name, "reason": tool.disabled_reason})));
        }
        let args = if args.is_null() { json!({}) } else { args };
        check_arguments(&self.validators, spec, &args)?;
        // Before the rate limit and approval: nobody should approve a call that cannot run.
        if tool.is_spec_only() {
            return Err(ToolError::spec_only(name));
        }
        // One budget per tool (where a catalog keeps it, not its name: two owners' tools
        // of one name are two tools) and per caller (a shared tool's calls by one tenant
        // do not use up another's).
        if let Some(limit) = spec.metadata.rate_limit_per_minute
            && let Err(wait) = self.limiter.acquire(
                &format!(
                    "{}\u{1f}{}",
                    tool.caller.as_deref().unwrap_or_default(),
                    tool.identity()
                ),
                limit,
            )
        {
            let secs = wait.as_secs() + 1;
            return Err(ToolError::new(
                ErrorKind::RateLimited,
                format!("tool '{name}' allows {limit} calls per minute; try again in {secs} s"),
            )
            .with_details(json!({"limit_per_minute": limit, "retry_after_seconds": secs})));
        }
        let plan = match (&tool.implementation, composite) {
            (Implementation::Recipe(_), Some(c)) => c.plan().await?,
            (Implementation::Recipe(_), None) => {
                return Err(ToolError::new(
                    ErrorKind::NotRegistered,
                    format!(
                        "tool '{name}' is a recipe, which runs through a catalog of the tools it \
                         calls; call it through a toolbox"
                    ),
                )
                .with_details(json!({"tool": name})));
            }
            _ => Vec::new(),
        };
        if !approved && (self.requires_approval(tool) || plan.iter().any(|s| s.requires_approval)) {
            self.approve(tool, &args, plan).await?;
        }
        let cap = self.max_timeout;
        let timeout = spec
            .metadata
            .timeout_seconds
            .map(|s| Duration::from_secs(u64::from(s)).min(cap));
        let value = match &tool.implementation {
            Implementation::Native(native) => {
                let registered = self.natives.get(&native.func).ok_or_else(|| {
                    ToolError::new(
                        ErrorKind::NotRegistered,
                        format!(
                            "tool '{name}' needs the native function '{}', which is not available \
                             in this process; use another tool",
                            native.func
                        ),
                    )
                    .with_details(json!({"tool": name, "func": native.func}))
                })?;
                let timeout = timeout.unwrap_or(self.native_timeout).min(cap);
                with_timeout(name, timeout, registered.tool.call_json(args)).await?
            }
            Implementation::Http(http) => {
                let cx = HttpContext {
                    config: &self.http,
                    secrets: &self.secrets,
                    tokens: &self.tokens,
                };
                let call = http_tool::run(&cx, tool, http, &args);
                // Without a timeout of its own, each attempt is bounded, and the whole
                // call (its retries and redirects) by the cap.
                with_timeout(name, timeout.unwrap_or(cap), call).await?
            }
            Implementation::Recipe(_) => {
                let Some(composite) = composite else {
                    return Err(ToolError::failed(format!("recipe '{name}' has no runner")));
                };
                let timeout = timeout
                    .unwrap_or(Duration::from_secs(u64::from(
                        toolscout_spec::recipe::DEFAULT_TIMEOUT_SECONDS,
                    )))
                    .min(cap);
                with_timeout(name, timeout, composite.run(args)).await?
            }
        };
        check_output(&self.validators, spec, &value)?;
        Ok(value)
    }

    async fn approve(
        &self,
        tool: &InvokableTool,
        args: &Value,
        steps: Vec<PlannedStep>,
    ) -> std::result::Result<(), ToolError> {
        let name = tool.name();
        let Some(approver) = &self.approver else {
            return Err(ToolError::new(
                ErrorKind::ApprovalRefused,
                format!("tool '{name}' requires approval and no approver is configured; the call was not made"),
            )
            .with_details(json!({"tool": name})));
        };
        let request = ApprovalRequest::new(name, args.clone(), tool.spec.summary.clone())
            .with_qualified(tool.qualified.clone())
            .with_steps(steps);
        match approver.approve(&request).await {
            Approval::Approved => Ok(()),
            Approval::Refused(reason) => {
                let mut message = format!("the call to '{name}' was refused by the approver");
                if let Some(r) = &reason {
                    message.push_str(": ");
                    message.push_str(r);
                }
                message.push_str("; do not retry the same call");
                Err(ToolError::new(ErrorKind::ApprovalRefused, message)
                    .with_details(json!({"tool": name, "reason": reason})))
            }
        }
    }

    /// A result without the secrets' values: a URL that echoes its query, or a service
    /// that repeats a header, would otherwise hand the key to the model.
    fn redact_result(&self, value: Value) -> Value {
        if self.secrets.is_empty() {
            value
        } else {
            self.secrets.redact_value(&value)
        }
    }

    fn redact(&self, mut e: ToolError) -> ToolError {
        if !self.secrets.is_empty() {
            e.message = self.secrets.redact(&e.message);
            e.details = self.secrets.redact_value(&e.details);
        }
        e
    }

    fn report(
        &self,
        tool: &str,
        at: chrono::DateTime<chrono::Utc>,
        duration: Duration,
        result: &std::result::Result<Value, ToolError>,
    ) {
        let Some(usage) = &self.usage else {
            return;
        };
        // Off the call's path: a background task delivers events, in call order, so a
        // slow sink never delays the answer to the model.
        usage.send(UsageEvent {
            tool: tool.to_owned(),
            at,
            ok: result.is_ok(),
            error_kind: result.as_ref().err().map(|e| e.kind),
            duration,
        });
    }
}

async fn with_timeout<F>(
    name: &str,
    timeout: Duration,
    call: F,
) -> std::result::Result<Value, ToolError>
where
    F: std::future::Future<Output = std::result::Result<Value, ToolError>>,
{
    match tokio::time::timeout(timeout, call).await {
        Ok(r) => r,
        Err(_) => Err(ToolError::new(
            ErrorKind::Timeout,
            format!(
                "tool '{name}' did not finish within {} ms; try a smaller request or try later",
                timeout.as_millis()
            ),
        )
        .with_details(
            json!({"timeout_ms": u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX)}),
        )),
    }
}
