//! The `toolscout` command-line tool.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

/// Find and use the right tool in a catalog of thousands.
#[derive(Debug, Parser)]
#[command(name = "toolscout", version, about, propagate_version = true)]
struct Cli {
    /// Print JSON instead of text (read commands).
    #[arg(long, global = true)]
    json: bool,
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
    /// Measure quality against labelled data (`eval search`).
    Eval(cmd::eval::Args),
    /// Measure speed (`bench search`).
    Bench(cmd::bench::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Describe(args) => cmd::describe::run(&args, cli.json),
        Command::List(args) => cmd::list::run(&args, cli.json),
        Command::Identity => cmd::identity::run(cli.json),
        Command::Export(args) => cmd::export::run(&args),
        Command::Search(args) => cmd::search::run(&args, cli.json),
        Command::Eval(args) => cmd::eval::run(&args, cli.json),
        Command::Bench(args) => cmd::bench::run(&args, cli.json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Whether the error is stdout closing early (`toolscout list | head`): not a failure.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
