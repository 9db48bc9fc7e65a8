//! `toolscout identity`.

use anyhow::Result;
use serde_json::json;
use toolscout_spec::adapters::manifest::PROTOCOL_VERSION;
use toolscout_spec::identity::toolset_id;

pub(crate) fn run(json: bool) -> Result<()> {
    let tools = super::catalog();
    let id = toolset_id(&tools);
    if json {
        super::print_json(&json!({
            "server_id": id.to_string(),
            "tools_count": tools.len(),
            "protocol_version": PROTOCOL_VERSION,
        }))
    } else {
        super::emit(format!("{id}  ({} tools)", tools.len()))?;
        Ok(())
    }
}
