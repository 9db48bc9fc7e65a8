//! A model browses the built-in catalog with `discover_tools`, activates the tool it
//! described, and calls it for real: `read_file` on this repository's README.
//!
//! ```sh
//! # any OpenAI-compatible endpoint, e.g. llama.cpp's llama-server with a small local model
//! OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=none TOOLSCOUT_MODEL=qwen2.5-coder-1.5b \
//!     cargo run --release --example browse_agent -- "What are the two commands at the top of README.md?"
//! ```

mod common;

use std::io::Write as _;

use toolscout::agent::{Agent, AgentEvent, Policy, RunOptions};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let Some((base_url, api_key, model)) = common::endpoint() else {
        return Ok(());
    };
    let question = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "What does the first line of README.md say?".to_owned());

    let agent = Agent::builder("assistant", model)
        .endpoint(&base_url, &api_key)
        .toolbox(common::builtin_toolbox()?)
        .system_prompt("You are a helpful assistant. Find the right tool before you use it.")
        .policy(Policy::Browse)
        .config(|c| c.max_steps(8).stream(true))
        .on_event(|event| match event {
            AgentEvent::TextDelta { text, .. } => {
                print!("{text}");
                let _ = std::io::stdout().flush();
            }
            AgentEvent::ToolCallStarted {
                tool, arguments, ..
            } => eprintln!("→ {tool}({arguments})"),
            AgentEvent::ToolCallFinished { tool, ok, .. } => eprintln!("← {tool}: ok={ok}"),
            AgentEvent::Activated { tool, .. } => eprintln!("+ activated {tool}"),
            _ => {}
        })
        .build()?;

    let report = agent.run(&question, RunOptions::default()).await;
    println!();
    eprintln!(
        "stopped: {:?} after {} steps, {} prompt + {} completion tokens",
        report.stop, report.steps, report.usage.prompt_tokens, report.usage.completion_tokens
    );
    Ok(())
}
