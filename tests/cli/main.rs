//! End-to-end tests of the `toolscout` binary, each on its own temporary catalog.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output};

use insta::assert_snapshot;

mod approve;
mod bounds;
mod chat;
mod enrich;
mod eval;
mod index;
mod lint;
mod manage;
mod mcp;
mod measure;
mod openapi;
mod owners;
mod recipes;
mod remote;
#[path = "../scripted/mod.rs"]
mod scripted;
mod secrets;
mod serve;
mod spec_only;
#[cfg(feature = "postgres")]
mod store;
mod tenants;

/// A temporary catalog and workspace; `run` uses both.
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        Env { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn workspace(&self) -> std::path::PathBuf {
        self.path().join("ws")
    }

    /// `toolscout ARGS` on this catalog and workspace, to run.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolscout"));
        // Hermetic: rank by words, whatever model this machine has fetched, and the
        // catalog of this directory, whatever database the environment names.
        cmd.env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model")
            .env("TOOLSCOUT_HOME", self.path().join("catalog"))
            .env_remove("XDG_DATA_HOME")
            .env_remove("TOOLSCOUT_DATABASE_URL")
            .arg("--workspace")
            .arg(self.workspace())
            .args(args);
        cmd
    }

    /// Runs `toolscout ARGS` on this catalog and workspace.
    fn output(&self, args: &[&str]) -> Output {
        self.command(args)
            .output()
            .expect("the toolscout binary runs")
    }

    /// Stdout on success, `exit N` and stderr on failure (which must print nothing).
    fn check(&self, args: &[&str]) -> String {
        let out = self.output(args);
        let stdout = String::from_utf8(out.stdout).unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        if out.status.success() {
            stdout
        } else {
            assert!(
                stdout.is_empty(),
                "a failing command printed to stdout: {stdout}"
            );
            format!("exit {}\n{stderr}", out.status.code().unwrap_or(-1))
        }
    }

    /// `exit N`, then stdout and stderr, whatever the status.
    fn all(&self, args: &[&str]) -> String {
        let out = self.output(args);
        format!(
            "exit {}\n{}{}",
            out.status.code().unwrap_or(-1),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap()
        )
    }
}

/// The standard output of a command that must have succeeded; its standard error is
/// the message when it did not.
pub(crate) fn succeeded(out: Output) -> Vec<u8> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The built-in potion-base-8M table as a model2vec folder at `dir` (uncalibrated: a
/// folder's model has only the calibration its own `calibration.json` gives it).
pub(crate) fn potion_folder(dir: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    // The package's directory as cargo gives it to the running test (a test binary
    // reused from a shared build cache may have been compiled in another clone).
    let source = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(
            || env!("CARGO_MANIFEST_DIR").into(),
            std::path::PathBuf::from,
        )
        .join("crates/toolscout-embed/models/potion-base-8M-int8");
    for file in ["model.safetensors", "tokenizer.json"] {
        std::fs::copy(source.join(file), dir.join(file)).unwrap();
    }
    std::fs::write(
        dir.join("config.json"),
        r#"{"model_type": "model2vec", "hidden_dim": 256, "normalize": true}"#,
    )
    .unwrap();
    dir.to_path_buf()
}

fn check(args: &[&str]) -> String {
    Env::new().check(args)
}

#[test]
fn describe_level3() {
    assert_snapshot!(check(&["describe", "read_file", "--level", "3"]));
}

#[test]
fn describe_levels_as_json() {
    assert_snapshot!(check(&["describe", "clock", "--level", "1", "--json"]), @r#"
    {
      "name": "clock",
      "summary": "Current date and time, and time-zone conversion"
    }
    "#);
    let l2: serde_json::Value =
        serde_json::from_str(&check(&["--json", "describe", "read_file"])).unwrap();
    assert_eq!(
        l2["parameters"],
        serde_json::json!(["file_path", "offset", "limit"])
    );
}

#[test]
fn describe_parameter() {
    assert_snapshot!(check(&["describe", "read_file", "--parameter", "offset"]), @r"
    read_file.offset (integer, optional)
    Line to start reading from (1-indexed)
    Default: 1
    minimum: 1
    ");
}

#[test]
fn errors_are_clear_and_exit_non_zero() {
    let env = Env::new();
    assert_snapshot!(env.check(&["describe", "read_fil"]));
    assert_snapshot!(env.check(&["describe", "read_file", "-p", "ofset"]));
    assert_snapshot!(env.check(&["describe", "zzzz"]));
    let bad_level = env.check(&["describe", "read_file", "--level", "4"]);
    assert!(bad_level.starts_with("exit 2\n"), "{bad_level}");
    assert!(bad_level.contains("4 is not in 1..=3"), "{bad_level}");
}

#[test]
fn list_and_identity() {
    let env = Env::new();
    assert_snapshot!(env.check(&["list"]));
    assert_snapshot!(env.check(&["list", "--bundle", "files"]));
    // --limit keeps the first lines of the same listing, with or without --usage.
    let all = env.check(&["list"]);
    let two = env.check(&["list", "--limit", "2"]);
    let first_two: Vec<&str> = all.lines().take(2).collect();
    assert_eq!(two.lines().collect::<Vec<_>>(), first_two, "{two}");
    assert_eq!(
        env.check(&["list", "--usage", "--limit", "1"])
            .lines()
            .count(),
        1
    );
    let id: serde_json::Value = serde_json::from_str(&env.check(&["identity", "--json"])).unwrap();
    assert_eq!(id["tools_count"], 6);
    assert_eq!(id["protocol_version"], "1.0");
    let expected = toolscout_spec::identity::toolset_id(&toolscout_catalog::builtin::specs());
    assert_eq!(id["server_id"], expected.to_string());
}

#[test]
fn search_finds_builtin_tools() {
    assert_snapshot!(check(&["search", "read a file"]));
}

#[test]
fn without_a_fetched_model_search_ranks_by_meaning_with_the_built_in_one() {
    let env = Env::new();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_toolscout"))
            // No model named, none fetched: the built-in potion-base-8M ranks.
            .env_remove("TOOLSCOUT_MODEL_DIR")
            .env("HOME", env.path())
            .env("XDG_CACHE_HOME", env.path().join("cache"))
            .env("TOOLSCOUT_HOME", env.path().join("catalog"))
            .env_remove("XDG_DATA_HOME")
            .args(["--json", "search", "what is in this folder"])
            .args(args)
            .output()
            .unwrap();
        serde_json::from_slice::<serde_json::Value>(&succeeded(out)).unwrap()
    };
    // No built-in tool says "folder": words alone find nothing.
    let words = run(&["--words-only"]);
    assert_eq!(words["hits"], serde_json::json!([]), "{words}");
    let found = run(&[]);
    let first = &found["hits"][0];
    assert_eq!(first["field"], "meaning", "{found}");
    assert!(first["id"] == "search_files", "{found}");
    // Its closeness is on MiniLM's scale: related, and well short of a twin.
    let meaning = first["meaning"].as_f64().unwrap();
    assert!((0.3..0.8).contains(&meaning), "{found}");
    // The built-in model's vectors are cached under its name, beside the user's others.
    let vectors = env.path().join("cache/toolscout/vectors");
    let names: Vec<String> = std::fs::read_dir(&vectors)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().any(|n| n.starts_with("potion-base-8M-int8-")),
        "{names:?}"
    );
}

#[test]
fn a_fetched_model_is_mixed_with_the_built_in_one_unless_encoders_are_named() {
    let env = Env::new();
    // A model folder where a fetched one would be: the built-in table read from disk.
    let model = potion_folder(&env.path().join("my-model"));
    let tools = env.path().join("tools.jsonl");
    std::fs::write(
        &tools,
        [
            r#"{"name": "get_weather", "description": "Get the current weather in a city."}"#,
            r#"{"name": "send_email", "description": "Send an email to a recipient."}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let queries = env.path().join("queries.jsonl");
    std::fs::write(
        &queries,
        r#"{"query": "will it rain in Paris tomorrow", "expected": ["get_weather"]}"#,
    )
    .unwrap();
    let cache = env.path().join("cache");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_toolscout"))
            .env("TOOLSCOUT_MODEL_DIR", &model)
            .env("HOME", env.path())
            .env("XDG_CACHE_HOME", &cache)
            .env("TOOLSCOUT_HOME", env.path().join("catalog"))
            .env_remove("XDG_DATA_HOME")
            .args(args)
            .args(["eval", "search", "--tools"])
            .arg(&tools)
            .arg("--queries")
            .arg(&queries)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = stdout
            .lines()
            .chain(stderr.lines())
            .find(|l| l.starts_with("ranking by"))
            .map(str::to_owned);
        (
            line.unwrap_or_else(|| format!("no ranking line in {stdout}{stderr}")),
            stdout,
        )
    };
    // Found in the default place: mixed with the built-in model, each cached by name.
    let (line, stdout) = run(&[]);
    assert_eq!(
        line,
        "ranking by words and meaning (my-model+potion-base-8M-int8)"
    );
    assert!(stdout.contains("toolscout "), "{stdout}");
    let cached: Vec<String> = std::fs::read_dir(cache.join("toolscout/vectors"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for name in ["my-model-", "potion-base-8M-int8-"] {
        assert!(cached.iter().any(|c| c.starts_with(name)), "{cached:?}");
    }
    // Named: exactly the models named, in order; `built-in` names the built-in one.
    let dir = model.to_str().unwrap();
    let (line, _) = run(&["--encoder", dir]);
    assert_eq!(line, "ranking by words and meaning (my-model)");
    let (line, _) = run(&["--encoder", "built-in", "--encoder", dir]);
    assert_eq!(
        line,
        "ranking by words and meaning (potion-base-8M-int8+my-model)"
    );
}

#[test]
fn a_sentence_encoder_that_is_not_there_is_a_clear_error() {
    let env = Env::new();
    let missing = env.path().join("no-model");
    let out = env.check(&[
        "--encoder",
        missing.to_str().unwrap(),
        "search",
        "read a file",
    ]);
    let out = out.replace(env.path().to_str().unwrap(), "<tmp>");
    assert_snapshot!(out);
    // Words only needs no model, wherever one is named.
    assert_eq!(
        env.check(&["--words-only", "search", "read a file"]),
        check(&["search", "read a file"])
    );
}

#[test]
fn export_openai_has_legal_names() {
    let out: serde_json::Value =
        serde_json::from_str(&check(&["export", "--format", "openai"])).unwrap();
    let names: Vec<&str> = out
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "read_file",
            "write_file",
            "search_files",
            "http_get",
            "json_query",
            "clock"
        ]
    );
}

#[test]
fn call_with_flags_typed_by_the_schema() {
    let env = Env::new();
    std::fs::write(env.workspace().join("notes.txt"), "a\nb\nc\n").unwrap();
    assert_snapshot!(env.all(&[
        "call",
        "read_file",
        "--file_path",
        "notes.txt",
        "--offset",
        "2"
    ]));
    assert_snapshot!(env.all(&[
        "call",
        "read_file",
        "--args",
        r#"{"file_path": "notes.txt", "limit": 1}"#
    ]));
    assert_snapshot!(env.all(&["call", "read_file", "--file_path", "missing.txt"]));
    assert_snapshot!(env.all(&["call", "read_file", "--offset", "two"]));
    assert_snapshot!(env.all(&[
        "call",
        "json_query",
        "--value",
        r#"{"a": [1, 2]}"#,
        "--path",
        "$.a[1]"
    ]));
}

#[test]
fn call_help_lists_the_parameters() {
    assert_snapshot!(check(&["call", "read_file", "--help"]));
}

#[test]
fn completions_cover_every_command() {
    let bash = check(&["completions", "bash"]);
    for command in ["serve", "call", "chat", "bundle", "import", "lint"] {
        assert!(bash.contains(command), "{command} is not completed");
    }
}
