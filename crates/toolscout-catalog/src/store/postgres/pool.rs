//! The connections: a small pool (a condition variable for a free one), each round trip
//! waited for on the calling thread (`block_on`) and bounded in time; a connection found
//! dead replaced; transactions on a lent connection.

use std::cell::Cell;
use std::future::Future;
use std::sync::MutexGuard;
use std::time::Duration;

use futures_util::future::{Either, select};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, NoTls, Row};

use super::PgStore;
use crate::{Error, Result};

/// How long one round trip may take before the connection is given up.
pub(super) const ROUND_TRIP: Duration = Duration::from_secs(120);
/// How long a connection may take to be made.
pub(super) const CONNECT: Duration = Duration::from_secs(10);
/// How long a caller waits for a free connection when the pool is full.
pub(super) const POOL_WAIT: Duration = Duration::from_secs(60);
/// The most connections one store opens.
pub(super) const MAX_CONNECTIONS: usize = 16;

#[derive(Default)]
pub(super) struct Pool {
    pub(super) idle: Vec<Client>,
    /// Connections made and not yet closed: idle and lent.
    pub(super) open: usize,
}

/// Whether `e` ended the connection rather than one statement: no answer from the
/// server, or its word that the session is over (an administrator ended it, the server is
/// shutting down: SQLSTATE classes 57P and 08, or a FATAL error).
pub(super) fn connection_lost(e: &tokio_postgres::Error) -> bool {
    match e.as_db_error() {
        None => true,
        Some(db) => {
            let code = db.code().code();
            code.starts_with("57P") || code.starts_with("08") || db.severity() == "FATAL"
        }
    }
}

impl PgStore {
    pub(super) fn runtime(&self) -> &tokio::runtime::Runtime {
        match &self.runtime {
            Some(rt) => rt,
            // Taken only in `Drop`.
            None => unreachable!("the store's runtime is gone only while it is dropped"),
        }
    }

    /// The error of `what` failing on this database.
    pub(super) fn error(&self, what: &str, e: &tokio_postgres::Error) -> Error {
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

    pub(super) fn failure(&self, reason: impl Into<String>) -> Error {
        Error::Database {
            target: self.target.clone(),
            reason: reason.into(),
        }
    }

    /// Waits for `fut` on this thread, at most `limit`; `None` when the time ran out.
    pub(super) fn bounded<F: Future>(&self, limit: Duration, fut: F) -> Option<F::Output> {
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
    pub(super) fn wait<T>(
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
    pub(super) fn connect(&self) -> Result<Client> {
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

    pub(super) fn lock_pool(&self) -> MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A connection of the pool, or a new one.
    pub(super) fn conn(&self) -> Result<Conn<'_>> {
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
    pub(super) fn once_more<T>(&self, f: impl Fn(&Conn<'_>) -> Result<T>) -> Result<(Conn<'_>, T)>
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
    pub(super) fn begin(&self, what: &str, sql: &str) -> Result<Conn<'_>> {
        let (conn, ()) = self.once_more(|conn| {
            let client = conn.client();
            self.wait(conn, what, client.batch_execute(sql))
        })?;
        Ok(conn)
    }
}

/// A connection lent by the pool; back to it when dropped, unless broken.
pub(super) struct Conn<'a> {
    pub(super) store: &'a PgStore,
    pub(super) client: Option<Client>,
    /// Set when a round trip failed other than by the statement: not used again.
    pub(super) broken: Cell<bool>,
}

impl Conn<'_> {
    pub(super) fn client(&self) -> &Client {
        match &self.client {
            Some(c) => c,
            None => unreachable!("a lent connection holds its client until dropped"),
        }
    }

    pub(super) fn client_mut(&mut self) -> &mut Client {
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

/// A transaction on a lent connection; rolled back when dropped unless it ended.
pub(super) struct Tx<'a> {
    pub(super) conn: Conn<'a>,
    pub(super) open: bool,
}

impl Tx<'_> {
    pub(super) fn store(&self) -> &PgStore {
        self.conn.store
    }

    pub(super) fn query(
        &mut self,
        what: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>> {
        let store = self.conn.store;
        let client = self.conn.client();
        store.wait(&self.conn, what, client.query(sql, params))
    }

    pub(super) fn execute(
        &mut self,
        what: &str,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64> {
        let store = self.conn.store;
        let client = self.conn.client();
        store.wait(&self.conn, what, client.execute(sql, params))
    }

    pub(super) fn end(&mut self, sql: &str) -> Result<()> {
        self.open = false;
        let store = self.conn.store;
        let client = self.conn.client();
        store.wait(
            &self.conn,
            "ending a transaction",
            client.batch_execute(sql),
        )
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
