//! [`StaticHost`]: an in-memory [`ToolHost`] for tests and examples.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::{Value, json};
use toolscout_spec::{Level, ToolSpec};

use crate::ErrorKind;
use crate::host::{CallContext, CallOutcome, Retrieval, ToolHost, call_tool_spec};
use crate::{BoxFuture, Policy};

/// The name of [`StaticHost`]'s search tool: level-1 lists.
pub const DISCOVER_SEARCH: &str = "discover_search";
/// The name of [`StaticHost`]'s describe tool: level 2 or 3 of one tool.
pub const DISCOVER_DESCRIBE: &str = "discover_describe";

type Handler = Arc<dyn Fn(Value) -> BoxFuture<'static, Result<Value, String>> + Send + Sync>;

/// A fixed set of tools, each a [`ToolSpec`] and an async function, plus a minimal
/// discovery: `discover_search {query?}` lists matching tools at level 1,
/// `discover_describe {name, level?}` shows one at level 2 or 3 (and so activates it).
/// [`ToolHost::retrieve`] ranks tools by how many of the message's words (of four
/// letters or more) their name, summary and tags contain, with no measure of confidence.
///
/// ```
/// use serde_json::{json, Value};
/// use toolscout_agent::StaticHost;
/// use toolscout_spec::ToolSpec;
///
/// let spec = ToolSpec::builder("echo", "Echo the arguments back").build()?;
/// let host = StaticHost::default().tool(spec, |args: Value| async move { Ok(args) });
/// # let _ = host;
/// # Ok::<(), toolscout_spec::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct StaticHost {
    tools: IndexMap<String, (ToolSpec, Handler)>,
    disabled: HashSet<String>,
}

impl std::fmt::Debug for StaticHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticHost")
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("disabled", &self.disabled)
            .finish()
    }
}

impl StaticHost {
    /// Adds a tool; `handler` gets the arguments and returns the value or an error
    /// message (reported to the model as `tool_failed`).
    #[must_use]
    pub fn tool<F, Fut>(mut self, spec: ToolSpec, handler: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, String>> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |args| Box::pin(handler(args)));
        self.tools.insert(spec.name.to_string(), (spec, handler));
        self
    }

    /// Adds tools whose calls all fail with `not implemented`: for browsing only.
    #[must_use]
    pub fn specs(mut self, specs: impl IntoIterator<Item = ToolSpec>) -> Self {
        for spec in specs {
            self = self.tool(spec, |_| async {
                Err::<Value, _>("this tool has no implementation in this host".to_owned())
            });
        }
        self
    }

    /// Disables a tool: it is not offered, not listed, and calls are refused.
    #[must_use]
    pub fn disable(mut self, name: &str) -> Self {
        self.disabled.insert(name.to_owned());
        self
    }

    fn enabled(&self) -> impl Iterator<Item = &ToolSpec> {
        self.tools
            .values()
            .map(|(s, _)| s)
            .filter(|s| s.metadata.enabled_by_default && !self.disabled.contains(s.name.as_str()))
    }

    fn search(&self, args: &Value) -> CallOutcome {
        let query = args
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_lowercase();
        let words: Vec<&str> = query.split_whitespace().collect();
        let found: Vec<&ToolSpec> = self
            .enabled()
            .filter(|s| words.iter().all(|w| haystack(s).contains(w)))
            .collect();
        let tools: Vec<Value> = found
            .iter()
            .map(|s| s.disclose(Level::L1).to_json())
            .collect();
        CallOutcome::ok(json!({ "tools": tools }))
            .with_found(found.iter().map(|s| s.name.to_string()))
    }

    fn describe(&self, args: &Value) -> CallOutcome {
        let Some(name) = args.get("name").and_then(Value::as_str) else {
            return CallOutcome::error(ErrorKind::InvalidArguments, "'name' is required");
        };
        let level = match args.get("level").and_then(Value::as_u64) {
            None | Some(3) => Level::L3,
            Some(2) => Level::L2,
            Some(other) => {
                return CallOutcome::error(
                    ErrorKind::InvalidArguments,
                    format!("'level' must be 2 or 3, not {other}"),
                );
            }
        };
        match self.enabled().find(|s| s.name.as_str() == name) {
            Some(spec) => CallOutcome::ok(spec.disclose(level).to_json()).with_disclosed([name]),
            None => CallOutcome::error(
                ErrorKind::UnknownTool,
                format!("no tool named '{name}'; use {DISCOVER_SEARCH} to find tools"),
            ),
        }
    }
}

/// What [`StaticHost`]'s search and retrieval match words against.
fn haystack(spec: &ToolSpec) -> String {
    format!("{} {} {}", spec.name, spec.summary, spec.tags.join(" ")).to_lowercase()
}

fn discover_specs() -> Vec<ToolSpec> {
    let search = ToolSpec::builder(
        DISCOVER_SEARCH,
        "List tools whose name, summary or tags match a query",
    )
    .description(crate::prompts::STATIC_DISCOVER_SEARCH.trim())
    .parameters(json!({
        "type": "object",
        "properties": {"query": {"type": "string", "description": "Words to look for"}}
    }))
    .build();
    let describe = ToolSpec::builder(DISCOVER_DESCRIBE, "Show one tool in detail: level 2 or 3")
        .description(crate::prompts::STATIC_DISCOVER_DESCRIBE.trim())
        .parameters(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's exact name"},
                "level": {"type": "integer", "enum": [2, 3], "description": "Level of detail, 3 by default"}
            },
            "required": ["name"]
        }))
        .build();
    // Both specs are constants that validate; a failure would only drop the tool.
    [search, describe].into_iter().flatten().collect()
}

impl ToolHost for StaticHost {
    fn initial_tools(&self, policy: Policy) -> Vec<ToolSpec> {
        match policy {
            Policy::Upfront => self.enabled().cloned().collect(),
            Policy::Browse => {
                let mut tools = discover_specs();
                tools.push(call_tool_spec());
                tools
            }
            // Found tools are activated, and any tool may be called by name: no call_tool.
            Policy::Retrieve => discover_specs(),
        }
    }

    fn spec(&self, name: &str) -> Option<ToolSpec> {
        if let Some(s) = discover_specs()
            .into_iter()
            .find(|s| s.name.as_str() == name)
        {
            return Some(s);
        }
        let (spec, _) = self.tools.get(name)?;
        let mut spec = spec.clone();
        if self.disabled.contains(name) {
            spec.metadata.enabled_by_default = false;
        }
        Some(spec)
    }

    fn retrieve(&self, message: &str, limit: usize) -> Retrieval {
        let message = message.to_lowercase();
        let mut words: Vec<&str> = message
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 4)
            .collect();
        words.sort_unstable();
        words.dedup();
        let mut scored: Vec<(usize, &ToolSpec)> = self
            .enabled()
            .map(|s| {
                let hay = haystack(s);
                (words.iter().filter(|w| hay.contains(**w)).count(), s)
            })
            .filter(|(n, _)| *n > 0)
            .collect();
        // Stable: ties keep the order the tools were added in.
        scored.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
        Retrieval::tools(
            scored
                .into_iter()
                .take(limit)
                .map(|(_, s)| s.name.to_string())
                .collect(),
        )
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
        _ctx: CallContext,
    ) -> BoxFuture<'a, CallOutcome> {
        Box::pin(async move {
            match name {
                DISCOVER_SEARCH => return self.search(&arguments),
                DISCOVER_DESCRIBE => return self.describe(&arguments),
                _ => {}
            }
            let Some((_, handler)) = self.tools.get(name) else {
                return CallOutcome::error(
                    ErrorKind::UnknownTool,
                    format!("no tool named '{name}'"),
                );
            };
            match handler(arguments).await {
                Ok(value) => CallOutcome::ok(value),
                Err(message) => CallOutcome::error(ErrorKind::ToolFailed, message),
            }
        })
    }
}
