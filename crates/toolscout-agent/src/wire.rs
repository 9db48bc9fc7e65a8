//! Chat-completions responses as they come over the wire, read leniently: compatible
//! servers (vLLM, llama.cpp, OpenRouter…) omit or null fields that OpenAI always sends.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::{TokenUsage, ToolCall};

/// A non-streamed response.
#[derive(Debug, Deserialize)]
pub(crate) struct Response {
    #[serde(default)]
    pub(crate) choices: Option<Vec<Choice>>,
    #[serde(default)]
    pub(crate) usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Choice {
    #[serde(default)]
    pub(crate) message: Option<ResponseMessage>,
    #[serde(default)]
    pub(crate) finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct ResponseMessage {
    #[serde(default)]
    pub(crate) content: Option<String>,
    #[serde(default)]
    pub(crate) tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct WireToolCall {
    #[serde(default)]
    pub(crate) id: Option<String>,
    #[serde(default)]
    pub(crate) function: Option<WireFunction>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireFunction {
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) arguments: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub(crate) prompt_tokens: u64,
    #[serde(default)]
    pub(crate) completion_tokens: u64,
}

impl From<WireUsage> for TokenUsage {
    fn from(u: WireUsage) -> Self {
        TokenUsage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            estimated: false,
        }
    }
}

/// One streamed chunk.
#[derive(Debug, Deserialize)]
pub(crate) struct Chunk {
    #[serde(default)]
    pub(crate) choices: Option<Vec<ChunkChoice>>,
    #[serde(default)]
    pub(crate) usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ChunkChoice {
    #[serde(default)]
    pub(crate) delta: Option<Delta>,
    #[serde(default)]
    pub(crate) finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct Delta {
    #[serde(default)]
    pub(crate) content: Option<String>,
    #[serde(default)]
    pub(crate) tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct ToolCallDelta {
    #[serde(default)]
    pub(crate) index: Option<u32>,
    #[serde(default)]
    pub(crate) id: Option<String>,
    #[serde(default)]
    pub(crate) function: Option<WireFunction>,
}

/// One model turn, assembled.
#[derive(Debug, Default)]
pub(crate) struct Completion {
    pub(crate) content: String,
    pub(crate) tool_calls: Vec<ToolCall>,
    pub(crate) usage: Option<TokenUsage>,
    pub(crate) finish_reason: Option<String>,
}

impl Completion {
    pub(crate) fn from_response(r: Response, step: u32) -> Option<Completion> {
        let choice = r.choices?.into_iter().next()?;
        let message = choice.message.unwrap_or_default();
        let tool_calls = message
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let f = c.function.unwrap_or_default();
                ToolCall::new(
                    non_empty(c.id).unwrap_or_else(|| fallback_id(step, i)),
                    f.name.unwrap_or_default(),
                    f.arguments.unwrap_or_default(),
                )
            })
            .collect();
        Some(Completion {
            content: message.content.unwrap_or_default(),
            tool_calls,
            usage: r.usage.map(TokenUsage::from),
            finish_reason: choice.finish_reason,
        })
    }
}

fn non_empty(s: Option<String>) -> Option<String> {
    s.filter(|s| !s.is_empty())
}

/// The id given to a call when the server sent none.
fn fallback_id(step: u32, i: usize) -> String {
    format!("call_{step}_{i}")
}

#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Assembles streamed deltas into text and tool calls.
///
/// Tool-call deltas are keyed by `index`; the first delta of a call carries its id and
/// name, later ones append to the arguments. Servers that send no index, or reuse an
/// index with a new id, still get one call per id.
#[derive(Debug, Default)]
pub(crate) struct Assembler {
    content: String,
    calls: BTreeMap<u32, PartialCall>,
    usage: Option<TokenUsage>,
    finish_reason: Option<String>,
}

impl Assembler {
    /// Adds one chunk; returns the new text, if any.
    pub(crate) fn push(&mut self, chunk: Chunk) -> Option<String> {
        if let Some(u) = chunk.usage {
            self.usage = Some(u.into());
        }
        let mut text: Option<String> = None;
        for choice in chunk.choices.unwrap_or_default() {
            if choice.finish_reason.is_some() {
                self.finish_reason = choice.finish_reason;
            }
            let Some(delta) = choice.delta else { continue };
            if let Some(t) = delta.content.filter(|t| !t.is_empty()) {
                self.content.push_str(&t);
                text.get_or_insert_with(String::new).push_str(&t);
            }
            for d in delta.tool_calls.unwrap_or_default() {
                self.push_call(d);
            }
        }
        text
    }

    fn push_call(&mut self, d: ToolCallDelta) {
        let id = non_empty(d.id);
        let mut index = match d.index {
            Some(i) => i,
            // Without an index, a delta with an id starts a new call; one without
            // continues the last.
            None => match (&id, self.calls.keys().next_back()) {
                (None, Some(last)) => *last,
                (_, Some(last)) => last + 1,
                (_, None) => 0,
            },
        };
        if let (Some(new), Some(existing)) =
            (&id, self.calls.get(&index).and_then(|p| p.id.as_ref()))
            && new != existing
        {
            index = self.calls.keys().next_back().map_or(0, |k| k + 1);
        }
        let partial = self.calls.entry(index).or_default();
        if id.is_some() {
            partial.id = id;
        }
        if let Some(f) = d.function {
            if let Some(name) = f.name {
                partial.name.push_str(&name);
            }
            if let Some(args) = f.arguments {
                partial.arguments.push_str(&args);
            }
        }
    }

    pub(crate) fn finish(self, step: u32) -> Completion {
        let tool_calls = self
            .calls
            .into_values()
            .enumerate()
            .map(|(i, p)| {
                ToolCall::new(
                    p.id.unwrap_or_else(|| fallback_id(step, i)),
                    p.name,
                    p.arguments,
                )
            })
            .collect();
        Completion {
            content: self.content,
            tool_calls,
            usage: self.usage,
            finish_reason: self.finish_reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(v: serde_json::Value) -> Chunk {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn assembles_interleaved_tool_calls() {
        let mut a = Assembler::default();
        let deltas = [
            serde_json::json!({"choices":[{"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"x","arguments":""}}]}}]}),
            serde_json::json!({"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"y","arguments":"{\"q\":"}}]}}]}),
            serde_json::json!({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}),
            serde_json::json!({"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"1}"}}]},"finish_reason":"tool_calls"}]}),
            serde_json::json!({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}),
        ];
        for d in deltas {
            a.push(chunk(d));
        }
        let c = a.finish(1);
        assert_eq!(c.tool_calls.len(), 2);
        assert_eq!(c.tool_calls[0].function.arguments, "{}");
        assert_eq!(c.tool_calls[1].function.arguments, "{\"q\":1}");
        assert_eq!(c.usage.unwrap().completion_tokens, 7);
        assert_eq!(c.finish_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn calls_without_index_or_id_get_one_entry_each() {
        let mut a = Assembler::default();
        a.push(chunk(serde_json::json!({"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"x","arguments":"{"}}]}}]})));
        a.push(chunk(serde_json::json!({"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"}}]}}]})));
        a.push(chunk(serde_json::json!({"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"y","arguments":"{}"}}]}}]})));
        let c = a.finish(3);
        assert_eq!(c.tool_calls.len(), 2);
        assert_eq!(c.tool_calls[0].function.arguments, "{}");
        assert_eq!(c.tool_calls[1].id, "b");
    }
}
