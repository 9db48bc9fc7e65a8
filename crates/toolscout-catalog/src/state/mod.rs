//! The catalog in memory: built from disk, kept in step with this process's writes,
//! compared with a fresh read to tell subscribers what other processes changed.

pub(crate) mod snapshot;
pub(crate) mod visible;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use serde::de::Error as _;

use toolscout_spec::adapters::tool_file::{SPEC_ONLY_FUNC, ToolFile, ToolType};
use toolscout_spec::identity::toolset_id_of_digests;
use uuid::Uuid;

use crate::builtin;
use crate::events::CatalogEvent;
use crate::model::TenantId;
use crate::model::{Bundle, DisabledReason, LoadIssue, Tool, ToolHead, Usage};
use crate::store::{BundleFile, CatalogStore, Known, Loaded, Overlay, StoreKey};
use crate::tenant::{TenantRecord, TokenMap};
use crate::validate::{check_tool_file, placeholder_spec};
use crate::{Error, Result};
use snapshot::Snapshot;

/// A tool as the catalog keeps it in memory: its head, and for a built-in the whole tool.
/// A stored tool's spec and implementation stay in its file until asked for.
#[derive(Debug, Clone)]
pub(crate) struct RawTool {
    /// `disabled_reason` holds only [`DisabledReason::InvalidDefinition`] here; the other
    /// reasons are worked out by [`State::view`].
    pub(crate) head: ToolHead,
    /// The compiled-in tool of a built-in; `None` for stored tools.
    pub(crate) builtin: Option<Arc<Tool>>,
    /// The stored version's key when it was read or written; `None` for built-ins (and
    /// when it could not be looked at: it is read again at the next rescan).
    pub(crate) key: Option<StoreKey>,
}

impl RawTool {
    /// A stored tool, from its file and its checked spec.
    pub(crate) fn stored(tool: &Tool, key: Option<StoreKey>) -> RawTool {
        RawTool {
            head: ToolHead::of(tool),
            builtin: None,
            key,
        }
    }
}

/// The stored tools read lately, whole: a bound on how many are kept.
const BODY_CACHE: usize = 512;

/// Whole stored tools read from their files, by id; forgotten all at once when full.
#[derive(Debug, Default)]
pub(crate) struct Bodies(Mutex<HashMap<Uuid, Arc<Tool>>>);

impl Bodies {
    fn get(&self, id: Uuid) -> Option<Arc<Tool>> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned()
    }

    pub(crate) fn put(&self, tool: Arc<Tool>) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= BODY_CACHE {
            map.clear();
        }
        map.insert(tool.id, tool);
    }

    pub(crate) fn forget(&self, id: Uuid) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
    }
}

/// What the catalog knows.
#[derive(Debug)]
pub(crate) struct State {
    /// Where stored tools are read from.
    pub(crate) store: Arc<dyn CatalogStore>,
    /// The generation stamp this state was read at (or written with).
    pub(crate) stamp: Option<String>,
    pub(crate) generation: u64,
    pub(crate) natives: BTreeSet<String>,
    pub(crate) bundles: BTreeMap<Uuid, Bundle>,
    /// Boxed: a map of 92k tools is built (and rebuilt) moving pointers, not heads.
    pub(crate) tools: BTreeMap<Uuid, Box<RawTool>>,
    /// Each tool's `<bundle, slug, version>`, made from `tools` when first asked for: a
    /// command that only reads never pays for it.
    keys: OnceLock<HashMap<(Uuid, String, String), Uuid>>,
    pub(crate) overlay: Overlay,
    /// Every tenant, removed ones too, by id.
    pub(crate) tenants: BTreeMap<TenantId, TenantRecord>,
    /// The live tokens of live tenants, by digest (made from `tenants`).
    pub(crate) tokens: TokenMap,
    pub(crate) usage: BTreeMap<Uuid, Usage>,
    /// Calls recorded but not yet written: deltas.
    pub(crate) pending: BTreeMap<Uuid, Usage>,
    pub(crate) pending_since: Option<Instant>,
    pub(crate) issues: Vec<LoadIssue>,
    /// The identity, once computed; `None` after a change (it is computed on demand,
    /// so that a bulk load without subscribers does not hash the catalog at every PUT).
    identity: Option<Uuid>,
    /// The identities of other views ([`crate::CatalogView::identity`]), once computed;
    /// emptied with `identity`.
    view_identities: HashMap<crate::Viewer, Uuid>,
    pub(crate) bodies: Bodies,
    /// What this state is, as a string that names no other: set when it is known to be
    /// exactly what a heads snapshot holds (read, or just written), `None` otherwise.
    /// See [`crate::Catalog::content_token`].
    pub(crate) token: Option<String>,
}

pub(crate) fn bundle_from_file(file: &BundleFile) -> Bundle {
    Bundle {
        id: file.bundle_id,
        slug: file.slug.clone(),
        display_name: file.display_name.clone(),
        description: file.description.clone(),
        is_enabled: file.is_enabled,
        is_built_in: false,
        soft_deleted_at: file.soft_deleted_at,
        created_at: file.created_at,
        modified_at: file.modified_at,
        owner: file.owner,
        shared: file.shared,
    }
}

/// The tool of a stored file; a definition that does not check out becomes a disabled
/// placeholder. `None` when not even a placeholder can be made.
pub(crate) fn tool_from_file(id: Uuid, path: Option<&Path>, file: &ToolFile) -> Option<Tool> {
    let (spec, invalid) = match check_tool_file(file) {
        Ok(spec) => (spec, None),
        Err(e) => (
            placeholder_spec(file)?,
            Some(DisabledReason::InvalidDefinition {
                reason: e.to_string(),
            }),
        ),
    };
    Some(Tool::from_file(
        id,
        file,
        spec,
        path.map(Path::to_owned),
        invalid,
    ))
}

impl State {
    /// The catalog from what was read, plus the built-ins when `builtins` is set. Tools
    /// that were not read again (unchanged files) come from `previous`.
    pub(crate) fn build(
        store: &Arc<dyn CatalogStore>,
        loaded: Loaded,
        natives: &BTreeSet<String>,
        builtins: bool,
        previous: Option<&State>,
    ) -> State {
        let generation = counter(loaded.stamp.as_deref());
        let tenants: BTreeMap<TenantId, TenantRecord> =
            loaded.tenants.into_iter().map(|t| (t.id, t)).collect();
        let tokens = crate::tenant::token_map(&tenants);
        let mut state = State {
            store: Arc::clone(store),
            stamp: loaded.stamp,
            generation,
            natives: natives.clone(),
            bundles: BTreeMap::new(),
            tools: BTreeMap::new(),
            keys: OnceLock::new(),
            overlay: loaded.overlay,
            tenants,
            tokens,
            usage: loaded.usage,
            pending: BTreeMap::new(),
            pending_since: None,
            issues: loaded.issues,
            identity: None,
            view_identities: HashMap::new(),
            bodies: Bodies::default(),
            token: None,
        };
        if builtins {
            state.add_builtins();
        }
        let mut found_tools = Vec::new();
        for found in loaded.bundles {
            let id = found.file.bundle_id;
            if state.bundles.contains_key(&id) {
                state.issues.push(LoadIssue {
                    path: found.place(),
                    reason: format!("bundle {id} has the id of a built-in bundle; skipped"),
                });
                continue;
            }
            state.bundles.insert(id, bundle_from_file(&found.file));
            found_tools.extend(found.tools);
        }
        // Oldest first, so that of two files claiming one <slug, version> the first
        // written keeps it.
        found_tools.sort_by_key(|t| t.id);
        for found in found_tools {
            let raw = match (&found.file, &found.head) {
                (Some(file), _) => tool_from_file(found.id, found.path.as_deref(), file)
                    .map(|t| RawTool::stored(&t, found.key.clone())),
                (None, Some(head)) => Some(RawTool {
                    head: (**head).clone(),
                    builtin: None,
                    key: found.key.clone(),
                }),
                (None, None) => previous
                    .and_then(|p| p.tools.get(&found.id))
                    .map(|raw| (**raw).clone()),
            };
            let Some(raw) = raw else {
                state.issues.push(LoadIssue {
                    path: found.place(),
                    reason: "the tool has no usable name or summary".to_owned(),
                });
                continue;
            };
            if let Some(other) = state.find(raw.head.bundle_id, &raw.head.slug, &raw.head.version) {
                state.issues.push(LoadIssue {
                    path: found.place(),
                    reason: format!(
                        "duplicate {}@{}: tool {other} already holds it; skipped",
                        raw.head.slug, raw.head.version
                    ),
                });
                continue;
            }
            state.insert_tool(raw);
        }
        state
    }

    /// The state of a snapshot that is current: the bundles, overlay and usage of `meta`
    /// (read without listing tool directories), and the snapshot's tools.
    pub(crate) fn from_snapshot(
        store: &Arc<dyn CatalogStore>,
        meta: Loaded,
        snap: Snapshot,
        natives: &BTreeSet<String>,
        builtins: bool,
    ) -> State {
        let mut state = State::build(store, meta, natives, builtins, None);
        state.issues = snap.issues().to_vec();
        state.token = state.token_at(snap.checksum());
        // Built in one go: inserting 92k large values one at a time moved them about, and
        // cost more than reading the file.
        let mut entries = snap.into_raws();
        // As at the read it was taken at; checked again for a snapshot made by hand.
        entries.retain(|(id, raw)| {
            state
                .bundles
                .get(&raw.head.bundle_id)
                .is_some_and(|b| !b.is_built_in)
                && !state.tools.contains_key(id)
        });
        if !ids_and_keys_unique(&entries) {
            entries = first_of_each(entries);
        }
        let builtins = std::mem::take(&mut state.tools);
        state.tools = entries.into_iter().collect();
        // A few built-ins inserted into the large map, rather than the map rebuilt.
        for (id, raw) in builtins {
            state.tools.insert(id, raw);
        }
        state
    }

    /// The stored tools of a snapshot, as a previous state whose unchanged files need
    /// not be read again.
    pub(crate) fn of_snapshot(store: &Arc<dyn CatalogStore>, snap: Snapshot) -> State {
        let mut state = State::build(store, Loaded::default(), &BTreeSet::new(), false, None);
        for (_, raw) in snap.into_raws() {
            state.insert_tool(*raw);
        }
        state
    }

    fn add_builtins(&mut self) {
        let at = builtin::released_at();
        for b in builtin::bundles() {
            let enabled = self.overlay.bundles.get(&b.id).copied().unwrap_or(true);
            self.bundles.insert(
                b.id,
                Bundle {
                    id: b.id,
                    slug: b.slug.clone(),
                    display_name: b.display_name.clone(),
                    description: b.description.clone(),
                    is_enabled: enabled,
                    is_built_in: true,
                    soft_deleted_at: None,
                    created_at: at,
                    modified_at: at,
                    owner: None,
                    shared: false,
                },
            );
            for t in b.tools {
                let enabled = self.overlay.tools.get(&t.id).copied().unwrap_or(true);
                let implementation = t.implementation();
                let tool = Tool {
                    id: t.id,
                    bundle_id: b.id,
                    slug: t.slug,
                    version: builtin::VERSION.to_owned(),
                    spec: t.spec,
                    tool_type: ToolType::Native,
                    implementation,
                    is_enabled: enabled,
                    is_built_in: true,
                    created_at: at,
                    modified_at: at,
                    usage: Usage::default(),
                    disabled_reason: None,
                    path: None,
                };
                self.insert_tool(RawTool {
                    head: ToolHead::of(&tool),
                    builtin: Some(Arc::new(tool)),
                    key: None,
                });
            }
        }
    }

    /// The keys of the stored tools this state read: versions not to read again.
    pub(crate) fn known(&self) -> Known {
        let tools = self
            .tools
            .values()
            .filter(|raw| raw.builtin.is_none())
            .filter_map(|raw| Some((raw.head.id, (raw.head.bundle_id, raw.key.clone()?))))
            .collect();
        Known { tools }
    }

    /// Forgets which stored version each tool is, so that the next load reads them all.
    pub(crate) fn forget_keys(&mut self) {
        for raw in self.tools.values_mut() {
            raw.key = None;
        }
    }

    pub(crate) fn find(&self, bundle: Uuid, slug: &str, version: &str) -> Option<Uuid> {
        self.keys()
            .get(&(bundle, slug.to_owned(), version.to_owned()))
            .copied()
    }

    /// Each tool's `<bundle, slug, version>`, made now if it was not yet.
    fn keys(&self) -> &HashMap<(Uuid, String, String), Uuid> {
        self.keys.get_or_init(|| {
            self.tools
                .values()
                .map(|raw| {
                    let t = &raw.head;
                    ((t.bundle_id, t.slug.clone(), t.version.clone()), t.id)
                })
                .collect()
        })
    }

    pub(crate) fn insert_tool(&mut self, raw: RawTool) {
        let t = &raw.head;
        if let Some(keys) = self.keys.get_mut() {
            keys.insert((t.bundle_id, t.slug.clone(), t.version.clone()), t.id);
        }
        self.tools.insert(t.id, Box::new(raw));
    }

    pub(crate) fn remove_tool(&mut self, id: Uuid) -> Option<Box<RawTool>> {
        let raw = self.tools.remove(&id)?;
        self.bodies.forget(id);
        let t = &raw.head;
        if let Some(keys) = self.keys.get_mut() {
            keys.remove(&(t.bundle_id, t.slug.clone(), t.version.clone()));
        }
        Some(raw)
    }

    /// Usage as stored plus what is pending.
    pub(crate) fn usage_of(&self, id: Uuid) -> Usage {
        let mut u = self.usage.get(&id).copied().unwrap_or_default();
        if let Some(p) = self.pending.get(&id) {
            u.call_count += p.call_count;
            u.last_called_at = u.last_called_at.max(p.last_called_at);
        }
        u
    }

    /// Why the tool cannot be called now, if it cannot.
    pub(crate) fn disabled_reason(&self, raw: &RawTool) -> Option<DisabledReason> {
        let t = &raw.head;
        if let Some(r) = &t.disabled_reason {
            return Some(r.clone());
        }
        match self.bundles.get(&t.bundle_id) {
            Some(b) if b.soft_deleted_at.is_some() => return Some(DisabledReason::BundleDeleted),
            Some(b) if !b.is_enabled => return Some(DisabledReason::BundleDisabled),
            _ => {}
        }
        if !t.is_enabled {
            return Some(DisabledReason::Disabled);
        }
        if t.tool_type == ToolType::Native {
            let func = t.func.as_deref().unwrap_or_default();
            // A spec-only tool has no function to register: it is listed as spec only,
            // not as disabled, whatever the binary registers.
            if func != SPEC_ONLY_FUNC && !self.natives.contains(func) {
                return Some(DisabledReason::NativeNotRegistered {
                    func: func.to_owned(),
                });
            }
        }
        None
    }

    /// The head as served: the disabled reason filled in.
    pub(crate) fn head(&self, raw: &RawTool) -> ToolHead {
        let mut h = raw.head.clone();
        h.disabled_reason = self.disabled_reason(raw);
        h
    }

    /// The whole tool as served, read from its file unless it was read lately: usage
    /// and disabled reason filled in, its flags as this state knows them.
    pub(crate) fn view(&self, raw: &RawTool) -> Result<Tool> {
        let whole = match &raw.builtin {
            Some(t) => Arc::clone(t),
            None => match self.bodies.get(raw.head.id) {
                Some(t) => t,
                None => {
                    let t = Arc::new(self.read_tool(&raw.head)?);
                    self.bodies.put(Arc::clone(&t));
                    t
                }
            },
        };
        let mut t = (*whole).clone();
        t.is_enabled = raw.head.is_enabled;
        t.usage = self.usage_of(t.id);
        t.disabled_reason = self.disabled_reason(raw);
        Ok(t)
    }

    /// [`State::view`] of many tools, the stored ones read together (one round trip on a
    /// store of rows) and not kept among the recently read; tools that cannot be read are
    /// left out.
    pub(crate) fn view_many(&self, raws: &[&RawTool]) -> Result<Vec<Tool>> {
        let wanted: Vec<(Uuid, Uuid)> = raws
            .iter()
            .filter(|raw| raw.builtin.is_none() && self.bodies.get(raw.head.id).is_none())
            .map(|raw| (raw.head.bundle_id, raw.head.id))
            .collect();
        let mut read = if wanted.is_empty() {
            HashMap::new()
        } else {
            self.store.read_tools(&wanted)?
        };
        Ok(raws
            .iter()
            .filter_map(|raw| {
                let whole = match (&raw.builtin, read.remove(&raw.head.id)) {
                    (Some(t), _) => Arc::clone(t),
                    (None, Some(file)) => {
                        let path = self.store.tool_path(raw.head.bundle_id, raw.head.id);
                        Arc::new(tool_from_file(raw.head.id, path.as_deref(), &file)?)
                    }
                    (None, None) => self.bodies.get(raw.head.id)?,
                };
                let mut t = (*whole).clone();
                t.is_enabled = raw.head.is_enabled;
                t.usage = self.usage_of(t.id);
                t.disabled_reason = self.disabled_reason(raw);
                Some(t)
            })
            .collect())
    }

    /// A stored tool's definition as it is stored now.
    pub(crate) fn read_file(&self, head: &ToolHead) -> Result<ToolFile> {
        self.store.read_tool(head.bundle_id, head.id)
    }

    fn read_tool(&self, head: &ToolHead) -> Result<Tool> {
        let path = self.store.tool_path(head.bundle_id, head.id);
        let file = self.read_file(head)?;
        tool_from_file(head.id, path.as_deref(), &file).ok_or_else(|| Error::Json {
            path: path.unwrap_or_else(|| PathBuf::from(format!("tool {}", head.id))),
            source: serde_json::Error::custom("the tool has no usable name or summary"),
        })
    }

    /// The [`token`](State::token) of this state, if it is what the heads snapshot whose
    /// checksum is `sum` holds: the generation stamp (one per committed change, never
    /// reused), the snapshot's checksum (a directory read again after a change by hand
    /// writes a new snapshot at the same stamp), and the options that decide which tools
    /// can be called (the native functions registered, and the built-ins).
    pub(crate) fn token_at(&self, sum: u64) -> Option<String> {
        let mut hasher = std::hash::DefaultHasher::new();
        (&self.natives, self.bundles.values().any(|b| b.is_built_in)).hash(&mut hasher);
        let stamp = self.stamp.as_deref()?;
        Some(format!("{stamp} {sum:08x} {:016x}", hasher.finish()))
    }

    /// Forgets the identity after a change.
    pub(crate) fn changed(&mut self) {
        self.identity = None;
        self.view_identities.clear();
    }

    /// The identity of what `viewer` can call (see [`State::identity`]).
    pub(crate) fn view_identity(&mut self, viewer: &crate::Viewer) -> Uuid {
        if let Some(id) = self.view_identities.get(viewer) {
            return *id;
        }
        let visible = visible::visible_bundles(self, viewer);
        let callable = self
            .tools
            .values()
            .filter(|raw| visible::in_view(visible.as_ref(), raw.head.bundle_id))
            .filter(|raw| self.disabled_reason(raw).is_none())
            .map(|raw| raw.head.digest);
        let id = toolset_id_of_digests(callable);
        self.view_identities.insert(viewer.clone(), id);
        id
    }

    /// The identity: the tool-set id of the tools that can be called.
    pub(crate) fn identity(&mut self) -> Uuid {
        if let Some(id) = self.identity {
            return id;
        }
        let callable = self
            .tools
            .values()
            .filter(|raw| self.disabled_reason(raw).is_none())
            .map(|raw| raw.head.digest);
        let id = toolset_id_of_digests(callable);
        self.identity = Some(id);
        id
    }

    /// The events that turn `self` into `new`: what another process changed.
    pub(crate) fn diff(&self, new: &State) -> Vec<CatalogEvent> {
        let mut events = crate::tenant::diff(&self.tenants, &new.tenants);
        for (id, b) in &new.bundles {
            match self.bundles.get(id) {
                None => events.push(CatalogEvent::BundlePut { bundle: *id }),
                Some(old) if old == b => {}
                Some(old) if old.soft_deleted_at.is_none() && b.soft_deleted_at.is_some() => {
                    events.push(CatalogEvent::BundleDeleted { bundle: *id });
                }
                Some(old) if old.soft_deleted_at.is_some() && b.soft_deleted_at.is_none() => {
                    events.push(CatalogEvent::BundleRestored { bundle: *id });
                }
                Some(old) if old.is_enabled != b.is_enabled && old.modified_at == b.modified_at => {
                    events.push(CatalogEvent::BundleEnabled {
                        bundle: *id,
                        enabled: b.is_enabled,
                    });
                }
                Some(_) => events.push(CatalogEvent::BundlePut { bundle: *id }),
            }
        }
        for id in self.bundles.keys() {
            if !new.bundles.contains_key(id) {
                events.push(CatalogEvent::BundleRemoved { bundle: *id });
            }
        }
        for (id, raw) in &new.tools {
            let t = &raw.head;
            let Some(old) = self.tools.get(id) else {
                events.push(CatalogEvent::ToolPut {
                    tool: *id,
                    bundle: t.bundle_id,
                });
                continue;
            };
            let same_file = raw.builtin.is_some() || (old.key.is_some() && old.key == raw.key);
            if old.head.is_enabled != t.is_enabled {
                events.push(CatalogEvent::ToolEnabled {
                    tool: *id,
                    bundle: t.bundle_id,
                    enabled: t.is_enabled,
                });
            } else if !same_file || old.head != *t {
                events.push(CatalogEvent::ToolPut {
                    tool: *id,
                    bundle: t.bundle_id,
                });
            }
        }
        for (id, raw) in &self.tools {
            if !new.tools.contains_key(id) {
                events.push(CatalogEvent::ToolDeleted {
                    tool: *id,
                    bundle: raw.head.bundle_id,
                });
            }
        }
        events
    }
}

/// The counter of a generation stamp `"<counter> <uuid>"`.
/// Whether no two of `entries` (ordered by id, as a snapshot writes them) share an id or a
/// `<bundle, slug, version>`: strictly rising ids, and distinct hashes of the keys. A
/// hash seen twice only means "look closer" ([`first_of_each`]).
fn ids_and_keys_unique(entries: &[(Uuid, Box<RawTool>)]) -> bool {
    if !entries.windows(2).all(|w| w[0].0 < w[1].0) {
        return false;
    }
    let mut seen = std::collections::HashSet::with_capacity(entries.len());
    entries.iter().all(|(_, raw)| {
        let mut hasher = std::hash::DefaultHasher::new();
        (raw.head.bundle_id, &raw.head.slug, &raw.head.version).hash(&mut hasher);
        seen.insert(hasher.finish())
    })
}

/// `entries` less any whose id or `<bundle, slug, version>` an earlier one (in id order)
/// holds: the rule a catalog read from its files follows.
fn first_of_each(mut entries: Vec<(Uuid, Box<RawTool>)>) -> Vec<(Uuid, Box<RawTool>)> {
    entries.sort_by_key(|(id, _)| *id);
    let mut keys = std::collections::HashSet::new();
    let mut last = None;
    entries.retain(|(id, raw)| {
        let h = &raw.head;
        let fresh =
            last != Some(*id) && keys.insert((h.bundle_id, h.slug.clone(), h.version.clone()));
        last = Some(*id);
        fresh
    });
    entries
}

pub(crate) fn counter(stamp: Option<&str>) -> u64 {
    stamp
        .and_then(|s| s.split_whitespace().next())
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}
