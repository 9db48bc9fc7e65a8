//! `toolscout bundle put|enable|disable|delete|list|export|import`.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Subcommand;
use serde_json::json;
use toolscout_catalog::{Bundle, BundlePut, Catalog};
use uuid::Uuid;

use super::context::{Context, Global};
use super::list::{all_bundles, find_bundle};

/// Arguments of `bundle`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Subcommand)]
enum What {
    /// List the bundles with their tool counts (deleted ones with --include-deleted).
    List {
        /// Show soft-deleted bundles too.
        #[arg(long)]
        include_deleted: bool,
    },
    /// Create a bundle, or replace the name and description of one.
    Put {
        /// Slug: letters, digits and `-`.
        slug: String,
        /// Display name (default: the slug).
        #[arg(long)]
        display_name: Option<String>,
        /// What the bundle's tools are for.
        #[arg(long)]
        description: Option<String>,
        /// Create it disabled.
        #[arg(long)]
        disabled: bool,
    },
    /// Turn a bundle on (slug or id).
    Enable {
        /// Slug or id.
        bundle: String,
    },
    /// Turn a bundle off: its tools are listed as disabled and cannot be called.
    Disable {
        /// Slug or id.
        bundle: String,
    },
    /// Soft-delete a bundle: its tools become disabled; it is removed later, once empty.
    Delete {
        /// Slug or id.
        bundle: String,
    },
    /// Write a bundle and its tools as a ZIP file.
    Export {
        /// Slug or id.
        bundle: String,
        /// The ZIP file to write (default: `<slug>.zip`).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Add a bundle (or its new tools) from a ZIP file written by `bundle export`.
    Import {
        /// The ZIP file.
        file: PathBuf,
    },
}

pub(crate) fn run(args: &Args, global: &Global, json_out: bool) -> Result<()> {
    let ctx = Context::open(global)?;
    let catalog = &ctx.catalog;
    match &args.what {
        What::List { include_deleted } => list(catalog, *include_deleted, json_out),
        What::Put {
            slug,
            display_name,
            description,
            disabled,
        } => {
            let existing = all_bundles(catalog)?.into_iter().find(|b| b.slug == *slug);
            let mut put = BundlePut::new(slug.as_str()).with_enabled(!disabled);
            if let Some(d) = display_name
                .as_deref()
                .or(existing.as_ref().map(|b| b.display_name.as_str()))
            {
                put = put.with_display_name(d);
            }
            if let Some(d) = description
                .as_deref()
                .or(existing.as_ref().map(|b| b.description.as_str()))
            {
                put = put.with_description(d);
            }
            let id = existing.as_ref().map_or_else(Uuid::now_v7, |b| b.id);
            let bundle = catalog.put_bundle(id, &put)?;
            done(
                &bundle,
                if existing.is_some() {
                    "updated"
                } else {
                    "created"
                },
                json_out,
            )
        }
        What::Enable { bundle } | What::Disable { bundle } => {
            let on = matches!(args.what, What::Enable { .. });
            let b = find_bundle(catalog, bundle)?;
            let b = catalog.patch_bundle(b.id, on)?;
            done(&b, if on { "enabled" } else { "disabled" }, json_out)
        }
        What::Delete { bundle } => {
            let b = find_bundle(catalog, bundle)?;
            let b = catalog.delete_bundle(b.id)?;
            done(&b, "deleted", json_out)
        }
        What::Export { bundle, output } => {
            let b = find_bundle(catalog, bundle)?;
            let path = output
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("{}.zip", b.slug)));
            let file = std::fs::File::create(&path)
                .with_context(|| format!("creating {}", path.display()))?;
            catalog.export_bundle(b.id, std::io::BufWriter::new(file))?;
            eprintln!("exported bundle '{}' to {}", b.slug, path.display());
            Ok(())
        }
        What::Import { file } => {
            let f =
                std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?;
            let imported = catalog.import_bundle(std::io::BufReader::new(f))?;
            if json_out {
                return super::print_json(&json!({
                    "bundle": imported.bundle,
                    "created": imported.created,
                    "tools": imported.tools.len(),
                }));
            }
            super::emit(format!(
                "{} bundle '{}': {} tool(s) added",
                if imported.created {
                    "created"
                } else {
                    "updated"
                },
                imported.bundle.slug,
                imported.tools.len()
            ))
        }
    }
}

fn done(bundle: &Bundle, what: &str, json_out: bool) -> Result<()> {
    if json_out {
        return super::print_json(&json!(bundle));
    }
    super::emit(format!("{what} bundle '{}' ({})", bundle.slug, bundle.id))
}

fn list(catalog: &Catalog, include_deleted: bool, json_out: bool) -> Result<()> {
    let tools = catalog.tools();
    let bundles: Vec<Bundle> = all_bundles(catalog)?
        .into_iter()
        .filter(|b| include_deleted || b.soft_deleted_at.is_none())
        .collect();
    let count = |b: &Bundle| tools.iter().filter(|t| t.bundle_id == b.id).count();
    if json_out {
        let items: Vec<serde_json::Value> = bundles
            .iter()
            .map(|b| {
                let mut v = json!(b);
                v["toolCount"] = json!(count(b));
                v
            })
            .collect();
        return super::print_json(&json!({ "bundles": items }));
    }
    for b in &bundles {
        let state = if b.soft_deleted_at.is_some() {
            "deleted"
        } else if b.is_enabled {
            "enabled"
        } else {
            "disabled"
        };
        super::emit(format!(
            "{:<16} {:<8} {:>5} tools  {}",
            b.slug,
            state,
            count(b),
            b.description
        ))?;
    }
    Ok(())
}
