//! Who reads the catalog, and the catalog as they see it.
//!
//! A [`Viewer`] is the operator (every bundle), a tenant (its own bundles, the shared ones
//! and the built-ins) or the public (the shared bundles and the built-ins).
//! [`Catalog::view`] gives the catalog as a viewer sees it: a bundle or tool outside the
//! view is answered exactly as one that does not exist (same error, same message), so a
//! tenant cannot tell "another tenant has it" from "nobody has it". A viewer sees the
//! call counts of the tools it owns only: the shared and built-in tools' counts add up
//! every tenant's calls.
//!
//! ```
//! use toolscout_catalog::{BundlePut, Catalog, TenantLimits, Viewer};
//!
//! let dir = tempfile::tempdir()?;
//! let catalog = Catalog::open(dir.path(), &[])?;
//! let (acme, _token) = catalog.add_tenant("acme", TenantLimits::default())?;
//! let crm = uuid::Uuid::now_v7();
//! catalog.put_bundle(crm, &BundlePut::new("crm"))?;
//! catalog.set_bundle_owner(crm, Some(acme.id))?;
//!
//! assert!(catalog.view(&Viewer::Tenant(acme.id)).bundle(crm).is_ok());
//! let other = Viewer::Public;
//! assert_eq!(
//!     catalog.view(&other).bundle(crm).unwrap_err().to_string(),
//!     format!("bundle {crm} not found"),
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{HashMap, HashSet};

use toolscout_spec::name::QualifiedName;
use uuid::Uuid;

use super::{Catalog, Tx};
use crate::model::TenantId;
use crate::model::{Bundle, BundlePut, BundleQuery, Page, Tool, ToolHead, ToolPut, ToolQuery};
use crate::state::visible::NameRank;
use crate::state::visible::{best_of, claim_of, in_view, name_rank, sees_id, visible_bundles};
use crate::viewer::Viewer;
use crate::{Error, Result};

/// The catalog as one [`Viewer`] sees it ([`Catalog::view`]).
#[derive(Debug, Clone)]
pub struct CatalogView<'a> {
    catalog: &'a Catalog,
    viewer: Viewer,
}

impl Catalog {
    /// The catalog as `viewer` sees it.
    pub fn view(&self, viewer: &Viewer) -> CatalogView<'_> {
        CatalogView {
            catalog: self,
            viewer: viewer.clone(),
        }
    }
}

impl CatalogView<'_> {
    /// Who sees.
    pub fn viewer(&self) -> &Viewer {
        &self.viewer
    }

    /// Whether the viewer sees the bundle with this id (`false` when there is none).
    pub fn sees(&self, bundle: Uuid) -> bool {
        let state = self.catalog.lock_state();
        sees_id(&state, &self.viewer, bundle)
    }

    /// The bundle with this id; [`Error::BundleNotFound`] also when it is outside the
    /// view.
    pub fn bundle(&self, id: Uuid) -> Result<Bundle> {
        let state = self.catalog.lock_state();
        state
            .bundles
            .get(&id)
            .filter(|b| self.viewer.sees(b))
            .cloned()
            .ok_or(Error::BundleNotFound { bundle: id })
    }

    /// One page of the bundles in view, ordered by id ([`Catalog::list_bundles`]).
    pub fn list_bundles(&self, query: &BundleQuery) -> Result<Page<Bundle>> {
        self.catalog
            .list_bundles_where(query, |b| self.viewer.sees(b))
    }

    /// One page of the tools in view ([`Catalog::list_tools`]).
    pub fn list_tools(&self, query: &ToolQuery) -> Result<Page<Tool>> {
        let mut page = self
            .catalog
            .list_tools_where(query, |b| self.viewer.sees(b))?;
        self.mask_all(&mut page.items);
        Ok(page)
    }

    /// Call counts are everyone's: a viewer sees those of the tools it owns (all of them,
    /// for the operator) and none of the shared and built-in ones, which other tenants
    /// call too.
    fn mask_all(&self, tools: &mut [Tool]) {
        if self.viewer == Viewer::Operator {
            return;
        }
        let state = self.catalog.lock_state();
        for t in tools {
            let owned = state
                .bundles
                .get(&t.bundle_id)
                .is_some_and(|b| self.viewer.owns(b));
            if !owned {
                t.usage = crate::model::Usage::default();
            }
        }
    }

    fn mask(&self, tool: Tool) -> Tool {
        let mut one = [tool];
        self.mask_all(&mut one);
        let [tool] = one;
        tool
    }

    /// [`Catalog::get_tool`]; a bundle outside the view is [`Error::BundleNotFound`].
    pub fn get_tool(&self, bundle: Uuid, slug: &str, version: &str) -> Result<Tool> {
        if !self.sees(bundle) {
            return Err(Error::BundleNotFound { bundle });
        }
        self.catalog
            .get_tool(bundle, slug, version)
            .map(|t| self.mask(t))
    }

    /// [`Catalog::tool`]; a tool outside the view is [`Error::ToolIdNotFound`].
    pub fn tool(&self, id: Uuid) -> Result<Tool> {
        self.head(id)?;
        self.catalog.tool(id).map(|t| self.mask(t))
    }

    /// [`Catalog::head`]; a tool outside the view is [`Error::ToolIdNotFound`].
    pub fn head(&self, id: Uuid) -> Result<ToolHead> {
        let state = self.catalog.lock_state();
        state
            .tools
            .get(&id)
            .filter(|raw| sees_id(&state, &self.viewer, raw.head.bundle_id))
            .map(|raw| state.head(raw))
            .ok_or(Error::ToolIdNotFound { tool: id })
    }

    /// [`Catalog::tools_of`] among the tools in view.
    pub fn tools_of(&self, ids: &[Uuid]) -> Result<Vec<Tool>> {
        let ids: Vec<Uuid> = {
            let state = self.catalog.lock_state();
            let visible = visible_bundles(&state, &self.viewer);
            ids.iter()
                .copied()
                .filter(|id| {
                    state
                        .tools
                        .get(id)
                        .is_some_and(|raw| in_view(visible.as_ref(), raw.head.bundle_id))
                })
                .collect()
        };
        let mut tools = self.catalog.tools_of(&ids)?;
        self.mask_all(&mut tools);
        Ok(tools)
    }

    /// The heads of the tools in view, ordered by id ([`Catalog::heads`]).
    pub fn heads(&self) -> Vec<ToolHead> {
        let state = self.catalog.lock_state();
        let visible = visible_bundles(&state, &self.viewer);
        state
            .tools
            .values()
            .filter(|raw| in_view(visible.as_ref(), raw.head.bundle_id))
            .map(|raw| state.head(raw))
            .collect()
    }

    /// Which tool each bare name stands for in this view, disabled ones too, with
    /// whether it can be called; in id order. The greatest [`NameRank`] wins: a name is
    /// the viewer's own tool's, else a shared one's, else a built-in's (an enabled
    /// built-in keeps its name against all), never whichever was changed last across
    /// owners; the operator reaches a tenant's unshared tool by its qualified name only
    /// ([`CatalogView::resolve`]).
    pub fn name_holders(&self) -> Vec<(Uuid, bool)> {
        let state = self.catalog.lock_state();
        let mut best: HashMap<&str, (NameRank, Uuid)> = HashMap::new();
        for raw in state.tools.values() {
            let Some(rank) = name_rank(&state, &self.viewer, raw) else {
                continue;
            };
            best.entry(raw.head.name.as_str())
                .and_modify(|held| {
                    if rank > held.0 {
                        *held = (rank, raw.head.id);
                    }
                })
                .or_insert((rank, raw.head.id));
        }
        let mut out: Vec<(Uuid, bool)> = best
            .into_values()
            .map(|(rank, id)| (id, rank.claim().callable()))
            .collect();
        out.sort_unstable_by_key(|(id, _)| *id);
        out
    }

    /// The tool the bare name `name` stands for in this view ([`name_holders`]'s
    /// choice), with whether it can be called; `None` when it stands for none.
    ///
    /// [`name_holders`]: CatalogView::name_holders
    pub fn name_holder(&self, name: &str) -> Option<(Uuid, bool)> {
        let state = self.catalog.lock_state();
        best_of(
            &state,
            &self.viewer,
            state
                .tools
                .values()
                .map(Box::as_ref)
                .filter(|raw| raw.head.name == name),
        )
    }

    /// Of `ids` (tools that share a name, say), the one a bare name stands for in this
    /// view, as [`CatalogView::name_holder`] picks it; `None` when none is in reach.
    pub fn pick(&self, ids: &[Uuid]) -> Option<(Uuid, bool)> {
        let state = self.catalog.lock_state();
        best_of(
            &state,
            &self.viewer,
            ids.iter()
                .filter_map(|id| state.tools.get(id).map(Box::as_ref)),
        )
    }

    /// The tool `name` stands for in this view: a qualified name `[owner:]bundle/tool`
    /// ([`QualifiedName`]: the owner's tenant name, none for the operator's and the
    /// built-in bundles; the tool's slug or name) names one tool of one bundle the viewer
    /// sees, a bare name is [`CatalogView::name_holder`]'s. `None` when it stands for
    /// none (a qualified name that does not read is none's too).
    pub fn resolve(&self, name: &str) -> Option<(Uuid, bool)> {
        match QualifiedName::parse(name) {
            Ok(Some(q)) => self.resolve_qualified(&q),
            Ok(None) => self.name_holder(name),
            Err(_) => None,
        }
    }

    /// The tool of `q` in this view, with whether it can be called (of its versions,
    /// the greatest [`NameClaim`](crate::NameClaim)); `None` when the viewer sees no such tool.
    pub fn resolve_qualified(&self, q: &QualifiedName) -> Option<(Uuid, bool)> {
        let state = self.catalog.lock_state();
        let owner = match &q.owner {
            None => None,
            Some(name) => Some(
                state
                    .tenants
                    .values()
                    .find(|t| t.removed_at.is_none() && t.name == *name)?
                    .id,
            ),
        };
        let bundles: HashSet<Uuid> = state
            .bundles
            .values()
            .filter(|b| b.slug == q.bundle && b.owner == owner && self.viewer.sees(b))
            .map(|b| b.id)
            .collect();
        state
            .tools
            .values()
            .filter(|raw| bundles.contains(&raw.head.bundle_id))
            .filter(|raw| raw.head.slug == q.tool || raw.head.name == q.tool)
            .map(|raw| (claim_of(&state, raw), raw.head.id))
            .max()
            .map(|(claim, id)| (id, claim.callable()))
    }

    /// The identity of the tools the viewer can call: [`Catalog::identity`] over the view.
    /// Two views that can call the same tools share it; two that cannot, never do.
    pub fn identity(&self) -> Uuid {
        if self.viewer == Viewer::Operator {
            return self.catalog.identity();
        }
        let mut state = self.catalog.lock_state();
        state.view_identity(&self.viewer)
    }
}

/// The writes of a view: only into the bundles the viewer owns, and for a tenant within
/// its [`crate::TenantLimits`]. A bundle outside the view answers [`Error::BundleNotFound`]
/// (as one that does not exist), one in view but not owned (shared, built-in)
/// [`Error::NotOwner`], a write past a limit [`Error::TenantLimit`]; nothing is written
/// then.
impl CatalogView<'_> {
    /// [`Catalog::put_bundle`]: a new bundle is the viewer's own. An id that another
    /// party's bundle holds answers [`Error::BundleNotFound`]: put a new id.
    pub fn put_bundle(&self, id: Uuid, put: &BundlePut) -> Result<Bundle> {
        self.catalog.put_bundle_as(&self.viewer, id, put)
    }

    /// [`Catalog::patch_bundle`].
    pub fn patch_bundle(&self, id: Uuid, is_enabled: bool) -> Result<Bundle> {
        self.catalog.patch_bundle_as(&self.viewer, id, is_enabled)
    }

    /// [`Catalog::delete_bundle`].
    pub fn delete_bundle(&self, id: Uuid) -> Result<Bundle> {
        self.catalog.delete_bundle_as(&self.viewer, id)
    }

    /// [`Catalog::restore_bundle`].
    pub fn restore_bundle(&self, id: Uuid) -> Result<Bundle> {
        self.catalog.restore_bundle_as(&self.viewer, id)
    }

    /// [`Catalog::put_tool`].
    pub fn put_tool(&self, bundle: Uuid, slug: &str, version: &str, put: &ToolPut) -> Result<Tool> {
        self.catalog
            .put_tool_as(&self.viewer, bundle, slug, version, put)
    }

    /// [`Catalog::put_tools`].
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
        self.catalog
            .put_tools_if(&self.viewer, bundle, None, tools, |_| Ok(()))
    }

    /// Checks a recipe that is not stored, as [`CatalogView::put_tool`] of it as
    /// `<slug, version>` would, and writes nothing: its name (not a built-in's), slug,
    /// version and spec, its `impl` block on its own, and its steps against the tools the
    /// viewer sees ([`toolscout_spec::recipe::Recipe::check_tools`]). The errors are the
    /// put's ([`Error::Recipe`] names the step); a tool of another type is
    /// [`Error::ToolBody`]. Returns the recipe's spec. What the put alone checks, the
    /// bundle, is not: a recipe is tried before its bundle is chosen (the console's
    /// recipe builder).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolscout_catalog::{AuthoredTool, Catalog, CatalogOptions, Viewer, builtin};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let catalog = Catalog::open_with(
    ///     dir.path(),
    ///     CatalogOptions::default().with_natives(&builtin::NATIVE_FUNCTIONS),
    /// )?;
    /// let body = json!({
    ///     "slug": "r", "version": "1", "name": "r", "description": "Two steps.",
    ///     "type": "recipe",
    ///     "impl": {"steps": [
    ///         {"id": "a", "tool": "clock", "args": {"action": "now"}},
    ///         {"id": "b", "tool": "no_such_tool", "from": {"x": "$.steps.a"}}
    ///     ]}
    /// });
    /// let draft = AuthoredTool::from_json(body.as_object().unwrap().clone(), Some(uuid::Uuid::nil()))?;
    /// let err = catalog
    ///     .view(&Viewer::Operator)
    ///     .check_recipe(&draft.slug, &draft.version, &draft.put)
    ///     .unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "recipe 'r': step 'b': calls 'no_such_tool', which no tool of the catalog is named"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_recipe(
        &self,
        slug: &str,
        version: &str,
        put: &ToolPut,
    ) -> Result<toolscout_spec::ToolSpec> {
        super::recipes::check_draft(self.catalog, &self.viewer, slug, version, put)
    }

    /// [`Catalog::patch_tool`].
    pub fn patch_tool(
        &self,
        bundle: Uuid,
        slug: &str,
        version: &str,
        is_enabled: bool,
    ) -> Result<Tool> {
        self.catalog
            .patch_tool_as(&self.viewer, bundle, slug, version, is_enabled)
    }

    /// [`Catalog::delete_tool`].
    pub fn delete_tool(&self, bundle: Uuid, slug: &str, version: &str) -> Result<Tool> {
        self.catalog
            .delete_tool_as(&self.viewer, bundle, slug, version)
    }

    /// [`Catalog::import_bundle`]: for a tenant, into its own bundle (the archive's when
    /// it owns it, else its live bundle of the archive's slug, else a new one with a
    /// fresh id), with fresh tool ids but for tools it already holds as the archive has
    /// them; within its limits.
    pub fn import_bundle<R: std::io::Read + std::io::Seek>(
        &self,
        reader: R,
    ) -> Result<crate::Imported> {
        self.catalog.import_bundle_as(&self.viewer, reader)
    }
}

impl Catalog {
    /// Where the tool `<bundle, slug>` is kept, as a qualified name: its bundle's owner
    /// (a tenant's name, none for the operator's and the built-ins), the bundle's slug
    /// and the tool's slug. `None` when there is no such bundle.
    pub fn qualified_name(&self, bundle: Uuid, slug: &str) -> Option<QualifiedName> {
        let state = self.lock_state();
        let b = state.bundles.get(&bundle)?;
        let owner = match b.owner {
            None => None,
            Some(t) => Some(state.tenants.get(&t)?.name.clone()),
        };
        Some(QualifiedName {
            owner,
            bundle: b.slug.clone(),
            tool: slug.to_owned(),
        })
    }
}

impl Tx<'_> {
    /// Whether the writer may change bundle `bundle` (or a tool in it):
    /// [`Error::BundleNotFound`] when it is outside the writer's view (as when there is
    /// none), [`Error::NotOwner`] when the writer sees it but does not own it. The
    /// operator passes (the ops' own checks refuse built-ins where they must).
    pub(crate) fn may_write(&self, bundle: Uuid) -> Result<()> {
        if *self.writer == Viewer::Operator {
            return Ok(());
        }
        match self.state.bundles.get(&bundle) {
            Some(b) if self.writer.owns(b) => Ok(()),
            Some(b) if self.writer.sees(b) => Err(Error::NotOwner {
                bundle,
                slug: b.slug.clone(),
            }),
            _ => Err(Error::BundleNotFound { bundle }),
        }
    }

    /// The owner a bundle the writer makes gets: the tenant, or `None` (the operator).
    /// The public makes none.
    pub(crate) fn new_owner(&self, bundle: Uuid, slug: &str) -> Result<Option<TenantId>> {
        match self.writer {
            Viewer::Operator => Ok(None),
            Viewer::Tenant(t) => Ok(Some(*t)),
            Viewer::Public => Err(Error::NotOwner {
                bundle,
                slug: slug.to_owned(),
            }),
        }
    }

    /// Whether a tenant writer may add `bundles` live bundles and `tools` tool versions
    /// within its limits ([`Error::TenantLimit`]); anyone else may.
    pub(crate) fn check_limits(&self, bundles: u64, tools: u64) -> Result<()> {
        let Viewer::Tenant(t) = self.writer else {
            return Ok(());
        };
        let Some(tenant) = self.state.tenants.get(t) else {
            return Err(Error::TenantNotFound {
                tenant: t.to_string(),
            });
        };
        let limits = tenant.limits;
        let owned: HashSet<Uuid> = self
            .state
            .bundles
            .values()
            .filter(|b| b.owner == Some(*t) && b.soft_deleted_at.is_none())
            .map(|b| b.id)
            .collect();
        let held_bundles = owned.len() as u64;
        if bundles > 0 && held_bundles + bundles > u64::from(limits.max_bundles) {
            return Err(Error::TenantLimit {
                what: "bundles",
                limit: limits.max_bundles,
                held: held_bundles,
                adding: bundles,
            });
        }
        if tools > 0 {
            let held_tools = self
                .state
                .tools
                .values()
                .filter(|raw| owned.contains(&raw.head.bundle_id))
                .count() as u64;
            if held_tools + tools > u64::from(limits.max_tools) {
                return Err(Error::TenantLimit {
                    what: "tools",
                    limit: limits.max_tools,
                    held: held_tools,
                    adding: tools,
                });
            }
        }
        Ok(())
    }
}
