//! Stable renderings of what a catalog discloses, for users' own snapshot tests.
//!
//! ```
//! use toolscout_spec::{Level, sample};
//! let text = toolscout_discover::snapshot::disclosure(&sample::catalog(), Level::L1);
//! assert!(text.starts_with("get_weather — "));
//! // In a test: insta::assert_snapshot!(text);
//! ```

use toolscout_spec::{Level, ToolSpec};

use crate::tools::Answer;

/// Every tool at `level`, as text, sorted by name, separated by `---` lines.
pub fn disclosure(specs: &[ToolSpec], level: Level) -> String {
    let mut sorted: Vec<&ToolSpec> = specs.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    sorted
        .iter()
        .map(|s| s.disclose(level).to_text().trim_end().to_owned())
        .collect::<Vec<_>>()
        .join("\n---\n")
}

/// Every level of every tool, as pretty JSON, sorted by name: one document that changes
/// whenever anything a model could see changes.
pub fn disclosure_json(specs: &[ToolSpec]) -> String {
    let mut sorted: Vec<&ToolSpec> = specs.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let all: Vec<serde_json::Value> = sorted
        .iter()
        .map(|s| {
            serde_json::json!({
                "level1": s.disclose(Level::L1).to_json(),
                "level2": s.disclose(Level::L2).to_json(),
                "level3": s.disclose(Level::L3).to_json(),
            })
        })
        .collect();
    serde_json::to_string_pretty(&all).unwrap_or_default()
}

/// A discover reply as pretty JSON, with the tools it disclosed.
pub fn answer(answer: &Answer) -> String {
    let reply = serde_json::to_string_pretty(&answer.reply).unwrap_or_default();
    if answer.disclosed.is_empty() {
        reply
    } else {
        format!("{reply}\ndisclosed: {}", answer.disclosed.join(", "))
    }
}
