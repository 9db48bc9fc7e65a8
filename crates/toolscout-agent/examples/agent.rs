//! Runs the agent loop against a live OpenAI-compatible endpoint with the sample tools.
//!
//! ```sh
//! OPENAI_BASE_URL=https://api.openai.com/v1 OPENAI_API_KEY=sk-… TOOLSCOUT_MODEL=gpt-4o-mini \
//!     cargo run -p toolscout-agent --example agent -- "What's the weather in Oslo?"
//! ```
//!
//! `TOOLSCOUT_POLICY=upfront` offers every tool at once instead of browsing.

use std::io::Write as _;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use toolscout_agent::{
    Agent, AgentConfig, AgentEvent, Approval, ApprovalRequest, ChatClient, Policy, RunOptions,
    StaticHost,
};

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let (Ok(base_url), Ok(model)) = (
        std::env::var("OPENAI_BASE_URL"),
        std::env::var("TOOLSCOUT_MODEL"),
    ) else {
        eprintln!(
            "Set OPENAI_BASE_URL (e.g. https://api.openai.com/v1), OPENAI_API_KEY and TOOLSCOUT_MODEL to run this example."
        );
        return Ok(());
    };
    let api_key = std::env::var("OPENAI_API_KEY").unwrap_or_default();
    let policy = match std::env::var("TOOLSCOUT_POLICY").as_deref() {
        Ok("upfront") => Policy::Upfront,
        _ => Policy::Browse,
    };
    let question = std::env::args().nth(1).unwrap_or_else(|| {
        "What's the weather in Oslo, and the forecast for the next 3 days?".to_owned()
    });

    let config = AgentConfig::builder("assistant", model)
        .system_prompt("You are a helpful assistant. Use tools when they help.")
        .policy(policy)
        .max_steps(10)
        .build()?;
    let agent = Agent::new(
        config,
        ChatClient::new(&base_url, &api_key),
        Arc::new(sample_host()),
    )
    // Ask nobody: refuse every call that needs approval.
    .with_approver(Arc::new(|_: &ApprovalRequest| {
        Approval::Refused(Some("this example approves nothing".to_owned()))
    }));

    let (tx, mut rx) = mpsc::unbounded_channel();
    let printer = tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            match event {
                AgentEvent::TextDelta { text, .. } => {
                    print!("{text}");
                    let _ = std::io::stdout().flush();
                }
                AgentEvent::ToolCallStarted {
                    tool, arguments, ..
                } => {
                    eprintln!("→ {tool}({arguments})");
                }
                AgentEvent::ToolCallFinished { tool, ok, .. } => eprintln!("← {tool}: ok={ok}"),
                AgentEvent::Activated { tool, evicted, .. } => {
                    eprintln!("+ activated {tool} (evicted: {evicted:?})");
                }
                _ => {}
            }
        }
    });
    let report = agent
        .run(&question, RunOptions::default().with_events(tx))
        .await;
    printer.await?;
    println!();
    eprintln!(
        "stop: {:?} · steps: {} · tokens: {} prompt + {} completion{}",
        report.stop,
        report.steps,
        report.usage.prompt_tokens,
        report.usage.completion_tokens,
        if report.usage.estimated {
            " (estimated)"
        } else {
            ""
        }
    );
    Ok(())
}

/// The sample catalog with toy implementations of the weather tools.
fn sample_host() -> StaticHost {
    let mut host = StaticHost::default();
    for spec in toolscout_spec::sample::catalog() {
        host = match spec.name.as_str() {
            "get_weather" => host.tool(spec, |args: Value| async move {
                Ok(json!({"city": args["city"], "temperature": 21, "conditions": "sunny", "wind_kph": 9}))
            }),
            "weather.forecast" => host.tool(spec, |args: Value| async move {
                let days = args["days"].as_u64().unwrap_or(3);
                Ok(json!((1..=days).map(|d| json!({"day": d, "high": 20 + d, "low": 12, "conditions": "clear"})).collect::<Vec<_>>()))
            }),
            _ => host.specs([spec]),
        };
    }
    host
}
