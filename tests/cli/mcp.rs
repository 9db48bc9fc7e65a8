//! `toolscout import mcp`: the tools of another MCP server (here, another toolscout
//! serving MCP over stdio), with calls proxied to it.

use insta::assert_snapshot;

use crate::Env;

#[test]
fn mcp_server_tools_are_imported_and_proxied() {
    let env = Env::new();
    let remote = env.path().join("remote");
    let bin = env!("CARGO_BIN_EXE_toolscout");
    let out = env.check(&[
        "import",
        "mcp",
        "--bundle",
        "remote",
        "--",
        bin,
        "--catalog",
        remote.to_str().unwrap(),
        "serve",
        "--mcp",
        "stdio",
    ]);
    assert_snapshot!(out);
    assert_snapshot!(env.check(&["list", "--bundle", "remote"]));
    let call = env.all(&[
        "call",
        "call_tool",
        "--args",
        r#"{"name": "json_query", "arguments": {"value": {"a": [1, 2]}, "path": "$.a[1]"}}"#,
    ]);
    assert_snapshot!(call);
}

#[test]
fn imported_tools_named_like_the_catalogs_keep_apart_and_answer_as_the_direct_call() {
    let env = Env::new();
    std::fs::write(env.workspace().join("hello.txt"), "hello\n").unwrap();
    let remote = env.path().join("remote");
    let workspace = env.workspace();
    let bin = env!("CARGO_BIN_EXE_toolscout");
    // Another toolscout exposing every tool: its names are the built-ins' names.
    let out = env.all(&[
        "import",
        "mcp",
        "--bundle",
        "fs",
        "--",
        bin,
        "--catalog",
        remote.to_str().unwrap(),
        "--workspace",
        workspace.to_str().unwrap(),
        "serve",
        "--mcp",
        "stdio",
        "--expose",
        "all",
    ]);
    assert_snapshot!(out);
    // The built-in keeps its name; the server's tool is under the bundle's prefix.
    assert_snapshot!(env.check(&["list", "--bundle", "fs"]));
    let args = r#"{"file_path": "hello.txt"}"#;
    let direct = env.all(&["call", "read_file", "--args", args]);
    assert!(direct.contains(r#""value": "hello\n""#), "{direct}");
    // One shape, and nothing from the server's start on stderr.
    assert_eq!(env.all(&["call", "fs_read_file", "--args", args]), direct);
}

/// `toolscout serve --mcp stdio EXTRA` on `env`'s catalog and workspace, as an MCP
/// client's transport (its stderr dropped).
pub(crate) fn stdio_server(env: &Env, extra: &[&str]) -> rmcp::transport::TokioChildProcess {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolscout"));
    cmd.env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model")
        .env_remove("XDG_DATA_HOME")
        .arg("--catalog")
        .arg(env.path().join("catalog"))
        .arg("--workspace")
        .arg(env.workspace())
        .args(["serve", "--mcp", "stdio"])
        .args(extra);
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    transport
}

/// Counts the `notifications/tools/list_changed` a client receives.
#[derive(Clone)]
struct Watcher {
    changes: tokio::sync::watch::Sender<usize>,
}

impl rmcp::ClientHandler for Watcher {
    async fn on_tool_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<rmcp::service::RoleClient>,
    ) {
        self.changes.send_modify(|n| *n += 1);
    }
}

#[test]
fn an_mcp_stdio_session_activates_what_it_finds_and_describes() {
    use rmcp::ServiceExt as _;
    use rmcp::model::CallToolRequestParams;
    use serde_json::{Value, json};

    let env = Env::new();
    std::fs::write(env.workspace().join("hello.txt"), "hello\n").unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let transport = stdio_server(&env, &["--search-activations", "2"]);
        let (tx, mut changes) = tokio::sync::watch::channel(0);
        let client = Watcher { changes: tx }.serve(transport).await.unwrap();
        let names = || async {
            client
                .list_all_tools()
                .await
                .unwrap()
                .into_iter()
                .map(|t| t.name.to_string())
                .collect::<Vec<_>>()
        };
        let call = |name: &str, args: Value| {
            let mut params = CallToolRequestParams::new(name.to_owned());
            params.arguments = args.as_object().cloned();
            client.call_tool(params)
        };
        let mut wait = async |count: usize| {
            tokio::time::timeout(
                std::time::Duration::from_secs(20),
                changes.wait_for(|n| *n >= count),
            )
            .await
            .expect("a list_changed notification within 20 s")
            .unwrap();
        };
        assert_eq!(names().await, ["discover_tools", "call_tool"]);

        let found = call("discover_tools", json!({"query": "read a file"}))
            .await
            .unwrap();
        let hits: Vec<String> = found.structured_content.unwrap()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .take(2)
            .map(|h| h["name"].as_str().unwrap().to_owned())
            .collect();
        wait(1).await;
        let mut expected = vec!["discover_tools".to_owned(), "call_tool".to_owned()];
        expected.extend(hits.clone());
        assert_eq!(names().await, expected);
        assert!(hits.contains(&"read_file".to_owned()));

        call("discover_tools", json!({"tool": "json_query"}))
            .await
            .unwrap();
        wait(2).await;
        expected.push("json_query".to_owned());
        assert_eq!(names().await, expected);

        let read = call("read_file", json!({"file_path": "hello.txt"}))
            .await
            .unwrap();
        assert_eq!(read.is_error, Some(false));
        let called = call("json_query", json!({"value": [1, 2], "path": "$[1]"}))
            .await
            .unwrap();
        assert_eq!(called.structured_content.unwrap()["value"], json!([2]));
        client.cancel().await.unwrap();
    });
}

#[test]
fn an_activation_cap_beyond_128_is_refused() {
    let out = Env::new().check(&["serve", "--mcp", "stdio", "--activation-cap", "129"]);
    assert_snapshot!(out, @r"
    exit 2
    error: invalid value '129' for '--activation-cap <ACTIVATION_CAP>': 129 is not in 0..=128

    For more information, try '--help'.
    ");
}

/// A client whose user answers every approval with `answer`, counting the questions.
#[derive(Clone)]
struct Approving {
    answer: rmcp::model::ElicitationAction,
    asked: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl rmcp::ClientHandler for Approving {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        capabilities.elicitation = Some(rmcp::model::ElicitationCapability::default());
        rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("approving", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        _request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::service::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        use rmcp::model::{ElicitResult, ElicitationAction};
        self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(match self.answer {
            ElicitationAction::Accept => ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::json!({"approve": true})),
            ref other => ElicitResult::new(other.clone()),
        })
    }
}

/// `serve --mcp stdio` asks an eliciting client before `write_file`: a "yes" writes, a
/// "no" is the refusal that says how to allow it, and `--approve write_file` asks nobody.
#[test]
fn an_mcp_client_that_elicits_is_asked_to_approve_a_call() {
    use rmcp::ServiceExt as _;
    use rmcp::model::{CallToolRequestParams, ElicitationAction};
    use std::sync::atomic::{AtomicUsize, Ordering};

    let env = Env::new();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let cases = [
            (ElicitationAction::Decline, &[][..], "no.txt", 1, false),
            (ElicitationAction::Accept, &[][..], "yes.txt", 1, true),
            (
                ElicitationAction::Decline,
                &["--approve", "write_file"][..],
                "pre.txt",
                0,
                true,
            ),
        ];
        for (answer, extra, file, questions, written) in cases {
            let asked = std::sync::Arc::new(AtomicUsize::new(0));
            let user = Approving {
                answer: answer.clone(),
                asked: asked.clone(),
            };
            let client = user.serve(stdio_server(&env, extra)).await.unwrap();
            let mut params = CallToolRequestParams::new("call_tool");
            params.arguments = serde_json::json!({
                "name": "write_file",
                "arguments": {"file_path": file, "content": "x"}
            })
            .as_object()
            .cloned();
            let result = client.call_tool(params).await.unwrap();
            let case = format!("{answer:?} {extra:?}");
            assert_eq!(asked.load(Ordering::SeqCst), questions, "{case}");
            assert_eq!(
                env.workspace().join(file).exists(),
                written,
                "{case}: {result:?}"
            );
            if !written {
                let text = serde_json::to_string(&result.content).unwrap();
                assert!(text.contains("--approve write_file"), "{case}: {text}");
            }
            client.cancel().await.unwrap();
        }
    });
}
