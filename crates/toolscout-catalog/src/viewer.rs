//! Who reads or writes the catalog: a [`Viewer`] is the operator (every bundle), a tenant
//! (its own bundles, the shared ones and the built-ins) or the public (the shared bundles
//! and the built-ins); and the search scope of a bundle's tools ([`scope_of`]). A record,
//! like the bundles it decides about: what it sees of a catalog is
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
    /// Whether the viewer sees the bundle (and its tools).
    pub fn sees(&self, bundle: &Bundle) -> bool {
        match self {
            Viewer::Operator => true,
            Viewer::Tenant(t) => bundle.is_built_in || bundle.shared || bundle.owner == Some(*t),
            Viewer::Public => bundle.is_built_in || bundle.shared,
        }
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

    /// The search scopes ([`scope_of`]) the viewer sees; `None`: every one.
    pub fn scopes(&self) -> Option<Vec<String>> {
        match self {
            Viewer::Operator => None,
            Viewer::Tenant(t) => Some(vec![SCOPE_SHARED.to_owned(), t.simple().to_string()]),
            Viewer::Public => Some(vec![SCOPE_SHARED.to_owned()]),
        }
    }
}

/// The search scope of a bundle's tools: [`SCOPE_SHARED`] for the built-in and shared
/// bundles, the owner's id (32 hex digits) for a tenant's, [`SCOPE_OPERATOR`] for the
/// operator's own. A viewer sees a tool exactly when [`Viewer::scopes`] holds its scope.
pub fn scope_of(bundle: &Bundle) -> String {
    if bundle.is_built_in || bundle.shared {
        SCOPE_SHARED.to_owned()
    } else {
        match bundle.owner {
            Some(t) => t.simple().to_string(),
            None => SCOPE_OPERATOR.to_owned(),
        }
    }
}
