//! Change notifications: what changed, and the catalog's identity after the change.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

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

/// The subscriber list, and the changes waiting to be told to it.
///
/// Changes are queued under the catalog's state lock, in the order the state took them
/// in (which is generation order: a write and a reload both catch up with the store
/// under that lock), and told to the subscribers from that queue by one thread at a
/// time, in that order. A thread that queues a change while another is telling does not
/// wait for it: the teller tells it too (see [`Subscribers::deliver`]).
///
/// **Rationale:** a write and a reload of other processes' changes run on different
/// threads and release the state lock before they tell; told each by its own thread, a
/// change could reach a subscriber after a later one (a feed then dropped it as already
/// sent, issue #62). Telling from under the state lock would order them too, but a
/// subscriber may read the catalog.
#[derive(Default)]
pub(crate) struct Subscribers {
    next: std::sync::atomic::AtomicU64,
    list: RwLock<Vec<(u64, Callback)>>,
    /// The changes queued and not yet told, in order.
    queue: Mutex<Queue>,
    /// Held by the thread that tells.
    telling: Mutex<()>,
    /// Signalled whenever a change has been told.
    told: Condvar,
}

/// The queue of [`Subscribers`], with how many changes were ever queued and told.
#[derive(Default)]
struct Queue {
    waiting: VecDeque<CatalogChange>,
    queued: u64,
    told: u64,
}

thread_local! {
    /// Set while this thread tells subscribers: a subscriber that writes to the catalog
    /// queues its change for the loop it runs in, and never waits for it.
    static TELLING: Cell<bool> = const { Cell::new(false) };
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

    fn lock_queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues `change` to be told. Call it under the catalog's state lock, so that the
    /// queue's order is the state's; then, with that lock released, [`deliver`](Self::deliver).
    pub(crate) fn queue(&self, change: CatalogChange) {
        if change.events.is_empty() {
            return;
        }
        let mut queue = self.lock_queue();
        queue.queued += 1;
        queue.waiting.push_back(change);
    }

    /// Tells every queued change to every subscriber, in order, outside any catalog lock
    /// so that they may call back. Changes queued while the subscribers heard the last
    /// are told together, as one change (see [`merged`]). When another thread is telling, it tells what this
    /// one queued, and this returns at once; a subscriber that reads search results
    /// waits for it with [`settle`](Self::settle).
    pub(crate) fn deliver(&self) {
        if TELLING.with(Cell::get) {
            // A subscriber's own write: the loop below, on this thread, tells it next.
            return;
        }
        loop {
            let Ok(teller) = self.telling.try_lock() else {
                // The teller checks the queue again after it lets go (below), so what
                // this thread queued before trying is told.
                return;
            };
            TELLING.with(|t| t.set(true));
            loop {
                let (change, n) = {
                    let mut queue = self.lock_queue();
                    let n = queue.waiting.len();
                    (merged(queue.waiting.drain(..)), n)
                };
                let Some(change) = change else {
                    break;
                };
                let callbacks: Vec<Callback> = {
                    let list = self.list.read().unwrap_or_else(|e| e.into_inner());
                    list.iter().map(|(_, c)| Arc::clone(c)).collect()
                };
                for c in callbacks {
                    // A subscriber that panics does not stop the others, nor the
                    // changes after this one.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c(&change)));
                }
                self.lock_queue().told += n as u64;
                self.told.notify_all();
            }
            TELLING.with(|t| t.set(false));
            drop(teller);
            if self.lock_queue().waiting.is_empty() {
                return;
            }
        }
    }

    /// Waits up to `timeout` until every change queued before the call has been told to
    /// every subscriber; returns whether it has. On the thread that tells (a subscriber
    /// asking), it returns `false` at once.
    pub(crate) fn settle(&self, timeout: Duration) -> bool {
        if TELLING.with(Cell::get) {
            return false;
        }
        let deadline = Instant::now() + timeout;
        let mut queue = self.lock_queue();
        let target = queue.queued;
        while queue.told < target {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            queue = self
                .told
                .wait_timeout(queue, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }
}

/// Changes told together as one: every event in order, the identity and generation of
/// the last; `None` for none.
///
/// **Rationale:** a subscriber's work per change (a search index's commit) is what lets
/// changes pile up when every replica writes at once: told one by one, a burst of
/// writes queued faster than a replica's index committed them, and the feed behind the
/// index fell seconds behind. A reload that reads several generations at once already
/// tells them as one change, so no subscriber may count on one change a generation.
fn merged(changes: impl Iterator<Item = CatalogChange>) -> Option<CatalogChange> {
    changes.reduce(|mut all, next| {
        all.events.extend(next.events);
        all.identity = next.identity;
        all.generation = next.generation;
        all
    })
}
