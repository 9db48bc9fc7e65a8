//! Discovery in your own agent loop: you keep your model client and your loop, and give
//! the model one tool, `discover_tools`, instead of every schema. Its answers are data to
//! send back as the tool's result; a tool it described joins the tools of the next
//! request, and its calls go to `Toolbox::call`.
//!
//! ```sh
//! cargo run --example own_loop
//! ```
//!
//! The model here is a script of the calls a model would make (search, describe, call);
//! put your client's request where `next_calls` is. The tests run [`run_loop`].

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolscout::prelude::*;
use toolscout::spec::adapters::openai;

/// Where to look the weather up.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct City {
    /// The city's name, e.g. "Paris".
    city: String,
}

/// The current weather of a city (made up here).
pub(crate) struct GetWeather;

impl NativeTool for GetWeather {
    const NAME: &'static str = "get_weather";
    const SUMMARY: &'static str = "Current weather for a city";
    type Args = City;
    type Output = String;

    async fn call(&self, args: City) -> Result<String, ToolError> {
        Ok(format!("Sunny, 21 °C in {}", args.city))
    }
}

/// One tool call as a model returns it: a name and JSON arguments.
pub(crate) struct ModelCall {
    pub(crate) name: String,
    pub(crate) arguments: Value,
}

/// What the loop keeps between requests: the discover tool, the toolbox it browses, and
/// the tools the model has described so far (offered as tools from then on).
pub(crate) struct Discovery {
    discover: DiscoverTools,
    toolbox: Toolbox,
    described: Vec<ToolSpec>,
}

impl Discovery {
    pub(crate) fn new(toolbox: Toolbox) -> Self {
        Discovery {
            discover: DiscoverTools::new(toolbox.clone()),
            toolbox,
            described: Vec::new(),
        }
    }

    /// The tools array of the next request, as OpenAI function definitions:
    /// `discover_tools`, then every tool the model described.
    pub(crate) fn tools(&self) -> anyhow::Result<Vec<Value>> {
        let mut tools = vec![openai::to_openai(&self.discover.spec()?, false)?];
        for spec in &self.described {
            tools.push(openai::to_openai(spec, false)?);
        }
        Ok(tools)
    }

    /// Runs one call of the model's and gives the text of its tool message. A failed
    /// call is a result too (`{"ok": false, "error": …}`): the model reads it and tries
    /// again, the loop goes on.
    pub(crate) async fn run(&mut self, call: &ModelCall) -> String {
        if call.name == self.discover.name() {
            let answer = self.discover.answer(&call.arguments);
            for name in &answer.disclosed {
                if let Lookup::Found(tool) = self.toolbox.lookup(name)
                    && !self.described.iter().any(|s| s.name == tool.spec.name)
                {
                    self.described.push(tool.spec);
                }
            }
            return answer.reply.to_string();
        }
        self.toolbox
            .call(&call.name, call.arguments.clone())
            .await
            .to_json()
            .to_string()
    }
}

/// A model's calls, step by step (here a script; a real loop sends `tools` and the
/// transcript to its model and reads the calls it returns).
fn next_calls(step: usize, _tools: &[Value]) -> Vec<ModelCall> {
    let call = |name: &str, arguments: Value| ModelCall {
        name: name.to_owned(),
        arguments,
    };
    match step {
        0 => vec![call(
            "discover_tools",
            json!({"query": "weather in a city"}),
        )],
        1 => vec![call("discover_tools", json!({"tool": "get_weather"}))],
        2 => vec![call("get_weather", json!({"city": "Paris"}))],
        _ => Vec::new(),
    }
}

/// The loop: each step's tools, the model's calls, their results. Returns each step's
/// tool names and results.
pub(crate) async fn run_loop() -> anyhow::Result<Vec<(Vec<String>, Vec<String>)>> {
    let toolbox = Toolbox::builder().native(GetWeather).build()?;
    let mut discovery = Discovery::new(toolbox);
    let mut steps = Vec::new();
    for step in 0.. {
        let tools = discovery.tools()?;
        let calls = next_calls(step, &tools);
        if calls.is_empty() {
            break;
        }
        let mut results = Vec::new();
        for call in &calls {
            results.push(discovery.run(call).await);
        }
        let names = tools
            .iter()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
            .collect();
        steps.push((names, results));
    }
    Ok(steps)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    for (i, (tools, results)) in run_loop().await?.iter().enumerate() {
        println!("step {i}: tools {tools:?}");
        for result in results {
            println!("  → {result}");
        }
    }
    Ok(())
}
