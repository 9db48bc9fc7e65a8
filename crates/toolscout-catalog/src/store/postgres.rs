//! The PostgreSQL store ([`PgStore`], feature `postgres`): one catalog shared by every
//! process (and machine) that opens the same database.
//!
//! ```text
//! catalog_meta   one row: generation, stamp, the built-ins' enabled flags (overlay)
//! bundles        one row a bundle
//! tools          one row a tool version: its tool.json (`json`, kept as written) and
//!                its head's columns, and the generation that last wrote it
//! usage          call counts, summed across processes
//! tenants        one row a tenant: its record (limits, token digests) as `json`
//! toolscout_schema_history   the migrations applied (refinery)
//! ```
//!
//! **Guarantees, as the flat files give them.** A write is one transaction at
//! `READ COMMITTED` that first takes a transaction-level advisory lock (the file lock's
//! counterpart: writes of every process are serialised, and a writer that dies releases
//! it), reads what others committed, moves the generation on (`UPDATE … RETURNING`),
//! writes, sends `NOTIFY toolscout_catalog, '<generation>'` and commits: other processes
//! see all of it or none, and the notice only for a committed write. A read is a
//! `REPEATABLE READ READ ONLY` transaction: one consistent state, never waiting for a
//! writer. A load reads every row's id and generation and the heads of only the rows
//! that changed; a tool's whole definition is read when it is asked for. Usage counts
//! are added by one upsert, outside the write lock.
//!
//! **Client.** `tokio-postgres`, whose connections run on a runtime of the store's own
//! (one worker thread); the catalog, which is synchronous, waits for each round trip on
//! the calling thread, so any thread may call it, a runtime's worker included. Every
//! round trip is bounded in time. Connections are kept in a small pool; one found closed
//! (a restarted server) is replaced by a new one.
//!
//! **Migrations** (`migrations/V*.sql`, refinery) run at open, under a session advisory
//! lock, so replicas starting together migrate once. A database whose schema is newer
//! than this binary knows is refused ([`Error::SchemaTooNew`]).

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use chrono::{DateTime, Utc};
use futures_util::future::{Either, select, try_join_all};
use tokio_postgres::config::Host;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Config, NoTls, Row};
use toolscout_spec::adapters::tool_file::{ToolFile, ToolType};
use uuid::Uuid;

use super::{
    BundleFile, CatalogStore, FoundBundle, FoundTool, Known, Loaded, Marks, Overlay, StoreKey,
    StoreRead, StoreWrite,
};
use crate::events::CatalogEvent;
use crate::model::{DisabledReason, LoadIssue, ToolHead, Usage};
use crate::tenant::TenantRecord;
use crate::{Error, Result};

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// The class of toolscout's advisory locks ("ts").
const LOCK_CLASS: i32 = 0x7473;
/// The advisory lock every write holds for its transaction.
const WRITE_LOCK: i32 = 1;
/// The advisory lock the migrations run under.
const MIGRATION_LOCK: i32 = 2;
/// The channel a committed write notifies, with its generation.
pub(crate) const CHANNEL: &str = "toolscout_catalog";
/// The table of the migrations applied.
const HISTORY: &str = "toolscout_schema_history";

/// How long one round trip may take before the connection is given up.
const ROUND_TRIP: Duration = Duration::from_secs(120);
/// How long a connection may take to be made.
const CONNECT: Duration = Duration::from_secs(10);
/// How long a caller waits for a free connection when the pool is full.
const POOL_WAIT: Duration = Duration::from_secs(60);
/// The most connections one store opens.
const MAX_CONNECTIONS: usize = 16;
/// Rows a bulk write sends at a time (pipelined over one connection).
const CHUNK: usize = 1_000;

/// A PostgreSQL connection URL, kept out of `Debug` output (it may hold a password).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct DatabaseUrl(pub(crate) String);

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match Config::from_str(&self.0) {
            Ok(config) => write!(f, "DatabaseUrl({})", redacted(&config)),
            Err(_) => f.write_str("DatabaseUrl(<not a connection URL>)"),
        }
    }
}

/// The catalog in a PostgreSQL database; see the module's documentation.
pub(crate) struct PgStore {
    /// The local directory: the heads snapshot.
    local: PathBuf,
    config: Config,
    /// The database, without the password: what errors name.
    target: String,
    /// Runs the connections; `None` only while dropping.
    runtime: Option<tokio::runtime::Runtime>,
    pool: Mutex<Pool>,
    freed: Condvar,
    /// What the listener heard.
    listen: Arc<Listen>,
}

/// What the `LISTEN` connection knows, shared with the catalog's threads.
#[derive(Debug, Default)]
struct Listen {
    state: Mutex<ListenState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct ListenState {
    /// Whether the listener is connected and listening.
    connected: bool,
    /// The generation read just after `LISTEN`: a state older than it may have missed
    /// notices.
    since: u64,
    /// The latest generation a notice announced.
    latest: u64,
    /// How many times the listener (re)connected.
    epoch: u64,
}

impl Listen {
    fn lock(&self) -> MutexGuard<'_, ListenState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn update(&self, f: impl FnOnce(&mut ListenState)) {
        f(&mut self.lock());
        self.changed.notify_all();
    }
}

/// Listens to [`CHANNEL`] for ever (until the runtime ends), reconnecting with a backoff
/// of 100 ms doubling to 5 s.
async fn listen(config: Config, shared: Arc<Listen>) {
    use futures_util::StreamExt as _;
    let mut backoff = Duration::from_millis(100);
    loop {
        if let Ok((client, mut connection)) = config.connect(NoTls).await {
            backoff = Duration::from_millis(100);
            let heard = Arc::clone(&shared);
            let messages = tokio::spawn(async move {
                let mut stream =
                    futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                while let Some(Ok(message)) = stream.next().await {
                    if let tokio_postgres::AsyncMessage::Notification(n) = message
                        && n.channel() == CHANNEL
                        && let Ok(g) = n.payload().parse::<u64>()
                    {
                        heard.update(|s| s.latest = s.latest.max(g));
                    }
                }
            });
            let listening = async {
                client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
                let row = client
                    .query_one("SELECT generation FROM catalog_meta", &[])
                    .await?;
                row.try_get::<_, i64>(0)
            }
            .await;
            if let Ok(g) = listening {
                shared.update(|s| {
                    s.connected = true;
                    s.since = u64::try_from(g).unwrap_or(0);
                    s.epoch += 1;
                });
            }
            // Until the server or the network ends the connection.
            let _ = messages.await;
            drop(client);
            shared.update(|s| s.connected = false);
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

#[derive(Default)]
struct Pool {
    idle: Vec<Client>,
    /// Connections made and not yet closed: idle and lent.
    open: usize,
}

impl fmt::Debug for PgStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgStore")
            .field("target", &self.target)
            .field("local", &self.local)
            .finish_non_exhaustive()
    }
}

/// Whether `e` ended the connection rather than one statement: no answer from the
/// server, or its word that the session is over (an administrator ended it, the server is
/// shutting down: SQLSTATE classes 57P and 08, or a FATAL error).
fn connection_lost(e: &tokio_postgres::Error) -> bool {
    match e.as_db_error() {
        None => true,
        Some(db) => {
            let code = db.code().code();
            code.starts_with("57P") || code.starts_with("08") || db.severity() == "FATAL"
        }
    }
}

/// `postgres://user@host:port/database`: the URL without its password.
fn redacted(config: &Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        #[cfg(unix)]
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let db = config.get_dbname().unwrap_or_default();
    format!("postgres://{user}{host}:{port}/{db}")
}

impl PgStore {
    /// Connects to the database at `url`, brings its schema up to date and keeps the
    /// heads snapshot in `local`.
    pub(crate) fn open(url: &str, local: &Path) -> Result<PgStore> {
        let mut config = Config::from_str(url).map_err(|_| Error::Database {
            target: "<the URL given>".to_owned(),
            reason: "not a PostgreSQL connection URL (postgres://user:password@host:port/database)"
                .to_owned(),
        })?;
        if config.get_application_name().is_none() {
            config.application_name("toolscout");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT);
        }
        config.keepalives_idle(Duration::from_secs(10));
        // A stopped process cannot hold the write lock for ever.
        config.options("-c idle_in_transaction_session_timeout=30000 -c lock_timeout=60000");
        let target = redacted(&config);
        std::fs::create_dir_all(local).map_err(|e| Error::io(local, e))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("toolscout-postgres")
            .enable_all()
            .build()
            .map_err(|e| Error::io(local, e))?;
        let store = PgStore {
            local: local.to_owned(),
            config,
            target,
            runtime: Some(runtime),
            pool: Mutex::new(Pool::default()),
            freed: Condvar::new(),
            listen: Arc::new(Listen::default()),
        };
        store.migrate()?;
        store
            .runtime()
            .spawn(listen(store.config.clone(), Arc::clone(&store.listen)));
        Ok(store)
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        match &self.runtime {
            Some(rt) => rt,
            // Taken only in `Drop`.
            None => unreachable!("the store's runtime is gone only while it is dropped"),
        }
    }

    /// The error of `what` failing on this database.
    fn error(&self, what: &str, e: &tokio_postgres::Error) -> Error {
        let reason = match e.as_db_error() {
            Some(db) => match db.detail() {
                Some(detail) => format!("{what}: {} ({detail})", db.message()),
                None => format!("{what}: {}", db.message()),
            },
            None => {
                let mut reason = format!("{what}: {e}");
                let mut source = std::error::Error::source(e);
                while let Some(s) = source {
                    reason.push_str(&format!(": {s}"));
                    source = s.source();
                }
                if e.is_closed() || reason.contains("connect") {
                    reason.push_str(
                        " (is the server running? check --store or $TOOLSCOUT_DATABASE_URL)",
                    );
                }
                reason
            }
        };
        Error::Database {
            target: self.target.clone(),
            reason,
        }
    }

    fn failure(&self, reason: impl Into<String>) -> Error {
        Error::Database {
            target: self.target.clone(),
            reason: reason.into(),
        }
    }

    /// Waits for `fut` on this thread, at most `limit`; `None` when the time ran out.
    fn bounded<F: Future>(&self, limit: Duration, fut: F) -> Option<F::Output> {
        let timer = self
            .runtime()
            .spawn(async move { tokio::time::sleep(limit).await });
        let fut = std::pin::pin!(fut);
        match futures_executor::block_on(select(fut, timer)) {
            Either::Left((out, timer)) => {
                timer.abort();
                Some(out)
            }
            Either::Right(_) => None,
        }
    }

    /// One round trip on `conn`: `what` names it in errors. A connection whose round
    /// trip failed for another reason than the statement (closed, timed out) is not used
    /// again.
    fn wait<T>(
        &self,
        conn: &Conn<'_>,
        what: &str,
        fut: impl Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    ) -> Result<T> {
        match self.bounded(ROUND_TRIP, fut) {
            Some(Ok(out)) => Ok(out),
            Some(Err(e)) => {
                if connection_lost(&e) || conn.client().is_closed() {
                    conn.broken.set(true);
                }
                Err(self.error(what, &e))
            }
            None => {
                conn.broken.set(true);
                Err(self.failure(format!(
                    "{what}: no answer within {} s",
                    ROUND_TRIP.as_secs()
                )))
            }
        }
    }

    /// A new connection, driven on the store's runtime.
    fn connect(&self) -> Result<Client> {
        let config = self.config.clone();
        let made = self.runtime().spawn(async move {
            let (client, connection) = config.connect(NoTls).await?;
            tokio::spawn(async move {
                // Ends when the client is dropped or the server goes away.
                let _ = connection.await;
            });
            Ok::<_, tokio_postgres::Error>(client)
        });
        match self.bounded(CONNECT + Duration::from_secs(1), made) {
            Some(Ok(Ok(client))) => Ok(client),
            Some(Ok(Err(e))) => Err(self.error("connecting", &e)),
            Some(Err(_)) => Err(self.failure("connecting: the connection task failed")),
            None => Err(self.failure(format!(
                "connecting: no answer within {} s (is the server running? check --store or $TOOLSCOUT_DATABASE_URL)",
                CONNECT.as_secs()
            ))),
        }
    }

    fn lock_pool(&self) -> MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A connection of the pool, or a new one.
    fn conn(&self) -> Result<Conn<'_>> {
        let mut pool = self.lock_pool();
        loop {
            while let Some(client) = pool.idle.pop() {
                if !client.is_closed() {
                    return Ok(Conn {
                        store: self,
                        client: Some(client),
                        broken: Cell::new(false),
                    });
                }
                pool.open -= 1;
            }
            if pool.open < MAX_CONNECTIONS {
                pool.open += 1;
                break;
            }
            let (p, timeout) = self
                .freed
                .wait_timeout(pool, POOL_WAIT)
                .unwrap_or_else(|e| e.into_inner());
            pool = p;
            if timeout.timed_out() && pool.idle.is_empty() && pool.open >= MAX_CONNECTIONS {
                return Err(self.failure(format!(
                    "all {MAX_CONNECTIONS} connections stayed busy for {} s",
                    POOL_WAIT.as_secs()
                )));
            }
        }
        drop(pool);
        match self.connect() {
            Ok(client) => Ok(Conn {
                store: self,
                client: Some(client),
                broken: Cell::new(false),
            }),
            Err(e) => {
                self.lock_pool().open -= 1;
                self.freed.notify_one();
                Err(e)
            }
        }
    }

    /// Runs `f` on a connection of the pool; when the connection turns out to be dead (a
    /// restarted server, a connection ended by an administrator), once more on a new one.
    /// Only for what can be done twice: `f`'s first round trip did nothing on a dead
    /// connection.
    fn once_more<T>(&self, f: impl Fn(&Conn<'_>) -> Result<T>) -> Result<(Conn<'_>, T)>
    where
        T: Sized,
    {
        let conn = self.conn()?;
        match f(&conn) {
            Ok(out) => Ok((conn, out)),
            Err(_) if conn.broken.get() => {
                drop(conn);
                // What cut one connection (a restart) most likely cut the idle ones too.
                let mut pool = self.lock_pool();
                pool.open -= pool.idle.len();
                pool.idle.clear();
                drop(pool);
                let conn = self.conn()?;
                let out = f(&conn)?;
                Ok((conn, out))
            }
            Err(e) => Err(e),
        }
    }

    /// A connection on which `sql` started a transaction.
    fn begin(&self, what: &str, sql: &str) -> Result<Conn<'_>> {
        let (conn, ()) = self.once_more(|conn| {
            let client = conn.client();
            self.wait(conn, what, client.batch_execute(sql))
        })?;
        Ok(conn)
    }

    /// Brings the schema up to date, once across processes (a session advisory lock).
    fn migrate(&self) -> Result<()> {
        let mut conn = self.conn()?;
        let client = conn.client();
        self.wait(
            &conn,
            "waiting for the migration lock",
            client.execute(
                "SELECT pg_advisory_lock($1, $2)",
                &[&LOCK_CLASS, &MIGRATION_LOCK],
            ),
        )?;
        let result = self.migrate_locked(&mut conn);
        let client = conn.client();
        let unlocked = self.wait(
            &conn,
            "releasing the migration lock",
            client.execute(
                "SELECT pg_advisory_unlock($1, $2)",
                &[&LOCK_CLASS, &MIGRATION_LOCK],
            ),
        );
        result.and(unlocked.map(|_| ()))
    }

    fn migrate_locked(&self, conn: &mut Conn<'_>) -> Result<()> {
        let binary = embedded::migrations::runner()
            .get_migrations()
            .iter()
            .map(|m| i64::from(m.version()))
            .max()
            .unwrap_or(0);
        let client = conn.client();
        let history = self.wait(
            conn,
            "reading the schema version",
            client.query_one("SELECT to_regclass($1)::text IS NOT NULL", &[&HISTORY]),
        )?;
        if history.try_get::<_, bool>(0).unwrap_or(false) {
            let client = conn.client();
            let row = self.wait(
                conn,
                "reading the schema version",
                client.query_one(&format!("SELECT max(version)::int8 FROM {HISTORY}"), &[]),
            )?;
            let database: Option<i64> = row.try_get(0).unwrap_or(None);
            if let Some(database) = database
                && database > binary
            {
                return Err(Error::SchemaTooNew {
                    target: self.target.clone(),
                    database,
                    binary,
                });
            }
        }
        let mut runner = embedded::migrations::runner().set_grouped(true);
        runner.set_migration_table_name(HISTORY);
        let client = conn.client_mut();
        match self.bounded(ROUND_TRIP, runner.run_async(client)) {
            Some(Ok(_)) => Ok(()),
            Some(Err(e)) => Err(self.failure(format!("migrating the schema: {e}"))),
            None => {
                conn.broken.set(true);
                Err(self.failure("migrating the schema: no answer in time"))
            }
        }
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        // The connections first (their tasks end), then the runtime, without waiting: a
        // catalog may be dropped on a runtime's worker, where blocking is refused.
        self.lock_pool().idle.clear();
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

/// A connection lent by the pool; back to it when dropped, unless broken.
struct Conn<'a> {
    store: &'a PgStore,
    client: Option<Client>,
    /// Set when a round trip failed other than by the statement: not used again.
    broken: Cell<bool>,
}

impl Conn<'_> {
    fn client(&self) -> &Client {
        match &self.client {
            Some(c) => c,
            None => unreachable!("a lent connection holds its client until dropped"),
        }
    }

    fn client_mut(&mut self) -> &mut Client {
        match &mut self.client {
            Some(c) => c,
            None => unreachable!("a lent connection holds its client until dropped"),
        }
    }
}

impl Drop for Conn<'_> {
    fn drop(&mut self) {
        let Some(client) = self.client.take() else {
            return;
        };
        let mut pool = self.store.lock_pool();
        if self.broken.get() || client.is_closed() {
            pool.open -= 1;
        } else {
            pool.idle.push(client);
        }
        drop(pool);
        self.store.freed.notify_one();
    }
}

impl CatalogStore for PgStore {
    fn local_dir(&self) -> &Path {
        &self.local
    }

    fn read(&self) -> Result<Box<dyn StoreRead + '_>> {
        let conn = self.begin(
            "starting a read",
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        )?;
        Ok(Box::new(PgRead {
            tx: Tx { conn, open: true },
        }))
    }

    fn write(&self) -> Result<Box<dyn StoreWrite + '_>> {
        let conn = self.begin("starting a write", "BEGIN")?;
        let tx = Tx { conn, open: true };
        let client = tx.conn.client();
        self.wait(
            &tx.conn,
            "waiting for the write lock",
            client.execute(
                "SELECT pg_advisory_xact_lock($1, $2)",
                &[&LOCK_CLASS, &WRITE_LOCK],
            ),
        )?;
        Ok(Box::new(PgWrite {
            tx,
            generation: None,
        }))
    }

    fn read_tool(&self, bundle: Uuid, tool: Uuid) -> Result<ToolFile> {
        let (_conn, row) = self.once_more(|conn| {
            let client = conn.client();
            self.wait(
                conn,
                "reading a tool",
                client.query_opt(
                    "SELECT file::text FROM tools WHERE id = $1 AND bundle_id = $2",
                    &[&tool, &bundle],
                ),
            )
        })?;
        let Some(row) = row else {
            return Err(Error::ToolIdNotFound { tool });
        };
        let text: String = row.try_get(0).map_err(|e| self.failure(e.to_string()))?;
        serde_json::from_str(&text).map_err(|source| Error::Json {
            path: PathBuf::from(format!("tool {tool}")),
            source,
        })
    }

    fn read_tools(&self, tools: &[(Uuid, Uuid)]) -> Result<HashMap<Uuid, ToolFile>> {
        let ids: Vec<Uuid> = tools.iter().map(|(_, t)| *t).collect();
        let (_conn, rows) = self.once_more(|conn| {
            let client = conn.client();
            self.wait(
                conn,
                "reading tools",
                client.query(
                    "SELECT id, file::text FROM tools WHERE id = ANY($1)",
                    &[&ids],
                ),
            )
        })?;
        Ok(rows
            .iter()
            .filter_map(|row| {
                let id: Uuid = row.try_get(0).ok()?;
                let text: String = row.try_get(1).ok()?;
                Some((id, serde_json::from_str(&text).ok()?))
            })
            .collect())
    }

    fn tool_path(&self, _bundle: Uuid, _tool: Uuid) -> Option<PathBuf> {
        None
    }

    fn add_usage(&self, deltas: &BTreeMap<Uuid, Usage>) -> Result<BTreeMap<Uuid, Usage>> {
        let ids: Vec<Uuid> = deltas.keys().copied().collect();
        let counts: Vec<i64> = deltas
            .values()
            .map(|u| i64::try_from(u.call_count).unwrap_or(i64::MAX))
            .collect();
        let lasts: Vec<Option<DateTime<Utc>>> = deltas.values().map(|u| u.last_called_at).collect();
        let conn = self.conn()?;
        let client = conn.client();
        let rows = self.wait(
            &conn,
            "counting calls",
            client.query(
                "INSERT INTO usage (tool_id, call_count, last_called_at) \
                 SELECT u.id, u.n, u.at \
                 FROM unnest($1::uuid[], $2::int8[], $3::timestamptz[]) AS u(id, n, at) \
                 WHERE EXISTS (SELECT 1 FROM tools t WHERE t.id = u.id) \
                 ON CONFLICT (tool_id) DO UPDATE \
                 SET call_count = usage.call_count + excluded.call_count, \
                     last_called_at = greatest(usage.last_called_at, excluded.last_called_at) \
                 RETURNING tool_id, call_count, last_called_at",
                &[&ids, &counts, &lasts],
            ),
        )?;
        let mut totals = BTreeMap::new();
        for row in rows {
            if let Ok((id, usage)) = usage_of(&row) {
                totals.insert(id, usage);
            }
        }
        Ok(totals)
    }

    fn marks(&self, _bundles: &mut dyn Iterator<Item = Uuid>) -> Marks {
        // Nothing edits rows by hand: the stamp says it all.
        Marks::new()
    }

    fn marks_hold(&self, marks: &Marks) -> bool {
        marks.is_empty()
    }

    fn steps_are_durable(&self) -> bool {
        false
    }

    fn may_have_moved(&self, generation: u64) -> bool {
        let s = self.listen.lock();
        !s.connected || s.latest > generation || s.since > generation
    }

    fn wait_for_change(&self, _stamp: Option<&str>, generation: u64, timeout: Duration) -> bool {
        let state = self.listen.lock();
        let epoch = state.epoch;
        let (state, _) = self
            .listen
            .changed
            .wait_timeout_while(state, timeout, |s| {
                s.epoch == epoch && s.latest <= generation && s.since <= generation
            })
            .unwrap_or_else(|e| e.into_inner());
        state.epoch != epoch || state.latest > generation || state.since > generation
    }
}

/// A transaction on a lent connection; rolled back when dropped unless it ended.
struct Tx<'a> {
    conn: Conn<'a>,
    open: bool,
}

impl Tx<'_> {
    fn store(&self) -> &PgStore {
        self.conn.store
    }

    fn query(&mut self, what: &str, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>> {
        let store = self.conn.store;
        let client = self.conn.client();
        store.wait(&self.conn, what, client.query(sql, params))
    }

    fn execute(&mut self, what: &str, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64> {
        let store = self.conn.store;
        let client = self.conn.client();
        store.wait(&self.conn, what, client.execute(sql, params))
    }

    fn end(&mut self, sql: &str) -> Result<()> {
        self.open = false;
        let store = self.conn.store;
        let client = self.conn.client();
        store.wait(
            &self.conn,
            "ending a transaction",
            client.batch_execute(sql),
        )
    }

    fn stamp(&mut self) -> Result<Option<String>> {
        let rows = self.query(
            "reading the generation",
            "SELECT stamp FROM catalog_meta",
            &[],
        )?;
        let Some(row) = rows.first() else {
            return Err(self
                .store()
                .failure("catalog_meta has no row: not a toolscout catalog"));
        };
        row.try_get(0)
            .map_err(|e| self.store().failure(e.to_string()))
    }

    /// See [`StoreRead::load`].
    fn load(
        &mut self,
        known: &Known,
        listed: Option<BTreeMap<Uuid, Vec<FoundTool>>>,
    ) -> Result<Loaded> {
        let meta = self.query(
            "reading the catalog",
            "SELECT stamp, overlay::text FROM catalog_meta",
            &[],
        )?;
        let Some(meta) = meta.first() else {
            return Err(self
                .store()
                .failure("catalog_meta has no row: not a toolscout catalog"));
        };
        let mut loaded = Loaded {
            stamp: meta
                .try_get(0)
                .map_err(|e| self.store().failure(e.to_string()))?,
            ..Loaded::default()
        };
        match meta
            .try_get::<_, String>(1)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str::<Overlay>(&text).map_err(|e| e.to_string()))
        {
            Ok(overlay) => loaded.overlay = overlay,
            Err(reason) => loaded.issues.push(LoadIssue {
                path: PathBuf::from("catalog_meta.overlay"),
                reason: format!("not the built-ins' flags: {reason}"),
            }),
        }
        let rows = self.query(
            "reading the tenants",
            "SELECT id, record::text FROM tenants ORDER BY id",
            &[],
        )?;
        for row in &rows {
            let tenant = row
                .try_get::<_, String>(1)
                .map_err(|e| e.to_string())
                .and_then(|text| {
                    serde_json::from_str::<TenantRecord>(&text).map_err(|e| e.to_string())
                });
            match tenant {
                Ok(t) => loaded.tenants.push(t),
                Err(reason) => loaded.issues.push(LoadIssue {
                    path: PathBuf::from("tenants"),
                    reason: format!("a tenant that cannot be read ({reason}): it cannot sign in"),
                }),
            }
        }
        let rows = self.query(
            "reading the bundles",
            "SELECT id, slug, display_name, description, is_enabled, soft_deleted_at, \
             created_at, modified_at, owner_tenant_id, shared FROM bundles ORDER BY id",
            &[],
        )?;
        let mut bundles: BTreeMap<Uuid, FoundBundle> = BTreeMap::new();
        for row in &rows {
            match bundle_of(row) {
                Ok(file) => {
                    bundles.insert(
                        file.bundle_id,
                        FoundBundle {
                            path: None,
                            file,
                            tools: Vec::new(),
                        },
                    );
                }
                Err(reason) => loaded.issues.push(LoadIssue {
                    path: PathBuf::from("bundles"),
                    reason,
                }),
            }
        }
        match listed {
            Some(mut by_bundle) => {
                for (id, b) in &mut bundles {
                    b.tools = by_bundle.remove(id).unwrap_or_default();
                }
            }
            None => self.load_tools(known, &mut bundles, &mut loaded.issues)?,
        }
        loaded.bundles = bundles.into_values().collect();
        let rows = self.query(
            "reading the usage counts",
            "SELECT tool_id, call_count, last_called_at FROM usage",
            &[],
        )?;
        for row in &rows {
            if let Ok((id, usage)) = usage_of(row) {
                loaded.usage.insert(id, usage);
            }
        }
        Ok(loaded)
    }

    /// Every tool's id and generation, and the heads of those `known` does not hold.
    fn load_tools(
        &mut self,
        known: &Known,
        bundles: &mut BTreeMap<Uuid, FoundBundle>,
        issues: &mut Vec<LoadIssue>,
    ) -> Result<()> {
        let rows = self.query(
            "listing the tools",
            "SELECT id, bundle_id, generation FROM tools",
            &[],
        )?;
        let mut changed = Vec::new();
        for row in &rows {
            let (Ok(id), Ok(bundle), Ok(generation)) = (
                row.try_get::<_, Uuid>(0),
                row.try_get::<_, Uuid>(1),
                row.try_get::<_, i64>(2),
            ) else {
                continue;
            };
            let key = StoreKey::Row {
                generation: u64::try_from(generation).unwrap_or(0),
            };
            if known.holds(id, bundle, Some(&key)) {
                if let Some(b) = bundles.get_mut(&bundle) {
                    b.tools.push(FoundTool {
                        id,
                        path: None,
                        key: Some(key),
                        file: None,
                        head: None,
                    });
                }
            } else {
                changed.push(id);
            }
        }
        for chunk in changed.chunks(10 * CHUNK) {
            let chunk = chunk.to_vec();
            let rows = self.query(
                "reading changed tools",
                &format!("SELECT {HEAD_COLUMNS}, generation FROM tools WHERE id = ANY($1)"),
                &[&chunk],
            )?;
            for row in &rows {
                match head_of(row) {
                    Ok((head, generation)) => {
                        if let Some(b) = bundles.get_mut(&head.bundle_id) {
                            b.tools.push(FoundTool {
                                id: head.id,
                                path: None,
                                key: Some(StoreKey::Row { generation }),
                                file: None,
                                head: Some(Box::new(head)),
                            });
                        }
                    }
                    Err(reason) => issues.push(LoadIssue {
                        path: PathBuf::from(
                            row.try_get::<_, Uuid>(0)
                                .map_or_else(|_| "tools".to_owned(), |id| format!("tool {id}")),
                        ),
                        reason,
                    }),
                }
            }
        }
        Ok(())
    }
}

impl Drop for Tx<'_> {
    fn drop(&mut self) {
        if self.open {
            // Nothing of it is kept; a connection that cannot say so is not used again.
            if self.end("ROLLBACK").is_err() {
                self.conn.broken.set(true);
            }
        }
    }
}

/// The columns of a tool's head, in the order [`head_of`] reads them.
const HEAD_COLUMNS: &str = "id, bundle_id, slug, version, name, summary, category, tags, \
     tool_type, func, is_enabled, created_at, modified_at, digest, invalid_reason";

fn col<'a, T: tokio_postgres::types::FromSql<'a>>(
    row: &'a Row,
    i: usize,
) -> std::result::Result<T, String> {
    row.try_get(i).map_err(|e| {
        format!(
            "column {}: {e}",
            row.columns().get(i).map_or("?", |c| c.name())
        )
    })
}

/// A head from a row of [`HEAD_COLUMNS`] and `generation`.
fn head_of(row: &Row) -> std::result::Result<(ToolHead, u64), String> {
    let tool_type: String = col(row, 8)?;
    let tool_type: ToolType = serde_json::from_value(serde_json::Value::String(tool_type.clone()))
        .map_err(|_| format!("unknown tool type {tool_type:?}"))?;
    let invalid: Option<String> = col(row, 14)?;
    let generation: i64 = col(row, 15)?;
    Ok((
        ToolHead {
            id: col(row, 0)?,
            bundle_id: col(row, 1)?,
            slug: col(row, 2)?,
            version: col(row, 3)?,
            name: col(row, 4)?,
            summary: col(row, 5)?,
            category: col(row, 6)?,
            tags: col(row, 7)?,
            tool_type,
            func: col(row, 9)?,
            is_enabled: col(row, 10)?,
            is_built_in: false,
            created_at: col(row, 11)?,
            modified_at: col(row, 12)?,
            disabled_reason: invalid.map(|reason| DisabledReason::InvalidDefinition { reason }),
            digest: col(row, 13)?,
        },
        u64::try_from(generation).unwrap_or(0),
    ))
}

fn bundle_of(row: &Row) -> std::result::Result<BundleFile, String> {
    Ok(BundleFile {
        schema_version: super::BUNDLE_SCHEMA.to_owned(),
        bundle_id: col(row, 0)?,
        slug: col(row, 1)?,
        display_name: col(row, 2)?,
        description: col(row, 3)?,
        is_enabled: col(row, 4)?,
        soft_deleted_at: col(row, 5)?,
        created_at: col(row, 6)?,
        modified_at: col(row, 7)?,
        owner: col(row, 8)?,
        shared: col(row, 9)?,
    })
}

fn usage_of(row: &Row) -> std::result::Result<(Uuid, Usage), String> {
    let count: i64 = col(row, 1)?;
    Ok((
        col(row, 0)?,
        Usage {
            call_count: u64::try_from(count).unwrap_or(0),
            last_called_at: col(row, 2)?,
        },
    ))
}

/// A read: a `REPEATABLE READ READ ONLY` transaction, committed when dropped.
struct PgRead<'a> {
    tx: Tx<'a>,
}

impl Drop for PgRead<'_> {
    fn drop(&mut self) {
        if self.tx.open && self.tx.end("COMMIT").is_err() {
            self.tx.conn.broken.set(true);
        }
    }
}

/// [`StoreRead`] of a guard that holds its transaction in `tx` (reads and writes alike).
macro_rules! store_read_through_tx {
    ($guard:ident) => {
        impl StoreRead for $guard<'_> {
            fn stamp(&mut self) -> Result<Option<String>> {
                self.tx.stamp()
            }

            fn load(
                &mut self,
                known: &Known,
                listed: Option<BTreeMap<Uuid, Vec<FoundTool>>>,
            ) -> Result<Loaded> {
                self.tx.load(known, listed)
            }
        }
    };
}

store_read_through_tx!(PgRead);
store_read_through_tx!(PgWrite);

/// A write: a transaction holding the write lock; rolled back unless committed.
struct PgWrite<'a> {
    tx: Tx<'a>,
    /// The generation this write moved to, once it did.
    generation: Option<i64>,
}

impl PgWrite<'_> {
    fn generation(&self) -> Result<i64> {
        self.generation.ok_or_else(|| {
            self.tx
                .store()
                .failure("a write changed a row before moving the generation on")
        })
    }

    fn upsert_tools(&mut self, rows: &[ToolRow<'_>]) -> Result<()> {
        let store = self.tx.conn.store;
        let client = self.tx.conn.client();
        let statement = store.wait(
            &self.tx.conn,
            "preparing a tool write",
            client.prepare(
                "INSERT INTO tools (id, bundle_id, slug, version, file, name, summary, category, \
                 tags, tool_type, func, is_enabled, created_at, modified_at, digest, \
                 invalid_reason, generation) \
                 VALUES ($1, $2, $3, $4, $5::text::json, $6, $7, $8, $9, $10, $11, $12, $13, $14, \
                 $15, $16, $17) \
                 ON CONFLICT (id) DO UPDATE SET bundle_id = excluded.bundle_id, \
                 slug = excluded.slug, version = excluded.version, file = excluded.file, \
                 name = excluded.name, summary = excluded.summary, category = excluded.category, \
                 tags = excluded.tags, tool_type = excluded.tool_type, func = excluded.func, \
                 is_enabled = excluded.is_enabled, created_at = excluded.created_at, \
                 modified_at = excluded.modified_at, digest = excluded.digest, \
                 invalid_reason = excluded.invalid_reason, generation = excluded.generation",
            ),
        )?;
        for chunk in rows.chunks(CHUNK) {
            let client = self.tx.conn.client();
            let params: Vec<[&(dyn ToSql + Sync); 17]> = chunk
                .iter()
                .map(|r| {
                    let h = r.head;
                    [
                        &h.id as &(dyn ToSql + Sync),
                        &h.bundle_id,
                        &h.slug,
                        &h.version,
                        &r.file,
                        &h.name,
                        &h.summary,
                        &h.category,
                        &h.tags,
                        &r.tool_type,
                        &h.func,
                        &h.is_enabled,
                        &h.created_at,
                        &h.modified_at,
                        &h.digest,
                        &r.invalid,
                        &r.generation,
                    ]
                })
                .collect();
            // Sent together: the client pipelines them over the one connection.
            let writes = params.iter().map(|p| client.execute(&statement, p));
            store.wait(&self.tx.conn, "writing tools", try_join_all(writes))?;
        }
        Ok(())
    }
}

/// One tool row to write.
struct ToolRow<'a> {
    head: &'a ToolHead,
    file: String,
    tool_type: &'static str,
    invalid: Option<&'a str>,
    generation: i64,
}

impl<'a> ToolRow<'a> {
    fn new(head: &'a ToolHead, file: &ToolFile, generation: i64) -> Result<ToolRow<'a>> {
        let file = serde_json::to_string(file).map_err(|source| Error::Json {
            path: PathBuf::from(format!("tool {}", head.id)),
            source,
        })?;
        Ok(ToolRow {
            head,
            file,
            tool_type: match head.tool_type {
                ToolType::Native => "native",
                ToolType::Http => "http",
                ToolType::Recipe => "recipe",
            },
            invalid: match &head.disabled_reason {
                Some(DisabledReason::InvalidDefinition { reason }) => Some(reason),
                _ => None,
            },
            generation,
        })
    }
}

impl StoreWrite for PgWrite<'_> {
    fn bump(&mut self, _previous: Option<&str>) -> Result<(String, u64)> {
        let uuid = Uuid::now_v7().to_string();
        let rows = self.tx.query(
            "moving the generation on",
            "UPDATE catalog_meta SET generation = generation + 1, \
             stamp = (generation + 1)::text || ' ' || $1 RETURNING generation, stamp",
            &[&uuid],
        )?;
        let row = rows.first().ok_or_else(|| {
            self.tx
                .store()
                .failure("catalog_meta has no row: not a toolscout catalog")
        })?;
        let generation: i64 = row
            .try_get(0)
            .map_err(|e| self.tx.store().failure(e.to_string()))?;
        let stamp: String = row
            .try_get(1)
            .map_err(|e| self.tx.store().failure(e.to_string()))?;
        self.generation = Some(generation);
        Ok((stamp, u64::try_from(generation).unwrap_or(0)))
    }

    fn put_bundle(&mut self, b: &BundleFile) -> Result<()> {
        let generation = self.generation()?;
        self.tx.execute(
            "writing a bundle",
            "INSERT INTO bundles (id, slug, display_name, description, is_enabled, \
             soft_deleted_at, created_at, modified_at, generation, owner_tenant_id, shared) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
             ON CONFLICT (id) DO UPDATE SET slug = excluded.slug, \
             display_name = excluded.display_name, description = excluded.description, \
             is_enabled = excluded.is_enabled, soft_deleted_at = excluded.soft_deleted_at, \
             created_at = excluded.created_at, modified_at = excluded.modified_at, \
             generation = excluded.generation, owner_tenant_id = excluded.owner_tenant_id, \
             shared = excluded.shared",
            &[
                &b.bundle_id,
                &b.slug,
                &b.display_name,
                &b.description,
                &b.is_enabled,
                &b.soft_deleted_at,
                &b.created_at,
                &b.modified_at,
                &generation,
                &b.owner,
                &b.shared,
            ],
        )?;
        Ok(())
    }

    fn put_tool(&mut self, head: &ToolHead, file: &ToolFile) -> Result<Option<StoreKey>> {
        let generation = self.generation()?;
        let row = ToolRow::new(head, file, generation)?;
        self.upsert_tools(&[row])?;
        Ok(Some(StoreKey::Row {
            generation: u64::try_from(generation).unwrap_or(0),
        }))
    }

    fn put_tools(
        &mut self,
        bundle: Option<&BundleFile>,
        _bundle_id: Uuid,
        tools: Vec<(&ToolHead, ToolFile)>,
    ) -> Result<Vec<Option<StoreKey>>> {
        let generation = self.generation()?;
        if let Some(b) = bundle {
            self.put_bundle(b)?;
        }
        let n = tools.len();
        let mut rows = Vec::with_capacity(n);
        for (head, file) in tools {
            rows.push(ToolRow::new(head, &file, generation)?);
        }
        self.upsert_tools(&rows)?;
        let key = StoreKey::Row {
            generation: u64::try_from(generation).unwrap_or(0),
        };
        Ok(vec![Some(key); n])
    }

    fn put_overlay(&mut self, overlay: &Overlay) -> Result<()> {
        let text = serde_json::to_string(overlay).map_err(|source| Error::Json {
            path: PathBuf::from("catalog_meta.overlay"),
            source,
        })?;
        self.tx.execute(
            "writing the built-ins' flags",
            "UPDATE catalog_meta SET overlay = $1::text::json",
            &[&text],
        )?;
        Ok(())
    }

    fn put_tenant(&mut self, tenant: &TenantRecord, _all: &[&TenantRecord]) -> Result<()> {
        let generation = self.generation()?;
        let text = serde_json::to_string(tenant).map_err(|source| Error::Json {
            path: PathBuf::from("tenants"),
            source,
        })?;
        self.tx.execute(
            "writing a tenant",
            "INSERT INTO tenants (id, name, removed_at, record, generation) \
             VALUES ($1, $2, $3, $4::text::json, $5) \
             ON CONFLICT (id) DO UPDATE SET name = excluded.name, \
             removed_at = excluded.removed_at, record = excluded.record, \
             generation = excluded.generation",
            &[
                &tenant.id,
                &tenant.name,
                &tenant.removed_at,
                &text,
                &generation,
            ],
        )?;
        Ok(())
    }

    fn remove_tool(&mut self, bundle: Uuid, tool: Uuid) -> Result<()> {
        self.tx.execute(
            "deleting a tool",
            "DELETE FROM tools WHERE id = $1 AND bundle_id = $2",
            &[&tool, &bundle],
        )?;
        Ok(())
    }

    fn remove_empty_bundle(&mut self, bundle: Uuid) -> Result<bool> {
        let n = self.tx.execute(
            "removing a bundle",
            "DELETE FROM bundles WHERE id = $1 \
             AND NOT EXISTS (SELECT 1 FROM tools WHERE bundle_id = $1)",
            &[&bundle],
        )?;
        Ok(n > 0)
    }

    fn clean_up(&mut self) -> Result<()> {
        // An unfinished transaction leaves nothing behind.
        Ok(())
    }

    fn commit(
        mut self: Box<Self>,
        generation: Option<u64>,
        _events: &[CatalogEvent],
    ) -> Result<()> {
        if let Some(g) = generation {
            let payload = g.to_string();
            self.tx.execute(
                "announcing the write",
                "SELECT pg_notify($1, $2)",
                &[&CHANNEL, &payload],
            )?;
        }
        self.tx.end("COMMIT")
    }
}
