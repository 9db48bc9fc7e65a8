//! `toolscout lint`: what would confuse a model or be refused by a provider (the rules
//! are `toolscout_catalog::lint`'s).

use anyhow::Result;
use serde_json::json;
use toolscout_catalog::Tool;
use toolscout_catalog::lint::{Severity, lint};

use super::context::{Context, Global};

/// Arguments of `lint`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Check disabled tools too.
    #[arg(long)]
    include_disabled: bool,
    /// List every note (no examples, aliased names), not only their count.
    #[arg(long)]
    notes: bool,
}

pub(crate) fn run(args: &Args, global: &Global, json_out: bool) -> Result<()> {
    let ctx = Context::open(global)?;
    let tools: Vec<Tool> = ctx
        .catalog
        .tools()
        .into_iter()
        .filter(|t| args.include_disabled || t.is_callable())
        .collect();
    let report = lint(&tools);
    let counts = report.counts();
    let errors = report.count(Severity::Error);
    if json_out {
        super::print_json(&json!({
            "tools": report.tools,
            "errors": errors,
            "counts": counts,
            "issues": report.issues,
        }))?;
    } else {
        for i in report
            .issues
            .iter()
            .filter(|i| args.notes || i.severity != Severity::Note)
        {
            let sev = i.severity.as_str();
            super::emit(format!("{sev}[{}] {}: {}", i.check, i.tool, i.message))?;
        }
        let summary: Vec<String> = counts.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        super::emit(format!(
            "{} tools checked; {}",
            report.tools,
            if summary.is_empty() {
                "no issue".to_owned()
            } else {
                summary.join(", ")
            }
        ))?;
    }
    if errors > 0 {
        return Err(super::Exit(1).into());
    }
    Ok(())
}
