//! `toolscout enrich`: a model (here a scripted endpoint speaking the chat-completions
//! wire format) writes each tool's utterances; search then finds the tool by them.

use std::process::Command;

use serde_json::{Value, json};

use crate::Env;
use crate::scripted::{read_request, scripted};

fn reply(content: &str) -> String {
    json!({
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": content}}]
    })
    .to_string()
}

fn enrich(
    env: &Env,
    url: &str,
    input: &std::path::Path,
    out: &std::path::Path,
) -> std::process::Output {
    enrich_with(env, url, input, out, &[])
}

fn enrich_with(
    env: &Env,
    url: &str,
    input: &std::path::Path,
    out: &std::path::Path,
    extra: &[&str],
) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolscout"))
        .env("TOOLSCOUT_HOME", env.path().join("catalog"))
        .args([
            "enrich",
            "--model",
            "m",
            "--api-key",
            "none",
            "--base-url",
            url,
        ])
        .args(extra)
        .arg("--tools")
        .arg(input)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn enrich_adds_utterances_resumes_and_search_finds_tools_by_them() {
    let env = Env::new();
    let input = env.path().join("tools.jsonl");
    let out = env.path().join("enriched.jsonl");
    let tools = [
        json!({"name": "tide_times", "description": "Tide tables for a harbour.",
               "parameters": {"type": "object", "properties": {"harbour": {"type": "string"}}},
               "source": "test", "meta": {"kept": true}}),
        json!({"name": "own_words", "description": "Already asked.",
               "utterances": ["a request of its own"]}),
    ];
    let text = format!(
        "{}\n{{ not json\n{}\n{}\n",
        tools[0],
        tools[1],
        // Not `clock`: that name is the built-in tool's, which an import refuses.
        json!({"name": "world_clock", "description": "The current time."})
    );
    std::fs::write(&input, text).unwrap();
    let (url, server) = scripted(vec![
        reply(
            "Here are five:\n1. \"Can I go sailing at noon?\"\n2. When is high water in Brest?\n- ok",
        ),
        reply("What time is it in Tokyo?"),
    ]);
    let run = enrich(&env, &url, &input, &out);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains("jsonl line 2"),
        "the bad line is named: {stderr}"
    );
    assert!(stderr.contains("2 tools given utterances, 0 already there, 1 written as they were, 1 bad line(s) left out"), "{stderr}");
    let asked = server.join().unwrap();
    // One request per tool without utterances, naming the tool and its parameters.
    assert_eq!(asked.len(), 2);
    let prompt = asked[0]["messages"][0]["content"].as_str().unwrap();
    assert!(
        prompt.contains("name: tide_times") && prompt.contains("parameters: harbour"),
        "{prompt}"
    );
    assert_eq!(asked[0]["model"], "m");

    let written = lines(&out);
    assert_eq!(written.len(), 3);
    assert_eq!(
        written[0]["utterances"],
        json!(["Can I go sailing at noon?", "When is high water in Brest?"])
    );
    // Everything else on the line is kept as it was.
    assert_eq!(written[0]["meta"], json!({"kept": true}));
    assert_eq!(written[0]["source"], "test");
    assert_eq!(written[1], tools[1]);
    assert_eq!(
        written[2]["utterances"],
        json!(["What time is it in Tokyo?"])
    );

    // A run killed mid-line is resumed: the cut line goes, nothing is asked again.
    let mut cut = std::fs::read_to_string(&out).unwrap();
    let whole = cut.clone();
    cut.push_str("{\"name\": \"half");
    std::fs::write(&out, cut).unwrap();
    let (url, server) = scripted(vec![]);
    let run = enrich(&env, &url, &input, &out);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(server.join().unwrap().is_empty());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), whole);

    // Imported, the tools are found by their users' words (words only here: hermetic).
    let imported = env.check(&["import", "jsonl", out.to_str().unwrap()]);
    assert!(imported.starts_with("imported 3 tool(s)"), "{imported}");
    let found = env.check(&["search", "go sailing"]);
    assert!(found.starts_with("tide_times"), "{found}");
}

#[test]
fn enrich_refuses_to_overwrite_its_input_or_a_file_that_is_not_tools() {
    let env = Env::new();
    let input = env.path().join("tools.jsonl");
    std::fs::write(
        &input,
        json!({"name": "clock", "description": "Time."}).to_string(),
    )
    .unwrap();
    let run = enrich(&env, "http://127.0.0.1:9/v1", &input, &input);
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("--out must be another file"));
    let other = env.path().join("notes.txt");
    std::fs::write(&other, "shopping list\n").unwrap();
    let run = enrich(&env, "http://127.0.0.1:9/v1", &input, &other);
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("notes.txt") && stderr.contains("is not a tool"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        "shopping list\n",
        "left alone"
    );
}

/// A chat-completions server that holds every request until `width` of them are open at
/// once (or `patience` passes), then answers each with a request naming the tool its
/// prompt names. Returns the base URL and, per round, how many requests were open.
fn answers_in_rounds(
    width: usize,
    rounds: usize,
    patience: std::time::Duration,
) -> (String, std::thread::JoinHandle<Vec<usize>>) {
    use std::io::Write as _;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    let handle = std::thread::spawn(move || {
        let mut open_per_round = Vec::new();
        for _ in 0..rounds {
            let deadline = std::time::Instant::now() + patience;
            let mut open = Vec::new();
            while open.len() < width && std::time::Instant::now() < deadline {
                match listener.accept() {
                    Ok((stream, _)) => {
                        stream.set_nonblocking(false).unwrap();
                        let body = read_request(&stream);
                        let prompt = body["messages"][0]["content"].as_str().unwrap().to_owned();
                        let name = prompt
                            .lines()
                            .find_map(|l| l.strip_prefix("name: "))
                            .unwrap()
                            .to_owned();
                        open.push((stream, name));
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(5)),
                }
            }
            open_per_round.push(open.len());
            // Answered last first: the order of the answers is not the order of the lines.
            for (mut stream, name) in open.into_iter().rev() {
                let body = reply(&format!("I need {name} now"));
                write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .unwrap();
            }
        }
        open_per_round
    });
    (url, handle)
}

#[test]
fn enrich_keeps_several_requests_in_flight_and_writes_lines_in_order() {
    let env = Env::new();
    let input = env.path().join("tools.jsonl");
    let out = env.path().join("enriched.jsonl");
    let names: Vec<String> = (0..6).map(|i| format!("tool_{i}")).collect();
    let text: String = names
        .iter()
        .map(|n| {
            format!(
                "{}\n",
                json!({"name": n, "description": format!("Does {n}.")})
            )
        })
        .collect();
    std::fs::write(&input, text).unwrap();
    // Two rounds of three: the server answers only when three requests are open at once.
    let (url, server) = answers_in_rounds(3, 2, std::time::Duration::from_secs(20));
    let run = enrich_with(&env, &url, &input, &out, &["--concurrency", "3"]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(
        server.join().unwrap(),
        [3, 3],
        "three requests in flight per round"
    );
    let written = lines(&out);
    let got: Vec<(&str, &Value)> = written
        .iter()
        .map(|v| (v["name"].as_str().unwrap(), &v["utterances"]))
        .collect();
    let want: Vec<(&str, Value)> = names
        .iter()
        .map(|n| (n.as_str(), json!([format!("I need {n} now")])))
        .collect();
    assert_eq!(got.len(), want.len());
    for ((name, utterances), (want_name, want_utterances)) in got.iter().zip(&want) {
        assert_eq!(name, want_name, "lines in the input's order");
        assert_eq!(*utterances, want_utterances, "each tool its own answer");
    }

    // Out of range: refused before anything is asked.
    let run = Command::new(env!("CARGO_BIN_EXE_toolscout"))
        .args(["enrich", "--model", "m", "--concurrency", "0", "--tools"])
        .arg(&input)
        .arg("--out")
        .arg(env.path().join("other.jsonl"))
        .output()
        .unwrap();
    assert!(!run.status.success());
    assert!(
        String::from_utf8_lossy(&run.stderr).contains("--concurrency"),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}
