//! The load benches, short, against the real `toolscout` binary on loopback.
//!
//! They run the `toolscout` that `cargo build` put beside `toolscout-bench` (in the same
//! target directory and profile): `cargo test --workspace` builds it, for the CLI's own
//! tests; alone, `cargo test -p toolscout-bench` needs `cargo build --bin toolscout`
//! first, and says so.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `toolscout` binary beside `toolscout-bench`.
fn toolscout() -> PathBuf {
    let bench = Path::new(env!("CARGO_BIN_EXE_toolscout-bench"));
    let exe = bench.with_file_name(format!("toolscout{}", std::env::consts::EXE_SUFFIX));
    assert!(
        exe.is_file(),
        "{} is missing: run `cargo build --bin toolscout` (or `cargo test --workspace`, which builds it) first",
        exe.display()
    );
    exe
}

/// A temporary catalog and workspace.
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        Env { dir }
    }

    /// `toolscout-bench ARGS` measuring this directory's catalog: stdout on success,
    /// `exit N` and stderr on failure (which must print nothing).
    fn check(&self, args: &[&str]) -> String {
        self.check_with(&toolscout(), args)
    }

    /// [`Env::check`] measuring the `toolscout` binary at `exe`.
    fn check_with(&self, exe: &Path, args: &[&str]) -> String {
        let out = Command::new(env!("CARGO_BIN_EXE_toolscout-bench"))
            // Hermetic: rank by words, whatever model this machine has fetched, and the
            // catalog of this directory, whatever database the environment names.
            .env("TOOLSCOUT_MODEL_DIR", "/nonexistent/toolscout-model")
            .env("TOOLSCOUT_HOME", self.dir.path().join("catalog"))
            .env_remove("XDG_DATA_HOME")
            .env_remove("TOOLSCOUT_DATABASE_URL")
            .arg("--toolscout")
            .arg(exe)
            .arg("--workspace")
            .arg(self.dir.path().join("ws"))
            .args(args)
            .output()
            .expect("the toolscout-bench binary runs");
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
}

#[test]
fn scale_prints_every_step_of_a_catalog_it_imports() {
    let env = Env::new();
    let file = env.dir.path().join("scale.jsonl");
    let mut lines = String::new();
    for i in 0..40 {
        let line = serde_json::json!({"name": format!("sms_{i}"), "description": format!("Send SMS message number {i}.")});
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    std::fs::write(&file, lines).unwrap();
    let out = env.check(&[
        "--json",
        "scale",
        "--tools",
        file.to_str().unwrap(),
        "--searches",
        "3",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let steps = v["steps"].as_array().unwrap();
    let names: Vec<&str> = steps.iter().map(|s| s["step"].as_str().unwrap()).collect();
    for want in [
        "import",
        "list --limit 20",
        "describe",
        "search (index current)",
        "serve until it answers",
        "GET /api/v1/tools (gzip)",
        "a search once the server is up (p50)",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let import = &steps[0];
    assert!(
        import["note"].as_str().unwrap().contains("tools"),
        "{import}"
    );
    assert!(import["seconds"].as_f64().unwrap() > 0.0);
    if cfg!(target_os = "linux") {
        assert!(import["peak_mib"].as_u64().unwrap() > 0, "{import}");
    }
}

/// Issue 39's load, short: four tenants, then a fifth over its rate that ignores
/// Retry-After. The well-behaved tenants see no error (a 429 would be one) in either run;
/// the noisy one is refused. Not the p99 ratio: timing on a shared machine is noisy.
#[test]
fn serve_with_a_noisy_tenant_refuses_only_the_noisy_one() {
    let env = Env::new();
    let out = env.check(&[
        "--json",
        "serve",
        "--tenants",
        "4",
        "--noisy",
        "--seconds",
        "6",
        "--clients",
        "8",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(
        v["clients_per_tenant"],
        serde_json::json!([2, 2, 2, 2]),
        "{v}"
    );
    for run in ["without_noisy", "with_noisy"] {
        let r = &v[run];
        assert_eq!(r["errors"], 0, "{run}: {r}");
        let tenants = r["per_tenant"].as_array().unwrap();
        assert_eq!(tenants.len(), 4, "{run}: {r}");
        for t in tenants {
            assert!(t["requests"].as_u64().unwrap() > 0, "{run}: {t}");
        }
    }
    assert!(v["without_noisy"].get("noisy_tenant").is_none(), "{v}");
    let noisy = &v["with_noisy"]["noisy_tenant"];
    assert_eq!(noisy["clients"], 2, "{noisy}");
    assert!(noisy["rate_limited"].as_u64().unwrap() > 0, "{noisy}");
    assert!(noisy["ok"].as_u64().unwrap() > 0, "{noisy}");
    assert!(v["p99_ratio"].as_f64().is_some(), "{v}");

    // The text, one short run without the noisy tenant.
    let out = env.check(&[
        "serve",
        "--tenants",
        "2",
        "--clients",
        "2",
        "--seconds",
        "1",
    ]);
    assert!(
        out.starts_with("2 tenants, 2 clients (1 a tenant), 1 s a run;"),
        "{out}"
    );
    assert!(out.contains("without the noisy tenant: "), "{out}");
    assert!(out.contains(", 0 errors\n"), "{out}");
    assert!(!out.contains("with the noisy tenant"), "{out}");

    let out = env.check(&["serve", "--noisy"]);
    assert!(
        out.starts_with("exit 2\n") && out.contains("--tenants"),
        "{out}"
    );
    let out = env.check(&["serve", "--tenants", "4", "--clients", "2"]);
    assert!(out.contains("every tenant needs a client"), "{out}");
}

/// A `toolscout` that is not there is named in the error, not a panic or a hang.
#[test]
fn a_missing_toolscout_binary_is_named() {
    let env = Env::new();
    let out = env.check_with(
        Path::new("/nonexistent/toolscout"),
        &["serve", "--seconds", "1"],
    );
    assert!(out.starts_with("exit 1\n"), "{out}");
    assert!(out.contains("/nonexistent/toolscout"), "{out}");
}
