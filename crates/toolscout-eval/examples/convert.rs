//! Converts a public benchmark into the evaluation format:
//!
//! ```sh
//! git clone https://github.com/fairyshine/Seal-Tools
//! cargo run -p toolscout-eval --example convert -- seal-tools Seal-Tools dev data/seal-tools
//! ```
//!
//! writes `tools.jsonl`, `queries.jsonl` and `multi.jsonl` (the tasks of two tools or
//! more) and prints what it wrote and what it skipped. MCP-Bench takes the servers'
//! `tools/list` answers as its `utils/collect_mcp_info.py` writes them:
//!
//! ```sh
//! git clone https://github.com/Accenture/mcp-bench
//! cargo run -p toolscout-eval --example convert -- mcp-bench mcp-bench mcp-bench/mcp_servers_info.json data/mcp-bench
//! ``` `chains` picks, from converted tools and
//! tasks, the tasks whose answer feeds a call's result into another call, and writes a
//! recipe for each chain (`eval agent --recipes`):
//!
//! ```sh
//! cargo run -p toolscout-eval --example convert -- chains data/seal-tools/tools.jsonl data/seal-tools/multi.jsonl data/seal-tools
//! ```

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [mode, tools, tasks, out] = args.as_slice()
        && mode == "chains"
    {
        let chains = toolscout_eval::convert::chains(tools.as_ref(), tasks.as_ref())?;
        let (recipes, tasks) = chains.write(out.as_ref())?;
        println!(
            "{} recipes in {}, {} chain tasks in {}, {} chains skipped",
            chains.recipes.len(),
            recipes.display(),
            chains.tasks.len(),
            tasks.display(),
            chains.skipped.len()
        );
        for line in &chains.skipped {
            println!("  skipped: {line}");
        }
        return Ok(());
    }
    let [benchmark, from, split, out] = args.as_slice() else {
        return Err(
            "usage: convert seal-tools DIR SPLIT OUT_DIR | convert mcp-bench DIR SERVERS_JSON OUT_DIR | convert chains TOOLS TASKS OUT_DIR"
                .into(),
        );
    };
    let converted = match benchmark.as_str() {
        "seal-tools" => toolscout_eval::convert::seal_tools(from.as_ref(), split)?,
        // The second argument is the servers' tools file, not a split.
        "mcp-bench" => toolscout_eval::convert::mcp_bench(from.as_ref(), split.as_ref())?,
        other => {
            return Err(
                format!("unknown benchmark {other:?}; known: seal-tools, mcp-bench").into(),
            );
        }
    };
    let written = converted.write(out.as_ref())?;
    println!(
        "{} tools in {}, {} tasks in {} ({} of two tools or more also in {}), {} skipped",
        converted.tools.len(),
        written.tools.display(),
        converted.tasks.len(),
        written.tasks.display(),
        written.multi_tasks,
        written.multi.display(),
        converted.skipped.len()
    );
    for line in &converted.skipped {
        println!("  skipped: {line}");
    }
    Ok(())
}
