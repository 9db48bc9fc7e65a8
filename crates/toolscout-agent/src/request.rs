//! What one request of the loop asks: whether it requires a call ([`Forcing`]), which
//! tools it shows ([`Shown`]), and its body ([`request_body`]).

use serde_json::{Map, Value, json};
use toolscout_spec::tokens;

use crate::host::ANSWER_TOOL;
use crate::toolset::ToolSet;
use crate::wire::Completion;
use crate::{AgentConfig, Message, TokenUsage, ToolChoice};

/// How many requests of one run may say `tool_choice: "required"`.
///
/// **Rationale:** each activation asks for a call once; a model that keeps searching
/// (each search activating new hits) must not be forced forever.
pub(crate) const MAX_FORCED_REQUESTS: u32 = 3;

/// Whether the model must call a tool on the next request; see [`ToolChoice`].
#[derive(Debug, Default)]
pub(crate) struct Forcing {
    /// Tools were activated since the last request.
    pub(crate) activated: bool,
    /// A real tool (not a discover tool) has been called successfully.
    pub(crate) acted: bool,
    /// Requests that said `required` so far.
    pub(crate) forced: u32,
    /// The endpoint refused a request that said `required`: no more are made.
    pub(crate) refused: bool,
    /// The tools of a need left unserved that was just put to the model (see
    /// [`AgentOptions::follow_needs`](crate::AgentOptions::follow_needs)): they were found for it, so the next request
    /// requires a call even after earlier calls, and shows only them (and the answer
    /// tool, which still declines).
    pub(crate) follow_up: Option<Vec<String>>,
    /// An answer given before any call, reporting work no call did, was questioned (see
    /// `Run::answered`); once a run.
    pub(crate) questioned: bool,
    /// The best tool retrieved for the last user message, named when an answer is
    /// questioned.
    pub(crate) best: Option<String>,
    /// The last user message asked for one thing: once a call serves it, the run
    /// closes (see [`AgentOptions::follow_needs`](crate::AgentOptions::follow_needs)).
    pub(crate) one_need: bool,
    /// Every need of the request has been served by a call that succeeded: the next
    /// request closes the run, and shows no tools (see [`AgentOptions::follow_needs`](crate::AgentOptions::follow_needs)).
    pub(crate) closing: bool,
}

/// The tools a request shows.
#[derive(Debug, PartialEq)]
pub(crate) enum Shown {
    /// The whole array (without the finders when a call is required).
    All,
    /// Only these, when any of them is still in the array (a need followed up, and the
    /// answer tool to decline it).
    Only(Vec<String>),
    /// None: the request that closes the run asks for the answer only.
    Nothing,
}

impl Forcing {
    /// Whether the next request says `tool_choice: "required"` (counted if so), and
    /// the tools it shows.
    pub(crate) fn next_request(&mut self, config: &AgentConfig) -> (bool, Shown) {
        let follow_up = self.follow_up.take();
        let closing = std::mem::take(&mut self.closing);
        let force = config.options.tool_choice == ToolChoice::RequiredAfterActivation
            && !self.refused
            && ((self.activated && !self.acted && self.forced < MAX_FORCED_REQUESTS)
                || follow_up.is_some());
        self.activated = false;
        self.forced += u32::from(force);
        let shown = match follow_up.filter(|_| force) {
            Some(mut tools) => {
                tools.push(ANSWER_TOOL.to_owned());
                Shown::Only(tools)
            }
            None if closing && !force => Shown::Nothing,
            None => Shown::All,
        };
        (force, shown)
    }
}

/// The request: `force` (the finders to leave out) says `tool_choice: "required"`;
/// `shown` is what of the array the request shows: [`Shown::Only`] a need followed up
/// (its tools and the answer tool, when some of them are in the array),
/// [`Shown::Nothing`] for the request that closes the run.
pub(crate) fn request_body(
    config: &AgentConfig,
    messages: &[&Message],
    tools: &ToolSet,
    force: Option<&[String]>,
    shown: &Shown,
) -> Map<String, Value> {
    let mut body = config.options.request_params.clone();
    for key in ["stream", "stream_options", "tools"] {
        body.remove(key);
    }
    body.insert("model".to_owned(), json!(config.model));
    body.insert("messages".to_owned(), json!(messages));
    // Only the tools asked for, unless none of them is left in the array.
    let mut only = match shown {
        Shown::Only(only) => Some(tools.to_openai_only(only)).filter(|o| !o.is_empty()),
        Shown::All | Shown::Nothing => None,
    };
    // Forced, without the finders: unless nothing else would be left.
    let forced = force
        .map(|hidden| {
            only.take()
                .unwrap_or_else(|| tools.to_openai_without(hidden))
        })
        .filter(|left| !left.is_empty());
    let required = forced.is_some();
    let tools = match forced {
        Some(forced) => forced,
        None if *shown == Shown::Nothing => Vec::new(),
        None => only.unwrap_or_else(|| tools.to_openai()),
    };
    if tools.is_empty() {
        body.remove("tool_choice");
    } else {
        body.insert("tools".to_owned(), Value::Array(tools));
        if required {
            body.insert("tool_choice".to_owned(), json!("required"));
        }
    }
    body
}

/// The text of `message`, the system prompt, without the policy's guidance that
/// [`with_system`](crate::agent::with_system) appended; `None` when it has none (a
/// conversation that brought its own system prompt).
pub(crate) fn own_prompt<'m>(config: &AgentConfig, message: &'m Message) -> Option<&'m str> {
    let Message::System { content } = message else {
        return None;
    };
    let guidance = crate::agent::guidance(config)?;
    Some(content.strip_suffix(guidance.as_str())?.trim_end())
}

/// Usage counted locally, for endpoints that report none.
pub(crate) fn estimate(body: &Map<String, Value>, completion: &Completion) -> TokenUsage {
    let prompt = ["messages", "tools"]
        .iter()
        .filter_map(|k| body.get(*k))
        .map(tokens::count_json)
        .sum::<usize>();
    let completion_tokens = tokens::count(&completion.content)
        + completion
            .tool_calls
            .iter()
            .map(|c| tokens::count(&c.function.name) + tokens::count(&c.function.arguments))
            .sum::<usize>();
    TokenUsage {
        prompt_tokens: prompt as u64,
        completion_tokens: completion_tokens as u64,
        estimated: true,
    }
}
