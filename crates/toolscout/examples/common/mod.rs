//! What the agent examples share: the endpoint from the environment, and a toolbox over
//! the built-in tools.

use toolscout::discover::Toolbox;
use toolscout::invoke::AllowedHosts;
use toolscout::invoke::builtin::BuiltinConfig;

/// The OpenAI-compatible endpoint: `(base_url, api_key, model)` from `OPENAI_BASE_URL`,
/// `OPENAI_API_KEY` (default "none") and `TOOLSCOUT_MODEL`; `None`, with a message, when
/// they are not set.
pub(crate) fn endpoint() -> Option<(String, String, String)> {
    let (Ok(base_url), Ok(model)) = (
        std::env::var("OPENAI_BASE_URL"),
        std::env::var("TOOLSCOUT_MODEL"),
    ) else {
        eprintln!("Set OPENAI_BASE_URL, OPENAI_API_KEY and TOOLSCOUT_MODEL to run this example.");
        return None;
    };
    let api_key = std::env::var("OPENAI_API_KEY").unwrap_or_else(|_| "none".to_owned());
    Some((base_url, api_key, model))
}

/// A toolbox over the built-in tools, their files confined to the current directory.
pub(crate) fn builtin_toolbox() -> anyhow::Result<Toolbox> {
    let config = BuiltinConfig::new(std::env::current_dir()?, AllowedHosts::default());
    Ok(Toolbox::builder().builtins(config).build()?)
}
