//! Against a live endpoint: `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `TOOLSCOUT_MODEL`.

use std::sync::Arc;

use toolscout_agent::{Agent, AgentConfig, ChatClient, Policy, RunOptions, StopReason};

fn env() -> Option<(String, String, String)> {
    Some((
        std::env::var("OPENAI_BASE_URL").ok()?,
        std::env::var("OPENAI_API_KEY").unwrap_or_default(),
        std::env::var("TOOLSCOUT_MODEL").ok()?,
    ))
}

async fn live(policy: Policy, stream: bool) {
    let (base, key, model) =
        env().expect("set OPENAI_BASE_URL, OPENAI_API_KEY and TOOLSCOUT_MODEL");
    let config = AgentConfig::builder("assistant", model)
        .system_prompt("You are a helpful assistant. Use tools to answer.")
        .policy(policy)
        .stream(stream)
        .max_steps(8)
        .build()
        .unwrap();
    let agent = Agent::new(
        config,
        ChatClient::new(&base, &key),
        Arc::new(crate::host()),
    );
    let report = agent
        .run(
            "What is the weather in Oslo right now? Use the tools.",
            RunOptions::default(),
        )
        .await;
    crate::assert_paired(&report.messages);
    assert_eq!(
        report.stop,
        StopReason::Answer,
        "{}",
        crate::render(&report)
    );
    assert!(report.answer.unwrap_or_default().contains("21"));
}

#[tokio::test]
#[ignore = "requires OPENAI_BASE_URL, OPENAI_API_KEY and TOOLSCOUT_MODEL"]
async fn live_browse_streaming() {
    live(Policy::Browse, true).await;
}

#[tokio::test]
#[ignore = "requires OPENAI_BASE_URL, OPENAI_API_KEY and TOOLSCOUT_MODEL"]
async fn live_upfront_non_streaming() {
    live(Policy::Upfront, false).await;
}
