//! What [`Policy::Retrieve`](crate::Policy::Retrieve) finds before a request: for a user
//! message, the tools to activate and, for a message of several needs, each need with
//! its own best tools.

use crate::followup::Need;
use crate::{AgentConfig, ToolHost};

/// What a run's first retrieval found for the last user message.
pub(crate) struct LastRetrieval {
    /// Tools were activated and the last message's retrieval found some: the next
    /// request requires a call.
    pub(crate) require_call: bool,
    /// The needs of the last message to follow up (none when it asks for one thing).
    pub(crate) pending: Vec<Need>,
    /// The best tool found for the last message.
    pub(crate) best: Option<String>,
    /// The last message was not split: it asks for one thing.
    pub(crate) one_need: bool,
}

/// What [`Policy::Retrieve`](crate::Policy::Retrieve) finds for one user message before the model's request: the
/// tools to activate, and the needs the message was split into (empty when it asks for
/// one thing, or [`AgentOptions::split_needs`](crate::AgentOptions::split_needs) is off).
///
/// An evaluation calls it to measure retrieval as the agent does it, without a model.
pub fn retrieve_for(
    host: &dyn ToolHost,
    config: &AgentConfig,
    message: &str,
) -> (crate::Retrieval, Vec<String>) {
    let (found, needs, _) = retrieve_message(host, config, message, None);
    (found, needs)
}

/// [`retrieve_for`], with the needs whose own search found tools, and those tools. The
/// needs are `planned` when the model listed two or more (see
/// [`AgentOptions::plan_needs`](crate::AgentOptions::plan_needs)), else the message's own.
pub(crate) fn retrieve_message(
    host: &dyn ToolHost,
    config: &AgentConfig,
    message: &str,
    planned: Option<&[String]>,
) -> (crate::Retrieval, Vec<String>, Vec<Need>) {
    let needs = match planned {
        Some(planned) if planned.len() > 1 => planned.to_vec(),
        _ if config.options.split_needs => crate::needs::split_needs(message),
        _ => Vec::new(),
    };
    if needs.len() > 1 {
        let (found, found_needs) = retrieve_needs(host, config, message, &needs);
        (found, needs, found_needs)
    } else {
        let found = host.retrieve(message, config.options.retrieve_top_k);
        (found, Vec::new(), Vec::new())
    }
}

/// How sure a need's own search must be for its best tool to count when that tool is
/// of another server than the whole message's best tool (see [`need_tools`]).
pub(crate) const NEED_SURE: f32 = 0.35;

/// A need's best tools ([`PER_NEED`]), or `None` when its search finds none: its own
/// search's; but when the best of them is of another server than the whole message's
/// best tool (`servers`, see [`ToolHost::server_of`]) and the search is less sure than
/// [`NEED_SURE`], the best tools of the message's server for it instead
/// ([`ToolHost::retrieve_within`]). A host that tells no servers, a catalog
/// whose tools are in no server, and a need sure of its tool keep the need's own.
///
/// **Rationale:** a request names its outcome and its servers once ("a sanity check on
/// two services' API specs"), and its other sentences ("for each of those create
/// calls, how many required fields do I send?") share few words with any tool: searched
/// over every server, such a sentence finds a tool of an unrelated one by chance (a
/// route planner, a "think" tool), and its follow-up makes the model call it. MCP-Zero
/// (arXiv 2506.01056) matches a request to servers first, then to tools. On MCP-Bench's
/// 71 requests (28 servers, `eval retrieve --each`), the whole message's best tool was
/// of one of the task's servers in 63 (its next two tools added 1 more such server and
/// 24 others); 75 of the 354 needs' own searches led off that server at less than 0.35,
/// their best tool one of the task's in 10 of them, and the server was one of the
/// task's in 59 of those 75. On 300 Seal-Tools requests (bundles by category) 12 of 716
/// needs did (their best tool the task's in 3).
fn need_tools(host: &dyn ToolHost, servers: &[String], need: &str) -> Option<crate::Retrieval> {
    let counts = |r: &crate::Retrieval| !r.tools.is_empty();
    let own = host.retrieve(need, PER_NEED);
    let unsure = own.confidence.is_some_and(|c| c < NEED_SURE);
    let elsewhere = || {
        own.tools
            .first()
            .and_then(|best| host.server_of(best))
            .is_some_and(|server| !servers.contains(&server))
    };
    if servers.is_empty() || !unsure || !elsewhere() {
        return counts(&own).then_some(own);
    }
    let within = host.retrieve_within(need, servers, PER_NEED);
    counts(&within).then_some(within)
}

/// How many of each need's best tools [`retrieve_needs`] finds: the first joins the first
/// request's array, the next is put to the model when a call of the first is refused
/// (see [`Needs::refused`](crate::followup::Needs::refused)).
const PER_NEED: usize = 2;

/// The tools for a message of several needs: the whole message's
/// [`AgentOptions::retrieve_top_k`](crate::AgentOptions::retrieve_top_k) and each need's best, taken in turns by rank, so that
/// every need has its best tool before the whole message has its second; within the
/// activation cap. The confidence is the surest of the whole message's and the needs'.
/// Every need whose search found tools is returned with its best [`PER_NEED`], to be
/// followed up.
///
/// **Rationale:** each need's second tool in the first array cost 1.7 tools a request
/// on Seal-Tools (6.5 → 4.7) for few calls: shown a need's two tools, a small model
/// picks the weaker more often than the weaker is right (see
/// [`Needs::next`](crate::followup::Needs::next)), and the
/// second is still offered when the first is refused.
fn retrieve_needs(
    host: &dyn ToolHost,
    config: &AgentConfig,
    message: &str,
    needs: &[String],
) -> (crate::Retrieval, Vec<Need>) {
    let whole = host.retrieve(message, config.options.retrieve_top_k);
    // The server of the whole message's best tool.
    let servers: Vec<String> = whole
        .tools
        .first()
        .and_then(|best| host.server_of(best))
        .into_iter()
        .collect();
    let all: Vec<(&String, crate::Retrieval)> = needs
        .iter()
        .filter_map(|need| Some((need, need_tools(host, &servers, need)?)))
        .collect();
    let lists: Vec<&[String]> = std::iter::once(whole.tools.as_slice())
        .chain(all.iter().map(|(_, r)| &r.tools[..1]))
        .collect();
    let limit = lists
        .iter()
        .map(|l| l.len())
        .sum::<usize>()
        .min(config.options.activation_cap);
    let mut tools: Vec<String> = Vec::new();
    let deepest = lists.iter().map(|l| l.len()).max().unwrap_or(0);
    'ranks: for rank in 0..deepest {
        for list in &lists {
            if tools.len() == limit {
                break 'ranks;
            }
            if let Some(tool) = list.get(rank)
                && !tools.contains(tool)
            {
                tools.push(tool.clone());
            }
        }
    }
    let confidence = std::iter::once(&whole)
        .chain(all.iter().map(|(_, r)| r))
        .filter_map(|r| r.confidence)
        .reduce(f32::max);
    let needs = all
        .iter()
        .map(|(need, r)| Need {
            again: false,
            text: (*need).clone(),
            tools: r.tools.clone(),
            siblings: siblings(host, &r.tools),
        })
        .collect();
    (crate::Retrieval { tools, confidence }, needs)
}

/// The tools of `tools` after the first that are of the first one's server (see
/// [`ToolHost::server_of`]); none when it is in no server.
fn siblings(host: &dyn ToolHost, tools: &[String]) -> Vec<String> {
    let Some((best, rest)) = tools.split_first() else {
        return Vec::new();
    };
    let Some(server) = host.server_of(best) else {
        return Vec::new();
    };
    rest.iter()
        .filter(|t| host.server_of(t).as_ref() == Some(&server))
        .cloned()
        .collect()
}

/// The most steps a plan keeps (see [`AgentOptions::plan_needs`](crate::AgentOptions::plan_needs)).
const PLAN_STEPS: usize = 6;

/// The steps of the model's answer to `prompts/agent_plan.md`: one a line, without list
/// marks, numbers or quotes; lines too long to be a tool's function (the model wrote
/// prose) are left out, and at most [`PLAN_STEPS`] kept.
pub(crate) fn plan_steps(answer: &str) -> Vec<String> {
    answer
        .lines()
        .map(|line| {
            let line = line.trim().trim_start_matches(['-', '*', '•', '#', ' ']);
            let unnumbered = line.trim_start_matches(|c: char| c.is_ascii_digit());
            let line = match unnumbered.strip_prefix(['.', ')', ':']) {
                Some(rest) if unnumbered.len() < line.len() => rest,
                _ => line,
            };
            line.trim().trim_matches(['"', '\'', '`']).trim().to_owned()
        })
        .filter(|line| !line.is_empty() && line.chars().count() <= 100)
        .take(PLAN_STEPS)
        .collect()
}

/// The most `NEED:` lines of one turn that are searched (see
/// [`AgentOptions::tool_requests`](crate::AgentOptions::tool_requests)).
const REQUESTS_A_TURN: usize = 3;

/// The tool requests of a model's turn (see [`AgentOptions::tool_requests`](crate::AgentOptions::tool_requests)): what
/// follows `NEED:` on a line — at its start in any case (after list marks or
/// backticks), or in capitals after other words ("I have the prices. NEED: make a
/// chart") — trimmed of quotes and a closing full stop; an empty or overlong one (over
/// 150 characters: prose, not a tool's function) is left out, and at most
/// [`REQUESTS_A_TURN`] kept, each once.
pub(crate) fn tool_requests(text: &str) -> Vec<String> {
    let mut requests: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.trim().trim_start_matches(['-', '*', '•', '`', ' ']);
        let rest = match line.get(..5) {
            Some(head) if head.eq_ignore_ascii_case("need:") => &line[5..],
            _ => match line.find("NEED:") {
                Some(at) => &line[at + 5..],
                None => continue,
            },
        };
        let need = rest
            .trim()
            .trim_end_matches('.')
            .trim_matches(['"', '\'', '`', '<', '>'])
            .trim()
            .trim_end_matches('.')
            .trim();
        if need.is_empty() || need.chars().count() > 150 || requests.iter().any(|r| r == need) {
            continue;
        }
        requests.push(need.to_owned());
        if requests.len() == REQUESTS_A_TURN {
            break;
        }
    }
    requests
}

#[cfg(test)]
mod tests {
    use super::{plan_steps, tool_requests};

    #[test]
    fn tool_requests_are_the_need_lines_of_a_turn() {
        assert_eq!(
            tool_requests(
                "I have the prices.\nNEED: create a presentation file\n- need: `save a deck to a path`."
            ),
            ["create a presentation file", "save a deck to a path"]
        );
        assert!(
            tool_requests("I need a tool to make slides. I need: slides").is_empty(),
            "only NEED:"
        );
        assert_eq!(
            tool_requests("Done with the prices. NEED: make a chart."),
            ["make a chart"]
        );
        assert!(tool_requests("NEED:\nNEED: \"\"").is_empty());
        assert_eq!(
            tool_requests("NEED: a\nNEED: a\nNEED: b\nNEED: c\nNEED: d"),
            ["a", "b", "c"]
        );
        assert!(tool_requests(&format!("NEED: {}", "x".repeat(151))).is_empty());
        // Not at a byte boundary of the first five bytes: no panic.
        assert!(tool_requests("néed: x\nü").is_empty());
    }

    #[test]
    fn a_plan_is_read_one_step_a_line_without_marks() {
        assert_eq!(
            plan_steps(
                "1. search academic papers\n2) \"summarize a paper\"\n- create a slide deck\n\n* save the file"
            ),
            [
                "search academic papers",
                "summarize a paper",
                "create a slide deck",
                "save the file"
            ]
        );
        let prose = "Sure! To do this you would first need to look at many different things, and then think carefully about each of them in turn.";
        assert!(plan_steps(prose).is_empty());
        assert_eq!(plan_steps("a\nb\nc\nd\ne\nf\ng\nh").len(), 6);
        assert_eq!(plan_steps("2024 sales report"), ["2024 sales report"]);
    }
}
