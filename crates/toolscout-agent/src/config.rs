//! [`AgentConfig`]: who an agent is and how its loop behaves.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Which tools the model sees at the start of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// Every enabled tool's schema in the tools array: the baseline.
    Upfront,
    /// Only the `discover_*` tools and `call_tool`. A tool the model has disclosed at
    /// level 2 or 3 is activated: its schema is appended to the tools array (never
    /// reordered, so a provider's prompt cache stays valid), up to
    /// [`AgentOptions::activation_cap`](crate::AgentOptions::activation_cap) tools, least recently used evicted first.
    Browse,
    /// [`Policy::Browse`], and before the first request the host searches the catalog
    /// with each user message and activates its [`AgentOptions::retrieve_top_k`](crate::AgentOptions::retrieve_top_k) best
    /// tools, so the tools the request most likely needs are native tools from the
    /// start; `discover_*` stays as the fallback (without `call_tool`: what it finds is
    /// activated, and a tool called by name runs even when it is not). Later user
    /// messages search again and append.
    ///
    /// **Rationale:** small models call tools reliably only when the tools sit in their
    /// tools array; told to search first, a 1.5B model guessed names or answered from
    /// memory (6% success over 1,974 BFCL tools, against 92% with the right tools
    /// offered). The same retrieve-then-offer step is rig's `dynamic_tools`, Spring AI's
    /// `PreSelectToolCallAdvisor` and Semantic Kernel's contextual function selection.
    #[default]
    Retrieve,
}

impl Policy {
    /// Whether the run starts with the discover tools and activates what they find
    /// (`Browse` and `Retrieve`).
    pub fn browses(self) -> bool {
        matches!(self, Policy::Browse | Policy::Retrieve)
    }
}

/// Whether the model must call a tool.
///
/// **Rationale for the default:** with Qwen2.5-Coder-1.5B over the whole BFCL catalog
/// (1,974 tools, 50 tasks, `eval agent`), the retrieve policy called the right tool in
/// 0.68 of the tasks under `Auto` (top 5) and 0.76 under `RequiredAfterActivation`
/// (top 3): four of `Auto`'s sixteen misses were answers that wrote the call as text,
/// which a required call turns into a call. On 50 BFCL irrelevance tasks (each over its
/// own offered tools, none of which fits) it abstained in 0.50 of them, against 0.54
/// under `Auto` (both top 3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolChoice {
    /// `tool_choice` is left to the endpoint (`auto`): the model may answer in text.
    Auto,
    /// `tool_choice: "required"` on the request that follows new activations, while no
    /// real tool (other than `discover_*`) has been called yet, and `auto` after. The
    /// tools array then also holds [`ANSWER_TOOL`](crate::ANSWER_TOOL), whose call is the
    /// final answer, so a model that must call a tool can still decline them all.
    ///
    /// **Rationale:** servers that constrain a required reply to a call of a listed
    /// tool (llama.cpp's grammar) turn "saw the right tool, answered from memory"
    /// into a call; the answer tool keeps the model's ability to decline.
    ///
    /// A required request shows neither the finders nor the policy's guidance (when to
    /// call, how to find other tools): the model must call a tool it was given or
    /// decline. With Qwen2.5-Coder-1.5B on the 33 of 50 MetaTool tasks whose first
    /// request is required, leaving the guidance out kept the right calls at 23 and cut
    /// the prompt tokens from 618 to 539 a task.
    ///
    /// Every retrieval that activated a tool requires a call, however unsure the host
    /// is of it ([`crate::Retrieval::confidence`]). A confidence floor under which the
    /// model was left free to answer in text was an option until no dev set wanted one:
    /// the model answered in text on requests its tools could serve, and such a request
    /// cost more (it shows the finders and the guidance, which a required request leaves
    /// out). With Qwen2.5-Coder-1.5B (`toolscout eval agent --limit 50`, the tasks whose
    /// best tool scored under a floor of 0.3, each run both ways): MetaTool's 16 made 4
    /// right calls instead of 2 at 601 prompt tokens a task instead of 924; BFCL's 32
    /// irrelevance tasks of the 50 abstained in 25 instead of 24 at 753 tokens instead
    /// of 879 (the model declines with the answer tool).
    #[default]
    RequiredAfterActivation,
}

/// Which of the host's tools an agent may use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolScope {
    /// All of them.
    #[default]
    All,
    /// Only these tools (by tool name); the meta tools (`discover_*`, `call_tool`) stay
    /// available, but disclosing or calling another tool is refused.
    Only(Vec<String>),
    /// None: the agent only talks (and delegates, when it has sub-agents).
    None,
}

impl ToolScope {
    /// Whether the scope lets the agent use `tool`.
    pub fn allows(&self, tool: &str) -> bool {
        match self {
            ToolScope::All => true,
            ToolScope::Only(names) => names.iter().any(|n| n == tool),
            ToolScope::None => false,
        }
    }
}

/// An agent: who it is (name, description, category, instructions, model) and how it
/// runs ([`AgentOptions`]: policy, limits, the retrieval and grounding switches).
///
/// Build one with [`AgentConfig::builder`], which checks it; a config cannot be changed
/// afterwards except through [`AgentConfig::to_builder`], so every config an
/// [`Agent`](crate::Agent) runs has passed the checks (a deserialized one too). A config
/// is also what makes a specialist agent callable as a tool (see
/// [`crate::Agent::with_subagent`]): its name becomes the tool name and its description
/// the tool description.
///
/// ```
/// use toolscout_agent::{AgentConfig, AgentOptions, Policy};
///
/// let config = AgentConfig::builder("helper", "qwen2.5-coder-1.5b")
///     .policy(Policy::Browse)
///     .max_steps(8)
///     .build()?;
/// assert_eq!(config.options().max_steps, 8);
///
/// // Options as one value, e.g. kept from another config.
/// let mut options = AgentOptions::default();
/// options.stream = false;
/// let other = AgentConfig::builder("other", "qwen2.5-coder-1.5b").options(options).build()?;
/// assert!(!other.options().stream);
///
/// // Out of range: the builder says why.
/// assert!(config.to_builder().max_steps(0).build().is_err());
/// # Ok::<(), toolscout_agent::Error>(())
/// ```
///
/// Read from JSON (or any serde format that keeps field names), `name` and `model` are
/// required and every other field takes its default; the options sit beside the
/// identity, flattened, so a key that names no field is ignored rather than refused
/// (check the spelling of what you set). A config the builder would refuse fails to read,
/// with the builder's reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawAgentConfig")]
pub struct AgentConfig {
    /// Name; as a sub-agent, the tool name (a-z, A-Z, 0-9, `_`, `-`, at most 64).
    pub(crate) name: String,
    /// What the agent is for; as a sub-agent, the tool description.
    pub(crate) description: String,
    /// As a sub-agent, the category `discover_agents` lists it under (e.g. `research`),
    /// if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) category: Option<String>,
    /// The system prompt. Under [`Policy::Browse`] the browse-first guidance is
    /// appended to it.
    pub(crate) system_prompt: String,
    /// Model name sent to the endpoint.
    pub(crate) model: String,
    /// How it runs.
    #[serde(flatten)]
    pub(crate) options: AgentOptions,
}

/// How an agent runs: which tools the model sees first and may use, its limits, and
/// the switches of retrieval, needs and grounding. Part of an [`AgentConfig`]; start from
/// [`AgentOptions::default`](crate::AgentOptions::default) (the defaults [`AgentConfig::builder`] documents) and set
/// what you need. More options may come in any release (`#[non_exhaustive]`); a field
/// missing from a serialized config takes its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct AgentOptions {
    /// Which tools the model sees first.
    pub policy: Policy,
    /// Which tools it may use.
    pub tool_scope: ToolScope,
    /// Model requests per run before the run stops with [`crate::StopReason::MaxSteps`].
    pub max_steps: u32,
    /// Tokens (prompt + completion, summed over steps) per run; `None` is unlimited.
    pub max_tokens: Option<u64>,
    /// How long one tool call may take, unless its `metadata.timeout_seconds` says.
    pub tool_timeout: Duration,
    /// How many tools may be activated at once under [`Policy::Browse`] and
    /// [`Policy::Retrieve`].
    pub activation_cap: usize,
    /// How many tools [`Policy::Retrieve`] activates for each user message.
    #[serde(default = "default_top_k")]
    pub retrieve_top_k: usize,
    /// How many of the best tools a `discover_*` search finds, or an `unknown_tool`
    /// error suggests, are activated (0: only tools described at level 2 or 3 are).
    ///
    /// **Rationale:** a search hit the model has read is one it may call next; made a
    /// native tool, the call needs no `describe` round trip (as a tool reference expands
    /// into a full definition in Anthropic's tool search).
    #[serde(default = "default_activate_hits")]
    pub activate_hits: usize,
    /// Under [`Policy::Retrieve`], how many other tools of the server (the bundle: an
    /// API's or an MCP server's tools) that a user message's best tool belongs to are
    /// offered compactly beside the retrieved tools, best first for the message (see
    /// [`ToolHost::server_tools`](crate::ToolHost::server_tools)): by name, summary and
    /// parameters' names and types, for about a sixth of a whole schema's tokens; a call
    /// of one is checked against its full schema and offers it whole from then on. 0
    /// offers none.
    ///
    /// **Rationale:** a request names an outcome, and a task that needs one tool of a
    /// server often needs several of it ("put the summary in a slide deck": create,
    /// add, save), which share few words with the request. On MCP-Bench's 71 tasks
    /// (28 servers, 257 tools) the best hit's server was a server the task needs in 59;
    /// its ten best tools beside the top three raised the share of each task's tools
    /// in the first array from 0.40 to 0.65 (search hits, no model).
    #[serde(default = "default_server_tools")]
    pub server_tools: usize,
    /// Whether the model must call a tool after activations.
    #[serde(default)]
    pub tool_choice: ToolChoice,
    /// Refuse a call of a catalog tool when a required argument's value is nowhere in
    /// what the user said or a tool returned (the model made it up), with an
    /// `ungrounded_arguments` error that tells the model to ask the user instead. The
    /// check is lenient: a text passes when one of its words was said, a number when it
    /// was said (as digits, a word, or a percentage) or is 0 or 1, a list or object when
    /// one of its parts passes; what the user implied passes too (a code for a named
    /// thing: "en" for English, "JP" for Japan, "MSFT" for Microsoft; a number in another
    /// unit; a date when the user named the day: "tomorrow"); `enum`, `const` and
    /// `default` values, booleans and optional parameters always pass. Every policy's
    /// catalog tools are checked (`Upfront`'s too); discover tools, `answer` and
    /// sub-agents are not.
    /// The same call made again unchanged runs: the model confirms a value the user gave
    /// in other words ("the capital of France" called as "Paris"). On by default.
    ///
    /// **Rationale:** a small model offered a tool that is only on the subject of a
    /// request calls it anyway and makes up what the request does not say ("find me a
    /// train" → from New York to Boston on some date); no question put to it beforehand
    /// told those apart (asking it whether a tool fits turned fitting ones down too), but the made-up values are
    /// rarely anywhere in the conversation. With Qwen2.5-Coder-1.5B over the BFCL catalog
    /// (`toolscout eval agent --limit 50`, one run each): without the check the right tool
    /// was called in 0.86 of 50 tool tasks (2,362 prompt tokens per task) and no tool ran
    /// in 0.54 of 50 irrelevance tasks; with it, 0.84 (2,250 tokens) and 0.76. The model
    /// called an unfitting tool as often (abstention counted as "no call made" stayed at
    /// 0.52), but after each of the 12 refusals there it answered in text, mostly asking
    /// for what was missing, and never made the refused call again. In the tool tasks 3
    /// calls were refused: 2 of a wrong tool, and 1 with a made-up heat capacity beside
    /// two converted values (0 °C as 273 K). On the ten no-tool prompts over the whole
    /// catalog, no tool ran in 0.70 (0.60 before).
    #[serde(default = "default_ground_arguments")]
    pub ground_arguments: bool,
    /// Under [`Policy::Retrieve`], split a user message into the needs it states
    /// ([`crate::needs::split_needs`]: sentences, "also", "then", list items…) and
    /// search for each beside the whole message, so that a request for several things
    /// gets a tool for each. A need whose own search is unsure and leads to another
    /// server than the whole message's best tool is of is searched within that server
    /// instead ([`ToolHost::server_of`](crate::ToolHost::server_of)). On by default.
    #[serde(default = "default_split_needs")]
    pub split_needs: bool,
    /// Under [`Policy::Retrieve`], a request of several needs (see
    /// [`split_needs`](Self::split_needs)) is followed through: after a step whose
    /// calls served a need, after an answer that follows a successful call, and after
    /// a forced first request declined (answered with no call) when two or more needs'
    /// own searches found tools, the first need that no call has served yet is put to
    /// the model, in a system message ("The request also asks: …"), and the run goes
    /// on (at most four times a run); under [`ToolChoice::RequiredAfterActivation`] the
    /// next request requires a call and shows only that need's best tool and the answer
    /// tool (which declines). The answer is final once no such need is left. One
    /// successful call serves one need: the one just put to the model if it is one of
    /// its tools, else the need it ranks highest for. A need is put with its best tool
    /// that has not run yet; once its best tool has run (for this need or another),
    /// only with a next tool of that tool's server, and not at all when it has none;
    /// if that call is refused for
    /// arguments the request does not give (see
    /// [`ground_arguments`](Self::ground_arguments)), the need is put again at once with
    /// its next tool; so is the need a refused call of the first request ranks its tool
    /// highest for. Once every need followed up has been served and the last calls
    /// succeeded, the request that closes the run shows no tools and ends by asking for
    /// the answer in plain text. So does the request after a step whose calls
    /// succeeded, one of them a real call, on a request of one need (when the step found
    /// no other tools). A request
    /// sends the last need put to the model, not the ones before it (the calls that
    /// follow each answer it); the run's transcript keeps them all.
    ///
    /// **Rationale:** a small model given a request of three things calls the tool for
    /// the first and answers; the tools for the others are in its array, unused. Asked
    /// only after it answered, each need costs two requests. A tool found second for a
    /// need ("once I have the cooking time, the food waste figures") was found for the
    /// words it shares with another need, and one tool may serve two needs with two
    /// calls. Shown two or three tools for a need, the model picks a weaker one more
    /// often than it is right to, and a call refused for a made-up value was the wrong
    /// tool in every such call of 21 traced Seal-Tools tasks. In those tasks, and in 23
    /// BFCL and MetaTool requests of several needs, the request after the last need
    /// was served never made a call; paired on 8 Seal-Tools tasks, showing only the
    /// answer tool there left every call as it was and cut prompt tokens by 17 %. A
    /// request of one need is the same case, and the common one: with a tool of no
    /// parameters (MetaTool) the second request, which repeated the whole array and the
    /// guidance, cost more than the oracle's whole run; closing it (no tools, no
    /// guidance: 96 prompt tokens instead of 700 in a traced task) took MetaTool's
    /// prompt tokens from 1,060 to 897 a task at the same successes (50 tasks, paired,
    /// against closing only after a required call), and from 1,384 before either. What
    /// it gives up: a second call the model would have made on its own after a first
    /// that succeeded, for a need the split did not see (e.g. two cities' weather in one
    /// sentence, when the model calls one per step). Shown no tools and not told to
    /// answer, the model wrote a call as JSON text for its answer in 3 of 50 MetaTool
    /// runs; asked to answer in plain text, it answered in each (replayed), at 23
    /// tokens; shown only the answer tool, as before, it gave an empty answer in 2 of
    /// them and called a tool it was not shown in the third.
    #[serde(default = "default_follow_needs")]
    pub follow_needs: bool,
    /// Under [`Policy::Retrieve`], a user message of several needs (see
    /// [`split_needs`](Self::split_needs)) is first put to the model with
    /// `prompts/agent_plan.md`, which asks for the tools it needs, one line per step, as
    /// what each does ("create a slide deck"); those lines, not the message's sentences,
    /// are its needs, searched and followed up. One request more a run; off by default.
    ///
    /// **Rationale:** a request names the outcome, not the tools ("put the summary in a
    /// slide deck" needs a create and a save): its sentences are often no step at all
    /// ("Hey, I'm tinkering with a new snack idea"), and the steps they leave unsaid are
    /// found by no search of their words.
    #[serde(default)]
    pub plan_needs: bool,
    /// Under [`Policy::Retrieve`] and [`Policy::Browse`], the model may ask for a tool it
    /// does not have by writing a line `NEED: <what the tool does>`
    /// (`prompts/agent_tool_request.md`, added to the policy's guidance): each such line
    /// (at most [`MAX_TOOL_REQUESTS`](crate::MAX_TOOL_REQUESTS) a run) is searched, its
    /// best tools activated with their server's others offered compactly
    /// ([`server_tools`](Self::server_tools)), and, when the model asked in place of an
    /// answer, the next request requires a call of one of them (or the answer tool). Off
    /// by default.
    ///
    /// **Rationale:** the request names the outcome, not the tools, and the first
    /// retrieval cannot see the steps the work shows later ("now save the deck"); a small
    /// model almost never calls `discover_tools` for them, and a line of text is the
    /// cheapest way to say what it lacks (MCP-Zero, arXiv 2506.01056, has the model write
    /// such requests whenever it needs a tool).
    #[serde(default)]
    pub tool_requests: bool,
    /// Under [`Policy::Retrieve`], a last user message that is not in English (see
    /// [`language::detect`](crate::language::detect)) is first put to the model with
    /// `prompts/agent_translate.md`, which asks for the same request in English; the
    /// catalog is searched with that text, and its needs (see
    /// [`split_needs`](Self::split_needs)) are the ones followed up. The conversation
    /// keeps the user's own words, which the model answers; grounding (see
    /// [`ground_arguments`](Self::ground_arguments)) checks calls against them and the
    /// English text, so that "London" passes for "Londres". One request more a run, only
    /// for such a message; a message in English changes nothing. A text that is not the
    /// request in English — not English, or keeping fewer than half of the message's
    /// codes and numbers, as when the model answered the request ("Sure, please provide the
    /// request.") — is not searched: the model is asked once more, with the message put
    /// as a text to translate (`prompts/agent_translate_again.md`), and when that fails
    /// too the message's own words are. On by default.
    ///
    /// **Rationale:** search stems English and its encoders are English: a request in
    /// another language finds tools by the names, numbers and cognates it shares with
    /// them, and little by meaning. Hand-translated BFCL and Seal-Tools requests against
    /// the English catalogs (`toolscout eval search`, 13 and 12 requests a language):
    /// recall@5 English 0.85 and 0.97, Spanish 0.38 and 0.42, German 0.38 and 0.44,
    /// French 0.46 and 0.56, Chinese 0.23 and 0.14. The agent has a model at hand, and
    /// a small one writes a request over in English well enough to search with.
    #[serde(default = "default_translate_requests")]
    pub translate_requests: bool,
    /// Whether to stream responses (server-sent events).
    pub stream: bool,
    /// How deep sub-agents may nest: 0 means this agent may not delegate.
    pub max_depth: u32,
    /// Extra request fields (`temperature`, `max_completion_tokens`,
    /// `parallel_tool_calls`, `reasoning_effort`…), sent as they are. The loop's own
    /// fields (`model`, `messages`, `tools`, `stream`, `stream_options`) win.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub request_params: serde_json::Map<String, serde_json::Value>,
}

/// What a serialized [`AgentConfig`] is read as, then checked.
#[derive(Deserialize)]
struct RawAgentConfig {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    system_prompt: String,
    model: String,
    #[serde(flatten)]
    options: AgentOptions,
}

impl TryFrom<RawAgentConfig> for AgentConfig {
    type Error = Error;

    fn try_from(raw: RawAgentConfig) -> Result<Self> {
        let config = AgentConfig {
            name: raw.name,
            description: raw.description,
            category: raw.category,
            system_prompt: raw.system_prompt,
            model: raw.model,
            options: raw.options,
        };
        config.check()?;
        Ok(config)
    }
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            policy: Policy::default(),
            tool_scope: ToolScope::default(),
            max_steps: 16,
            max_tokens: None,
            tool_timeout: Duration::from_secs(60),
            activation_cap: toolscout_discover::DEFAULT_ACTIVATION_CAP,
            retrieve_top_k: DEFAULT_RETRIEVE_TOP_K,
            activate_hits: DEFAULT_ACTIVATE_HITS,
            server_tools: DEFAULT_SERVER_TOOLS,
            tool_choice: ToolChoice::default(),
            ground_arguments: default_ground_arguments(),
            split_needs: default_split_needs(),
            follow_needs: default_follow_needs(),
            plan_needs: false,
            tool_requests: false,
            translate_requests: default_translate_requests(),
            stream: true,
            max_depth: 2,
            request_params: serde_json::Map::new(),
        }
    }
}

fn default_top_k() -> usize {
    DEFAULT_RETRIEVE_TOP_K
}

fn default_ground_arguments() -> bool {
    true
}

fn default_follow_needs() -> bool {
    true
}

fn default_split_needs() -> bool {
    true
}

fn default_translate_requests() -> bool {
    true
}

fn default_activate_hits() -> usize {
    DEFAULT_ACTIVATE_HITS
}

fn default_server_tools() -> usize {
    DEFAULT_SERVER_TOOLS
}

/// The default of [`AgentOptions::server_tools`](crate::AgentOptions::server_tools).
pub const DEFAULT_SERVER_TOOLS: usize = 10;

/// The most `NEED:` lines one run searches ([`AgentOptions::tool_requests`](crate::AgentOptions::tool_requests)).
pub const MAX_TOOL_REQUESTS: usize = 4;

/// The default of [`AgentOptions::retrieve_top_k`](crate::AgentOptions::retrieve_top_k).
///
/// **Rationale:** on the BFCL run above, the right tool was among the top 3 in 0.94 of
/// the tasks and among the top 5 in 0.98, and 3 cost about 200 fewer prompt tokens a
/// request; the model's wrong picks were near-twins of the right tool, which more
/// tools only add.
pub const DEFAULT_RETRIEVE_TOP_K: usize = 3;
/// The default of [`AgentOptions::activate_hits`](crate::AgentOptions::activate_hits).
pub const DEFAULT_ACTIVATE_HITS: usize = toolscout_discover::DEFAULT_ACTIVATE_HITS;

impl AgentConfig {
    /// Starts a config with defaults: retrieve policy (3 tools per user message), a
    /// tool call required after activations (see [`ToolChoice`]), the best 3 search
    /// hits activated, 16 steps, no token limit, 60 s tool timeout,
    /// 16 activated tools, streaming, sub-agents two deep.
    pub fn builder(name: impl Into<String>, model: impl Into<String>) -> AgentConfigBuilder {
        AgentConfigBuilder {
            config: AgentConfig {
                name: name.into(),
                description: String::new(),
                category: None,
                system_prompt: String::new(),
                model: model.into(),
                options: AgentOptions::default(),
            },
        }
    }
}

/// Builds an [`AgentConfig`]; see [`AgentConfig::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct AgentConfigBuilder {
    config: AgentConfig,
}

impl AgentConfigBuilder {
    /// Sets the description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.config.description = description.into();
        self
    }
    /// Sets the category a sub-agent is listed under by `discover_agents`.
    pub fn category(mut self, category: impl Into<String>) -> Self {
        self.config.category = Some(category.into());
        self
    }
    /// Sets the system prompt.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.config.system_prompt = prompt.into();
        self
    }
    /// Sets the policy.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.config.options.policy = policy;
        self
    }
    /// Sets the tool scope.
    pub fn tool_scope(mut self, scope: ToolScope) -> Self {
        self.config.options.tool_scope = scope;
        self
    }
    /// Sets the step limit.
    pub fn max_steps(mut self, steps: u32) -> Self {
        self.config.options.max_steps = steps;
        self
    }
    /// Sets the token limit per run.
    pub fn max_tokens(mut self, tokens: u64) -> Self {
        self.config.options.max_tokens = Some(tokens);
        self
    }
    /// Sets the default timeout of a tool call.
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.config.options.tool_timeout = timeout;
        self
    }
    /// Sets how many tools may be activated at once.
    pub fn activation_cap(mut self, cap: usize) -> Self {
        self.config.options.activation_cap = cap;
        self
    }
    /// Sets how many tools [`Policy::Retrieve`] activates per user message.
    pub fn retrieve_top_k(mut self, k: usize) -> Self {
        self.config.options.retrieve_top_k = k;
        self
    }
    /// Sets how many of a search's best hits (or an unknown name's suggestions) are
    /// activated.
    pub fn activate_hits(mut self, n: usize) -> Self {
        self.config.options.activate_hits = n;
        self
    }
    /// Sets how many other tools of the best tool's server are offered compactly
    /// ([`AgentOptions::server_tools`](crate::AgentOptions::server_tools); 0: none).
    pub fn server_tools(mut self, n: usize) -> Self {
        self.config.options.server_tools = n;
        self
    }
    /// Sets whether the model must call a tool after activations.
    pub fn tool_choice(mut self, choice: ToolChoice) -> Self {
        self.config.options.tool_choice = choice;
        self
    }
    /// Sets whether a call whose required arguments the conversation did not give is
    /// refused (see [`AgentOptions::ground_arguments`](crate::AgentOptions::ground_arguments)).
    pub fn ground_arguments(mut self, check: bool) -> Self {
        self.config.options.ground_arguments = check;
        self
    }
    /// Sets whether a message is searched need by need (see
    /// [`AgentOptions::split_needs`](crate::AgentOptions::split_needs)).
    pub fn split_needs(mut self, split: bool) -> Self {
        self.config.options.split_needs = split;
        self
    }
    /// Sets whether an answer that leaves a need of the request unserved is followed up
    /// (see [`AgentOptions::follow_needs`](crate::AgentOptions::follow_needs)).
    pub fn follow_needs(mut self, follow: bool) -> Self {
        self.config.options.follow_needs = follow;
        self
    }
    /// Sets whether a message of several needs is first put to the model for the tools
    /// it needs ([`AgentOptions::plan_needs`](crate::AgentOptions::plan_needs)).
    pub fn plan_needs(mut self, plan: bool) -> Self {
        self.config.options.plan_needs = plan;
        self
    }
    /// Sets whether the model may ask for tools it lacks with `NEED:` lines
    /// ([`AgentOptions::tool_requests`](crate::AgentOptions::tool_requests)).
    pub fn tool_requests(mut self, on: bool) -> Self {
        self.config.options.tool_requests = on;
        self
    }
    /// Sets whether a message not in English is first written in English by the model
    /// for the search ([`AgentOptions::translate_requests`](crate::AgentOptions::translate_requests)).
    pub fn translate_requests(mut self, on: bool) -> Self {
        self.config.options.translate_requests = on;
        self
    }
    /// Turns streaming on or off.
    pub fn stream(mut self, stream: bool) -> Self {
        self.config.options.stream = stream;
        self
    }
    /// Sets how deep sub-agents may nest.
    pub fn max_depth(mut self, depth: u32) -> Self {
        self.config.options.max_depth = depth;
        self
    }
    /// Adds an extra request field, e.g. `("temperature", json!(0.2))`.
    pub fn request_param(mut self, key: impl Into<String>, value: serde_json::Value) -> Self {
        self.config.options.request_params.insert(key.into(), value);
        self
    }
    /// Sets every option at once (the identity stays as it is).
    pub fn options(mut self, options: AgentOptions) -> Self {
        self.config.options = options;
        self
    }
    /// Checks the config and returns it: the name must be a legal function name, the
    /// model named, `max_steps` at least 1, and the browse and retrieve policies need an
    /// activation cap of at least 1.
    pub fn build(self) -> Result<AgentConfig> {
        self.config.check()?;
        Ok(self.config)
    }
}

impl AgentConfig {
    /// Name; as a sub-agent, the tool name (a-z, A-Z, 0-9, `_`, `-`, at most 64).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// What the agent is for; as a sub-agent, the tool description.
    pub fn description(&self) -> &str {
        &self.description
    }
    /// As a sub-agent, the category `discover_agents` lists it under, if any.
    pub fn category(&self) -> Option<&str> {
        self.category.as_deref()
    }
    /// The system prompt (a policy's guidance is appended to it when the run starts).
    pub fn system_prompt(&self) -> &str {
        &self.system_prompt
    }
    /// Model name sent to the endpoint.
    pub fn model(&self) -> &str {
        &self.model
    }
    /// How it runs.
    pub fn options(&self) -> &AgentOptions {
        &self.options
    }
    /// A builder holding this config, to change it and check it again.
    pub fn to_builder(&self) -> AgentConfigBuilder {
        AgentConfigBuilder {
            config: self.clone(),
        }
    }

    /// The builder's checks ([`AgentConfigBuilder::build`]).
    fn check(&self) -> Result<()> {
        let c = self;
        let err = |reason: &str| Error::Config {
            agent: c.name.clone(),
            reason: reason.to_owned(),
        };
        if !toolscout_spec::adapters::openai::is_legal(&c.name) {
            return Err(err(
                "the name must be a legal OpenAI function name (a-z, A-Z, 0-9, '_', '-', at most 64)",
            ));
        }
        if c.model.trim().is_empty() {
            return Err(err("the model must not be empty"));
        }
        if c.options.max_steps == 0 {
            return Err(err("max_steps must be at least 1"));
        }
        if c.options.activation_cap == 0 && c.options.policy.browses() {
            return Err(err(
                "the browse and retrieve policies need an activation cap of at least 1",
            ));
        }
        Ok(())
    }
}
