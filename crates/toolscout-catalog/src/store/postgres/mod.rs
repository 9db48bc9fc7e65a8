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
//!
//! **Files.** `pool`: the connections (a pool with a condition variable, each round trip
//! waited for on the calling thread and bounded in time) and transactions on them;
//! `listen`: the `LISTEN` connection; `migrate`: the schema; `read`: loads and row
//! decoding; `write`: the writes. This file: the store itself and its [`CatalogStore`]
//! methods.

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

mod listen;
mod migrate;
mod pool;
mod read;
mod write;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};

use tokio_postgres::Config;
use tokio_postgres::config::Host;
use toolscout_spec::adapters::tool_file::ToolFile;
use uuid::Uuid;

use super::{CatalogStore, Marks, StoreRead, StoreWrite};
use crate::model::Usage;
use crate::{Error, Result};
use listen::{Listen, listen};
use pool::{CONNECT, Pool, Tx};
use read::{PgRead, usage_of};
use write::PgWrite;

/// The class of toolscout's advisory locks ("ts").
const LOCK_CLASS: i32 = 0x7473;
/// The advisory lock every write holds for its transaction.
const WRITE_LOCK: i32 = 1;
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

impl fmt::Debug for PgStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgStore")
            .field("target", &self.target)
            .field("local", &self.local)
            .finish_non_exhaustive()
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
