//! `toolscout enrich`: a model writes sample requests (utterances) for each tool of a
//! JSONL file; search then matches them by words and by meaning.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use futures_util::{StreamExt as _, stream};
use serde_json::Value;
use toolscout_agent::{ChatClient, write_utterances};
use toolscout_spec::adapters::jsonl;

use super::agent_opts::EndpointArgs;
use super::eval::read_text;

/// Arguments of `enrich`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Tools, JSONL (`.jsonl` or `.jsonl.gz`), one `{name, description, parameters}` a line
    #[arg(long)]
    tools: PathBuf,
    /// Where the tools go, each line as it was plus `utterances` (JSONL). When the file
    /// exists, the run resumes: the tools already in it are kept and not asked again
    #[arg(long)]
    out: PathBuf,
    /// How many requests to have in flight at once (1–64). A hosted endpoint answers
    /// several at a time; a local server with one slot gains nothing from more than 1.
    /// Lines are written in the input's order whatever the order of the answers
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    concurrency: u16,
    #[command(flatten)]
    endpoint: EndpointArgs,
}

pub(crate) fn run(args: &Args) -> Result<()> {
    if args.out == args.tools {
        bail!(
            "--out must be another file than --tools (the input is read as the output is written)"
        );
    }
    let text = read_text(&args.tools)?;
    let done = resume(&args.out)?;
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.out)
        .with_context(|| format!("opening {}", args.out.display()))?;
    let client = ChatClient::new(&args.endpoint.base_url, &args.endpoint.api_key);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let (mut kept, mut bad) = (0usize, 0usize);
    // The lines to write, and whether each is asked for utterances: only these
    // few bytes a line are kept, and each line is parsed again when its turn comes,
    // so that a catalog of any size takes the memory of `concurrency` tools.
    let mut plan: Vec<(usize, &str, bool)> = Vec::new();
    for &(i, line) in &lines {
        let spec = match jsonl::from_line(line, i + 1) {
            Ok(spec) => spec,
            Err(e) => {
                eprintln!("warning: {e}; the line is left out");
                bad += 1;
                continue;
            }
        };
        if done.contains(spec.name.as_str()) {
            kept += 1;
            continue;
        }
        plan.push((i + 1, line, spec.utterances.is_empty()));
    }
    let to_ask = plan.iter().filter(|(_, _, ask)| *ask).count();
    let asked = runtime.block_on(async {
        // At most `concurrency` requests in flight; `buffered` hands the answers back in
        // the input's order, so the file is the input's lines in order.
        let mut answers = stream::iter(plan)
            .map(|(number, line, ask)| {
                let client = &client;
                let endpoint = &args.endpoint;
                let tools = &args.tools;
                async move {
                    let where_ = || format!("{} line {number}", tools.display());
                    let mut value: Value = serde_json::from_str(line).with_context(where_)?;
                    if !ask {
                        return Ok((value, false));
                    }
                    let spec = jsonl::from_line(line, number)?;
                    let utterances = write_utterances(client, &endpoint.model, &spec)
                        .await
                        .with_context(|| {
                            format!(
                                "asking {} for the utterances of '{}' ({}); run again to resume",
                                endpoint.base_url,
                                spec.name,
                                where_()
                            )
                        })?;
                    if let Value::Object(map) = &mut value {
                        map.insert("utterances".to_owned(), utterances.into());
                    }
                    Ok::<_, anyhow::Error>((value, true))
                }
            })
            .buffered(usize::from(args.concurrency));
        let started = Instant::now();
        let mut asked = 0usize;
        while let Some(answer) = answers.next().await {
            let (value, was_asked) = answer?;
            // One write per line: a run killed between two tools leaves whole lines.
            let mut record = serde_json::to_string(&value)?;
            record.push('\n');
            out.write_all(record.as_bytes())
                .with_context(|| format!("writing {}", args.out.display()))?;
            if was_asked {
                asked += 1;
                if asked.is_multiple_of(10) {
                    eprintln!(
                        "{asked} tools asked ({:.1} s a tool), {} to go",
                        started.elapsed().as_secs_f64() / asked as f64,
                        to_ask - asked
                    );
                }
            }
        }
        Ok::<_, anyhow::Error>(asked)
    })?;
    out.sync_all()
        .with_context(|| format!("writing {}", args.out.display()))?;
    eprintln!(
        "{}: {asked} tools given utterances, {kept} already there, {} written as they were{}",
        args.out.display(),
        lines.len() - asked - kept - bad,
        if bad > 0 {
            format!(", {bad} bad line(s) left out")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// The names of the tools already in `out`, whose whole lines are kept. A last line cut
/// short by an interrupted run is removed, so that appending goes on after whole lines.
fn resume(out: &Path) -> Result<HashSet<String>> {
    let text = match std::fs::read_to_string(out) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashSet::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", out.display())),
    };
    let mut names = HashSet::new();
    let mut whole = 0;
    for line in text.split_inclusive('\n') {
        let complete = line.ends_with('\n');
        match jsonl::from_line(line.trim_end(), 0) {
            Ok(spec) if complete => {
                names.insert(spec.name.to_string());
                whole += line.len();
            }
            _ if !complete => break,
            Ok(_) | Err(_) => bail!(
                "{}: a line after {} bytes is not a tool; give --out a new file, or the file of an earlier run",
                out.display(),
                whole
            ),
        }
    }
    if whole < text.len() {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(out)
            .with_context(|| format!("opening {}", out.display()))?;
        file.set_len(whole as u64)
            .with_context(|| format!("cutting the unfinished last line of {}", out.display()))?;
    }
    Ok(names)
}
