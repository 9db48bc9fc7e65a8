//! The `toolscout` command-line tool.

use std::process::ExitCode;

use clap::{FromArgMatches as _, Parser, Subcommand};

mod cmd;

/// Find and use the right tool in a catalog of thousands.
#[derive(Debug, Parser)]
#[command(name = "toolscout", version, about, propagate_version = true)]
struct Cli {
    /// Print JSON instead of text (read commands).
    #[arg(long, global = true)]
    json: bool,
    #[command(flatten)]
    global: cmd::context::Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show one tool at a disclosure level, or one of its parameters.
    Describe(cmd::describe::Args),
    /// List the tools of the catalog (level 1).
    List(cmd::list::Args),
    /// Print the catalog's identity: a UUID that changes whenever its tools change.
    Identity,
    /// Print the catalog in another format (openai, mcp, manifest, jsonl).
    Export(cmd::export::Args),
    /// Search the catalog by name, part of a name, or a sentence.
    Search(cmd::search::Args),
    /// Call a tool: `--args JSON` or one `--<param> VALUE` per parameter (`call TOOL --help`).
    Call(cmd::call::Args),
    /// Serve the catalog over HTTP (manifest, REST, JSON-RPC, MCP), or MCP over stdio.
    Serve(cmd::serve::Args),
    /// Chat with a model that finds and calls the catalog's tools (OpenAI-compatible endpoint).
    Chat(cmd::chat::Args),
    /// Check the catalog: name clashes, near-duplicate descriptions, missing summaries and
    /// examples, names and schemas providers reject (exit 1 on errors).
    Lint(cmd::lint::Args),
    /// Print a shell completion script: `toolscout completions bash > ~/.local/share/bash-completion/completions/toolscout`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Manage bundles: list, put, enable, disable, delete, restore, export, import (ZIP),
    /// share, unshare, owner.
    Bundle(cmd::bundle::Args),
    /// Manage tenants, the teams that share the catalog, each seeing its own, shared and
    /// built-in tools: add, list, show, limits, token add|revoke, remove.
    Tenant(cmd::tenant::Args),
    /// Remove for good the bundles deleted more than two days ago that hold no tool, and
    /// the temporary files of interrupted writes (`serve` does this at start and hourly).
    Reap,
    /// Manage tool versions: put (from a tool.json), enable, disable, delete, get.
    Tool(cmd::tool::Args),
    /// Import tools from another format (`import jsonl FILE`).
    Import(cmd::import::Args),
    /// Have a model write sample requests (utterances) for each tool of a JSONL file, so
    /// that search finds the tools however users put it (`import jsonl` takes the result).
    Enrich(cmd::enrich::Args),
    /// Measure quality against labelled data (`eval search`).
    Eval(cmd::eval::Args),
    /// Measure speed (`bench search`).
    Bench(cmd::bench::Args),
}

fn main() -> ExitCode {
    // Every HTTP client of the process uses rustls with ring (reqwest is built without a
    // provider, so that aws-lc is not); the libraries install it too when none is.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = match Cli::from_arg_matches(&command().get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Command::Describe(args) => cmd::describe::run(&args, &cli.global, cli.json),
        Command::List(args) => cmd::list::run(&args, &cli.global, cli.json),
        Command::Identity => cmd::identity::run(&cli.global, cli.json),
        Command::Export(args) => cmd::export::run(&args, &cli.global, cli.json),
        Command::Search(args) => cmd::search::run(&args, &cli.global, cli.json),
        Command::Call(args) => cmd::call::run(&args, &cli.global),
        Command::Serve(args) => cmd::serve::run(&args, &cli.global),
        Command::Chat(args) => cmd::chat::run(&args, &cli.global),
        Command::Lint(args) => cmd::lint::run(&args, &cli.global, cli.json),
        Command::Completions { shell } => {
            use clap::CommandFactory as _;
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "toolscout", &mut out);
            cmd::emit(String::from_utf8_lossy(&out).trim_end())
        }
        Command::Bundle(args) => cmd::bundle::run(&args, &cli.global, cli.json),
        Command::Tenant(args) => cmd::tenant::run(&args, &cli.global, cli.json),
        Command::Reap => cmd::bundle::reap(&cli.global, cli.json),
        Command::Tool(args) => cmd::tool::run(&args, &cli.global, cli.json),
        Command::Import(args) => cmd::import::run(&args, &cli.global, cli.json),
        Command::Enrich(args) => cmd::enrich::run(&args),
        Command::Eval(args) => cmd::eval::run(&args, &cli.global, cli.json),
        Command::Bench(args) => cmd::bench::run(&args, &cli.global, cli.json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) if err.downcast_ref::<cmd::Exit>().is_some() => {
            ExitCode::from(err.downcast_ref::<cmd::Exit>().map_or(1, |e| e.0))
        }
        Err(err) => {
            eprintln!("error: {}", said_once(&err));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes as `what: why: …`, each said once: a cause whose text the
/// message already holds (the libraries' errors show their source) is left out.
///
/// **Rationale:** `{:#}` printed "recipe 'x': step 'now': calls 'clokc', …: step 'now':
/// calls 'clokc', …" (#63).
fn said_once(err: &anyhow::Error) -> String {
    let mut text = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !text.contains(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// The global flags the `eval` commands read; they accept the others but never read
/// them, so their help leaves those out.
const EVAL_GLOBALS: [&str; 3] = ["json", "encoder", "words_only"];

/// The command line, with each `eval` command's help kept to its own flags and the global
/// ones it reads ([`EVAL_GLOBALS`], under their own heading).
///
/// **Rationale:** `eval agent --help` listed a dozen global flags (the catalog, hosts,
/// approvals, secrets) among its own, 174 lines (#63).
fn command() -> clap::Command {
    use clap::CommandFactory as _;
    let cli = Cli::command();
    let globals: Vec<clap::Arg> = cli
        .get_arguments()
        .filter(|a| a.is_global_set())
        .cloned()
        .collect();
    cli.mut_subcommand("eval", |eval| {
        let names: Vec<String> = eval
            .get_subcommands()
            .map(|s| s.get_name().to_owned())
            .collect();
        names.iter().fold(eval, |eval, name| {
            eval.mut_subcommand(name, |sub| {
                // A subcommand that has an argument of a global's id is not given the
                // global's own copy: these stand in for them, as parsed, only shown apart.
                globals.iter().fold(sub, |sub, global| {
                    let arg = if EVAL_GLOBALS.contains(&global.get_id().as_str()) {
                        global.clone().help_heading("Ranking and output")
                    } else {
                        global.clone().hide(true)
                    };
                    sub.arg(arg)
                })
            })
        })
    })
}

/// Whether the error is stdout closing early (`toolscout list | head`): not a failure.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_error_s_cause_is_said_once() {
        /// An error that shows its source, as the libraries' do.
        #[derive(Debug)]
        struct Outer {
            source: std::io::Error,
        }
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "recipe 'x': {}", self.source)
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.source)
            }
        }
        let inner = || std::io::Error::other("step 'now': calls 'clokc'");
        let shown = anyhow::Error::new(Outer { source: inner() });
        assert_eq!(
            super::said_once(&shown),
            "recipe 'x': step 'now': calls 'clokc'"
        );
        let context = anyhow::Error::new(inner()).context("putting r.json");
        assert_eq!(
            super::said_once(&context),
            "putting r.json: step 'now': calls 'clokc'"
        );
    }

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory as _;
        super::Cli::command().debug_assert();
        super::command().debug_assert();
    }

    /// A global flag whose id is also a subcommand's own argument id makes clap panic
    /// when that subcommand is parsed (`eval agent --tools` against `--secret-tool`'s
    /// field `tools`); `debug_assert` does not catch it.
    #[test]
    fn no_subcommand_argument_shares_a_global_flags_id() {
        use clap::CommandFactory as _;
        fn walk(cmd: &clap::Command, globals: &[String], path: &str, clashes: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if !arg.is_global_set() && globals.iter().any(|g| g == id) {
                    clashes.push(format!("{path}: {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, globals, &format!("{path} {}", sub.get_name()), clashes);
            }
        }
        let cli = super::Cli::command();
        let globals: Vec<String> = cli
            .get_arguments()
            .filter(|a| a.is_global_set())
            .map(|a| a.get_id().to_string())
            .collect();
        assert!(globals.iter().any(|g| g == "catalog"), "{globals:?}");
        let mut clashes = Vec::new();
        walk(&cli, &globals, "toolscout", &mut clashes);
        assert!(clashes.is_empty(), "{clashes:?}");
    }
}
