//! The agent options `chat` and `eval agent` share: how tools reach the model.

use toolscout_agent::{
    AgentConfigBuilder, DEFAULT_ACTIVATE_HITS, DEFAULT_MARGIN, DEFAULT_RETRIEVE_TOP_K,
    DEFAULT_SERVER_TOOLS, DEFAULT_TWIN_SIMILARITY, Policy, ToolChoice, ToolboxHost,
};

/// `--tool-choice`: whether the model must call a tool after activations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ToolChoiceArg {
    /// The model may always answer in text.
    Auto,
    /// `tool_choice: "required"` on the request after new activations, until a real tool
    /// has been called; an `answer` tool lets the model decline.
    RequiredAfterActivation,
}

impl From<ToolChoiceArg> for ToolChoice {
    fn from(arg: ToolChoiceArg) -> Self {
        match arg {
            ToolChoiceArg::Auto => ToolChoice::Auto,
            ToolChoiceArg::RequiredAfterActivation => ToolChoice::RequiredAfterActivation,
        }
    }
}

impl ToolChoiceArg {
    /// The library's default, as a flag value.
    fn default_value() -> Self {
        match ToolChoice::default() {
            ToolChoice::Auto => ToolChoiceArg::Auto,
            ToolChoice::RequiredAfterActivation => ToolChoiceArg::RequiredAfterActivation,
        }
    }
}

/// How retrieved and found tools are activated; the defaults are the library's.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ActivationArgs {
    /// Tools the retrieve policy activates for each user message (searched with the message).
    #[arg(long, default_value_t = DEFAULT_RETRIEVE_TOP_K)]
    pub(crate) top_k: usize,
    /// How many of a search's best hits (or an unknown name's suggestions) are activated.
    #[arg(long, default_value_t = DEFAULT_ACTIVATE_HITS)]
    pub(crate) activate_hits: usize,
    /// How many other tools of the server (bundle) of a message's best tool the retrieve
    /// policy offers compactly (name, summary, parameters' names); 0 offers none.
    #[arg(long, default_value_t = DEFAULT_SERVER_TOOLS)]
    pub(crate) server_tools: usize,
    /// Whether the model must call a tool after new activations.
    #[arg(long, value_enum, default_value_t = ToolChoiceArg::default_value())]
    pub(crate) tool_choice: ToolChoiceArg,
    /// Refuse a call of a catalog tool whose required arguments the conversation did not
    /// give (the model invented them), telling the model to ask the user instead; the
    /// same call made again runs.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub(crate) ground_arguments: bool,
    /// When the model answers a request of several needs after serving only some, put
    /// the first need left to it once more (at most four times a run).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub(crate) follow_needs: bool,
    /// Before the first request on a message of several needs, ask the model for the
    /// tools it needs, one line per step, and search for those steps instead of the
    /// message's sentences (one request more a run).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub(crate) plan_needs: bool,
    /// Let the model ask for a tool it lacks with a line `NEED: <what the tool must do>`:
    /// the line is searched and its best tools are added (at most four a run).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub(crate) tool_requests: bool,
    /// Before the first request on a message that is not in English, ask the model for
    /// the same request in English and search with that (one request more, only for such
    /// a message).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub(crate) translate_requests: bool,
    /// How alike in meaning (0–1) a retrieved tool may be to a better one before it is
    /// dropped as a near-duplicate; 1 keeps them all.
    #[arg(long, default_value_t = DEFAULT_TWIN_SIMILARITY, value_parser = unit_interval)]
    pub(crate) twin_similarity: f32,
    /// How far behind the best retrieved tool in meaning (0–1) another may fall and still
    /// be offered; 1 offers them all.
    #[arg(long, default_value_t = DEFAULT_MARGIN, value_parser = unit_interval)]
    pub(crate) margin: f32,
}

/// A number from 0 to 1.
pub(crate) fn unit_interval(s: &str) -> Result<f32, String> {
    let v: f32 = s
        .parse()
        .map_err(|_| format!("'{s}' is not a number (expected 0 to 1)"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is outside 0 to 1"))
    }
}

impl ActivationArgs {
    /// Applies the options to an agent config.
    pub(crate) fn apply(&self, builder: AgentConfigBuilder) -> AgentConfigBuilder {
        builder
            .retrieve_top_k(self.top_k)
            .activate_hits(self.activate_hits)
            .server_tools(self.server_tools)
            .tool_choice(self.tool_choice.into())
            .ground_arguments(self.ground_arguments)
            .follow_needs(self.follow_needs)
            .plan_needs(self.plan_needs)
            .tool_requests(self.tool_requests)
            .translate_requests(self.translate_requests)
    }

    /// Applies the host-side options (twins and margin) to a host.
    pub(crate) fn apply_host(&self, host: ToolboxHost) -> ToolboxHost {
        host.with_twin_similarity((self.twin_similarity < 1.0).then_some(self.twin_similarity))
            .with_margin((self.margin < 1.0).then_some(self.margin))
    }
}

/// `--policy` of `chat`: which tools the model sees first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PolicyArg {
    /// The tools that best match each user message, plus the discover tools (the default).
    Retrieve,
    /// Only the discover tools and `call_tool`; tools it finds or describes are activated.
    Browse,
    /// Every tool's schema up front.
    Upfront,
}

impl From<PolicyArg> for Policy {
    fn from(arg: PolicyArg) -> Self {
        match arg {
            PolicyArg::Retrieve => Policy::Retrieve,
            PolicyArg::Browse => Policy::Browse,
            PolicyArg::Upfront => Policy::Upfront,
        }
    }
}

impl PolicyArg {
    /// The library's default, as a flag value.
    pub(crate) fn default_value() -> Self {
        match Policy::default() {
            Policy::Retrieve => PolicyArg::Retrieve,
            Policy::Browse => PolicyArg::Browse,
            Policy::Upfront => PolicyArg::Upfront,
        }
    }
}

/// `--agents FILE`: the specialist agents (sub-agents) of `chat` and of `serve`'s console
/// chat, from a JSON file.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct SubagentArgs {
    /// A JSON file of specialist agents the model may delegate to: an array of `{"name",
    /// "description", "category"?, "system_prompt"?, "model"?, "policy"?, "tools"?}`
    /// (`tools`: the tool names it may use; default all). Under the retrieve and browse
    /// policies the model finds them with `discover_agents`; under upfront each is a tool.
    #[arg(long = "agents", value_name = "FILE")]
    pub(crate) file: Option<std::path::PathBuf>,
}

/// One specialist in an `--agents` file.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SubagentEntry {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    system_prompt: String,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    policy: Option<String>,
    #[serde(default)]
    tools: Option<Vec<String>>,
}

impl SubagentArgs {
    /// The sub-agents of the file (none without `--agents`), on `model` unless an entry
    /// names its own; each checked as an agent config, the error naming the file and the
    /// agent.
    pub(crate) fn subagents(
        &self,
        model: &str,
        stream: bool,
    ) -> anyhow::Result<Vec<toolscout_agent::AgentConfig>> {
        use anyhow::Context as _;
        let Some(path) = &self.file else {
            return Ok(Vec::new());
        };
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading --agents {}", path.display()))?;
        let entries: Vec<SubagentEntry> = serde_json::from_str(&text).with_context(|| {
            format!(
                "reading --agents {}: expected a JSON array of {{\"name\", \"description\", \"category\"?, \"system_prompt\"?, \"model\"?, \"policy\"?, \"tools\"?}}",
                path.display()
            )
        })?;
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::with_capacity(entries.len());
        for entry in entries {
            if !seen.insert(entry.name.clone()) {
                anyhow::bail!(
                    "--agents {}: the agent '{}' is there twice; give each agent its own name",
                    path.display(),
                    entry.name
                );
            }
            let policy = match entry.policy.as_deref() {
                None => Policy::default(),
                Some("retrieve") => Policy::Retrieve,
                Some("browse") => Policy::Browse,
                Some("upfront") => Policy::Upfront,
                Some(other) => anyhow::bail!(
                    "--agents {}: agent '{}': unknown policy {other:?} (expected retrieve, browse or upfront)",
                    path.display(),
                    entry.name
                ),
            };
            let mut builder = toolscout_agent::AgentConfig::builder(
                entry.name.as_str(),
                entry.model.as_deref().unwrap_or(model),
            )
            .description(entry.description)
            .system_prompt(entry.system_prompt)
            .policy(policy)
            .stream(stream);
            if let Some(category) = entry.category {
                builder = builder.category(category);
            }
            if let Some(tools) = entry.tools {
                builder = builder.tool_scope(toolscout_agent::ToolScope::Only(tools));
            }
            out.push(
                builder
                    .build()
                    .with_context(|| format!("--agents {}", path.display()))?,
            );
        }
        Ok(out)
    }
}

/// Which model answers, and where: an OpenAI-compatible endpoint (`chat`, `enrich`).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct EndpointArgs {
    /// Model name (default: $TOOLSCOUT_MODEL).
    #[arg(long, env = "TOOLSCOUT_MODEL")]
    pub(crate) model: String,
    /// Base URL of an OpenAI-compatible endpoint, with its version (default: $OPENAI_BASE_URL).
    #[arg(
        long,
        env = "OPENAI_BASE_URL",
        default_value = "https://api.openai.com/v1"
    )]
    pub(crate) base_url: String,
    /// API key (default: $OPENAI_API_KEY; may be empty for local servers).
    #[arg(
        long,
        env = "OPENAI_API_KEY",
        default_value = "",
        hide_env_values = true
    )]
    pub(crate) api_key: String,
}
