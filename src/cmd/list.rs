//! `toolscout list`.

use anyhow::Result;
use serde_json::{Value, json};
use toolscout_spec::Level;

/// Arguments of `list`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Only tools with this tag.
    #[arg(long)]
    tag: Option<String>,
    /// Print each tool's full parameter schema too.
    #[arg(long)]
    schemas: bool,
}

pub(crate) fn run(args: &Args, json: bool) -> Result<()> {
    let tools = super::catalog();
    let selected = tools
        .iter()
        .filter(|t| args.tag.as_ref().is_none_or(|tag| t.tags.contains(tag)));
    if json {
        let items: Vec<Value> = selected
            .map(|t| {
                let mut v = t.disclose(Level::L1).to_json();
                if args.schemas {
                    v["parameters"] = t.parameters.clone();
                }
                v
            })
            .collect();
        return super::print_json(&json!({ "tools": items }));
    }
    for t in selected {
        super::emit(t.disclose(Level::L1).to_text())?;
        if args.schemas {
            super::emit(format!("  {}", t.parameters))?;
        }
    }
    Ok(())
}
