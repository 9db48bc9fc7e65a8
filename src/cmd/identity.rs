//! `toolscout identity`.

use anyhow::Result;
use serde_json::json;
use toolscout_spec::adapters::manifest::PROTOCOL_VERSION;

use super::context::{Context, Global};

pub(crate) fn run(global: &Global, json: bool) -> Result<()> {
    let ctx = Context::open(global)?;
    let id = ctx.catalog.identity();
    let callable = super::context::picks_by_name(&ctx.catalog)
        .iter()
        .filter(|p| p.callable)
        .count();
    ctx.finish();
    if json {
        super::print_json(&json!({
            "server_id": id.to_string(),
            "tools_count": callable,
            "protocol_version": PROTOCOL_VERSION,
        }))
    } else {
        super::emit(format!("{id}  ({callable} tools)"))
    }
}
