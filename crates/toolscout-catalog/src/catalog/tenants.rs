//! The catalog's tenants: add, list, limit, tokens, remove; bundles' owners and sharing;
//! a presented token authenticated. The records are [`crate::tenant`]'s.

use std::collections::BTreeMap;

use uuid::Uuid;

use super::Catalog;
use crate::events::CatalogEvent;
use crate::model::{Bundle, TenantId, now};
use crate::tenant::{
    Authenticated, NewToken, TOKEN_PREFIX, Tenant, TenantLimits, TenantRecord, TokenInfo,
    check_label, check_tenant_name, digest, mint,
};
use crate::{Error, Result};

impl Catalog {
    /// Makes a tenant with one token, whose text is in the returned [`NewToken`] only.
    ///
    /// # Errors
    ///
    /// [`Error::TenantName`] for a name that breaks [`check_tenant_name`],
    /// [`Error::Invalid`] for limits that fail [`TenantLimits::check`] (nothing is
    /// written), [`Error::TenantExists`] when a live tenant has the name.
    pub fn add_tenant(&self, name: &str, limits: TenantLimits) -> Result<(Tenant, NewToken)> {
        check_tenant_name(name)?;
        limits.check()?;
        let (secret, token) = mint("")?;
        let at = now();
        self.write(|tx| {
            if tx
                .state
                .tenants
                .values()
                .any(|t| t.removed_at.is_none() && t.name == name)
            {
                return Err(Error::TenantExists {
                    name: name.to_owned(),
                });
            }
            let record = TenantRecord {
                id: Uuid::now_v7(),
                name: name.to_owned(),
                limits,
                created_at: at,
                removed_at: None,
                tokens: vec![token.clone()],
            };
            let tenant = record.public();
            tx.save_tenant(record)?;
            tx.events
                .push(CatalogEvent::TenantPut { tenant: tenant.id });
            Ok((
                tenant,
                NewToken {
                    info: token.info.clone(),
                    secret,
                },
            ))
        })
    }

    /// Every tenant, removed ones too, oldest first.
    pub fn tenants(&self) -> Vec<Tenant> {
        self.lock_state()
            .tenants
            .values()
            .map(TenantRecord::public)
            .collect()
    }

    /// Whether the catalog has a live tenant.
    pub fn has_tenants(&self) -> bool {
        self.lock_state()
            .tenants
            .values()
            .any(|t| t.removed_at.is_none())
    }

    /// The live tenant of this name, or the tenant (live or removed) of this id.
    ///
    /// # Errors
    ///
    /// [`Error::TenantNotFound`].
    pub fn tenant(&self, name_or_id: &str) -> Result<Tenant> {
        let state = self.lock_state();
        find(&state.tenants, name_or_id)
            .map(TenantRecord::public)
            .ok_or_else(|| Error::TenantNotFound {
                tenant: name_or_id.chars().take(80).collect(),
            })
    }

    /// Replaces a live tenant's limits; they hold from the next request and write.
    ///
    /// # Errors
    ///
    /// [`Error::TenantNotFound`] when no live tenant has the id.
    pub fn set_tenant_limits(&self, id: TenantId, limits: TenantLimits) -> Result<Tenant> {
        limits.check()?;
        self.write(|tx| {
            let mut record = live(&tx.state.tenants, id)?.clone();
            if record.limits == limits {
                return Ok(record.public());
            }
            record.limits = limits;
            let tenant = record.public();
            tx.save_tenant(record)?;
            tx.events.push(CatalogEvent::TenantPut { tenant: id });
            Ok(tenant)
        })
    }

    /// Makes another token for a live tenant.
    ///
    /// # Errors
    ///
    /// [`Error::TenantNotFound`] when no live tenant has the id; [`Error::Invalid`]
    /// for a label longer than 100 characters or with control characters.
    pub fn add_token(&self, id: TenantId, label: &str) -> Result<NewToken> {
        check_label(label)?;
        let (secret, token) = mint(label)?;
        self.write(|tx| {
            let mut record = live(&tx.state.tenants, id)?.clone();
            record.tokens.push(token.clone());
            tx.save_tenant(record)?;
            tx.events.push(CatalogEvent::TenantPut { tenant: id });
            Ok(NewToken {
                info: token.info,
                secret,
            })
        })
    }

    /// Revokes a token: from the next [`Catalog::authenticate`] of this process, and of
    /// every other once it has read the change. Revoking a revoked token changes nothing.
    ///
    /// # Errors
    ///
    /// [`Error::TokenNotFound`] when no tenant has the token.
    pub fn revoke_token(&self, token: Uuid) -> Result<TokenInfo> {
        let at = now();
        self.write(|tx| {
            let Some(mut record) = tx
                .state
                .tenants
                .values()
                .find(|t| t.tokens.iter().any(|k| k.info.id == token))
                .cloned()
            else {
                return Err(Error::TokenNotFound { token });
            };
            let Some(k) = record.tokens.iter_mut().find(|k| k.info.id == token) else {
                return Err(Error::TokenNotFound { token });
            };
            if k.info.revoked_at.is_some() {
                return Ok(k.info.clone());
            }
            k.info.revoked_at = Some(at);
            let info = k.info.clone();
            let tenant = record.id;
            tx.save_tenant(record)?;
            tx.events.push(CatalogEvent::TokenRevoked { tenant, token });
            Ok(info)
        })
    }

    /// Removes a live tenant: its record stays (as removed, so its id is never taken
    /// again and its name is free) and every token of it is revoked in the same write.
    ///
    /// # Errors
    ///
    /// [`Error::TenantNotFound`] when no live tenant has the id.
    pub fn remove_tenant(&self, id: TenantId) -> Result<Tenant> {
        let at = now();
        self.write(|tx| {
            let mut record = live(&tx.state.tenants, id)?.clone();
            record.removed_at = Some(at);
            for k in &mut record.tokens {
                k.info.revoked_at.get_or_insert(at);
            }
            let tenant = record.public();
            tx.save_tenant(record)?;
            tx.events.push(CatalogEvent::TenantRemoved { tenant: id });
            Ok(tenant)
        })
    }

    /// Gives a bundle to a live tenant, or back to the operator (`None`). An operator's
    /// write: the bundle's tools leave every other tenant's view (unless it is shared).
    ///
    /// # Errors
    ///
    /// [`Error::BundleNotFound`], [`Error::BuiltIn`] for a built-in bundle,
    /// [`Error::TenantNotFound`] when `owner` is no live tenant, [`Error::SlugTaken`] when
    /// the new owner has a live bundle of the same slug.
    pub fn set_bundle_owner(&self, bundle: Uuid, owner: Option<TenantId>) -> Result<Bundle> {
        let at = now();
        self.write(|tx| {
            let mut b = owned_bundle(tx.state, bundle)?;
            if let Some(t) = owner {
                live(&tx.state.tenants, t)?;
            }
            if b.owner == owner {
                return Ok(b);
            }
            if b.soft_deleted_at.is_none() {
                super::ops::check_slug_free(tx.state, Uuid::nil(), owner, &b.slug)?;
            }
            b.owner = owner;
            b.modified_at = at;
            tx.save_bundle(b.clone())?;
            tx.events.push(CatalogEvent::BundlePut { bundle });
            Ok(b)
        })
    }

    /// Shares a bundle with every tenant (they read and call its tools; its owner alone
    /// writes it), or stops sharing it. An operator's write: it puts names into every
    /// tenant's view.
    ///
    /// # Errors
    ///
    /// [`Error::BundleNotFound`], [`Error::BuiltIn`] for a built-in bundle (every tenant
    /// sees those already).
    pub fn set_bundle_shared(&self, bundle: Uuid, shared: bool) -> Result<Bundle> {
        let at = now();
        self.write(|tx| {
            let mut b = owned_bundle(tx.state, bundle)?;
            if b.shared == shared {
                return Ok(b);
            }
            b.shared = shared;
            b.modified_at = at;
            tx.save_bundle(b.clone())?;
            tx.events.push(CatalogEvent::BundlePut { bundle });
            Ok(b)
        })
    }

    /// The tenant a presented token belongs to, when it is a live token of a live
    /// tenant; `None` otherwise (unknown, revoked, or of a removed tenant: one answer).
    ///
    /// This reads what this process knows: call [`Catalog::catch_up`] first to see
    /// another process's revocation.
    pub fn authenticate(&self, presented: &str) -> Option<Authenticated> {
        if !presented.starts_with(TOKEN_PREFIX) || presented.len() > 256 {
            return None;
        }
        let key = digest(presented);
        let state = self.lock_state();
        let (tenant, token) = *state.tokens.get(&key)?;
        let t = state.tenants.get(&tenant)?;
        Some(Authenticated {
            tenant,
            name: t.name.clone(),
            token,
            limits: t.limits,
        })
    }
}

fn find<'a>(
    tenants: &'a BTreeMap<TenantId, TenantRecord>,
    name_or_id: &str,
) -> Option<&'a TenantRecord> {
    if let Ok(id) = name_or_id.parse::<Uuid>() {
        return tenants.get(&id);
    }
    tenants
        .values()
        .find(|t| t.removed_at.is_none() && t.name == name_or_id)
}

/// A stored (not built-in) bundle, to change its owner or sharing.
fn owned_bundle(state: &crate::state::State, id: Uuid) -> Result<Bundle> {
    match state.bundles.get(&id) {
        None => Err(Error::BundleNotFound { bundle: id }),
        Some(b) if b.is_built_in => Err(Error::BuiltIn {
            what: "bundle",
            slug: b.slug.clone(),
        }),
        Some(b) => Ok(b.clone()),
    }
}

fn live(tenants: &BTreeMap<TenantId, TenantRecord>, id: TenantId) -> Result<&TenantRecord> {
    tenants
        .get(&id)
        .filter(|t| t.removed_at.is_none())
        .ok_or_else(|| Error::TenantNotFound {
            tenant: id.to_string(),
        })
}
