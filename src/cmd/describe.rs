//! `toolscout describe TOOL [--level N] [--parameter P]`.

use anyhow::{Result, anyhow};
use toolscout_spec::{Disclosure, Level};

use super::context::{Context, Global, find_tool};

/// Arguments of `describe`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Tool name.
    tool: String,
    /// Disclosure level: 1 (summary), 2 (usage), 3 (full schemas, examples, errors, notes).
    #[arg(long, short, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=3))]
    level: u8,
    /// Show one parameter in detail instead.
    #[arg(long, short)]
    parameter: Option<String>,
    /// Also print the size of the output in tokens (o200k).
    #[arg(long)]
    tokens: bool,
}

pub(crate) fn run(args: &Args, global: &Global, json: bool) -> Result<()> {
    let ctx = Context::open(global)?;
    let result = describe(args, &ctx, json);
    ctx.finish();
    result
}

fn describe(args: &Args, ctx: &Context, json: bool) -> Result<()> {
    let found = find_tool(&ctx.catalog, &args.tool)?;
    if let Some(reason) = &found.disabled_reason {
        eprintln!("note: '{}' cannot be called: {reason}", found.spec.name);
    } else if found.is_spec_only() {
        eprintln!(
            "note: '{}' is spec only: it is described here, and a call fails (spec_only)",
            found.spec.name
        );
    }
    let tool = &found.spec;
    let disclosure = match &args.parameter {
        Some(p) => Disclosure::Parameter(tool.parameter(p)?),
        None => {
            let level =
                Level::from_number(args.level).ok_or_else(|| anyhow!("level must be 1, 2 or 3"))?;
            tool.disclose(level)
        }
    };
    if json {
        super::print_json(&toolscout_discover::marked(
            disclosure.to_json(),
            found.is_spec_only(),
        ))?;
    } else {
        super::emit(disclosure.to_text().trim_end())?;
    }
    if args.tokens {
        eprintln!(
            "tokens: {} (text), {} (json)",
            disclosure.tokens(),
            disclosure.json_tokens()
        );
    }
    Ok(())
}
