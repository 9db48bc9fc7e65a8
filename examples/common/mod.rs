//! What the agent examples share: the endpoint from the environment, and a host over the
//! built-in catalog.

use toolscout_agent::{Agent, AgentEvent, RunOptions, RunReport, ToolboxHost};
use toolscout_catalog::{Catalog, builtin};
use toolscout_discover::Toolbox;
use toolscout_invoke::builtin::BuiltinConfig;
use toolscout_invoke::{AllowedHosts, Invoker};
use toolscout_search::SearchIndex;

/// The OpenAI-compatible endpoint: `(base_url, api_key, model)` from `OPENAI_BASE_URL`,
/// `OPENAI_API_KEY` (default "none") and `TOOLSCOUT_MODEL`; `None`, with a message, when
/// they are not set.
pub(crate) fn endpoint() -> Option<(String, String, String)> {
    let (Ok(base_url), Ok(model)) = (
        std::env::var("OPENAI_BASE_URL"),
        std::env::var("TOOLSCOUT_MODEL"),
    ) else {
        eprintln!("Set OPENAI_BASE_URL, OPENAI_API_KEY and TOOLSCOUT_MODEL to run this example.");
        return None;
    };
    let api_key = std::env::var("OPENAI_API_KEY").unwrap_or_else(|_| "none".to_owned());
    Some((base_url, api_key, model))
}

/// A host over the built-in catalog in a scratch directory (kept alive by the returned
/// guard), its file tools confined to the current directory.
pub(crate) fn builtin_host() -> anyhow::Result<(tempfile::TempDir, ToolboxHost)> {
    let dir = tempfile::tempdir()?;
    let catalog = Catalog::open(dir.path(), &builtin::NATIVE_FUNCTIONS)?;
    let mut invoker = Invoker::default();
    toolscout_invoke::builtin::register(
        &mut invoker,
        &BuiltinConfig::new(std::env::current_dir()?, AllowedHosts::default()),
    )?;
    let toolbox = Toolbox::new(catalog, SearchIndex::in_memory()?, invoker)?;
    Ok((dir, ToolboxHost::new(toolbox)))
}

/// Runs `agent` on `question` on a new runtime, handing every event to `on_event` as it
/// happens.
pub(crate) fn run(
    agent: &Agent,
    question: &str,
    mut on_event: impl FnMut(AgentEvent) + Send + 'static,
) -> anyhow::Result<RunReport> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    Ok(runtime.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let printer = tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                on_event(event);
            }
        });
        let report = agent
            .run(question, RunOptions::default().with_events(tx))
            .await;
        let _ = printer.await;
        report
    }))
}
