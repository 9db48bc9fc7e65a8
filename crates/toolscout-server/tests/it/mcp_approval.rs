//! Approvals over MCP: a client that declared the elicitation capability is asked (the
//! tool, its arguments, yes/no) before a tool that requires approval runs; rmcp's own
//! client over streamable HTTP on a real loopback socket, calling the built-in
//! `write_file`.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationCapability, Implementation,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{Value, json};

use crate::fixture;
use crate::socket::spawn;

/// A client whose user answers every approval with `answer`; `None` declares no
/// elicitation capability at all. Keeps the questions it was asked.
#[derive(Clone)]
pub(crate) struct User {
    answer: Option<ElicitationAction>,
    asked: Arc<Mutex<Vec<(String, Value)>>>,
}

impl ClientHandler for User {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.answer.is_some() {
            capabilities.elicitation = Some(ElicitationCapability::default());
        }
        ClientConfig::new(capabilities, Implementation::new("approval-test", "1"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        self.asked
            .lock()
            .unwrap()
            .push((message, serde_json::to_value(&requested_schema).unwrap()));
        Ok(match self.answer.clone().unwrap() {
            ElicitationAction::Accept => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({"approve": true}))
            }
            other => ElicitResult::new(other),
        })
    }
}

async fn connect(
    url: &str,
    answer: Option<ElicitationAction>,
) -> (
    RunningService<RoleClient, User>,
    Arc<Mutex<Vec<(String, Value)>>>,
) {
    connect_with(url, answer, None).await
}

/// [`connect`] with `Authorization: Bearer <token>`, when given.
pub(crate) async fn connect_with(
    url: &str,
    answer: Option<ElicitationAction>,
    token: Option<&str>,
) -> (
    RunningService<RoleClient, User>,
    Arc<Mutex<Vec<(String, Value)>>>,
) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let user = User {
        answer,
        asked: asked.clone(),
    };
    let mut config = StreamableHttpClientTransportConfig::with_uri(format!("{url}/mcp"));
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    (user.serve(transport).await.unwrap(), asked)
}

pub(crate) async fn call(
    client: &RunningService<RoleClient, User>,
    name: &str,
    args: Value,
) -> CallToolResult {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = args.as_object().cloned();
    client.call_tool(params).await.unwrap()
}

pub(crate) fn write_args(file: &str) -> Value {
    json!({"file_path": file, "content": "approved\n"})
}

#[tokio::test]
async fn an_eliciting_client_that_accepts_runs_the_call() {
    let f = fixture();
    let url = spawn(f.state.clone()).await;
    let (client, asked) = connect(&url, Some(ElicitationAction::Accept)).await;
    let result = call(
        &client,
        "call_tool",
        json!({"name": "write_file", "arguments": write_args("yes.txt")}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let written = std::fs::read_to_string(f._workspace.path().join("yes.txt")).unwrap();
    assert_eq!(written, "approved\n");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let (message, schema) = &asked[0];
    assert!(message.contains("write_file"), "{message}");
    assert!(message.contains("yes.txt"), "{message}");
    assert_eq!(
        schema["properties"]["approve"]["type"], "boolean",
        "{schema}"
    );
    assert_eq!(schema["required"], json!(["approve"]), "{schema}");
    // A tool that needs no approval is not asked about.
    let read = call(&client, "read_file", json!({"file_path": "hello.txt"})).await;
    assert_ne!(read.is_error, Some(true), "{read:?}");
    assert_eq!(asked.len(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_eliciting_client_that_declines_or_cancels_is_refused_and_nothing_is_written() {
    let f = fixture();
    let url = spawn(f.state.clone()).await;
    for answer in [ElicitationAction::Decline, ElicitationAction::Cancel] {
        let (client, asked) = connect(&url, Some(answer.clone())).await;
        let result = call(&client, "write_file", write_args("no.txt")).await;
        assert_eq!(result.is_error, Some(true), "{answer:?}: {result:?}");
        let error = &result.structured_content.as_ref().unwrap()["error"];
        assert_eq!(error["kind"], "approval_refused", "{error}");
        assert_eq!(asked.lock().unwrap().len(), 1, "{answer:?}");
        assert!(!f._workspace.path().join("no.txt").exists(), "{answer:?}");
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_client_without_elicitation_gets_the_refusal_and_is_not_asked() {
    let f = fixture();
    let url = spawn(f.state.clone()).await;
    let (client, asked) = connect(&url, None).await;
    let result = call(
        &client,
        "call_tool",
        json!({"name": "write_file", "arguments": write_args("no.txt")}),
    )
    .await;
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let error = &result.structured_content.as_ref().unwrap()["error"];
    assert_eq!(error["kind"], "approval_refused", "{error}");
    assert!(asked.lock().unwrap().is_empty());
    assert!(!f._workspace.path().join("no.txt").exists());
    client.cancel().await.unwrap();
}
