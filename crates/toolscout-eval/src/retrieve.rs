//! The retrieval evaluation: what the agent's retrieve policy would put in front of the
//! model, without a model.
//!
//! [`RetrieveEval::run`] stores the tools in the temporary catalog the agent evaluation
//! builds ([`crate::agent::build_toolbox`]) and runs every [`Task`] through
//! [`ToolboxHost::retrieve`], the very step the agent loop takes before its first
//! request. Three questions, each for several settings in one run:
//!
//! - **Twins.** With near-duplicate tools dropped at a similarity, how often is an
//!   expected tool among those retrieved, and how many retrieved pairs are still twins?
//! - **Margin.** With tools far behind the first in meaning left out, how often is an
//!   expected tool still among them, and how many tools are offered?
//! - **Confidence.** How sure is retrieval of its best tool, on tasks that have a right
//!   tool and on tasks that have none? For each floor, the share of tool tasks at or
//!   above it and of no-tool tasks below it: how well a floor would tell them apart (the
//!   agent has none: every retrieval that found a tool requires a call).
//!
//! Beside them, [`RetrieveReport::activation`] measures the agent's own first-turn
//! retrieval ([`toolscout_agent::retrieve_for`]), the message split into needs and
//! whole.

use std::sync::Arc;

use serde::Serialize;
use toolscout_agent::host::ToolHost as _;
use toolscout_agent::{
    AgentConfig, DEFAULT_MARGIN, DEFAULT_RETRIEVE_TOP_K, DEFAULT_TWIN_SIMILARITY, Retrieval,
    ToolboxHost,
};
use toolscout_search::Embedder;

use crate::agent::{build_toolbox, own_toolbox};
use crate::read::{Task, ToolLines};
use crate::{Error, Result};

/// The settings of a retrieval evaluation; the defaults are the CLI's.
#[derive(Clone)]
pub struct RetrieveEval {
    embedder: Option<Arc<dyn Embedder>>,
    top_k: usize,
    twins: Vec<f32>,
    floors: Vec<f32>,
    margins: Vec<f32>,
    each: bool,
}

impl Default for RetrieveEval {
    fn default() -> Self {
        RetrieveEval {
            embedder: None,
            top_k: DEFAULT_RETRIEVE_TOP_K,
            twins: vec![0.95, 0.9, 0.85, 0.8],
            floors: vec![0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6],
            margins: vec![0.02, 0.05, 0.08, 0.1, 0.15],
            each: false,
        }
    }
}

impl RetrieveEval {
    /// Ranks by meaning too, with this encoder (without one there is no confidence and
    /// no twin).
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Tools retrieved per task (at least 1).
    pub fn with_top_k(mut self, top_k: usize) -> Self {
        self.top_k = top_k;
        self
    }

    /// Twin similarities to compare (near-duplicates at or above are dropped).
    pub fn with_twins(mut self, twins: &[f32]) -> Self {
        self.twins = twins.to_vec();
        self
    }

    /// Confidence floors to compare.
    pub fn with_floors(mut self, floors: &[f32]) -> Self {
        self.floors = floors.to_vec();
        self
    }

    /// Margins to compare, with twins dropped at the agent's default (which is always
    /// measured without a margin too); 1 is no margin.
    pub fn with_margins(mut self, margins: &[f32]) -> Self {
        self.margins = margins.to_vec();
        self
    }

    /// Keeps each task's retrieval as the agent makes it by default
    /// ([`RetrieveReport::each`]).
    pub fn with_each(mut self, each: bool) -> Self {
        self.each = each;
        self
    }

    /// Retrieves for every task, over `tools` (or, for a task with no right tool and
    /// tools of its own `offered`, over those alone).
    pub fn run(&self, tools: &ToolLines, tasks: &[Task]) -> Result<RetrieveReport> {
        if self.top_k == 0 {
            return Err(Error::Setting {
                setting: "top_k",
                reason: "must be at least 1",
            });
        }
        let whole = ToolboxHost::new(build_toolbox(tools, self.embedder.clone())?);
        // Settings (twins, margin): keep twins, then each similarity and the agent's (the
        // margins' baseline, and the confidence table's), then each margin with the
        // agent's twins. A margin of 1 is none, as in the agent; a setting is measured
        // once.
        let agent_twins = Some(DEFAULT_TWIN_SIMILARITY);
        // What `each` keeps: the agent's retrieval.
        let agent_default = (agent_twins, Some(DEFAULT_MARGIN));
        let mut settings: Vec<(Option<f32>, Option<f32>)> = Vec::new();
        for setting in std::iter::once((None, None))
            .chain(self.twins.iter().map(|&t| (Some(t), None)))
            .chain(std::iter::once((agent_twins, None)))
            .chain(
                self.margins
                    .iter()
                    .map(|&m| (agent_twins, (m < 1.0).then_some(m))),
            )
            .chain(self.each.then_some(agent_default))
        {
            if !settings.contains(&setting) {
                settings.push(setting);
            }
        }
        let strictest = self.twins.iter().copied().fold(1.0f32, f32::min);
        let mut figures: Vec<Setting> = settings
            .iter()
            .map(|&(twin_similarity, margin)| Setting {
                figures: SettingFigures {
                    twin_similarity,
                    margin,
                    ..SettingFigures::default()
                },
                with_tool: Vec::new(),
                without: Vec::new(),
            })
            .collect();
        // The agent's own retrieval before its first request (defaults), the message
        // split into needs and whole: the share of each task's tools it activates.
        let mut activation = [Activation::default(), Activation::default()];
        let mut each = Vec::new();
        for task in tasks {
            // The needs the agent splits the request into (kept for `each`).
            let mut split_into: Vec<String> = Vec::new();
            if !task.irrelevant() {
                for (split, a) in [true, false].into_iter().zip(&mut activation) {
                    let config = AgentConfig::builder("eval", "none")
                        .retrieve_top_k(self.top_k)
                        .split_needs(split)
                        .build()?;
                    let (found, needs) =
                        toolscout_agent::retrieve_for(&whole, &config, &task.query);
                    let got = task
                        .expected
                        .iter()
                        .filter(|t| found.tools.contains(t))
                        .count();
                    // With its server's tools offered compactly beside them, as the
                    // first request's tools array has them.
                    let offered = whole.server_tools(
                        &task.query,
                        &found.tools,
                        config.options().server_tools,
                    );
                    let in_array = task
                        .expected
                        .iter()
                        .filter(|t| found.tools.contains(t) || offered.contains(t))
                        .count();
                    a.array_recall += in_array as f64 / task.expected.len() as f64;
                    a.offered += offered.len();
                    a.tasks += 1;
                    a.recall += got as f64 / task.expected.len() as f64;
                    a.all_found += usize::from(got == task.expected.len());
                    a.tools += found.tools.len();
                    a.needs += needs.len().max(1);
                    if split {
                        split_into = needs;
                    }
                }
            }
            // A no-tool task with its own offered tools searches those alone.
            let own = own_toolbox(task, tools, self.embedder.as_ref())?.map(ToolboxHost::new);
            let base = own.as_ref().unwrap_or(&whole);
            for f in &mut figures {
                let setting = (f.figures.twin_similarity, f.figures.margin);
                let host = base
                    .clone()
                    .with_twin_similarity(setting.0)
                    .with_margin(setting.1);
                let found: Retrieval = host.retrieve(&task.query, self.top_k);
                if self.each && setting == agent_default {
                    each.push(TaskRetrieval {
                        query: task.query.clone(),
                        expected: task.expected.clone(),
                        tools: found.tools.clone(),
                        confidence: found.confidence,
                        needs: split_into
                            .iter()
                            .map(|need| {
                                let r = host.retrieve(need, 2);
                                NeedRetrieval {
                                    need: need.clone(),
                                    tools: r.tools,
                                    confidence: r.confidence,
                                }
                            })
                            .collect(),
                    });
                }
                if task.irrelevant() {
                    f.without.push(found);
                    continue;
                }
                let g = &mut f.figures;
                g.tool_tasks += 1;
                g.hit += usize::from(found.tools.iter().any(|t| task.expected.contains(t)));
                g.twin_pairs += twin_pairs(&host, &found.tools, strictest);
                g.tools += found.tools.len();
                f.with_tool.push(found);
            }
        }
        // The confidence table is the agent's twin setting's, without a margin.
        let default_at = settings
            .iter()
            .position(|s| *s == (agent_twins, None))
            .unwrap_or(0);
        let conf = &figures[default_at];
        let floors = self
            .floors
            .iter()
            .map(|&floor| {
                // As a floor would decide: a call required when something was found and
                // its confidence is not measured below the floor.
                let required = |r: &Retrieval| !r.tools.is_empty() && !r.is_below(floor);
                let required_n = conf.with_tool.iter().filter(|r| required(r)).count();
                let free = conf.without.iter().filter(|r| !required(r)).count();
                FloorFigures {
                    floor,
                    tool_tasks_required: share(required_n, conf.with_tool.len()),
                    no_tool_tasks_free: share(free, conf.without.len()),
                }
            })
            .collect();
        let confidence = ConfidenceFigures {
            twin_similarity: conf.figures.twin_similarity,
            with_tool: quantiles(&conf.with_tool),
            without: quantiles(&conf.without),
            found_nothing: conf.without.iter().filter(|r| r.tools.is_empty()).count(),
        };
        let [needs_split, whole_message] = activation;
        Ok(RetrieveReport {
            top_k: self.top_k,
            tasks: tasks.len(),
            no_tool_tasks: tasks.iter().filter(|t| t.irrelevant()).count(),
            tools: tools.len(),
            strictest,
            settings: figures.into_iter().map(|f| f.figures).collect(),
            confidence,
            floors,
            activation: ActivationFigures {
                needs_split,
                whole_message,
            },
            each,
        })
    }
}

/// One setting's figures and its retrievals.
struct Setting {
    figures: SettingFigures,
    /// Each task's retrieval: tasks with a right tool, tasks without.
    with_tool: Vec<Retrieval>,
    without: Vec<Retrieval>,
}

/// What [`RetrieveEval::run`] measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RetrieveReport {
    /// Tools retrieved per task.
    pub top_k: usize,
    /// Tasks run.
    pub tasks: usize,
    /// Tasks without a right tool.
    pub no_tool_tasks: usize,
    /// Tools in the catalog.
    pub tools: usize,
    /// The strictest twin similarity compared: retrieved pairs at least this alike are
    /// counted as twins ([`SettingFigures::twin_pairs`]).
    pub strictest: f32,
    /// Each setting measured: twins kept, each twin similarity, the agent's, then each
    /// margin with the agent's twins.
    pub settings: Vec<SettingFigures>,
    /// How sure retrieval is of its best tool, at the agent's twin setting.
    pub confidence: ConfidenceFigures,
    /// For each confidence floor, how well it tells tool tasks from no-tool tasks.
    pub floors: Vec<FloorFigures>,
    /// The agent's own first-turn retrieval over the tasks with a right tool.
    pub activation: ActivationFigures,
    /// Each task's retrieval as the agent makes it by default (with
    /// [`RetrieveEval::with_each`]).
    pub each: Vec<TaskRetrieval>,
}

/// The figures of one setting of twins and margin, over the tasks with a right tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SettingFigures {
    /// Near-duplicates at or above this similarity are dropped (`None`: all kept).
    pub twin_similarity: Option<f32>,
    /// Tools further behind the first in meaning are left out (`None`: no margin).
    pub margin: Option<f32>,
    /// Tasks with a right tool.
    pub tool_tasks: usize,
    /// Those with an expected tool among the retrieved ones.
    pub hit: usize,
    /// Retrieved pairs at least [`RetrieveReport::strictest`] alike.
    pub twin_pairs: usize,
    /// Tools retrieved, summed over tasks.
    pub tools: usize,
}

impl SettingFigures {
    /// The share of tool tasks with an expected tool retrieved.
    pub fn hit_rate(&self) -> f64 {
        share(self.hit, self.tool_tasks)
    }

    /// Tools retrieved per tool task.
    pub fn mean_tools(&self) -> f64 {
        share(self.tools, self.tool_tasks)
    }
}

/// The confidence of the best tool retrieved: quantiles 10/25/50/75/90 (0 where nothing
/// was found or none was measured).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ConfidenceFigures {
    /// The twin setting measured.
    pub twin_similarity: Option<f32>,
    /// Over tasks with a right tool.
    pub with_tool: [f32; 5],
    /// Over tasks without.
    pub without: [f32; 5],
    /// Tasks without a right tool where nothing was found.
    pub found_nothing: usize,
}

/// How well a confidence floor tells tool tasks from no-tool tasks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct FloorFigures {
    /// The floor.
    pub floor: f32,
    /// The share of tool tasks whose retrieval is at or above the floor.
    pub tool_tasks_required: f64,
    /// The share of no-tool tasks whose retrieval is below it (or found nothing).
    pub no_tool_tasks_free: f64,
}

/// The agent's first-turn retrieval, the message split into needs and whole.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ActivationFigures {
    /// Split into the needs it states (the agent's default).
    pub needs_split: Activation,
    /// Searched whole.
    pub whole_message: Activation,
}

/// The agent's retrieval over the tasks with a right tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Activation {
    /// Tasks.
    pub tasks: usize,
    /// The sum of each task's share of its tools activated.
    pub recall: f64,
    /// Tasks with all their tools activated.
    pub all_found: usize,
    /// Tools activated, summed.
    pub tools: usize,
    /// Needs searched (1 for a whole message), summed.
    pub needs: usize,
    /// The sum of each task's share of its tools in the first request's array: activated,
    /// or offered compactly as their server's ([`AgentOptions::server_tools`](toolscout_agent::AgentOptions::server_tools)).
    pub array_recall: f64,
    /// Tools offered compactly, summed.
    pub offered: usize,
}

impl Activation {
    /// The mean share of a task's tools activated.
    pub fn mean_recall(&self) -> f64 {
        if self.tasks == 0 {
            0.0
        } else {
            self.recall / self.tasks as f64
        }
    }

    /// The mean share of a task's tools in the first request's array.
    pub fn mean_array_recall(&self) -> f64 {
        if self.tasks == 0 {
            0.0
        } else {
            self.array_recall / self.tasks as f64
        }
    }

    /// The share of tasks with all their tools activated.
    pub fn all_found_rate(&self) -> f64 {
        share(self.all_found, self.tasks)
    }

    /// Tools activated per task.
    pub fn mean_tools(&self) -> f64 {
        share(self.tools, self.tasks)
    }

    /// Needs per task.
    pub fn mean_needs(&self) -> f64 {
        share(self.needs, self.tasks)
    }
}

/// One task's retrieval.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TaskRetrieval {
    /// The request.
    pub query: String,
    /// Its expected tools.
    pub expected: Vec<String>,
    /// The tools retrieved, best first.
    pub tools: Vec<String>,
    /// How sure retrieval is of the first.
    pub confidence: Option<f32>,
    /// The needs the agent splits the request into (none when it asks for one thing),
    /// each with what its own search retrieves, as the agent follows it up.
    pub needs: Vec<NeedRetrieval>,
}

/// One need of a request and its own retrieval ([`TaskRetrieval::needs`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct NeedRetrieval {
    /// The need, as the request states it.
    pub need: String,
    /// Its best two tools.
    pub tools: Vec<String>,
    /// How sure retrieval is of the first.
    pub confidence: Option<f32>,
}

fn share(n: usize, d: usize) -> f64 {
    if d == 0 { 0.0 } else { n as f64 / d as f64 }
}

/// How many pairs of `tools` are at least `at` alike.
fn twin_pairs(host: &ToolboxHost, tools: &[String], at: f32) -> usize {
    let toolbox = host.toolbox();
    let ids: Vec<String> = tools
        .iter()
        .filter_map(|n| match toolbox.lookup(n) {
            toolscout_discover::Lookup::Found(t) => Some(t.id.to_string()),
            _ => None,
        })
        .collect();
    let mut n = 0;
    for (i, a) in ids.iter().enumerate() {
        for b in &ids[i + 1..] {
            n += usize::from(toolbox.index().similarity(a, b).is_some_and(|s| s >= at));
        }
    }
    n
}

/// The 10th, 25th, 50th, 75th and 90th percentiles of the retrievals' confidences (0
/// where nothing was found or none was measured; zeros when there is no retrieval).
fn quantiles(found: &[Retrieval]) -> [f32; 5] {
    let mut sorted: Vec<f32> = found.iter().map(|r| r.confidence.unwrap_or(0.0)).collect();
    sorted.sort_by(f32::total_cmp);
    let at = |p: f64| {
        if sorted.is_empty() {
            return 0.0;
        }
        let i = ((sorted.len() - 1) as f64 * p).round() as usize;
        sorted[i.min(sorted.len() - 1)]
    };
    [at(0.1), at(0.25), at(0.5), at(0.75), at(0.9)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_count_an_unmeasured_retrieval_as_zero() {
        let r = |c: Option<f32>| Retrieval {
            tools: vec!["t".to_owned()],
            confidence: c,
        };
        assert_eq!(quantiles(&[]), [0.0; 5]);
        let found: Vec<Retrieval> = [0.5, 0.9, 0.1, 0.7]
            .into_iter()
            .map(Some)
            .chain([None])
            .map(r)
            .collect();
        // Sorted: 0, 0.1, 0.5, 0.7, 0.9.
        assert_eq!(quantiles(&found), [0.0, 0.1, 0.5, 0.7, 0.9]);
    }
}
