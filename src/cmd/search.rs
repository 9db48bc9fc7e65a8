//! `toolscout search QUERY [--explain] [--tag T] [--include-disabled]`.

use anyhow::Result;
use serde_json::json;
use toolscout_search::{IndexDoc, SearchIndex, SearchQuery};

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
    /// Find disabled tools too.
    #[arg(long)]
    include_disabled: bool,
    /// Hits per page.
    #[arg(long, default_value_t = 10)]
    limit: usize,
    /// The page token printed by a previous search.
    #[arg(long)]
    page: Option<String>,
}

pub(crate) fn run(args: &Args, json_out: bool) -> Result<()> {
    let tools = super::catalog();
    let index = SearchIndex::in_memory()?;
    index.extend(
        tools
            .iter()
            .map(|t| IndexDoc::new(t).with_enabled(t.metadata.enabled_by_default)),
        &mut |_| {},
    )?;
    let mut q = SearchQuery::new(args.query.as_str())
        .with_include_disabled(args.include_disabled)
        .with_limit(args.limit)
        .with_page_token(args.page.clone());
    q.tags.clone_from(&args.tags);
    q.category.clone_from(&args.category);
    let found = index.search(&q)?;
    if json_out {
        return super::print_json(&json!(found));
    }
    for hit in &found.hits {
        let summary = tools
            .iter()
            .find(|t| t.name == hit.id.as_str())
            .map_or("", |t| t.summary.as_str());
        if args.explain {
            println!(
                "{:<24} {:<7} {:<12} {:>7.3}  {summary}",
                hit.id,
                hit.tier.as_str(),
                hit.field.as_str(),
                hit.score
            );
        } else {
            println!("{:<24} {summary}", hit.id);
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
    if !found.did_you_mean.is_empty() {
        println!("did you mean: {}?", found.did_you_mean.join(", "));
    }
    if let Some(next) = &found.next_page {
        println!("more: --page {next}");
    }
    Ok(())
}
