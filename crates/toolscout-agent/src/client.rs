//! [`ChatClient`]: chat completions against any OpenAI-compatible endpoint.

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use futures_util::StreamExt;
use serde_json::Value;

use crate::Result;
use crate::wire::{Assembler, Chunk, Completion, Response};

/// A client for one OpenAI-compatible endpoint: OpenAI, OpenRouter, vLLM, llama.cpp's
/// server…
///
/// Requests are built as JSON and sent with async-openai's bring-your-own-type calls,
/// so the wire format is exactly the chat-completions one and responses are read
/// leniently. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ChatClient {
    inner: Client<OpenAIConfig>,
}

impl ChatClient {
    /// A client for `base_url` (including the version, e.g. `https://api.openai.com/v1`
    /// or `http://127.0.0.1:8080/v1`) with an API key (may be empty for local servers).
    ///
    /// TLS uses rustls with the *ring* provider, installed as the process default
    /// unless another provider already is.
    pub fn new(base_url: &str, api_key: &str) -> Self {
        // An error means a provider is installed already, which is just as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let config = OpenAIConfig::new()
            .with_api_base(base_url.trim_end_matches('/'))
            .with_api_key(api_key);
        ChatClient {
            inner: Client::with_config(config),
        }
    }

    /// A client from an async-openai config, for settings [`ChatClient::new`] does not
    /// cover (extra headers such as OpenRouter's `HTTP-Referer`, organisation, project).
    /// The TLS provider is installed as in [`ChatClient::new`].
    pub fn from_config(config: OpenAIConfig) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        ChatClient {
            inner: Client::with_config(config),
        }
    }

    /// Sends one request (`stream` and `stream_options` are set here) and assembles
    /// the answer; `on_text` sees each piece of text as it streams.
    pub(crate) async fn complete<F>(
        &self,
        mut body: serde_json::Map<String, Value>,
        stream: bool,
        step: u32,
        mut on_text: F,
    ) -> Result<Completion>
    where
        F: FnMut(&str) + Send,
    {
        body.insert("stream".to_owned(), Value::Bool(stream));
        if !stream {
            let response: Response = self.inner.chat().create_byot(Value::Object(body)).await?;
            let completion =
                Completion::from_response(response, step).ok_or(crate::Error::NoChoices)?;
            if !completion.content.is_empty() {
                on_text(&completion.content);
            }
            return Ok(completion);
        }
        body.insert(
            "stream_options".to_owned(),
            serde_json::json!({"include_usage": true}),
        );
        let mut chunks = self
            .inner
            .chat()
            .create_stream_byot::<Value, Chunk>(Value::Object(body))
            .await?;
        let mut assembler = Assembler::default();
        let mut any = false;
        while let Some(chunk) = chunks.next().await {
            any = true;
            if let Some(text) = assembler.push(chunk?) {
                on_text(&text);
            }
        }
        if !any {
            return Err(crate::Error::NoChoices);
        }
        Ok(assembler.finish(step))
    }
}
