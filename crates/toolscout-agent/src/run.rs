//! The loop: request, assemble, run the calls in parallel, activate, repeat.

use futures_util::future::join_all;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use toolscout_spec::tokens;
use tracing::Instrument;
use tracing::field::Empty;

use crate::agent::subagent_spec;
use crate::event::Emitter;
use crate::exec::{Executed, execute};
use crate::grounding::{Grounding, Grounds};
use crate::host::{ANSWER_TOOL, answer_tool_spec};
use crate::toolset::{Activation, ToolSet};
use crate::wire::Completion;
use crate::{
    AgentConfig, AgentEvent, BoxFuture, ChatClient, Message, Policy, RunReport, StopReason,
    TokenUsage, ToolChoice, ToolHost, ToolScope,
};
use crate::{Approver, Validators};
use toolscout_invoke::ErrorKind;

/// How many requests of one run may say `tool_choice: "required"`.
///
/// **Rationale:** each activation asks for a call once; a model that keeps searching
/// (each search activating new hits) must not be forced forever.
const MAX_FORCED_REQUESTS: u32 = 3;

/// What every loop of one run (the top-level agent's and its sub-agents') shares.
pub(crate) struct Runtime<'a> {
    pub(crate) client: &'a ChatClient,
    pub(crate) host: &'a dyn ToolHost,
    pub(crate) approver: &'a dyn Approver,
    pub(crate) validators: &'a Validators,
    pub(crate) subagents: &'a [AgentConfig],
    /// `discover_agents` over the sub-agents, when there are some.
    pub(crate) discover_agents: Option<&'a toolscout_discover::DiscoverAgents>,
    /// The top-level agent's depth limit.
    pub(crate) max_depth: u32,
    pub(crate) emitter: Emitter,
}

impl Runtime<'_> {
    /// The sub-agent called `name`, if the agent at `depth` may delegate to it.
    pub(crate) fn subagent(&self, name: &str) -> Option<&AgentConfig> {
        self.subagents.iter().find(|s| s.name == name)
    }

    /// `discover_agents`, when it is called `name`.
    pub(crate) fn discover_agents(
        &self,
        name: &str,
    ) -> Option<&toolscout_discover::DiscoverAgents> {
        self.discover_agents.filter(|d| d.name() == name)
    }
}

/// The tools a loop at `depth` starts with: the host's, within the scope, then, while
/// delegation is allowed, the sub-agents (under [`Policy::Upfront`]) or
/// `discover_agents` (under the browsing policies), then the answer tool when calls may
/// be required.
fn initial_tools(
    rt: &Runtime<'_>,
    config: &AgentConfig,
    depth: u32,
) -> Vec<toolscout_spec::ToolSpec> {
    let mut tools = rt.host.initial_tools(config.policy);
    if config.policy == Policy::Upfront || config.tool_scope == ToolScope::None {
        tools.retain(|t| config.tool_scope.allows(&t.name));
    }
    if depth < rt.max_depth {
        match rt.discover_agents {
            // Browsing policies browse the sub-agents too: they are activated once described.
            Some(agents) if config.policy.browses() => tools.extend(agents.spec().ok()),
            _ => tools.extend(rt.subagents.iter().map(subagent_spec)),
        }
    }
    // Only a policy that activates tools ever requires a call, and so needs the answer
    // tool to decline with.
    if config.tool_choice == ToolChoice::RequiredAfterActivation && config.policy.browses() {
        tools.push(answer_tool_spec());
    }
    tools
}

/// Whether the model must call a tool on the next request; see [`ToolChoice`].
#[derive(Debug, Default)]
struct Forcing {
    /// Tools were activated since the last request.
    activated: bool,
    /// A real tool (not a discover tool) has been called successfully.
    acted: bool,
    /// Requests that said `required` so far.
    forced: u32,
    /// The endpoint refused a request that said `required`: no more are made.
    refused: bool,
    /// The tools of a need left unserved that was just put to the model (see
    /// [`AgentConfig::follow_needs`]): they were found for it, so the next request
    /// requires a call even after earlier calls, and shows only them (and the answer
    /// tool, which still declines).
    follow_up: Option<Vec<String>>,
    /// An answer given before any call, reporting work no call did, was questioned (see
    /// [`answered`]); once a run.
    questioned: bool,
    /// The best tool retrieved for the last user message, named when an answer is
    /// questioned.
    best: Option<String>,
    /// The last user message asked for one thing: once a call serves it, the run
    /// closes (see [`AgentConfig::follow_needs`]).
    one_need: bool,
    /// Every need of the request has been served by a call that succeeded: the next
    /// request closes the run, and shows no tools (see [`AgentConfig::follow_needs`]).
    closing: bool,
}

/// The tools a request shows.
#[derive(Debug, PartialEq)]
enum Shown {
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
    fn next_request(&mut self, config: &AgentConfig) -> (bool, Shown) {
        let follow_up = self.follow_up.take();
        let closing = std::mem::take(&mut self.closing);
        let force = config.tool_choice == ToolChoice::RequiredAfterActivation
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

/// Runs one agent's loop; boxed because sub-agents recurse into it.
pub(crate) fn run_loop<'a>(
    rt: &'a Runtime<'a>,
    config: &'a AgentConfig,
    depth: u32,
    mut messages: Vec<Message>,
    cancel: CancellationToken,
) -> BoxFuture<'a, RunReport> {
    Box::pin(async move {
        let agent = config.name.clone();
        let initial = initial_tools(rt, config, depth);
        // The tools a run starts with are the meta tools (discover, call_tool, answer)
        // and sub-agents; a successful call of anything else is a real action.
        let meta: Vec<String> = initial.iter().map(|t| t.name.to_string()).collect();
        // A request that requires a call leaves out the tools that only find tools: the
        // model must then call one of the tools it was given, or answer (a small model
        // told to call something calls `discover_tools` and writes the call as text).
        let finders: Vec<String> = meta
            .iter()
            .filter(|name| {
                name.as_str() != ANSWER_TOOL && !rt.subagents.iter().any(|a| a.name == **name)
            })
            .cloned()
            .collect();
        let mut tools = ToolSet::new(initial, config.activation_cap);
        let mut forcing = Forcing::default();
        let mut usage = TokenUsage::default();
        // The needs of a request of several that no call has served yet.
        let mut needs = Needs::default();
        if config.policy == Policy::Retrieve {
            let found = retrieve(rt, config, depth, &mut tools, &messages);
            forcing.activated = found.require_call;
            forcing.best = found.best;
            forcing.one_need = found.one_need;
            if config.follow_needs {
                needs.pending = found.pending;
            }
        }
        // Calls `ground_arguments` refused: made again unchanged, they run.
        let refused = std::sync::Mutex::new(std::collections::HashSet::new());
        let mut steps = 0u32;
        let mut answer = None;
        let stop = loop {
            if cancel.is_cancelled() {
                break StopReason::Cancelled;
            }
            if steps >= config.max_steps {
                break StopReason::MaxSteps;
            }
            if config.max_tokens.is_some_and(|max| usage.total() >= max) {
                break StopReason::MaxTokens;
            }
            steps += 1;
            let span = tracing::info_span!(
                "agent_step",
                agent = %agent,
                depth,
                step = steps,
                prompt_tokens = Empty,
                completion_tokens = Empty,
                tool_calls = Empty,
                finish_reason = Empty,
            );
            rt.emitter.emit(AgentEvent::StepStarted {
                agent: agent.clone(),
                depth,
                step: steps,
            });
            let (force, shown) = forcing.next_request(config);
            let (plain, ask);
            let mut sent = needs.sent(&messages);
            // A request that shows no tools, or requires a call of the tools it shows,
            // leaves out the guidance on when to call them and on finding others: it has
            // nothing to say then (a required call has no finder to use), and it was the
            // largest part of the first request after the tools.
            if (shown == Shown::Nothing || force)
                && let Some(first) = sent.first()
                && let Some(own) = own_prompt(config, first)
            {
                if own.is_empty() {
                    sent.remove(0);
                } else {
                    plain = Message::system(own);
                    sent[0] = &plain;
                }
            }
            if shown == Shown::Nothing {
                // The request that closes the run asks for the answer in plain text.
                ask = Message::system(crate::prompts::CLOSING.trim_end());
                sent.push(&ask);
            }
            let mut body =
                request_body(config, &sent, &tools, force.then_some(&finders[..]), &shown);
            let emitter = rt.emitter.clone();
            let on_text = |text: &str| {
                emitter.emit(AgentEvent::TextDelta {
                    agent: agent.clone(),
                    depth,
                    text: text.to_owned(),
                });
            };
            let mut result = tokio::select! {
                biased;
                () = cancel.cancelled() => None,
                r = rt.client.complete(body.clone(), config.stream, steps, on_text)
                    .instrument(span.clone()) => Some(r),
            };
            // An endpoint may refuse what forcing asks of it (llama.cpp answers 400
            // "Failed to parse grammar" for the grammar of some tools' schemas): the same
            // request unforced, and no forcing for the rest of the run. If that too is
            // refused for the tools' schemas, the client sends it once more with them
            // relaxed, and relaxes them from then on (`crate::relax`).
            if force
                && let Some(Err(e)) = &result
                && e.status()
                    .is_some_and(|s| (400..500).contains(&s) && s != 401 && s != 429)
            {
                tracing::warn!(parent: &span, error = %e, "the endpoint refused a required tool call; asking again without");
                forcing.refused = true;
                body = request_body(config, &needs.sent(&messages), &tools, None, &Shown::All);
                result = tokio::select! {
                    biased;
                    () = cancel.cancelled() => None,
                    r = rt.client.complete(body.clone(), config.stream, steps, on_text)
                        .instrument(span.clone()) => Some(r),
                };
            }
            let completion = match result {
                None => break StopReason::Cancelled,
                Some(Err(e)) => {
                    tracing::warn!(parent: &span, error = %e, "the endpoint failed");
                    break StopReason::EndpointError {
                        status: e.status(),
                        message: e.to_string(),
                    };
                }
                Some(Ok(c)) => c,
            };
            let step_usage = completion
                .usage
                .unwrap_or_else(|| estimate(&body, &completion));
            span.record("prompt_tokens", step_usage.prompt_tokens);
            span.record("completion_tokens", step_usage.completion_tokens);
            span.record("tool_calls", completion.tool_calls.len());
            if let Some(reason) = &completion.finish_reason {
                span.record("finish_reason", reason.as_str());
            }
            usage.add(step_usage);
            rt.emitter.emit(AgentEvent::StepFinished {
                agent: agent.clone(),
                depth,
                step: steps,
                usage: step_usage,
            });
            // `null` content is only valid next to tool calls; a bare empty turn keeps "".
            let content = (!completion.content.is_empty() || completion.tool_calls.is_empty())
                .then(|| completion.content.clone());
            messages.push(Message::Assistant {
                content: content.clone(),
                tool_calls: completion.tool_calls.clone(),
            });
            if completion.tool_calls.is_empty() {
                let text = content.unwrap_or_default();
                match answered(
                    rt,
                    config,
                    depth,
                    &mut tools,
                    &mut messages,
                    &mut forcing,
                    &mut needs,
                    text,
                ) {
                    None => continue,
                    Some(text) => {
                        answer = Some(text);
                        break StopReason::Answer;
                    }
                }
            }
            // What the conversation gave so far: a call's required arguments must be in it.
            let grounds = config.ground_arguments.then(|| Grounding {
                grounds: Grounds::of(&messages),
                exempt: &meta,
                refused: &refused,
            });
            let executed: Vec<Executed> =
                join_all(completion.tool_calls.iter().map(|call| {
                    execute(rt, config, depth, &tools, call, grounds.as_ref(), &cancel)
                }))
                .instrument(span)
                .await;
            for (call, done) in completion.tool_calls.iter().zip(&executed) {
                messages.push(Message::Tool {
                    tool_call_id: call.id.clone(),
                    content: done.outcome.result.to_string(),
                });
            }
            let mut final_text = None;
            // A real call made now: progress, after which the next need left is asked for.
            let mut progressed = false;
            // A call of the need just asked for was refused for arguments the request
            // does not give: its other tools are offered at once.
            let mut asked_again = false;
            // A call (not the answer tool's) failed now: the model may make it again.
            let mut failed = false;
            for done in executed {
                usage.add(done.usage);
                if done.tool == ANSWER_TOOL && tools.get(ANSWER_TOOL).is_some() {
                    final_text = done.answer;
                    continue;
                }
                tools.touch(&done.tool);
                failed |= !done.outcome.is_ok();
                let real = done.outcome.is_ok() && !meta.contains(&done.tool);
                forcing.acted |= real;
                if real {
                    needs.served(&done.tool);
                    progressed = true;
                } else if done.outcome.error_kind() == Some(ErrorKind::UngroundedArguments) {
                    asked_again |= needs.refused(&done.tool);
                }
                let found = done.outcome.found.iter().take(config.activate_hits);
                let names: Vec<String> = done
                    .outcome
                    .disclosed
                    .iter()
                    .chain(found)
                    .cloned()
                    .collect();
                disclosed(rt, config, depth, &done.outcome.disclosed);
                forcing.activated |= activate(rt, config, depth, &mut tools, &names);
            }
            if let Some(text) = final_text {
                // The answer tool's text is the final answer, as if the model had said it.
                messages.push(Message::Assistant {
                    content: Some(text.clone()),
                    tool_calls: Vec::new(),
                });
                // The model also declines a need it was asked for ("no tool fits") so.
                match answered(
                    rt,
                    config,
                    depth,
                    &mut tools,
                    &mut messages,
                    &mut forcing,
                    &mut needs,
                    text,
                ) {
                    None => continue,
                    Some(text) => {
                        answer = Some(text);
                        break StopReason::Answer;
                    }
                }
            }
            // A request of several needs: once a call has served one, the next need left
            // is asked for at once, rather than after the model answers having served
            // one (a small model calls one tool a turn, then answers).
            if progressed || asked_again {
                let followed = follow_up(
                    rt,
                    config,
                    depth,
                    &mut tools,
                    &mut messages,
                    &mut forcing,
                    &mut needs,
                );
                // The last need served (or the one need of a request of one), nothing
                // failed and nothing new was found: what is left is the answer.
                let served = needs.all_served() || (config.follow_needs && forcing.one_need);
                forcing.closing =
                    !followed && progressed && !failed && !forcing.activated && served;
            }
        };
        RunReport {
            agent,
            messages,
            answer,
            usage,
            steps,
            stop,
            tools: tools.names(),
        }
    })
}

/// The model answered, in text or with the answer tool. After a real call, or before
/// any when the request holds several needs (see [`Needs::declined_unserved`]), a
/// need left unserved is put to the model (see [`follow_up`]): `None`, the run goes on.
/// Before any call, on a request that required one, an answer that reports work done
/// ("I found a house…", see [`crate::claims`]) is made up: the model is told that no
/// tool has run and required once more to call one (or decline with the answer tool).
/// Else the answer is final: reported, and returned.
#[allow(clippy::too_many_arguments)]
fn answered(
    rt: &Runtime<'_>,
    config: &AgentConfig,
    depth: u32,
    tools: &mut ToolSet,
    messages: &mut Vec<Message>,
    forcing: &mut Forcing,
    needs: &mut Needs,
    text: String,
) -> Option<String> {
    if (forcing.acted || (forcing.forced > 0 && needs.declined_unserved()))
        && follow_up(rt, config, depth, tools, messages, forcing, needs)
    {
        return None;
    }
    if !forcing.acted
        && forcing.forced > 0
        && !forcing.questioned
        && let Some(best) = forcing.best.clone()
        && crate::claims::claims_work(&text)
    {
        forcing.questioned = true;
        forcing.activated = true;
        // It is in the array unless later activations evicted it.
        activate(rt, config, depth, tools, std::slice::from_ref(&best));
        let shown = tools.alias(&best).unwrap_or(&best);
        messages.push(Message::system(fill(
            crate::prompts::NO_CALL_YET.trim_end(),
            &[("{tool}", shown)],
        )));
        rt.emitter.emit(AgentEvent::AnswerQuestioned {
            agent: config.name.clone(),
            depth,
            answer: text,
        });
        return None;
    }
    rt.emitter.emit(AgentEvent::FinalAnswer {
        agent: config.name.clone(),
        depth,
        text: text.clone(),
    });
    Some(text)
}

/// Reports the tools a call disclosed at level 2 or 3.
fn disclosed(rt: &Runtime<'_>, config: &AgentConfig, depth: u32, disclosed: &[String]) {
    if disclosed.is_empty() {
        return;
    }
    rt.emitter.emit(AgentEvent::Disclosed {
        agent: config.name.clone(),
        depth,
        tools: disclosed.to_vec(),
    });
}

/// [`Policy::Retrieve`]: searches the catalog with every user message, in order, and
/// activates what each finds. Earlier messages are searched again so that a continued
/// conversation rebuilds the same tools array, then appends. Whether the next request
/// must call a tool: anything was activated and the last message's retrieval found a
/// tool (an earlier message's tools do not force a call on a later turn that found
/// none); the needs of the last message to follow up; and the best tool found for it.
fn retrieve(
    rt: &Runtime<'_>,
    config: &AgentConfig,
    depth: u32,
    tools: &mut ToolSet,
    messages: &[Message],
) -> LastRetrieval {
    let last_user = messages
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }));
    let mut activated = false;
    let mut last_found = false;
    let mut pending = Vec::new();
    let mut best = None;
    let mut one_need = false;
    for (i, message) in messages.iter().enumerate() {
        let Message::User { content } = message else {
            continue;
        };
        let (found, needs, found_needs) = retrieve_message(rt.host, config, content);
        let unsplit = needs.is_empty();
        rt.emitter.emit(AgentEvent::Retrieved {
            agent: config.name.clone(),
            depth,
            tools: found.tools.clone(),
            confidence: found.confidence,
            needs,
        });
        if Some(i) == last_user {
            one_need = unsplit;
            pending = found_needs;
            last_found = !found.tools.is_empty();
            best = found.tools.first().cloned();
        }
        activated |= activate(rt, config, depth, tools, &found.tools);
    }
    LastRetrieval {
        require_call: activated && last_found,
        pending,
        best,
        one_need,
    }
}

/// What [`retrieve`] found for the last user message.
struct LastRetrieval {
    /// Tools were activated and the last message's retrieval found some: the next
    /// request requires a call.
    require_call: bool,
    /// The needs of the last message to follow up (none when it asks for one thing).
    pending: Vec<Need>,
    /// The best tool found for the last message.
    best: Option<String>,
    /// The last message was not split: it asks for one thing.
    one_need: bool,
}

/// What [`Policy::Retrieve`] finds for one user message before the model's request: the
/// tools to activate, and the needs the message was split into (empty when it asks for
/// one thing, or [`AgentConfig::split_needs`] is off).
///
/// An evaluation calls it to measure retrieval as the agent does it, without a model.
pub fn retrieve_for(
    host: &dyn ToolHost,
    config: &AgentConfig,
    message: &str,
) -> (crate::Retrieval, Vec<String>) {
    let (found, needs, _) = retrieve_message(host, config, message);
    (found, needs)
}

/// [`retrieve_for`], with the needs whose own search found tools, and those tools.
fn retrieve_message(
    host: &dyn ToolHost,
    config: &AgentConfig,
    message: &str,
) -> (crate::Retrieval, Vec<String>, Vec<Need>) {
    let needs = if config.split_needs {
        crate::needs::split_needs(message)
    } else {
        Vec::new()
    };
    if needs.len() > 1 {
        let (found, found_needs) = retrieve_needs(host, config, message, &needs);
        (found, needs, found_needs)
    } else {
        let found = host.retrieve(message, config.retrieve_top_k);
        (found, Vec::new(), Vec::new())
    }
}

/// How many of each need's best tools [`retrieve_needs`] finds: the first joins the first
/// request's array, the next is put to the model when a call of the first is refused
/// (see [`Needs::refused`]).
const PER_NEED: usize = 2;

/// The tools for a message of several needs: the whole message's
/// [`AgentConfig::retrieve_top_k`] and each need's best, taken in turns by rank, so that
/// every need has its best tool before the whole message has its second; within the
/// activation cap. The confidence is the surest of the whole message's and the needs'.
/// Every need whose search found tools is returned with its best [`PER_NEED`], to be
/// followed up.
///
/// **Rationale:** each need's second tool in the first array cost 1.7 tools a request
/// on Seal-Tools (6.5 → 4.7) for few calls: shown a need's two tools, a small model
/// picks the weaker more often than the weaker is right (see [`Needs::next`]), and the
/// second is still offered when the first is refused.
fn retrieve_needs(
    host: &dyn ToolHost,
    config: &AgentConfig,
    message: &str,
    needs: &[String],
) -> (crate::Retrieval, Vec<Need>) {
    let whole = host.retrieve(message, config.retrieve_top_k);
    let all: Vec<(&String, crate::Retrieval)> = needs
        .iter()
        .map(|need| (need, host.retrieve(need, PER_NEED)))
        .filter(|(_, r)| !r.tools.is_empty())
        .collect();
    let lists: Vec<&[String]> = std::iter::once(whole.tools.as_slice())
        .chain(all.iter().map(|(_, r)| &r.tools[..1]))
        .collect();
    let limit = lists
        .iter()
        .map(|l| l.len())
        .sum::<usize>()
        .min(config.activation_cap);
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
        })
        .collect();
    (crate::Retrieval { tools, confidence }, needs)
}

/// One need of a request of several, whose own search found tools: the tools found for it
/// (the first activated with the request's, the others when they are put to the model),
/// so that the run can tell whether a call has served it.
#[derive(Debug, Clone)]
pub(crate) struct Need {
    /// The need, as the request states it.
    text: String,
    /// Its best tools.
    tools: Vec<String>,
    /// It was asked for once and the call refused: these are its other tools.
    again: bool,
}

/// Puts the next need left (see [`Needs::next`]) to the model, if there is one
/// ([`AgentConfig::follow_needs`]): its tools activated again if they had left the
/// array, a system message naming it, and a next request that requires a call of one of
/// them (or `answer`). Whether it did.
fn follow_up(
    rt: &Runtime<'_>,
    config: &AgentConfig,
    depth: u32,
    tools: &mut ToolSet,
    messages: &mut Vec<Message>,
    forcing: &mut Forcing,
    needs: &mut Needs,
) -> bool {
    let Some(need) = needs.next() else {
        return false;
    };
    forcing.follow_up = Some(need.tools.clone());
    activate(rt, config, depth, tools, &need.tools);
    needs.said.push(messages.len());
    messages.push(Message::system(fill(
        crate::prompts::FOLLOW_NEED.trim_end(),
        &[("{need}", need.text.trim().trim_end_matches(['.', ',', ';']))],
    )));
    rt.emitter.emit(AgentEvent::NeedFollowedUp {
        agent: config.name.clone(),
        depth,
        need: need.text,
        tools: need.tools,
    });
    true
}

/// The needs of a request of several that the run follows up (see
/// [`AgentConfig::follow_needs`]).
#[derive(Debug, Default)]
struct Needs {
    /// The needs no call has served yet, in the request's order.
    pending: Vec<Need>,
    /// The need last put to the model, until a call serves it.
    asked: Option<Need>,
    /// Follow-ups made, at most [`MAX_FOLLOW_UPS`].
    made: u32,
    /// The tools that have run successfully.
    ran: Vec<String>,
    /// Where in the conversation each need was put to the model, in order.
    said: Vec<usize>,
}

impl Needs {
    /// A successful call of `tool` serves one need: the one just asked for when `tool` is
    /// one of its tools, else the pending need `tool` ranks highest for (the first on a
    /// tie). One call never serves two needs: "the weather in Oslo, and also in Rome"
    /// needs two calls of one tool, and a tool found second for the next need ("once I
    /// have the cooking time, the food waste figures") was found for its words.
    fn served(&mut self, tool: &str) {
        if !self.ran.iter().any(|t| t == tool) {
            self.ran.push(tool.to_owned());
        }
        if self
            .asked
            .as_ref()
            .is_some_and(|need| need.tools.iter().any(|t| t == tool))
        {
            self.asked = None;
            return;
        }
        if let Some(i) = self.ranked_highest(tool) {
            self.pending.remove(i);
        }
    }

    /// Whether the run followed needs up and every one has been served (or dropped,
    /// its tools having run for another): none is pending, none is waiting for its call.
    fn all_served(&self) -> bool {
        self.made > 0 && self.pending.is_empty() && self.asked.is_none()
    }

    /// Whether an answer given before any call succeeded leaves needs to put to the
    /// model one at a time: the run follows needs up already (one was put, and was
    /// declined or its call refused), or the request holds two or more needs whose own
    /// searches found tools, and the model declined them all at once.
    ///
    /// **Rationale:** shown the tools of three or four needs at once, a small model
    /// sometimes answers the first request with a made-up account of the work ("I
    /// have retrieved … and calculated …") and no call; put one need at a time, with its
    /// tool, it calls it (in 50 Seal-Tools multi-tool runs, 3 ended so with no tool
    /// called). A request of one need still ends on
    /// its answer: that is how a request no tool serves is declined; and so does a
    /// request the model was never required to call a tool for (its text answer is how
    /// it answers then).
    fn declined_unserved(&self) -> bool {
        self.made > 0 || self.asked.is_some() || self.pending.len() >= 2
    }

    /// The messages a request sends: the conversation without the needs put to the model
    /// before the last one. Those have been answered (served, declined or refused) and
    /// the calls that followed each say what was done; the transcript keeps them.
    ///
    /// **Rationale:** each was repeated in every later request of the run, 60-odd
    /// prompt tokens a request, on the runs that already make the most requests.
    fn sent<'m>(&self, messages: &'m [Message]) -> Vec<&'m Message> {
        let stale = &self.said[..self.said.len().saturating_sub(1)];
        messages
            .iter()
            .enumerate()
            .filter(|(i, _)| !stale.contains(i))
            .map(|(_, m)| m)
            .collect()
    }

    /// The pending need `tool` ranks highest for, the first on a tie.
    fn ranked_highest(&self, tool: &str) -> Option<usize> {
        self.pending
            .iter()
            .enumerate()
            .filter_map(|(i, need)| need.tools.iter().position(|t| t == tool).map(|r| (r, i)))
            .min()
            .map(|(_, i)| i)
    }

    /// A call of `tool` was refused for arguments the request does not give: it most
    /// likely was the wrong tool for the need it was made for — the need just asked for
    /// when `tool` is one of its tools, else (a call of the first request, which shows
    /// every need's tools) the pending need `tool` ranks highest for. That need goes
    /// back first in line with its other tools, and `true` says to ask for it again at
    /// once (a need with no other tool is not).
    fn refused(&mut self, tool: &str) -> bool {
        let mut need = match self.asked.take() {
            Some(need) if need.tools.iter().any(|t| t == tool) => need,
            Some(need) => {
                self.asked = Some(need);
                return false;
            }
            None => match self.ranked_highest(tool) {
                Some(i) => self.pending.remove(i),
                None => return false,
            },
        };
        need.tools.retain(|t| t != tool);
        if need.tools.is_empty() {
            return false;
        }
        need.again = true;
        self.pending.insert(0, need);
        true
    }

    /// The next need to put to the model, if the run may still follow one up
    /// ([`MAX_FOLLOW_UPS`]; a need asked again with its other tools does not count),
    /// with its best tool that no call has run yet: a tool that ran for another need is
    /// not offered again ("create the asset. The asset is a raw material named
    /// Chainlink" is one asset, not two), and a need left without tools is dropped. Its
    /// other tools are offered one by one if the call is refused (see [`Needs::refused`]).
    ///
    /// **Rationale:** shown a need's two or three tools, a small model picks a weaker one
    /// more often than the weaker one is right: in 21 traced Seal-Tools tasks, of the
    /// follow-ups with several tools where it called one but the first, the first was
    /// the right tool in 4 and the one it called in 1.
    fn next(&mut self) -> Option<Need> {
        while !self.pending.is_empty() {
            let mut need = self.pending.remove(0);
            need.tools.retain(|t| !self.ran.contains(t));
            if need.tools.is_empty() {
                continue;
            }
            if !need.again && self.made >= MAX_FOLLOW_UPS {
                self.pending.insert(0, need);
                return None;
            }
            self.made += u32::from(!need.again);
            let mut shown = need.clone();
            shown.tools.truncate(1);
            self.asked = Some(need);
            return Some(shown);
        }
        None
    }
}

const MAX_FOLLOW_UPS: u32 = 4;

/// `template` with each placeholder replaced by its value, in one pass: a value that
/// holds a placeholder is not expanded again.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    loop {
        let next = values
            .iter()
            .filter_map(|(key, value)| rest.find(key).map(|at| (at, *key, *value)))
            .min_by_key(|(at, _, _)| *at);
        let Some((at, key, value)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at]);
        out.push_str(value);
        rest = &rest[at + key.len()..];
    }
}

/// Appends tools to the tools array (browse and retrieve policies), within the scope,
/// in the order given (a batch best first). Whether any was added.
///
/// **Rationale for best first:** with Qwen2.5-Coder-1.5B on 50 BFCL tasks, best first
/// called the right tool in 0.78 of them, best last (nearest the conversation) in 0.74:
/// a wrong pick is as often the last tool as another. Best last was an option until
/// then.
fn activate(
    rt: &Runtime<'_>,
    config: &AgentConfig,
    depth: u32,
    tools: &mut ToolSet,
    names: &[String],
) -> bool {
    if !config.policy.browses() {
        return false;
    }
    let mut added = false;
    for name in names {
        // A sub-agent `discover_agents` described: delegation is not bound by the scope.
        let sub = rt.subagent(name).filter(|_| depth < rt.max_depth);
        if sub.is_none() && !config.tool_scope.allows(name) {
            continue;
        }
        let Some(spec) = sub.map(subagent_spec).or_else(|| rt.host.spec(name)) else {
            continue;
        };
        if !spec.metadata.enabled_by_default {
            continue;
        }
        if let Activation::Added { alias, evicted } = tools.activate(spec) {
            tracing::debug!(tool = %name, %alias, ?evicted, "activated");
            added = true;
            rt.emitter.emit(AgentEvent::Activated {
                agent: config.name.clone(),
                depth,
                tool: name.clone(),
                alias,
                evicted,
            });
        }
    }
    added
}

/// The request: `force` (the finders to leave out) says `tool_choice: "required"`;
/// `shown` is what of the array the request shows: [`Shown::Only`] a need followed up
/// (its tools and the answer tool, when some of them are in the array),
/// [`Shown::Nothing`] for the request that closes the run.
fn request_body(
    config: &AgentConfig,
    messages: &[&Message],
    tools: &ToolSet,
    force: Option<&[String]>,
    shown: &Shown,
) -> Map<String, Value> {
    let mut body = config.request_params.clone();
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
fn own_prompt<'m>(config: &AgentConfig, message: &'m Message) -> Option<&'m str> {
    let Message::System { content } = message else {
        return None;
    };
    let guidance = crate::agent::guidance(config.policy)?.trim();
    Some(content.strip_suffix(guidance)?.trim_end())
}

/// Usage counted locally, for endpoints that report none.
fn estimate(body: &Map<String, Value>, completion: &Completion) -> TokenUsage {
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

#[cfg(test)]
mod tests {
    use super::fill;

    #[test]
    fn fill_replaces_each_placeholder_once_and_never_a_value() {
        let question = fill(
            "Request: {request}\nTools: {tools}\n{request}",
            &[("{request}", "say {tools}"), ("{tools}", "- a")],
        );
        // The request's own "{tools}" is text, not a placeholder.
        assert_eq!(question, "Request: say {tools}\nTools: - a\nsay {tools}");
        assert_eq!(fill("no placeholders", &[("{x}", "y")]), "no placeholders");
        assert_eq!(fill("{x}{x}", &[("{x}", "")]), "");
    }
}
