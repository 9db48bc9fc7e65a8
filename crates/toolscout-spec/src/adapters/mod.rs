//! Conversions between [`crate::ToolSpec`] and the formats tools travel in.
//!
//! | module | format |
//! |---|---|
//! | [`openai`] | OpenAI function calling: `{"type":"function","function":{…}}` |
//! | [`mcp`] | Model Context Protocol `Tool` |
//! | [`manifest`] | the tool-discovery manifest's `ToolDefinition` (`GET /api/v1/tools`) |
//! | [`tool_file`] | the flat-file `tool.json` of the tools spec |
//! | [`jsonl`] | `{name, description, parameters}` lines, as in the evaluation data |
//! | [`openapi`] | an OpenAPI 3 or Swagger 2 document (JSON): one HTTP tool per operation (read only) |
//!
//! Each adapter has a `to_*` and a `from_*`; reading validates like the builder does.

pub mod jsonl;
pub mod manifest;
pub mod mcp;
pub mod openai;
pub mod openapi;
pub mod tool_file;

use serde_json::Value;

/// The first sentence of a description, on one line: the summary of tools that have none.
///
/// ```
/// use toolscout_spec::adapters::first_sentence;
/// assert_eq!(first_sentence("Get quotes. Uses the v2 API."), "Get quotes.");
/// assert_eq!(first_sentence("Compute e.g. 2.5 times x"), "Compute e.g. 2.5 times x");
/// ```
pub fn first_sentence(text: &str) -> String {
    let text = text.trim();
    let mut end = text.len();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (i, &(pos, c)) in chars.iter().enumerate() {
        let next = chars.get(i + 1).map(|&(_, n)| n);
        let boundary = match c {
            '\n' => true,
            '。' | '！' | '？' => true,
            '.' | '!' | '?' => {
                next.is_none_or(char::is_whitespace) && !is_abbreviation(&text[..pos])
            }
            _ => false,
        };
        if boundary {
            end = pos + if c == '\n' { 0 } else { c.len_utf8() };
            break;
        }
    }
    let sentence = text[..end].trim();
    let mut one_line: String = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
    const MAX: usize = 200;
    if one_line.chars().count() > MAX {
        one_line = one_line.chars().take(MAX - 1).collect::<String>() + "…";
    }
    one_line
}

fn is_abbreviation(before: &str) -> bool {
    let last = before.rsplit(char::is_whitespace).next().unwrap_or("");
    matches!(
        last.to_ascii_lowercase().as_str(),
        "e.g" | "i.e" | "etc" | "vs" | "mr" | "dr" | "approx" | "no"
    )
}

/// A summary for a tool read from a format that has none: the description's first
/// sentence, or the name when the description is empty.
pub(crate) fn derive_summary(name: &str, description: &str) -> String {
    let s = first_sentence(description);
    if s.is_empty() { name.to_owned() } else { s }
}

pub(crate) fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}
