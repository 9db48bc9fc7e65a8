//! [`ToolboxHost`]: the real [`ToolHost`], over a `toolscout-discover` [`Toolbox`].

use serde_json::Value;
use toolscout_discover::{Answer, DiscoverTools, Lookup, Toolbox};
use toolscout_spec::ToolSpec;
use toolscout_spec::adapters::openai::NameMap;

use toolscout_search::{SearchQuery, Tier};

use crate::host::{CallContext, CallOutcome, Retrieval, Suggestion, ToolHost, call_tool_spec};
use crate::{BoxFuture, Policy};

/// A [`ToolHost`] over a catalog: the `discover_*` tools answer from the [`Toolbox`]'s
/// catalog and index, every other call goes through its invoker.
///
/// Under [`Policy::Browse`] and [`Policy::Retrieve`] a run starts with the discover tools
/// (one `discover_tools` over the whole catalog unless others are added) and (under
/// `Browse`) `call_tool` (an agent with sub-agents adds `discover_agents`, see
/// [`Agent::with_subagent`](crate::Agent::with_subagent)); under
/// `Retrieve` the discover tools are a fallback and show their
/// [brief spec](DiscoverTools::brief_spec); a
/// search's hits are reported
/// as [`CallOutcome::found`], and [`ToolHost::retrieve`] is the catalog's ranked search
/// (name, words and, with an embedder, meaning; fuzzy matches of single words do not
/// count as a fit). Under [`Policy::Upfront`] it starts with every callable tool.
/// A disabled tool's spec comes back with `metadata.enabled_by_default = false`, which
/// the loop reads as "disabled".
#[derive(Debug, Clone)]
pub struct ToolboxHost {
    toolbox: Toolbox,
    discover: Vec<DiscoverTools>,
    twin_similarity: Option<f32>,
    margin: Option<f32>,
}

impl ToolboxHost {
    /// A host with one `discover_tools` over the whole catalog.
    pub fn new(toolbox: Toolbox) -> Self {
        ToolboxHost {
            discover: vec![DiscoverTools::new(toolbox.clone())],
            toolbox,
            twin_similarity: Some(DEFAULT_TWIN_SIMILARITY),
            margin: Some(DEFAULT_MARGIN),
        }
    }

    /// How far in meaning a retrieved tool may fall behind the first before
    /// [`ToolHost::retrieve`] leaves it out: a tool whose cosine with the message is more
    /// than `margin` below the first tool's is not offered. `None` keeps every tool up to
    /// the limit. Applies only when the first tool was found by meaning (not by its name)
    /// and to tools whose meaning is known. The default is [`DEFAULT_MARGIN`]; NaN is
    /// taken as `None`, and a negative margin as 0 (a tool as near as the first stays).
    #[must_use]
    pub fn with_margin(mut self, margin: Option<f32>) -> Self {
        self.margin = margin.filter(|v| !v.is_nan()).map(|v| v.max(0.0));
        self
    }

    /// How close in meaning (the index's [`similarity`](toolscout_search::SearchIndex::similarity))
    /// a retrieved tool may be to one ranked above it before [`ToolHost::retrieve`] drops
    /// it as a twin; `None` keeps twins. The default is [`DEFAULT_TWIN_SIMILARITY`].
    /// Without an embedder nothing is dropped.
    /// A value above 1 keeps every tool, like `None`; NaN is taken as `None`.
    #[must_use]
    pub fn with_twin_similarity(mut self, at: Option<f32>) -> Self {
        self.twin_similarity = at.filter(|v| !v.is_nan());
        self
    }

    /// Replaces the discover tools, e.g. with one per category.
    #[must_use]
    pub fn with_discover(mut self, discover: Vec<DiscoverTools>) -> Self {
        self.discover = discover;
        self
    }

    /// The toolbox.
    pub fn toolbox(&self) -> &Toolbox {
        &self.toolbox
    }

    /// [`ToolHost::retrieve`] among the tools of `bundles` (slugs; empty: all).
    fn retrieve_in(&self, message: &str, limit: usize, bundles: Vec<String>) -> Retrieval {
        if limit == 0 {
            return Retrieval::default();
        }
        let text: String = message.chars().take(RETRIEVE_CHARS).collect();
        if text.trim().is_empty() {
            return Retrieval::default();
        }
        // Twins dropped leave room for the next tools, and a kept tool's siblings may be
        // further down: look a little further.
        let depth = limit.saturating_mul(3);
        let mut query = SearchQuery::new(text.as_str()).with_limit(depth);
        query.bundles = bundles;
        let Ok(found) = self.toolbox.search(&query) else {
            return Retrieval::default();
        };
        let index = self.toolbox.index();
        // (tool name, index id) of the tools kept, and the confidence in the first.
        let mut kept: Vec<(String, String)> = Vec::with_capacity(limit);
        let mut confidence = None;
        // The first tool's meaning, when it was found by meaning.
        let mut first_meaning: Option<f32> = None;
        // The bundles of the tools kept.
        let mut kept_bundles: Vec<uuid::Uuid> = Vec::with_capacity(limit);
        // The hits past the limit that the margin would keep, in rank order: a kept
        // tool's sibling may be among them.
        let mut passed: Vec<(String, uuid::Uuid)> = Vec::new();
        for (tool, hit) in found.hits {
            if hit.tier == Tier::Fuzzy || !tool.is_callable() {
                continue;
            }
            let twin = self.twin_similarity.is_some_and(|at| {
                kept.iter()
                    .any(|(_, id)| index.similarity(id, &hit.id).is_some_and(|s| s >= at))
            });
            if twin {
                continue;
            }
            let behind = match (self.margin, first_meaning, hit.meaning) {
                (Some(margin), Some(first), Some(m)) => m < first - margin,
                _ => false,
            };
            if behind {
                continue;
            }
            if kept.len() == limit {
                // A sibling must be as near as the margin asks, and never further than
                // the default margin: a wide margin widens the top-k, not the siblings.
                let bar = self
                    .margin
                    .map_or(DEFAULT_MARGIN, |m| m.min(DEFAULT_MARGIN));
                let near = match (first_meaning, hit.meaning) {
                    (Some(first), Some(m)) => m >= first - bar,
                    _ => true,
                };
                if near {
                    passed.push((tool.spec.name.to_string(), tool.bundle_id));
                }
                continue;
            }
            if kept.is_empty() {
                if !matches!(hit.tier, Tier::Exact | Tier::Prefix) {
                    first_meaning = hit.meaning.filter(|m| m.is_finite());
                }
                confidence = match hit.tier {
                    Tier::Exact => Some(1.0),
                    // The share of the name the message spells: "no" is not `notify_slack`.
                    Tier::Prefix => {
                        let name = tool.spec.name.chars().count().max(1);
                        Some((text.trim().chars().count() as f32 / name as f32).min(1.0))
                    }
                    _ => hit
                        .meaning
                        .filter(|m| m.is_finite())
                        .map(|m| m.clamp(0.0, 1.0)),
                };
            }
            kept_bundles.push(tool.bundle_id);
            kept.push((tool.spec.name.to_string(), hit.id));
        }
        let mut tools: Vec<String> = kept.into_iter().map(|(name, _)| name).collect();
        tools.extend(self.siblings(&kept_bundles, passed));
        Retrieval { tools, confidence }
    }

    /// The server `tool` belongs to: its bundle's slug, id and number of tools, when
    /// that is a bundle of 2 to [`SERVER_BUNDLE`] tools that is not built in (not a
    /// catalog of loose functions kept in one bundle).
    fn server(&self, tool: &str) -> Option<(String, uuid::Uuid, usize)> {
        let Lookup::Found(tool) = self.toolbox.lookup(tool) else {
            return None;
        };
        let bundle = self.toolbox.catalog().bundle(tool.bundle_id).ok()?;
        let mut size = 0;
        self.toolbox.catalog().for_each_head(|h, _| {
            size += usize::from(h.bundle_id == bundle.id);
        });
        (!bundle.is_built_in && (2..=SERVER_BUNDLE).contains(&size))
            .then(|| (bundle.slug.as_str().to_owned(), bundle.id, size))
    }

    /// The siblings [`ToolHost::retrieve`] adds to the tools it kept: hits of the same
    /// search past the limit (within the margin, not twins of a kept tool) that belong to
    /// the bundle of a kept tool — the API or server it is part of — when that bundle is
    /// small (at most [`SIBLING_BUNDLE`] tools: an API's, not a catalog's worth of loose
    /// functions); at most [`SIBLINGS`], in rank order.
    ///
    /// A request served by two tools of one API (find the id, then the details) finds
    /// the one whose words it shares; the other often ranks just behind.
    fn siblings(&self, kept: &[uuid::Uuid], passed: Vec<(String, uuid::Uuid)>) -> Vec<String> {
        let candidates: Vec<(String, uuid::Uuid)> = passed
            .into_iter()
            .filter(|(_, bundle)| kept.contains(bundle))
            .collect();
        if candidates.is_empty() {
            return Vec::new();
        }
        // The size of each bundle a candidate is in, counted only now that one is.
        let mut sizes: std::collections::HashMap<uuid::Uuid, usize> =
            candidates.iter().map(|(_, bundle)| (*bundle, 0)).collect();
        self.toolbox.catalog().for_each_head(|h, _| {
            if let Some(n) = sizes.get_mut(&h.bundle_id) {
                *n += 1;
            }
        });
        let mut out: Vec<String> = Vec::new();
        for (name, bundle) in candidates {
            if out.len() == SIBLINGS {
                break;
            }
            let small = sizes.get(&bundle).is_some_and(|n| *n <= SIBLING_BUNDLE);
            if small && !out.contains(&name) {
                out.push(name);
            }
        }
        out
    }

    fn discover_tool(&self, name: &str) -> Option<&DiscoverTools> {
        self.discover.iter().find(|d| d.name() == name)
    }
}

/// The default of [`ToolboxHost::with_twin_similarity`]: search's near-twin line.
///
/// **Rationale:** a small model offered two twins (`calculate_emissions` and
/// `calculate_vehicle_emission`, `Movies_3_FindMovies` and `Media_3_FindMovies`) picks
/// either, and a slot spent on a twin is one another candidate cannot have. Measured
/// with `toolscout eval retrieve --limit 400 --twins 0.95,0.9,0.85,0.8,0.75,0.7 --margins
/// 0.15,0.1,0.08,0.05` (top 3, MiniLM; the same run as [`DEFAULT_MARGIN`]'s figures): the
/// right tool is retrieved in 0.868 of BFCL tasks keeping twins, 0.860 / 0.858 / 0.845 /
/// 0.838 / 0.820 / 0.800 dropping them at 0.95 / 0.9 / 0.85 / 0.8 / 0.75 / 0.7 (the right
/// tool was the lower twin), and in 0.670 of MetaTool tasks down to 0.8 (0.667 / 0.665 at
/// 0.75 / 0.7: its tools have few pairs that close). With Qwen2.5-Coder-1.5B on the first
/// 22 of 50 BFCL tasks, 0.8 turned two wrong-twin calls into right ones and lost none; at
/// 0.7 the twins go but so do tools that are only alike.
pub use toolscout_search::DEFAULT_TWIN_SIMILARITY;

/// The default of [`ToolboxHost::with_margin`]: a retrieved tool more than 0.1 behind the
/// first in meaning is not offered.
///
/// **Rationale:** a small model offered a clear best tool and two weaker ones picks a
/// weaker one surprisingly often (in 7 of 11 misses, the right tool was first). Leaving
/// out the tools that retrieval itself ranks well behind costs little recall and saves
/// their schemas. Measured with `toolscout eval retrieve` (top 3, twins at 0.8, 400
/// tasks, the run of [`DEFAULT_TWIN_SIMILARITY`]'s figures): the right tool is among
/// those offered in 0.838 of BFCL tasks without a margin, 0.820 / 0.812 / 0.795 / 0.775 at 0.15 / 0.1 / 0.08 / 0.05, with 2.98 tools
/// offered on average against 2.41 / 2.15 / 2.02 / 1.82; on MetaTool 0.670 against
/// 0.662 / 0.652 / 0.652 / 0.637. With Qwen2.5-Coder-1.5B on 50 BFCL tasks, 0.1 raised
/// the share of right calls from 0.78 to 0.86 (0.15: 0.82) and cut the prompt tokens per
/// task from 2,373 to 2,132; on 50 BFCL irrelevance tasks abstention stayed at 0.56
/// (tokens 1,488 to 1,419), and the no-tool prompts were left free as often (0.60).
pub const DEFAULT_MARGIN: f32 = 0.1;

/// The most siblings one [`ToolHost::retrieve`] adds (see [`ToolboxHost::siblings`]).
const SIBLINGS: usize = 2;

/// The largest bundle whose tools are siblings: an API's or a server's tools, not a
/// catalog of loose functions kept in one bundle.
const SIBLING_BUNDLE: usize = 24;

/// The largest bundle [`ToolHost::server_tools`] offers the tools of: an API's or an MCP
/// server's (the largest of the 28 servers of MCP-Bench has 35 tools), not a catalog of
/// loose functions kept in one bundle.
const SERVER_BUNDLE: usize = 64;

/// How many tools an `unknown_tool` error suggests.
const SUGGESTIONS: usize = 3;

/// The longest user message [`ToolHost::retrieve`] searches with, in characters: the
/// start of a long message says what it is about, and a query's cost grows with its words.
const RETRIEVE_CHARS: usize = 2_000;
async fn blocking(f: impl FnOnce() -> CallOutcome + Send + 'static) -> CallOutcome {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| {
        CallOutcome::error(
            toolscout_invoke::ErrorKind::ToolFailed,
            format!("the discover answer stopped: {e}"),
        )
    })
}

fn answered(answer: Answer) -> CallOutcome {
    let found = answer.found();
    CallOutcome::ok(answer.reply)
        .with_disclosed(answer.disclosed)
        .with_found(found)
}

impl ToolHost for ToolboxHost {
    fn initial_tools(&self, policy: Policy) -> Vec<ToolSpec> {
        match policy {
            // Each spec as `spec` gives it: whether a call asks for approval comes from
            // the native function's registration and a recipe's steps too.
            Policy::Upfront => self
                .toolbox
                .callable_specs()
                .into_iter()
                .map(|s| self.spec(s.name.as_str()).unwrap_or(s))
                .collect(),
            Policy::Browse | Policy::Retrieve => {
                // Beside retrieved tools, the discover tools are a fallback: brief specs.
                let spec = |d: &DiscoverTools| match policy {
                    Policy::Retrieve => d.brief_spec(),
                    _ => d.spec(),
                };
                let mut tools: Vec<ToolSpec> =
                    self.discover.iter().filter_map(|d| spec(d).ok()).collect();
                // Under Retrieve, found tools are activated and any tool may be called by
                // name: call_tool would only cost tokens.
                if policy == Policy::Browse {
                    tools.push(call_tool_spec());
                }
                tools
            }
        }
    }

    fn spec(&self, name: &str) -> Option<ToolSpec> {
        if let Some(d) = self.discover_tool(name) {
            return d.spec().ok();
        }
        // The loop reads `requires_approval` here: it comes from the native function's
        // registration too, so an edited catalog entry cannot skip the approver.
        match self.toolbox.lookup(name) {
            Lookup::Found(tool) => {
                let approval = self.toolbox.requires_approval(&tool);
                let mut spec = tool.spec;
                spec.metadata.requires_approval = approval;
                Some(spec)
            }
            Lookup::Disabled { tool, .. } => {
                let approval = self.toolbox.requires_approval(&tool);
                let mut spec = tool.spec;
                spec.metadata.enabled_by_default = false;
                spec.metadata.requires_approval = approval;
                Some(spec)
            }
            Lookup::NotFound { .. } => None,
        }
    }

    fn approval_steps(&self, name: &str) -> Vec<toolscout_invoke::PlannedStep> {
        match self.toolbox.lookup(name) {
            Lookup::Found(tool) => self.toolbox.recipe_plan(&tool).unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    fn qualified_name(&self, name: &str) -> Option<toolscout_spec::name::QualifiedName> {
        match self.toolbox.lookup(name) {
            Lookup::Found(tool) | Lookup::Disabled { tool, .. } => self
                .toolbox
                .catalog()
                .qualified_name(tool.bundle_id, &tool.slug),
            Lookup::NotFound { .. } => None,
        }
    }

    fn resolve_alias(&self, name: &str) -> Option<String> {
        let alias = |n: &str| NameMap::new([n]).alias(n).map(str::to_owned);
        let mut found = self
            .toolbox
            .suggest(name)
            .into_iter()
            .filter(|n| n != name && alias(n).as_deref() == Some(name));
        match (found.next(), found.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    }

    fn suggest(&self, name: &str) -> Vec<Suggestion> {
        self.toolbox
            .suggest_tools(name, SUGGESTIONS)
            .iter()
            .map(|t| Suggestion {
                name: t.spec.name.to_string(),
                line: format!("{} — {}", t.spec.usage(), t.spec.summary),
            })
            .collect()
    }

    fn retrieve(&self, message: &str, limit: usize) -> Retrieval {
        self.retrieve_in(message, limit, Vec::new())
    }

    fn server_of(&self, tool: &str) -> Option<String> {
        self.server(tool).map(|(slug, _, _)| slug)
    }

    fn retrieve_within(&self, message: &str, servers: &[String], limit: usize) -> Retrieval {
        if servers.is_empty() {
            return Retrieval::default();
        }
        self.retrieve_in(message, limit, servers.to_vec())
    }

    fn server_tools(&self, message: &str, found: &[String], limit: usize) -> Vec<String> {
        let Some(first) = found.first().filter(|_| limit > 0) else {
            return Vec::new();
        };
        let Some((slug, bundle, size)) = self.server(first) else {
            return Vec::new();
        };
        let text: String = message.chars().take(RETRIEVE_CHARS).collect();
        let query = SearchQuery::new(text.as_str())
            .with_bundle(slug.as_str())
            .with_limit(size);
        let Ok(hits) = self.toolbox.search(&query) else {
            return Vec::new();
        };
        // The server's tools the message matches, best first; then the others, which
        // share no word or meaning with it (the steps a request names only by their
        // outcome), in the server's own order.
        let mut out: Vec<String> = Vec::new();
        let mut add = |name: String, callable: bool| {
            if callable && !found.contains(&name) && !out.contains(&name) {
                out.push(name);
            }
        };
        for (t, _) in hits.hits {
            if t.bundle_id == bundle {
                add(t.spec.name.to_string(), t.is_callable());
            }
        }
        self.toolbox.catalog().for_each_head(|h, disabled| {
            if h.bundle_id == bundle {
                add(h.name.clone(), disabled.is_none());
            }
        });
        out.truncate(limit);
        out
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
        ctx: CallContext,
    ) -> BoxFuture<'a, CallOutcome> {
        Box::pin(async move {
            // Search work, off the async threads: one large catalog's answer must not
            // stall the loop's other calls.
            if let Some(d) = self.discover_tool(name).cloned() {
                return blocking(move || answered(d.answer(&arguments))).await;
            }
            // The loop has asked the approver already. A recipe tells its steps.
            let sink = ctx.progress.clone();
            let progress: toolscout_discover::Progress = std::sync::Arc::new(move |e| {
                sink.report(serde_json::to_value(e).unwrap_or(Value::Null));
            });
            let outcome = self
                .toolbox
                .call(name, arguments)
                .approved()
                .observed(progress)
                .await;
            CallOutcome {
                result: outcome.to_json(),
                disclosed: Vec::new(),
                found: Vec::new(),
            }
        })
    }
}
