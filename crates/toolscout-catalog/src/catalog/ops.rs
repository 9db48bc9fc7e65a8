//! The writes of [`Catalog`]: bundles, tools, the reaper and usage counts.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use toolscout_spec::adapters::tool_file::ToolFile;
use uuid::Uuid;

use super::{Catalog, Tx};
use crate::events::CatalogEvent;
use crate::model::{
    Bundle, BundlePut, Tool, ToolHead, ToolPut, new_bundle, new_tool_file, now, to_micros,
};
use crate::state::{RawTool, State};
use crate::store::{BUNDLE_SCHEMA, BundleFile};
use crate::validate::{Claim, check_id, check_slug, check_unreserved};
use crate::viewer::Viewer;
use crate::{Error, Result};

/// How long a soft-deleted bundle is kept before [`Catalog::reap`] may remove it.
pub const REAP_AFTER: TimeDelta = TimeDelta::days(2);

/// How long recorded calls may wait in memory before [`Catalog::record_call`] writes them.
pub const USAGE_FLUSH_INTERVAL: Duration = Duration::from_secs(2);

pub(crate) fn bundle_file(b: &Bundle) -> BundleFile {
    BundleFile {
        schema_version: BUNDLE_SCHEMA.to_owned(),
        bundle_id: b.id,
        slug: b.slug.clone(),
        display_name: b.display_name.clone(),
        description: b.description.clone(),
        is_enabled: b.is_enabled,
        soft_deleted_at: b.soft_deleted_at,
        created_at: b.created_at,
        modified_at: b.modified_at,
        owner: b.owner,
        shared: b.shared,
    }
}

/// A copy of the bundle to change and save.
fn bundle_copy(state: &State, id: Uuid) -> Result<Bundle> {
    state
        .bundles
        .get(&id)
        .cloned()
        .ok_or(Error::BundleNotFound { bundle: id })
}

/// The bundle, if tools may be put or patched inside it.
pub(crate) fn writable_bundle(state: &State, id: Uuid) -> Result<&Bundle> {
    let b = state
        .bundles
        .get(&id)
        .ok_or(Error::BundleNotFound { bundle: id })?;
    if let Some(at) = b.soft_deleted_at {
        return Err(Error::BundleDeleted {
            bundle: id,
            slug: b.slug.clone(),
            deleted_at: at,
        });
    }
    if !b.is_enabled {
        return Err(Error::BundleDisabled {
            bundle: id,
            slug: b.slug.clone(),
        });
    }
    Ok(b)
}

impl Tx<'_> {
    /// Writes a checked new tool; the caller has checked the bundle and the conflict.
    /// Returns it as served (kept among the recently read, so nothing is read back).
    pub(crate) fn insert_new_tool(
        &mut self,
        id: Uuid,
        file: ToolFile,
        spec: toolscout_spec::ToolSpec,
    ) -> Result<Tool> {
        self.begin()?;
        let path = self.state.store.tool_path(file.bundle_id, id);
        let tool = Tool::from_file(id, &file, spec, path, None);
        let mut raw = RawTool::stored(&tool, None);
        raw.key = self.store.put_tool(&raw.head, &file)?;
        self.state.bodies.put(Arc::new(tool));
        let tool = self.state.view(&raw)?;
        self.events.push(CatalogEvent::ToolPut {
            tool: id,
            bundle: tool.bundle_id,
        });
        self.state.insert_tool(raw);
        Ok(tool)
    }

    /// Writes checked new tools of the bundle `bundle_id`, and the bundle itself when
    /// `bundle` is given (a new one), in one batch: one sync, and all or nothing even
    /// if the process dies half-way. The caller has checked the bundle and the
    /// conflicts. Returns the tools as served (kept among the recently read).
    pub(crate) fn insert_new_tools(
        &mut self,
        bundle: Option<Bundle>,
        bundle_id: Uuid,
        tools: Vec<(Uuid, ToolFile, toolscout_spec::ToolSpec)>,
    ) -> Result<Vec<Tool>> {
        if bundle.is_none() && tools.is_empty() {
            return Ok(Vec::new());
        }
        self.begin()?;
        let mut served = Vec::with_capacity(tools.len());
        let mut files = Vec::with_capacity(tools.len());
        for (id, file, spec) in tools {
            let path = self.state.store.tool_path(bundle_id, id);
            let tool = Tool::from_file(id, &file, spec, path, None);
            served.push((ToolHead::of(&tool), tool));
            files.push(file);
        }
        let keys = self.store.put_tools(
            bundle.as_ref().map(bundle_file).as_ref(),
            bundle_id,
            served.iter().map(|(head, _)| head).zip(files).collect(),
        )?;
        if let Some(b) = bundle {
            self.events.push(CatalogEvent::BundlePut { bundle: b.id });
            self.state.bundles.insert(b.id, b);
        }
        let mut added = Vec::with_capacity(served.len());
        for ((head, tool), key) in served.into_iter().zip(keys) {
            let id = tool.id;
            let raw = RawTool {
                head,
                builtin: None,
                key,
            };
            self.state.bodies.put(Arc::new(tool));
            added.push(self.state.view(&raw)?);
            self.events.push(CatalogEvent::ToolPut {
                tool: id,
                bundle: bundle_id,
            });
            self.state.insert_tool(raw);
        }
        Ok(added)
    }

    /// Writes a bundle's file and keeps it in memory.
    pub(crate) fn save_bundle(&mut self, bundle: Bundle) -> Result<()> {
        self.begin()?;
        self.store.put_bundle(&bundle_file(&bundle))?;
        self.state.bundles.insert(bundle.id, bundle);
        Ok(())
    }

    /// Writes one tenant (new or changed) and takes it into the state.
    pub(crate) fn save_tenant(&mut self, tenant: crate::tenant::TenantRecord) -> Result<()> {
        self.begin()?;
        let all: Vec<&crate::tenant::TenantRecord> = self
            .state
            .tenants
            .values()
            .filter(|t| t.id != tenant.id)
            .chain(std::iter::once(&tenant))
            .collect();
        self.store.put_tenant(&tenant, &all)?;
        self.state.tenants.insert(tenant.id, tenant);
        self.state.tokens = crate::tenant::token_map(&self.state.tenants);
        Ok(())
    }
}

/// Whether bundle `id` of `owner` may have `slug`: no other live bundle of the same owner
/// has it (two tenants may each have a `crm`). A bundle that keeps the slug it has passes,
/// so that catalogs written before the rule, which may hold duplicates, can still be
/// written.
pub(crate) fn check_slug_free(
    state: &State,
    id: Uuid,
    owner: Option<crate::TenantId>,
    slug: &str,
) -> Result<()> {
    if state
        .bundles
        .get(&id)
        .is_some_and(|b| b.slug == slug && b.soft_deleted_at.is_none())
    {
        return Ok(());
    }
    match state.bundles.values().find(|b| {
        b.id != id
            && !b.is_built_in
            && b.owner == owner
            && b.slug == slug
            && b.soft_deleted_at.is_none()
    }) {
        Some(holder) => Err(Error::SlugTaken {
            slug: slug.to_owned(),
            bundle: holder.id,
        }),
        None => Ok(()),
    }
}

fn conflict(state: &State, bundle: &Bundle, slug: &str, version: &str) -> Result<()> {
    match state.find(bundle.id, slug, version) {
        Some(existing) => Err(Error::Conflict {
            bundle: bundle.id,
            bundle_slug: bundle.slug.clone(),
            slug: slug.to_owned(),
            version: version.to_owned(),
            existing,
        }),
        None => Ok(()),
    }
}

pub(crate) fn check_conflict(state: &State, bundle: Uuid, slug: &str, version: &str) -> Result<()> {
    match state.bundles.get(&bundle) {
        Some(b) => conflict(state, b, slug, version),
        None => Ok(()),
    }
}

impl Catalog {
    /// Whether a new tool may be named `name` here: [`Error::ReservedName`] when the
    /// catalog serves the built-in bundles and `name` is a built-in tool's name, in any
    /// case (`READ_FILE` is `read_file`'s). Every write that adds a tool applies it
    /// ([`Catalog::put_tool`], [`Catalog::put_tools`], [`Catalog::add_tools`],
    /// [`Catalog::import_bundle`]); an importer that renames clashing tools asks it first.
    ///
    /// In a catalog opened without the built-ins
    /// ([`CatalogOptions::with_builtins(false)`](crate::CatalogOptions::with_builtins)),
    /// every name is free: nothing of that name is served, and a program may define its
    /// own `read_file`. A directory written that way and opened later with the built-ins
    /// keeps such a tool; a built-in still wins its name while enabled
    /// ([`crate::NameClaim`]).
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let catalog = toolscout_catalog::Catalog::open(dir.path(), &[])?;
    /// assert!(catalog.check_tool_name("READ_FILE").is_err());
    /// assert!(catalog.check_tool_name("read_file_twice").is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_tool_name(&self, name: &str) -> Result<()> {
        check_unreserved(self.options.builtins, Claim::ToolName, name)
    }

    /// Whether a new bundle may have the slug `slug` here: [`Error::ReservedName`] when the
    /// catalog serves the built-in bundles and `slug` is one of theirs, in any case
    /// (`FILES` is `files`'). [`Catalog::put_bundle`], [`Catalog::add_tools`] and
    /// [`Catalog::import_bundle`] apply it; see [`Catalog::check_tool_name`] for a
    /// catalog without the built-ins.
    pub fn check_bundle_slug(&self, slug: &str) -> Result<()> {
        check_unreserved(self.options.builtins, Claim::BundleSlug, slug)
    }

    /// Creates or replaces a bundle. Built-in and soft-deleted bundles cannot be replaced,
    /// and the slug cannot be a built-in bundle's ([`Catalog::check_bundle_slug`]).
    pub fn put_bundle(&self, id: Uuid, put: &BundlePut) -> Result<Bundle> {
        self.put_bundle_as(&Viewer::Operator, id, put)
    }

    /// [`Catalog::put_bundle`] by `writer`: a new bundle is the writer's own.
    pub(crate) fn put_bundle_as(
        &self,
        writer: &Viewer,
        id: Uuid,
        put: &BundlePut,
    ) -> Result<Bundle> {
        check_id("bundle", id)?;
        check_slug(&put.slug)?;
        let now = now();
        self.write_as(writer, |tx| {
            if tx.state.bundles.contains_key(&id) {
                tx.may_write(id)?;
            }
            let created_at = match tx.state.bundles.get(&id) {
                Some(b) if b.is_built_in => {
                    return Err(Error::BuiltIn {
                        what: "bundle",
                        slug: b.slug.clone(),
                    });
                }
                Some(b) => {
                    if let Some(at) = b.soft_deleted_at {
                        return Err(Error::BundleDeleted {
                            bundle: id,
                            slug: b.slug.clone(),
                            deleted_at: at,
                        });
                    }
                    b.created_at
                }
                None => now,
            };
            self.check_bundle_slug(&put.slug)?;
            let (owner, shared) = match tx.state.bundles.get(&id) {
                Some(b) => (b.owner, b.shared),
                None => {
                    let owner = tx.new_owner(id, &put.slug)?;
                    tx.check_limits(1, 0)?;
                    (owner, false)
                }
            };
            check_slug_free(tx.state, id, owner, &put.slug)?;
            let mut bundle = new_bundle(id, put, created_at, now);
            (bundle.owner, bundle.shared) = (owner, shared);
            tx.save_bundle(bundle.clone())?;
            tx.events.push(CatalogEvent::BundlePut { bundle: id });
            Ok(bundle)
        })
    }

    /// Turns a bundle on or off (built-in bundles too).
    pub fn patch_bundle(&self, id: Uuid, is_enabled: bool) -> Result<Bundle> {
        self.patch_bundle_as(&Viewer::Operator, id, is_enabled)
    }

    /// [`Catalog::patch_bundle`] by `writer`.
    pub(crate) fn patch_bundle_as(
        &self,
        writer: &Viewer,
        id: Uuid,
        is_enabled: bool,
    ) -> Result<Bundle> {
        self.write_as(writer, |tx| {
            tx.may_write(id)?;
            let mut bundle = bundle_copy(tx.state, id)?;
            if let Some(at) = bundle.soft_deleted_at {
                return Err(Error::BundleDeleted {
                    bundle: id,
                    slug: bundle.slug,
                    deleted_at: at,
                });
            }
            if bundle.is_enabled == is_enabled {
                return Ok(bundle);
            }
            bundle.is_enabled = is_enabled;
            if bundle.is_built_in {
                tx.begin()?;
                let mut overlay = tx.state.overlay.clone();
                overlay.bundles.insert(id, is_enabled);
                tx.store.put_overlay(&overlay)?;
                tx.state.overlay = overlay;
                tx.state.bundles.insert(id, bundle.clone());
            } else {
                tx.save_bundle(bundle.clone())?;
            }
            tx.events.push(CatalogEvent::BundleEnabled {
                bundle: id,
                enabled: is_enabled,
            });
            Ok(bundle)
        })
    }

    /// Soft-deletes a bundle: it is marked, its tools are listed as disabled, and
    /// [`Catalog::reap`] removes it once it is empty and [`REAP_AFTER`] has passed.
    /// Deleting a deleted bundle changes nothing.
    pub fn delete_bundle(&self, id: Uuid) -> Result<Bundle> {
        self.delete_bundle_as(&Viewer::Operator, id)
    }

    /// [`Catalog::delete_bundle`] by `writer`.
    pub(crate) fn delete_bundle_as(&self, writer: &Viewer, id: Uuid) -> Result<Bundle> {
        let now = now();
        self.write_as(writer, |tx| {
            tx.may_write(id)?;
            let mut bundle = bundle_copy(tx.state, id)?;
            if bundle.is_built_in {
                return Err(Error::BuiltIn {
                    what: "bundle",
                    slug: bundle.slug,
                });
            }
            if bundle.soft_deleted_at.is_some() {
                return Ok(bundle);
            }
            bundle.soft_deleted_at = Some(now);
            tx.save_bundle(bundle.clone())?;
            tx.events.push(CatalogEvent::BundleDeleted { bundle: id });
            Ok(bundle)
        })
    }

    /// Restores a soft-deleted bundle: it is no longer marked, and its tools can be
    /// called again (unless disabled for another reason). Restoring a bundle that is not
    /// deleted changes nothing; a bundle already reaped is gone
    /// ([`Error::BundleNotFound`]).
    pub fn restore_bundle(&self, id: Uuid) -> Result<Bundle> {
        self.restore_bundle_as(&Viewer::Operator, id)
    }

    /// [`Catalog::restore_bundle`] by `writer`: a tenant's limits count it again.
    pub(crate) fn restore_bundle_as(&self, writer: &Viewer, id: Uuid) -> Result<Bundle> {
        self.write_as(writer, |tx| {
            tx.may_write(id)?;
            let mut bundle = bundle_copy(tx.state, id)?;
            if bundle.soft_deleted_at.is_none() {
                return Ok(bundle);
            }
            let tools = tx
                .state
                .tools
                .values()
                .filter(|raw| raw.head.bundle_id == id)
                .count() as u64;
            tx.check_limits(1, tools)?;
            check_slug_free(tx.state, id, bundle.owner, &bundle.slug)?;
            bundle.soft_deleted_at = None;
            tx.save_bundle(bundle.clone())?;
            tx.events.push(CatalogEvent::BundleRestored { bundle: id });
            Ok(bundle)
        })
    }

    /// When [`Catalog::reap`] may remove a soft-deleted bundle: [`REAP_AFTER`] after its
    /// deletion, once it holds no tool. `None` for a bundle that is not deleted.
    pub fn reap_due(bundle: &Bundle) -> Option<DateTime<Utc>> {
        bundle.soft_deleted_at.map(|at| at + REAP_AFTER)
    }

    /// Removes the bundles soft-deleted at least [`REAP_AFTER`] before `now` whose
    /// directory holds no tool file, and the temporary files (and empty new bundle
    /// directories) of writers that were killed half-way. Returns the ids of the bundles removed. Run it now and then, e.g. at
    /// start-up and daily.
    pub fn reap(&self, now: DateTime<Utc>) -> Result<Vec<Uuid>> {
        self.write(|tx| {
            tx.store.clean_up()?;
            let due: Vec<Uuid> = tx
                .state
                .bundles
                .values()
                .filter(|b| !b.is_built_in)
                .filter(|b| b.soft_deleted_at.is_some_and(|at| at + REAP_AFTER <= now))
                .map(|b| b.id)
                .filter(|id| !tx.state.tools.values().any(|t| t.head.bundle_id == *id))
                .collect();
            let mut removed = Vec::new();
            for id in due {
                tx.begin()?;
                if tx.store.remove_empty_bundle(id)? {
                    tx.state.bundles.remove(&id);
                    tx.events.push(CatalogEvent::BundleRemoved { bundle: id });
                    removed.push(id);
                }
            }
            Ok(removed)
        })
    }

    /// Adds a tool version to a bundle.
    ///
    /// Fails with [`Error::Conflict`] when the bundle already has this slug and version
    /// (the existing tool is left as it is), inside built-in, disabled or deleted
    /// bundles, and with [`Error::ReservedName`] for a built-in tool's name
    /// ([`Catalog::check_tool_name`]). The spec's version becomes `version`.
    pub fn put_tool(&self, bundle: Uuid, slug: &str, version: &str, put: &ToolPut) -> Result<Tool> {
        self.put_tool_as(&Viewer::Operator, bundle, slug, version, put)
    }

    /// [`Catalog::put_tool`] by `writer`.
    pub(crate) fn put_tool_as(
        &self,
        writer: &Viewer,
        bundle: Uuid,
        slug: &str,
        version: &str,
        put: &ToolPut,
    ) -> Result<Tool> {
        self.check_tool_name(put.spec.name.as_str())?;
        self.put_tool_named(writer, bundle, slug, version, put)
    }

    /// [`Catalog::put_tool`] for the copy of a tool that another toolscout server serves
    /// (`toolscout-remote`'s import of its manifest): the same checks but one, a built-in
    /// tool's name may be taken.
    ///
    /// **Rationale:** the remote's own built-ins (its `read_file`, on its workspace) come
    /// under their names, so that a server whose own `files` bundle is off serves the
    /// remote's. Such a tool reaches only its remote, whose address the operator gave,
    /// and a built-in of this catalog still holds its name while it is enabled
    /// ([`crate::NameClaim`]). Every other way in goes through [`Catalog::put_tool`].
    pub fn put_remote_tool(
        &self,
        bundle: Uuid,
        slug: &str,
        version: &str,
        put: &ToolPut,
    ) -> Result<Tool> {
        self.put_tool_named(&Viewer::Operator, bundle, slug, version, put)
    }

    /// [`Catalog::put_tool`] once the name is allowed.
    fn put_tool_named(
        &self,
        writer: &Viewer,
        bundle: Uuid,
        slug: &str,
        version: &str,
        put: &ToolPut,
    ) -> Result<Tool> {
        let id = Uuid::now_v7();
        let (file, spec) = new_tool_file(bundle, id, slug, version, put, now())?;
        self.write_as(writer, |tx| {
            tx.may_write(bundle)?;
            tx.check_limits(0, 1)?;
            let b = writable_bundle(tx.state, bundle)?;
            if b.is_built_in {
                return Err(Error::BuiltIn {
                    what: "bundle",
                    slug: b.slug.clone(),
                });
            }
            conflict(tx.state, b, slug, version)?;
            super::recipes::check_new(tx.state, tx.writer, &[&file])?;
            tx.insert_new_tool(id, file, spec)
        })
    }

    /// Adds many tool versions to a bundle in one write: one lock, one generation and
    /// one notification for the lot, which makes a bulk load much cheaper than a
    /// [`Catalog::put_tool`] per tool. All or nothing: every tool is checked (rules,
    /// conflicts with the bundle and within the batch) before any file is written.
    /// Returns the heads of the tools added ([`Catalog::tool`] reads one whole).
    ///
    /// The puts may be given by reference or by value; given by value, each is dropped as
    /// soon as its file is made, so that a large import holds one copy of the tools.
    /// The files are written to temporary files and made durable together with one sync,
    /// then renamed into place under a journal (see `Batch`): a process killed half-way
    /// leaves all of them or none.
    pub fn put_tools<S, V, P>(
        &self,
        bundle: Uuid,
        tools: impl IntoIterator<Item = (S, V, P)>,
    ) -> Result<Vec<ToolHead>>
    where
        S: AsRef<str>,
        V: AsRef<str>,
        P: std::borrow::Borrow<ToolPut>,
    {
        self.put_tools_if(&Viewer::Operator, bundle, None, tools, |_| Ok(()))
    }

    /// [`Catalog::put_tools`], once `precondition` has accepted the catalog's state as it
    /// is under the write lock (other processes' writes read in): a caller that planned
    /// the puts from what it read earlier checks there that nothing it relied on moved.
    ///
    /// With `create`, the bundle `bundle` is made from it in the same batch as the tools
    /// (all or nothing); no bundle of its slug (not deleted) may have appeared meanwhile
    /// ([`Error::BundleChanged`]).
    pub(crate) fn put_tools_if<S, V, P>(
        &self,
        writer: &Viewer,
        bundle: Uuid,
        create: Option<&BundlePut>,
        tools: impl IntoIterator<Item = (S, V, P)>,
        precondition: impl FnOnce(&State) -> Result<()>,
    ) -> Result<Vec<ToolHead>>
    where
        S: AsRef<str>,
        V: AsRef<str>,
        P: std::borrow::Borrow<ToolPut>,
    {
        let now = now();
        if let Some(put) = create {
            check_id("bundle", bundle)?;
            check_slug(&put.slug)?;
            self.check_bundle_slug(&put.slug)?;
        }
        let mut checked = Vec::new();
        for (slug, version, put) in tools {
            self.check_tool_name(put.borrow().spec.name.as_str())?;
            let id = Uuid::now_v7();
            let (file, spec) = new_tool_file(
                bundle,
                id,
                slug.as_ref(),
                version.as_ref(),
                put.borrow(),
                now,
            )?;
            drop(put);
            let head = ToolHead::of(&Tool::from_file(id, &file, spec, None, None));
            checked.push((file, head));
        }
        self.write_as(writer, |tx| {
            let made = match create {
                None => {
                    tx.may_write(bundle)?;
                    tx.check_limits(0, checked.len() as u64)?;
                    let b = writable_bundle(tx.state, bundle)?;
                    if b.is_built_in {
                        return Err(Error::BuiltIn {
                            what: "bundle",
                            slug: b.slug.clone(),
                        });
                    }
                    None
                }
                Some(put) => {
                    let owner = tx.new_owner(bundle, &put.slug)?;
                    let taken = tx.state.bundles.contains_key(&bundle)
                        || tx.state.bundles.values().any(|b| {
                            b.slug == put.slug && b.owner == owner && b.soft_deleted_at.is_none()
                        });
                    if taken {
                        return Err(Error::BundleChanged {
                            bundle,
                            bundle_slug: put.slug.clone(),
                        });
                    }
                    tx.check_limits(1, checked.len() as u64)?;
                    let mut made = new_bundle(bundle, put, now, now);
                    made.owner = owner;
                    Some(made)
                }
            };
            let bundle_slug = match (&made, tx.state.bundles.get(&bundle)) {
                (Some(b), _) | (None, Some(b)) => b.slug.clone(),
                (None, None) => return Err(Error::BundleNotFound { bundle }),
            };
            precondition(tx.state)?;
            let files: Vec<&ToolFile> = checked.iter().map(|(f, _)| f).collect();
            super::recipes::check_new(tx.state, tx.writer, &files)?;
            let mut seen = std::collections::HashMap::new();
            for (file, head) in &checked {
                check_conflict(tx.state, bundle, &file.slug, &file.version)?;
                if let Some(existing) = seen.insert((&file.slug, &file.version), head.id) {
                    return Err(Error::Conflict {
                        bundle,
                        bundle_slug,
                        slug: file.slug.clone(),
                        version: file.version.clone(),
                        existing,
                    });
                }
            }
            tx.begin()?;
            // The bundle and its tools in one batch: a crash leaves all of them or none.
            let mut heads = Vec::with_capacity(checked.len());
            let mut files = Vec::with_capacity(checked.len());
            for (file, head) in checked {
                files.push(file);
                heads.push(head);
            }
            let keys = tx.store.put_tools(
                made.as_ref().map(bundle_file).as_ref(),
                bundle,
                heads.iter().zip(files).collect(),
            )?;
            if let Some(b) = made {
                tx.state.bundles.insert(bundle, b);
                tx.events.push(CatalogEvent::BundlePut { bundle });
            }
            let mut added = Vec::with_capacity(heads.len());
            for (head, key) in heads.into_iter().zip(keys) {
                let raw = RawTool {
                    head,
                    builtin: None,
                    key,
                };
                added.push(tx.state.head(&raw));
                tx.events.push(CatalogEvent::ToolPut {
                    tool: raw.head.id,
                    bundle,
                });
                tx.state.insert_tool(raw);
            }
            Ok(added)
        })
    }

    /// Turns a tool on or off (built-in tools too). Refused inside disabled or deleted
    /// bundles.
    pub fn patch_tool(
        &self,
        bundle: Uuid,
        slug: &str,
        version: &str,
        is_enabled: bool,
    ) -> Result<Tool> {
        self.patch_tool_as(&Viewer::Operator, bundle, slug, version, is_enabled)
    }

    /// [`Catalog::patch_tool`] by `writer`.
    pub(crate) fn patch_tool_as(
        &self,
        writer: &Viewer,
        bundle: Uuid,
        slug: &str,
        version: &str,
        is_enabled: bool,
    ) -> Result<Tool> {
        self.write_as(writer, |tx| {
            tx.may_write(bundle)?;
            writable_bundle(tx.state, bundle)?;
            let id = find(tx.state, bundle, slug, version)?;
            let Some(raw) = tx.state.tools.get(&id).cloned() else {
                return Err(Error::ToolIdNotFound { tool: id });
            };
            if raw.head.is_enabled == is_enabled {
                return tx.state.view(&raw);
            }
            let mut raw = raw;
            if raw.builtin.is_some() {
                tx.begin()?;
                let mut overlay = tx.state.overlay.clone();
                overlay.tools.insert(id, is_enabled);
                tx.store.put_overlay(&overlay)?;
                tx.state.overlay = overlay;
            } else {
                // The file as it is now, so that nothing else in it is lost.
                let mut file = tx.state.read_file(&raw.head)?;
                file.is_enabled = is_enabled;
                tx.begin()?;
                raw.head.is_enabled = is_enabled;
                raw.key = tx.store.put_tool(&raw.head, &file)?;
                tx.state.bodies.forget(id);
            }
            raw.head.is_enabled = is_enabled;
            let tool = tx.state.view(&raw)?;
            tx.state.insert_tool(*raw);
            tx.events.push(CatalogEvent::ToolEnabled {
                tool: id,
                bundle,
                enabled: is_enabled,
            });
            Ok(tool)
        })
    }

    /// Deletes a tool version and its file for good (also inside disabled or deleted
    /// bundles, so that they can be emptied). Built-in tools cannot be deleted.
    pub fn delete_tool(&self, bundle: Uuid, slug: &str, version: &str) -> Result<Tool> {
        self.delete_tool_as(&Viewer::Operator, bundle, slug, version)
    }

    /// [`Catalog::delete_tool`] by `writer`.
    pub(crate) fn delete_tool_as(
        &self,
        writer: &Viewer,
        bundle: Uuid,
        slug: &str,
        version: &str,
    ) -> Result<Tool> {
        self.write_as(writer, |tx| {
            tx.may_write(bundle)?;
            let b = tx
                .state
                .bundles
                .get(&bundle)
                .ok_or(Error::BundleNotFound { bundle })?;
            if b.is_built_in {
                return Err(Error::BuiltIn {
                    what: "tool",
                    slug: slug.to_owned(),
                });
            }
            let id = find(tx.state, bundle, slug, version)?;
            let raw = tx
                .state
                .tools
                .get(&id)
                .ok_or(Error::ToolIdNotFound { tool: id })?;
            // Read before the file goes: the caller gets what was deleted.
            let tool = tx.state.view(raw)?;
            tx.begin()?;
            tx.store.remove_tool(bundle, id)?;
            tx.state.remove_tool(id);
            tx.state.usage.remove(&id);
            tx.state.pending.remove(&id);
            tx.events
                .push(CatalogEvent::ToolDeleted { tool: id, bundle });
            Ok(tool)
        })
    }

    /// Counts one call of a tool made at `at` (kept to the microsecond). Counts are kept in memory and written at
    /// most every [`USAGE_FLUSH_INTERVAL`], by [`Catalog::flush_usage`], or when the
    /// catalog is dropped; the tool's own file is never rewritten for them.
    pub fn record_call(&self, tool: Uuid, at: DateTime<Utc>) -> Result<()> {
        let due = {
            let mut state = self.lock_state();
            if !state.tools.contains_key(&tool) {
                return Err(Error::ToolIdNotFound { tool });
            }
            let p = state.pending.entry(tool).or_default();
            p.call_count += 1;
            // To the microsecond, as every store keeps it.
            p.last_called_at = p.last_called_at.max(Some(to_micros(at)));
            let since = *state.pending_since.get_or_insert_with(Instant::now);
            since.elapsed() >= USAGE_FLUSH_INTERVAL
        };
        if due { self.flush_usage() } else { Ok(()) }
    }

    /// Writes the recorded calls: each tool's stored counts are added to under the
    /// store's write lock, so that counts from several processes add up.
    pub fn flush_usage(&self) -> Result<()> {
        // One flush at a time, so that no call is counted twice; the calls being written
        // stay pending (and counted in what is served) until they are.
        let _flushing = self.flushing.lock().unwrap_or_else(|e| e.into_inner());
        let deltas = {
            let state = self.lock_state();
            if state.pending.is_empty() {
                return Ok(());
            }
            state.pending.clone()
        };
        // The store's lock is taken without the state held (see `Catalog::write`).
        let totals = self.store.add_usage(&deltas)?;
        let mut state = self.lock_state();
        for (id, delta) in deltas {
            if let Some(p) = state.pending.get_mut(&id) {
                p.call_count = p.call_count.saturating_sub(delta.call_count);
                if p.call_count == 0 {
                    state.pending.remove(&id);
                }
            }
        }
        if state.pending.is_empty() {
            state.pending_since = None;
        }
        for (id, total) in totals {
            // A tool deleted meanwhile keeps no count.
            if state.tools.contains_key(&id) {
                state.usage.insert(id, total);
            }
        }
        Ok(())
    }
}

fn find(state: &State, bundle: Uuid, slug: &str, version: &str) -> Result<Uuid> {
    state
        .find(bundle, slug, version)
        .ok_or_else(|| Error::ToolNotFound {
            bundle,
            slug: slug.to_owned(),
            version: version.to_owned(),
        })
}
