//! What every catalog command starts from: the catalog directory, the invoker with the
//! built-in native tools, and (for search, calls and serving) a [`Toolbox`].

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use serde_json::{Value, json};
use toolscout_catalog::{Catalog, Tool};
use toolscout_discover::Toolbox;
use toolscout_invoke::builtin::BuiltinConfig;
use toolscout_invoke::{AllowedHosts, DynTool, ErrorKind, HttpConfig, Invoker, ToolError};
use toolscout_search::SearchIndex;
use toolscout_spec::ToolSpec;

/// The native function of tools imported from spec files (`import jsonl`): they can be
/// found and described; a call checks its arguments, then says there is no implementation.
pub(crate) const SPEC_ONLY: &str = "spec_only";

/// Catalogs with at least this many tools get a progress spinner while they are indexed.
const LARGE_CATALOG: usize = 5_000;

/// Options every command shares.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Global {
    /// The catalog directory (default: $TOOLSCOUT_HOME, else $XDG_DATA_HOME/toolscout,
    /// else ~/.local/share/toolscout). The built-in tools are always there.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) catalog: Option<PathBuf>,
    /// The directory the file tools may touch (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// A host `http_get` and HTTP tools may reach, e.g. `api.github.com` or
    /// `*.example.com` (repeatable).
    #[arg(long = "allow-host", global = true, value_name = "HOST")]
    pub(crate) allow_hosts: Vec<String>,
    /// Let the allowed hosts resolve to loopback and private addresses (local services).
    #[arg(long, global = true)]
    pub(crate) allow_private: bool,
}

impl Global {
    /// The catalog directory, created when missing.
    pub(crate) fn catalog_dir(&self) -> Result<PathBuf> {
        let dir = match &self.catalog {
            Some(d) => d.clone(),
            None => default_dir()?,
        };
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("creating the catalog directory {}", dir.display()))?;
        Ok(dir)
    }
}

fn default_dir() -> Result<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(home) = var("TOOLSCOUT_HOME") {
        return Ok(home);
    }
    if let Some(data) = var("XDG_DATA_HOME") {
        return Ok(data.join("toolscout"));
    }
    if let Some(home) = var("HOME") {
        return Ok(home.join(".local/share/toolscout"));
    }
    bail!("no catalog directory: pass --catalog DIR or set TOOLSCOUT_HOME")
}

/// An opened catalog and an invoker whose native functions it knows about.
pub(crate) struct Context {
    pub(crate) catalog: Catalog,
    pub(crate) invoker: Invoker,
}

impl Context {
    /// Opens the catalog and registers the built-in native tools.
    pub(crate) fn open(global: &Global) -> Result<Context> {
        let workspace = match &global.workspace {
            Some(w) => w.clone(),
            None => std::env::current_dir().context("reading the current directory")?,
        };
        let hosts = AllowedHosts::new(&global.allow_hosts).allow_private(global.allow_private);
        let mut invoker =
            Invoker::default().with_http_config(HttpConfig::with_allowed_hosts(hosts.clone()));
        let config = BuiltinConfig::new(workspace, hosts);
        toolscout_invoke::builtin::register(&mut invoker, &config)
            .context("registering the built-in tools")?;
        invoker
            .register_dyn(Arc::new(SpecOnly))
            .context("registering spec-only tools")?;
        let dir = global.catalog_dir()?;
        super::mcp::register(&mut invoker, &super::mcp::load(&dir)?)
            .context("registering the tools of imported MCP servers")?;
        let catalog = Catalog::open(&dir, &invoker.native_names())
            .with_context(|| format!("opening the catalog in {}", dir.display()))?;
        for issue in catalog.issues() {
            eprintln!("warning: skipped {issue}");
        }
        Ok(Context { catalog, invoker })
    }

    /// The catalog, its in-memory search index and the invoker, in step.
    pub(crate) fn into_toolbox(self) -> Result<Toolbox> {
        let n = self.catalog.tools().len();
        let spinner = (n >= LARGE_CATALOG && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_message(format!("indexing {n} tools"));
            bar.enable_steady_tick(std::time::Duration::from_millis(100));
            bar
        });
        let toolbox = Toolbox::new(self.catalog, SearchIndex::in_memory()?, self.invoker)?;
        if let Some(s) = spinner {
            s.finish_and_clear();
        }
        Ok(toolbox)
    }
}

/// Every tool of the catalog (disabled ones too), one per name: the callable one changed
/// last, as `Toolbox::lookup` picks it.
pub(crate) fn tools_by_name(catalog: &Catalog) -> Vec<Tool> {
    let mut tools = catalog.tools();
    tools.sort_by(|a, b| {
        b.is_callable()
            .cmp(&a.is_callable())
            .then(b.modified_at.cmp(&a.modified_at))
    });
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<Tool> = tools
        .into_iter()
        .filter(|t| seen.insert(t.spec.name.to_string()))
        .collect();
    out.sort_by_key(|t| t.id);
    out
}

/// The tool named `name` (disabled ones too), or an error that suggests close names.
pub(crate) fn find_tool(catalog: &Catalog, name: &str) -> Result<Tool> {
    let tools = tools_by_name(catalog);
    let specs: Vec<ToolSpec> = tools.iter().map(|t| t.spec.clone()).collect();
    let found = super::find(&specs, name)?;
    let tool = tools
        .iter()
        .find(|t| t.spec.name == found.name)
        .cloned()
        .context("the tool vanished while it was looked up")?;
    Ok(tool)
}

/// The native function behind tools imported from spec files.
struct SpecOnly;

impl DynTool for SpecOnly {
    fn name(&self) -> &str {
        SPEC_ONLY
    }

    fn spec(&self) -> toolscout_spec::Result<ToolSpec> {
        ToolSpec::builder(
            SPEC_ONLY,
            "Stands in for tools imported without an implementation",
        )
        .parameters(json!({"type": "object"}))
        .build()
    }

    fn call_json(
        &self,
        _args: Value,
    ) -> toolscout_invoke::BoxFuture<'_, std::result::Result<Value, ToolError>> {
        Box::pin(async {
            Err(ToolError::new(
                ErrorKind::NotRegistered,
                "this tool was imported from a spec file without an implementation: it can be found and described, not called; use another tool",
            ))
        })
    }
}
