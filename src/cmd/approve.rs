//! Who approves, on the command line, the calls of tools that require approval
//! (`write_file`, and any tool whose spec or native function says so).
//!
//! In order: a tool named by `--approve TOOL` is approved; `call --yes` approves; on a
//! terminal the person is asked (`chat` also offers "always" for the rest of the
//! session); anything else is refused with a message that says how to allow it.

use std::collections::HashSet;
use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::sync::Mutex;

use serde_json::Value;

/// The command-line approver, of the invoker and of the agent loop alike.
#[derive(Debug, Default)]
pub(crate) struct TerminalApprover {
    /// Tools approved up front (`--approve TOOL`).
    pre: HashSet<String>,
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
    /// one.
    pub(crate) fn new(pre: &[String]) -> Self {
        TerminalApprover {
            pre: pre.iter().cloned().collect(),
            ask: std::io::stdin().is_terminal() && std::io::stderr().is_terminal(),
            ..Default::default()
        }
    }

    /// The approver of `serve`: approves the tools of `--approve`, asks nobody, and says
    /// in each refusal how an authenticated client approves a call.
    pub(crate) fn server(pre: &[String]) -> Self {
        TerminalApprover {
            pre: pre.iter().cloned().collect(),
            server: true,
            ..Default::default()
        }
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

    /// The decision on a call of `tool`: `Ok(())` to run it, or why not.
    fn decide(
        &self,
        tool: &str,
        arguments: &Value,
        steps: &[toolscout_invoke::PlannedStep],
    ) -> Result<(), String> {
        if self.yes || self.pre.contains(tool) {
            return Ok(());
        }
        if self
            .always
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(tool)
        {
            return Ok(());
        }
        if self.server {
            return Err(format!(
                "'{tool}' requires approval: a client with the server's token approves one call with \"approved\": true in its tools/call (JSON-RPC) or invoke (REST) request, or the server is started with --approve {tool}"
            ));
        }
        if !self.ask {
            return Err(format!(
                "'{tool}' requires approval and no one was asked: pass --approve {tool} (or `call --yes`), or run on a terminal to be asked"
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
                    .insert(tool.to_owned());
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
        let decision = match self.decide(&request.tool, &request.arguments, &request.steps) {
            Ok(()) => toolscout_invoke::Approval::Approved,
            Err(reason) => toolscout_invoke::Approval::Refused(Some(reason)),
        };
        Box::pin(async move { decision })
    }
}
