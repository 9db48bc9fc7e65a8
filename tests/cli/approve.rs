//! Calls of tools that require approval (`write_file`), through every surface: refused
//! with a message that says how to allow them, run once approved.

use crate::Env;
use crate::serve::{http, serve};

#[test]
fn call_needs_yes_or_approve_when_nobody_can_be_asked() {
    let env = Env::new();
    let refused = env.all(&[
        "call",
        "write_file",
        "--file_path",
        "a.txt",
        "--content",
        "hi",
    ]);
    assert!(refused.starts_with("exit 1"), "{refused}");
    assert!(refused.contains("approval_refused"), "{refused}");
    assert!(refused.contains("--approve write_file"), "{refused}");
    assert!(!env.workspace().join("a.txt").exists());

    let yes = env.all(&[
        "call",
        "write_file",
        "--file_path",
        "a.txt",
        "--content",
        "hi",
        "--yes",
    ]);
    assert!(yes.starts_with("exit 0"), "{yes}");
    assert_eq!(
        std::fs::read_to_string(env.workspace().join("a.txt")).unwrap(),
        "hi"
    );

    let pre = env.all(&[
        "--approve",
        "write_file",
        "call",
        "write_file",
        "--file_path",
        "b.txt",
        "--content",
        "ho",
    ]);
    assert!(pre.starts_with("exit 0"), "{pre}");
    assert_eq!(
        std::fs::read_to_string(env.workspace().join("b.txt")).unwrap(),
        "ho"
    );

    // Approving one tool approves only that one.
    let other = env.all(&[
        "--approve",
        "read_file",
        "call",
        "write_file",
        "--file_path",
        "c.txt",
        "--content",
        "no",
    ]);
    assert!(other.contains("approval_refused"), "{other}");
}

fn rpc_call(approved: Option<bool>, file: &str) -> String {
    let mut params = serde_json::json!({
        "name": "write_file",
        "arguments": {"file_path": file, "content": "x"}
    });
    if let Some(a) = approved {
        params["approved"] = serde_json::json!(a);
    }
    serde_json::json!({"jsonrpc": "2.0", "method": "tools/call", "params": params, "id": 1})
        .to_string()
}

#[test]
fn serve_takes_approvals_from_a_client_with_the_token() {
    let env = Env::new();
    let (_server, addr, _) = serve(&env, &["--token", "s3cret"]);
    let auth = ["Authorization: Bearer s3cret"];
    let (status, body) = http(&addr, "POST", "/rpc", &auth, &rpc_call(None, "a.txt"));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("approval_refused"), "{body}");
    assert!(body.contains(r#"\"approved\": true"#), "says how: {body}");
    assert!(!env.workspace().join("a.txt").exists());

    let (status, body) = http(&addr, "POST", "/rpc", &auth, &rpc_call(Some(true), "a.txt"));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""ok":true"#), "{body}");
    assert!(env.workspace().join("a.txt").exists());

    let (status, body) = http(&addr, "POST", "/rpc", &[], &rpc_call(Some(true), "b.txt"));
    assert_eq!(status, 401, "{body}");
    assert!(!env.workspace().join("b.txt").exists());
}

#[test]
fn serve_without_a_token_takes_no_client_approval_but_approve_flags() {
    let env = Env::new();
    let (_server, addr, _) = serve(&env, &["--no-auth"]);
    let (status, body) = http(&addr, "POST", "/rpc", &[], &rpc_call(Some(true), "a.txt"));
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("only a client with the server's token"),
        "{body}"
    );
    assert!(!env.workspace().join("a.txt").exists());
    drop(_server);

    let env = Env::new();
    let (_server, addr, _) = serve(&env, &["--no-auth", "--approve", "write_file"]);
    let (status, body) = http(&addr, "POST", "/rpc", &[], &rpc_call(None, "a.txt"));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""ok":true"#), "{body}");
    assert!(env.workspace().join("a.txt").exists());
}
