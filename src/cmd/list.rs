//! `toolscout list`.

use anyhow::{Result, bail};
use serde_json::{Value, json};
use toolscout_catalog::{Bundle, BundleQuery, Catalog, Tenant, Tool, ToolHead};
use toolscout_spec::Disclosure;

use super::context::{Context, Global, picks_by_name};

/// Arguments of `list`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Only tools with this tag.
    #[arg(long)]
    tag: Option<String>,
    /// Only tools of this bundle (slug or id).
    #[arg(long)]
    bundle: Option<String>,
    /// List tools that cannot be called too, with the reason.
    #[arg(long)]
    include_disabled: bool,
    /// Print each tool's full parameter schema too.
    #[arg(long)]
    schemas: bool,
    /// Print how often each tool was called, and when last (counted by `call`, `serve`
    /// and `chat`), most called first.
    #[arg(long)]
    usage: bool,
    /// Print at most this many tools (after `--usage` sorting).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
}

pub(crate) fn run(args: &Args, global: &Global, json: bool) -> Result<()> {
    let ctx = Context::open(global)?;
    let result = list(args, &ctx, json);
    ctx.finish();
    result
}

fn list(args: &Args, ctx: &Context, json: bool) -> Result<()> {
    let bundle = match &args.bundle {
        Some(b) => Some(find_bundle(&ctx.catalog, b)?),
        None => None,
    };
    // A head is copied only when it is looked at: `--limit` stops early.
    let picks = picks_by_name(&ctx.catalog);
    let heads = picks
        .iter()
        .filter(|p| args.include_disabled || p.callable)
        .filter_map(|p| ctx.catalog.head(p.id).ok());
    let selected = heads
        .filter(|t| args.include_disabled || t.is_callable())
        .filter(|t| bundle.as_ref().is_none_or(|b| t.bundle_id == b.id))
        .filter(|t| args.tag.as_ref().is_none_or(|tag| t.tags.contains(tag)));
    // Names and summaries come from the catalog's heads; a tool is read whole only for
    // what heads do not hold (schemas, usage).
    let whole = args.schemas || args.usage;
    let mut selected: Vec<Listed> = if whole {
        selected
            .filter_map(|h| ctx.catalog.tool(h.id).ok())
            .map(|t| Listed {
                head: ToolHead::of(&t),
                tool: Some(t),
            })
            .collect()
    } else {
        let limit = args.limit.unwrap_or(usize::MAX);
        selected
            .take(limit)
            .map(|h| Listed {
                head: h.clone(),
                tool: None,
            })
            .collect()
    };
    if args.usage {
        // Stable: equal counts keep the name order.
        selected.sort_by_key(|t| std::cmp::Reverse(t.tool.as_ref().map(|t| t.usage.call_count)));
    }
    if let Some(limit) = args.limit {
        selected.truncate(limit);
    }
    if json {
        let items: Vec<Value> = selected
            .iter()
            .map(|t| {
                let mut v = toolscout_discover::marked(
                    Disclosure::L1(t.head.level1()).to_json(),
                    t.head.is_spec_only(),
                );
                if let Some(tool) = &t.tool {
                    if args.schemas {
                        v["parameters"] = tool.spec.parameters.clone();
                    }
                    if args.usage {
                        v["usage"] = json!(tool.usage);
                    }
                }
                if let Some(reason) = &t.head.disabled_reason {
                    v["disabled"] = json!(reason.to_string());
                }
                v
            })
            .collect();
        return super::print_json(&json!({ "tools": items }));
    }
    for t in selected {
        let mut line = Disclosure::L1(t.head.level1())
            .to_text()
            .trim_end()
            .to_owned();
        if let Some(reason) = &t.head.disabled_reason {
            line.push_str(&format!("  [disabled: {reason}]"));
        } else if t.head.is_spec_only() {
            line.push_str(SPEC_ONLY_TAG);
        }
        if let Some(tool) = t.tool.as_ref().filter(|_| args.usage) {
            line.push_str(&format!("  [calls: {}", tool.usage.call_count));
            if let Some(at) = tool.usage.last_called_at {
                line.push_str(&format!(", last {}", at.format("%Y-%m-%d %H:%M:%S UTC")));
            }
            line.push(']');
        }
        super::emit(line)?;
        if let Some(tool) = t.tool.as_ref().filter(|_| args.schemas) {
            super::emit(format!("  {}", tool.spec.parameters))?;
        }
    }
    Ok(())
}

/// What a text listing (`list`, `search`) appends to a spec-only tool's line.
pub(crate) const SPEC_ONLY_TAG: &str = "  [spec only]";

/// A listed tool: its head, and the whole tool when more than the head is printed.
struct Listed {
    head: ToolHead,
    tool: Option<Tool>,
}

/// The bundle with this slug or id (deleted ones too, but one not deleted first: a slug
/// is free again once its bundle is deleted), or an error that lists the slugs.
pub(crate) fn find_bundle(catalog: &Catalog, key: &str) -> Result<Bundle> {
    find_bundle_preferring(catalog, key, false)
}

/// [`find_bundle`], a deleted bundle first when `deleted` (what `bundle restore` means).
///
/// With tenants, bundles of different owners may share a slug: a slug that names
/// bundles of more than one owner (in the preferred state) is an error that lists them
/// with their owners, to be named by id instead.
pub(crate) fn find_bundle_preferring(
    catalog: &Catalog,
    key: &str,
    deleted: bool,
) -> Result<Bundle> {
    let bundles = all_bundles(catalog)?;
    if let Some(b) = bundles.iter().find(|b| b.id.to_string() == key) {
        return Ok(b.clone());
    }
    let matching: Vec<&Bundle> = bundles.iter().filter(|b| b.slug == key).collect();
    let preferred: Vec<&Bundle> = if matching
        .iter()
        .any(|b| b.soft_deleted_at.is_some() == deleted)
    {
        matching
            .into_iter()
            .filter(|b| b.soft_deleted_at.is_some() == deleted)
            .collect()
    } else {
        matching
    };
    if let Some(first) = preferred.first() {
        if preferred.iter().any(|b| b.owner != first.owner) {
            let owners = Owners::of(catalog);
            let lines: Vec<String> = preferred
                .iter()
                .map(|b| {
                    let mut line = format!("  {}  owned by {}", b.id, owners.prose(b));
                    if b.shared {
                        line.push_str(", shared");
                    }
                    if b.soft_deleted_at.is_some() {
                        line.push_str(", deleted");
                    }
                    line
                })
                .collect();
            bail!(
                "the slug '{key}' names {} bundles of different owners; give the id of the one you mean:\n{}",
                preferred.len(),
                lines.join("\n")
            );
        }
        return Ok((*first).clone());
    }
    let slugs: Vec<&str> = bundles.iter().map(|b| b.slug.as_str()).collect();
    bail!(
        "no bundle '{key}'; the bundles are: {} (try `toolscout bundle list`)",
        slugs.join(", ")
    )
}

/// The names of the tenants that may own bundles, to show who owns one.
pub(crate) struct Owners {
    tenants: Vec<Tenant>,
}

impl Owners {
    /// The catalog's tenants, removed ones too (they may still own bundles).
    pub(crate) fn of(catalog: &Catalog) -> Owners {
        Owners {
            tenants: catalog.tenants(),
        }
    }

    /// Whether a listing should say who owns each bundle: the catalog has or had a
    /// tenant, or a bundle is owned or shared. Without them listings stay as they were.
    pub(crate) fn worth_showing(&self, bundles: &[Bundle]) -> bool {
        !self.tenants.is_empty() || bundles.iter().any(|b| b.owner.is_some() || b.shared)
    }

    /// The owner tenant's name (`name (removed)` for a removed one), `None` for the
    /// operator's and the built-in bundles.
    pub(crate) fn name(&self, bundle: &Bundle) -> Option<String> {
        let owner = bundle.owner?;
        Some(
            self.tenants
                .iter()
                .find(|t| t.id == owner)
                .map_or_else(|| owner.to_string(), display_name),
        )
    }

    /// A bundle's owner as a listing's column: the tenant's name, `operator` or
    /// `built-in`.
    pub(crate) fn column(&self, bundle: &Bundle) -> String {
        match self.name(bundle) {
            Some(name) => name,
            None if bundle.is_built_in => "built-in".to_owned(),
            None => "operator".to_owned(),
        }
    }

    /// A bundle's owner in a sentence: `tenant 'acme'`, `removed tenant 'acme'`, `the
    /// operator`, `nobody (built-in)`.
    pub(crate) fn prose(&self, bundle: &Bundle) -> String {
        let Some(owner) = bundle.owner else {
            return if bundle.is_built_in {
                "nobody (built-in)".to_owned()
            } else {
                "the operator".to_owned()
            };
        };
        match self.tenants.iter().find(|t| t.id == owner) {
            Some(t) if t.is_live() => format!("tenant '{}'", t.name),
            Some(t) => format!("removed tenant '{}' ({})", t.name, t.id),
            None => format!("tenant {owner}"),
        }
    }
}

/// Every bundle, deleted ones too.
pub(crate) fn all_bundles(catalog: &Catalog) -> Result<Vec<Bundle>> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let page = catalog.list_bundles(
            &BundleQuery::default()
                .with_include_deleted(true)
                .with_page_token(token.as_deref()),
        )?;
        out.extend(page.items);
        match page.next_page_token {
            Some(t) => token = Some(t),
            None => return Ok(out),
        }
    }
}

/// A tenant's name as listings show it: `name`, or `name (removed)`.
pub(crate) fn display_name(tenant: &Tenant) -> String {
    if tenant.is_live() {
        tenant.name.clone()
    } else {
        format!("{} (removed)", tenant.name)
    }
}
