//! [`Catalog`]: opening, reading, listing, subscribing and reloading.
//! The writes are in `ops.rs`, import and export in `archive.rs`.

pub(crate) mod add;
pub(crate) mod archive;
pub(crate) mod operator;
pub(crate) mod ops;
mod recipes;
mod tenants;
pub(crate) mod view;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use uuid::Uuid;

use crate::events::{CatalogChange, CatalogEvent, Subscribers, Subscription};
use crate::model::{
    Bundle, BundleQuery, DEFAULT_LISTING_PAGE_SIZE, DisabledReason, LoadIssue, Page, Tool,
    ToolHead, ToolQuery,
};
use crate::state::State;
use crate::state::snapshot::Snapshot;
use crate::state::visible::{holders_where, sorted_holders};
use crate::store::{CatalogStore, FileStore, Known, StoreRead, StoreWrite};
use crate::viewer::Viewer;
use crate::{Error, Result};

/// How often [`Catalog::follow_once`] asks the store for its generation even without a
/// sign of a change.
pub const FOLLOW_CHECK: std::time::Duration = std::time::Duration::from_secs(5);

/// How to open a [`Catalog`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct CatalogOptions {
    natives: BTreeSet<String>,
    pub(crate) builtins: bool,
    /// The database of a PostgreSQL store; `None` for the flat files.
    #[cfg(feature = "postgres")]
    postgres: Option<crate::store::postgres::DatabaseUrl>,
}

impl Default for CatalogOptions {
    fn default() -> Self {
        CatalogOptions {
            natives: BTreeSet::new(),
            builtins: true,
            #[cfg(feature = "postgres")]
            postgres: None,
        }
    }
}

impl CatalogOptions {
    /// The native functions this binary registers. A native tool whose function is not
    /// among them is listed as disabled ([`crate::DisabledReason::NativeNotRegistered`]).
    pub fn with_natives(mut self, natives: &[&str]) -> Self {
        self.natives = natives.iter().map(|n| (*n).to_owned()).collect();
        self
    }

    /// Whether to serve the built-in bundles (on by default). Without them, no tool name
    /// or bundle slug is reserved for them (see [`Catalog::check_tool_name`]).
    pub fn with_builtins(mut self, builtins: bool) -> Self {
        self.builtins = builtins;
        self
    }

    /// Keeps the catalog in the PostgreSQL database at `url`
    /// (`postgres://user:password@host:port/database`) instead of flat files: every
    /// process that opens the same database shares one catalog. The directory given to
    /// [`Catalog::open_with`] then holds only what stays with this process (the heads
    /// snapshot). The schema is created or brought up to date at open.
    ///
    /// The URL is never shown: `Debug` and errors name the database without its password.
    #[cfg(feature = "postgres")]
    pub fn with_postgres(mut self, url: impl Into<String>) -> Self {
        self.postgres = Some(crate::store::postgres::DatabaseUrl(url.into()));
        self
    }
}

/// The tool catalog: bundles and tools stored as flat-file JSON under one directory,
/// plus the built-in bundles.
///
/// A `Catalog` is `Send + Sync`; share it with an `Arc`. Every write takes an exclusive
/// file lock on the directory, first reads what other processes wrote since, checks,
/// writes atomically, and then tells the subscribers. Reads are served from memory;
/// [`Catalog::reload`] picks up other processes' writes.
#[derive(Debug)]
pub struct Catalog {
    pub(crate) store: Arc<dyn CatalogStore>,
    pub(crate) options: CatalogOptions,
    pub(crate) state: Mutex<State>,
    pub(crate) subscribers: Subscribers,
    /// When [`Catalog::follow_once`] last asked the store itself.
    checked: Mutex<std::time::Instant>,
    /// Held by a reload from before it opens its read of the store, and by a write from
    /// before it takes the store's write lock: one of each at a time in this process,
    /// so that they hold one database connection each, and never every connection of
    /// the pool while a tool is read under the state's lock.
    reloading: Mutex<()>,
    writing: Mutex<()>,
    /// Held while recorded calls are added to the store, so that two flushes never
    /// count the same calls.
    pub(crate) flushing: Mutex<()>,
    /// The directory of a [`Catalog::temporary`] catalog, removed on drop (last, after
    /// the usage counts are flushed).
    scratch: Option<tempfile::TempDir>,
}

/// One write in progress: the state under both locks, and the events it produced.
pub(crate) struct Tx<'a> {
    pub(crate) store: &'a mut dyn StoreWrite,
    pub(crate) state: &'a mut State,
    pub(crate) events: Vec<CatalogEvent>,
    /// Who writes: a tenant writes only its own bundles, within its limits.
    pub(crate) writer: &'a Viewer,
    bumped: bool,
}

impl Tx<'_> {
    /// Moves the generation on before the first file changes, so that a writer killed
    /// half-way still makes every other process read the directory again.
    pub(crate) fn begin(&mut self) -> Result<()> {
        if !self.bumped {
            let (stamp, counter) = self.store.bump(self.state.stamp.as_deref())?;
            self.state.stamp = Some(stamp);
            self.state.generation = counter;
            self.bumped = true;
        }
        Ok(())
    }
}

impl Catalog {
    /// Opens (creating when missing) the catalog in `root`, for a binary that registers
    /// the native functions `natives`.
    pub fn open(root: impl AsRef<Path>, natives: &[&str]) -> Result<Catalog> {
        Catalog::open_with(root, CatalogOptions::default().with_natives(natives))
    }

    /// Opens the catalog in `root` with `options`.
    ///
    /// Files that cannot be used are skipped and reported by [`Catalog::issues`].
    pub fn open_with(root: impl AsRef<Path>, options: CatalogOptions) -> Result<Catalog> {
        let store = open_store(root.as_ref(), &options)?;
        let state = {
            let mut read = store.read()?;
            let snapshot = Snapshot::read(store.local_dir());
            let stamp = read.stamp()?;
            match snapshot {
                // The heads of the current generation: no tool is looked at.
                Some(snap) if snap.is_current(&*store, stamp.as_ref()) => {
                    let meta = read.load(&Known::default(), Some(BTreeMap::new()))?;
                    State::from_snapshot(&store, meta, snap, &options.natives, options.builtins)
                }
                snapshot => {
                    // Only the tools that changed since the snapshot are read.
                    let previous = snapshot.map(|snap| State::of_snapshot(&store, snap));
                    let known = previous.as_ref().map(State::known).unwrap_or_default();
                    let loaded = read.load(&known, None)?;
                    let mut state = State::build(
                        &store,
                        loaded,
                        &options.natives,
                        options.builtins,
                        previous.as_ref(),
                    );
                    write_snapshot(&*store, &mut state);
                    state
                }
            }
        };
        Ok(Catalog {
            store,
            options,
            state: Mutex::new(state),
            subscribers: Subscribers::default(),
            flushing: Mutex::new(()),
            checked: Mutex::new(std::time::Instant::now()),
            reloading: Mutex::new(()),
            writing: Mutex::new(()),
            scratch: None,
        })
    }

    /// A catalog of its own, in a private directory that is removed when the catalog is
    /// dropped: for a program that builds its tools at start and keeps nothing between
    /// runs. It behaves in every way like a catalog opened with
    /// [`Catalog::open_with`]; no other process knows its directory.
    ///
    /// **Rationale:** the flat files are the catalog's truth (locks, snapshots and
    /// atomic renames are built on them), so a second, in-memory store would be a second
    /// catalog to keep correct; a scratch directory gives the same behaviour for the cost
    /// of a few small files.
    ///
    /// ```
    /// use toolscout_catalog::{Catalog, CatalogOptions};
    ///
    /// let catalog = Catalog::temporary(CatalogOptions::default().with_builtins(false))?;
    /// let root = catalog.root().to_owned();
    /// assert!(catalog.is_empty() && root.exists());
    /// drop(catalog);
    /// assert!(!root.exists());
    /// # Ok::<(), toolscout_catalog::Error>(())
    /// ```
    pub fn temporary(options: CatalogOptions) -> Result<Catalog> {
        let dir = tempfile::Builder::new()
            .prefix("toolscout-catalog-")
            .tempdir()
            .map_err(|e| Error::io(std::env::temp_dir(), e))?;
        let mut catalog = Catalog::open_with(dir.path(), options)?;
        catalog.scratch = Some(dir);
        Ok(catalog)
    }

    /// The catalog directory.
    pub fn root(&self) -> &Path {
        self.store.local_dir()
    }

    pub(crate) fn lock_state(&self) -> MutexGuard<'_, State> {
        // A panic in a subscriber never happens under this lock; the state stays usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The tool-set identity of the tools that can be called now (see
    /// [`toolscout_spec::identity::toolset_id`]): it changes whenever a tool is added,
    /// removed, changed, enabled or disabled.
    pub fn identity(&self) -> Uuid {
        self.lock_state().identity()
    }

    /// A string that names what the catalog holds now (its tools' heads, bundles, and
    /// which tools can be called), or `None` when that cannot be told cheaply.
    ///
    /// Two catalogs (in one process or several, at one time or another) with the same
    /// token hold the same heads: a derived store, such as a search index, that records
    /// the token it was brought in line with is still in line while the token is the
    /// same. The token moves with every committed change, whichever process made it.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let catalog = toolscout_catalog::Catalog::open(dir.path(), &[])?;
    /// let again = toolscout_catalog::Catalog::open(dir.path(), &[])?;
    /// assert_eq!(catalog.content_token(), again.content_token());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn content_token(&self) -> Option<String> {
        self.lock_state().token.clone()
    }

    /// How many writes the directory has seen: it grows with every committed change,
    /// whichever process made it.
    pub fn generation(&self) -> u64 {
        self.lock_state().generation
    }

    /// Files found at the last load that could not be used; they were skipped and left
    /// as they are.
    pub fn issues(&self) -> Vec<LoadIssue> {
        self.lock_state().issues.clone()
    }

    /// Calls `f` after every committed change, with what changed and the new identity.
    ///
    /// Changes come in the order the catalog took them in (generation order), one at a
    /// time, each once, whichever thread made them; changes made while the subscribers
    /// heard an earlier one come together, as one change (every event in order, the
    /// identity and generation of the last), as the changes one reload reads do. `f` runs
    /// on the thread that made the change, or on one that was telling an earlier change
    /// when it was made, after the
    /// catalog's locks are released, so it may read (and write) the catalog. A panic in
    /// `f` is caught and stops neither the other subscribers nor the changes after it.
    /// To receive changes on another thread, send them down a channel:
    /// `catalog.subscribe(move |c| { let _ = tx.send(c.clone()); })`.
    pub fn subscribe(&self, f: impl Fn(&CatalogChange) + Send + Sync + 'static) -> Subscription {
        self.subscribers.add(std::sync::Arc::new(f))
    }

    /// Stops a subscription; returns whether it was there.
    pub fn unsubscribe(&self, subscription: Subscription) -> bool {
        self.subscribers.remove(subscription)
    }

    /// Reads what other processes wrote since the last read, if anything (a cheap check
    /// of the generation file first). Subscribers hear of each change. Returns whether
    /// anything changed.
    pub fn reload(&self) -> Result<bool> {
        self.reload_inner(false)
    }

    /// [`Catalog::reload`], unless the store tells cheaply that nothing moved: on
    /// PostgreSQL, while the store's `LISTEN` connection is up and has heard of no later
    /// generation, this costs no round trip (other processes' writes then arrive within
    /// milliseconds, as their notices do); on flat files it is `reload`. For a server
    /// that catches up before every request.
    pub fn catch_up(&self) -> Result<bool> {
        {
            let state = self.lock_state();
            if state.stamp.is_some() && !self.store.may_have_moved(state.generation) {
                return Ok(false);
            }
        }
        self.reload_inner(false)
    }

    /// Waits up to `timeout` for another process's write and reads it in (subscribers
    /// hear of it); at least every [`FOLLOW_CHECK`] it asks the store itself, so that a
    /// notice missed (a dropped connection, a restarted database) is caught. Returns
    /// whether anything changed. A thread that calls it in a loop keeps the catalog in
    /// step with every other process without waiting for a request.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// use toolscout_catalog::{BundlePut, Catalog, CatalogOptions};
    /// let options = || CatalogOptions::default().with_builtins(false);
    /// let a = Catalog::open_with(dir.path(), options())?;
    /// let b = Catalog::open_with(dir.path(), options())?;
    /// let id = uuid::Uuid::now_v7();
    /// a.put_bundle(id, &BundlePut::new("sea"))?;
    /// assert!(b.follow_once(std::time::Duration::from_secs(5))?);
    /// assert!(b.bundle(id).is_ok());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn follow_once(&self, timeout: std::time::Duration) -> Result<bool> {
        let (stamp, generation) = {
            let state = self.lock_state();
            (state.stamp.clone(), state.generation)
        };
        let signalled = self
            .store
            .wait_for_change(stamp.as_deref(), generation, timeout);
        let due = {
            let mut last = self.checked.lock().unwrap_or_else(|e| e.into_inner());
            if signalled || last.elapsed() >= FOLLOW_CHECK {
                *last = std::time::Instant::now();
                true
            } else {
                false
            }
        };
        if due {
            self.reload_inner(false)
        } else {
            Ok(false)
        }
    }

    /// Reads the whole directory again, even if no writer announced a change (for files
    /// edited by hand).
    pub fn rescan(&self) -> Result<bool> {
        self.reload_inner(true)
    }

    fn reload_inner(&self, force: bool) -> Result<bool> {
        let one = self.reloading.lock().unwrap_or_else(|e| e.into_inner());
        // The store's lock first, then the in-memory state: a process that waits for
        // another's write must not hold the state, or every read here waits with it.
        let mut read = self.store.read()?;
        let mut state = self.lock_state();
        let events = self.refresh(&mut *read, &mut state, force)?;
        drop(read);
        let changed = !events.is_empty();
        // A subscriber may reload or write itself.
        drop(one);
        self.announce(state, events);
        Ok(changed)
    }

    /// Reads the store again if its generation moved (or `force`); returns the events
    /// that bring this process up to date. Call within a read or a write of the store.
    fn refresh<R: StoreRead + ?Sized>(
        &self,
        read: &mut R,
        state: &mut State,
        force: bool,
    ) -> Result<Vec<CatalogEvent>> {
        let stamp = read.stamp()?;
        if !force && stamp == state.stamp {
            return Ok(Vec::new());
        }
        let known = if force {
            Known::default()
        } else {
            state.known()
        };
        let loaded = read.load(&known, None)?;
        let mut new = State::build(
            &self.store,
            loaded,
            &self.options.natives,
            self.options.builtins,
            Some(state),
        );
        new.pending = std::mem::take(&mut state.pending);
        new.pending_since = state.pending_since.take();
        let events = state.diff(&new);
        *state = new;
        write_snapshot(&*self.store, state);
        Ok(events)
    }

    /// Runs one write under both locks, after catching up with other processes, and
    /// tells the subscribers once it is committed.
    pub(crate) fn write<R>(&self, op: impl FnOnce(&mut Tx<'_>) -> Result<R>) -> Result<R> {
        self.write_as(&Viewer::Operator, op)
    }

    /// [`Catalog::write`] by `writer` ([`Tx::writer`]).
    pub(crate) fn write_as<R>(
        &self,
        writer: &Viewer,
        op: impl FnOnce(&mut Tx<'_>) -> Result<R>,
    ) -> Result<R> {
        let one = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        // The store's lock first (see `reload_inner`): the locks are always taken in this
        // order, and no one waits for the store's lock while holding the state.
        let mut write = self.store.write()?;
        let mut state = self.lock_state();
        let mut events = self.refresh(&mut *write, &mut state, false)?;
        // Until the write is known to have left the state as a snapshot holds it.
        let token = state.token.take();
        let generation_before = state.generation;
        let mut tx = Tx {
            store: &mut *write,
            state: &mut state,
            events: Vec::new(),
            writer,
            bumped: false,
        };
        let mut result = op(&mut tx);
        let (bumped, tx_events) = (tx.bumped, tx.events);
        if result.is_ok() {
            if bumped {
                // Still under the store's lock, as every snapshot is written.
                write_snapshot(&*self.store, &mut state);
            }
            let generation = bumped.then_some(state.generation);
            if let Err(e) = write.commit(generation, &tx_events) {
                result = Err(e);
            }
        } else {
            drop(write);
        }
        if result.is_err() && bumped {
            // The store may be half changed: read it again next time.
            state.stamp = None;
            state.token = None;
            if !self.store.steps_are_durable() {
                // Nothing was written, but the state took in what the write did: read
                // every tool again (a rolled-back generation is used again).
                state.forget_keys();
                state.generation = generation_before;
            }
        } else if result.is_ok() && !bumped {
            // Nothing was written.
            state.token = token;
        }
        events.extend(tx_events);
        // A subscriber may write itself.
        drop(one);
        self.announce(state, events);
        result
    }

    /// Tells the subscribers of `events`, which brought `state` to what it is: queued
    /// under the state's lock, so that changes are told in the order the state took them
    /// in (generation order, whichever thread made them), then told once it is released.
    fn announce(&self, mut state: MutexGuard<'_, State>, events: Vec<CatalogEvent>) {
        if events.is_empty() {
            return;
        }
        state.changed();
        if !self.subscribers.is_empty() {
            self.subscribers.queue(CatalogChange {
                events,
                identity: state.identity(),
                generation: state.generation,
            });
        }
        drop(state);
        self.subscribers.deliver();
    }

    /// Waits up to `timeout` until every change this process took in before the call
    /// (its own writes, and other processes' it read) has reached every subscriber;
    /// returns whether it has.
    ///
    /// A write or a reload returns once its change is told, unless another thread was
    /// telling an earlier one at the time: that thread tells it next, in order. A reader
    /// of something a subscriber keeps (a search index fed by the catalog's changes)
    /// settles first to see at least what the catalog holds when it asks. Called from
    /// within a subscriber it returns `false` at once.
    pub fn settle(&self, timeout: std::time::Duration) -> bool {
        self.subscribers.settle(timeout)
    }

    /// The bundle with this id.
    pub fn bundle(&self, id: Uuid) -> Result<Bundle> {
        self.lock_state()
            .bundles
            .get(&id)
            .cloned()
            .ok_or(Error::BundleNotFound { bundle: id })
    }

    /// One page of bundles, ordered by id.
    pub fn list_bundles(&self, query: &BundleQuery) -> Result<Page<Bundle>> {
        self.list_bundles_where(query, |_| true)
    }

    /// [`Catalog::list_bundles`] among the bundles `keep` keeps.
    pub(crate) fn list_bundles_where(
        &self,
        query: &BundleQuery,
        keep: impl Fn(&Bundle) -> bool,
    ) -> Result<Page<Bundle>> {
        let after = parse_token(query.page_token.as_deref())?;
        let state = self.lock_state();
        let items = state
            .bundles
            .range((bound(after), Bound::Unbounded))
            .map(|(_, b)| b)
            .filter(|b| keep(b))
            .filter(|b| query.bundle_ids.is_empty() || query.bundle_ids.contains(&b.id))
            .filter(|b| {
                if b.soft_deleted_at.is_some() {
                    query.include_deleted
                } else {
                    b.is_enabled || query.include_disabled || query.include_deleted
                }
            })
            .cloned();
        Ok(paginate(items, query.page_size, |b| b.id))
    }

    /// The tool with this slug and version in this bundle.
    pub fn get_tool(&self, bundle: Uuid, slug: &str, version: &str) -> Result<Tool> {
        let state = self.lock_state();
        if !state.bundles.contains_key(&bundle) {
            return Err(Error::BundleNotFound { bundle });
        }
        let id = state
            .find(bundle, slug, version)
            .ok_or_else(|| Error::ToolNotFound {
                bundle,
                slug: slug.to_owned(),
                version: version.to_owned(),
            })?;
        let raw = state
            .tools
            .get(&id)
            .ok_or(Error::ToolIdNotFound { tool: id })?;
        state.view(raw)
    }

    /// The tool with this id, whole: a stored tool is read from its file (unless it was
    /// read lately).
    pub fn tool(&self, id: Uuid) -> Result<Tool> {
        let state = self.lock_state();
        let raw = state
            .tools
            .get(&id)
            .ok_or(Error::ToolIdNotFound { tool: id })?;
        state.view(raw)
    }

    /// The tools with these ids, whole, in the order given: [`Catalog::tool`] of each,
    /// with the stored ones read together (one round trip on PostgreSQL, where reading
    /// them one at a time costs one each). Ids the catalog does not hold, and tools whose
    /// definition is gone from the store (another process deleted them: its change
    /// follows), are left out.
    ///
    /// # Errors
    ///
    /// The store could not be read (a database that does not answer): nothing is
    /// returned rather than a part, so that a caller never takes a failed read for tools
    /// that do not exist.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let catalog = toolscout_catalog::Catalog::open(dir.path(), &[])?;
    /// let ids: Vec<_> = catalog.heads().iter().map(|h| h.id).collect();
    /// assert_eq!(catalog.tools_of(&ids)?, catalog.tools());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn tools_of(&self, ids: &[Uuid]) -> Result<Vec<Tool>> {
        let state = self.lock_state();
        let raws: Vec<&crate::state::RawTool> = ids
            .iter()
            .filter_map(|id| state.tools.get(id).map(|b| &**b))
            .collect();
        state.view_many(&raws)
    }

    /// The head of the tool with this id: what the catalog keeps in memory of it.
    pub fn head(&self, id: Uuid) -> Result<ToolHead> {
        let state = self.lock_state();
        let raw = state
            .tools
            .get(&id)
            .ok_or(Error::ToolIdNotFound { tool: id })?;
        Ok(state.head(raw))
    }

    /// Every tool's head, callable or not, ordered by id: names, summaries and flags
    /// without reading a file. Prefer it to [`Catalog::tools`] for a large catalog.
    pub fn heads(&self) -> Vec<ToolHead> {
        let state = self.lock_state();
        state.tools.values().map(|raw| state.head(raw)).collect()
    }

    /// Calls `f` with every tool's head and why it cannot be called now (`None` when it
    /// can: the head's own `disabled_reason` may be older), in id order, without copying
    /// the heads: for a scan of a large catalog that keeps little of each (a name, an id).
    ///
    /// `f` runs with the catalog's state locked: it must not call the catalog.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let catalog = toolscout_catalog::Catalog::open(dir.path(), &[])?;
    /// let mut callable = 0;
    /// catalog.for_each_head(|_, disabled| callable += usize::from(disabled.is_none()));
    /// assert_eq!(callable, catalog.heads().iter().filter(|h| h.is_callable()).count());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_each_head(&self, mut f: impl FnMut(&ToolHead, Option<&DisabledReason>)) {
        let state = self.lock_state();
        for raw in state.tools.values() {
            f(&raw.head, state.disabled_reason(raw).as_ref());
        }
    }

    /// One tool per name, disabled ones too, as the operator's view resolves bare names
    /// ([`CatalogView::name_holders`](crate::CatalogView::name_holders): the operator's
    /// own, then shared, then built-in tools; a tenant's unshared tool holds no name for
    /// the operator), with whether it can be called; in id order. Every name is looked
    /// at in place, under one lock: nothing is copied but the ids.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// let catalog = toolscout_catalog::Catalog::open(dir.path(), &["read_file"])?;
    /// let holders = catalog.name_holders();
    /// let names: std::collections::BTreeSet<String> =
    ///     catalog.heads().into_iter().map(|h| h.name).collect();
    /// assert_eq!(holders.len(), names.len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn name_holders(&self) -> Vec<(Uuid, bool)> {
        // The operator's view: the precedence of owners is the view's (issue 61).
        self.view(&crate::Viewer::Operator).name_holders()
    }

    /// [`name_holders`](Self::name_holders) among the tools of one bundle: each name as it
    /// stands in the bundle, also where another bundle's tool holds it in the catalog.
    pub fn bundle_name_holders(&self, bundle: Uuid) -> Vec<(Uuid, bool)> {
        sorted_holders(holders_where(&self.lock_state(), |raw| {
            raw.head.bundle_id == bundle
        }))
    }

    /// The tool `name` stands for, as [`name_holders`](Self::name_holders) picks it, or
    /// the tool a qualified name `[owner:]bundle/tool` names
    /// ([`CatalogView::resolve`](crate::CatalogView::resolve)), with whether it can be
    /// called; `None` when it stands for none. Only the tools of that name are weighed.
    pub fn name_holder(&self, name: &str) -> Option<(Uuid, bool)> {
        // The operator's view, qualified names included (issue 61).
        self.view(&crate::Viewer::Operator).resolve(name)
    }

    /// How many tools the catalog holds, callable or not.
    pub fn len(&self) -> usize {
        self.lock_state().tools.len()
    }

    /// Whether the catalog holds no tool at all (not even built-ins).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every tool, callable or not, ordered by id, whole.
    ///
    /// This reads every stored tool's file: a large catalog is better walked with
    /// [`Catalog::heads`] and [`Catalog::tool`]. A tool whose file cannot be read now
    /// (another process just deleted it) is left out.
    pub fn tools(&self) -> Vec<Tool> {
        let state = self.lock_state();
        state
            .tools
            .values()
            .filter_map(|raw| state.view(raw).ok())
            .collect()
    }

    /// One page of tools, ordered by id (so by creation time; built-ins first).
    ///
    /// A tool is listed when it has every tag of `query.tags`, is in one of
    /// `query.bundle_ids` (when given), and can be called, unless
    /// `query.include_disabled`.
    pub fn list_tools(&self, query: &ToolQuery) -> Result<Page<Tool>> {
        self.list_tools_where(query, |_| true)
    }

    /// [`Catalog::list_tools`] among the tools of the bundles `keep` keeps.
    pub(crate) fn list_tools_where(
        &self,
        query: &ToolQuery,
        keep: impl Fn(&Bundle) -> bool,
    ) -> Result<Page<Tool>> {
        let after = parse_token(query.page_token.as_deref())?;
        let state = self.lock_state();
        let items = state
            .tools
            .range((bound(after), Bound::Unbounded))
            .map(|(_, raw)| raw)
            .filter(|raw| state.bundles.get(&raw.head.bundle_id).is_some_and(&keep))
            .filter(|raw| {
                query.bundle_ids.is_empty() || query.bundle_ids.contains(&raw.head.bundle_id)
            })
            .filter(|raw| query.tags.iter().all(|t| raw.head.tags.contains(t)))
            .filter(|raw| query.include_disabled || state.disabled_reason(raw).is_none())
            // A file another process just deleted is left out.
            .filter_map(|raw| state.view(raw).ok());
        Ok(paginate(items, query.page_size, |t| t.id))
    }
}

impl Drop for Catalog {
    fn drop(&mut self) {
        // Best effort: a usage count is not worth a panic, and Drop cannot return it.
        let _ = self.flush_usage();
    }
}

/// Writes the heads snapshot of `state` into the store's local directory; call within a
/// read or a write of the store. Best effort: without it the next open looks at every
/// stored tool again (and reads only the changed ones).
///
/// Sets the state's [`token`](State::token): a state that could not be written has none.
fn write_snapshot(store: &dyn CatalogStore, state: &mut State) {
    state.token = None;
    if let Some(snap) = Snapshot::of(state, store) {
        match snap.write(store.local_dir()) {
            Ok(sum) => state.token = state.token_at(sum),
            Err(_) => {
                let _ = std::fs::remove_file(store.local_dir().join(crate::state::snapshot::FILE));
            }
        }
    }
}

/// The store `options` name, with `root` as its directory (or its local one).
fn open_store(root: &Path, options: &CatalogOptions) -> Result<Arc<dyn CatalogStore>> {
    #[cfg(feature = "postgres")]
    if let Some(url) = &options.postgres {
        return Ok(Arc::new(crate::store::postgres::PgStore::open(
            &url.0, root,
        )?));
    }
    let _ = options;
    Ok(Arc::new(FileStore::open(root)?))
}

fn bound(after: Option<Uuid>) -> Bound<Uuid> {
    match after {
        Some(id) => Bound::Excluded(id),
        None => Bound::Unbounded,
    }
}

fn parse_token(token: Option<&str>) -> Result<Option<Uuid>> {
    match token {
        None | Some("") => Ok(None),
        Some(t) => Uuid::try_parse(t).map(Some).map_err(|_| Error::PageToken {
            token: t.to_owned(),
        }),
    }
}

fn paginate<T>(items: impl Iterator<Item = T>, size: usize, id: impl Fn(&T) -> Uuid) -> Page<T> {
    let size = if size == 0 {
        DEFAULT_LISTING_PAGE_SIZE
    } else {
        size
    };
    let mut items: Vec<T> = items.take(size.saturating_add(1)).collect();
    let next_page_token = if items.len() > size {
        items.truncate(size);
        items.last().map(|t| id(t).simple().to_string())
    } else {
        None
    };
    Page {
        items,
        next_page_token,
    }
}
