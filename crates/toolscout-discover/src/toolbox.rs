//! [`Toolbox`]: one handle over a catalog, its search index and an invoker, kept in step.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, Weak};

use serde_json::{Value, json};
use toolscout_catalog::{
    Catalog, CatalogChange, CatalogEvent, CatalogView, Subscription, Tool, ToolHead, Viewer,
};
use toolscout_invoke::{ErrorKind, Invoker, Outcome, PlannedStep, ToolError};
use toolscout_search::{Hit, IndexDoc, NameStatus, SearchIndex, SearchQuery};
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::openai::could_alias;
use uuid::Uuid;

use crate::Result;
use crate::recipe::{CallContext, Progress, RecipeRunner, call_catalog_tool};

/// How many whole tools are read and indexed at a time when every tool is indexed.
const INDEX_BATCH: usize = 2048;

/// A catalog, its search index and an invoker, kept in step.
///
/// The toolbox indexes every tool of the catalog when it is made, then listens to the
/// catalog: a tool put, disabled or deleted is found, hidden or gone in the very next
/// search, because a search waits until the index holds every change the catalog had
/// taken in when it was asked (the index is updated as each change is told, in order).
/// Tools are addressed by their [`ToolSpec`] name; when several catalog tools share a
/// name, an enabled built-in wins (built-in names are reserved), then the viewer's own,
/// then a shared one, then a disabled built-in (see [`Toolbox::lookup`]); among one
/// owner's (versions, bundles), the callable one changed last.
///
/// Cloning is cheap: clones share everything.
///
/// A toolbox reads as one [`Viewer`]: the operator (every tool) unless made with
/// [`Toolbox::as_viewer`], whose clone searches, looks up, lists and calls only the
/// tools that viewer sees (a tenant's own, the shared and the built-ins), and answers a
/// name held only outside the view as a name nobody holds, suggestions included.
#[derive(Clone)]
pub struct Toolbox {
    inner: Arc<Inner>,
    viewer: Viewer,
}

struct Inner {
    catalog: Catalog,
    index: SearchIndex,
    invoker: Invoker,
    names: RwLock<Names>,
    subscription: Mutex<Option<Subscription>>,
    sync_error: Mutex<Option<String>>,
    caught_up: Mutex<IndexSync>,
    /// Held by whoever changes the index (a catalog change applied, a catch-up, an
    /// audit): one at a time, so that no thread commits, or rolls back, another's
    /// half-made update (see [`Inner::applying`]).
    applier: Mutex<()>,
}

thread_local! {
    /// Set while this thread holds an [`Inner::applier`]: a catalog change told to this
    /// thread meanwhile (by a reload the catch-up itself makes) is left to that catch-up,
    /// which plans from the catalog after the reload.
    static APPLYING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// How long a search waits for the catalog's changes to reach the index
/// ([`Catalog::settle`]) before it answers from the index as it is.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// How often [`Toolbox::follow`]'s thread audits the index against the catalog.
pub const AUDIT_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// What an audit of the search index against the catalog found and mended
/// ([`Toolbox::audit`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Audit {
    /// Tools the index lacked, or held as they were before a change: indexed again.
    pub repaired: usize,
    /// Tools the index held that the catalog no longer has: dropped.
    pub removed: usize,
    /// The catalog's generation the audit compared with.
    pub generation: u64,
}

impl Audit {
    /// Whether the index differed from the catalog.
    pub fn mended(&self) -> bool {
        self.repaired + self.removed > 0
    }
}

/// What a [`Toolbox`] did to bring its search index in line with the catalog, when it
/// was made or at [`Toolbox::reindex`].
///
/// On an empty index (in memory, or a new directory) every tool is indexed; an index on
/// disk that was committed before keeps the tools that did not change since.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IndexSync {
    /// Tools added: new to the index, or changed since it was committed.
    pub indexed: usize,
    /// Tools dropped: the catalog no longer has them.
    pub removed: usize,
    /// Tools the index already held as they are.
    pub kept: usize,
}

#[derive(Default)]
struct Names {
    by_name: HashMap<String, Vec<Uuid>>,
    name_of: HashMap<Uuid, String>,
    /// Whether these are every tool's names; until then they are read from the catalog
    /// at the first lookup (a toolbox made only to search never needs them).
    whole: bool,
}

/// The tool name `alias` stands for, when exactly one name could be given that alias
/// (see [`could_alias`]); a scan of the names, made only when a name is not found.
fn alias_target<'a>(
    names: &'a Names,
    alias: &str,
    visible: impl Fn(&Vec<Uuid>) -> bool,
) -> Option<&'a str> {
    if !toolscout_spec::adapters::openai::is_legal(alias) {
        return None;
    }
    let mut found = names
        .by_name
        .iter()
        .filter(|(n, ids)| n.as_str() != alias && could_alias(n, alias) && visible(ids))
        .map(|(n, _)| n);
    match (found.next(), found.next()) {
        (Some(one), None) => Some(one.as_str()),
        _ => None,
    }
}

impl Names {
    fn insert(&mut self, id: Uuid, name: &str) {
        self.remove(id);
        self.by_name.entry(name.to_owned()).or_default().push(id);
        self.name_of.insert(id, name.to_owned());
    }

    fn remove(&mut self, id: Uuid) {
        if let Some(name) = self.name_of.remove(&id)
            && let Some(ids) = self.by_name.get_mut(&name)
        {
            ids.retain(|i| *i != id);
            if ids.is_empty() {
                self.by_name.remove(&name);
            }
        }
    }
}

impl std::fmt::Debug for Toolbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolbox")
            .field("catalog", &self.inner.catalog.root())
            .field("tools", &self.inner.index.len())
            .finish()
    }
}

/// How many search hits [`Toolbox::suggest`] reads past to find the name matches.
const SUGGEST_HITS: usize = 50;

/// What a name refers to.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// A tool that can be called.
    Found(Box<Tool>),
    /// A tool that exists but cannot be called now, and why.
    Disabled {
        /// The tool.
        tool: Box<Tool>,
        /// Why it cannot be called, in words.
        reason: String,
    },
    /// No tool has this name; the closest names, best first.
    NotFound {
        /// Suggestions.
        did_you_mean: Vec<String>,
    },
}

impl Lookup {
    /// The callable tool, or the error a call of `name` gets: `disabled` (with the
    /// reason) or `unknown_tool` (with the closest names), as [`Toolbox::call`] answers.
    pub fn into_callable(self, name: &str) -> std::result::Result<Box<Tool>, ToolError> {
        match self {
            Lookup::Found(t) => Ok(t),
            Lookup::Disabled { tool, reason } => {
                Err(disabled(name, tool.spec.name.as_str(), &reason))
            }
            Lookup::NotFound { did_you_mean } => {
                let hint = toolscout_search::did_you_mean(&did_you_mean)
                    .unwrap_or_else(|| "search the catalog for the right tool".to_owned());
                Err(ToolError::new(
                    ErrorKind::UnknownTool,
                    format!("no tool named '{name}'; {hint}"),
                )
                .with_details(json!({"tool": name, "did_you_mean": did_you_mean})))
            }
        }
    }
}

/// The thread of [`Toolbox::follow`]; dropping it stops the thread.
#[derive(Debug)]
pub struct Follower {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Follower {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // Not joined: it ends within one short wait, and a drop must not block.
        drop(self.thread.take());
    }
}

/// One page of search results, resolved to catalog tools.
#[derive(Debug, Clone)]
pub struct ToolHits {
    /// The tools of this page with how each matched, best first.
    pub hits: Vec<(Tool, Hit)>,
    /// The token of the next page.
    pub next_page: Option<String>,
    /// Closest names, when the query looks like an unknown tool name.
    pub did_you_mean: Vec<String>,
    /// Why a tool named exactly like the query is hidden, when it is.
    pub name_status: Option<NameStatus>,
}

impl Toolbox {
    /// Indexes every tool of `catalog` into `index` and starts following the catalog.
    ///
    /// `index` may be an index on disk ([`SearchIndex::open_or_rebuild`]) that this or
    /// another process committed before: only the tools that changed since are indexed
    /// again, and those the catalog no longer has are dropped ([`Toolbox::index_sync`]
    /// says how many of each). Its writer lock is held meanwhile, so two processes
    /// catching up one index take turns.
    pub fn new(catalog: Catalog, index: SearchIndex, invoker: Invoker) -> Result<Toolbox> {
        Self::new_with_progress(catalog, index, invoker, &mut |_, _| {})
    }

    /// [`Toolbox::new`], calling `progress(done, total)` as the tools that need indexing
    /// are indexed (a batch at a time), for a progress bar.
    pub fn new_with_progress(
        catalog: Catalog,
        index: SearchIndex,
        invoker: Invoker,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Toolbox> {
        let inner = Arc::new(Inner {
            catalog,
            index,
            invoker,
            names: RwLock::new(Names::default()),
            subscription: Mutex::new(None),
            sync_error: Mutex::new(None),
            caught_up: Mutex::new(IndexSync::default()),
            applier: Mutex::new(()),
        });
        // Subscribed before the index is brought in line: a change made meanwhile (by
        // this process or read from another) is applied after the catch-up, never lost
        // between the two; one the catch-up's own reload tells is in its plan.
        let weak: Weak<Inner> = Arc::downgrade(&inner);
        let sub = inner.catalog.subscribe(move |change| {
            if let Some(inner) = weak.upgrade() {
                inner.apply(change);
            }
        });
        *inner.subscription.lock().unwrap_or_else(|e| e.into_inner()) = Some(sub);
        inner.index_all(true, progress)?;
        Ok(Toolbox {
            inner,
            viewer: Viewer::Operator,
        })
    }

    /// The catalog, whole (as the operator sees it, whatever this toolbox's viewer):
    /// for upkeep. Reads on behalf of the viewer go through [`Toolbox::view`].
    pub fn catalog(&self) -> &Catalog {
        &self.inner.catalog
    }

    /// This toolbox as `viewer` sees the catalog: a cheap clone sharing the index.
    ///
    /// ```
    /// # use toolscout_discover::Toolbox;
    /// # use toolscout_catalog::{BundlePut, Catalog, TenantLimits, ToolPut, Viewer};
    /// # let dir = tempfile::tempdir()?;
    /// let catalog = Catalog::open(dir.path(), &[])?;
    /// let (acme, _) = catalog.add_tenant("acme", TenantLimits::default())?;
    /// let crm = uuid::Uuid::now_v7();
    /// catalog.put_bundle(crm, &BundlePut::new("crm"))?;
    /// let spec = toolscout_spec::ToolSpec::builder("crm_lookup", "Find a customer").build()?;
    /// catalog.put_tool(crm, "lookup", "1", &ToolPut::spec_only(spec))?;
    /// catalog.set_bundle_owner(crm, Some(acme.id))?;
    /// let index = toolscout_search::SearchIndex::in_memory()?;
    /// let toolbox = Toolbox::new(catalog, index, toolscout_invoke::Invoker::default())?;
    ///
    /// let of_acme = toolbox.as_viewer(Viewer::Tenant(acme.id));
    /// assert!(!matches!(of_acme.lookup("crm_lookup"), toolscout_discover::Lookup::NotFound { .. }));
    /// let public = toolbox.as_viewer(Viewer::Public);
    /// assert!(matches!(public.lookup("crm_lookup"), toolscout_discover::Lookup::NotFound { .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn as_viewer(&self, viewer: Viewer) -> Toolbox {
        Toolbox {
            inner: Arc::clone(&self.inner),
            viewer,
        }
    }

    /// Who this toolbox reads as.
    pub fn viewer(&self) -> &Viewer {
        &self.viewer
    }

    /// The catalog as this toolbox's viewer sees it.
    pub fn view(&self) -> CatalogView<'_> {
        self.inner.catalog.view(&self.viewer)
    }

    /// `query` limited to the viewer's scopes (unchanged for the operator).
    fn scoped(&self, query: &SearchQuery) -> SearchQuery {
        let mut q = query.clone();
        if let Some(scopes) = self.viewer.scopes() {
            q.scopes = Some(scopes);
        }
        q
    }

    /// Keeps this toolbox in step with other processes' writes from a thread of its own,
    /// without waiting for a request: [`Catalog::follow_once`] in a loop (a change reaches
    /// the search index as soon as the store announces it, and the store is asked itself
    /// at least every [`toolscout_catalog::FOLLOW_CHECK`]; an index update that failed is
    /// tried again every 2 s, see [`Toolbox::sync_error`]). Every [`AUDIT_EVERY`] it
    /// also audits the index against the catalog ([`Toolbox::audit`]) and mends what
    /// differs. The thread ends when the [`Follower`] is dropped, or the toolbox is.
    pub fn follow(&self) -> Follower {
        self.follow_reporting(|_| {})
    }

    /// [`Toolbox::follow`], calling `on_mend` with each audit that found the index out
    /// of line with the catalog (and mended it): for a server's log.
    pub fn follow_reporting(&self, on_mend: impl Fn(&Audit) + Send + 'static) -> Follower {
        let weak = Arc::downgrade(&self.inner);
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("toolscout-follow".to_owned())
            .spawn(move || {
                let mut healed = std::time::Instant::now();
                let mut audited = std::time::Instant::now();
                while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                    let Some(inner) = weak.upgrade() else {
                        break;
                    };
                    // An index update that failed (a store that did not answer) is not
                    // left for the next change to mend: every 2 s it is tried again.
                    let failed = inner
                        .sync_error
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .is_some();
                    if failed && healed.elapsed() >= std::time::Duration::from_secs(2) {
                        healed = std::time::Instant::now();
                        if inner.index_all(false, &mut |_, _| {}).is_ok() {
                            *inner.sync_error.lock().unwrap_or_else(|e| e.into_inner()) = None;
                        }
                    }
                    if audited.elapsed() >= AUDIT_EVERY {
                        audited = std::time::Instant::now();
                        // An audit that cannot read the store now is tried at the next.
                        if let Ok(audit) = inner.audit()
                            && audit.mended()
                        {
                            on_mend(&audit);
                        }
                    }
                    // Short waits: a drop is noticed within one.
                    if inner
                        .catalog
                        .follow_once(std::time::Duration::from_millis(250))
                        .is_err()
                    {
                        drop(inner);
                        // The store is away (a restarting database): try again soon.
                        std::thread::sleep(std::time::Duration::from_millis(500));
                    }
                }
            })
            .ok();
        Follower { stop, thread }
    }

    /// Compares the search index with the catalog, tool by tool (each tool's
    /// fingerprint: its content, whether it can be called, its bundle's words), and
    /// indexes again every tool that differs, dropping those the catalog no longer has.
    /// [`Toolbox::follow`] runs it every [`AUDIT_EVERY`]; an index kept by the catalog's
    /// changes never differs, so an audit that mends something means an update was lost
    /// (say so in a log). While changes are being applied the audit compares nothing
    /// (they would look lost) and reports nothing mended: it is left for the next time.
    ///
    /// It reads every tool's head and the index's fingerprints (about 0.1 s for 92k
    /// tools), and takes turns with the updates of catalog changes.
    pub fn audit(&self) -> Result<Audit> {
        self.inner.audit()
    }

    /// The search index.
    pub fn index(&self) -> &SearchIndex {
        &self.inner.index
    }

    /// The invoker.
    pub fn invoker(&self) -> &Invoker {
        &self.inner.invoker
    }

    /// The last error met while updating the index after a catalog change, if any.
    /// The catalog itself is never affected; [`Toolbox::reindex`] rebuilds the index.
    pub fn sync_error(&self) -> Option<String> {
        self.inner
            .sync_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// What the last catch-up of the index did ([`Toolbox::new`], [`Toolbox::reindex`]).
    pub fn index_sync(&self) -> IndexSync {
        *self
            .inner
            .caught_up
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Brings the index in line with the catalog again, indexing each tool that differs
    /// from what the index holds (after a [`Toolbox::sync_error`], or a
    /// [`Catalog::reload`] that found nothing to announce).
    pub fn reindex(&self) -> Result<()> {
        self.inner.index_all(false, &mut |_, _| {})?;
        *self
            .inner
            .sync_error
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = None;
        Ok(())
    }

    /// What `name` refers to: a callable tool, a disabled one (with the reason), or
    /// nothing (with the closest names). A name that is no tool's but is the OpenAI alias
    /// of one (`math_gcd_e209990b` for `math.gcd`, as `export --format openai` and the
    /// agent loop name it) refers to that tool.
    ///
    /// Of several tools of one name, the viewer's own wins, then a shared one, then a
    /// built-in ([`toolscout_catalog::NameRank`]), never the one changed last across
    /// owners; the operator reaches a tenant's unshared tool only by its qualified name,
    /// `tenant:bundle/tool` (`bundle/tool` for the operator's and the built-ins; the
    /// tool's slug or name), which names one tool of one bundle in any view.
    pub fn lookup(&self, name: &str) -> Lookup {
        let view = self.view();
        if name.contains('/') {
            let tool = view.resolve(name).and_then(|(id, _)| view.tool(id).ok());
            return match tool {
                Some(t) => found_or_disabled(t),
                None => Lookup::NotFound {
                    did_you_mean: self.suggest(name.rsplit('/').next().unwrap_or(name)),
                },
            };
        }
        let picked = {
            let names = self.inner.read_names();
            let reached = |ids: &Vec<Uuid>| view.pick(ids);
            names.by_name.get(name).and_then(reached).or_else(|| {
                alias_target(&names, name, |ids| reached(ids).is_some())
                    .and_then(|n| names.by_name.get(n))
                    .and_then(reached)
            })
        };
        match picked.and_then(|(id, _)| view.tool(id).ok()) {
            Some(t) => found_or_disabled(t),
            None => Lookup::NotFound {
                did_you_mean: self.suggest(name),
            },
        }
    }

    /// Names close to `name`, at most five: the one tool whose name starts with `name`
    /// when there is exactly one (a name cut short), then the search index's did-you-mean.
    pub fn suggest(&self, name: &str) -> Vec<String> {
        // Enough hits that the name matches are all there behind the word matches: which
        // of them make the first five then depends on the scope's tools alone, where a
        // cut at five hits would depend on other scopes' tools through the index-wide
        // word statistics that order the word matches.
        let q = SearchQuery::new(name)
            .with_include_disabled(true)
            .with_limit(SUGGEST_HITS);
        let Ok(mut r) = self.searched(&q) else {
            return Vec::new();
        };
        if r.did_you_mean.is_empty() {
            // Only name matches make suggestions: a word of a description is no typo.
            r.hits.retain(|h| h.tier != toolscout_search::Tier::Word);
        }
        r.hits.truncate(5);
        // Suggestions are a courtesy: a store that cannot be read now gives none.
        let hits = self.resolve(r.hits).unwrap_or_default();
        // A name cut short (a small model writes `list_numbers_for_a_country` for
        // `list_numbers_for_a_country_for_acme_voice_api`) is the start of the tool it
        // meant: when exactly one tool's name starts with it, that tool comes first.
        let lower = name.to_lowercase();
        let mut starting: Vec<String> = hits
            .iter()
            .map(|(t, _)| t.spec.name.to_string())
            .filter(|n| n.len() > name.len() && n.to_lowercase().starts_with(&lower))
            .collect();
        starting.dedup();
        let mut out: Vec<String> = if starting.len() == 1 {
            starting
        } else {
            Vec::new()
        };
        let rest: Vec<String> = if r.did_you_mean.is_empty() {
            hits.into_iter()
                .map(|(t, _)| t.spec.name.to_string())
                .collect()
        } else {
            r.did_you_mean
        };
        for n in rest {
            if !out.contains(&n) {
                out.push(n);
            }
        }
        out.truncate(5);
        out
    }

    /// Callable tools to offer for `name`, which is not a tool's name: the closest names
    /// when there are some, else the best search hits for its words (a model that
    /// guessed `calculate_light_travel_time` is offered `light_travel_time`). At most
    /// `limit`.
    pub fn suggest_tools(&self, name: &str, limit: usize) -> Vec<Tool> {
        fn push(out: &mut Vec<Tool>, t: Tool, limit: usize) {
            if t.is_callable()
                && out.len() < limit
                && !out.iter().any(|o| o.spec.name == t.spec.name)
            {
                out.push(t);
            }
        }
        let mut out: Vec<Tool> = Vec::new();
        for close in self.suggest(name) {
            if let Lookup::Found(t) = self.lookup(&close) {
                push(&mut out, *t, limit);
            }
        }
        if out.is_empty() {
            let words = name.replace(['_', '.', '-'], " ");
            if let Ok(found) = self.search(&SearchQuery::new(words).with_limit(limit)) {
                for (t, _) in found.hits {
                    push(&mut out, t, limit);
                }
            }
        }
        out
    }

    /// Runs a search and resolves the hits to catalog tools (one per name).
    ///
    /// It answers from an index that holds at least every change the catalog had taken
    /// in when it was asked (see [`Catalog::settle`]; it waits up to 2 s for one being
    /// applied), so a tool that a read of this toolbox returns is found by its search.
    pub fn search(&self, query: &SearchQuery) -> Result<ToolHits> {
        let r = self.searched(query)?;
        Ok(ToolHits {
            hits: self.resolve(r.hits)?,
            next_page: r.next_page,
            did_you_mean: r.did_you_mean,
            name_status: r.name_status,
        })
    }

    /// The index's answer to `query` in this toolbox's view, once the catalog's changes
    /// have reached it.
    fn searched(&self, query: &SearchQuery) -> Result<toolscout_search::SearchResults> {
        self.inner.catalog.settle(SETTLE);
        Ok(self.inner.index.search(&self.scoped(query))?)
    }

    /// The hits' tools, one per name, in the hits' order; a hit whose tool is gone is
    /// left out, and a store that cannot be read is an error, not an empty page.
    fn resolve(&self, hits: Vec<Hit>) -> Result<Vec<(Tool, Hit)>> {
        let mut seen = std::collections::HashSet::new();
        let ids: Vec<Uuid> = hits
            .iter()
            .filter_map(|h| Uuid::parse_str(&h.id).ok())
            .collect();
        // One read for the page (one round trip on a database); a hit outside the view
        // (which a scoped query does not give) is dropped all the same.
        let mut tools: HashMap<Uuid, Tool> = self
            .view()
            .tools_of(&ids)?
            .into_iter()
            .map(|t| (t.id, t))
            .collect();
        Ok(hits
            .into_iter()
            .filter_map(|h| {
                let id = Uuid::parse_str(&h.id).ok()?;
                let tool = tools.remove(&id)?;
                seen.insert(tool.spec.name.to_string()).then_some((tool, h))
            })
            .collect())
    }

    /// The specs of every callable tool, one per name, in catalog order, as a list of
    /// tools shows them ([`listed_spec`]: a spec-only tool says so).
    ///
    /// This reads every callable stored tool's file: for a large catalog, walk
    /// [`Toolbox::callable_heads`] and read only the tools needed.
    pub fn callable_specs(&self) -> Vec<ToolSpec> {
        let view = self.view();
        self.callable_heads()
            .iter()
            .filter_map(|h| view.tool(h.id).ok())
            .map(listed_spec)
            .collect()
    }

    /// The heads of every callable tool, one per name as [`Toolbox::lookup`] resolves
    /// it (the tools [`Toolbox::callable_specs`] gives), in catalog order; no file is
    /// read.
    pub fn callable_heads(&self) -> Vec<ToolHead> {
        let view = self.view();
        let holders: std::collections::HashSet<Uuid> = view
            .name_holders()
            .into_iter()
            .filter(|(_, callable)| *callable)
            .map(|(id, _)| id)
            .collect();
        view.heads()
            .into_iter()
            .filter(|h| holders.contains(&h.id))
            .collect()
    }

    /// Calls the tool named `name` with `args`: `{ok:true, value}` or `{ok:false, error}`,
    /// once the [`Call`] is awaited.
    ///
    /// Unknown and disabled tools are error outcomes that say what to do. The call is
    /// counted in the catalog's usage metrics. [`Call::approved`] says the caller has
    /// asked its own approver already; [`Call::observed`] follows a recipe's steps.
    ///
    /// ```
    /// # use toolscout_discover::Toolbox;
    /// # async fn demo(toolbox: &Toolbox) {
    /// let args = serde_json::json!({"action": "now"});
    /// let outcome = toolbox.call("clock", args.clone()).await;
    /// // The agent loop asked its approver: the invoker does not ask again.
    /// let again = toolbox.call("clock", args).approved().await;
    /// # let _ = (outcome, again);
    /// # }
    /// ```
    pub fn call(&self, name: &str, args: Value) -> Call<'_> {
        Call::new(self, Callee::Name(name.to_owned()), args)
    }

    /// Whether a call of `tool` needs approval: its spec says so, or the native function
    /// it calls was registered so (see [`Invoker::requires_approval`]).
    /// A recipe needs it when it or any of its steps does ([`Toolbox::recipe_plan`]).
    pub fn requires_approval(&self, tool: &Tool) -> bool {
        if crate::recipe::is_recipe(tool) {
            return tool.spec.metadata.requires_approval
                || self
                    .recipe_plan(tool)
                    .is_ok_and(|plan| plan.iter().any(|s| s.requires_approval));
        }
        match toolscout_invoke::InvokableTool::from_parts(
            tool.spec.clone(),
            tool.tool_type,
            &tool.implementation,
        ) {
            Ok(t) => self.inner.invoker.requires_approval(&t),
            Err(_) => tool.spec.metadata.requires_approval,
        }
    }

    /// Calls one catalog tool (one version of one bundle, as a listing or a lookup gave
    /// it), once the [`Call`] is awaited: a disabled one, or one outside this toolbox's
    /// view, is an error outcome; the call is counted in the catalog's usage.
    pub fn call_tool<'a>(&'a self, tool: &'a Tool, args: Value) -> Call<'a> {
        Call::new(self, Callee::Tool(tool), args)
    }

    /// What the call of `tool` will run, when it is a recipe: its steps (a nested
    /// recipe's too) and whether each asks for approval, as its one approval lists them
    /// ([`toolscout_invoke::ApprovalRequest::steps`]). Empty for any other tool; an
    /// error when a step's tool is missing or disabled (the call would fail so).
    pub fn recipe_plan(&self, tool: &Tool) -> std::result::Result<Vec<PlannedStep>, ToolError> {
        if !crate::recipe::is_recipe(tool) {
            return Ok(Vec::new());
        }
        let recipe = toolscout_spec::recipe::Recipe::parse(&tool.implementation).map_err(|e| {
            ToolError::new(
                ErrorKind::Disabled,
                format!("tool '{}' cannot be called: {e}", tool.spec.name),
            )
        })?;
        RecipeRunner::new(self.call_context(None), tool.spec.name.as_str(), &recipe).plan_steps()
    }

    pub(crate) fn call_context<'a>(&'a self, progress: Option<&'a Progress>) -> CallContext<'a> {
        CallContext {
            catalog: &self.inner.catalog,
            invoker: &self.inner.invoker,
            viewer: &self.viewer,
            progress,
            depth: 0,
            budget: None,
        }
    }
}

/// What a [`Call`] calls: a name, looked up when the call runs, or one catalog tool.
enum Callee<'a> {
    Name(String),
    Tool(&'a Tool),
}

/// One call of a tool of a [`Toolbox`], made by [`Toolbox::call`] or
/// [`Toolbox::call_tool`]: a future that resolves to the [`Outcome`]; nothing runs until
/// it is polled, and the builder methods set how it runs before then. Like an `async
/// fn`'s future it panics if polled again after it completed.
#[must_use = "a call does nothing until it is awaited"]
pub struct Call<'a> {
    toolbox: &'a Toolbox,
    /// What to call; taken when the call starts.
    callee: Option<Callee<'a>>,
    args: Value,
    approved: bool,
    progress: Option<Progress>,
    /// The call, once started.
    running: Option<toolscout_invoke::BoxFuture<'a, Outcome>>,
}

impl std::fmt::Debug for Call<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let callee = match &self.callee {
            Some(Callee::Name(n)) => n.as_str(),
            Some(Callee::Tool(t)) => t.spec.name.as_str(),
            None => "(started)",
        };
        f.debug_struct("Call")
            .field("tool", &callee)
            .field("approved", &self.approved)
            .field("observed", &self.progress.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a> Call<'a> {
    fn new(toolbox: &'a Toolbox, callee: Callee<'a>, args: Value) -> Self {
        Call {
            toolbox,
            callee: Some(callee),
            args,
            approved: false,
            progress: None,
            running: None,
        }
    }

    /// The caller has asked its own approver (the agent loop does): the invoker does
    /// not ask again, whatever the tool's approval rules say.
    pub fn approved(self) -> Self {
        self.approved_if(true)
    }

    /// [`Call::approved`] when `approved` holds (a caller that decides at run time);
    /// otherwise the invoker asks its approver where the tool requires it.
    pub fn approved_if(mut self, approved: bool) -> Self {
        self.approved = approved;
        self
    }

    /// Tells `progress` how a recipe's steps go ([`RecipeEvent`](crate::RecipeEvent));
    /// other tools tell nothing.
    pub fn observed(mut self, progress: Progress) -> Self {
        self.progress = Some(progress);
        self
    }
}

/// Runs one call (the body of [`Call`]'s future).
async fn run_call<'a>(
    toolbox: &'a Toolbox,
    callee: Callee<'a>,
    args: Value,
    approved: bool,
    progress: Option<Progress>,
) -> Outcome {
    let cx = toolbox.call_context(progress.as_ref());
    match callee {
        Callee::Name(name) => match toolbox.lookup(&name).into_callable(&name) {
            Ok(tool) => call_catalog_tool(cx, &tool, args, approved).await,
            Err(e) => Outcome::Err(e),
        },
        Callee::Tool(tool) => {
            if toolbox.view().head(tool.id).is_err() {
                // Outside the view: answered as a name nobody holds.
                let name = tool.spec.name.as_str();
                let nobody = Lookup::NotFound {
                    did_you_mean: toolbox.suggest(name),
                };
                if let Err(e) = nobody.into_callable(name) {
                    return Outcome::Err(e);
                }
            }
            call_catalog_tool(cx, tool, args, approved).await
        }
    }
}

impl std::future::Future for Call<'_> {
    type Output = Outcome;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Outcome> {
        // Every field is `Unpin` (the running call is boxed).
        let this = self.get_mut();
        if this.running.is_none() {
            let Some(callee) = this.callee.take() else {
                // As an `async fn`'s future does: a caller bug, not a state to wait in.
                panic!("a `Call` was polled after it completed");
            };
            this.running = Some(Box::pin(run_call(
                this.toolbox,
                callee,
                std::mem::take(&mut this.args),
                this.approved,
                this.progress.take(),
            )));
        }
        match this.running.as_mut() {
            Some(running) => {
                let polled = running.as_mut().poll(cx);
                if polled.is_ready() {
                    this.running = None;
                }
                polled
            }
            None => panic!("a `Call` was polled after it completed"),
        }
    }
}

/// Calls what `name` was looked up as ([`Toolbox::lookup`], or a lookup of the caller's
/// own over the same catalog): unknown and disabled tools are error outcomes that say
/// what to do; the call is counted in the catalog's usage. With `approved`, the invoker
/// does not ask its approver (the caller did).
///
/// This is [`Toolbox::call`] without the search index, for a caller that calls one tool
/// and has no use for search (the CLI's `call`).
pub async fn call_looked_up(
    catalog: &Catalog,
    invoker: &Invoker,
    lookup: Lookup,
    name: &str,
    args: Value,
    approved: bool,
) -> Outcome {
    match lookup.into_callable(name) {
        Ok(tool) => {
            let cx = CallContext {
                catalog,
                invoker,
                viewer: &Viewer::Operator,
                progress: None,
                depth: 0,
                budget: None,
            };
            call_catalog_tool(cx, &tool, args, approved).await
        }
        Err(e) => Outcome::Err(e),
    }
}

/// A tool a name resolved to: found when it can be called, else disabled with why.
fn found_or_disabled(t: Tool) -> Lookup {
    if t.is_callable() {
        return Lookup::Found(Box::new(t));
    }
    let reason = t
        .disabled_reason
        .as_ref()
        .map_or_else(|| "the tool is disabled".to_owned(), ToString::to_string);
    Lookup::Disabled {
        tool: Box::new(t),
        reason,
    }
}

/// The `disabled` error of a call of `name` (the tool `tool`): why, and what to do.
pub(crate) fn disabled(name: &str, tool: &str, reason: &str) -> ToolError {
    ToolError::new(
        ErrorKind::Disabled,
        format!("tool '{name}' cannot be called: {reason}; use another tool"),
    )
    .with_details(json!({"tool": tool, "reason": reason}))
}

impl Inner {
    /// The names of every tool, read from the catalog first if they were not yet.
    fn read_names(&self) -> std::sync::RwLockReadGuard<'_, Names> {
        let names = self.names.read().unwrap_or_else(|e| e.into_inner());
        if names.whole {
            return names;
        }
        drop(names);
        {
            // Read under the write lock: a change applied meanwhile waits, and lands on
            // top of what is read here.
            let mut names = self.write_names();
            if !names.whole {
                let mut all = Vec::with_capacity(self.catalog.len());
                self.catalog
                    .for_each_head(|h, _| all.push((h.id, h.name.clone())));
                *names = Names::default();
                for (id, name) in &all {
                    names.insert(*id, name);
                }
                names.whole = true;
            }
        }
        self.names.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write_names(&self) -> std::sync::RwLockWriteGuard<'_, Names> {
        self.names.write().unwrap_or_else(|e| e.into_inner())
    }

    fn bundle_words(&self) -> HashMap<Uuid, BundleWords> {
        bundle_words(&self.catalog)
    }

    /// Learns every tool's name from the catalog's heads and brings the index in line:
    /// each tool whose fingerprint the index does not hold (new, changed, or without its
    /// vector) is read whole and indexed, a batch at a time, so that memory stays bounded
    /// however large the catalog is; tools the catalog no longer has are dropped. With
    /// `reload`, what other processes wrote is read first.
    ///
    /// The index is compared first without its writer lock: a current index (the common
    /// case) is never locked. Otherwise the lock is taken, what other processes wrote
    /// meanwhile is read again, and the comparison is made again under it, so that nothing
    /// another process indexed is dropped as unknown. An error lets the lock go.
    fn index_all(&self, reload: bool, progress: &mut dyn FnMut(usize, usize)) -> Result<()> {
        if reload {
            // Outside the applier's lock: what it reads is applied as any change is.
            self.catalog.reload()?;
        }
        match self.applying(|| self.index_all_locked(reload, progress)) {
            Some(result) => result,
            // This thread is applying already, and its own plan covers the catalog.
            None => Ok(()),
        }
    }

    /// Runs `f` as the one applier of index updates (see [`Inner::applier`]); on a
    /// thread that already is one (a change told by the catch-up's own reload), `None`
    /// without running it.
    fn applying<T>(&self, f: impl FnOnce() -> T) -> Option<T> {
        struct Done;
        impl Drop for Done {
            fn drop(&mut self) {
                APPLYING.with(|a| a.set(false));
            }
        }
        if APPLYING.with(std::cell::Cell::get) {
            return None;
        }
        let _one = self.applier.lock().unwrap_or_else(|e| e.into_inner());
        APPLYING.with(|a| a.set(true));
        let _done = Done;
        Some(f())
    }

    /// [`index_all`](Self::index_all) as the applier; with `reload`, the store is read
    /// again once the index's writer lock is held.
    fn index_all_locked(&self, reload: bool, progress: &mut dyn FnMut(usize, usize)) -> Result<()> {
        // Read before the index moves to its latest commit (see `SearchIndex::source`).
        let recorded = self.index.source()?;
        self.index.reload()?;
        let token = self.source_token();
        if token.is_some() && token == recorded {
            // The index was brought in line with exactly this catalog: nothing to compare.
            self.write_names().whole = false;
            *self.caught_up.lock().unwrap_or_else(|e| e.into_inner()) = IndexSync {
                indexed: 0,
                removed: 0,
                kept: usize::try_from(self.index.len()).unwrap_or(usize::MAX),
            };
            return Ok(());
        }
        let plan = self.plan(&self.index.fingerprints()?);
        if plan.todo.is_empty() && plan.gone.is_empty() && token.is_none() {
            self.learn_names(&plan.names);
            *self.caught_up.lock().unwrap_or_else(|e| e.into_inner()) = plan.sync();
            return Ok(());
        }
        // Something to index, or an index in line whose commit does not say so yet: the
        // next toolbox over this catalog then skips the comparison.
        let have = self.index.fingerprints_for_update()?;
        let result = self.update_locked(&have, reload, progress).map(|_| ());
        if result.is_err() {
            let _ = self.index.rollback();
        }
        result
    }

    /// The token a commit records when it brings the index in line with the catalog as it
    /// is now: the catalog's [`Catalog::content_token`], with what else decides the
    /// documents ([`fingerprint`]'s version). `None` when the catalog has none.
    fn source_token(&self) -> Option<String> {
        /// Changes whenever [`fingerprint`] or [`doc`] changes what they make of a tool.
        const DOCUMENTS: &str = "toolbox/2";
        Some(format!("{DOCUMENTS} {}", self.catalog.content_token()?))
    }

    /// [`index_all`](Self::index_all) once the writer lock is held (`have` read under it);
    /// returns what it did.
    fn update_locked(
        &self,
        have: &HashMap<String, u64>,
        reload: bool,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<IndexSync> {
        if reload {
            self.catalog.reload()?;
        }
        let token = self.source_token();
        let plan = self.plan(have);
        self.learn_names(&plan.names);
        let sync = plan.sync();
        for id in &plan.gone {
            self.index.delete(id)?;
        }
        if !plan.todo.is_empty() {
            progress(0, plan.todo.len());
        }
        let mut done = 0;
        for batch in plan.todo.chunks(INDEX_BATCH) {
            // A tool another process deleted meanwhile is skipped: its event follows.
            let ids: Vec<Uuid> = batch.iter().map(|(id, _)| *id).collect();
            let fingerprints: HashMap<Uuid, u64> = batch.iter().copied().collect();
            // Read together: one round trip on a database, not one a tool.
            let tools: Vec<(Tool, u64)> = self
                .catalog
                .tools_of(&ids)?
                .into_iter()
                .filter_map(|t| {
                    let fp = *fingerprints.get(&t.id)?;
                    Some((t, fp))
                })
                .collect();
            let ids: Vec<String> = tools.iter().map(|(t, _)| t.id.to_string()).collect();
            self.index.add(
                tools
                    .iter()
                    .zip(&ids)
                    .map(|((t, fp), id)| doc(t, id, &plan.bundles).with_fingerprint(*fp)),
                &mut |_| {},
            )?;
            done += batch.len();
            progress(done, plan.todo.len());
        }
        // The commit says the index is in line with the catalog only if the catalog did
        // not move since the plan was made (a change this process made meanwhile, a tool
        // skipped above): then it is in line with no one state of it.
        let token = token.filter(|t| self.source_token().as_deref() == Some(t.as_str()));
        if plan.todo.is_empty() && plan.gone.is_empty() && token.is_none() {
            self.index.rollback()?;
        } else {
            self.index.set_source(token.as_deref());
            self.index.commit()?;
        }
        *self.caught_up.lock().unwrap_or_else(|e| e.into_inner()) = sync;
        Ok(sync)
    }

    /// Compares every tool's fingerprint in the index with the catalog's, as the
    /// applier, and indexes again what differs (see [`Toolbox::audit`]).
    fn audit(&self) -> Result<Audit> {
        let generation = self.catalog.generation();
        let audited = self.applying(|| -> Result<Audit> {
            let mut audit = Audit {
                generation,
                ..Audit::default()
            };
            // Only a catalog whose every change has reached the index is compared: a
            // change being told waits for this applier, and its tools would look lost.
            // Held as the applier, nothing is told meanwhile; a change queued during the
            // comparison shows when it ends. Then the audit is left for the next time.
            let quiet = || self.catalog.settle(std::time::Duration::ZERO);
            if !quiet() {
                return Ok(audit);
            }
            self.index.reload()?;
            let plan = self.plan(&self.index.fingerprints()?);
            if plan.todo.is_empty() && plan.gone.is_empty() || !quiet() {
                return Ok(audit);
            }
            let have = self.index.fingerprints_for_update()?;
            match self.update_locked(&have, false, &mut |_, _| {}) {
                Ok(sync) => {
                    audit.repaired = sync.indexed;
                    audit.removed = sync.removed;
                    Ok(audit)
                }
                Err(e) => {
                    let _ = self.index.rollback();
                    Err(e)
                }
            }
        });
        audited.unwrap_or(Ok(Audit {
            generation,
            ..Audit::default()
        }))
    }

    /// What to index and drop for the catalog as it is now, against the index's `have`.
    /// The heads are visited, not copied: only names and ids are kept.
    fn plan(&self, have: &HashMap<String, u64>) -> Plan {
        let bundles = self.bundle_words();
        let mut names: Vec<(Uuid, String)> = Vec::with_capacity(self.catalog.len());
        let mut todo: Vec<(Uuid, u64)> = Vec::new();
        let mut wanted: std::collections::HashSet<String> =
            std::collections::HashSet::with_capacity(names.capacity());
        self.catalog.for_each_head(|h, disabled| {
            let id = h.id.to_string();
            let fp = fingerprint(h, disabled.is_none(), bundles.get(&h.bundle_id));
            if have.get(&id) != Some(&fp) || self.index.needs_vector(&id) {
                todo.push((h.id, fp));
            }
            wanted.insert(id);
            names.push((h.id, h.name.clone()));
        });
        let gone = have
            .keys()
            .filter(|id| !wanted.contains(*id))
            .cloned()
            .collect();
        Plan {
            names,
            bundles,
            todo,
            gone,
        }
    }

    /// Replaces the names known with `names`.
    fn learn_names(&self, names: &[(Uuid, String)]) {
        let mut known = self.write_names();
        *known = Names::default();
        for (id, name) in names {
            known.insert(*id, name);
        }
        known.whole = true;
    }

    /// Brings the index in line with one committed catalog change; after a change that
    /// could not be applied (another process held the index's lock too long, say), the
    /// whole index is brought in line first.
    fn apply(&self, change: &CatalogChange) {
        // Changes come one at a time, in order (see `Catalog::subscribe`); a catch-up or
        // an audit on another thread is waited for. On a thread that is catching up
        // itself, the change is in its plan.
        let _ = self.applying(|| self.apply_locked(change));
    }

    /// [`apply`](Self::apply) as the applier.
    fn apply_locked(&self, change: &CatalogChange) {
        let failed_before = self
            .sync_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some();
        let result = if failed_before {
            self.index_all_locked(false, &mut |_, _| {})
        } else {
            self.try_apply(change)
        };
        match result {
            Ok(()) => *self.sync_error.lock().unwrap_or_else(|p| p.into_inner()) = None,
            Err(e) => {
                // Half-applied writes are dropped with the lock: the next change redoes all.
                let _ = self.index.rollback();
                *self.sync_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
            }
        }
    }

    fn try_apply(&self, change: &CatalogChange) -> Result<()> {
        let bundles = self.bundle_words();
        for event in &change.events {
            match event {
                CatalogEvent::ToolPut { tool, .. } | CatalogEvent::ToolEnabled { tool, .. } => {
                    self.upsert_id(*tool, &bundles)?;
                }
                CatalogEvent::ToolDeleted { tool, .. } => {
                    self.write_names().remove(*tool);
                    self.index.delete(&tool.to_string())?;
                }
                CatalogEvent::BundlePut { bundle }
                | CatalogEvent::BundleEnabled { bundle, .. }
                | CatalogEvent::BundleDeleted { bundle }
                | CatalogEvent::BundleRestored { bundle }
                | CatalogEvent::BundleRemoved { bundle } => {
                    // The bundle's tools now, and those the index holds that the
                    // catalog no longer has (a removed bundle's).
                    let heads = self.catalog.heads();
                    let mut ids: Vec<Uuid> = heads
                        .iter()
                        .filter(|h| h.bundle_id == *bundle)
                        .map(|h| h.id)
                        .collect();
                    let known: std::collections::HashSet<Uuid> =
                        heads.iter().map(|h| h.id).collect();
                    ids.extend(
                        self.index
                            .fingerprints()?
                            .keys()
                            .filter_map(|id| Uuid::try_parse(id).ok())
                            .filter(|id| !known.contains(id)),
                    );
                    for id in ids {
                        self.upsert_id(id, &bundles)?;
                    }
                }
                _ => {}
            }
        }
        self.index.commit()?;
        Ok(())
    }

    /// Re-reads one tool from the catalog into the index (or drops it when it is gone).
    fn upsert_id(&self, id: Uuid, bundles: &HashMap<Uuid, BundleWords>) -> Result<()> {
        match self.catalog.tool(id) {
            Ok(tool) => {
                self.write_names().insert(tool.id, tool.spec.name.as_str());
                let key = tool.id.to_string();
                let fp = fingerprint(
                    &ToolHead::of(&tool),
                    tool.is_callable(),
                    bundles.get(&tool.bundle_id),
                );
                self.index
                    .upsert(&doc(&tool, &key, bundles).with_fingerprint(fp))?;
            }
            // Gone from the catalog (or its file just deleted by another process).
            Err(_) if self.catalog.head(id).is_err() => {
                self.write_names().remove(id);
                self.index.delete(&id.to_string())?;
            }
            // Held but not readable now (a database that does not answer): the change is
            // applied again later, not taken for a deletion.
            Err(e) => return Err(e.into()),
        }
        Ok(())
    }
}

fn doc<'a>(tool: &'a Tool, id: &'a str, bundles: &'a HashMap<Uuid, BundleWords>) -> IndexDoc<'a> {
    let bundle = bundles.get(&tool.bundle_id);
    IndexDoc::new(&tool.spec)
        .with_id(id)
        .with_bundle(bundle.map(|b| b.slug.as_str()))
        .with_bundle_text(
            bundle.map(|b| b.name.as_str()),
            bundle
                .map(|b| b.description.as_str())
                .filter(|d| !d.is_empty()),
        )
        .with_enabled(tool.is_callable())
        .with_modified_at(tool.modified_at.timestamp())
        .with_scope(bundle.map(|b| b.scope.as_str()))
}

/// What a tool's index document takes from its bundle: the slug, the name as people
/// write it, the description, and the scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BundleWords {
    pub(crate) slug: String,
    pub(crate) name: String,
    pub(crate) description: String,
    /// Who sees its tools ([`toolscout_catalog::scope_of`]).
    pub(crate) scope: String,
}

/// What a tool's index document is made from, in 64 bits: its spec (the identity digest:
/// name, version, description, parameters; and the summary, tags and category the index
/// reads too), its bundle's slug, name, description and scope, state and modification
/// time.
///
/// The spec's `title` is not in the head: a title changed alone, by hand, with the same
/// modification time, is seen when the tool is written again (every write moves the time).
fn fingerprint(head: &ToolHead, callable: bool, bundle: Option<&BundleWords>) -> u64 {
    let mut bytes = Vec::with_capacity(256);
    let mut field = |b: &[u8]| {
        bytes.extend_from_slice(&(b.len() as u64).to_le_bytes());
        bytes.extend_from_slice(b);
    };
    field(head.digest.as_bytes());
    field(&head.modified_at.timestamp_micros().to_le_bytes());
    field(&[u8::from(callable)]);
    for part in [
        bundle.map(|b| b.slug.as_str()),
        bundle.map(|b| b.name.as_str()),
        bundle.map(|b| b.description.as_str()),
        bundle.map(|b| b.scope.as_str()),
    ] {
        field(part.unwrap_or("").as_bytes());
    }
    field(head.summary.as_bytes());
    field(head.category.as_deref().unwrap_or("").as_bytes());
    for t in &head.tags {
        field(t.as_bytes());
    }
    let id = Uuid::new_v5(&toolscout_spec::identity::NAMESPACE, &bytes);
    let (high, _) = id.as_u64_pair();
    high
}

/// What [`Inner::plan`] found.
struct Plan {
    /// Every tool's id and name.
    names: Vec<(Uuid, String)>,
    bundles: HashMap<Uuid, BundleWords>,
    /// Tools to index, with their fingerprints.
    todo: Vec<(Uuid, u64)>,
    /// Ids to drop.
    gone: Vec<String>,
}

impl Plan {
    fn sync(&self) -> IndexSync {
        IndexSync {
            indexed: self.todo.len(),
            removed: self.gone.len(),
            kept: self.names.len() - self.todo.len(),
        }
    }
}

/// Every bundle's slug (disabled and soft-deleted ones too), by id.
pub(crate) fn bundle_slugs(catalog: &Catalog) -> HashMap<Uuid, String> {
    bundle_words(catalog)
        .into_iter()
        .map(|(id, b)| (id, b.slug))
        .collect()
}

/// What every bundle (disabled and soft-deleted ones too) gives its tools' index
/// documents, by id.
pub(crate) fn bundle_words(catalog: &Catalog) -> HashMap<Uuid, BundleWords> {
    let query = toolscout_catalog::BundleQuery::default()
        .with_include_disabled(true)
        .with_include_deleted(true)
        .with_page_size(500);
    let mut out = HashMap::new();
    let mut token: Option<String> = None;
    loop {
        let q = query.clone().with_page_token(token.as_deref());
        let Ok(page) = catalog.list_bundles(&q) else {
            break;
        };
        for b in page.items {
            let scope = toolscout_catalog::scope_of(&b);
            out.insert(
                b.id,
                BundleWords {
                    slug: b.slug,
                    name: b.display_name,
                    description: b.description,
                    scope,
                },
            );
        }
        match page.next_page_token {
            Some(t) => token = Some(t),
            None => break,
        }
    }
    out
}

/// The spec of `tool` as a list of tools to call shows it (the agent's tools array, an
/// MCP or JSON-RPC `tools/list`): a spec-only tool's description starts with
/// [`SPEC_ONLY_NOTE`](toolscout_invoke::SPEC_ONLY_NOTE), so that a model that reads only
/// the list knows a call cannot run. Other tools' specs are as stored.
pub fn listed_spec(tool: Tool) -> ToolSpec {
    let spec_only = tool.is_spec_only();
    let mut spec = tool.spec;
    if spec_only {
        let note = toolscout_invoke::SPEC_ONLY_NOTE.trim();
        spec.description = match spec.description_or_summary().trim() {
            "" => note.to_owned(),
            text => format!("{note}\n\n{text}"),
        };
    }
    spec
}
