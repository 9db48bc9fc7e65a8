//! The transcript: chat messages in the OpenAI wire format.
//!
//! [`Message`] serialises exactly as a chat-completions request expects it, so the
//! transcript is sent as it is stored. Tool calls keep the names the model used (the
//! OpenAI aliases of [`NameMap`](toolscout_spec::adapters::openai::NameMap)); every
//! assistant tool call is followed by one `tool` message with the same `tool_call_id`.

use serde::{Deserialize, Serialize};

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    /// Instructions for the model.
    System {
        /// The text.
        content: String,
    },
    /// The user's turn.
    User {
        /// The text.
        content: String,
    },
    /// The model's turn: text, tool calls, or both.
    Assistant {
        /// The text, if any (`null` on the wire when the model only called tools).
        content: Option<String>,
        /// Tool calls, in the order the model made them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    Tool {
        /// The id of the call this answers.
        tool_call_id: String,
        /// The result the model reads (JSON text).
        content: String,
    },
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message::System {
            content: content.into(),
        }
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message::User {
            content: content.into(),
        }
    }

    /// The text of the message, if it has any.
    pub fn text(&self) -> Option<&str> {
        match self {
            Message::System { content }
            | Message::User { content }
            | Message::Tool { content, .. } => Some(content),
            Message::Assistant { content, .. } => content.as_deref(),
        }
    }
}

/// A tool call made by the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call id, unique within the run.
    pub id: String,
    /// Always `function`.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    /// The function called.
    pub function: FunctionCall,
}

fn function_type() -> String {
    "function".to_owned()
}

impl ToolCall {
    /// A function call with its arguments as JSON text.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            kind: function_type(),
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
        }
    }
}

/// The function part of a [`ToolCall`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The name the model called (an OpenAI alias).
    pub name: String,
    /// The arguments as the model wrote them: JSON text, which may be invalid.
    pub arguments: String,
}

/// Tokens used by one request or a whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Tokens of the prompt (messages and tools).
    pub prompt_tokens: u64,
    /// Tokens the model generated.
    pub completion_tokens: u64,
    /// Whether any part was counted locally with `o200k_base` because the endpoint did
    /// not report usage.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

impl TokenUsage {
    /// Prompt plus completion tokens.
    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// Adds another usage to this one.
    pub fn add(&mut self, other: TokenUsage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.estimated |= other.estimated;
    }
}
