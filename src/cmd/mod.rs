//! One module per subcommand; each has an `Args` (clap) and a `run`.

pub(crate) mod agent_opts;
pub(crate) mod approve;
pub(crate) mod bench;
pub(crate) mod bundle;
pub(crate) mod call;
pub(crate) mod chat;
pub(crate) mod context;
pub(crate) mod describe;
pub(crate) mod enrich;
pub(crate) mod eval;
pub(crate) mod export;
pub(crate) mod identity;
pub(crate) mod import;
pub(crate) mod lint;
pub(crate) mod list;
pub(crate) mod mcp;
pub(crate) mod search;
pub(crate) mod serve;
pub(crate) mod tenant;
pub(crate) mod tool;

use anyhow::{Result, bail};

/// Ends the process with this code, after the command printed what it had to say.
#[derive(Debug)]
pub(crate) struct Exit(pub(crate) u8);

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit {}", self.0)
    }
}

impl std::error::Error for Exit {}

/// The tool called `name`, or an error that suggests the closest names.
pub(crate) fn find<'a>(tools: &[&'a str], name: &str) -> Result<&'a str> {
    if let Some(t) = tools.iter().find(|t| **t == name) {
        return Ok(t);
    }
    // An OpenAI alias (`export --format openai` names `math.gcd` `math_gcd_e209990b`).
    if toolscout_spec::adapters::openai::is_legal(name) {
        let mut aliased = tools
            .iter()
            .filter(|t| toolscout_spec::adapters::openai::could_alias(t, name));
        if let (Some(t), None) = (aliased.next(), aliased.next()) {
            return Ok(t);
        }
    }
    match toolscout_search::did_you_mean(&toolscout_search::closest_names(
        name,
        tools.iter().copied(),
    )) {
        Some(hint) => bail!("no tool named '{name}'; {hint}"),
        None => bail!("no tool named '{name}' (try `toolscout list`)"),
    }
}

/// Prints a JSON value, pretty.
pub(crate) fn print_json(value: &serde_json::Value) -> Result<()> {
    emit(serde_json::to_string_pretty(value)?)
}

/// Prints a line to stdout. Unlike `println!`, a closed pipe (`toolscout list | head`) is
/// an error the caller can return, not a panic; `main` treats it as success.
pub(crate) fn emit(text: impl std::fmt::Display) -> Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    Ok(())
}
