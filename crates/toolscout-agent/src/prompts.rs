//! Texts the model reads, kept in this crate's `prompts/` (linked from `prompts/` at the
//! repository root, where the texts of every crate are listed together).

/// Appended to the system prompt under [`Policy::Browse`](crate::Policy::Browse).
pub const BROWSE: &str = include_str!("../prompts/agent_browse.md");
/// Appended to the system prompt under [`Policy::Retrieve`](crate::Policy::Retrieve).
pub const RETRIEVE: &str = include_str!("../prompts/agent_retrieve.md");
/// The description of the [`answer`](crate::ANSWER_TOOL) tool.
pub const ANSWER_TOOL: &str = include_str!("../prompts/agent_answer_tool.md");
/// The description of [`StaticHost`](crate::StaticHost)'s
/// [`discover_search`](crate::DISCOVER_SEARCH).
pub const STATIC_DISCOVER_SEARCH: &str = include_str!("../prompts/static_discover_search.md");
/// The description of [`StaticHost`](crate::StaticHost)'s
/// [`discover_describe`](crate::DISCOVER_DESCRIBE).
pub const STATIC_DISCOVER_DESCRIBE: &str = include_str!("../prompts/static_discover_describe.md");
/// The description of a sub-agent tool's `task` parameter.
pub const SUBAGENT_TASK: &str = include_str!("../prompts/agent_subagent_task.txt");
/// Put to the model when it answers a request of several needs after serving only some
/// (see [`AgentOptions::follow_needs`](crate::AgentOptions::follow_needs)): `{need}` is the
/// first need left, as the request states it.
pub const FOLLOW_NEED: &str = include_str!("../prompts/agent_follow_need.md");
/// Ends the request that closes a run, which shows no tools, once every need of the
/// request has been served (see
/// [`AgentOptions::follow_needs`](crate::AgentOptions::follow_needs)).
pub const CLOSING: &str = include_str!("../prompts/agent_closing.md");
/// Put to the model when it answers a request it was required to call a tool for with an
/// account of work that no call did ("I found a house in Long Beach"): `{tool}` is the
/// best tool found for the request.
pub const NO_CALL_YET: &str = include_str!("../prompts/agent_no_call_yet.md");
/// The request for a tool's [utterances](crate::write_utterances): `{name}`,
/// `{description}` and `{parameters}` (the parameter names) are filled in.
pub const UTTERANCES: &str = include_str!("../prompts/utterances.md");
/// Asks the model, before the first request, for the tools a request of several steps
/// needs, one per line, as what they do (see
/// [`AgentOptions::plan_needs`](crate::AgentOptions::plan_needs)).
pub const PLAN: &str = include_str!("../prompts/agent_plan.md");
/// Asks the model, before the first request, for a request not written in English as
/// it would read in English, for the search (see
/// [`AgentOptions::translate_requests`](crate::AgentOptions::translate_requests)).
pub const TRANSLATE: &str = include_str!("../prompts/agent_translate.md");
/// The system message of the second ask for a request in English, made when the model's
/// first text was not its translation (it answered the request instead): the request
/// is then put as a text to translate, [`TRANSLATE_AGAIN_TEXT`].
pub const TRANSLATE_AGAIN: &str = include_str!("../prompts/agent_translate_again.md");
/// The user message of the second ask for a request in English: `{message}` is the
/// user's message (see [`TRANSLATE_AGAIN`]).
pub const TRANSLATE_AGAIN_TEXT: &str = include_str!("../prompts/agent_translate_again_text.md");
/// Tells the model how to ask for a tool it lacks, a `NEED:` line; added to the
/// policy's guidance (see [`AgentOptions::tool_requests`](crate::AgentOptions::tool_requests)).
pub const TOOL_REQUEST: &str = include_str!("../prompts/agent_tool_request.md");
/// Says what a `NEED:` line found: `{need}` and `{tools}` (their names) are filled in
/// (see [`AgentOptions::tool_requests`](crate::AgentOptions::tool_requests)).
pub const TOOL_REQUEST_FOUND: &str = include_str!("../prompts/agent_tool_request_found.md");
