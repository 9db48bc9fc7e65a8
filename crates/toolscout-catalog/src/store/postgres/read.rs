//! Reads: the generation, a load of what changed since a known state, and the decoding
//! of rows into heads, bundles and usage counts.

use std::collections::BTreeMap;
use std::path::PathBuf;

use tokio_postgres::Row;
use toolscout_spec::adapters::tool_file::ToolType;
use uuid::Uuid;

use super::CHUNK;
use super::pool::Tx;
use crate::Result;
use crate::model::{DisabledReason, LoadIssue, ToolHead, Usage};
use crate::store::{
    BundleFile, FoundBundle, FoundTool, Known, Loaded, Overlay, StoreKey, StoreRead,
};
use crate::tenant::TenantRecord;

impl Tx<'_> {
    pub(super) fn stamp(&mut self) -> Result<Option<String>> {
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
    pub(super) fn load(
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
    pub(super) fn load_tools(
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

/// The columns of a tool's head, in the order [`head_of`] reads them.
pub(super) const HEAD_COLUMNS: &str = "id, bundle_id, slug, version, name, summary, category, tags, \
     tool_type, func, is_enabled, created_at, modified_at, digest, invalid_reason";

pub(super) fn col<'a, T: tokio_postgres::types::FromSql<'a>>(
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
pub(super) fn head_of(row: &Row) -> std::result::Result<(ToolHead, u64), String> {
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

pub(super) fn bundle_of(row: &Row) -> std::result::Result<BundleFile, String> {
    Ok(BundleFile {
        schema_version: crate::store::BUNDLE_SCHEMA.to_owned(),
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

pub(super) fn usage_of(row: &Row) -> std::result::Result<(Uuid, Usage), String> {
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
pub(super) struct PgRead<'a> {
    pub(super) tx: Tx<'a>,
}

impl Drop for PgRead<'_> {
    fn drop(&mut self) {
        if self.tx.open && self.tx.end("COMMIT").is_err() {
            self.tx.conn.broken.set(true);
        }
    }
}

store_read_through_tx!(PgRead);
