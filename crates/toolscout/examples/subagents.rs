//! Specialist agents as tools: a coordinator finds a `librarian` sub-agent with
//! `discover_agents` (or calls it by name) and delegates file work to it; the librarian
//! may only use the file tools of the built-in catalog.
//!
//! ```sh
//! OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=none TOOLSCOUT_MODEL=qwen2.5-coder-1.5b \
//!     cargo run --release --example subagents -- "Ask the librarian which Rust files are in crates/toolscout/examples/."
//! ```

mod common;

use toolscout::agent::{Agent, AgentConfig, AgentEvent, Policy, RunOptions, ToolScope};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let Some((base_url, api_key, model)) = common::endpoint() else {
        return Ok(());
    };
    let question = std::env::args().nth(1).unwrap_or_else(|| {
        "Ask the librarian which Rust files are in the examples folder.".to_owned()
    });

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
    let agent = Agent::builder("coordinator", &model)
        .endpoint(&base_url, &api_key)
        .toolbox(common::builtin_toolbox()?)
        .system_prompt("You delegate file questions to the librarian and report its answer.")
        .config(|c| c.tool_scope(ToolScope::None).max_steps(4).max_depth(2))
        .subagent(librarian)
        .on_event(|event| match event {
            AgentEvent::ToolCallStarted {
                agent,
                depth,
                tool,
                arguments,
                ..
            } => {
                let indent = *depth as usize * 2;
                eprintln!("{:indent$}[{agent}] → {tool}({arguments})", "");
            }
            AgentEvent::FinalAnswer { agent, depth, text } => {
                let indent = *depth as usize * 2;
                eprintln!("{:indent$}[{agent}] answered: {text}", "");
            }
            _ => {}
        })
        .build()?;

    let report = agent.run(&question, RunOptions::default()).await;
    println!("{}", report.answer.unwrap_or_default());
    eprintln!("stopped: {:?} after {} steps", report.stop, report.steps);
    Ok(())
}
