//! Serves a temporary catalog (the built-in tools, on a temporary workspace) on
//! `127.0.0.1:7411`, or on the address given as the first argument.
//!
//! ```text
//! cargo run -p toolscout-server --example serve -- 127.0.0.1:7411
//! curl -s localhost:7411/api/v1/tools
//! curl -s localhost:7411/rpc -d '{"jsonrpc":"2.0","method":"server/identity","id":1}'
//! ```

use toolscout_catalog::{Catalog, builtin};
use toolscout_discover::Toolbox;
use toolscout_invoke::builtin::BuiltinConfig;
use toolscout_invoke::{AllowedHosts, Invoker};
use toolscout_search::SearchIndex;
use toolscout_server::{AppState, ServerOptions, serve};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:7411".to_owned())
        .parse()?;
    let catalog_dir = tempfile::tempdir()?;
    let workspace = tempfile::tempdir()?;
    std::fs::write(workspace.path().join("hello.txt"), "hello from toolscout\n")?;
    let catalog = Catalog::open(catalog_dir.path(), &builtin::NATIVE_FUNCTIONS)?;
    let mut invoker = Invoker::default();
    toolscout_invoke::builtin::register(
        &mut invoker,
        &BuiltinConfig::new(workspace.path(), AllowedHosts::none()),
    )?;
    let toolbox = Toolbox::new(catalog, SearchIndex::in_memory()?, invoker)?;
    let options = ServerOptions::default()
        .with_scenario(
            "toolscout-example",
            "0.1.0",
            "The built-in tools of toolscout",
        )
        .with_base_url(Some(&format!("http://{addr}")));
    eprintln!("serving on http://{addr}");
    serve(addr, AppState::new(toolbox, options)).await?;
    Ok(())
}
