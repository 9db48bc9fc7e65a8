//! Specialist agents as tools: a coordinator delegates file work to a `librarian`
//! sub-agent, which may only use the file tools of the built-in catalog.
//!
//! ```sh
//! OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=none TOOLSCOUT_MODEL=qwen2.5-coder-1.5b \
//!     cargo run --release --example subagents -- "Ask the librarian which Rust files are in examples/."
//! ```

mod common;

use std::sync::Arc;

use toolscout_agent::{Agent, AgentConfig, AgentEvent, ChatClient, Policy, ToolScope};

fn main() -> anyhow::Result<()> {
    let Some((base_url, api_key, model)) = common::endpoint() else {
        return Ok(());
    };
    let question = std::env::args().nth(1).unwrap_or_else(|| {
        "Ask the librarian which Rust files are in the examples folder.".to_owned()
    });

    let (_catalog_dir, host) = common::builtin_host()?;

    let librarian = AgentConfig::builder("librarian", &model)
        .description("Finds and reads files in the workspace; give it a task in plain words.")
        .system_prompt("You find and read files. Answer with what you found.")
        .policy(Policy::Browse)
        .tool_scope(ToolScope::Only(vec![
            "read_file".to_owned(),
            "search_files".to_owned(),
        ]))
        .max_steps(6)
        .build()?;
    let coordinator = AgentConfig::builder("coordinator", &model)
        .system_prompt("You delegate file questions to the librarian and report its answer.")
        .tool_scope(ToolScope::None)
        .max_steps(4)
        .max_depth(2)
        .build()?;
    let agent = Agent::new(
        coordinator,
        ChatClient::new(&base_url, &api_key),
        Arc::new(host),
    )
    .with_subagent(librarian);

    let report = common::run(&agent, &question, |event| match event {
        AgentEvent::ToolCallStarted {
            agent,
            depth,
            tool,
            arguments,
            ..
        } => {
            eprintln!(
                "{:indent$}[{agent}] → {tool}({arguments})",
                "",
                indent = depth as usize * 2
            );
        }
        AgentEvent::FinalAnswer { agent, depth, text } => {
            eprintln!(
                "{:indent$}[{agent}] answered: {text}",
                "",
                indent = depth as usize * 2
            );
        }
        _ => {}
    })?;
    println!("{}", report.answer.unwrap_or_default());
    eprintln!("stopped: {:?} after {} steps", report.stop, report.steps);
    Ok(())
}
