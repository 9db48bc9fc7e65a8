//! The operator's handle ([`Catalog::operator`]): the operator's view, whose reads and
//! writes are a [`CatalogView`]'s, and the upkeep only the operator does — tenants and
//! their tokens, bundles' owners and sharing, the reaper, remote tools, imports by slug.
//!
//! Tenancy is held by the types: a tenant's request gets a [`CatalogView`] of its own
//! viewer, and a view gives no way back to the [`Catalog`], nor to an [`Operator`] (each
//! snippet below fails to compile with E0599, no such method):
//!
//! ```compile_fail,E0599
//! // A tenant's view has no upkeep of the operator's…
//! fn tenant_path(view: toolscout_catalog::CatalogView<'_>) {
//!     let _ = view.set_bundle_owner(uuid::Uuid::nil(), None);
//! }
//! ```
//!
//! ```compile_fail,E0599
//! // …and no way to the catalog's own writes.
//! fn tenant_path(view: toolscout_catalog::CatalogView<'_>) {
//!     let _ = view.catalog().put_bundle(uuid::Uuid::nil(), &toolscout_catalog::BundlePut::new("b"));
//! }
//! ```
//!
//! ```compile_fail,E0599
//! // An operator's handle is made from the catalog only, never from a view.
//! fn tenant_path(view: toolscout_catalog::CatalogView<'_>) {
//!     let _ = view.operator();
//! }
//! ```
//!
//! ```
//! use toolscout_catalog::{BundlePut, Catalog, TenantLimits, Viewer};
//!
//! let dir = tempfile::tempdir()?;
//! let catalog = Catalog::open(dir.path(), &[])?;
//! let operator = catalog.operator();
//! let (acme, _token) = operator.add_tenant("acme", TenantLimits::default())?;
//! let crm = uuid::Uuid::now_v7();
//! operator.put_bundle(crm, &BundlePut::new("crm"))?; // a view's write, the operator's view
//! operator.set_bundle_owner(crm, Some(acme.id))?;
//! assert!(catalog.view(&Viewer::Tenant(acme.id)).bundle(crm).is_ok());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ops::Deref;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::Catalog;
use super::add::{Added, OnExisting};
use super::view::CatalogView;
use crate::Result;
use crate::model::{Bundle, BundlePut, TenantId, Tool, ToolPut};
use crate::tenant::{NewToken, Tenant, TenantLimits, TokenInfo};
use crate::viewer::Viewer;

/// The operator's handle on a catalog ([`Catalog::operator`]): the operator's
/// [`CatalogView`] (through `Deref`), and the upkeep no other viewer may do.
#[derive(Debug, Clone)]
pub struct Operator<'a> {
    catalog: &'a Catalog,
    view: CatalogView<'a>,
}

impl Catalog {
    /// The operator's handle: the catalog as the operator sees it (every bundle), with
    /// the operator's upkeep. The server hands it to the operator's requests only; a
    /// tenant's request gets [`Catalog::view`] of its tenant, from which there is no way
    /// to an `Operator` (see [`Operator`]).
    pub fn operator(&self) -> Operator<'_> {
        Operator {
            catalog: self,
            view: self.view(&Viewer::Operator),
        }
    }
}

impl<'a> Deref for Operator<'a> {
    type Target = CatalogView<'a>;

    fn deref(&self) -> &CatalogView<'a> {
        &self.view
    }
}

impl Operator<'_> {
    /// [`Catalog::add_tenant`].
    pub fn add_tenant(&self, name: &str, limits: TenantLimits) -> Result<(Tenant, NewToken)> {
        self.catalog.add_tenant(name, limits)
    }

    /// [`Catalog::tenants`].
    pub fn tenants(&self) -> Vec<Tenant> {
        self.catalog.tenants()
    }

    /// [`Catalog::tenant`].
    pub fn tenant(&self, name_or_id: &str) -> Result<Tenant> {
        self.catalog.tenant(name_or_id)
    }

    /// [`Catalog::set_tenant_limits`].
    pub fn set_tenant_limits(&self, id: TenantId, limits: TenantLimits) -> Result<Tenant> {
        self.catalog.set_tenant_limits(id, limits)
    }

    /// [`Catalog::add_token`].
    pub fn add_token(&self, id: TenantId, label: &str) -> Result<NewToken> {
        self.catalog.add_token(id, label)
    }

    /// [`Catalog::revoke_token`].
    pub fn revoke_token(&self, token: Uuid) -> Result<TokenInfo> {
        self.catalog.revoke_token(token)
    }

    /// [`Catalog::remove_tenant`].
    pub fn remove_tenant(&self, id: TenantId) -> Result<Tenant> {
        self.catalog.remove_tenant(id)
    }

    /// [`Catalog::set_bundle_owner`].
    pub fn set_bundle_owner(&self, bundle: Uuid, owner: Option<TenantId>) -> Result<Bundle> {
        self.catalog.set_bundle_owner(bundle, owner)
    }

    /// [`Catalog::set_bundle_shared`].
    pub fn set_bundle_shared(&self, bundle: Uuid, shared: bool) -> Result<Bundle> {
        self.catalog.set_bundle_shared(bundle, shared)
    }

    /// [`Catalog::reap`].
    pub fn reap(&self, now: DateTime<Utc>) -> Result<Vec<Uuid>> {
        self.catalog.reap(now)
    }

    /// [`Catalog::put_remote_tool`].
    pub fn put_remote_tool(
        &self,
        bundle: Uuid,
        slug: &str,
        version: &str,
        put: &ToolPut,
    ) -> Result<Tool> {
        self.catalog.put_remote_tool(bundle, slug, version, put)
    }

    /// [`Catalog::add_tools`].
    pub fn add_tools(&self, bundle: &BundlePut, puts: Vec<ToolPut>) -> Result<Added> {
        self.catalog.add_tools(bundle, puts)
    }

    /// [`Catalog::add_tools_with`].
    pub fn add_tools_with(
        &self,
        bundle: &BundlePut,
        puts: Vec<ToolPut>,
        existing: OnExisting,
    ) -> Result<Added> {
        self.catalog.add_tools_with(bundle, puts, existing)
    }
}
