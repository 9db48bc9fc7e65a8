//! Build a tool spec from a Rust type, then look at what a model sees at each level
//! and in each format.
//!
//! Run with `cargo run --example describe`.

use schemars::JsonSchema;
use serde::Deserialize;
use toolscout::spec::adapters::{mcp, openai};
use toolscout::spec::{Level, ToolSpec};

/// Converts an amount of money between currencies at today's rate.
#[derive(Debug, Deserialize, JsonSchema)]
#[allow(dead_code)]
struct ConvertCurrency {
    /// Amount to convert, in the source currency.
    amount: f64,
    /// ISO 4217 code of the source currency, e.g. EUR.
    from: String,
    /// ISO 4217 code of the target currency, e.g. JPY.
    to: String,
}

fn main() -> anyhow::Result<()> {
    let spec =
        ToolSpec::from_args::<ConvertCurrency>("fx.convert", "Convert money between currencies")
            .returns("object: amount, currency, rate")
            .example(
                "100 euros in yen",
                serde_json::json!({"amount": 100, "from": "EUR", "to": "JPY"}),
            )
            .error("unknown_currency", "a code is not ISO 4217")
            .tag("finance")
            .build()?;

    for level in Level::ALL {
        let d = spec.disclose(level);
        println!(
            "== level {} ({} tokens)\n{}\n",
            level.number(),
            d.tokens(),
            d.to_text()
        );
    }
    println!(
        "== parameter detail\n{}",
        serde_json::to_string_pretty(&spec.parameter("from")?)?
    );

    // OpenAI allows no dots in function names: map them, and map calls back.
    let names = openai::NameMap::new([spec.name.as_str()]);
    let alias = names.alias(&spec.name).unwrap_or_default();
    println!(
        "\n== OpenAI ({alias} ↔ {})",
        names.original(alias).unwrap_or_default()
    );
    println!(
        "{}",
        serde_json::to_string_pretty(&openai::to_openai_named(&spec, alias, true))?
    );
    println!(
        "\n== MCP\n{}",
        serde_json::to_string_pretty(&mcp::to_mcp(&spec))?
    );
    Ok(())
}
