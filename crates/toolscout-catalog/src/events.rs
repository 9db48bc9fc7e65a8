//! Change notifications: what changed, and the catalog's identity after the change.

use std::sync::{Arc, RwLock};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// One thing that changed. A search index updates one document per tool event; a bundle
/// event concerns every tool of the bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CatalogEvent {
    /// A bundle was created or replaced.
    BundlePut {
        /// The bundle.
        bundle: Uuid,
    },
    /// A bundle's enabled flag changed.
    BundleEnabled {
        /// The bundle.
        bundle: Uuid,
        /// The new flag.
        enabled: bool,
    },
    /// A bundle was soft-deleted.
    BundleDeleted {
        /// The bundle.
        bundle: Uuid,
    },
    /// A soft-deleted bundle was restored.
    BundleRestored {
        /// The bundle.
        bundle: Uuid,
    },
    /// A soft-deleted, empty bundle was removed for good.
    BundleRemoved {
        /// The bundle.
        bundle: Uuid,
    },
    /// A tool was created (or changed on disk by another process).
    ToolPut {
        /// The tool.
        tool: Uuid,
        /// Its bundle.
        bundle: Uuid,
    },
    /// A tool's enabled flag changed.
    ToolEnabled {
        /// The tool.
        tool: Uuid,
        /// Its bundle.
        bundle: Uuid,
        /// The new flag.
        enabled: bool,
    },
    /// A tenant was made, or its limits or tokens changed.
    TenantPut {
        /// The tenant.
        tenant: Uuid,
    },
    /// A tenant was removed (every token of it is revoked with it).
    TenantRemoved {
        /// The tenant.
        tenant: Uuid,
    },
    /// A token was revoked.
    TokenRevoked {
        /// Its tenant.
        tenant: Uuid,
        /// The token.
        token: Uuid,
    },
    /// A tool was deleted.
    ToolDeleted {
        /// The tool.
        tool: Uuid,
        /// Its bundle.
        bundle: Uuid,
    },
}

/// One committed change, as subscribers receive it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogChange {
    /// What changed, in order.
    pub events: Vec<CatalogEvent>,
    /// The catalog's identity after the change (see [`crate::Catalog::identity`]).
    pub identity: Uuid,
    /// The catalog's generation after the change (see [`crate::Catalog::generation`]).
    pub generation: u64,
}

/// A handle returned by [`crate::Catalog::subscribe`], to unsubscribe with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Subscription(pub(crate) u64);

type Callback = Arc<dyn Fn(&CatalogChange) + Send + Sync>;

/// The subscriber list.
#[derive(Default)]
pub(crate) struct Subscribers {
    next: std::sync::atomic::AtomicU64,
    list: RwLock<Vec<(u64, Callback)>>,
}

impl std::fmt::Debug for Subscribers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.list.read().map(|l| l.len()).unwrap_or(0);
        write!(f, "Subscribers({n})")
    }
}

impl Subscribers {
    pub(crate) fn add(&self, callback: Callback) -> Subscription {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut list = self.list.write().unwrap_or_else(|e| e.into_inner());
        list.push((id, callback));
        Subscription(id)
    }

    pub(crate) fn remove(&self, sub: Subscription) -> bool {
        let mut list = self.list.write().unwrap_or_else(|e| e.into_inner());
        let before = list.len();
        list.retain(|(id, _)| *id != sub.0);
        list.len() != before
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.read().map(|l| l.is_empty()).unwrap_or(false)
    }

    /// Calls every subscriber, outside any catalog lock so that they may call back.
    pub(crate) fn notify(&self, change: &CatalogChange) {
        if change.events.is_empty() {
            return;
        }
        let callbacks: Vec<Callback> = {
            let list = self.list.read().unwrap_or_else(|e| e.into_inner());
            list.iter().map(|(_, c)| Arc::clone(c)).collect()
        };
        for c in callbacks {
            c(change);
        }
    }
}
