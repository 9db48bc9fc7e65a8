//! `GET /api/v1/events`: the catalog's changes as Server-Sent Events, one event per
//! change the catalog tells (this process's write, or what it read of others' once it
//! follows them; writes close together may come as one), in generation order, with the
//! tool names it added, removed, enabled, disabled or changed, as the stream's reader
//! sees the catalog.
//!
//! The operator's stream (the server's own token; any request to a server without one;
//! a read without a token while the catalog has no tenant) tells every change, numbered
//! by the catalog's generation:
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
//! A tenant's stream, and the public one (reads without a token once a tenant exists),
//! tell only what moved within their view ([`Viewer`]): names are counted among the
//! view's tools only, so a name is `added` when the view gets its first tool of that name
//! and `removed` when it loses its last, whatever other tenants hold; a change that moves
//! nothing in the view sends nothing at all. Their events are numbered per view,
//! `<epoch>.<seq>` (`epoch` random, drawn when the server starts following the view;
//! `seq` counts that view's events), so that the ids do not tell how often others write,
//! and `identity` is the view's ([`CatalogView::identity`]):
//!
//! ```text
//! retry: 2000
//!
//! id: 5f2c0e7a9b1d3c48.0
//! event: ready
//! data: {"seq":0,"identity":"…"}
//!
//! id: 5f2c0e7a9b1d3c48.1
//! event: change
//! data: {"seq":1,"identity":"…","added":["crm_lookup"],"removed":[],"enabled":[],"disabled":[],"changed":[]}
//!
//! event: heartbeat
//! data: {"seq":1}
//! ```
//!
//! The server follows a view while one of its streams (or MCP sessions) is open, and
//! [`LINGER`] after the last one closes, keeping the view's last [`VIEW_RING`] events.
//!
//! A client that reconnects with `Last-Event-ID` gets every change after it that the
//! server still holds (the operator's last [`RING`], a view's last [`VIEW_RING`]), then the
//! live ones, with no gap and no duplicate; when it holds too few, or the id is unknown
//! here (another epoch: a view the server stopped following, or a restart), `event:
//! reset`: re-read the list. A client that falls behind by more than [`BUFFER`] events is
//! dropped (it reconnects and resumes): a slow client never slows a write. A heartbeat
//! every [`HEARTBEAT`] lets a client tell a quiet stream from a dead one.
//!
//! A stream opened with a tenant's token ends when the token is revoked or the tenant
//! removed (by this process or, once the catalog reads it, another); a stream without a
//! token in the operator's view ends when the catalog gets its first tenant (reopened, it
//! is the public view's).
//!
//! Each event names what moved as the feed read the catalog just after that change (on a
//! thread of its own): when writes follow each other closely, a name may be told in the
//! event of an earlier generation than the write that moved it, never later, and a
//! client that applies the events in order ends at the catalog as it is.
//!
//! One event type, [`FeedEvent`], serves every audience: the operator is one audience
//! (numbered by generation, told every change), each followed view another (numbered by
//! the view, told what moved in it); its [`Position`] says which numbering. Who sees a
//! tool is its bundle's [`Visibility`], the catalog's rule.
//!
//! **Rationale:** names, not ids, because a model calls names: a tool replaced by a new
//! version under the same name is `changed`, a name whose only tool was disabled is
//! `disabled`.
//!
//! [`CatalogView::identity`]: toolscout_catalog::CatalogView::identity

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::sync::{Semaphore, broadcast};
use toolscout_catalog::{Catalog, CatalogChange, CatalogEvent, Viewer, Visibility};
use uuid::Uuid;

/// How many past changes the operator's stream keeps for clients that resume.
pub const RING: usize = 1_024;
/// How many past events of one view the feed keeps for its clients that resume.
pub const VIEW_RING: usize = 64;
/// How many changes a client may fall behind before it is dropped.
pub const BUFFER: usize = 256;
/// How often a quiet stream sends a heartbeat.
pub const HEARTBEAT: Duration = Duration::from_secs(15);
/// How long the feed goes on following a view after its last stream closed, so that a
/// client that reconnects soon resumes instead of starting again.
pub const LINGER: Duration = Duration::from_secs(60);

/// Where an event stands among its audience's events: the operator's are numbered by
/// the catalog's generation, a view's by its own count (its ids are `<epoch>.<seq>`).
/// Serialised as `"generation": N` or `"seq": N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Position {
    /// The catalog's generation after the change (the operator's events).
    Generation(u64),
    /// The event's number among the view's events (1, 2, 3…; `ready` tells the last).
    Seq(u64),
}

impl Position {
    /// The number, whichever its kind.
    pub fn number(self) -> u64 {
        match self {
            Position::Generation(n) | Position::Seq(n) => n,
        }
    }
}

/// One committed change as one audience sees it: the operator (every change, numbered
/// by generation) or a view (a tenant's, the public's: sent only when a name moved in
/// it, the names counted among the view's tools, numbered by the view).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FeedEvent {
    /// Where the event stands: the event's id is made of it.
    #[serde(flatten)]
    pub position: Position,
    /// The audience's identity after the change: the catalog's for the operator, the
    /// view's ([`CatalogView::identity`](toolscout_catalog::CatalogView::identity)) for
    /// a view.
    pub identity: Uuid,
    /// Names none of the audience's tools had before.
    pub added: Vec<String>,
    /// Names none of the audience's tools has any more.
    pub removed: Vec<String>,
    /// Names that could not be called and now can.
    pub enabled: Vec<String>,
    /// Names that could be called and now cannot.
    pub disabled: Vec<String>,
    /// Names callable before and after whose tool changed (a new version, a new
    /// description).
    pub changed: Vec<String>,
    /// The number the audience was at before (not sent): a client at it or later
    /// misses nothing by resuming after this event.
    #[serde(skip)]
    pub(crate) from: u64,
    /// Whether the change came after a later one was told (so its generation is not
    /// past the last event's): the stream sends `reset` for it, and no client resumes
    /// across it. The catalog tells changes in order, so this is a guard, not a path;
    /// only the operator's events, numbered by generation, can be late.
    #[serde(skip)]
    pub(crate) reset: bool,
}

impl FeedEvent {
    /// Every name the event tells of.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        [
            &self.added,
            &self.removed,
            &self.enabled,
            &self.disabled,
            &self.changed,
        ]
        .into_iter()
        .flatten()
        .map(String::as_str)
    }

    /// The event's number ([`Position::number`]).
    pub fn number(&self) -> u64 {
        self.position.number()
    }
}

/// The names one change moved for one audience.
#[derive(Debug, Default)]
struct Moved {
    added: Vec<String>,
    removed: Vec<String>,
    enabled: Vec<String>,
    disabled: Vec<String>,
    changed: Vec<String>,
}

impl Moved {
    fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.enabled.is_empty()
            && self.disabled.is_empty()
            && self.changed.is_empty()
    }
}

/// What the feed knows of one tool.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Known {
    name: String,
    callable: bool,
    digest: Uuid,
    scope: Visibility,
}

/// How many tools hold a name, and how many of them can be called.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Count {
    held: usize,
    callable: usize,
}

/// A name's counts, one per scope that holds it.
type Counts = Vec<(Visibility, Count)>;

/// A name's count in `viewer`'s view: the sum over the scopes it sees.
fn count_in(counts: Option<&Counts>, viewer: &Viewer) -> Count {
    counts
        .into_iter()
        .flatten()
        .filter(|(scope, _)| scope.seen_by(viewer))
        .fold(Count::default(), |sum, (_, c)| Count {
            held: sum.held + c.held,
            callable: sum.callable + c.callable,
        })
}

#[derive(Debug, Default)]
struct Names {
    tools: HashMap<Uuid, Known>,
    names: HashMap<String, Counts>,
    generation: u64,
    identity: Uuid,
}

impl Names {
    fn add(&mut self, id: Uuid, k: Known) {
        let counts = self.names.entry(k.name.clone()).or_default();
        let callable = usize::from(k.callable);
        match counts.iter_mut().find(|(s, _)| *s == k.scope) {
            Some((_, c)) => {
                c.held += 1;
                c.callable += callable;
            }
            None => counts.push((k.scope, Count { held: 1, callable })),
        }
        self.tools.insert(id, k);
    }

    fn remove(&mut self, id: Uuid) -> Option<Known> {
        let k = self.tools.remove(&id)?;
        if let Some(counts) = self.names.get_mut(&k.name) {
            if let Some(i) = counts.iter().position(|(s, _)| *s == k.scope) {
                let c = &mut counts[i].1;
                c.held = c.held.saturating_sub(1);
                c.callable = c.callable.saturating_sub(usize::from(k.callable));
                if c.held == 0 {
                    counts.swap_remove(i);
                }
            }
            if counts.is_empty() {
                self.names.remove(&k.name);
            }
        }
        Some(k)
    }
}

/// One tool's head as the feed reads it: id, bundle, name, callable, digest.
type Read = (Uuid, Uuid, String, bool, Uuid);

/// The tools of `read` as the feed knows them, with their bundles' scopes. The bundles
/// are read after the heads (the catalog's lock is held while heads are walked); a bundle
/// gone meanwhile counts as the operator's, whom alone it then shows to.
fn known(catalog: &Catalog, read: Vec<Read>) -> impl Iterator<Item = (Uuid, Known)> {
    let bundles: BTreeSet<Uuid> = read.iter().map(|r| r.1).collect();
    let scopes: HashMap<Uuid, Visibility> = bundles
        .into_iter()
        .map(|b| {
            (
                b,
                catalog
                    .bundle(b)
                    .map_or(Visibility::Operator, |b| Visibility::of(&b)),
            )
        })
        .collect();
    read.into_iter()
        .map(move |(id, bundle, name, callable, digest)| {
            let scope = scopes.get(&bundle).copied().unwrap_or(Visibility::Operator);
            (
                id,
                Known {
                    name,
                    callable,
                    digest,
                    scope,
                },
            )
        })
}

/// One audience of the feed: the operator (always there, its events numbered by the
/// catalog's generation) or a view the feed follows (its events numbered on their own,
/// in an epoch of its own, forgotten [`LINGER`] after its last listener).
#[derive(Debug)]
struct Audience {
    /// `None` for the operator; a view's epoch (random, drawn when the feed starts
    /// following it).
    epoch: Option<Arc<str>>,
    /// The number of its last event.
    number: u64,
    identity: Uuid,
    ring: VecDeque<Arc<FeedEvent>>,
    /// How many events the ring keeps.
    keep: usize,
    tx: broadcast::Sender<Arc<FeedEvent>>,
    /// Since when no stream or session listens (a view's).
    idle_since: Option<Instant>,
}

impl Audience {
    fn operator(generation: u64, identity: Uuid) -> Audience {
        Audience {
            epoch: None,
            number: generation,
            identity,
            ring: VecDeque::new(),
            keep: RING,
            tx: broadcast::channel(BUFFER).0,
            idle_since: None,
        }
    }

    fn view(identity: Uuid) -> Audience {
        // The random end of a UUIDv7: nothing of when, or of whom.
        let epoch = Uuid::now_v7().simple().to_string();
        Audience {
            epoch: Some(Arc::from(&epoch[16..])),
            number: 0,
            identity,
            ring: VecDeque::new(),
            keep: VIEW_RING,
            tx: broadcast::channel(BUFFER).0,
            idle_since: None,
        }
    }

    /// The client's `Last-Event-ID` as a number of this audience: `None` for an id of
    /// another kind or epoch.
    fn number_of(&self, last: &str) -> Option<u64> {
        match &self.epoch {
            None => last.trim().parse().ok(),
            Some(epoch) => {
                let (e, seq) = last.trim().rsplit_once('.')?;
                (e == &**epoch).then(|| seq.parse().ok()).flatten()
            }
        }
    }

    /// The events after number `number` the ring holds, when the audience is at
    /// `current`; `None` when the ring does not hold all of them, or a reset came at or
    /// after it, or it is ahead (the client must re-read).
    fn since(&self, number: u64, current: u64) -> Option<Vec<Arc<FeedEvent>>> {
        if number > current {
            return None;
        }
        // A reset at or after the client's event: it may not have had it.
        if self.ring.iter().any(|e| e.reset && e.number() >= number) {
            return None;
        }
        if number == current {
            return Some(Vec::new());
        }
        if self.ring.front()?.from > number {
            return None;
        }
        Some(
            self.ring
                .iter()
                .filter(|e| e.number() > number)
                .cloned()
                .collect(),
        )
    }

    /// Numbers, keeps and sends the audience's event of one change: what moved for it,
    /// its identity after, and the catalog's generations (`from` before, `to` after,
    /// `late` when the change comes after a later one). `None` when there is nothing to
    /// tell: a view hears of moved names only, the operator of every generation too.
    fn tell(
        &mut self,
        moved: Moved,
        identity: Uuid,
        (from, to, late): (u64, u64, bool),
    ) -> Option<Arc<FeedEvent>> {
        let (position, from, reset) = match self.epoch {
            None if moved.is_empty() && to == from => return None,
            None => (Position::Generation(to), from, late),
            Some(_) if moved.is_empty() => return None,
            Some(_) => (Position::Seq(self.number + 1), self.number, false),
        };
        self.number = position.number();
        self.identity = identity;
        let event = Arc::new(FeedEvent {
            position,
            identity,
            added: moved.added,
            removed: moved.removed,
            enabled: moved.enabled,
            disabled: moved.disabled,
            changed: moved.changed,
            from,
            reset,
        });
        if self.ring.len() == self.keep {
            self.ring.pop_front();
        }
        self.ring.push_back(Arc::clone(&event));
        // No stream listening is fine; a full one drops its slowest reader.
        let _ = self.tx.send(Arc::clone(&event));
        Some(event)
    }
}

/// Where a stream starts ([`ChangeFeed::follow`]).
#[derive(Debug)]
pub(crate) struct Start {
    /// The audience's events to come.
    pub(crate) rx: broadcast::Receiver<Arc<FeedEvent>>,
    /// The audience's epoch (`None`: the operator's).
    pub(crate) epoch: Option<Arc<str>>,
    /// Where the audience is: the number of its last event.
    pub(crate) number: u64,
    /// Its identity now.
    pub(crate) identity: Uuid,
    /// The client's `Last-Event-ID`, as a number of this audience.
    pub(crate) last: Option<u64>,
    /// The events after the client's `Last-Event-ID`, when it gave one: `None` when the
    /// server does not hold them all (a reset).
    pub(crate) backlog: Option<Option<Vec<Arc<FeedEvent>>>>,
}

impl Start {
    /// The position of number `n` in this audience.
    pub(crate) fn position(&self, n: u64) -> Position {
        match self.epoch {
            None => Position::Generation(n),
            Some(_) => Position::Seq(n),
        }
    }

    /// The event id of number `n` in this audience: `<generation>`, `<epoch>.<seq>`.
    pub(crate) fn id(&self, n: u64) -> String {
        match &self.epoch {
            None => n.to_string(),
            Some(epoch) => format!("{epoch}.{n}"),
        }
    }
}

/// The change feed of one server: what it knows of every tool's name, and its
/// audiences — the operator's, and the views it follows — each with its last events
/// ([`RING`], [`VIEW_RING`]) and the channel its live streams read.
#[derive(Debug)]
pub struct ChangeFeed {
    names: Mutex<Names>,
    audiences: Mutex<HashMap<Viewer, Audience>>,
    pub(crate) streams: Arc<Semaphore>,
}

impl ChangeFeed {
    /// A feed of `catalog` as it is now, serving at most `streams` streams at once.
    pub(crate) fn new(catalog: &Catalog, streams: usize) -> ChangeFeed {
        let mut names = Names {
            generation: catalog.generation(),
            identity: catalog.identity(),
            ..Names::default()
        };
        let mut read: Vec<Read> = Vec::with_capacity(catalog.len());
        catalog.for_each_head(|head, disabled| {
            read.push((
                head.id,
                head.bundle_id,
                head.name.clone(),
                disabled.is_none(),
                head.digest,
            ));
        });
        for (id, k) in known(catalog, read) {
            names.add(id, k);
        }
        let operator = Audience::operator(names.generation, names.identity);
        ChangeFeed {
            names: Mutex::new(names),
            audiences: Mutex::new(HashMap::from([(Viewer::Operator, operator)])),
            streams: Arc::new(Semaphore::new(streams)),
        }
    }

    fn lock_names(&self) -> MutexGuard<'_, Names> {
        self.names.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_audiences(&self) -> MutexGuard<'_, HashMap<Viewer, Audience>> {
        self.audiences.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The generation and identity the feed is at.
    pub fn position(&self) -> (u64, Uuid) {
        let n = self.lock_names();
        (n.generation, n.identity)
    }

    /// A receiver of the operator's events to come.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<FeedEvent>> {
        let audiences = self.lock_audiences();
        match audiences.get(&Viewer::Operator) {
            Some(a) => a.tx.subscribe(),
            // The operator's audience is made with the feed and never forgotten.
            None => broadcast::channel(1).1,
        }
    }

    /// A receiver of the events of `viewer`'s audience to come (the operator's: every
    /// event, as [`ChangeFeed::subscribe`]); the feed follows a view while it lives.
    ///
    /// It may read the catalog (the view's identity, when the feed starts following the
    /// view): async code calls it through `spawn_blocking`.
    #[cfg(feature = "mcp")]
    pub(crate) fn listen(
        &self,
        catalog: &Catalog,
        viewer: &Viewer,
    ) -> broadcast::Receiver<Arc<FeedEvent>> {
        self.follow(catalog, viewer, None).rx
    }

    /// Subscribes to `viewer`'s audience, starting (or going on) following a view; with
    /// the client's `Last-Event-ID`, the events after it.
    ///
    /// It may read the catalog (see [`ChangeFeed::listen`]).
    pub(crate) fn follow(&self, catalog: &Catalog, viewer: &Viewer, last: Option<&str>) -> Start {
        let mut audiences = self.lock_audiences();
        forget_idle(&mut audiences);
        // A view's identity is read under the lock: the feed thread, which takes it to
        // list the views a change concerns, either sees this view and tells it the
        // change, or ran before, and then the catalog read here is already past the
        // change.
        let audience = audiences
            .entry(viewer.clone())
            .or_insert_with(|| Audience::view(catalog.view(viewer).identity()));
        audience.idle_since = None;
        // Subscribed before the ring is read: an event between the two is in both, and
        // is sent once.
        let rx = audience.tx.subscribe();
        let (number, identity) = match audience.epoch {
            // The operator's stream is where the feed's names are.
            None => self.position(),
            Some(_) => (audience.number, audience.identity),
        };
        let last = last.map(|l| audience.number_of(l));
        let backlog = match (&audience.epoch, last) {
            (_, None) => None,
            // An id that is not a generation is no id: the operator's stream starts anew.
            (None, Some(n)) => n.map(|n| audience.since(n, self.position().0)),
            // One of another epoch is a reset.
            (Some(_), Some(n)) => Some(n.and_then(|n| audience.since(n, audience.number))),
        };
        Start {
            rx,
            epoch: audience.epoch.clone(),
            number,
            identity,
            last: last.flatten(),
            backlog,
        }
    }

    /// The audiences, with their epochs (see [`forget_idle`]).
    fn audiences(&self) -> Vec<(Viewer, Option<Arc<str>>)> {
        let mut audiences = self.lock_audiences();
        forget_idle(&mut audiences);
        audiences
            .iter()
            .map(|(v, a)| (v.clone(), a.epoch.clone()))
            .collect()
    }

    /// Takes in a committed change of `catalog` (read now, after the change) and tells
    /// every audience; returns the operator's event, `None` when no name moved and no
    /// generation passed.
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
        // Listed before the catalog is read: a view followed from later on is read
        // after the change.
        let audiences = self.audiences();
        // The tools as they are now: one scan for the bundles' tools.
        let mut now: BTreeMap<Uuid, Option<Known>> = tools.iter().map(|t| (*t, None)).collect();
        let mut read: Vec<Read> = Vec::new();
        if !bundles.is_empty() {
            catalog.for_each_head(|head, disabled| {
                if bundles.contains(&head.bundle_id) || tools.contains(&head.id) {
                    read.push((
                        head.id,
                        head.bundle_id,
                        head.name.clone(),
                        disabled.is_none(),
                        head.digest,
                    ));
                }
            });
        } else {
            for id in &tools {
                if let Ok(head) = catalog.head(*id) {
                    let callable = head.is_callable();
                    read.push((head.id, head.bundle_id, head.name, callable, head.digest));
                }
            }
        }
        for (id, k) in known(catalog, read) {
            now.insert(id, Some(k));
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
        // Each tool that moved, and each name's counts before any of them moved.
        let mut moves: Vec<(Option<Known>, Option<Known>)> = Vec::new();
        let mut before: HashMap<String, Counts> = HashMap::new();
        for (id, after) in now {
            let was = names.tools.get(&id).cloned();
            if was == after {
                continue;
            }
            for k in was.iter().chain(after.iter()) {
                if !before.contains_key(&k.name) {
                    let counts = names.names.get(&k.name).cloned().unwrap_or_default();
                    before.insert(k.name.clone(), counts);
                }
            }
            names.remove(id);
            if let Some(a) = &after {
                names.add(id, a.clone());
            }
            moves.push((was, after));
        }
        let from = names.generation;
        // A change older than one already told (a feed made after the change was
        // queued finds nothing moved, and sends nothing).
        let late = change.generation <= from;
        names.generation = change.generation.max(names.generation);
        names.identity = change.identity;
        let generation = names.generation;
        let told: Vec<(Viewer, Option<Arc<str>>, Moved)> = audiences
            .into_iter()
            .map(|(v, epoch)| {
                let m = classify(&names, &moves, &before, &v);
                (v, epoch, m)
            })
            .filter(|(_, epoch, m)| !m.is_empty() || (epoch.is_none() && generation != from))
            .collect();
        drop(names);
        // Identities are read before the lock: it is not held over catalog reads here.
        let told: Vec<(Viewer, Option<Arc<str>>, Moved, Uuid)> = told
            .into_iter()
            .map(|(viewer, epoch, moved)| {
                let identity = match epoch {
                    None => change.identity,
                    Some(_) => catalog.view(&viewer).identity(),
                };
                (viewer, epoch, moved, identity)
            })
            .collect();
        let mut audiences = self.lock_audiences();
        let mut operator = None;
        for (viewer, epoch, moved, identity) in told {
            // Only to the audiences followed since before the change was read (a view
            // followed anew, of another epoch, read the catalog after it).
            let Some(a) = audiences.get_mut(&viewer).filter(|a| a.epoch == epoch) else {
                continue;
            };
            let event = a.tell(moved, identity, (from, generation, late));
            if epoch.is_none() {
                operator = event;
            }
        }
        operator
    }

    /// The operator's events after `generation` that the ring still holds, or `None`
    /// when it does not hold all of them (a gap: the client must re-read).
    #[cfg(test)]
    fn since(&self, generation: u64) -> Option<Vec<Arc<FeedEvent>>> {
        let (current, _) = self.position();
        let audiences = self.lock_audiences();
        audiences.get(&Viewer::Operator)?.since(generation, current)
    }
}

/// Stops following the views nobody has listened to for [`LINGER`]; the operator's
/// audience stays.
fn forget_idle(audiences: &mut HashMap<Viewer, Audience>) {
    let now = Instant::now();
    audiences.retain(|_, a| {
        if a.epoch.is_none() || a.tx.receiver_count() > 0 {
            a.idle_since = None;
            return true;
        }
        now.duration_since(*a.idle_since.get_or_insert(now)) < LINGER
    });
}

/// The names `moves` moved in `viewer`'s view: a tool outside the view is no tool, a
/// name is counted among the view's tools only.
fn classify(
    names: &Names,
    moves: &[(Option<Known>, Option<Known>)],
    before: &HashMap<String, Counts>,
    viewer: &Viewer,
) -> Moved {
    // Per name: whether what it may stand for moved (a callable tool of it changed, or
    // one came or went: a new version takes the name over).
    let mut touched: BTreeMap<&str, bool> = BTreeMap::new();
    for (was, now) in moves {
        let (was, now) = (seen(was.as_ref(), viewer), seen(now.as_ref(), viewer));
        let content = match (was, now) {
            (Some(b), Some(a)) => b.digest != a.digest && b.callable && a.callable,
            (None, Some(k)) | (Some(k), None) => k.callable,
            (None, None) => false,
        };
        for k in was.into_iter().chain(now) {
            *touched.entry(k.name.as_str()).or_default() |= content;
        }
    }
    let mut moved = Moved::default();
    for (name, content) in touched {
        let b = count_in(before.get(name), viewer);
        let a = count_in(names.names.get(name), viewer);
        let name = name.to_owned();
        match (b.held > 0, a.held > 0) {
            (false, true) => moved.added.push(name),
            (true, false) => moved.removed.push(name),
            (false, false) => {}
            (true, true) => match (b.callable > 0, a.callable > 0) {
                (false, true) => moved.enabled.push(name),
                (true, false) => moved.disabled.push(name),
                (true, true) if content => moved.changed.push(name),
                _ => {}
            },
        }
    }
    moved
}

/// `k` when `viewer` sees it.
fn seen<'a>(k: Option<&'a Known>, viewer: &Viewer) -> Option<&'a Known> {
    k.filter(|k| k.scope.seen_by(viewer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_follow_the_catalogs_rule() {
        let tenant = Uuid::now_v7();
        let other = Uuid::now_v7();
        let catalog_dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(catalog_dir.path(), &[]).unwrap();
        let mut bundle = catalog
            .put_bundle(Uuid::now_v7(), &toolscout_catalog::BundlePut::new("b"))
            .unwrap();
        let viewers = [
            Viewer::Operator,
            Viewer::Public,
            Viewer::Tenant(tenant),
            Viewer::Tenant(other),
        ];
        for (owner, shared, built_in) in [
            (None, false, false),
            (None, true, false),
            (Some(tenant), false, false),
            (Some(tenant), true, false),
            (None, false, true),
        ] {
            bundle.owner = owner;
            bundle.shared = shared;
            bundle.is_built_in = built_in;
            for viewer in &viewers {
                assert_eq!(
                    Visibility::of(&bundle).seen_by(viewer),
                    viewer.sees(&bundle),
                    "{bundle:?} for {viewer:?}"
                );
                let scope = toolscout_catalog::scope_of(&bundle);
                let by_scopes = viewer.scopes().is_none_or(|s| s.contains(&scope));
                assert_eq!(Visibility::of(&bundle).seen_by(viewer), by_scopes);
            }
        }
    }

    /// Issue #62: a change told after a later one named tools no event in order could
    /// tell; the operator's stream dropped it as already sent. It is a reset now, and
    /// no client resumes across it.
    #[test]
    fn a_change_told_after_a_later_one_is_a_reset() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(dir.path(), &[]).unwrap();
        let feed = ChangeFeed::new(&catalog, 4);
        let bundle = Uuid::now_v7();
        catalog
            .put_bundle(bundle, &toolscout_catalog::BundlePut::new("b"))
            .unwrap();
        let start = catalog.generation();
        let put = |name: &str| {
            let spec = toolscout_spec::ToolSpec::builder(name, "A tool")
                .build()
                .unwrap();
            let tool = catalog
                .put_tool(
                    bundle,
                    &name.replace('_', "-"),
                    "1",
                    &toolscout_catalog::ToolPut::spec_only(spec),
                )
                .unwrap();
            CatalogChange {
                events: vec![CatalogEvent::ToolPut {
                    tool: tool.id,
                    bundle,
                }],
                identity: catalog.identity(),
                generation: catalog.generation(),
            }
        };
        let (first, second) = (put("first_tool"), put("second_tool"));
        let mut rx = feed.subscribe();
        let told = feed.apply(&catalog, &second).unwrap();
        assert!(!told.reset);
        assert_eq!(told.added, ["second_tool"]);
        let late = feed.apply(&catalog, &first).unwrap();
        assert!(late.reset, "{late:?}");
        assert_eq!(late.added, ["first_tool"]);
        assert_eq!(late.number(), second.generation);
        assert!(rx.try_recv().is_ok_and(|e| !e.reset));
        assert!(rx.try_recv().is_ok_and(|e| e.reset));
        // A client anywhere before the reset re-reads; one past it resumes.
        assert!(feed.since(start).is_none());
        assert!(feed.since(second.generation).is_none());
        let third = put("third_tool");
        assert!(!feed.apply(&catalog, &third).unwrap().reset);
        assert_eq!(feed.since(third.generation).map(|e| e.len()), Some(0));
    }

    #[test]
    fn a_view_resumes_only_within_its_epoch_and_ring() {
        let mut a = Audience::view(Uuid::nil());
        for _ in 1..=(VIEW_RING as u64 + 10) {
            let moved = Moved {
                added: vec!["t".to_owned()],
                ..Moved::default()
            };
            assert!(a.tell(moved, Uuid::nil(), (0, 0, false)).is_some());
        }
        let epoch = a.epoch.clone().unwrap();
        let at = |seq: u64| format!("{epoch}.{seq}");
        let last = a.number;
        let a = |id: &str| a.number_of(id).and_then(|n| a.since(n, last));
        assert_eq!(a(&at(last)).unwrap().len(), 0);
        assert_eq!(a(&at(last - 3)).unwrap().len(), 3);
        assert_eq!(a(&at(last - VIEW_RING as u64)).unwrap().len(), VIEW_RING);
        assert!(a(&at(last - VIEW_RING as u64 - 1)).is_none());
        assert!(a(&at(last + 1)).is_none());
        assert!(a(&format!("0123456789abcdef.{last}")).is_none());
        assert!(a(&last.to_string()).is_none());
        assert!(a("").is_none());
    }
}
