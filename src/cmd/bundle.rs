//! `toolscout bundle put|enable|disable|delete|restore|list|export|import|share|unshare|owner`.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Subcommand;
use serde_json::json;
use toolscout_catalog::{Bundle, BundlePut, Catalog};
use uuid::Uuid;

use super::context::{Context, Global};
use super::list::{Owners, all_bundles, find_bundle, find_bundle_preferring};

/// Arguments of `bundle`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Subcommand)]
enum What {
    /// List the bundles with their tool counts (deleted ones with --include-deleted);
    /// once the catalog has tenants, with each bundle's owner and whether it is shared.
    List {
        /// Show soft-deleted bundles too.
        #[arg(long)]
        include_deleted: bool,
    },
    /// Create a bundle of the operator's, or replace the name and description of one.
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
    /// Soft-delete a bundle: its tools become disabled; `reap` removes it two days
    /// later, once it holds no tool. `bundle restore` undoes it until then.
    Delete {
        /// Slug or id.
        bundle: String,
    },
    /// Undo `bundle delete`: the bundle and its tools are back as they were.
    Restore {
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
    /// Share a bundle with every tenant: they find, read and call its tools; only its
    /// owner changes it.
    Share {
        /// Slug or id.
        bundle: String,
    },
    /// Stop sharing a bundle: its tools leave the view of every tenant but its owner.
    Unshare {
        /// Slug or id.
        bundle: String,
    },
    /// Give a bundle to a tenant, or back to the operator (`--operator`): its tools leave
    /// every other tenant's view (unless it is shared).
    #[command(
        group(clap::ArgGroup::new("new_owner").required(true).args(["tenant", "operator"])),
        override_usage = "toolscout bundle owner [OPTIONS] <BUNDLE> <TENANT|--operator>"
    )]
    Owner {
        /// Slug or id.
        bundle: String,
        /// The tenant (name or id) that is to own it.
        tenant: Option<String>,
        /// Give it back to the operator, whose bundles no tenant sees unless shared.
        #[arg(long)]
        operator: bool,
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
            // The operator's own bundle of that slug: a tenant's bundle may have it too.
            let existing = all_bundles(catalog)?
                .into_iter()
                .find(|b| b.slug == *slug && b.owner.is_none());
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
            if !json_out && let Some(due) = Catalog::reap_due(&b) {
                eprintln!(
                    "it can be restored with `toolscout bundle restore {}`; {}",
                    b.slug,
                    reap_note(due, count_tools(catalog, &b))
                );
            }
            done(&b, "deleted", json_out)
        }
        What::Restore { bundle } => {
            let b = find_bundle_preferring(catalog, bundle, true)?;
            if b.soft_deleted_at.is_none() {
                anyhow::bail!("bundle '{}' is not deleted", b.slug);
            }
            let b = catalog.restore_bundle(b.id)?;
            done(&b, "restored", json_out)
        }
        What::Share { bundle } | What::Unshare { bundle } => {
            let share = matches!(args.what, What::Share { .. });
            let b = find_bundle(catalog, bundle)?;
            let b = catalog.operator().set_bundle_shared(b.id, share)?;
            let owners = Owners::of(catalog);
            if json_out {
                return super::print_json(&bundle_json(&b, &owners));
            }
            let what = if share { "shared" } else { "unshared" };
            super::emit(format!(
                "{what} bundle '{}' ({}), owned by {}: {}",
                b.slug,
                b.id,
                owners.prose(&b),
                if share {
                    "every tenant finds, reads and calls its tools"
                } else if b.owner.is_some() {
                    "no other tenant sees its tools"
                } else {
                    "no tenant sees its tools"
                }
            ))
        }
        What::Owner {
            bundle,
            tenant,
            operator: _,
        } => {
            let b = find_bundle(catalog, bundle)?;
            let owner = match tenant {
                Some(t) => Some(super::tenant::find_tenant(catalog, t)?.id),
                None => None,
            };
            let b = catalog.operator().set_bundle_owner(b.id, owner)?;
            let owners = Owners::of(catalog);
            if json_out {
                return super::print_json(&bundle_json(&b, &owners));
            }
            super::emit(format!(
                "bundle '{}' ({}) is owned by {}{}",
                b.slug,
                b.id,
                owners.prose(&b),
                if b.shared { " (shared)" } else { "" }
            ))
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
                    "unchanged": imported.unchanged,
                }));
            }
            let unchanged = if imported.unchanged > 0 {
                format!(
                    "; {} already there as the archive has them",
                    imported.unchanged
                )
            } else {
                String::new()
            };
            super::emit(format!(
                "{} bundle '{}': {} tool(s) added{unchanged}",
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

/// `toolscout reap`: removes the deleted bundles that are due and empty, and says what
/// stays and until when.
pub(crate) fn reap(global: &Global, json_out: bool) -> Result<()> {
    let ctx = Context::open(global)?;
    let catalog = &ctx.catalog;
    let before = all_bundles(catalog)?;
    let removed = catalog.operator().reap(chrono::Utc::now())?;
    let slug = |id: &Uuid| {
        before
            .iter()
            .find(|b| b.id == *id)
            .map_or_else(|| id.to_string(), |b| b.slug.clone())
    };
    let waiting: Vec<Bundle> = all_bundles(catalog)?
        .into_iter()
        .filter(|b| b.soft_deleted_at.is_some())
        .collect();
    if json_out {
        return super::print_json(&json!({
            "removed": removed.iter().map(|id| json!({"id": id, "slug": slug(id)})).collect::<Vec<_>>(),
            "waiting": waiting.iter().map(|b| json!({
                "id": b.id,
                "slug": b.slug,
                "toolCount": count_tools(catalog, b),
                "reapableFrom": Catalog::reap_due(b),
            })).collect::<Vec<_>>(),
        }));
    }
    for id in &removed {
        super::emit(format!("removed bundle '{}' ({id})", slug(id)))?;
    }
    for b in &waiting {
        if let Some(due) = Catalog::reap_due(b) {
            super::emit(format!(
                "kept deleted bundle '{}': {}",
                b.slug,
                reap_note(due, count_tools(catalog, b))
            ))?;
        }
    }
    if removed.is_empty() && waiting.is_empty() {
        super::emit("nothing to reap")?;
    }
    Ok(())
}

fn done(bundle: &Bundle, what: &str, json_out: bool) -> Result<()> {
    if json_out {
        return super::print_json(&json!(bundle));
    }
    super::emit(format!("{what} bundle '{}' ({})", bundle.slug, bundle.id))
}

fn count_tools(catalog: &Catalog, bundle: &Bundle) -> usize {
    catalog
        .heads()
        .iter()
        .filter(|t| t.bundle_id == bundle.id)
        .count()
}

/// When a deleted bundle goes: at `due` if it holds no tool by then.
pub(crate) fn reap_note(due: chrono::DateTime<chrono::Utc>, tools: usize) -> String {
    let when = due.format("%Y-%m-%d %H:%M UTC");
    if tools == 0 {
        format!("`toolscout reap` (and `serve`) removes it from {when}")
    } else {
        format!(
            "it is kept while it holds {tools} tool(s) (`toolscout tool delete`), then removed from {when}"
        )
    }
}

/// A bundle as JSON, with its owner tenant's name (`ownerName`) when it has one.
fn bundle_json(bundle: &Bundle, owners: &Owners) -> serde_json::Value {
    let mut v = json!(bundle);
    if let Some(name) = owners.name(bundle) {
        v["ownerName"] = json!(name);
    }
    v
}

fn list(catalog: &Catalog, include_deleted: bool, json_out: bool) -> Result<()> {
    let tools = catalog.heads();
    let bundles: Vec<Bundle> = all_bundles(catalog)?
        .into_iter()
        .filter(|b| include_deleted || b.soft_deleted_at.is_none())
        .collect();
    let count = |b: &Bundle| tools.iter().filter(|t| t.bundle_id == b.id).count();
    let owners = Owners::of(catalog);
    if json_out {
        let items: Vec<serde_json::Value> = bundles
            .iter()
            .map(|b| {
                let mut v = bundle_json(b, &owners);
                v["toolCount"] = json!(count(b));
                if let Some(due) = Catalog::reap_due(b) {
                    v["reapableFrom"] = json!(due);
                }
                v
            })
            .collect();
        return super::print_json(&json!({ "bundles": items }));
    }
    // Without tenants (nor owned or shared bundles) the listing is as it always was.
    let owner_width = owners.worth_showing(&bundles).then(|| {
        bundles
            .iter()
            .map(|b| owners.column(b).chars().count())
            .max()
            .unwrap_or(0)
            .max(8)
    });
    // A slug longer than the column widens it, rather than running into the state.
    let slug_width = bundles
        .iter()
        .map(|b| b.slug.chars().count())
        .max()
        .unwrap_or(0)
        .max(16);
    for b in &bundles {
        let state = if b.soft_deleted_at.is_some() {
            "deleted"
        } else if b.is_enabled {
            "enabled"
        } else {
            "disabled"
        };
        let about = match Catalog::reap_due(b) {
            Some(due) => format!(
                "deleted; `bundle restore {}` undoes it; {}",
                b.slug,
                reap_note(due, count(b))
            ),
            None => b.description.clone(),
        };
        let owner = match owner_width {
            Some(width) => format!(
                "{:<width$}  {:<6}  ",
                owners.column(b),
                if b.shared { "shared" } else { "" }
            ),
            None => String::new(),
        };
        let n = count(b);
        let line = format!(
            "{:<slug_width$} {:<8} {n:>5} {:<5}  {owner}{about}",
            b.slug,
            state,
            if n == 1 { "tool" } else { "tools" }
        );
        if owner_width.is_some() {
            super::emit(line.trim_end())?;
        } else {
            super::emit(line)?;
        }
    }
    Ok(())
}
