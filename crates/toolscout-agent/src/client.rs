//! [`ChatClient`]: chat completions against any OpenAI-compatible endpoint.

use async_openai::Client;
use async_openai::config::OpenAIConfig;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;

use crate::wire::{Assembler, Chunk, Completion, Response};
use crate::{Result, relax};

/// A client for one OpenAI-compatible endpoint: OpenAI, OpenRouter, vLLM, llama.cpp's
/// server…
///
/// Requests are built as JSON and sent with async-openai's bring-your-own-type calls,
/// so the wire format is exactly the chat-completions one and responses are read
/// leniently. Cheap to clone.
///
/// A request the endpoint could not take *for now* — 429 (rate limit), 502, 503 (a
/// llama.cpp server answers 503 "Loading model" for as long as it loads) or 504 — is
/// sent again after a pause that doubles from one second, up to four more times
/// ([`ChatClient::with_retries`] changes both); each attempt is itself async-openai's,
/// which retries these three times within a second. A streamed answer that broke off
/// after text was shown is not sent again, and an endpoint that cannot be reached at all
/// is reported without the long pauses (a wrong URL should say so at once).
///
/// An endpoint that cannot take the tools' schemas — llama.cpp answers 400 "JSON schema
/// conversion failed: …" or "Failed to parse grammar" — gets an unforced request (no
/// `tool_choice: "required"`) sent again with the schemas relaxed
/// ([`crate::relax::RELAXED_KEYWORDS`] left out; the tools still check calls against
/// their full schemas), and every later request of this client and its clones is
/// relaxed from the start ([`ChatClient::relaxes_schemas`]). A forced request that fails
/// is the caller's to send again unforced first: the agent loop does, and no longer
/// forces for the rest of that run.
#[derive(Debug, Clone)]
pub struct ChatClient {
    inner: Client<OpenAIConfig>,
    retries: u32,
    first_pause: Duration,
    /// The endpoint refused the tools' schemas once: they are sent relaxed.
    relaxed: Arc<AtomicBool>,
}

/// How many times a transient failure is retried by default.
const DEFAULT_RETRIES: u32 = 4;
/// The pause before the first retry; each later one doubles it, up to [`MAX_PAUSE`].
const DEFAULT_FIRST_PAUSE: Duration = Duration::from_secs(1);
/// The longest pause between two attempts.
const MAX_PAUSE: Duration = Duration::from_secs(16);

impl ChatClient {
    /// A client for `base_url` (including the version, e.g. `https://api.openai.com/v1`
    /// or `http://127.0.0.1:8080/v1`) with an API key (may be empty for local servers).
    ///
    /// TLS uses rustls with the *ring* provider, installed as the process default
    /// unless another provider already is.
    pub fn new(base_url: &str, api_key: &str) -> Self {
        let config = OpenAIConfig::new()
            .with_api_base(base_url.trim_end_matches('/'))
            .with_api_key(api_key);
        Self::from_config(config)
    }

    /// A client from an async-openai config, for settings [`ChatClient::new`] does not
    /// cover (extra headers such as OpenRouter's `HTTP-Referer`, organisation, project).
    /// The TLS provider is installed as in [`ChatClient::new`].
    pub fn from_config(config: OpenAIConfig) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        ChatClient {
            inner: Client::with_config(config),
            retries: DEFAULT_RETRIES,
            first_pause: DEFAULT_FIRST_PAUSE,
            relaxed: Arc::default(),
        }
    }

    /// Whether the endpoint refused the tools' schemas and this client (and every clone
    /// of it) now sends them relaxed: without [`crate::relax::RELAXED_KEYWORDS`].
    pub fn relaxes_schemas(&self) -> bool {
        self.relaxed.load(Ordering::Relaxed)
    }

    /// How often a transient failure (429, 502, 503, 504) is retried, and the pause before the first retry (each later pause
    /// doubles, up to 16 s). `with_retries(0, _)` reports the first failure as it is.
    ///
    /// ```
    /// use std::time::Duration;
    /// let client = toolscout_agent::ChatClient::new("http://127.0.0.1:8080/v1", "")
    ///     .with_retries(2, Duration::from_millis(250));
    /// # let _ = client;
    /// ```
    #[must_use]
    pub fn with_retries(mut self, retries: u32, first_pause: Duration) -> Self {
        self.retries = retries;
        self.first_pause = first_pause;
        self
    }

    /// [`ChatClient::retrying`], and once more with the tools' schemas relaxed when the
    /// endpoint refused them on an unforced request (see [`ChatClient`]).
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
        if self.relaxes_schemas() {
            relax::relax_tools(&mut body);
        }
        let result = self
            .retrying(body.clone(), stream, step, &mut on_text)
            .await;
        match result {
            Err(e)
                if relax::rejects_schemas(&e)
                    && !relax::forced(&body)
                    && relax::relax_tools(&mut body) =>
            {
                tracing::warn!(error = %e, "the endpoint refused the tools' schemas; sending them without {:?} from now on", relax::RELAXED_KEYWORDS);
                self.relaxed.store(true, Ordering::Relaxed);
                self.retrying(body, stream, step, &mut on_text).await
            }
            other => other,
        }
    }

    /// [`ChatClient::attempt`], again after a pause while the failure is transient and
    /// nothing was shown yet.
    async fn retrying<F>(
        &self,
        body: serde_json::Map<String, Value>,
        stream: bool,
        step: u32,
        mut on_text: F,
    ) -> Result<Completion>
    where
        F: FnMut(&str) + Send,
    {
        let mut pause = self.first_pause;
        let mut attempt = 0;
        loop {
            let mut shown = false;
            let result = self
                .attempt(body.clone(), stream, step, |t| {
                    shown = true;
                    on_text(t);
                })
                .await;
            match result {
                Err(e) if attempt < self.retries && !shown && transient(&e) => {
                    tracing::warn!(attempt, error = %e, "the endpoint failed for now; retrying in {pause:?}");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(MAX_PAUSE);
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    /// Sends one request (`stream` and `stream_options` are set here) and assembles
    /// the answer; `on_text` sees each piece of text as it streams.
    async fn attempt<F>(
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

/// Whether a failure may pass if the same request is sent again: the endpoint is busy,
/// starting, or behind a proxy that timed out.
fn transient(e: &crate::Error) -> bool {
    matches!(e, crate::Error::Endpoint { status, .. } if matches!(status, 429 | 502 | 503 | 504))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_and_starting_endpoints_are_transient_rejections_are_not() {
        let endpoint = |status| crate::Error::Endpoint {
            status,
            message: "Loading model".to_owned(),
        };
        assert!(transient(&endpoint(503)));
        assert!(transient(&endpoint(429)));
        assert!(!transient(&endpoint(400)));
        assert!(!transient(&endpoint(500)));
        assert!(!transient(&crate::Error::Http(
            "error sending request for url (http://127.0.0.1:9/v1/chat/completions)".into()
        )));
        assert!(!transient(&crate::Error::Decode("bad json".to_owned())));
    }
}
