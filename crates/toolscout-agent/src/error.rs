//! The crate's error type.
//!
//! Only failures of the run itself are errors: a rejected request, a broken stream, a
//! bad configuration. A failed tool call is not an error; it goes back to the model as a
//! tool result ([`crate::CallOutcome`]).

/// The cause an [`Error`] keeps ([`std::error::Error::source`]).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What went wrong talking to the endpoint or setting up a run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The endpoint answered with an error status (context too long, bad request,
    /// unknown model, rate limit…).
    #[error("the endpoint rejected the request ({status}): {message}")]
    Endpoint {
        /// HTTP status code.
        status: u16,
        /// The endpoint's error message.
        message: String,
    },
    /// The endpoint could not be reached, or the connection broke; the HTTP client's
    /// error is the source.
    #[error("HTTP error talking to the endpoint: {0}")]
    Http(#[source] BoxError),
    /// A streamed response broke off or was not valid server-sent events; the stream's
    /// error is the source.
    #[error("the response stream failed: {0}")]
    Stream(#[source] BoxError),
    /// A response was not the chat-completions JSON the loop expects.
    #[error("could not read the endpoint's response: {0}")]
    Decode(String),
    /// The response had no choices.
    #[error("the endpoint returned no choices")]
    NoChoices,
    /// A run stopped without an answer ([`crate::Agent::ask`]).
    #[error("agent '{agent}' stopped without an answer: {reason}")]
    Stopped {
        /// Agent name.
        agent: String,
        /// Why it stopped ([`crate::StopReason`], as text).
        reason: String,
    },
    /// An agent configuration is unusable.
    #[error("invalid agent configuration '{agent}': {reason}")]
    Config {
        /// Agent name.
        agent: String,
        /// What is wrong.
        reason: String,
    },
}

impl Error {
    /// The HTTP status, when the endpoint answered with one.
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Endpoint { status, .. } => Some(*status),
            _ => None,
        }
    }
}

impl From<async_openai::error::OpenAIError> for Error {
    fn from(e: async_openai::error::OpenAIError) -> Self {
        use async_openai::error::OpenAIError as E;
        match e {
            E::ApiError(r) => Error::Endpoint {
                status: r.status_code.as_u16(),
                message: r.api_error.to_string(),
            },
            E::Reqwest(e) => Error::Http(Box::new(e)),
            E::JSONDeserialize(e, content) => endpoint_error_body(&content)
                .unwrap_or_else(|| Error::Decode(format!("{e}: {}", truncate(&content, 500)))),
            E::StreamError(e) => Error::Stream(Box::new(e)),
            other => Error::Http(Box::new(other)),
        }
    }
}

/// An error body that async-openai does not read, because its `code` is a number:
/// llama.cpp and vLLM answer `{"error":{"code":400,"message":"the request exceeds the
/// available context size…"}}`.
fn endpoint_error_body(content: &str) -> Option<Error> {
    let body: serde_json::Value = serde_json::from_str(content).ok()?;
    let error = body.get("error")?;
    let status = error
        .get("code")
        .and_then(serde_json::Value::as_u64)
        .filter(|c| (400..600).contains(c))?;
    let message = error.get("message")?.as_str()?.to_owned();
    Some(Error::Endpoint {
        status: u16::try_from(status).ok()?,
        message,
    })
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_cpp_context_error_is_an_endpoint_error() {
        let body = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9030,"n_ctx":8192}}"#;
        let e = endpoint_error_body(body).unwrap();
        assert_eq!(e.status(), Some(400));
        assert_eq!(
            e.to_string(),
            "the endpoint rejected the request (400): the request exceeds the available context size, try increasing it"
        );
        assert!(endpoint_error_body(r#"{"choices":[]}"#).is_none());
        assert!(endpoint_error_body(r#"{"error":{"code":"bad","message":"x"}}"#).is_none());
    }

    /// A transport failure keeps its cause, for a caller that walks the chain.
    #[test]
    fn transport_errors_keep_their_source() {
        use std::error::Error as _;
        let e = Error::Http("connection refused".into());
        assert_eq!(
            e.to_string(),
            "HTTP error talking to the endpoint: connection refused"
        );
        assert_eq!(
            e.source().map(ToString::to_string).as_deref(),
            Some("connection refused")
        );
        let e = Error::Stream("stream ended early".into());
        assert!(e.source().is_some());
    }
}
