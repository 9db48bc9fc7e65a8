//! The loop: request, assemble, run the calls in parallel, activate, repeat.
//!
//! A [`Run`] owns what one agent's loop keeps between its requests: the conversation,
//! the tools array, whether the next request requires a call ([`Forcing`]), the needs
//! left to follow up ([`Needs`]), the usage. Its phases, in the order of a step:
//!
//! 1. [`Run::retrieve_first`] (under [`Policy::Retrieve`], once, before the first
//!    request): the tools each user message finds, activated; the needs to follow. A
//!    last message not in English is searched as the model writes it in English.
//! 2. [`Run::request`]: the request's body (which messages, which tools, forced or not)
//!    and its answer, asked again unforced when the endpoint refuses a forced request.
//! 3. [`Run::answered`]: an answer in text (or with the answer tool): final, or a need
//!    left is put to the model, or a made-up account of work is questioned.
//! 4. [`Run::take_calls`]: the calls run in parallel; their results join the
//!    conversation, the tools they disclosed or found are activated, the needs they
//!    served are struck off; then the next need left is put to the model, or the run
//!    closes.
//!
//! What a request asks is in `request.rs`, the needs in `followup.rs`, retrieval in
//! `retrieval.rs`.

use futures_util::future::join_all;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use tracing::field::Empty;

use crate::agent::subagent_spec;
use crate::event::Emitter;
use crate::exec::{Executed, execute};
use crate::followup::Needs;
use crate::grounding::{Grounding, Grounds};
use crate::host::{ANSWER_TOOL, answer_tool_spec};
use crate::request::{Forcing, Shown, estimate, own_prompt, request_body};
use crate::retrieval::{LastRetrieval, retrieve_message};
use crate::toolset::{Activation, ToolSet};
use crate::wire::Completion;
use crate::{
    AgentConfig, AgentEvent, BoxFuture, ChatClient, MAX_TOOL_REQUESTS, Message, Policy, RunReport,
    StopReason, TokenUsage, ToolChoice, ToolHost, ToolScope,
};
use crate::{Approver, Validators};
use toolscout_invoke::ErrorKind;
use toolscout_spec::template::fill;

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
    let mut tools = rt.host.initial_tools(config.options.policy);
    if config.options.policy == Policy::Upfront || config.options.tool_scope == ToolScope::None {
        tools.retain(|t| config.options.tool_scope.allows(&t.name));
    }
    if depth < rt.max_depth {
        match rt.discover_agents {
            // Browsing policies browse the sub-agents too: they are activated once described.
            Some(agents) if config.options.policy.browses() => tools.extend(agents.spec().ok()),
            _ => tools.extend(rt.subagents.iter().map(subagent_spec)),
        }
    }
    // Only a policy that activates tools ever requires a call, and so needs the answer
    // tool to decline with.
    if config.options.tool_choice == ToolChoice::RequiredAfterActivation
        && config.options.policy.browses()
    {
        tools.push(answer_tool_spec());
    }
    tools
}

/// Runs one agent's loop; boxed because sub-agents recurse into it.
pub(crate) fn run_loop<'a>(
    rt: &'a Runtime<'a>,
    config: &'a AgentConfig,
    depth: u32,
    messages: Vec<Message>,
    cancel: CancellationToken,
) -> BoxFuture<'a, RunReport> {
    Box::pin(async move {
        let mut run = Run::new(rt, config, depth, messages);
        if config.options.policy == Policy::Retrieve {
            run.retrieve_first(&cancel).await;
        }
        let (stop, answer) = run.go(&cancel).await;
        run.report(stop, answer)
    })
}

/// One agent's loop and what it keeps between requests (see the module's doc).
pub(crate) struct Run<'a> {
    rt: &'a Runtime<'a>,
    config: &'a AgentConfig,
    depth: u32,
    agent: String,
    messages: Vec<Message>,
    /// The meta tools a run starts with (discover, call_tool, answer; and sub-agents),
    /// not the catalog tools `Upfront` starts with: a successful call of anything else is
    /// a real action, and its arguments are grounded.
    meta: Vec<String>,
    /// The meta tools that only find tools, left out of a request that requires a call:
    /// the model must then call one of the tools it was given, or answer (a small model
    /// told to call something calls `discover_tools` and writes the call as text).
    finders: Vec<String>,
    tools: ToolSet,
    forcing: Forcing,
    usage: TokenUsage,
    /// The needs of a request of several that no call has served yet.
    needs: Needs,
    /// Calls `ground_arguments` refused: made again unchanged, they run.
    refused: std::sync::Mutex<std::collections::HashSet<String>>,
    steps: u32,
    /// Tools offered compactly so far ([`Run::offer`]).
    offered: usize,
    /// `NEED:` lines searched so far ([`Run::requested`]).
    requests: usize,
    /// The last user message as the model wrote it in English ([`Run::translate`]), when
    /// it is not in English: grounds for the calls' arguments beside the user's words.
    english: Option<String>,
}

/// The most tools one run offers compactly: the first retrieval's server's, and the
/// servers of the tools that ran (see [`Run::offer_servers_of`]).
const MAX_OFFERED: usize = 24;

/// The tools a `NEED:` line activates ([`Run::requested`]): its best two, as a need of
/// the request has (the second is most often a sibling the next step wants).
const REQUEST_TOOLS: usize = 2;

/// The most tokens the model may write for a plan ([`Run::plan`]): six short lines.
const PLAN_TOKENS: usize = 120;

/// The most tokens the model may write for a request in English ([`Run::translate`]).
const MAX_TRANSLATION_TOKENS: usize = 512;

/// The most characters of the model's English kept for the search ([`Run::translate`]).
const MAX_TRANSLATION_CHARS: usize = 4_000;

/// What one step's calls did (see [`Run::take_calls`]).
enum Taken {
    /// The run goes on.
    Next,
    /// The answer tool's text was final.
    Answer(String),
}

impl<'a> Run<'a> {
    fn new(
        rt: &'a Runtime<'a>,
        config: &'a AgentConfig,
        depth: u32,
        messages: Vec<Message>,
    ) -> Run<'a> {
        let initial = initial_tools(rt, config, depth);
        // Under `Upfront` the host's tools are the catalog's own: real tools, whose calls
        // are actions and whose arguments are checked, not meta tools.
        let meta: Vec<String> = initial
            .iter()
            .filter(|t| config.options.policy.browses() || rt.subagent(&t.name).is_some())
            .map(|t| t.name.to_string())
            .collect();
        let finders: Vec<String> = meta
            .iter()
            .filter(|name| {
                name.as_str() != ANSWER_TOOL && !rt.subagents.iter().any(|a| a.name == **name)
            })
            .cloned()
            .collect();
        Run {
            rt,
            config,
            depth,
            agent: config.name.clone(),
            messages,
            meta,
            finders,
            tools: ToolSet::new(initial, config.options.activation_cap),
            forcing: Forcing::default(),
            usage: TokenUsage::default(),
            needs: Needs::default(),
            refused: std::sync::Mutex::new(std::collections::HashSet::new()),
            steps: 0,
            offered: 0,
            requests: 0,
            english: None,
        }
    }

    /// The run's report.
    fn report(self, stop: StopReason, answer: Option<String>) -> RunReport {
        RunReport {
            agent: self.agent,
            messages: self.messages,
            answer,
            usage: self.usage,
            steps: self.steps,
            stop,
            tools: self.tools.names(),
        }
    }

    /// Steps until an answer, a limit or a cancellation.
    async fn go(&mut self, cancel: &CancellationToken) -> (StopReason, Option<String>) {
        loop {
            if cancel.is_cancelled() {
                return (StopReason::Cancelled, None);
            }
            if self.steps >= self.config.options.max_steps {
                return (StopReason::MaxSteps, None);
            }
            if self
                .config
                .options
                .max_tokens
                .is_some_and(|max| self.usage.total() >= max)
            {
                return (StopReason::MaxTokens, None);
            }
            self.steps += 1;
            let span = tracing::info_span!(
                "agent_step",
                agent = %self.agent,
                depth = self.depth,
                step = self.steps,
                prompt_tokens = Empty,
                completion_tokens = Empty,
                tool_calls = Empty,
                finish_reason = Empty,
            );
            self.rt.emitter.emit(AgentEvent::StepStarted {
                agent: self.agent.clone(),
                depth: self.depth,
                step: self.steps,
            });
            let (body, result) = self.request(&span, cancel).await;
            let completion = match result {
                None => return (StopReason::Cancelled, None),
                Some(Err(e)) => {
                    tracing::warn!(parent: &span, error = %e, "the endpoint failed");
                    return (
                        StopReason::EndpointError {
                            status: e.status(),
                            message: e.to_string(),
                        },
                        None,
                    );
                }
                Some(Ok(c)) => c,
            };
            self.record(&span, &body, &completion);
            if completion.tool_calls.is_empty() {
                // The model asked for tools in place of an answer: the next request
                // requires a call of one of those it found.
                if let Some(found) = self.requested(&completion.content) {
                    self.forcing.follow_up = Some(found);
                    continue;
                }
                let text = completion.content;
                match self.answered(text) {
                    None => continue,
                    Some(text) => return (StopReason::Answer, Some(text)),
                }
            }
            // Asked beside its calls, the tools join the array for the steps after.
            self.requested(&completion.content);
            match self.take_calls(&completion, &span, cancel).await {
                Taken::Next => {}
                Taken::Answer(text) => return (StopReason::Answer, Some(text)),
            }
        }
    }

    /// Phase 1, [`Policy::Retrieve`]: searches the catalog with every user message, in
    /// order, and activates what each finds. Earlier messages are searched again so that
    /// a continued conversation rebuilds the same tools array, then appends. The next
    /// request must call a tool when anything was activated and the last message's
    /// retrieval found a tool (an earlier message's tools do not force a call on a later
    /// turn that found none); the needs of the last message are followed up; its best
    /// tool is named if an answer is questioned. A last message that is not in English
    /// is searched (and split into needs, and planned) as the model writes it in English
    /// ([`Run::translate`]).
    async fn retrieve_first(&mut self, cancel: &CancellationToken) {
        let english = self.translate(cancel).await;
        let planned = self.plan(english.as_deref(), cancel).await;
        let found = self.retrieve_messages(english.as_deref(), planned.as_deref());
        self.english = english;
        self.forcing.activated = found.require_call;
        self.forcing.best = found.best;
        self.forcing.one_need = found.one_need;
        if self.config.options.follow_needs {
            self.needs.pending = found.pending;
        }
    }

    /// The last user message's text.
    fn last_user(&self) -> Option<String> {
        self.messages.iter().rev().find_map(|m| match m {
            Message::User { content } => Some(content.clone()),
            _ => None,
        })
    }

    /// With [`AgentOptions::translate_requests`](crate::AgentOptions::translate_requests),
    /// when the last user message is not in English: the same request in English as the
    /// model writes it (`prompts/agent_translate.md`), to search with. When the model's
    /// text is not its translation — empty, not English, or keeping fewer than half of the
    /// message's codes and numbers, as when the model answered the request instead (see
    /// [`crate::translation`]) — it is asked once more, with the message put as a text
    /// to translate (`prompts/agent_translate_again.md`). `None` for a message in
    /// English, when the second text is not its translation either, or when the endpoint
    /// failed: the run goes on with the message's own words. Its tokens count in the
    /// run's.
    async fn translate(&mut self, cancel: &CancellationToken) -> Option<String> {
        if !self.config.options.translate_requests {
            return None;
        }
        let message = self.last_user()?;
        let language = crate::language::detect(&message).code();
        if language == "en" {
            return None;
        }
        // Room for the request in English: a token is about four letters of a European
        // language, one or two Han characters; the cap bounds a long message's cost.
        let room = message.chars().count().clamp(64, MAX_TRANSLATION_TOKENS);
        let span = tracing::info_span!("agent_translate", agent = %self.agent, depth = self.depth);
        // Put as the user's message, a request is sometimes answered ("Sure, please
        // provide the request."); put as a text to translate, it is sometimes answered
        // too, but not the same ones: the second framing is asked only if the first fails.
        let framings = [
            [
                Message::user(message.clone()),
                Message::system(crate::prompts::TRANSLATE.trim_end()),
            ],
            [
                Message::system(crate::prompts::TRANSLATE_AGAIN.trim_end()),
                Message::user(
                    crate::prompts::TRANSLATE_AGAIN_TEXT
                        .trim_end()
                        .replace("{message}", &message),
                ),
            ],
        ];
        let mut english = None;
        for ask in &framings {
            let content = self.ask_aside(ask, room, &span, cancel).await?;
            match crate::translation::english_of(&message, &content) {
                Ok(text) => {
                    english = Some(text);
                    break;
                }
                Err(why) => {
                    tracing::info!(parent: &span, %why, "the model's text is not the request in English");
                }
            }
        }
        let Some(english) = english else {
            tracing::info!(parent: &span, "searching with the message");
            return None;
        };
        let english: String = english.chars().take(MAX_TRANSLATION_CHARS).collect();
        self.rt.emitter.emit(AgentEvent::Translated {
            agent: self.agent.clone(),
            depth: self.depth,
            language: language.to_owned(),
            text: english.clone(),
        });
        Some(english)
    }

    /// A request beside the conversation (a plan, a translation): `ask` as its messages,
    /// no tools, at most `max_tokens`; the answer's text, or `None` when the endpoint
    /// failed (logged) or the run was cancelled. Its usage counts in the run's; its text
    /// is not streamed to the caller as the answer's is.
    async fn ask_aside(
        &mut self,
        ask: &[Message],
        max_tokens: usize,
        span: &tracing::Span,
        cancel: &CancellationToken,
    ) -> Option<String> {
        let mut body = self.config.options.request_params.clone();
        for key in ["stream", "stream_options", "tools", "tool_choice"] {
            body.remove(key);
        }
        body.insert("model".to_owned(), self.config.model.clone().into());
        body.insert("messages".to_owned(), serde_json::json!(ask));
        body.insert("max_tokens".to_owned(), max_tokens.into());
        let completion = tokio::select! {
            biased;
            () = cancel.cancelled() => return None,
            r = self.rt.client.complete(body.clone(), self.config.options.stream, self.steps, |_: &str| {})
                .instrument(span.clone()) => r,
        };
        let completion = match completion {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(parent: span, error = %e, "the request failed; going on without");
                return None;
            }
        };
        self.usage.add(
            completion
                .usage
                .unwrap_or_else(|| estimate(&body, &completion)),
        );
        Some(completion.content)
    }

    /// With [`AgentOptions::plan_needs`](crate::AgentOptions::plan_needs), when the last user message states several
    /// needs: the tools it needs as the model lists them (`prompts/agent_plan.md`), one
    /// step a line; `None` when the model listed fewer than two (or the endpoint failed:
    /// the run goes on with the message's own needs). Its tokens count in the run's. The
    /// message is `english` when the model wrote it so (see [`Run::translate`]).
    async fn plan(
        &mut self,
        english: Option<&str>,
        cancel: &CancellationToken,
    ) -> Option<Vec<String>> {
        if !self.config.options.plan_needs {
            return None;
        }
        let message = match english {
            Some(text) => text.to_owned(),
            None => self.last_user()?,
        };
        if crate::needs::split_needs(&message).len() < 2 {
            return None;
        }
        let ask = [
            Message::user(message),
            Message::system(crate::prompts::PLAN.trim_end()),
        ];
        let span = tracing::info_span!("agent_plan", agent = %self.agent, depth = self.depth);
        let content = self.ask_aside(&ask, PLAN_TOKENS, &span, cancel).await?;
        let steps = crate::retrieval::plan_steps(&content);
        self.rt.emitter.emit(AgentEvent::Planned {
            agent: self.agent.clone(),
            depth: self.depth,
            steps: steps.clone(),
        });
        (steps.len() > 1).then_some(steps)
    }

    /// The retrieval of [`Run::retrieve_first`], message by message; the last message is
    /// searched as `english` when the model wrote it so, and its needs are the `planned`
    /// steps when there are some.
    fn retrieve_messages(
        &mut self,
        english: Option<&str>,
        planned: Option<&[String]>,
    ) -> LastRetrieval {
        let last_user = self
            .messages
            .iter()
            .rposition(|m| matches!(m, Message::User { .. }));
        let mut activated = false;
        let mut last = LastRetrieval {
            require_call: false,
            pending: Vec::new(),
            best: None,
            one_need: false,
        };
        let mut last_found = false;
        let user: Vec<(usize, String)> = self
            .messages
            .iter()
            .enumerate()
            .filter_map(|(i, m)| match m {
                Message::User { content } => Some((i, content.clone())),
                _ => None,
            })
            .collect();
        for (i, mut content) in user {
            let plan = planned.filter(|_| Some(i) == last_user);
            if Some(i) == last_user
                && let Some(english) = english
            {
                english.clone_into(&mut content);
            }
            let (found, needs, found_needs) =
                retrieve_message(self.rt.host, self.config, &content, plan);
            let unsplit = needs.is_empty();
            self.rt.emitter.emit(AgentEvent::Retrieved {
                agent: self.agent.clone(),
                depth: self.depth,
                tools: found.tools.clone(),
                confidence: found.confidence,
                needs,
            });
            if Some(i) == last_user {
                last.one_need = unsplit;
                last.pending = found_needs;
                last_found = !found.tools.is_empty();
                last.best = found.tools.first().cloned();
            }
            activated |= self.activate(&found.tools);
            if Some(i) == last_user && self.config.options.server_tools > 0 {
                let limit = self.config.options.server_tools.min(MAX_OFFERED);
                let more = self.rt.host.server_tools(&content, &found.tools, limit);
                self.offer(&more);
            }
        }
        last.require_call = activated && last_found;
        last
    }

    /// Phase 2: the next request and the endpoint's answer (`None` when the run was
    /// cancelled meanwhile), with the body that was sent.
    ///
    /// An endpoint may refuse what forcing asks of it (llama.cpp answers 400 "Failed to
    /// parse grammar" for the grammar of some tools' schemas): the same request is sent
    /// unforced, and no later request of the run is forced. If that too is refused for
    /// the tools' schemas, the client sends it once more with them relaxed, and relaxes
    /// them from then on (`crate::relax`).
    async fn request(
        &mut self,
        span: &tracing::Span,
        cancel: &CancellationToken,
    ) -> (Map<String, Value>, Option<crate::Result<Completion>>) {
        let (force, shown) = self.forcing.next_request(self.config);
        let mut body = self.body(force, &shown);
        let mut result = self.complete(&body, span, cancel).await;
        if force
            && let Some(Err(e)) = &result
            && e.status()
                .is_some_and(|s| (400..500).contains(&s) && s != 401 && s != 429)
        {
            tracing::warn!(parent: span, error = %e, "the endpoint refused a required tool call; asking again without");
            self.forcing.refused = true;
            body = request_body(
                self.config,
                &self.needs.sent(&self.messages),
                &self.tools,
                None,
                &Shown::All,
            );
            result = self.complete(&body, span, cancel).await;
        }
        (body, result)
    }

    /// The body of a request that requires a call (`force`) or not and shows `shown`.
    ///
    /// A request that shows no tools, or requires a call of the tools it shows, leaves
    /// out the guidance on when to call them and on finding others: it has nothing to
    /// say then (a required call has no finder to use), and it was the largest part of
    /// the first request after the tools. The request that closes the run asks for the
    /// answer in plain text.
    fn body(&self, force: bool, shown: &Shown) -> Map<String, Value> {
        let (plain, ask);
        let mut sent = self.needs.sent(&self.messages);
        if (*shown == Shown::Nothing || force)
            && let Some(first) = sent.first()
            && let Some(own) = own_prompt(self.config, first)
        {
            if own.is_empty() {
                sent.remove(0);
            } else {
                plain = Message::system(own);
                sent[0] = &plain;
            }
        }
        if *shown == Shown::Nothing {
            ask = Message::system(crate::prompts::CLOSING.trim_end());
            sent.push(&ask);
        }
        request_body(
            self.config,
            &sent,
            &self.tools,
            force.then_some(&self.finders[..]),
            shown,
        )
    }

    /// Sends `body`, telling the text as it streams in; `None` when cancelled first.
    async fn complete(
        &self,
        body: &Map<String, Value>,
        span: &tracing::Span,
        cancel: &CancellationToken,
    ) -> Option<crate::Result<Completion>> {
        let emitter = self.rt.emitter.clone();
        let (agent, depth) = (self.agent.clone(), self.depth);
        let on_text = move |text: &str| {
            emitter.emit(AgentEvent::TextDelta {
                agent: agent.clone(),
                depth,
                text: text.to_owned(),
            });
        };
        tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            r = self.rt.client.complete(body.clone(), self.config.options.stream, self.steps, on_text)
                .instrument(span.clone()) => Some(r),
        }
    }

    /// Counts the step's usage (estimated when the endpoint reports none) and adds the
    /// model's turn to the conversation.
    fn record(&mut self, span: &tracing::Span, body: &Map<String, Value>, completion: &Completion) {
        let step_usage = completion
            .usage
            .unwrap_or_else(|| estimate(body, completion));
        span.record("prompt_tokens", step_usage.prompt_tokens);
        span.record("completion_tokens", step_usage.completion_tokens);
        span.record("tool_calls", completion.tool_calls.len());
        if let Some(reason) = &completion.finish_reason {
            span.record("finish_reason", reason.as_str());
        }
        self.usage.add(step_usage);
        self.rt.emitter.emit(AgentEvent::StepFinished {
            agent: self.agent.clone(),
            depth: self.depth,
            step: self.steps,
            usage: step_usage,
        });
        // `null` content is only valid next to tool calls; a bare empty turn keeps "".
        let content = (!completion.content.is_empty() || completion.tool_calls.is_empty())
            .then(|| completion.content.clone());
        self.messages.push(Message::Assistant {
            content,
            tool_calls: completion.tool_calls.clone(),
        });
    }

    /// Phase 4: runs the step's calls in parallel and takes in what they did; then, on a
    /// request of several needs, the next need left is put to the model at once (rather
    /// than after the model answers having served one: a small model calls one tool a
    /// turn, then answers), or the run closes when every need is served.
    async fn take_calls(
        &mut self,
        completion: &Completion,
        span: &tracing::Span,
        cancel: &CancellationToken,
    ) -> Taken {
        // What the conversation gave so far: a call's required arguments must be in it.
        let grounds = self.config.options.ground_arguments.then(|| Grounding {
            grounds: match &self.english {
                Some(english) => Grounds::of(&self.messages).with_english(english),
                None => Grounds::of(&self.messages),
            },
            exempt: &self.meta,
            refused: &self.refused,
        });
        let executed: Vec<Executed> = join_all(completion.tool_calls.iter().map(|call| {
            execute(
                self.rt,
                self.config,
                self.depth,
                &self.tools,
                call,
                grounds.as_ref(),
                cancel,
            )
        }))
        .instrument(span.clone())
        .await;
        drop(grounds);
        for (call, done) in completion.tool_calls.iter().zip(&executed) {
            self.messages.push(Message::Tool {
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
        // The real tools that ran now, in order: their servers' other tools are offered.
        let mut ran: Vec<String> = Vec::new();
        for done in executed {
            self.usage.add(done.usage);
            if done.tool == ANSWER_TOOL && self.tools.get(ANSWER_TOOL).is_some() {
                final_text = done.answer;
                continue;
            }
            self.tools.touch(&done.tool);
            // A tool offered compactly that the model called: offered whole from now on
            // (a call its parameters' names alone did not get right is made again so).
            if self.tools.is_compact(&done.tool) {
                self.forcing.activated |= self.activate(std::slice::from_ref(&done.tool));
            }
            failed |= !done.outcome.is_ok();
            let real = done.outcome.is_ok() && !self.meta.contains(&done.tool);
            self.forcing.acted |= real;
            if real {
                self.needs.served(&done.tool);
                progressed = true;
                if !ran.contains(&done.tool) {
                    ran.push(done.tool.clone());
                }
            } else if done.outcome.error_kind() == Some(ErrorKind::UngroundedArguments) {
                asked_again |= self.needs.refused(&done.tool);
            }
            let found = done
                .outcome
                .found
                .iter()
                .take(self.config.options.activate_hits);
            let names: Vec<String> = done
                .outcome
                .disclosed
                .iter()
                .chain(found)
                .cloned()
                .collect();
            self.disclosed(&done.outcome.disclosed);
            self.forcing.activated |= self.activate(&names);
        }
        if let Some(text) = final_text {
            // The answer tool's text is the final answer, as if the model had said it.
            self.messages.push(Message::Assistant {
                content: Some(text.clone()),
                tool_calls: Vec::new(),
            });
            // The model also declines a need it was asked for ("no tool fits") so.
            return match self.answered(text) {
                None => Taken::Next,
                Some(text) => Taken::Answer(text),
            };
        }
        self.offer_servers_of(&ran);
        if progressed || asked_again {
            let followed = self.follow_up();
            // The last need served (or the one need of a request of one), nothing
            // failed and nothing new was found: what is left is the answer.
            let served = self.needs.all_served()
                || (self.config.options.follow_needs && self.forcing.one_need);
            self.forcing.closing =
                !followed && progressed && !failed && !self.forcing.activated && served;
        }
        Taken::Next
    }

    /// Phase 3: the model answered, in text or with the answer tool. After a real call,
    /// or before any when the request holds several needs (see
    /// [`Needs::declined_unserved`]), a need left unserved is put to the model (see
    /// [`Run::follow_up`]): `None`, the run goes on. Before any call, on a request that
    /// required one, an answer that reports work done ("I found a house…", see
    /// [`crate::claims`]) is made up: the model is told that no tool has run and
    /// required once more to call one (or decline with the answer tool). Else the answer
    /// is final: reported, and returned.
    fn answered(&mut self, text: String) -> Option<String> {
        if (self.forcing.acted || (self.forcing.forced > 0 && self.needs.declined_unserved()))
            && self.follow_up()
        {
            return None;
        }
        if !self.forcing.acted
            && self.forcing.forced > 0
            && !self.forcing.questioned
            && let Some(best) = self.forcing.best.clone()
            && crate::claims::claims_work(&text)
        {
            self.forcing.questioned = true;
            self.forcing.activated = true;
            // It is in the array unless later activations evicted it.
            self.activate(std::slice::from_ref(&best));
            let shown = self.tools.alias(&best).unwrap_or(&best).to_owned();
            self.messages.push(Message::system(fill(
                crate::prompts::NO_CALL_YET.trim_end(),
                &[("{tool}", &shown)],
            )));
            self.rt.emitter.emit(AgentEvent::AnswerQuestioned {
                agent: self.agent.clone(),
                depth: self.depth,
                answer: text,
            });
            return None;
        }
        self.rt.emitter.emit(AgentEvent::FinalAnswer {
            agent: self.agent.clone(),
            depth: self.depth,
            text: text.clone(),
        });
        Some(text)
    }

    /// Puts the next need left (see [`Needs::next`]) to the model, if there is one
    /// ([`AgentOptions::follow_needs`](crate::AgentOptions::follow_needs)): its tools activated again if they had left the
    /// array, a system message naming it, and a next request that requires a call of one
    /// of them (or `answer`). Whether it did.
    fn follow_up(&mut self) -> bool {
        let Some(need) = self.needs.next() else {
            return false;
        };
        self.forcing.follow_up = Some(need.tools.clone());
        self.activate(&need.tools);
        self.needs.said.push(self.messages.len());
        self.messages.push(Message::system(fill(
            crate::prompts::FOLLOW_NEED.trim_end(),
            &[("{need}", need.text.trim().trim_end_matches(['.', ',', ';']))],
        )));
        self.rt.emitter.emit(AgentEvent::NeedFollowedUp {
            agent: self.agent.clone(),
            depth: self.depth,
            need: need.text,
            tools: need.tools,
        });
        true
    }

    /// The tools the model asked for with `NEED:` lines in `text`
    /// ([`AgentOptions::tool_requests`](crate::AgentOptions::tool_requests), within [`MAX_TOOL_REQUESTS`] a run): each line's
    /// best tools activated, their server's others offered compactly, a system message
    /// naming what was added, and each request reported. The tools found, when any was.
    fn requested(&mut self, text: &str) -> Option<Vec<String>> {
        if !self.config.options.tool_requests || !self.config.options.policy.browses() {
            return None;
        }
        let mut all: Vec<String> = Vec::new();
        for need in crate::retrieval::tool_requests(text) {
            if self.requests >= MAX_TOOL_REQUESTS {
                break;
            }
            self.requests += 1;
            let mut found = self.rt.host.retrieve(&need, REQUEST_TOOLS).tools;
            found.truncate(REQUEST_TOOLS);
            self.activate(&found);
            // Only what is in the array now (the scope may have kept a tool out).
            let found: Vec<String> = found
                .into_iter()
                .filter(|t| self.tools.get(t).is_some())
                .collect();
            if self.config.options.server_tools > 0 {
                let left = MAX_OFFERED.saturating_sub(self.offered);
                let more = self.rt.host.server_tools(
                    &need,
                    &self.tools.names(),
                    self.config.options.server_tools.min(left),
                );
                self.offer(&more);
            }
            self.rt.emitter.emit(AgentEvent::ToolRequested {
                agent: self.agent.clone(),
                depth: self.depth,
                need: need.clone(),
                tools: found.clone(),
            });
            if found.is_empty() {
                continue;
            }
            let shown: Vec<&str> = found
                .iter()
                .map(|t| self.tools.alias(t).unwrap_or(t))
                .collect();
            self.messages.push(Message::system(fill(
                crate::prompts::TOOL_REQUEST_FOUND.trim_end(),
                &[("{need}", &need), ("{tools}", &shown.join(", "))],
            )));
            for tool in found {
                if !all.contains(&tool) {
                    all.push(tool);
                }
            }
        }
        (!all.is_empty()).then_some(all)
    }

    /// Between steps: the server of each real tool that just ran offers its other tools
    /// compactly, best first for the last user message ([`ToolHost::server_tools`],
    /// [`AgentOptions::server_tools`](crate::AgentOptions::server_tools) a server), within [`MAX_OFFERED`] a run. Once one
    /// of a server's tools has run, its siblings are the likely next steps: a task of
    /// two servers found one tool of the second by a need of its own.
    fn offer_servers_of(&mut self, ran: &[String]) {
        if self.config.options.server_tools == 0 || self.config.options.policy != Policy::Retrieve {
            return;
        }
        let Some(message) = self.messages.iter().rev().find_map(|m| match m {
            Message::User { content } => Some(content.clone()),
            _ => None,
        }) else {
            return;
        };
        for tool in ran {
            let left = MAX_OFFERED.saturating_sub(self.offered);
            if left == 0 {
                return;
            }
            // The tool first (its server is the one asked for), then every tool the
            // array holds, which are not offered again.
            let mut known = vec![tool.clone()];
            known.extend(self.tools.names().into_iter().filter(|n| n != tool));
            let more = self.rt.host.server_tools(
                &message,
                &known,
                self.config.options.server_tools.min(left),
            );
            self.offer(&more);
        }
    }

    /// Offers tools compactly (see [`ToolSet::offer_compact`]), within the scope; those
    /// offered are reported.
    fn offer(&mut self, names: &[String]) {
        let mut offered = Vec::new();
        for name in names {
            if !self.config.options.tool_scope.allows(name) {
                continue;
            }
            let Some(spec) = self.rt.host.spec(name) else {
                continue;
            };
            if spec.metadata.enabled_by_default && self.tools.offer_compact(spec).is_some() {
                offered.push(name.clone());
            }
        }
        self.offered += offered.len();
        if !offered.is_empty() {
            self.rt.emitter.emit(AgentEvent::Offered {
                agent: self.agent.clone(),
                depth: self.depth,
                tools: offered,
            });
        }
    }

    /// Reports the tools a call disclosed at level 2 or 3.
    fn disclosed(&self, disclosed: &[String]) {
        if disclosed.is_empty() {
            return;
        }
        self.rt.emitter.emit(AgentEvent::Disclosed {
            agent: self.agent.clone(),
            depth: self.depth,
            tools: disclosed.to_vec(),
        });
    }

    /// Appends tools to the tools array (browse and retrieve policies), within the scope,
    /// in the order given (a batch best first). Whether any was added.
    ///
    /// **Rationale for best first:** with Qwen2.5-Coder-1.5B on 50 BFCL tasks, best first
    /// called the right tool in 0.78 of them, best last (nearest the conversation) in 0.74:
    /// a wrong pick is as often the last tool as another. Best last was an option until
    /// then.
    fn activate(&mut self, names: &[String]) -> bool {
        if !self.config.options.policy.browses() {
            return false;
        }
        let mut added = false;
        for name in names {
            // A sub-agent `discover_agents` described: delegation is not bound by the scope.
            let sub = self
                .rt
                .subagent(name)
                .filter(|_| self.depth < self.rt.max_depth);
            if sub.is_none() && !self.config.options.tool_scope.allows(name) {
                continue;
            }
            let Some(spec) = sub.map(subagent_spec).or_else(|| self.rt.host.spec(name)) else {
                continue;
            };
            if !spec.metadata.enabled_by_default {
                continue;
            }
            if let Activation::Added { alias, evicted } = self.tools.activate(spec) {
                tracing::debug!(tool = %name, %alias, ?evicted, "activated");
                added = true;
                self.rt.emitter.emit(AgentEvent::Activated {
                    agent: self.agent.clone(),
                    depth: self.depth,
                    tool: name.clone(),
                    alias,
                    evicted,
                });
            }
        }
        added
    }
}
