//! Sample requests for a tool, written by a model: a tool's
//! [`utterances`](toolscout_spec::ToolSpec::utterances), which search matches by words and
//! by meaning.

use serde_json::{Map, Value, json};
use toolscout_spec::{MAX_UTTERANCE_CHARS, ToolSpec};

use crate::{ChatClient, Result};

/// How many utterances [`write_utterances`] keeps per tool.
///
/// **Rationale:** five per MetaTool tool, written by Qwen2.5-Coder-1.5B with
/// [`prompts::UTTERANCES`](crate::prompts::UTTERANCES), raised recall@5 over 1,500 queries
/// from 0.737 to 0.804 (all-MiniLM-L6-v2) and from 0.733 to 0.780 (the built-in
/// potion-base-8M), `toolscout eval search`; each costs an embedding per tool.
pub const UTTERANCES_PER_TOOL: usize = 5;
/// How much of a tool's description the prompt carries, in characters: what it does is
/// said first, and a long one would cost the model most of its time.
const DESCRIPTION_CHARS: usize = 600;
/// Completion tokens for five short requests, with room to spare.
const MAX_TOKENS: u32 = 200;
/// An utterance shorter than this is a fragment or a list marker, not a request.
const MIN_CHARS: usize = 8;

/// Asks `model` for sample requests a user could make that `spec` serves, in everyday
/// words, and returns at most [`UTTERANCES_PER_TOOL`] of them, each one line of
/// 8–[`MAX_UTTERANCE_CHARS`] characters (the reply is read leniently: list markers and
/// quotes are taken off, other lines dropped). An empty list when the reply holds none.
///
/// ```no_run
/// # async fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use toolscout_agent::{ChatClient, write_utterances};
/// use toolscout_spec::ToolSpec;
///
/// let client = ChatClient::new("http://127.0.0.1:8080/v1", "none");
/// let mut spec = ToolSpec::builder("air_quality", "Air quality forecast for a city").build()?;
/// spec.utterances = write_utterances(&client, "qwen2.5-coder-1.5b", &spec).await?;
/// spec.validate()?;
/// # Ok(())
/// # }
/// ```
pub async fn write_utterances(
    client: &ChatClient,
    model: &str,
    spec: &ToolSpec,
) -> Result<Vec<String>> {
    let body = json!({
        "model": model,
        "messages": [{"role": "user", "content": utterance_prompt(spec)}],
        "max_tokens": MAX_TOKENS,
        "temperature": 0.2,
    });
    let Value::Object(body) = body else {
        return Ok(Vec::new());
    };
    let completion = client.complete(body, false, 0, |_| {}).await?;
    Ok(parse_utterances(&completion.content))
}

/// The prompt for `spec`: [`prompts::UTTERANCES`](crate::prompts::UTTERANCES) filled in.
pub fn utterance_prompt(spec: &ToolSpec) -> String {
    let description: String = spec
        .description_or_summary()
        .chars()
        .take(DESCRIPTION_CHARS)
        .collect();
    let names: Vec<&str> = spec
        .parameters
        .get("properties")
        .and_then(Value::as_object)
        .map(Map::keys)
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
    let parameters = if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    };
    toolscout_spec::template::fill(
        crate::prompts::UTTERANCES,
        &[
            ("{name}", spec.name.as_str()),
            ("{description}", &description),
            ("{parameters}", &parameters),
        ],
    )
}

/// The requests in a model's reply: one a line, list markers (`-`, `*`, `•`, `1.`, `2)`)
/// and surrounding quotes taken off, control characters dropped, lines under 8 or over
/// [`MAX_UTTERANCE_CHARS`] characters, lines ending in a colon (a preamble) and repeats
/// (ignoring case) left out, at most
/// [`UTTERANCES_PER_TOOL`].
pub fn parse_utterances(reply: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in reply.lines() {
        let line: String = line.chars().filter(|c| !c.is_control()).collect();
        let text = line
            .trim()
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start_matches(['.', ')', '-', '*', '•'])
            .trim()
            .trim_matches(['"', '\'', '“', '”', '`'])
            .trim();
        let chars = text.chars().count();
        // A line that ends in a colon introduces the list ("Here are five requests:").
        if !(MIN_CHARS..=MAX_UTTERANCE_CHARS).contains(&chars) || text.ends_with(':') {
            continue;
        }
        if out.iter().any(|u| u.eq_ignore_ascii_case(text)) {
            continue;
        }
        out.push(text.to_owned());
        if out.len() == UTTERANCES_PER_TOOL {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{parse_utterances, utterance_prompt};
    use serde_json::json;
    use toolscout_spec::ToolSpec;

    #[test]
    fn replies_are_read_leniently_and_bounded() {
        let reply = "Here you go:\n1. \"What's the air quality in Paris today?\"\n- Is it safe to run outside?\n2) \u{201c}Is it safe to run outside?\u{201d}\n* ok\n\n• How polluted is the air in Delhi right now?\u{7}\n";
        assert_eq!(
            parse_utterances(reply),
            [
                "What's the air quality in Paris today?",
                "Is it safe to run outside?",
                "How polluted is the air in Delhi right now?",
            ]
        );
        let many: String = (0..20).map(|i| format!("request number {i}\n")).collect();
        assert_eq!(parse_utterances(&many).len(), super::UTTERANCES_PER_TOOL);
        let long = "x".repeat(301);
        assert!(parse_utterances(&long).is_empty());
    }

    #[test]
    fn the_prompt_names_the_tool_what_it_does_and_its_parameters() {
        let spec = ToolSpec::builder("air_quality", "Air quality forecast")
            .description(format!("Air quality forecast for a city. {}", "y".repeat(1000)))
            .parameters(json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}))
            .build()
            .unwrap();
        let prompt = utterance_prompt(&spec);
        assert!(prompt.contains("name: air_quality"), "{prompt}");
        assert!(prompt.contains("parameters: city, days"), "{prompt}");
        assert!(prompt.contains("description: Air quality forecast for a city."));
        assert!(
            prompt.len() < 1000,
            "the description is cut: {}",
            prompt.len()
        );
        let bare = ToolSpec::builder("clock", "The time").build().unwrap();
        assert!(utterance_prompt(&bare).contains("parameters: none"));
    }
}
