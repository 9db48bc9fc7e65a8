//! Writes: the generation moved on, bundles, tools (in pipelined chunks), the built-ins'
//! overlay, tenants, removals, and the commit that notifies the other processes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use futures_util::future::try_join_all;

use tokio_postgres::types::ToSql;
use toolscout_spec::adapters::tool_file::{ToolFile, ToolType};
use uuid::Uuid;

use super::CHUNK;
use super::listen::CHANNEL;
use super::pool::Tx;
use crate::events::CatalogEvent;
use crate::model::{DisabledReason, ToolHead};
use crate::store::{
    BundleFile, FoundTool, Known, Loaded, Overlay, StoreKey, StoreRead, StoreWrite,
};
use crate::tenant::TenantRecord;
use crate::{Error, Result};

store_read_through_tx!(PgWrite);

/// A write: a transaction holding the write lock; rolled back unless committed.
pub(super) struct PgWrite<'a> {
    pub(super) tx: Tx<'a>,
    /// The generation this write moved to, once it did.
    pub(super) generation: Option<i64>,
}

impl PgWrite<'_> {
    pub(super) fn generation(&self) -> Result<i64> {
        self.generation.ok_or_else(|| {
            self.tx
                .store()
                .failure("a write changed a row before moving the generation on")
        })
    }

    pub(super) fn upsert_tools(&mut self, rows: &[ToolRow<'_>]) -> Result<()> {
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
pub(super) struct ToolRow<'a> {
    pub(super) head: &'a ToolHead,
    pub(super) file: String,
    pub(super) tool_type: &'static str,
    pub(super) invalid: Option<&'a str>,
    pub(super) generation: i64,
}

impl<'a> ToolRow<'a> {
    pub(super) fn new(head: &'a ToolHead, file: &ToolFile, generation: i64) -> Result<ToolRow<'a>> {
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
