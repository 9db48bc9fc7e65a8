//! The MCP client's failures are errors that name the server (its success is tested end
//! to end by the CLI's `import mcp` test, against a real MCP server).

use std::sync::Arc;

use serde_json::json;
use toolscout_invoke::mcp_client::McpClient;
use toolscout_invoke::{ErrorKind, Implementation, InvokableTool, Invoker, NativeImpl};
use toolscout_spec::ToolSpec;

#[test]
fn a_client_needs_a_command() {
    let err = McpClient::new(Vec::<String>::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "MCP server ``: no command to start the MCP server with"
    );
}

#[tokio::test]
async fn a_server_that_cannot_start_or_does_not_speak_mcp_is_an_error_naming_it() {
    let missing = McpClient::new(["/nonexistent/mcp-server", "--stdio"]).unwrap();
    let err = missing.list_tools().await.unwrap_err().to_string();
    assert!(
        err.starts_with("MCP server `/nonexistent/mcp-server --stdio`: cannot start it: "),
        "{err}"
    );
    // `true` starts and exits at once, without a word of MCP.
    let mute = McpClient::new(["true"]).unwrap();
    let err = mute.list_tools().await.unwrap_err().to_string();
    assert!(
        err.starts_with("MCP server `true`: cannot connect to it: "),
        "{err}"
    );
}

#[tokio::test]
async fn what_a_server_writes_to_stderr_is_kept_and_shown_only_when_it_fails() {
    // A server that says why it stops, then stops: its words are in the error, not on
    // the caller's stderr.
    let failing = McpClient::new(["sh", "-c", "echo 'no config file' >&2; exit 3"]).unwrap();
    let err = failing.list_tools().await.unwrap_err().to_string();
    assert!(err.starts_with("MCP server `sh -c"), "{err}");
    assert!(err.ends_with("; it said: no config file"), "{err}");
}

#[tokio::test]
async fn a_proxy_call_to_a_server_that_cannot_start_is_a_tool_failed_outcome() {
    let client = Arc::new(McpClient::new(["/nonexistent/mcp-server"]).unwrap());
    let mut invoker = Invoker::default();
    client
        .register(&mut invoker, [("mcp:x:echo", "echo")])
        .unwrap();
    // The catalog's tool, whose `impl` names the proxy's native function.
    let mut tool = InvokableTool::native(
        ToolSpec::builder("echo", "Echo a text")
            .parameters(json!({"type": "object"}))
            .build()
            .unwrap(),
    );
    tool.implementation = Implementation::Native(NativeImpl {
        func: "mcp:x:echo".to_owned(),
    });
    let outcome = invoker.invoke(&tool, json!({"text": "hi"})).await;
    let error = outcome.error().unwrap();
    assert_eq!(error.kind, ErrorKind::ToolFailed, "{}", error.message);
    assert!(
        error
            .message
            .starts_with("MCP server `/nonexistent/mcp-server`: cannot start it: "),
        "{}",
        error.message
    );
}
