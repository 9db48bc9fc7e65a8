//! `GET /api/v1/events`: the catalog's changes as Server-Sent Events, one event per
//! committed change (this process's, or another's once the catalog follows it), with the
//! generation and the tool names it added, removed, enabled, disabled or changed.
//!
//! ```text
//! retry: 2000
//!
//! id: 12
//! event: ready
//! data: {"generation":12,"identity":"…"}
//!
//! id: 13
//! event: change
//! data: {"generation":13,"identity":"…","added":["get_weather"],"removed":[],"enabled":[],"disabled":[],"changed":[]}
//!
//! event: heartbeat
//! data: {"generation":13}
//! ```
//!
//! A client that reconnects with `Last-Event-ID: g` gets every change after `g` that the
//! server still holds (the last [`RING`]), then the live ones, with no gap and no
//! duplicate; when it holds too few (or `g` is unknown here), `event: reset`: re-read
//! the list. A client that falls behind by more than [`BUFFER`] events is dropped (it
//! reconnects and resumes): a slow client never slows a write. A heartbeat every
//! [`HEARTBEAT`] lets a client tell a quiet stream from a dead one.
//!
//! Each event names what moved as the feed read the catalog just after that change (on a
//! thread of its own): when writes follow each other closely, a name may be told in the
//! event of an earlier generation than the write that moved it, never later, and a
//! client that applies the events in order ends at the catalog as it is.
//!
//! **Rationale:** names, not ids, because a model calls names: a tool replaced by a new
//! version under the same name is `changed`, a name whose only tool was disabled is
//! `disabled`.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, broadcast};
use toolscout_catalog::{Catalog, CatalogChange, CatalogEvent};
use uuid::Uuid;

use crate::AppError;
use crate::state::AppState;

/// How many past changes the feed keeps for clients that resume.
pub const RING: usize = 1_024;
/// How many changes a client may fall behind before it is dropped.
pub const BUFFER: usize = 256;
/// How often a quiet stream sends a heartbeat.
pub const HEARTBEAT: Duration = Duration::from_secs(15);

/// One committed change, as the feed tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FeedEvent {
    /// The catalog's generation after the change (the event's id).
    pub generation: u64,
    /// The catalog's identity after the change.
    pub identity: Uuid,
    /// Names no tool had before.
    pub added: Vec<String>,
    /// Names no tool has any more.
    pub removed: Vec<String>,
    /// Names that could not be called and now can.
    pub enabled: Vec<String>,
    /// Names that could be called and now cannot.
    pub disabled: Vec<String>,
    /// Names callable before and after whose tool changed (a new version, a new
    /// description).
    pub changed: Vec<String>,
    /// The generation the feed was at before (not sent): a client at it or later
    /// misses nothing by resuming after this event.
    #[serde(skip)]
    pub(crate) from: u64,
}

/// What the feed knows of one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Known {
    name: String,
    callable: bool,
    digest: Uuid,
}

#[derive(Debug, Default)]
struct Names {
    tools: HashMap<Uuid, Known>,
    /// Per name: how many tools hold it, how many of them can be called.
    names: HashMap<String, (usize, usize)>,
    generation: u64,
    identity: Uuid,
}

impl Names {
    fn add(&mut self, id: Uuid, k: Known) {
        let e = self.names.entry(k.name.clone()).or_default();
        e.0 += 1;
        e.1 += usize::from(k.callable);
        self.tools.insert(id, k);
    }

    fn remove(&mut self, id: Uuid) -> Option<Known> {
        let k = self.tools.remove(&id)?;
        if let Some(e) = self.names.get_mut(&k.name) {
            e.0 -= 1;
            e.1 -= usize::from(k.callable);
            if e.0 == 0 {
                self.names.remove(&k.name);
            }
        }
        Some(k)
    }
}

/// The change feed of one server: what it knows of every tool's name, the last
/// [`RING`] events, and the channel live streams read.
#[derive(Debug)]
pub struct ChangeFeed {
    names: Mutex<Names>,
    ring: Mutex<VecDeque<Arc<FeedEvent>>>,
    tx: broadcast::Sender<Arc<FeedEvent>>,
    streams: Arc<Semaphore>,
}

impl ChangeFeed {
    /// A feed of `catalog` as it is now, serving at most `streams` streams at once.
    pub(crate) fn new(catalog: &Catalog, streams: usize) -> ChangeFeed {
        let mut names = Names {
            generation: catalog.generation(),
            identity: catalog.identity(),
            ..Names::default()
        };
        catalog.for_each_head(|head, disabled| {
            names.add(
                head.id,
                Known {
                    name: head.name.clone(),
                    callable: disabled.is_none(),
                    digest: head.digest,
                },
            );
        });
        ChangeFeed {
            names: Mutex::new(names),
            ring: Mutex::new(VecDeque::new()),
            tx: broadcast::channel(BUFFER).0,
            streams: Arc::new(Semaphore::new(streams)),
        }
    }

    fn lock_names(&self) -> MutexGuard<'_, Names> {
        self.names.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_ring(&self) -> MutexGuard<'_, VecDeque<Arc<FeedEvent>>> {
        self.ring.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The generation and identity the feed is at.
    pub fn position(&self) -> (u64, Uuid) {
        let n = self.lock_names();
        (n.generation, n.identity)
    }

    /// A receiver of the events to come.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<FeedEvent>> {
        self.tx.subscribe()
    }

    /// Takes in a committed change of `catalog` (read now, after the change) and tells
    /// the streams; returns the event, `None` when no name moved and no generation
    /// passed.
    pub(crate) fn apply(
        &self,
        catalog: &Catalog,
        change: &CatalogChange,
    ) -> Option<Arc<FeedEvent>> {
        let mut tools: BTreeSet<Uuid> = BTreeSet::new();
        let mut bundles: BTreeSet<Uuid> = BTreeSet::new();
        for e in &change.events {
            match e {
                CatalogEvent::ToolPut { tool, .. }
                | CatalogEvent::ToolEnabled { tool, .. }
                | CatalogEvent::ToolDeleted { tool, .. } => {
                    tools.insert(*tool);
                }
                CatalogEvent::BundlePut { bundle }
                | CatalogEvent::BundleEnabled { bundle, .. }
                | CatalogEvent::BundleDeleted { bundle }
                | CatalogEvent::BundleRestored { bundle }
                | CatalogEvent::BundleRemoved { bundle } => {
                    bundles.insert(*bundle);
                }
                _ => {}
            }
        }
        // The tools as they are now: one scan for the bundles' tools.
        let mut now: BTreeMap<Uuid, Option<Known>> = tools.iter().map(|t| (*t, None)).collect();
        if !bundles.is_empty() {
            catalog.for_each_head(|head, disabled| {
                if bundles.contains(&head.bundle_id) {
                    now.insert(head.id, None);
                }
                if let Some(slot) = now.get_mut(&head.id) {
                    *slot = Some(Known {
                        name: head.name.clone(),
                        callable: disabled.is_none(),
                        digest: head.digest,
                    });
                }
            });
        } else {
            for (id, slot) in &mut now {
                if let Ok(head) = catalog.head(*id) {
                    *slot = Some(Known {
                        name: head.name.clone(),
                        callable: head.is_callable(),
                        digest: head.digest,
                    });
                }
            }
        }
        let mut names = self.lock_names();
        // Tools of a bundle that went away whole: the feed knows them by bundle no more,
        // so those it knows that the catalog no longer has are looked for by id.
        if change
            .events
            .iter()
            .any(|e| matches!(e, CatalogEvent::BundleRemoved { .. }))
        {
            let gone: Vec<Uuid> = names
                .tools
                .keys()
                .filter(|id| !now.contains_key(id) && catalog.head(**id).is_err())
                .copied()
                .collect();
            for id in gone {
                now.insert(id, None);
            }
        }
        let mut touched: BTreeMap<String, ((usize, usize), bool)> = BTreeMap::new();
        let before_of =
            |names: &Names, name: &str| names.names.get(name).copied().unwrap_or_default();
        for (id, after) in &now {
            let before = names.tools.get(id).cloned();
            if before == *after {
                continue;
            }
            for k in before.iter().chain(after.iter()) {
                let b = before_of(&names, &k.name);
                touched.entry(k.name.clone()).or_insert((b, false));
            }
            // What the name may stand for moved: a callable tool of it changed, or one
            // came or went (a new version takes the name over).
            let content = match (&before, after) {
                (Some(b), Some(a)) => b.digest != a.digest && b.callable && a.callable,
                (None, Some(k)) | (Some(k), None) => k.callable,
                (None, None) => false,
            };
            if content {
                for k in before.iter().chain(after.iter()) {
                    if let Some(t) = touched.get_mut(&k.name) {
                        t.1 = true;
                    }
                }
            }
            names.remove(*id);
            if let Some(a) = after {
                names.add(*id, a.clone());
            }
        }
        let from = names.generation;
        names.generation = change.generation.max(names.generation);
        names.identity = change.identity;
        let mut event = FeedEvent {
            generation: names.generation,
            identity: change.identity,
            added: Vec::new(),
            removed: Vec::new(),
            enabled: Vec::new(),
            disabled: Vec::new(),
            changed: Vec::new(),
            from,
        };
        for (name, ((held, callable), content)) in touched {
            let (held_now, callable_now) = names.names.get(&name).copied().unwrap_or_default();
            match (held > 0, held_now > 0) {
                (false, true) => event.added.push(name),
                (true, false) => event.removed.push(name),
                (false, false) => {}
                (true, true) => match (callable > 0, callable_now > 0) {
                    (false, true) => event.enabled.push(name),
                    (true, false) => event.disabled.push(name),
                    (true, true) if content => event.changed.push(name),
                    _ => {}
                },
            }
        }
        drop(names);
        let quiet = event.added.is_empty()
            && event.removed.is_empty()
            && event.enabled.is_empty()
            && event.disabled.is_empty()
            && event.changed.is_empty();
        if quiet && event.generation == from {
            return None;
        }
        let event = Arc::new(event);
        {
            let mut ring = self.lock_ring();
            if ring.len() == RING {
                ring.pop_front();
            }
            ring.push_back(Arc::clone(&event));
        }
        // No stream listening is fine; a full one drops its slowest reader.
        let _ = self.tx.send(Arc::clone(&event));
        Some(event)
    }

    /// The events after `generation` that the ring still holds, or `None` when it does
    /// not hold all of them (a gap: the client must re-read).
    fn since(&self, generation: u64) -> Option<Vec<Arc<FeedEvent>>> {
        let (current, _) = self.position();
        if generation > current {
            return None;
        }
        let ring = self.lock_ring();
        if generation == current {
            return Some(Vec::new());
        }
        let first = ring.front()?;
        if first.from > generation {
            return None;
        }
        Some(
            ring.iter()
                .filter(|e| e.generation > generation)
                .cloned()
                .collect(),
        )
    }
}

fn sse(name: &str, id: Option<u64>, data: &impl Serialize) -> Event {
    let event = Event::default()
        .event(name)
        .data(serde_json::to_string(data).unwrap_or_default());
    match id {
        Some(id) => event.id(id.to_string()),
        None => event,
    }
}

/// `GET /api/v1/events`.
pub(crate) async fn events(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let feed = state.feed();
    let Ok(permit) = Arc::clone(&feed.streams).try_acquire_owned() else {
        let mut response = AppError::unavailable(
            "every event stream this server allows is in use; try again shortly",
        )
        .into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        return response;
    };
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    // Subscribed before the ring is read: an event between the two is in both, and is
    // sent once.
    let rx = feed.subscribe();
    let (generation, identity) = feed.position();
    let mut first: Vec<Event> = vec![];
    let mut sent = generation;
    match last {
        None => first.push(sse(
            "ready",
            Some(generation),
            &serde_json::json!({"generation": generation, "identity": identity}),
        )),
        Some(g) => match feed.since(g) {
            Some(backlog) => {
                sent = g;
                for e in backlog {
                    sent = sent.max(e.generation);
                    first.push(sse("change", Some(e.generation), &*e));
                }
            }
            None => first.push(sse(
                "reset",
                Some(generation),
                &serde_json::json!({"generation": generation, "identity": identity}),
            )),
        },
    }
    let stream = Stream {
        first: first.into(),
        rx,
        sent,
        heartbeat: tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT),
        _permit: permit,
    };
    let stream = futures_util::stream::unfold(stream, |mut s| async move {
        let event = s.next().await?;
        Some((Ok::<_, Infallible>(event), s))
    });
    let mut response = Sse::new(stream).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    *response.status_mut() = StatusCode::OK;
    response
}

/// One client's stream.
struct Stream {
    first: VecDeque<Event>,
    rx: broadcast::Receiver<Arc<FeedEvent>>,
    /// The latest generation sent.
    sent: u64,
    heartbeat: tokio::time::Interval,
    /// Held while the stream lives.
    _permit: OwnedSemaphorePermit,
}

impl Stream {
    /// The next event; `None` ends the stream (the client fell behind, or the server
    /// stops).
    async fn next(&mut self) -> Option<Event> {
        if let Some(e) = self.first.pop_front() {
            return Some(e.retry(Duration::from_secs(2)));
        }
        loop {
            tokio::select! {
                got = self.rx.recv() => match got {
                    Ok(e) if e.generation <= self.sent => continue,
                    Ok(e) => {
                        self.sent = e.generation;
                        self.heartbeat.reset();
                        return Some(sse("change", Some(e.generation), &*e));
                    }
                    // Fallen behind, or the server is going: it reconnects and resumes.
                    Err(_) => return None,
                },
                _ = self.heartbeat.tick() => {
                    return Some(sse("heartbeat", None, &serde_json::json!({"generation": self.sent})));
                }
            }
        }
    }
}
