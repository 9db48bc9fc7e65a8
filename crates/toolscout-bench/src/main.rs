//! `toolscout-bench`: the team's load benches of the `toolscout` binary, out of the
//! binary users install. Each bench starts `toolscout` (by default the one `cargo build`
//! left beside this binary; `--toolscout PATH` names another) as a child process on a
//! loopback port and measures it from outside, on one [`harness`]:
//!
//! * `serve`: N clients mixing the manifest, `tools/search` and `tools/call`; with
//!   `--tenants N [--noisy]`, tenants on a temporary catalog;
//! * `scale`: what a large catalog costs, command by command;
//! * `replicas`: replicas of `serve` on one PostgreSQL catalog.
//!
//! ```text
//! cargo build --release --bins
//! target/release/toolscout-bench serve --seconds 30
//! target/release/toolscout-bench --words-only scale --tools tools.jsonl.gz
//! target/release/toolscout-bench --store postgres://… --words-only replicas
//! ```
//!
//! `toolscout bench search` (the index's own speed, in process) stays in the user's
//! binary: it times a user's catalog.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand};

mod harness;
mod replicas;
mod scale;
mod serve;

/// Load benches of the `toolscout` binary.
#[derive(Debug, Parser)]
#[command(name = "toolscout-bench", version, about)]
struct Cli {
    /// Print JSON instead of text.
    #[arg(long, global = true)]
    json: bool,
    #[command(flatten)]
    target: Target,
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, Subcommand)]
enum What {
    /// A load test of `serve`: N clients on loopback mixing the manifest, tools/search
    /// and tools/call; requests/s, p50/p99, errors, the server's memory.
    Serve(serve::ServeArgs),
    /// What a large catalog costs: import, each CLI command (time and peak memory),
    /// `serve` until it answers, the manifest plain and gzip, a search once it is up.
    Scale(scale::ScaleArgs),
    /// Replicas of `serve` on one PostgreSQL catalog (`--store`): propagation lag of a
    /// write (p50/p99), requests/s per replica count, a replica's cold start.
    Replicas(replicas::ReplicasArgs),
    /// Runs `toolscout ARGS…` and prints its time and peak memory (used by `scale`).
    #[command(hide = true)]
    Peak(scale::PeakArgs),
}

/// The `toolscout` binary a bench measures, and the flags it is started with.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Target {
    /// The `toolscout` binary to measure (default: the one beside this binary, where
    /// `cargo build --bins` puts both, else `toolscout` on the PATH).
    #[arg(long, global = true, value_name = "PATH")]
    toolscout: Option<PathBuf>,
    /// The catalog directory the server is started on (`serve`; `serve --tenants` only
    /// reads a few of its tools).
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) catalog: Option<PathBuf>,
    /// The directory the file tools may touch.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// `replicas`: a PostgreSQL server where the bench may create (and then drops) a
    /// database of its own, `postgres://user:password@host:port/database`.
    #[arg(
        long,
        global = true,
        env = "TOOLSCOUT_DATABASE_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub(crate) store: Option<StoreUrl>,
    /// Rank by words only (no sentence encoder), passed on to `toolscout`.
    #[arg(long, global = true)]
    pub(crate) words_only: bool,
    /// A sentence encoder's directory (repeatable), passed on to `toolscout`.
    #[arg(long, global = true, value_name = "DIR", conflicts_with = "words_only")]
    pub(crate) encoder: Vec<PathBuf>,
}

/// A PostgreSQL URL, kept out of `Debug` output (it may carry a password).
#[derive(Clone)]
pub(crate) struct StoreUrl(pub(crate) String);

impl std::fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreUrl(<redacted>)")
    }
}

impl std::str::FromStr for StoreUrl {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let url = s.trim();
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Ok(StoreUrl(url.to_owned()))
        } else {
            Err("a PostgreSQL URL starts with postgres:// or postgresql://".to_owned())
        }
    }
}

impl Target {
    /// The `toolscout` binary: `--toolscout`, else the one beside this binary, else the
    /// name alone (looked up on the PATH).
    pub(crate) fn exe(&self) -> PathBuf {
        if let Some(p) = &self.toolscout {
            return p.clone();
        }
        let name = format!("toolscout{}", std::env::consts::EXE_SUFFIX);
        std::env::current_exe()
            .ok()
            .map(|me| me.with_file_name(&name))
            .filter(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from(name))
    }

    /// A `toolscout` command with no arguments yet.
    pub(crate) fn command(&self) -> Command {
        Command::new(self.exe())
    }

    /// The ranking flags (`--words-only`, `--encoder DIR`…), passed on to every child.
    pub(crate) fn ranking_args(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.words_only {
            out.push("--words-only".to_owned());
        }
        for e in &self.encoder {
            out.push("--encoder".to_owned());
            out.push(e.display().to_string());
        }
        out
    }

    /// Runs `toolscout ARGS` to its end and returns its standard output; its failure,
    /// with what it printed to standard error, is an error.
    pub(crate) fn output(&self, args: &[&str]) -> Result<Vec<u8>> {
        let exe = self.exe();
        let out = self
            .command()
            .args(args)
            .output()
            .with_context(|| format!("running {}", exe.display()))?;
        if !out.status.success() {
            anyhow::bail!(
                "`{} {}` failed ({}): {}",
                exe.display(),
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(out.stdout)
    }
}

/// Prints `text` and a newline to standard output (an error once it is closed).
pub(crate) fn emit(text: impl std::fmt::Display) -> Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    Ok(())
}

fn main() -> ExitCode {
    // Every HTTP client of the process uses rustls with ring (reqwest is built without a
    // provider of its own), as in `toolscout`.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = Cli::parse();
    // Which binary is measured: the one beside this, or on the PATH, may not be the
    // one you meant.
    if !matches!(cli.what, What::Peak(_)) {
        eprintln!("toolscout-bench: measuring {}", cli.target.exe().display());
    }
    let result = match &cli.what {
        What::Serve(a) => serve::run(a, &cli.target, cli.json),
        What::Scale(a) => scale::run(a, &cli.target, cli.json),
        What::Replicas(a) => replicas::run(a, &cli.target, cli.json),
        What::Peak(a) => scale::peak(a, &cli.target),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
