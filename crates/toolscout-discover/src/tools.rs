//! [`DiscoverTools`]: the meta-tool a model browses the catalog with.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map, Value, json};
use toolscout_catalog::{Tool, ToolHead};
use toolscout_invoke::ErrorKind;
use toolscout_search::SearchQuery;
use toolscout_spec::template::fill;
use toolscout_spec::{Disclosure, Level, ToolSpec, tokens};
use uuid::Uuid;

use crate::args::{BriefDiscoverArgs, Detail, DiscoverArgs};
use crate::toolbox::{Lookup, Toolbox};

/// The description template of every discover tool (`{scope}`, `{count}` are filled in).
const DESCRIPTION: &str = include_str!("../prompts/discover_tools.md");
/// The description template of a brief discover tool ([`DiscoverTools::brief_spec`]).
const BRIEF_DESCRIPTION: &str = include_str!("../prompts/discover_tools_brief.md");
/// The summary over the whole catalog.
const SUMMARY: &str = include_str!("../prompts/discover_tools_summary.txt");
/// The summary over one category: `{category}` is its name.
const SUMMARY_CATEGORY: &str = include_str!("../prompts/discover_tools_summary_category.txt");
/// The summary over some bundles.
const SUMMARY_BUNDLES: &str = include_str!("../prompts/discover_tools_summary_bundles.txt");

/// Above this many tools, a call without arguments answers with categories.
pub const DEFAULT_OVERVIEW_THRESHOLD: usize = 40;

/// The smallest `max_tokens` a discover call takes (its schema's `minimum`).
const MIN_MAX_TOKENS: u32 = 16;
/// How many of the best search hits carry their usage line, so that a model can call
/// the obvious tool without a second round trip.
pub const DEFAULT_USAGE_HITS: usize = 3;

/// How many near-twins a search hit names in its `similar` list; the rest are counted in
/// `similar_more`.
///
/// **Rationale:** a name is about five tokens; eight keep the worst row (BFCL's fifteen
/// weather tools) near the cost of two hits, and on BFCL the first five hits then show
/// 7.7 names on average.
pub const MAX_SIMILAR_SHOWN: usize = 8;

/// Which part of the catalog a discover tool sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every tool.
    All,
    /// The tools of one category (the spec's `category`).
    Category(String),
    /// The tools of these bundles.
    Bundles(Vec<Uuid>),
}

/// What a discover call produced: the reply the model reads, and the tools it disclosed
/// at level 2 or 3 (an agent activates those).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The reply, a JSON object with a `kind`.
    pub reply: Value,
    /// Tools shown at level 2 or 3 by this call.
    pub disclosed: Vec<String>,
}

impl Answer {
    /// The tools a search reply lists, best first, or those of the bundle a `tool` named
    /// (empty for other replies): what an agent or an MCP session may activate.
    pub fn found(&self) -> Vec<String> {
        let kind = self.reply.get("kind").and_then(Value::as_str);
        // A search's hits, or the tools of the API a `tool` named.
        if kind != Some("search") && !(kind == Some("tools") && self.reply.get("bundle").is_some())
        {
            return Vec::new();
        }
        self.reply
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .map(str::to_owned)
            .collect()
    }

    fn plain(reply: Value) -> Answer {
        Answer {
            reply,
            disclosed: Vec::new(),
        }
    }
}

/// A `discover_*` meta-tool over a [`Scope`] of a [`Toolbox`].
///
/// One agent may hold several, each with its own name (`discover_file_tools`,
/// `discover_weather_tools`…). [`DiscoverTools::spec`] is its own [`ToolSpec`], so it is
/// described and snapshot-tested like any other tool; [`DiscoverTools::answer`] answers a
/// call. Every answer is data: an unknown tool gets the closest names, a disabled one says
/// why, a bad argument says what was wrong.
#[derive(Debug, Clone)]
pub struct DiscoverTools {
    name: String,
    scope: Scope,
    toolbox: Toolbox,
    overview_threshold: usize,
    page_size: usize,
    usage_hits: usize,
    twins: Option<f32>,
}

impl DiscoverTools {
    /// `discover_tools` over the whole catalog.
    pub fn new(toolbox: Toolbox) -> Self {
        DiscoverTools {
            name: "discover_tools".to_owned(),
            scope: Scope::All,
            toolbox,
            overview_threshold: DEFAULT_OVERVIEW_THRESHOLD,
            page_size: toolscout_search::DEFAULT_PAGE_SIZE,
            usage_hits: DEFAULT_USAGE_HITS,
            twins: Some(toolscout_search::DEFAULT_TWIN_SIMILARITY),
        }
    }

    /// Gives the tool another name, e.g. `discover_file_tools`.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Restricts what the tool sees.
    #[must_use]
    pub fn with_scope(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self
    }

    /// Above how many tools a call without arguments answers with categories.
    #[must_use]
    pub fn with_overview_threshold(mut self, threshold: usize) -> Self {
        self.overview_threshold = threshold;
        self
    }

    /// Tools per page (1 to [`MAX_PAGE_SIZE`](toolscout_search::MAX_PAGE_SIZE);
    /// [`DEFAULT_PAGE_SIZE`](toolscout_search::DEFAULT_PAGE_SIZE) unless set).
    #[must_use]
    pub fn with_page_size(mut self, size: usize) -> Self {
        self.page_size = size.clamp(1, toolscout_search::MAX_PAGE_SIZE);
        self
    }

    /// How many of the best search hits carry their usage line (0: none). Usage lines
    /// save a model the `tool` round trip for the obvious candidates; level 2 stays the
    /// way to activate a tool.
    #[must_use]
    pub fn with_usage_hits(mut self, count: usize) -> Self {
        self.usage_hits = count;
        self
    }

    /// Near-twins at or above this cosine are listed under the better hit (`similar`)
    /// instead of taking a row of their own; `None` lists every tool as a hit. The default
    /// is [`DEFAULT_TWIN_SIMILARITY`](toolscout_search::DEFAULT_TWIN_SIMILARITY); without
    /// a sentence encoder nothing is grouped.
    #[must_use]
    pub fn with_twin_similarity(mut self, at: Option<f32>) -> Self {
        self.twins = at;
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The scope.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The start of this tool's spec, with arguments `A` and the description `template`
    /// filled in: what [`DiscoverTools::spec`] and [`DiscoverTools::brief_spec`] share.
    fn spec_builder<A: schemars::JsonSchema>(
        &self,
        template: &str,
    ) -> toolscout_spec::ToolSpecBuilder {
        let (description, summary) = self.texts(template);
        ToolSpec::from_args::<A>(&self.name, summary)
            .description(description)
            .category("discover")
            .with_metadata(|m| {
                m.read_only = true;
                m.idempotent = true;
            })
    }

    /// The description template filled in, and the summary.
    fn texts(&self, template: &str) -> (String, String) {
        let scope = match &self.scope {
            Scope::All => "whole".to_owned(),
            Scope::Category(c) => format!("'{c}'"),
            Scope::Bundles(_) => "bundled".to_owned(),
        };
        let description = fill(
            template.trim(),
            &[
                ("{scope}", &scope),
                ("{count}", &self.in_scope().len().to_string()),
            ],
        );
        let summary = match &self.scope {
            Scope::All => SUMMARY.trim().to_owned(),
            Scope::Category(c) => fill(SUMMARY_CATEGORY.trim(), &[("{category}", c)]),
            Scope::Bundles(_) => SUMMARY_BUNDLES.trim().to_owned(),
        };
        (description, summary)
    }

    /// A short spec of this tool, for when it is a fallback beside tools already offered
    /// (an agent's retrieve policy): it advertises `query`, `tool` and `page` only, with
    /// no examples, in about a third of [`DiscoverTools::spec`]'s tokens. Calls are
    /// answered the same way, whatever they pass.
    ///
    /// **Rationale:** every request carries the tools array; a fallback that costs as much
    /// as three tools is paid on every step of every run.
    pub fn brief_spec(&self) -> crate::Result<ToolSpec> {
        let spec = self
            .spec_builder::<BriefDiscoverArgs>(BRIEF_DESCRIPTION)
            .returns("object with a `kind`: search, tool, unknown_tool or invalid")
            .build()?;
        Ok(spec)
    }

    /// This discover tool's own spec.
    pub fn spec(&self) -> crate::Result<ToolSpec> {
        let spec = self
            .spec_builder::<DiscoverArgs>(DESCRIPTION)
            .returns("object with a `kind`: categories, tools, search, tool, parameter, unknown_tool, unknown_parameter, unknown_category, disabled or invalid")
            .example("Overview of the catalog", json!({}))
            .example("Search by words", json!({"query": "weather forecast for a city"}))
            .example("Usage of a tool", json!({"tool": "get_weather"}))
            .example("Full specification", json!({"tool": "get_weather", "detail": "full"}))
            .example("One parameter", json!({"tool": "get_weather", "parameter": "units"}))
            .error(ErrorKind::UnknownTool.as_str(), "no tool has that name: the reply lists the closest names")
            .error(ErrorKind::Disabled.as_str(), "the tool exists but cannot be called now: the reply says why")
            .note("Level 1 (no tool): names and summaries; level 2 (tool): usage; level 3 (detail=full or parameter): everything")
            .build()?;
        Ok(spec)
    }

    /// Answers one call. `args` is the JSON object the model sent (`null` reads as `{}`).
    pub fn answer(&self, args: &Value) -> Answer {
        let args: DiscoverArgs = if args.is_null() {
            DiscoverArgs::default()
        } else {
            match serde_json::from_value(args.clone()) {
                Ok(a) => a,
                Err(e) => {
                    return invalid(format!(
                        "{e}. Arguments are optional: query, tool, detail (\"full\"), parameter, category, page, max_tokens"
                    ));
                }
            }
        };
        if let Some(t) = args.max_tokens
            && t < MIN_MAX_TOKENS
        {
            return invalid(format!(
                "max_tokens must be at least {MIN_MAX_TOKENS}, not {t}: no useful reply fits in fewer"
            ));
        }
        let budget = args.max_tokens.map(|t| t as usize);
        if let Some(tool) = args.tool.as_deref() {
            return self.describe(tool, &args, budget);
        }
        if args.parameter.is_some() || args.detail.is_some() {
            return invalid("`parameter` and `detail` need `tool`".to_owned());
        }
        if let Some(query) = args.query.as_deref() {
            return self.search(query, args.category.as_deref(), args.page.clone(), budget);
        }
        let offset = match parse_page(args.page.as_deref()) {
            Ok(o) => o,
            Err(e) => return invalid(e),
        };
        let tools = self.in_scope();
        match args.category.as_deref() {
            Some(c) => {
                let selected: Vec<&ToolHead> = tools
                    .iter()
                    .filter(|t| group_of(t, &self.slugs()) == c)
                    .collect();
                if selected.is_empty() {
                    let groups = self.groups(&tools);
                    return Answer::plain(json!({
                        "kind": "unknown_category",
                        "category": c,
                        "message": format!("no category '{c}'"),
                        "categories": groups.keys().collect::<Vec<_>>(),
                    }));
                }
                self.listing(&selected, offset, Some(c), budget)
            }
            None if tools.len() > self.overview_threshold && offset == 0 => {
                self.overview(&tools, budget)
            }
            None => {
                let all: Vec<&ToolHead> = tools.iter().collect();
                self.listing(&all, offset, None, budget)
            }
        }
    }

    /// Callable tools in scope, one per name, sorted by name.
    fn in_scope(&self) -> Vec<ToolHead> {
        let mut seen = std::collections::HashSet::new();
        let mut tools: Vec<ToolHead> = self
            .toolbox
            .view()
            .heads()
            .into_iter()
            .filter(|t| t.is_callable() && self.contains_head(t))
            .collect();
        tools.sort_by(|a, b| {
            a.name
                .cmp(&b.name)
                .then(b.name_claim().cmp(&a.name_claim()))
        });
        tools.retain(|t| seen.insert(t.name.clone()));
        tools
    }

    fn contains(&self, tool: &Tool) -> bool {
        self.covers(tool.spec.category.as_deref(), tool.bundle_id)
    }

    fn contains_head(&self, tool: &ToolHead) -> bool {
        self.covers(tool.category.as_deref(), tool.bundle_id)
    }

    /// Whether a tool of this category and bundle is in scope.
    fn covers(&self, category: Option<&str>, bundle: Uuid) -> bool {
        match &self.scope {
            Scope::All => true,
            Scope::Category(c) => category == Some(c.as_str()),
            Scope::Bundles(ids) => ids.contains(&bundle),
        }
    }

    /// The names of a hit's near-twins (catalog ids) that are in scope and not shown
    /// yet, best first; each is recorded in `named`.
    fn twin_names(&self, ids: &[String], named: &mut HashSet<String>) -> Vec<String> {
        let view = self.toolbox.view();
        ids.iter()
            .filter_map(|id| view.head(Uuid::parse_str(id).ok()?).ok())
            .filter(|head| self.contains_head(head))
            .filter_map(|head| {
                named
                    .insert(head.name.to_string())
                    .then(|| head.name.to_string())
            })
            .collect()
    }

    /// The bundle (in scope) that `name` names: its slug or its display name, whatever
    /// the case and the separators (`Numbers API`, `numbers-api`, `numbers_api`).
    fn bundle_named(&self, name: &str) -> Option<toolscout_catalog::Bundle> {
        let wanted = loose(name);
        if wanted.is_empty() {
            return None;
        }
        let query = toolscout_catalog::BundleQuery::default().with_page_size(500);
        let mut token: Option<String> = None;
        loop {
            let page = self
                .toolbox
                .view()
                .list_bundles(&query.clone().with_page_token(token.as_deref()))
                .ok()?;
            if let Some(b) = page
                .items
                .into_iter()
                .find(|b| loose(&b.slug) == wanted || loose(&b.display_name) == wanted)
            {
                return Some(b);
            }
            token = Some(page.next_page_token?);
        }
    }

    /// `discover_tools {"tool": X}` where X names a bundle (an API, an MCP server): the
    /// bundle's tools at level 1, as a listing, with what X is.
    fn bundle_listing(&self, name: &str, args: &DiscoverArgs, budget: Option<usize>) -> Answer {
        let Some(bundle) = self.bundle_named(name) else {
            return invalid(format!("no bundle named '{name}'"));
        };
        let offset = match parse_page(args.page.as_deref()) {
            Ok(o) => o,
            Err(e) => return invalid(e),
        };
        let tools = self.in_scope();
        let members: Vec<&ToolHead> = tools.iter().filter(|t| t.bundle_id == bundle.id).collect();
        let mut answer = self.listing(&members, offset, None, budget);
        if let Some(reply) = answer.reply.as_object_mut() {
            reply.insert("bundle".to_owned(), json!(bundle.display_name));
            if !bundle.description.is_empty() {
                reply.insert("bundle_description".to_owned(), json!(bundle.description));
            }
            reply.insert(
                "message".to_owned(),
                json!(format!(
                    "'{name}' is not a tool but the API its tools belong to; these are its tools: describe one with `tool`"
                )),
            );
        }
        answer
    }

    fn slugs(&self) -> HashMap<Uuid, String> {
        crate::toolbox::bundle_slugs(self.toolbox.catalog())
    }

    fn groups<'a>(&self, tools: &'a [ToolHead]) -> BTreeMap<String, Vec<&'a ToolHead>> {
        let slugs = self.slugs();
        let mut groups: BTreeMap<String, Vec<&ToolHead>> = BTreeMap::new();
        for t in tools {
            groups.entry(group_of(t, &slugs)).or_default().push(t);
        }
        groups
    }

    /// The categories with their sizes and a few example names. Over `budget`, the
    /// examples go first, then categories from the end (the reply says how many).
    fn overview(&self, tools: &[ToolHead], budget: Option<usize>) -> Answer {
        let groups = self.groups(tools);
        let mut categories: Vec<Value> = groups
            .iter()
            .map(|(name, members)| {
                json!({
                    "category": name,
                    "tools": members.len(),
                    "examples": members.iter().take(3).map(|t| t.name.as_str()).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut reply = Map::new();
        reply.insert("kind".to_owned(), json!("categories"));
        reply.insert("tools".to_owned(), json!(tools.len()));
        let next = json!(format!(
            "call {} with `category` to list one, or with `query` to search",
            self.name
        ));
        if let Some(max) = budget {
            let over = |categories: &Vec<Value>| {
                let mut probe = reply.clone();
                probe.insert("categories".to_owned(), json!(categories));
                probe.insert("next".to_owned(), next.clone());
                tokens::count_json(&Value::Object(probe)) > max
            };
            if over(&categories) {
                for c in &mut categories {
                    if let Some(c) = c.as_object_mut() {
                        c.remove("examples");
                    }
                }
            }
            let full = categories.len();
            while categories.len() > 1 && over(&categories) {
                categories.pop();
            }
            if categories.len() < full {
                reply.insert(
                    "omitted".to_owned(),
                    json!(format!(
                        "{} more categories did not fit in {max} tokens; search with `query`, or ask with a larger max_tokens",
                        full - categories.len()
                    )),
                );
            }
        }
        reply.insert("categories".to_owned(), json!(categories));
        reply.insert("next".to_owned(), next);
        Answer::plain(Value::Object(reply))
    }

    fn listing(
        &self,
        tools: &[&ToolHead],
        offset: usize,
        category: Option<&str>,
        budget: Option<usize>,
    ) -> Answer {
        let page: Vec<Value> = tools
            .iter()
            .skip(offset)
            .take(self.page_size)
            .map(|t| marked(Disclosure::L1(t.level1()).to_json(), t.is_spec_only()))
            .collect();
        let mut reply = Map::new();
        reply.insert("kind".to_owned(), json!("tools"));
        if let Some(c) = category {
            reply.insert("category".to_owned(), json!(c));
        }
        reply.insert("total".to_owned(), json!(tools.len()));
        let end = offset + page.len();
        let next = (end < tools.len()).then(|| page_token(end));
        let retoken = |kept: usize| page_token(offset + kept);
        fit_list(&mut reply, "tools", page, next, budget, &retoken);
        Answer::plain(Value::Object(reply))
    }

    fn search(
        &self,
        text: &str,
        category: Option<&str>,
        page: Option<String>,
        budget: Option<usize>,
    ) -> Answer {
        let mut q = SearchQuery::new(text)
            .with_limit(self.page_size)
            .with_page_token(page)
            .with_twins(self.twins);
        match &self.scope {
            Scope::All => {}
            Scope::Category(c) => q = q.with_category(c.clone()),
            Scope::Bundles(ids) => {
                let slugs = self.slugs();
                for id in ids {
                    if let Some(s) = slugs.get(id) {
                        q = q.with_bundle(s.clone());
                    }
                }
            }
        }
        if let Some(c) = category {
            q = q.with_category(c);
        }
        let found = match self.toolbox.search(&q) {
            Ok(f) => f,
            Err(e) => return invalid(e.to_string()),
        };
        let offset = q.page_offset().unwrap_or(0);
        // Where each shown hit stands on the page, so that a page cut to fit the budget
        // continues right after the last hit shown.
        let positions: Vec<usize> = found
            .hits
            .iter()
            .enumerate()
            .filter(|(_, (t, _))| self.contains(t))
            .map(|(i, _)| i)
            .collect();
        // A name is shown once: as a hit, or as the first hit's twin that has it.
        let mut named: HashSet<String> = found
            .hits
            .iter()
            .map(|(t, _)| t.spec.name.to_string())
            .collect();
        let hits: Vec<Value> = found
            .hits
            .iter()
            .filter(|(t, _)| self.contains(t))
            .enumerate()
            .map(|(i, (t, h))| {
                let mut hit = json!({"name": t.spec.name.as_str(), "summary": t.spec.summary, "match": h.tier.as_str()});
                let Some(obj) = hit.as_object_mut() else {
                    return hit;
                };
                if i < self.usage_hits {
                    obj.insert("usage".to_owned(), json!(t.spec.usage()));
                }
                let similar = self.twin_names(&h.twins, &mut named);
                if !similar.is_empty() {
                    let more = similar.len().saturating_sub(MAX_SIMILAR_SHOWN);
                    let shown: Vec<&String> = similar.iter().take(MAX_SIMILAR_SHOWN).collect();
                    obj.insert("similar".to_owned(), json!(shown));
                    if more > 0 {
                        obj.insert("similar_more".to_owned(), json!(more));
                    }
                }
                marked(hit, t.is_spec_only())
            })
            .collect();
        let mut reply = Map::new();
        reply.insert("kind".to_owned(), json!("search"));
        reply.insert("query".to_owned(), json!(text));
        if !found.did_you_mean.is_empty() {
            reply.insert("did_you_mean".to_owned(), json!(found.did_you_mean));
        }
        if let Some(status) = found.name_status {
            reply.insert("name_status".to_owned(), json!(status));
        }
        if hits.is_empty() {
            reply.insert(
                "message".to_owned(),
                json!(
                    "nothing matched: try other words, or call without arguments for an overview"
                ),
            );
        }
        let retoken = |kept: usize| {
            let next = positions.get(kept).copied().unwrap_or(found.hits.len());
            q.page_token_at(offset + next)
        };
        fit_list(&mut reply, "tools", hits, found.next_page, budget, &retoken);
        Answer::plain(Value::Object(reply))
    }

    fn describe(&self, name: &str, args: &DiscoverArgs, budget: Option<usize>) -> Answer {
        let tool = match self.toolbox.lookup(name) {
            Lookup::Found(t) if self.contains(&t) => t,
            Lookup::Found(_) => {
                return Answer::plain(json!({
                    "kind": ErrorKind::OutOfScope.as_str(),
                    "tool": name,
                    "message": format!("'{name}' exists but is not among the tools {} covers", self.name),
                }));
            }
            Lookup::Disabled { reason, .. } => {
                return Answer::plain(json!({
                    "kind": ErrorKind::Disabled.as_str(),
                    "tool": name,
                    "reason": reason,
                    "message": format!("'{name}' exists but cannot be called now ({reason}); look for another tool"),
                }));
            }
            Lookup::NotFound { .. } if self.bundle_named(name).is_some() => {
                return self.bundle_listing(name, args, budget);
            }
            Lookup::NotFound { did_you_mean } => {
                return Answer::plain(json!({
                    "kind": ErrorKind::UnknownTool.as_str(),
                    "tool": name,
                    "did_you_mean": did_you_mean,
                    "message": format!("no tool named '{name}'; use one of the names above or search with `query`"),
                }));
            }
        };
        let spec = &tool.spec;
        if let Some(p) = args.parameter.as_deref() {
            return match spec.parameter(p) {
                Ok(d) => Answer {
                    reply: marked(
                        tagged("parameter", Disclosure::Parameter(d).to_json()),
                        tool.is_spec_only(),
                    ),
                    disclosed: vec![spec.name.to_string()],
                },
                Err(e) => Answer::plain(json!({
                    "kind": "unknown_parameter",
                    "tool": name,
                    "parameter": p,
                    "parameters": spec.parameter_names(),
                    "message": e.to_string(),
                })),
            };
        }
        let wanted = if args.detail == Some(Detail::Full) {
            Level::L3
        } else {
            Level::L2
        };
        let mut level = wanted;
        let spec_only = tool.is_spec_only();
        let mut reply = marked(level_reply(spec, level), spec_only);
        if let Some(max) = budget {
            while tokens::count_json(&reply) > max && level > Level::L1 {
                level = if level == Level::L3 {
                    Level::L2
                } else {
                    Level::L1
                };
                reply = marked(level_reply(spec, level), spec_only);
            }
            if level < wanted
                && let Some(obj) = reply.as_object_mut()
            {
                obj.insert(
                    "omitted".to_owned(),
                    json!(format!(
                        "level {} did not fit in {max} tokens; this is level {}. Ask again with a larger max_tokens, or for one parameter with `parameter`",
                        wanted.number(),
                        level.number()
                    )),
                );
            }
        }
        let disclosed = if level >= Level::L2 {
            vec![spec.name.to_string()]
        } else {
            Vec::new()
        };
        Answer { reply, disclosed }
    }
}

fn level_reply(spec: &ToolSpec, level: Level) -> Value {
    let mut out = Map::new();
    out.insert("kind".to_owned(), json!("tool"));
    out.insert("level".to_owned(), json!(level.number()));
    if let Value::Object(fields) = spec.disclose(level).to_json() {
        out.extend(fields);
    }
    Value::Object(out)
}

/// A listing's entry for a tool (an object: a level, a search hit) with
/// `"spec_only": true` added when the tool is spec only, so that every listing says so
/// (see [`SPEC_ONLY_FUNC`](toolscout_spec::adapters::tool_file::SPEC_ONLY_FUNC)).
pub fn marked(mut entry: Value, spec_only: bool) -> Value {
    if spec_only && let Some(obj) = entry.as_object_mut() {
        obj.insert("spec_only".to_owned(), json!(true));
    }
    entry
}

/// `{"kind": kind, …fields of value}`.
fn tagged(kind: &str, value: Value) -> Value {
    let mut out = Map::new();
    out.insert("kind".to_owned(), json!(kind));
    if let Value::Object(fields) = value {
        out.extend(fields);
    }
    Value::Object(out)
}

fn invalid(message: String) -> Answer {
    Answer::plain(json!({"kind": "invalid", "message": message}))
}

/// The group a tool is listed under: its category, else its bundle's slug.
/// A name for comparison: lower case, letters and digits only.
fn loose(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn group_of(tool: &ToolHead, slugs: &HashMap<Uuid, String>) -> String {
    tool.category
        .clone()
        .or_else(|| slugs.get(&tool.bundle_id).cloned())
        .unwrap_or_else(|| "other".to_owned())
}

fn page_token(offset: usize) -> String {
    format!("p{offset}")
}

fn parse_page(token: Option<&str>) -> Result<usize, String> {
    match token {
        None => Ok(0),
        Some(t) => t
            .strip_prefix('p')
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| {
                format!("page token {t:?} is not one this tool gave; use a reply's `next_page`")
            }),
    }
}

/// Puts `items` under `key`, dropping items from the end while the reply is over budget.
/// `retoken` makes the token of the page that starts after the kept items, so that
/// `next_page` goes on with the first item left out.
fn fit_list(
    reply: &mut Map<String, Value>,
    key: &str,
    mut items: Vec<Value>,
    mut next: Option<String>,
    budget: Option<usize>,
    retoken: &dyn Fn(usize) -> String,
) {
    let full = items.len();
    if let Some(max) = budget {
        loop {
            let mut probe = reply.clone();
            probe.insert(key.to_owned(), json!(items));
            if tokens::count_json(&Value::Object(probe)) <= max || items.len() <= 1 {
                break;
            }
            items.pop();
        }
        let dropped = full - items.len();
        if dropped > 0 {
            next = Some(retoken(items.len()));
            reply.insert(
                "omitted".to_owned(),
                json!(format!(
                    "{dropped} more did not fit in {max} tokens; use next_page"
                )),
            );
        }
    }
    reply.insert(key.to_owned(), json!(items));
    if let Some(n) = next {
        reply.insert("next_page".to_owned(), json!(n));
    }
}
