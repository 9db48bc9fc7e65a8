//! Who approves, on the command line, the calls of tools that require approval
//! (`write_file`, and any tool whose spec or native function says so).
//!
//! In order: a tool named by `--approve TOOL` is approved; `call --yes` approves; on a
//! terminal the person is asked (`chat` also offers "always" for the rest of the
//! session); anything else is refused with a message that says how to allow it.
//!
//! `--approve` names a tool as a [`ToolSelector`]: `[tenant:]bundle/tool` for one tool of
//! one bundle, or a bare name for the operator's own and built-in tools of that name
//! only, never a tenant's (issue 61: a tenant's recipe named like one the operator
//! approved ran pre-approved). A bare name that two of the operator's bundles hold is
//! refused at start-up ([`TerminalApprover::check_bare_names`]).

use std::collections::HashSet;
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::sync::Mutex;

use anyhow::{Result, bail};
use serde_json::Value;
use toolscout_catalog::Catalog;
use toolscout_invoke::ToolSelector;
use toolscout_spec::name::QualifiedName;

/// The command-line approver, of the invoker and of the agent loop alike.
#[derive(Debug, Default)]
pub(crate) struct TerminalApprover {
    /// Tools approved up front (`--approve TOOL`).
    pre: Vec<ToolSelector>,
    /// Every call approved (`call --yes`).
    yes: bool,
    /// Ask the person on the terminal.
    ask: bool,
    /// Offer "always for this tool" (a chat session).
    offer_always: bool,
    /// Tools the person approved for the rest of the session.
    always: Mutex<HashSet<String>>,
    /// A server: nobody to ask here; say how a client approves.
    server: bool,
}

impl TerminalApprover {
    /// Approves the tools of `--approve`; asks on the terminal when stdin and stderr are
    /// one. A qualified name that does not read is an error.
    pub(crate) fn new(pre: &[String]) -> Result<Self> {
        Ok(TerminalApprover {
            pre: selectors(pre)?,
            ask: std::io::stdin().is_terminal() && std::io::stderr().is_terminal(),
            ..Default::default()
        })
    }

    /// The approver of `serve`: approves the tools of `--approve`, asks nobody, and says
    /// in each refusal how an authenticated client approves a call.
    pub(crate) fn server(pre: &[String]) -> Result<Self> {
        Ok(TerminalApprover {
            pre: selectors(pre)?,
            server: true,
            ..Default::default()
        })
    }

    /// Refuses a bare `--approve NAME` that more than one of the operator's bundles (its
    /// own and the built-ins) holds a tool of: which one was meant cannot be told, so
    /// the error names each by its qualified name. A bare name that none holds is kept
    /// (its tool may be put later), and a tenant's tools never count (a bare name never
    /// approves them).
    pub(crate) fn check_bare_names(&self, catalog: &Catalog) -> Result<()> {
        for selector in &self.pre {
            let ToolSelector::Name(name) = selector else {
                continue;
            };
            // Collected first: the catalog's state is locked while its heads are visited.
            let mut named: Vec<(uuid::Uuid, String)> = Vec::new();
            catalog.for_each_head(|h, _| {
                if h.name == *name {
                    named.push((h.bundle_id, h.slug.clone()));
                }
            });
            let mut holders: Vec<QualifiedName> = Vec::new();
            for (bundle, slug) in named {
                if let Some(q) = catalog.qualified_name(bundle, &slug)
                    && q.owner.is_none()
                    && !holders.iter().any(|o| o.bundle == q.bundle)
                {
                    holders.push(q);
                }
            }
            if holders.len() > 1 {
                let names: Vec<String> = holders.iter().map(ToString::to_string).collect();
                bail!(
                    "--approve {name}: {} of your bundles hold a tool named '{name}'; name the one you approve: --approve {}",
                    holders.len(),
                    names.join(" or --approve ")
                );
            }
        }
        Ok(())
    }

    /// Approves every call (`call --yes`).
    pub(crate) fn approve_all(mut self, yes: bool) -> Self {
        self.yes |= yes;
        self
    }

    /// Offers "always for this tool" when asking (`chat`).
    pub(crate) fn with_always(mut self) -> Self {
        self.offer_always = true;
        self
    }

    /// The decision on a call of `tool` (kept at `qualified`): `Ok(())` to run it, or
    /// why not.
    fn decide(
        &self,
        tool: &str,
        qualified: Option<&QualifiedName>,
        arguments: &Value,
        steps: &[toolscout_invoke::PlannedStep],
    ) -> std::result::Result<(), String> {
        if self.yes || self.pre.iter().any(|s| s.matches(tool, qualified)) {
            return Ok(());
        }
        // "Always" holds for this one tool, not for another owner's of its name.
        let identity = qualified.map_or_else(|| tool.to_owned(), ToString::to_string);
        if self
            .always
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&identity)
        {
            return Ok(());
        }
        // What `--approve` would name: the bare name is the operator's own only.
        let flag = match qualified {
            Some(q) if q.owner.is_some() => q.to_string(),
            _ => tool.to_owned(),
        };
        if self.server {
            return Err(format!(
                "'{tool}' requires approval: a client with the server's token approves one call with \"approved\": true in its tools/call (JSON-RPC) or invoke (REST) request, or the server is started with --approve {flag}"
            ));
        }
        if !self.ask {
            return Err(format!(
                "'{tool}' requires approval and no one was asked: pass --approve {flag} (or `call --yes`), or run on a terminal to be asked"
            ));
        }
        let args = arguments.to_string();
        let args: String = if args.chars().count() > 500 {
            args.chars().take(499).collect::<String>() + "…"
        } else {
            args
        };
        let choices = if self.offer_always {
            "[y]es, [n]o, [a]lways for this tool"
        } else {
            "[y]es, [n]o"
        };
        let mut err = std::io::stderr().lock();
        // A recipe's one approval covers its steps: say what will run.
        let steps: Vec<String> = steps
            .iter()
            .map(|s| {
                let asks = if s.requires_approval {
                    ", asks approval"
                } else {
                    ""
                };
                format!("{} ({}{asks})", s.step, s.tool)
            })
            .collect();
        let runs = if steps.is_empty() {
            String::new()
        } else {
            format!(", a recipe that runs {}", steps.join(", "))
        };
        let _ = write!(err, "approve {tool} {args}{runs}? {choices}: ");
        let _ = err.flush();
        drop(err);
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line).is_err() {
            return Err("the approval could not be read".to_owned());
        }
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Ok(()),
            "a" | "always" if self.offer_always => {
                self.always
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(identity);
                Ok(())
            }
            _ => Err("the user did not approve this call".to_owned()),
        }
    }
}

impl toolscout_invoke::Approver for TerminalApprover {
    fn approve<'a>(
        &'a self,
        request: &'a toolscout_invoke::ApprovalRequest,
    ) -> toolscout_invoke::BoxFuture<'a, toolscout_invoke::Approval> {
        let decision = match self.decide(
            &request.tool,
            request.qualified.as_ref(),
            &request.arguments,
            &request.steps,
        ) {
            Ok(()) => toolscout_invoke::Approval::Approved,
            Err(reason) => toolscout_invoke::Approval::Refused(Some(reason)),
        };
        Box::pin(async move { decision })
    }
}

/// The selectors of `--approve`; a qualified name that does not read is an error.
fn selectors(pre: &[String]) -> Result<Vec<ToolSelector>> {
    pre.iter()
        .map(|p| ToolSelector::parse(p).map_err(|e| anyhow::anyhow!("--approve {p:?}: {e}")))
        .collect()
}
