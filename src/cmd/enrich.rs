//! `toolscout enrich`: a model writes sample requests (utterances) for each tool of a
//! JSONL file; search then matches them by words and by meaning.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
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
    let (mut asked, mut kept, mut bad) = (0usize, 0usize, 0usize);
    let started = Instant::now();
    for (i, line) in &lines {
        let where_ = || format!("{} line {}", args.tools.display(), i + 1);
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
        let mut value: Value = serde_json::from_str(line).with_context(where_)?;
        if spec.utterances.is_empty() {
            let utterances = runtime
                .block_on(write_utterances(&client, &args.endpoint.model, &spec))
                .with_context(|| {
                    format!(
                        "asking {} for the utterances of '{}' ({}); run again to resume",
                        args.endpoint.base_url,
                        spec.name,
                        where_()
                    )
                })?;
            if let Value::Object(map) = &mut value {
                map.insert("utterances".to_owned(), utterances.into());
            }
            asked += 1;
        }
        // One write per line: a run killed between two tools leaves whole lines.
        let mut record = serde_json::to_string(&value)?;
        record.push('\n');
        out.write_all(record.as_bytes())
            .with_context(|| format!("writing {}", args.out.display()))?;
        if asked > 0 && asked % 10 == 0 {
            eprintln!(
                "{asked} tools asked ({:.1} s a tool), {} to go",
                started.elapsed().as_secs_f64() / asked as f64,
                lines.len() - asked - kept - bad
            );
        }
    }
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
