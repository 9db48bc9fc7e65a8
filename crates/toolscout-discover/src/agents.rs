//! [`DiscoverAgents`]: specialist agents listed, described and detailed like tools.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolscout_spec::ToolSpec;

use crate::args::{Detail, DiscoverAgentsArgs};
use crate::tools::Answer;

const DESCRIPTION: &str = include_str!("../prompts/discover_agents.md");

/// A specialist agent, described at three levels like a tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentProfile {
    /// The agent's name (its tool name when it is exposed as a tool).
    pub name: String,
    /// Level 1: one line.
    pub summary: String,
    /// Category used to filter, e.g. `coding`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Level 2: when to delegate to it.
    #[serde(default)]
    pub when_to_use: String,
    /// Level 2: what it can do.
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// Level 2: what it cannot or must not do.
    #[serde(default)]
    pub constraints: Vec<String>,
    /// Level 3: its system prompt.
    #[serde(default)]
    pub system_prompt: String,
    /// Level 3: the tools it may use.
    #[serde(default)]
    pub tools: Vec<String>,
}

impl AgentProfile {
    /// A profile with its level-1 fields.
    pub fn new(name: impl Into<String>, summary: impl Into<String>) -> Self {
        AgentProfile {
            name: name.into(),
            summary: summary.into(),
            category: None,
            when_to_use: String::new(),
            capabilities: Vec::new(),
            constraints: Vec::new(),
            system_prompt: String::new(),
            tools: Vec::new(),
        }
    }

    /// Level 1: name and summary.
    pub fn level1(&self) -> Value {
        json!({"name": self.name, "summary": self.summary})
    }

    /// Level 2: when to use it, capabilities, constraints (each left out when empty:
    /// an empty field tells the model nothing).
    pub fn level2(&self) -> Value {
        let mut v = json!({"name": self.name, "summary": self.summary});
        if let Some(obj) = v.as_object_mut() {
            if !self.when_to_use.is_empty() {
                obj.insert("when_to_use".to_owned(), json!(self.when_to_use));
            }
            if !self.capabilities.is_empty() {
                obj.insert("capabilities".to_owned(), json!(self.capabilities));
            }
            if !self.constraints.is_empty() {
                obj.insert("constraints".to_owned(), json!(self.constraints));
            }
        }
        v
    }

    /// Level 3: level 2 plus system prompt (when it has one) and tools (always: an
    /// empty list says it has none).
    pub fn level3(&self) -> Value {
        let mut v = self.level2();
        if let Some(obj) = v.as_object_mut() {
            if !self.system_prompt.is_empty() {
                obj.insert("system_prompt".to_owned(), json!(self.system_prompt));
            }
            obj.insert("tools".to_owned(), json!(self.tools));
        }
        v
    }
}

/// The `discover_agents` meta-tool: lists specialist agents and describes them.
#[derive(Debug, Clone)]
pub struct DiscoverAgents {
    name: String,
    agents: Vec<AgentProfile>,
}

impl DiscoverAgents {
    /// `discover_agents` over `agents`.
    pub fn new(agents: Vec<AgentProfile>) -> Self {
        DiscoverAgents {
            name: "discover_agents".to_owned(),
            agents,
        }
    }

    /// Gives the tool another name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The agents it knows.
    pub fn agents(&self) -> &[AgentProfile] {
        &self.agents
    }

    /// This tool's own spec.
    pub fn spec(&self) -> crate::Result<ToolSpec> {
        Ok(ToolSpec::from_args::<DiscoverAgentsArgs>(
            &self.name,
            "Find a specialist agent to delegate a task to",
        )
        .description(DESCRIPTION.trim())
        .returns("object with a `kind`: agents, agent, unknown_agent or invalid")
        .example("List the agents", json!({}))
        .example("When to use an agent", json!({"agent": "researcher"}))
        .example(
            "Its system prompt and tools",
            json!({"agent": "researcher", "detail": "full"}),
        )
        .category("discover")
        .with_metadata(|m| {
            m.read_only = true;
            m.idempotent = true;
        })
        .build()?)
    }

    /// Answers one call.
    pub fn answer(&self, args: &Value) -> Answer {
        let args: DiscoverAgentsArgs = if args.is_null() {
            DiscoverAgentsArgs::default()
        } else {
            match serde_json::from_value(args.clone()) {
                Ok(a) => a,
                Err(e) => {
                    return plain(json!({
                        "kind": "invalid",
                        "message": format!("{e}. Arguments are optional: agent, detail (\"full\"), category"),
                    }));
                }
            }
        };
        let Some(name) = args.agent.as_deref() else {
            if args.detail.is_some() {
                return plain(json!({"kind": "invalid", "message": "`detail` needs `agent`"}));
            }
            let list: Vec<Value> = self
                .agents
                .iter()
                .filter(|a| {
                    args.category
                        .as_deref()
                        .is_none_or(|c| a.category.as_deref() == Some(c))
                })
                .map(AgentProfile::level1)
                .collect();
            return plain(json!({"kind": "agents", "agents": list}));
        };
        match self.agents.iter().find(|a| a.name == name) {
            Some(a) => {
                let (level, body) = if args.detail == Some(Detail::Full) {
                    (3, a.level3())
                } else {
                    (2, a.level2())
                };
                let mut reply = json!({"kind": "agent", "level": level});
                if let (Some(obj), Value::Object(fields)) = (reply.as_object_mut(), body) {
                    obj.extend(fields);
                }
                Answer {
                    reply,
                    disclosed: vec![a.name.clone()],
                }
            }
            None => {
                let names = toolscout_search::closest_names(
                    name,
                    self.agents.iter().map(|a| a.name.as_str()),
                );
                plain(json!({
                    "kind": "unknown_agent",
                    "agent": name,
                    "did_you_mean": names,
                    "message": format!("no agent named '{name}'"),
                }))
            }
        }
    }
}

fn plain(reply: Value) -> Answer {
    Answer {
        reply,
        disclosed: Vec::new(),
    }
}
