//! `toolscout tool put|enable|disable|delete|get`: one tool version, as a `tool.json`.

use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use clap::Subcommand;
use serde_json::json;
use toolscout_catalog::{AuthoredTool, Catalog, Tool};

use super::context::{Context, Global};
use super::list::find_bundle;

/// Arguments of `tool`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    what: What,
}

/// Which tool: a name, narrowed by bundle and version when several share it.
#[derive(Debug, clap::Args)]
struct Which {
    /// Tool name (or slug).
    name: String,
    /// The tool's bundle (slug or id).
    #[arg(long)]
    bundle: Option<String>,
    /// The tool's version label.
    #[arg(long = "tool-version", value_name = "VERSION")]
    tool_version: Option<String>,
}

#[derive(Debug, Subcommand)]
enum What {
    /// Add a tool version from a JSON file: `slug`, `version`, `description`, `type`,
    /// `impl` and optionally `argSchema`, `name`, `summary`, `examples` (the format `tool
    /// get` prints, whose `toolID`, `createdAt` and `modifiedAt` may be left out).
    Put {
        /// The JSON file.
        file: PathBuf,
        /// The bundle to put it in (slug or id; default: the file's `bundleID`).
        #[arg(long)]
        bundle: Option<String>,
    },
    /// Turn a tool on.
    Enable(Which),
    /// Turn a tool off.
    Disable(Which),
    /// Delete a tool version for good.
    Delete(Which),
    /// Print a tool's `tool.json` (of several versions, the one a call would use).
    Get(Which),
}

pub(crate) fn run(args: &Args, global: &Global, json_out: bool) -> Result<()> {
    let ctx = Context::open(global)?;
    let catalog = &ctx.catalog;
    match &args.what {
        What::Put { file, bundle } => {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("reading {}", file.display()))?;
            let body: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)
                .with_context(|| format!("{} is not a JSON object", file.display()))?;
            let bundle = match bundle {
                Some(b) => Some(find_bundle(catalog, b)?.id),
                None => None,
            };
            let authored = AuthoredTool::from_json(body, bundle).with_context(|| {
                format!(
                    "{} is not a tool (give --bundle, or bundleID in the file)",
                    file.display()
                )
            })?;
            let tool = catalog.put_tool(
                authored.bundle,
                &authored.slug,
                &authored.version,
                &authored.put,
            )?;
            done(&tool, "added", json_out)
        }
        What::Enable(w) | What::Disable(w) => {
            let on = matches!(args.what, What::Enable(_));
            let t = which(catalog, w)?;
            let t = catalog.patch_tool(t.bundle_id, &t.slug, &t.version, on)?;
            done(&t, if on { "enabled" } else { "disabled" }, json_out)
        }
        What::Delete(w) => {
            let t = which(catalog, w)?;
            let t = catalog.delete_tool(t.bundle_id, &t.slug, &t.version)?;
            done(&t, "deleted", json_out)
        }
        What::Get(w) => {
            let t = match which(catalog, w) {
                Ok(t) => t,
                // Several versions: the one a call would use.
                Err(_) if w.bundle.is_none() && w.tool_version.is_none() => {
                    super::context::find_tool(catalog, &w.name)?
                }
                Err(e) => return Err(e),
            };
            super::print_json(&serde_json::to_value(t.to_file())?)
        }
    }
}

fn done(tool: &Tool, what: &str, json_out: bool) -> Result<()> {
    if json_out {
        return super::print_json(&json!(tool));
    }
    let mut line = format!("{what} {} ({}@{})", tool.spec.name, tool.slug, tool.version);
    // A deleted tool is gone: why it could not be called before is beside the point.
    if what != "deleted"
        && let Some(reason) = &tool.disabled_reason
    {
        line.push_str(&format!("; it cannot be called: {reason}"));
    }
    super::emit(line)
}

/// The tool a [`Which`] names.
fn which(catalog: &Catalog, w: &Which) -> Result<Tool> {
    let bundle = match &w.bundle {
        Some(b) => Some(find_bundle(catalog, b)?.id),
        None => None,
    };
    let mut found: Vec<Tool> = catalog
        .heads()
        .into_iter()
        .filter(|t| t.name == w.name || t.slug == w.name)
        .filter(|t| bundle.is_none_or(|b| t.bundle_id == b))
        .filter(|t| w.tool_version.as_ref().is_none_or(|v| t.version == *v))
        .map(|h| catalog.tool(h.id))
        .collect::<std::result::Result<_, _>>()?;
    match found.len() {
        0 => {
            // The error with suggestions.
            super::context::find_tool(catalog, &w.name)?;
            bail!(
                "no tool '{}' matches the given --bundle/--tool-version",
                w.name
            )
        }
        1 => Ok(found.remove(0)),
        _ => {
            let list: Vec<String> = found
                .iter()
                .map(|t| format!("{}@{} (bundle {})", t.slug, t.version, t.bundle_id))
                .collect();
            bail!(
                "several tools are named '{}': {}; pick one with --bundle and --tool-version",
                w.name,
                list.join(", ")
            )
        }
    }
}
