//! The schema: the migrations (`migrations/V*.sql`, refinery), run once across
//! processes under a session advisory lock; a database newer than the binary refused.

use super::pool::Conn;
use super::pool::ROUND_TRIP;
use super::{LOCK_CLASS, PgStore};
use crate::{Error, Result};

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// The advisory lock the migrations run under.
pub(super) const MIGRATION_LOCK: i32 = 2;
/// The table of the migrations applied.
pub(super) const HISTORY: &str = "toolscout_schema_history";

impl PgStore {
    /// Brings the schema up to date, once across processes (a session advisory lock).
    pub(super) fn migrate(&self) -> Result<()> {
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

    pub(super) fn migrate_locked(&self, conn: &mut Conn<'_>) -> Result<()> {
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
