//! Endpoints that cannot take the tools' schemas: llama.cpp's two 400s, each answered
//! by a retry that succeeds, and what the endpoint saw request by request.

use std::sync::Arc;

use serde_json::{Value, json};
use toolscout_agent::{Agent, ChatClient, Policy, RunOptions, StaticHost, StopReason, ToolChoice};
use toolscout_spec::ToolSpec;

use crate::server::{Reply, Server, call, text};
use crate::{assert_paired, config};

/// llama.cpp's answer when the grammar built for a forced request does not parse.
fn grammar_failed() -> Reply {
    Reply::Body(
        400,
        json!({"error": {"code": 400, "message": "Failed to parse grammar", "type": "invalid_request_error"}}),
    )
}

/// llama.cpp's answer to a tool schema with a `pattern` it cannot convert.
fn pattern_failed() -> Reply {
    Reply::Body(
        400,
        json!({"error": {"code": 400, "message": "JSON schema conversion failed: Pattern must start with '^' and end with '$'", "type": "invalid_request_error"}}),
    )
}

/// A tool whose `url` has a `pattern` and a `format`, as the built-in `http_get`'s.
fn fetch_page() -> ToolSpec {
    ToolSpec::builder("fetch_page", "Fetch a web page by its URL")
        .parameters(json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "format": "uri", "pattern": "^https?://", "description": "The page's address"},
                "max_bytes": {"type": "integer", "minimum": 1}
            },
            "required": ["url"]
        }))
        .build()
        .unwrap()
}

/// The test host with [`fetch_page`] beside its weather tools.
fn host() -> StaticHost {
    crate::host().tool(fetch_page(), |args: Value| async move {
        Ok(json!({"url": args["url"], "text": "<h1>Hello</h1>"}))
    })
}

/// The retrieve policy with one tool retrieved and a call required after activation.
fn forced_agent(client: &ChatClient, stream: bool) -> Agent {
    Agent::new(
        config(Policy::Retrieve, stream)
            .retrieve_top_k(1)
            .tool_choice(ToolChoice::RequiredAfterActivation)
            .build()
            .unwrap(),
        client.clone(),
        Arc::new(host()),
    )
}

/// Each request as the endpoint saw it: `tool_choice`, the tools array by name, and
/// the schema of `fetch_page`'s `url` when it was in the array.
fn seen(server: &Server) -> String {
    let mut out = String::new();
    for (i, request) in server.requests().iter().enumerate() {
        let choice = request["tool_choice"].as_str().unwrap_or("auto");
        let tools = request["tools"].as_array().cloned().unwrap_or_default();
        let names: Vec<&str> = tools
            .iter()
            .filter_map(|t| t["function"]["name"].as_str())
            .collect();
        out.push_str(&format!(
            "request {}: tool_choice={choice} tools=[{}]\n",
            i + 1,
            names.join(", ")
        ));
        if let Some(fetch) = tools.iter().find(|t| t["function"]["name"] == "fetch_page") {
            let parameters = &fetch["function"]["parameters"]["properties"];
            out.push_str(&format!("  url: {}\n", parameters["url"]));
            out.push_str(&format!("  max_bytes: {}\n", parameters["max_bytes"]));
        }
    }
    out
}

/// "Failed to parse grammar" to a forced request: the same request unforced succeeds,
/// and the run goes on without forcing. The schemas were not to blame, so they are not
/// relaxed.
#[tokio::test]
async fn llama_cpp_failed_to_parse_grammar_is_answered_by_the_request_unforced() {
    for stream in [false, true] {
        let server = Server::start(vec![
            grammar_failed(),
            call("c1", "get_weather", r#"{"city":"Oslo"}"#),
            text("Sunny, 21 °C."),
        ])
        .await;
        let client = ChatClient::new(&server.base_url, "k");
        let report = forced_agent(&client, stream)
            .run("What's the weather in Oslo?", RunOptions::default())
            .await;
        assert_eq!(report.stop, StopReason::Answer, "stream {stream}");
        assert_eq!(report.answer.as_deref(), Some("Sunny, 21 °C."));
        assert_paired(&report.messages);
        assert!(!client.relaxes_schemas());
        insta::allow_duplicates! {
            insta::assert_snapshot!(seen(&server), @r"
            request 1: tool_choice=required tools=[answer, get_weather]
            request 2: tool_choice=auto tools=[discover_search, discover_describe, answer, get_weather]
            request 3: tool_choice=auto tools=[]
            ");
        }
    }
}

/// "JSON schema conversion failed: Pattern must start with '^' and end with '$'": the
/// forced request is sent unforced, refused again for the same schema, then sent with
/// the schemas relaxed, which succeeds. The tool still checks the call against its
/// full schema: a URL the pattern refuses goes back to the model as invalid. A later
/// run over the same client sends relaxed schemas from its first request.
#[tokio::test]
async fn llama_cpp_pattern_refusal_is_answered_by_relaxed_schemas_remembered_for_the_endpoint() {
    for stream in [false, true] {
        let server = Server::start(vec![
            pattern_failed(),
            pattern_failed(),
            call("c1", "fetch_page", r#"{"url":"example.com"}"#),
            call("c2", "fetch_page", r#"{"url":"https://example.com"}"#),
            text("The page says Hello."),
            // The next run, over the same client.
            call("c3", "fetch_page", r#"{"url":"https://example.org"}"#),
            text("That page says Hello too."),
        ])
        .await;
        let client = ChatClient::new(&server.base_url, "k");
        let agent = forced_agent(&client, stream);
        let report = agent
            .run(
                "Fetch the web page https://example.com",
                RunOptions::default(),
            )
            .await;
        assert_eq!(report.stop, StopReason::Answer, "stream {stream}");
        assert_eq!(report.answer.as_deref(), Some("The page says Hello."));
        assert_paired(&report.messages);
        assert!(client.relaxes_schemas());
        // The first call broke the pattern the endpoint never saw: refused, with usage.
        let first = report
            .messages
            .iter()
            .find_map(|m| match m {
                toolscout_agent::Message::Tool {
                    tool_call_id,
                    content,
                } if tool_call_id == "c1" => Some(content.clone()),
                _ => None,
            })
            .unwrap();
        assert!(first.contains("invalid_arguments"), "{first}");
        assert!(first.contains("^https?://"), "{first}");

        let again = agent
            .run(
                "Fetch the web page https://example.org",
                RunOptions::default(),
            )
            .await;
        assert_eq!(again.stop, StopReason::Answer, "stream {stream}");
        insta::allow_duplicates! {
            insta::assert_snapshot!(seen(&server), @r#"
            request 1: tool_choice=required tools=[answer, fetch_page]
              url: {"type":"string","format":"uri","pattern":"^https?://","description":"The page's address"}
              max_bytes: {"type":"integer","minimum":1}
            request 2: tool_choice=auto tools=[discover_search, discover_describe, answer, fetch_page]
              url: {"type":"string","format":"uri","pattern":"^https?://","description":"The page's address"}
              max_bytes: {"type":"integer","minimum":1}
            request 3: tool_choice=auto tools=[discover_search, discover_describe, answer, fetch_page]
              url: {"type":"string","description":"The page's address"}
              max_bytes: {"type":"integer"}
            request 4: tool_choice=auto tools=[discover_search, discover_describe, answer, fetch_page]
              url: {"type":"string","description":"The page's address"}
              max_bytes: {"type":"integer"}
            request 5: tool_choice=auto tools=[]
            request 6: tool_choice=required tools=[answer, fetch_page]
              url: {"type":"string","description":"The page's address"}
              max_bytes: {"type":"integer"}
            request 7: tool_choice=auto tools=[]
            "#);
        }
    }
}
