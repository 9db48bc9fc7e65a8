//! `discover_agents`: specialist agents at three levels.

use insta::assert_snapshot;
use serde_json::json;
use toolscout_discover::{AgentProfile, DiscoverAgents};
use toolscout_spec::Level;

fn agents() -> DiscoverAgents {
    let mut researcher = AgentProfile::new("researcher", "Finds and summarises sources on a topic");
    researcher.category = Some("research".into());
    researcher.when_to_use = "A question needs several web sources read and compared".into();
    researcher.capabilities = vec!["web search".into(), "reading pages".into()];
    researcher.constraints = vec!["no file writes".into()];
    researcher.system_prompt = "You research a topic and answer with sources.".into();
    researcher.tools = vec!["web_search".into(), "http_get".into()];
    let mut coder = AgentProfile::new("coder", "Changes code in the workspace");
    coder.category = Some("coding".into());
    DiscoverAgents::new(vec![researcher, coder])
}

#[test]
fn levels() {
    let d = agents();
    assert_snapshot!(crate::show(&d.answer(&json!({}))), @r#"
    {
      "kind": "agents",
      "agents": [
        {
          "name": "researcher",
          "summary": "Finds and summarises sources on a topic"
        },
        {
          "name": "coder",
          "summary": "Changes code in the workspace"
        }
      ]
    }
    "#);
    assert_eq!(
        d.answer(&json!({"category": "coding"})).reply["agents"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let l2 = d.answer(&json!({"agent": "researcher"}));
    assert_eq!(l2.reply["level"], 2);
    assert!(l2.reply.get("system_prompt").is_none());
    assert_snapshot!(crate::show(
        &d.answer(&json!({"agent": "researcher", "detail": "full"}))
    ));
}

#[test]
fn unknown_agent_and_the_spec() {
    let d = agents();
    assert_snapshot!(crate::show(&d.answer(&json!({"agent": "reseacher"}))), @r#"
    {
      "kind": "unknown_agent",
      "agent": "reseacher",
      "did_you_mean": [
        "researcher"
      ],
      "message": "no agent named 'reseacher'"
    }
    "#);
    assert_snapshot!(d.spec().unwrap().disclose(Level::L2).to_text(), @r#"
    discover_agents()
    Find a specialist agent to delegate a task to. Call with no arguments to list the agents with a one-line summary (optionally `category` to narrow the list); `agent` for when to use it, its capabilities and constraints (the agent then joins your tools list under its name); `agent` with `detail: "full"` for its system prompt and tools. Delegate by calling the agent by its name with `{"task": "…"}`: it works on the task and answers.
    Parameters: agent, detail, category
    Returns: object with a `kind`: agents, agent, unknown_agent or invalid
    "#);
}
