//! `toolscout call TOOL [--args JSON] [--<param> VALUE …]`: flags made from the tool's schema.

use anyhow::{Context as _, Result, bail};
use clap::{Arg, ArgAction, Command};
use serde_json::{Map, Value, json};
use toolscout_discover::{Lookup, call_looked_up};
use toolscout_spec::ToolSpec;

use super::context::{Context, Global, find_tool};

/// Arguments of `call`; everything after the tool's name is parsed against its schema.
/// Global options (`--catalog`, `--workspace`…) go before `call`.
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
pub(crate) struct Args {
    /// Tool name (`toolscout call TOOL --help` lists its parameters).
    #[arg(allow_hyphen_values = true)]
    tool: String,
    /// `--args JSON` and one `--<param> VALUE` per parameter.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    rest: Vec<String>,
}

/// Flags of `call` that are not parameters.
const RESERVED: [&str; 4] = ["args", "json", "help", "yes"];

/// What `toolscout call --help` prints.
const HELP: &str = "Call a tool and print its outcome, {\"ok\": true, \"value\": …} or {\"ok\": false, \"error\": …} (exit 1).

Usage: toolscout [GLOBAL OPTIONS] call <TOOL> [--args JSON] [--<param> VALUE]...

  --args JSON        all arguments as a JSON object; flags override its keys
  --<param> VALUE    one parameter, parsed by its JSON type (repeat for arrays)
  --yes              approve the call if the tool requires approval (on a terminal
                     you are asked; `--approve TOOL` before `call` approves one tool)

`toolscout call <TOOL> --help` lists the tool's parameters. Global options (--catalog,
--workspace, --allow-host) go before `call`.";

pub(crate) fn run(args: &Args, global: &Global) -> Result<()> {
    if matches!(args.tool.as_str(), "-h" | "--help" | "help") {
        return super::emit(HELP);
    }
    let ctx = Context::open(global)?;
    let tool = find_tool(&ctx.catalog, &args.tool)?;
    let command = command_for(&tool.spec);
    let matches = match command.try_get_matches_from(
        std::iter::once(format!("toolscout call {}", tool.spec.name)).chain(args.rest.clone()),
    ) {
        Ok(m) => m,
        Err(e) => e.exit(),
    };
    let arguments = arguments(&tool.spec, &matches)?;
    let approver = super::approve::TerminalApprover::new(&global.approve)?
        .approve_all(matches.get_flag("yes"));
    let ctx = ctx.with_approver(approver)?;
    let name = tool.spec.name.to_string();
    // One tool is called: no search index is built.
    let lookup = match &tool.disabled_reason {
        None => Lookup::Found(Box::new(tool)),
        Some(reason) => Lookup::Disabled {
            reason: reason.to_string(),
            tool: Box::new(tool),
        },
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(call_looked_up(
        &ctx.catalog,
        &ctx.invoker,
        lookup,
        &name,
        arguments,
        false,
    ));
    ctx.finish();
    super::print_json(&outcome.to_json())?;
    if outcome.is_ok() {
        Ok(())
    } else {
        Err(super::Exit(1).into())
    }
}

/// The command line of one tool: `--args` and a flag per top-level parameter.
fn command_for(spec: &ToolSpec) -> Command {
    let mut cmd = Command::new(format!("toolscout call {}", spec.name))
        .about(spec.summary.clone())
        .long_about(if spec.description.is_empty() {
            spec.summary.clone()
        } else {
            spec.description.clone()
        })
        .no_binary_name(false)
        .arg(
            Arg::new("args")
                .long("args")
                .value_name("JSON")
                .help("All arguments as a JSON object; flags override its keys"),
        )
        .arg(
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .hide(true),
        )
        .arg(
            Arg::new("yes")
                .long("yes")
                .action(ArgAction::SetTrue)
                .help("Approve the call if the tool requires approval"),
        );
    let required = required(spec);
    for (name, schema) in properties(spec) {
        if RESERVED.contains(&name.as_str()) {
            continue;
        }
        let ty = json_type(schema);
        let mut help = schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let mut notes = vec![ty.to_owned()];
        if required.contains(&name) {
            notes.push("required".to_owned());
        }
        if let Some(d) = schema.get("default").filter(|d| !d.is_null()) {
            notes.push(format!("default {d}"));
        }
        help = format!("{help} [{}]", notes.join(", ")).trim().to_owned();
        let mut arg = Arg::new(name.clone())
            .long(name.clone())
            .help(help)
            .value_name(if ty == "any" {
                "JSON".to_owned()
            } else {
                ty.to_uppercase()
            });
        let dashed = name.replace('_', "-");
        if dashed != *name && !RESERVED.contains(&dashed.as_str()) {
            arg = arg.alias(dashed);
        }
        arg = match ty {
            "boolean" => arg
                .num_args(0..=1)
                .default_missing_value("true")
                .value_parser(["true", "false"]),
            "array" => arg.action(ArgAction::Append),
            _ => arg,
        };
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            let names: Vec<String> = values
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect();
            arg = arg.value_parser(clap::builder::PossibleValuesParser::new(names));
        }
        cmd = cmd.arg(arg);
    }
    cmd
}

fn properties(spec: &ToolSpec) -> Vec<(String, &Value)> {
    spec.parameters
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.iter().map(|(k, v)| (k.clone(), v)).collect())
        .unwrap_or_default()
}

fn required(spec: &ToolSpec) -> Vec<String> {
    spec.parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The parameter's JSON type (the first non-null one of a list), `any` when unsaid.
fn json_type(schema: &Value) -> &str {
    match schema.get("type") {
        Some(Value::String(t)) => t,
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("any"),
        _ => "any",
    }
}

/// The JSON arguments: `--args`, then each flag given, parsed by its parameter's type.
fn arguments(spec: &ToolSpec, matches: &clap::ArgMatches) -> Result<Value> {
    let mut args = match matches.get_one::<String>("args") {
        Some(text) => match serde_json::from_str::<Value>(text)
            .with_context(|| format!("--args is not JSON: {text}"))?
        {
            Value::Object(m) => m,
            other => bail!("--args must be a JSON object, not {other}"),
        },
        None => Map::new(),
    };
    for (name, schema) in properties(spec) {
        if RESERVED.contains(&name.as_str()) {
            continue;
        }
        let Some(raw) = matches.get_many::<String>(&name) else {
            continue;
        };
        let raw: Vec<&String> = raw.collect();
        let ty = json_type(schema);
        let value = if ty == "array" {
            let item_ty = schema.get("items").map_or("any", json_type);
            match raw.as_slice() {
                [one] if one.trim_start().starts_with('[') => parse(&name, "array", one)?,
                many => Value::Array(
                    many.iter()
                        .map(|v| parse(&name, item_ty, v))
                        .collect::<Result<_>>()?,
                ),
            }
        } else {
            let last = raw.last().map_or("", |s| s.as_str());
            parse(&name, ty, last)?
        };
        args.insert(name, value);
    }
    Ok(Value::Object(args))
}

/// One flag value as JSON of type `ty`.
fn parse(name: &str, ty: &str, raw: &str) -> Result<Value> {
    let value = match ty {
        "integer" => raw.trim().parse::<i64>().map(Value::from).ok(),
        "number" => raw
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        "boolean" => match raw.trim() {
            "true" => Some(json!(true)),
            "false" => Some(json!(false)),
            _ => None,
        },
        "object" | "array" => serde_json::from_str(raw).ok(),
        // A value of any type: JSON when it parses, a string otherwise.
        "any" => Some(serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))),
        _ => Some(Value::String(raw.to_owned())),
    };
    let a = if ty.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    value.with_context(|| format!("--{name} wants {a} {ty}, not {raw:?}"))
}
