//! Who reads or writes the catalog: a [`Viewer`] is the operator (every bundle), a tenant
//! (its own bundles, the shared ones and the built-ins) or the public (the shared bundles
//! and the built-ins); and the [`Visibility`] of a bundle's tools, who sees them: the one
//! rule the catalog's views, the search index (its scopes, [`Visibility::key`]) and the
//! server's change feed share. Records, like the bundles they decide about: what a viewer sees of a catalog is
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
    /// [`Visibility`].
    pub fn sees(&self, bundle: &Bundle) -> bool {
        Visibility::of(bundle).seen_by(self)
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

    /// The search scopes ([`Visibility::key`]) the viewer sees; `None`: every one.
    pub fn scopes(&self) -> Option<Vec<String>> {
        match self {
            Viewer::Operator => None,
            Viewer::Tenant(t) => Some(vec![Visibility::Shared.key(), Visibility::Tenant(*t).key()]),
            Viewer::Public => Some(vec![Visibility::Shared.key()]),
        }
    }
}

/// Who sees a bundle's tools: decided by the bundle alone (built-in, shared, its owner).
/// Its [`key`](Visibility::key) is the bundle's search scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Visibility {
    /// A built-in or shared bundle's: everyone.
    Shared,
    /// The operator's own (unshared) bundle's: the operator only.
    Operator,
    /// A tenant's own (unshared) bundle's: that tenant and the operator.
    Tenant(TenantId),
}

impl Visibility {
    /// The scope of `bundle`'s tools.
    pub fn of(bundle: &Bundle) -> Visibility {
        if bundle.is_built_in || bundle.shared {
            Visibility::Shared
        } else {
            bundle
                .owner
                .map_or(Visibility::Operator, Visibility::Tenant)
        }
    }

    /// Whether `viewer` sees the tools of this scope.
    pub fn seen_by(self, viewer: &Viewer) -> bool {
        match (viewer, self) {
            (Viewer::Operator, _) | (_, Visibility::Shared) => true,
            (Viewer::Tenant(t), Visibility::Tenant(owner)) => *t == owner,
            _ => false,
        }
    }

    /// The scope as the search index keeps it: [`SCOPE_SHARED`], [`SCOPE_OPERATOR`], or
    /// the owner's id (32 hex digits).
    pub fn key(self) -> String {
        match self {
            Visibility::Shared => SCOPE_SHARED.to_owned(),
            Visibility::Operator => SCOPE_OPERATOR.to_owned(),
            Visibility::Tenant(t) => t.simple().to_string(),
        }
    }
}

/// The search scope of a bundle's tools ([`Visibility::key`] of [`Visibility::of`]):
/// [`SCOPE_SHARED`] for the built-in and shared bundles, the owner's id (32 hex digits)
/// for a tenant's, [`SCOPE_OPERATOR`] for the operator's own. A viewer sees a tool
/// exactly when [`Viewer::scopes`] holds its scope.
pub fn scope_of(bundle: &Bundle) -> String {
    Visibility::of(bundle).key()
}
