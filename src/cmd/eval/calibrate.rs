//! `toolscout eval calibrate`: puts a sentence encoder's cosines on search's scale, so
//! that the thresholds search and the agent set (meaning-only floor, twins, margins,
//! confidence) mean the same with it as with the built-in model.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde_json::json;
use toolscout_embed::{CALIBRATION_FILE, Calibration, Encoder};
use toolscout_eval::read;
use toolscout_search::Embedder;

use super::{explain, read_tools};

/// The most tools and queries read by default: 500 tools make 124,750 tool pairs.
const DEFAULT_LIMIT: usize = 500;

/// `toolscout eval calibrate`.
#[derive(Debug, clap::Args)]
pub(crate) struct CalibrateArgs {
    /// The model folder to calibrate (a sentence-transformers BERT or a model2vec
    /// model, as `--encoder` takes); its `calibration.json` is written there.
    #[arg(long, value_name = "DIR")]
    model: PathBuf,
    /// Tools, JSONL (`.jsonl` or `.jsonl.gz`): every pair of them is a pair of texts.
    #[arg(long)]
    tools: PathBuf,
    /// Requests, JSONL with `query`: each is paired with every tool (best: requests of
    /// the kind your users send, in the languages they write).
    #[arg(long)]
    queries: Option<PathBuf>,
    /// Read at most this many tools, and as many queries, spread evenly over the files.
    #[arg(long, default_value_t = DEFAULT_LIMIT)]
    limit: usize,
    /// Print the knots without writing the file.
    #[arg(long)]
    dry_run: bool,
}

/// The cosines of every query with every tool, and of every pair of tools, under
/// `embedder` (its own vectors' dot products, uncalibrated).
fn cosines(embedder: &dyn Embedder, queries: &[&str], tools: &[&str]) -> Vec<f32> {
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    let tool_vectors = embedder.embed(tools);
    let mut out = Vec::with_capacity(queries.len() * tools.len() + tools.len().pow(2) / 2);
    for q in queries {
        let v = embedder.embed_query(q);
        out.extend(tool_vectors.iter().map(|t| dot(&v, t)));
    }
    for (i, a) in tool_vectors.iter().enumerate() {
        out.extend(tool_vectors[i + 1..].iter().map(|b| dot(a, b)));
    }
    out
}

/// `x` to four decimals, for the report (as f64, so that JSON shows no float noise).
fn round4(x: f32) -> f64 {
    (f64::from(x) * 1e4).round() / 1e4
}

pub(crate) fn run(a: &CalibrateArgs, json_out: bool) -> Result<()> {
    if a.limit < 2 {
        bail!(
            "--limit {} leaves no pair of tools; take 2 or more",
            a.limit
        );
    }
    let specs = read::spread(read_tools(&a.tools)?, a.limit);
    if specs.len() < 2 {
        bail!(
            "{} holds {} tool(s); a calibration needs pairs of tools",
            a.tools.display(),
            specs.len()
        );
    }
    let tool_texts: Vec<String> = specs.iter().map(toolscout_search::tool_text).collect();
    let tools: Vec<&str> = tool_texts.iter().map(String::as_str).collect();
    let query_texts: Vec<String> = match &a.queries {
        Some(path) => read::spread(read::labelled_queries(path).map_err(explain)?, a.limit)
            .into_iter()
            .map(|q| q.text)
            .collect(),
        None => Vec::new(),
    };
    let queries: Vec<&str> = query_texts.iter().map(String::as_str).collect();

    let model = Encoder::load(&a.model)
        .with_context(|| format!("loading the sentence encoder from {}", a.model.display()))?;
    let reference =
        Encoder::bundled().context("loading the built-in sentence encoder (the reference)")?;
    eprintln!(
        "embedding {} tools and {} queries with {} and the built-in {}…",
        tools.len(),
        queries.len(),
        model.model(),
        reference.model()
    );
    let theirs = cosines(&model, &queries, &tools);
    // The built-in model's cosines, on all-MiniLM-L6-v2's scale already.
    let ours: Vec<f32> = cosines(&reference, &queries, &tools)
        .into_iter()
        .map(|c| reference.calibrate(c))
        .collect();
    let pairs = theirs.len();
    let calibration = Calibration::fit(theirs, ours)
        .with_context(|| format!("fitting {}'s cosines", model.model()))?;
    let measured = format!(
        "{} tools of {}, {} queries{}, {pairs} pairs, against the built-in {}",
        tools.len(),
        a.tools.display(),
        queries.len(),
        a.queries
            .as_ref()
            .map_or_else(String::new, |q| format!(" of {}", q.display())),
        reference.model()
    );
    let path = a.model.join(CALIBRATION_FILE);
    if !a.dry_run {
        calibration
            .write(&path, &measured)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if json_out {
        return crate::cmd::print_json(&json!({
            "model": model.model(),
            "knots": calibration
                .knots()
                .iter()
                .map(|&(x, y)| [round4(x), round4(y)])
                .collect::<Vec<_>>(),
            "measured": measured,
            "written": (!a.dry_run).then(|| path.display().to_string()),
        }));
    }
    let mut out = format!(
        "{}: its cosine → search's scale ({measured})\n",
        model.model()
    );
    for (x, y) in calibration.knots() {
        out.push_str(&format!("  {x:>6.3} → {y:.1}\n"));
    }
    if a.dry_run {
        out.push_str("not written (--dry-run)");
    } else {
        out.push_str(&format!(
            "written to {}: every command that loads the model uses it",
            path.display()
        ));
    }
    crate::cmd::emit(out)
}
