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
use std::collections::{HashMap, HashSet};

use toolscout_catalog::{Added, BundlePut, Catalog, OnExisting, ToolPut};
use toolscout_spec::ToolName;
use toolscout_spec::adapters::openapi;
use toolscout_spec::name::{MAX_LABEL_LEN, sanitize_name, slug_from_name, validate_slug};
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
    ///
    /// Every import (jsonl, openapi, mcp) imports a tool whose name a built-in, another
    /// bundle or an earlier bundle of the file holds as `<bundle>_<name>`, and says so.
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
    /// per operation, named by its `operationId`, its `$ref`s resolved. Calls need
    /// `--allow-host` for the API's host (and `--allow-private` for one on loopback).
    Openapi {
        /// The document.
        spec: PathBuf,
        /// The bundle to add them to, created when missing (default: one named after the
        /// document's `info.title`, else after the file).
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
            let groups = match bundle {
                Some(slug) => vec![Group {
                    bundle: imported_bundle(slug, file),
                    puts: lines.specs.into_iter().map(ToolPut::spec_only).collect(),
                }],
                None => line_groups(file, lines),
            };
            import(
                file,
                groups,
                on_existing(*replace),
                global,
                json_out,
                "spec only: found and described, not called",
            )
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
            import(
                spec,
                vec![Group {
                    bundle: api_bundle(&doc, bundle.as_deref(), spec),
                    puts,
                }],
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
            // The server's own names: the proxies call these, whatever name a tool is
            // imported under.
            let names: Vec<String> = specs.iter().map(|s| s.name.to_string()).collect();
            let puts = specs
                .into_iter()
                .map(|spec| {
                    let f = super::mcp::func(&slug, spec.name.as_str());
                    ToolPut::native(spec, &f)
                })
                .collect();
            // Recorded first, so that the tools are callable as soon as they are stored.
            super::mcp::save(
                &global.catalog_dir()?,
                &super::mcp::Server {
                    bundle: slug.clone(),
                    command: command.clone(),
                    tools: names,
                },
            )?;
            import(
                program,
                vec![Group {
                    bundle: imported_bundle(&slug, program),
                    puts,
                }],
                on_existing(*replace),
                global,
                json_out,
                "calls are proxied to the server",
            )
        }
    }
}

/// The bundle `slug`, described as imported from `file` when it is made.
fn imported_bundle(slug: &str, file: &Path) -> BundlePut {
    BundlePut::new(slug).with_description(format!("Imported from {}", file.display()))
}

/// The bundle an OpenAPI document's tools go to: `--bundle`, else one named after the
/// document's `info.title` (`"Weather.gov API"` is `weather-gov-api`), else after the
/// file.
fn api_bundle(doc: &serde_json::Value, bundle: Option<&str>, file: &Path) -> BundlePut {
    if let Some(slug) = bundle {
        return imported_bundle(slug, file);
    }
    let title = doc
        .pointer("/info/title")
        .and_then(serde_json::Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let Some((title, slug)) = title.and_then(|t| Some((t, title_slug(t)?))) else {
        return imported_bundle(&default_slug(file), file);
    };
    BundlePut::new(slug.as_str())
        .with_display_name(title)
        .with_description(format!("{title} (imported from {})", file.display()))
}

/// A title as a bundle slug: ASCII letters and digits in lower case, every other run of
/// characters one `-` (`"Swagger Petstore - OpenAPI 3.0"` is
/// `swagger-petstore-openapi-3-0`); `None` when nothing of it is left or the slug is not
/// a legal one.
fn title_slug(title: &str) -> Option<String> {
    let mut slug = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_end_matches('-');
    let slug = if slug.len() > MAX_LABEL_LEN {
        slug[..MAX_LABEL_LEN].trim_end_matches('-')
    } else {
        slug
    };
    validate_slug(slug).is_ok().then(|| slug.to_owned())
}

/// The names an import gives its tools.
///
/// A tool keeps its name unless the catalog reserves it (a built-in's, in any case),
/// a tool of another bundle holds it, or the same import gave it to another bundle's
/// tool; it is then qualified by its bundle, `<bundle>_<name>` (the slug's `-` as `_`),
/// and the import says so. Only a tool whose qualified name is not free either is left
/// out, and said to be.
///
/// **Rationale:** real catalogs hold `read_file`, `search` and `fetch` many times (#63);
/// one of them must not stop the file, nor take the name a call of the built-in means.
/// The qualified name depends only on the bundle and the name, so the same import run
/// again finds its tools where it put them.
struct Names<'a> {
    catalog: &'a Catalog,
    /// Each tool name of the catalog, with the bundles whose tools hold it.
    held: HashMap<String, Vec<Uuid>>,
    /// The ids of the bundles of each slug.
    bundles: HashMap<String, HashSet<Uuid>>,
    /// The names this import gave, with the slug of the bundle each went to.
    given: HashMap<String, String>,
}

/// A tool an import renamed.
#[derive(Debug, Clone, serde::Serialize)]
struct Renamed {
    from: String,
    to: String,
}

impl<'a> Names<'a> {
    fn new(catalog: &'a Catalog) -> Result<Names<'a>> {
        let mut bundles: HashMap<String, HashSet<Uuid>> = HashMap::new();
        for b in super::list::all_bundles(catalog)? {
            bundles.entry(b.slug).or_default().insert(b.id);
        }
        let mut held: HashMap<String, Vec<Uuid>> = HashMap::new();
        catalog.for_each_head(|h, _| {
            let holders = held.entry(h.name.clone()).or_default();
            if !holders.contains(&h.bundle_id) {
                holders.push(h.bundle_id);
            }
        });
        Ok(Names {
            catalog,
            held,
            bundles,
            given: HashMap::new(),
        })
    }

    /// Whether the bundle `slug` may give a tool the name `name`.
    fn free(&self, slug: &str, name: &str) -> bool {
        if self.catalog.check_tool_name(name).is_err() {
            return false;
        }
        if self.given.get(name).is_some_and(|s| s != slug) {
            return false;
        }
        let ours = self.bundles.get(slug);
        self.held
            .get(name)
            .is_none_or(|ids| ids.iter().all(|id| ours.is_some_and(|o| o.contains(id))))
    }

    /// The name a tool named `name` takes in the bundle `slug`: its own, its qualified
    /// one, or `None` when neither is free.
    fn name_in(&mut self, slug: &str, name: &ToolName) -> Option<ToolName> {
        let chosen = if self.free(slug, name.as_str()) {
            name.clone()
        } else {
            let qualified =
                ToolName::new(sanitize_name(&format!("{}_{name}", slug.replace('-', "_")))).ok()?;
            if !self.free(slug, qualified.as_str()) {
                return None;
            }
            qualified
        };
        self.given.insert(chosen.to_string(), slug.to_owned());
        Some(chosen)
    }
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

/// One bundle's tools of a file, and how the bundle is made when missing.
struct Group {
    bundle: BundlePut,
    puts: Vec<ToolPut>,
}

/// A file's tools grouped by the bundle each line names, in the order the bundles first
/// appear; lines without one go to the bundle named after the file. Bundle names with
/// one slug share the bundle (the first name and description win).
fn line_groups(file: &Path, lines: toolscout_eval::read::ToolLines) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    let mut by_slug: HashMap<String, usize> = HashMap::new();
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
                None => imported_bundle(&slug, file),
            };
            groups.push(Group {
                bundle,
                puts: Vec::new(),
            });
            groups.len() - 1
        });
        groups[i].puts.push(ToolPut::spec_only(spec));
    }
    groups
}

/// Adds each group's tools to its bundle (created when missing), one write per bundle,
/// each tool under the name [`Names`] gives it; `existing` says what becomes of names a
/// bundle already has. One bundle prints one line, several a line each and a total.
fn import(
    file: &Path,
    groups: Vec<Group>,
    existing: OnExisting,
    global: &Global,
    json_out: bool,
    what: &str,
) -> Result<()> {
    if groups.iter().all(|g| g.puts.is_empty()) {
        bail!("{} holds no tool", file.display());
    }
    let single = groups.len() == 1;
    let ctx = Context::open(global)?;
    let mut names = Names::new(&ctx.catalog)?;
    let mut outcomes = Vec::with_capacity(groups.len());
    let mut unnamed = Vec::new();
    for group in groups {
        let slug = group.bundle.slug.clone();
        let mut renamed = Vec::new();
        let mut puts = Vec::with_capacity(group.puts.len());
        for mut put in group.puts {
            let Some(name) = names.name_in(&slug, &put.spec.name) else {
                unnamed.push(format!("{slug}/{}", put.spec.name));
                continue;
            };
            if name != put.spec.name {
                renamed.push(Renamed {
                    from: put.spec.name.to_string(),
                    to: name.to_string(),
                });
                put.spec.name = name;
            }
            puts.push(put);
        }
        if puts.is_empty() {
            continue;
        }
        let outcome = add_one(&ctx.catalog, &group.bundle, puts, existing, renamed)
            .with_context(|| format!("importing {} into bundle '{slug}'", file.display()))?;
        if !json_out && !single {
            eprintln!("imported {}{}", outcome.text(), outcome.also());
        }
        outcomes.push(outcome);
    }
    for name in &unnamed {
        eprintln!(
            "warning: skipped {name}: the catalog has a tool of that name, and the bundle's \
             qualified name is taken too"
        );
    }
    if single && let [outcome] = outcomes.as_slice() {
        if json_out {
            let mut value = outcome.json();
            value["not_named"] = json!(unnamed);
            return super::print_json(&value);
        }
        return super::emit(format!(
            "imported {}{}{} ({what})",
            outcome.text(),
            outcome.also(),
            not_named(unnamed.len())
        ));
    }
    let added: usize = outcomes.iter().map(|o| o.added).sum();
    let renamed: usize = outcomes.iter().map(|o| o.renamed.len()).sum();
    if json_out {
        return super::print_json(&json!({
            "bundles": outcomes.iter().map(Outcome::json).collect::<Vec<_>>(),
            "added": added,
            "renamed": renamed,
            "not_named": unnamed,
        }));
    }
    let also = if renamed > 0 {
        format!("; {renamed} renamed <bundle>_<name>, their names being taken (see each bundle)")
    } else {
        String::new()
    };
    super::emit(format!(
        "imported {added} tool(s) into {} bundle(s) from {}{also}{} ({what})",
        outcomes.len(),
        file.display(),
        not_named(unnamed.len())
    ))
}

/// "; N not imported (…)" when some tools had no free name.
fn not_named(count: usize) -> String {
    if count == 0 {
        return String::new();
    }
    format!("; {count} not imported, no name free (see above)")
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
    /// The tools written under their bundle's qualified name ([`Names`]).
    renamed: Vec<Renamed>,
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
            "renamed": self.renamed,
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

    /// The renamed tools, and the updated, unchanged, skipped and repeated counts, as
    /// "; …" clauses.
    fn also(&self) -> String {
        let mut also = String::new();
        if !self.renamed.is_empty() {
            // A few of them by name: the rest are as easily guessed.
            const SHOWN: usize = 5;
            let mut shown: Vec<String> = self
                .renamed
                .iter()
                .take(SHOWN)
                .map(|r| format!("{} → {}", r.from, r.to))
                .collect();
            if self.renamed.len() > SHOWN {
                shown.push(format!("and {} more", self.renamed.len() - SHOWN));
            }
            also.push_str(&format!(
                "; {} renamed, their names being taken (by a built-in or another bundle): {}",
                self.renamed.len(),
                shown.join(", ")
            ));
        }
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

/// Adds `puts` to one bundle, with a spinner on a terminal for large files; `renamed`
/// are the tools [`Names`] qualified, of which the outcome keeps those written.
fn add_one(
    catalog: &Catalog,
    put: &BundlePut,
    puts: Vec<ToolPut>,
    existing: OnExisting,
    renamed: Vec<Renamed>,
) -> Result<Outcome> {
    let count = puts.len();
    let spinner = (count >= 1000 && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_message(format!("writing {count} tools"));
        bar.enable_steady_tick(std::time::Duration::from_millis(100));
        bar
    });
    let result = catalog.operator().add_tools_with(put, puts, existing);
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
    let written: HashSet<&str> = added
        .iter()
        .chain(&updated)
        .map(|h| h.name.as_str())
        .collect();
    let renamed = renamed
        .into_iter()
        .filter(|r| written.contains(r.to.as_str()))
        .collect();
    Ok(Outcome {
        slug: put.slug.clone(),
        bundle_id: bundle,
        created,
        added: added.len(),
        updated: updated.len(),
        unchanged,
        skipped,
        duplicates,
        renamed,
    })
}
