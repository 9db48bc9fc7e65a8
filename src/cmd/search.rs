//! `toolscout search QUERY [--explain] [--tag T] [--bundle B] [--include-disabled]`.

use anyhow::Result;
use serde_json::json;
use toolscout_search::SearchQuery;

use super::context::{Context, Global};

/// Arguments of `search`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A tool name, the start of one, or a sentence.
    query: String,
    /// Show each hit's tier, matching field and score.
    #[arg(long)]
    explain: bool,
    /// Only tools with this tag (repeatable: any of them).
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// Only tools of this category.
    #[arg(long)]
    category: Option<String>,
    /// Only tools of this bundle (slug; repeatable: any of them).
    #[arg(long = "bundle")]
    bundles: Vec<String>,
    /// Find disabled tools too.
    #[arg(long)]
    include_disabled: bool,
    /// Hits per page.
    #[arg(long, default_value_t = toolscout_search::DEFAULT_PAGE_SIZE)]
    limit: usize,
    /// The page token printed by a previous search.
    #[arg(long)]
    page: Option<String>,
}

pub(crate) fn run(args: &Args, global: &Global, json_out: bool) -> Result<()> {
    let toolbox = Context::open(global)?.into_toolbox()?;
    let result = search(args, &toolbox, json_out);
    super::context::finish_toolbox(toolbox);
    result
}

fn search(args: &Args, toolbox: &toolscout_discover::Toolbox, json_out: bool) -> Result<()> {
    let mut q = SearchQuery::new(args.query.as_str())
        .with_include_disabled(args.include_disabled)
        .with_limit(args.limit)
        .with_page_token(args.page.clone());
    q.tags.clone_from(&args.tags);
    q.category.clone_from(&args.category);
    q.bundles.clone_from(&args.bundles);
    let found = toolbox.search(&q)?;
    if json_out {
        let hits: Vec<serde_json::Value> = found
            .hits
            .iter()
            .map(|(tool, hit)| {
                // `name` as every other output says it; `id` is the same name, kept for
                // the scripts that read it.
                let mut v = json!({
                    "name": tool.spec.name.as_str(),
                    "summary": tool.spec.summary,
                });
                if let (Some(v), serde_json::Value::Object(fields)) =
                    (v.as_object_mut(), json!(hit))
                {
                    for (k, field) in fields {
                        v.entry(k).or_insert(field);
                    }
                }
                v["id"] = json!(tool.spec.name.as_str());
                toolscout_discover::marked(v, tool.is_spec_only())
            })
            .collect();
        return super::print_json(&json!({
            "hits": hits,
            "next_page": found.next_page,
            "did_you_mean": found.did_you_mean,
            "name_status": found.name_status,
        }));
    }
    // The names' column fits the longest name up to NAME_COLUMN; a longer name has a
    // line of its own, its summary below it in the column's place.
    const NAME_COLUMN: usize = 40;
    let width = found
        .hits
        .iter()
        .map(|(tool, _)| tool.spec.name.as_str().chars().count())
        .filter(|n| *n <= NAME_COLUMN)
        .max()
        .unwrap_or(0)
        .max(24);
    for (tool, hit) in &found.hits {
        let tag = if tool.is_spec_only() {
            super::list::SPEC_ONLY_TAG
        } else {
            ""
        };
        let summary = format!("{}{tag}", tool.spec.summary);
        let rest = if args.explain {
            format!(
                "{:<7} {:<12} {:>7.3}  {summary}",
                hit.tier.as_str(),
                hit.field.as_str(),
                hit.score
            )
        } else {
            summary
        };
        let name = tool.spec.name.as_str();
        if name.chars().count() > width {
            super::emit(format!("{name}\n{:width$} {rest}", ""))?;
        } else {
            super::emit(format!("{name:<width$} {rest}"))?;
        }
    }
    if found.hits.is_empty() {
        println!("no tool found for {:?}", args.query);
    }
    if let Some(status) = found.name_status {
        println!(
            "note: a tool named {:?} exists but is {}",
            args.query,
            match status {
                toolscout_search::NameStatus::Disabled => "disabled (use --include-disabled)",
                _ => "excluded by the filters",
            }
        );
    }
    if let Some(hint) = toolscout_search::did_you_mean(&found.did_you_mean) {
        println!("{hint}");
    }
    if let Some(next) = &found.next_page {
        println!("more: --page {next}");
    }
    Ok(())
}
