//! `toolscout export --format F`: the catalog in another format.

use anyhow::Result;
use serde_json::{Value, json};
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::{jsonl, manifest, mcp, openai};

use super::context::{Context, Global};

/// Output formats.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Format {
    /// OpenAI function-calling tools array (names mapped to legal aliases).
    Openai,
    /// Model Context Protocol tools.
    Mcp,
    /// Tool-discovery manifest definitions.
    Manifest,
    /// One `{name, description, parameters}` object a line.
    Jsonl,
}

/// Arguments of `export`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The format to print.
    #[arg(long, short, value_enum, required_unless_present = "aliases")]
    format: Option<Format>,
    /// Print the alias table instead: each tool whose name OpenAI refuses, with the
    /// name `--format openai` gives it (`call`, `describe`, MCP and the agent loop take
    /// either name).
    #[arg(long, conflicts_with = "format")]
    aliases: bool,
    /// With `--format openai`: rewrite schemas for OpenAI's strict mode.
    #[arg(long)]
    strict: bool,
    /// Only the tools of this bundle (slug or id), each name as it stands in the bundle
    /// (a tool another bundle shadows too), e.g. to have `enrich` write their sample
    /// requests and `import jsonl --replace` take them back.
    #[arg(long, conflicts_with = "aliases")]
    bundle: Option<String>,
}

pub(crate) fn run(args: &Args, global: &Global, json_out: bool) -> Result<()> {
    let ctx = Context::open(global)?;
    let callable = |tools: Vec<toolscout_catalog::Tool>| -> Vec<ToolSpec> {
        tools
            .into_iter()
            .filter(toolscout_catalog::Tool::is_callable)
            .map(|t| t.spec)
            .collect()
    };
    let tools = match &args.bundle {
        Some(key) => {
            let b = super::list::find_bundle(&ctx.catalog, key)?;
            if b.soft_deleted_at.is_some() || !b.is_enabled {
                let state = if b.is_enabled { "deleted" } else { "disabled" };
                eprintln!(
                    "warning: bundle '{}' is {state}: none of its tools can be called, so none is exported",
                    b.slug
                );
            }
            callable(super::context::tools_of_bundle(&ctx.catalog, b.id)?)
        }
        None => callable(super::context::tools_by_name(&ctx.catalog)),
    };
    let Some(format) = args.format else {
        let names = openai::NameMap::new(tools.iter().map(|t| t.name.as_str()));
        let renamed: Vec<(&str, &str)> = tools
            .iter()
            .filter_map(|t| {
                let alias = names.alias(&t.name)?;
                (alias != t.name.as_str()).then_some((alias, t.name.as_str()))
            })
            .collect();
        if json_out {
            let table: serde_json::Map<String, Value> = renamed
                .iter()
                .map(|(alias, name)| ((*alias).to_owned(), json!(name)))
                .collect();
            return super::print_json(&Value::Object(table));
        }
        for (alias, name) in renamed {
            super::emit(format!("{alias}\t{name}"))?;
        }
        return Ok(());
    };
    let value: Value = match format {
        Format::Openai => {
            // The aliases a model calls by are those of the whole catalog, whatever
            // part of it is exported.
            let catalog_names: Option<Vec<String>> = args.bundle.as_ref().map(|_| {
                super::context::heads_by_name(&ctx.catalog)
                    .into_iter()
                    .filter(|h| h.disabled_reason.is_none())
                    .map(|h| h.name)
                    .collect()
            });
            let names = match &catalog_names {
                Some(all) => openai::NameMap::new(all.iter().map(String::as_str)),
                None => openai::NameMap::new(tools.iter().map(|t| t.name.as_str())),
            };
            let items: Vec<Value> = tools
                .iter()
                .map(|t| {
                    let alias = names.alias(&t.name).unwrap_or(&t.name);
                    openai::to_openai_named(t, alias, args.strict)
                })
                .collect();
            Value::Array(items)
        }
        Format::Mcp => json!({ "tools": tools.iter().map(mcp::to_mcp).collect::<Vec<_>>() }),
        Format::Manifest => serde_json::to_value(
            tools
                .iter()
                .map(manifest::to_definition)
                .collect::<Vec<_>>(),
        )?,
        Format::Jsonl => {
            for t in &tools {
                super::emit(jsonl::to_line(t))?;
            }
            return Ok(());
        }
    };
    super::print_json(&value)
}
