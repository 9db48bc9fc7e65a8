//! The arguments of the discover tools, as typed structs whose JSON Schemas the model reads.

use schemars::JsonSchema;
use serde::Deserialize;

/// `detail` of a discover call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Detail {
    /// Everything: full schemas, examples, errors and notes (level 3).
    Full,
}

/// Arguments of a `discover_*_tools` call. Every field is optional.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiscoverArgs {
    /// Words describing what you need, or a tool's name or the start of it.
    #[serde(default)]
    pub query: Option<String>,
    /// A tool's exact name: its usage and parameter names (add `detail` or `parameter` for more).
    #[serde(default)]
    pub tool: Option<String>,
    /// "full" with `tool`: the full parameter schemas, examples, errors and notes.
    #[serde(default)]
    #[schemars(with = "Option<String>", extend("enum" = ["full"]))]
    pub detail: Option<Detail>,
    /// With `tool`: one parameter in detail (type, default, allowed values, constraints).
    #[serde(default)]
    pub parameter: Option<String>,
    /// A category from the overview: list its tools.
    #[serde(default)]
    pub category: Option<String>,
    /// The `next_page` token of a previous reply.
    #[serde(default)]
    pub page: Option<String>,
    /// Keep the reply under this many tokens; the deepest level that fits is returned.
    #[serde(default)]
    #[schemars(range(min = 16))]
    pub max_tokens: Option<u32>,
}

/// The arguments a brief discover tool advertises ([`crate::DiscoverTools::brief_spec`]):
/// a subset of [`DiscoverArgs`], which still parses every call.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BriefDiscoverArgs {
    /// A few words about what you need, or a tool's name.
    #[serde(default)]
    pub query: Option<String>,
    /// A tool's exact name: its usage and parameter names.
    #[serde(default)]
    pub tool: Option<String>,
    /// The `next_page` token of a previous reply.
    #[serde(default)]
    pub page: Option<String>,
}

/// Arguments of a `discover_agents` call. Every field is optional.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiscoverAgentsArgs {
    /// An agent's exact name: when to use it, its capabilities and constraints.
    #[serde(default)]
    pub agent: Option<String>,
    /// "full" with `agent`: its system prompt and tools too.
    #[serde(default)]
    #[schemars(with = "Option<String>", extend("enum" = ["full"]))]
    pub detail: Option<Detail>,
    /// Only agents of this category.
    #[serde(default)]
    pub category: Option<String>,
}
