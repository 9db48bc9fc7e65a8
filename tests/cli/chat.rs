//! `toolscout chat` against a scripted OpenAI-compatible server on loopback.

use std::process::Command;

use serde_json::json;

use crate::Env;
pub(crate) use crate::scripted::{chunk, scripted, streamed_call};

/// Runs `chat --model m --base-url URL EXTRA` on `env`'s catalog, which must succeed;
/// returns what it printed, `stdout:` then `stderr:`.
fn chat_ok(env: &Env, url: &str, extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_toolscout"))
        // Hermetic: rank by words, whatever model this machine has fetched.
        .env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model")
        .env("TOOLSCOUT_HOME", env.path().join("catalog"))
        .env_remove("OPENAI_API_KEY")
        .args(["chat", "--model", "m", "--base-url", url])
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{stderr}");
    format!("stdout:\n{stdout}stderr:\n{stderr}")
}

#[test]
fn chat_finds_a_tool_then_streams_the_answer() {
    let env = Env::new();
    let discover = streamed_call("discover_tools", r#"{"query": "read a file"}"#);
    let answer = format!(
        "{}{}data: [DONE]\n\n",
        chunk(json!({"role": "assistant", "content": "Use "}), None),
        chunk(json!({"content": "read_file."}), Some("stop"))
    );
    let (url, server) = scripted(vec![discover, answer]);
    let said = chat_ok(&env, &url, &["--prompt", "How do I read notes.txt?"]);
    insta::assert_snapshot!(said);
    let requests = server.join().unwrap();
    let names = |request: &serde_json::Value| -> Vec<String> {
        request["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let tools = names(&requests[0]);
    // The retrieve policy: the first request requires a call (ranked by words alone,
    // retrieval has no confidence to doubt), so its array holds the answer tool and the
    // message's best tools, without the discover tool (no call_tool either). The
    // search's hits are activated and the next request is required too, with them.
    assert_eq!(tools[..2], ["answer", "read_file"], "{tools:?}");
    assert_eq!(requests[0]["tool_choice"], "required");
    let next = names(&requests[1]);
    assert_eq!(requests[1]["tool_choice"], "required");
    assert!(!next.iter().any(|t| t == "discover_tools"), "{next:?}");
    assert!(next.len() > tools.len(), "{tools:?} then {next:?}");
}

/// A failed call is shown with its kind and message, and a run that ends at
/// `--max-steps` without an answer exits non-zero, saying so.
#[test]
fn chat_shows_why_a_call_failed_and_fails_without_an_answer() {
    let env = Env::new();
    let call = json!({
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "time_tocken", "arguments": "{}"}
            }]
        }}]
    })
    .to_string();
    let (url, server) = scripted(vec![call]);
    let out = Command::new(env!("CARGO_BIN_EXE_toolscout"))
        .env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model")
        .env("TOOLSCOUT_HOME", env.path().join("catalog"))
        .env_remove("OPENAI_API_KEY")
        .args(["chat", "--model", "m", "--base-url", &url, "--no-stream"])
        .args(["--max-steps", "1", "--prompt", "What time is it?"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success(), "{stderr}");
    let failed = stderr
        .lines()
        .find(|l| l.starts_with("← time_tocken: failed: unknown_tool: "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(failed.contains("time_tocken"), "{failed}");
    assert!(
        stderr.contains("no answer after 1 model requests"),
        "{stderr}"
    );
    server.join().unwrap();
}

/// `chat` asks its approver before a tool that requires approval runs: with nobody at a
/// terminal the model is told how to allow it; `--approve TOOL` allows it.
#[test]
fn chat_runs_an_approved_tool_and_explains_a_refusal() {
    let call = json!({
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "call_tool", "arguments": "{\"name\": \"write_file\", \"arguments\": {\"file_path\": \"note.txt\", \"content\": \"hi\"}}"}
            }]
        }}]
    })
    .to_string();
    let done = json!({
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Done."}}]
    })
    .to_string();
    for approve in [false, true] {
        let env = Env::new();
        let (url, server) = scripted(vec![call.clone(), done.clone()]);
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolscout"));
        command
            .env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model")
            .env("TOOLSCOUT_HOME", env.path().join("catalog"))
            .env_remove("OPENAI_API_KEY")
            .arg("--workspace")
            .arg(env.workspace());
        if approve {
            command.args(["--approve", "write_file"]);
        }
        let out = command
            .args(["chat", "--model", "m", "--base-url", &url, "--no-stream"])
            .args(["--prompt", "Write hi to note.txt"])
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(out.status.success(), "{stderr}");
        let requests = server.join().unwrap();
        let result = requests[1]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|m| m["role"] == "tool")
            .unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned();
        let written = env.workspace().join("note.txt");
        if approve {
            assert!(result.contains(r#""ok":true"#), "{result}");
            assert_eq!(std::fs::read_to_string(written).unwrap(), "hi");
        } else {
            assert!(result.contains("approval_refused"), "{result}");
            assert!(result.contains("--approve write_file"), "{result}");
            assert!(!written.exists());
        }
    }
}

/// A whole completion (not streamed) that calls one tool.
fn tool_call(id: &str, name: &str, arguments: &str) -> String {
    json!({
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "tool_calls": [{
                "id": id, "type": "function",
                "function": {"name": name, "arguments": arguments}
            }]
        }}]
    })
    .to_string()
}

/// A whole completion that answers.
fn answer(text: &str) -> String {
    json!({
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": text
        }}]
    })
    .to_string()
}

/// The names of a request's tools array.
pub(crate) fn tool_names(request: &serde_json::Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The content of a request's last message (the result of the call before it).
pub(crate) fn last_message(request: &serde_json::Value) -> String {
    request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn chat_browses_its_agents_with_discover_agents_and_delegates() {
    let env = Env::new();
    let agents = env.path().join("agents.json");
    std::fs::write(
        &agents,
        json!([
            {"name": "notes_agent", "description": "Reads and summarises the user's notes.\nUse it for anything about notes.",
             "category": "files", "system_prompt": "You read notes.", "policy": "upfront", "tools": ["read_file"]},
            {"name": "web_agent", "description": "Searches the web.", "category": "web"}
        ])
        .to_string(),
    )
    .unwrap();
    let (url, server) = scripted(vec![
        tool_call("c1", "discover_agents", r#"{"category": "files"}"#),
        tool_call(
            "c2",
            "discover_agents",
            r#"{"agent": "notes_agent", "detail": "full"}"#,
        ),
        tool_call("c3", "notes_agent", r#"{"task": "Summarise notes.txt"}"#),
        answer("The notes are empty."),
        answer("Your notes are empty."),
    ]);
    let said = chat_ok(
        &env,
        &url,
        &[
            "--no-stream",
            "--policy",
            "browse",
            "--agents",
            agents.to_str().unwrap(),
            "--prompt",
            "Summarise my notes",
        ],
    );
    insta::assert_snapshot!(said);
    let requests = server.join().unwrap();
    let first = tool_names(&requests[0]);
    assert!(first.contains(&"discover_agents".to_owned()), "{first:?}");
    assert!(!first.iter().any(|t| t.ends_with("_agent")), "{first:?}");
    // discover_agents answered from the agents file: the category filter, then level 3.
    insta::assert_snapshot!("discover_agents_category", last_message(&requests[1]));
    insta::assert_snapshot!("discover_agents_full", last_message(&requests[2]));
    // Described, the agent is a tool of the next request; called, it runs its own loop
    // with its own prompt and tools.
    assert_eq!(
        tool_names(&requests[2]).last().map(String::as_str),
        Some("notes_agent")
    );
    // Upfront, the specialist gets its one tool, and the agents it may delegate to.
    assert_eq!(
        tool_names(&requests[3]),
        ["read_file", "notes_agent", "web_agent"]
    );
    assert_eq!(requests[3]["messages"][1]["content"], "Summarise notes.txt");
}

#[test]
fn chat_refuses_a_bad_agents_file_clearly() {
    let env = Env::new();
    let agents = env.path().join("agents.json");
    let chat = |file: &str| {
        std::fs::write(&agents, file).unwrap();
        let out = env.all(&[
            "chat",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--agents",
            agents.to_str().unwrap(),
            "--prompt",
            "hi",
        ]);
        out.replace(agents.to_str().unwrap(), "[agents.json]")
    };
    insta::assert_snapshot!(chat(r#"[{"name": "bad name"}]"#));
    let out = chat(r#"[{"name": "a", "polcy": "browse"}]"#);
    assert!(out.contains("unknown field `polcy`"), "{out}");
}
