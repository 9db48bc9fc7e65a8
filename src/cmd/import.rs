//! `toolscout import jsonl FILE`, `import openapi SPEC` and `import mcp -- COMMAND…`:
//! tools from other formats and servers, into a bundle.
//!
//! A JSONL line (`{name, description, parameters}`) says what a tool is, not how it
//! runs. Such tools are stored as spec-only tools (`ToolPut::spec_only`): they are
//! found, listed and described like any other, every listing says they are spec only,
//! and a call checks its arguments against the schema, then fails with `spec_only`.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use clap::Subcommand;
use serde_json::json;
use std::collections::HashSet;

use toolscout_catalog::{Added, BundlePut, Catalog, OnExisting, ToolPut};
use toolscout_spec::ToolName;
use toolscout_spec::adapters::openapi;
use toolscout_spec::name::slug_from_name;
use uuid::Uuid;

use super::context::{Context, Global};

/// Arguments of `import`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Subcommand)]
enum What {
    /// Tools from a JSONL file (`.jsonl` or `.jsonl.gz`), one `{name, description,
    /// parameters}` a line, stored as spec-only tools (found and described, not called).
    ///
    /// A line's `bundle` (the API or server the tool belongs to) and
    /// `bundle_description` put it in that bundle (its slug made from the name, created
    /// when missing, named and described as the line says); lines without one go to the
    /// bundle named after the file. Each bundle is written all or nothing; after an
    /// interruption the same command adds what is missing. With `--json`, a file of
    /// several bundles prints `{"bundles": [...]}` with one object per bundle.
    Jsonl {
        /// The file.
        file: PathBuf,
        /// The bundle to add every tool to, whatever the lines say, created when missing
        /// (default: each line's `bundle`, else the file's name).
        #[arg(long)]
        bundle: Option<String>,
        /// Store a tool the bundle already has as a new version when the file's differs
        /// (e.g. `enrich` gave it sample requests), keeping how it runs and whether it is
        /// enabled; without it such tools are skipped.
        #[arg(long)]
        replace: bool,
    },
    /// HTTP tools from an OpenAPI document (OpenAPI 3 or Swagger 2, JSON or YAML), one
    /// per operation, its `$ref`s resolved. Calls need `--allow-host` for the API's host.
    Openapi {
        /// The document.
        spec: PathBuf,
        /// The bundle to add them to, created when missing (default: the file's name).
        #[arg(long)]
        bundle: Option<String>,
        /// The API's base URL (default: the document's first server).
        #[arg(long)]
        base_url: Option<String>,
        /// Store an operation the bundle already has as a new version when the
        /// document's differs, keeping whether it is enabled; without it such
        /// operations are skipped.
        #[arg(long)]
        replace: bool,
    },
    /// The tools of another MCP server, started with COMMAND over stdio; calls are
    /// proxied to it (started again by each process that calls them).
    Mcp {
        /// The bundle to add them to, created when missing (default: the command's name).
        #[arg(long)]
        bundle: Option<String>,
        /// Store a tool the bundle already has as a new version when the server's
        /// differs, keeping whether it is enabled; without it such tools are skipped.
        #[arg(long)]
        replace: bool,
        /// The command that starts the server, after `--`.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
}

pub(crate) fn run(args: &Args, global: &Global, json_out: bool) -> Result<()> {
    match &args.what {
        What::Jsonl {
            file,
            bundle,
            replace,
        } => {
            let lines = super::eval::read_tool_lines(file)?;
            let what = "spec only: found and described, not called";
            let existing = on_existing(*replace);
            if bundle.is_some() {
                let puts = lines.specs.into_iter().map(ToolPut::spec_only).collect();
                return store(
                    file,
                    puts,
                    bundle.as_deref(),
                    existing,
                    global,
                    json_out,
                    what,
                );
            }
            let mut groups = line_groups(file, lines);
            if groups.len() == 1
                && let Some(group) = groups.pop()
            {
                let puts = group.specs.into_iter().map(ToolPut::spec_only).collect();
                return store_in(file, group.bundle, puts, existing, global, json_out, what);
            }
            if groups.is_empty() {
                bail!("{} holds no tool", file.display());
            }
            store_groups(file, groups, existing, global, json_out, what)
        }
        What::Openapi {
            spec,
            bundle,
            base_url,
            replace,
        } => {
            let text = super::eval::read_text(spec)?;
            let doc =
                openapi::parse(&text).with_context(|| format!("reading {}", spec.display()))?;
            let api = openapi::from_openapi(&doc, base_url.as_deref())?;
            for skipped in &api.skipped {
                eprintln!("warning: skipped {skipped}");
            }
            let puts = api
                .tools
                .into_iter()
                .map(|t| ToolPut::http(t.spec, t.template))
                .collect();
            store(
                spec,
                puts,
                bundle.as_deref(),
                on_existing(*replace),
                global,
                json_out,
                "HTTP tools: calls need --allow-host",
            )
        }
        What::Mcp {
            bundle,
            replace,
            command,
        } => {
            let program = Path::new(&command[0]);
            let slug = match bundle {
                Some(b) => b.clone(),
                None => default_slug(program),
            };
            let specs = super::mcp::list_tools(command)?;
            // The server's own names: the proxies call these.
            let names: Vec<String> = specs.iter().map(|s| s.name.to_string()).collect();
            let catalog = Context::open(global)?.catalog;
            let taken = names_elsewhere(&catalog, &slug)?;
            // A name another bundle holds, or one the catalog reserves (a built-in's in
            // any case, `Catalog::check_tool_name`), is imported under the prefix.
            let free = |name: &str| !taken.contains(name) && catalog.check_tool_name(name).is_ok();
            let mut puts = Vec::with_capacity(specs.len());
            for mut spec in specs {
                let f = super::mcp::func(&slug, spec.name.as_str());
                if !free(spec.name.as_str()) {
                    let renamed = prefixed(&slug, spec.name.as_str()).filter(|n| free(n.as_str()));
                    let Some(renamed) = renamed else {
                        eprintln!(
                            "warning: skipped tool {}: the catalog has a tool of that name, and {slug}_{} is not free either",
                            spec.name, spec.name
                        );
                        continue;
                    };
                    eprintln!(
                        "warning: the catalog has a tool named {}; the server's is imported as {renamed}",
                        spec.name
                    );
                    spec.name = renamed;
                }
                puts.push(ToolPut::native(spec, &f));
            }
            drop(catalog);
            // Recorded first, so that the tools are callable as soon as they are stored.
            super::mcp::save(
                &global.catalog_dir()?,
                &super::mcp::Server {
                    bundle: slug.clone(),
                    command: command.clone(),
                    tools: names,
                },
            )?;
            store(
                program,
                puts,
                Some(&slug),
                on_existing(*replace),
                global,
                json_out,
                "calls are proxied to the server",
            )
        }
    }
}

/// The names of the tools of every bundle but `slug` (the built-ins too): an imported
/// tool must not take one, or calls by that name would reach it instead of the tool
/// the name meant.
fn names_elsewhere(catalog: &Catalog, slug: &str) -> Result<HashSet<String>> {
    let ours: HashSet<Uuid> = super::list::all_bundles(catalog)?
        .into_iter()
        .filter(|b| b.slug == slug)
        .map(|b| b.id)
        .collect();
    let mut names = HashSet::new();
    catalog.for_each_head(|h, _| {
        if !ours.contains(&h.bundle_id) {
            names.insert(h.name.clone());
        }
    });
    Ok(names)
}

/// `name` under the bundle's prefix, `<slug>_<name>` with the slug's `-` as `_`, when
/// that is a legal tool name.
fn prefixed(slug: &str, name: &str) -> Option<ToolName> {
    ToolName::new(format!("{}_{name}", slug.replace('-', "_"))).ok()
}

/// A bundle slug from a file's name, up to its first dot.
fn default_slug(file: &Path) -> String {
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("imported");
    slug_from_name(name.split('.').next().unwrap_or(name))
}

/// What `--replace` asks for.
fn on_existing(replace: bool) -> OnExisting {
    if replace {
        OnExisting::NewVersion
    } else {
        OnExisting::Skip
    }
}

/// Adds `puts` to the bundle `bundle` (default: named after `file`); `existing` says
/// what becomes of names the bundle already has.
fn store(
    file: &std::path::Path,
    puts: Vec<ToolPut>,
    bundle: Option<&str>,
    existing: OnExisting,
    global: &Global,
    json_out: bool,
    what: &str,
) -> Result<()> {
    let slug = match bundle {
        Some(b) => b.to_owned(),
        None => default_slug(file),
    };
    let put =
        BundlePut::new(slug.as_str()).with_description(format!("Imported from {}", file.display()));
    store_in(file, put, puts, existing, global, json_out, what)
}

/// Adds `puts` to the bundle `put` describes (created when missing).
fn store_in(
    file: &std::path::Path,
    put: BundlePut,
    puts: Vec<ToolPut>,
    existing: OnExisting,
    global: &Global,
    json_out: bool,
    what: &str,
) -> Result<()> {
    if puts.is_empty() {
        bail!("{} holds no tool", file.display());
    }
    let ctx = Context::open(global)?;
    let outcome = add_one(&ctx.catalog, &put, puts, existing)?;
    if json_out {
        return super::print_json(&outcome.json());
    }
    super::emit(format!(
        "imported {}{} ({what})",
        outcome.text(),
        outcome.also()
    ))
}

/// One bundle's tools of a file, and how the bundle is made when missing.
struct Group {
    bundle: BundlePut,
    specs: Vec<toolscout_spec::ToolSpec>,
}

/// A file's tools grouped by the bundle each line names, in the order the bundles first
/// appear; lines without one go to the bundle named after the file. Bundle names with
/// one slug share the bundle (the first name and description win).
fn line_groups(file: &Path, lines: toolscout_eval::read::ToolLines) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut by_slug: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (spec, line) in lines.specs.into_iter().zip(lines.bundles) {
        let slug = match &line {
            Some(b) => slug_from_name(&b.name),
            None => default_slug(file),
        };
        let i = *by_slug.entry(slug.clone()).or_insert_with(|| {
            let bundle = match &line {
                Some(b) => BundlePut::new(slug.as_str())
                    .with_display_name(&b.name)
                    .with_description(b.description.clone().unwrap_or_else(|| {
                        format!("{} (imported from {})", b.name, file.display())
                    })),
                None => BundlePut::new(slug.as_str())
                    .with_description(format!("Imported from {}", file.display())),
            };
            groups.push(Group {
                bundle,
                specs: Vec::new(),
            });
            groups.len() - 1
        });
        groups[i].specs.push(spec);
    }
    groups
}

/// Adds each group to its bundle, one write per bundle. A tool name an earlier group
/// already holds is skipped (a catalog's names are its tools' names).
fn store_groups(
    file: &Path,
    groups: Vec<Group>,
    existing: OnExisting,
    global: &Global,
    json_out: bool,
    what: &str,
) -> Result<()> {
    let ctx = Context::open(global)?;
    let mut seen = HashSet::new();
    let mut outcomes = Vec::with_capacity(groups.len());
    let mut again = 0;
    for group in groups {
        let puts: Vec<ToolPut> = group
            .specs
            .into_iter()
            .filter(|s| {
                let new = seen.insert(s.name.to_string());
                again += usize::from(!new);
                new
            })
            .map(ToolPut::spec_only)
            .collect();
        if puts.is_empty() {
            continue;
        }
        let outcome = add_one(&ctx.catalog, &group.bundle, puts, existing).with_context(|| {
            format!(
                "importing {} into bundle '{}'",
                file.display(),
                group.bundle.slug
            )
        })?;
        if !json_out {
            eprintln!("imported {}{}", outcome.text(), outcome.also());
        }
        outcomes.push(outcome);
    }
    let added: usize = outcomes.iter().map(|o| o.added).sum();
    if json_out {
        return super::print_json(&json!({
            "bundles": outcomes.iter().map(Outcome::json).collect::<Vec<_>>(),
            "added": added,
            "named_in_two_bundles": again,
        }));
    }
    let also = if again > 0 {
        format!("; {again} named again in a later bundle, skipped")
    } else {
        String::new()
    };
    super::emit(format!(
        "imported {added} tool(s) into {} bundle(s) from {}{also} ({what})",
        outcomes.len(),
        file.display()
    ))
}

/// What one bundle's import did.
struct Outcome {
    slug: String,
    bundle_id: Uuid,
    created: bool,
    added: usize,
    updated: usize,
    unchanged: usize,
    skipped: usize,
    duplicates: usize,
}

impl Outcome {
    fn json(&self) -> serde_json::Value {
        json!({
            "bundle": self.slug,
            "bundle_id": self.bundle_id.to_string(),
            "created": self.created,
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
            "duplicates": self.duplicates,
        })
    }

    /// "N tool(s) into bundle 'slug' (new)".
    fn text(&self) -> String {
        format!(
            "{} tool(s) into bundle '{}'{}",
            self.added,
            self.slug,
            if self.created { " (new)" } else { "" }
        )
    }

    /// The updated, unchanged, skipped and repeated counts, as "; …" clauses.
    fn also(&self) -> String {
        let mut also = String::new();
        if self.updated > 0 {
            also.push_str(&format!("; {} updated (a new version each)", self.updated));
        }
        if self.unchanged > 0 {
            also.push_str(&format!("; {} unchanged", self.unchanged));
        }
        if self.skipped > 0 {
            also.push_str(&format!(
                "; {} already there, skipped (--replace updates them)",
                self.skipped
            ));
        }
        if self.duplicates > 0 {
            also.push_str(&format!(
                "; {} named again further down, skipped",
                self.duplicates
            ));
        }
        also
    }
}

/// Adds `puts` to one bundle, with a spinner on a terminal for large files.
fn add_one(
    catalog: &Catalog,
    put: &BundlePut,
    puts: Vec<ToolPut>,
    existing: OnExisting,
) -> Result<Outcome> {
    let count = puts.len();
    let spinner = (count >= 1000 && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_message(format!("writing {count} tools"));
        bar.enable_steady_tick(std::time::Duration::from_millis(100));
        bar
    });
    let result = catalog.add_tools_with(put, puts, existing);
    if let Some(s) = spinner {
        s.finish_and_clear();
    }
    let Added {
        bundle,
        created,
        added,
        updated,
        skipped,
        duplicates,
        unchanged,
        ..
    } = result?;
    Ok(Outcome {
        slug: put.slug.clone(),
        bundle_id: bundle,
        created,
        added: added.len(),
        updated: updated.len(),
        unchanged,
        skipped,
        duplicates,
    })
}
