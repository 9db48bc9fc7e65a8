//! Who reads or writes the catalog: a [`Viewer`] is the operator (every bundle), a tenant
//! (its own bundles, the shared ones and the built-ins) or the public (the shared bundles
//! and the built-ins); and the [`Scope`] of a bundle's tools, who sees them, the one rule
//! the catalog's views, the search index (as [`Scope::key`]) and the server's change feed
//! share. Records, like the bundles they decide about: what a viewer sees of a catalog is
//! [`CatalogView`](crate::CatalogView)'s.

use crate::model::Bundle;
use crate::model::TenantId;

/// Who is reading or writing: decides which bundles, and so which tools, they see.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Viewer {
    /// The server's own token, the CLI, a program on the catalog: every bundle.
    Operator,
    /// A tenant: its own bundles, the shared ones and the built-ins.
    Tenant(TenantId),
    /// Anyone without a token: the shared bundles and the built-ins.
    Public,
}

/// The search scope of the built-in and shared bundles' tools.
pub const SCOPE_SHARED: &str = "*";
/// The search scope of the operator's own (unshared) bundles' tools.
pub const SCOPE_OPERATOR: &str = "-";

impl Viewer {
    /// Whether the viewer sees the bundle (and its tools): whether it sees the bundle's
    /// [`Scope`].
    pub fn sees(&self, bundle: &Bundle) -> bool {
        Scope::of(bundle).seen_by(self)
    }

    /// Whether the viewer may write the bundle: the operator every stored bundle, a
    /// tenant its own.
    pub fn owns(&self, bundle: &Bundle) -> bool {
        match self {
            Viewer::Operator => !bundle.is_built_in,
            Viewer::Tenant(t) => bundle.owner == Some(*t),
            Viewer::Public => false,
        }
    }

    /// The tenant, for a tenant's view.
    pub fn tenant(&self) -> Option<TenantId> {
        match self {
            Viewer::Tenant(t) => Some(*t),
            _ => None,
        }
    }

    /// The search scopes ([`Scope::key`]) the viewer sees; `None`: every one.
    pub fn scopes(&self) -> Option<Vec<String>> {
        match self {
            Viewer::Operator => None,
            Viewer::Tenant(t) => Some(vec![Scope::Shared.key(), Scope::Tenant(*t).key()]),
            Viewer::Public => Some(vec![Scope::Shared.key()]),
        }
    }
}

/// Who sees a bundle's tools: decided by the bundle alone (built-in, shared, its owner).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// A built-in or shared bundle's: everyone.
    Shared,
    /// The operator's own (unshared) bundle's: the operator only.
    Operator,
    /// A tenant's own (unshared) bundle's: that tenant and the operator.
    Tenant(TenantId),
}

impl Scope {
    /// The scope of `bundle`'s tools.
    pub fn of(bundle: &Bundle) -> Scope {
        if bundle.is_built_in || bundle.shared {
            Scope::Shared
        } else {
            bundle.owner.map_or(Scope::Operator, Scope::Tenant)
        }
    }

    /// Whether `viewer` sees the tools of this scope.
    pub fn seen_by(self, viewer: &Viewer) -> bool {
        match (viewer, self) {
            (Viewer::Operator, _) | (_, Scope::Shared) => true,
            (Viewer::Tenant(t), Scope::Tenant(owner)) => *t == owner,
            _ => false,
        }
    }

    /// The scope as the search index keeps it: [`SCOPE_SHARED`], [`SCOPE_OPERATOR`], or
    /// the owner's id (32 hex digits).
    pub fn key(self) -> String {
        match self {
            Scope::Shared => SCOPE_SHARED.to_owned(),
            Scope::Operator => SCOPE_OPERATOR.to_owned(),
            Scope::Tenant(t) => t.simple().to_string(),
        }
    }
}

/// The search scope of a bundle's tools ([`Scope::key`] of [`Scope::of`]):
/// [`SCOPE_SHARED`] for the built-in and shared bundles, the owner's id (32 hex digits)
/// for a tenant's, [`SCOPE_OPERATOR`] for the operator's own. A viewer sees a tool
/// exactly when [`Viewer::scopes`] holds its scope.
pub fn scope_of(bundle: &Bundle) -> String {
    Scope::of(bundle).key()
}
