//! `--store postgres://…`: two processes with their own directories (two machines, as
//! far as the catalog knows) share one catalog in a real PostgreSQL server.

use crate::Env;

const TOOLS: &str = r#"{"name": "tide_times", "description": "High and low tide times for a harbour.", "parameters": {"type": "object", "properties": {"harbour": {"type": "string"}}, "required": ["harbour"]}}
{"name": "wave_height", "description": "Forecast wave height off a beach.", "parameters": {"type": "object", "properties": {"beach": {"type": "string"}}, "required": ["beach"]}}
"#;

#[test]
fn two_directories_on_one_database_share_the_catalog() {
    let Some(db) = toolscout_pgtest::database("two_directories_on_one_database_share_the_catalog")
    else {
        return;
    };
    let (a, b) = (Env::new(), Env::new());
    let file = a.path().join("tools.jsonl");
    std::fs::write(&file, TOOLS).unwrap();
    let out = a.check(&[
        "--store",
        db.url(),
        "import",
        "jsonl",
        file.to_str().unwrap(),
        "--bundle",
        "sea",
    ]);
    assert!(
        out.starts_with("imported 2 tool(s) into bundle 'sea' (new)"),
        "{out}"
    );
    // The other directory has no files of the catalog, and sees it all, through the
    // variable as well as the flag.
    let listed = b.check(&["--store", db.url(), "list", "--bundle", "sea"]);
    assert!(
        listed.contains("tide_times") && listed.contains("wave_height"),
        "{listed}"
    );
    let out = b
        .command(&["search", "tide"])
        .env("TOOLSCOUT_DATABASE_URL", db.url())
        .output()
        .unwrap();
    let found = String::from_utf8(out.stdout).unwrap();
    assert!(found.starts_with("tide_times"), "{found}");
    assert!(!b.path().join("catalog").join("bundles").exists());
    // A change made through one is seen by the other.
    b.check(&["--store", db.url(), "bundle", "disable", "sea"]);
    let listed = a.check(&["--store", db.url(), "list", "--bundle", "sea"]);
    assert!(!listed.contains("tide_times"), "{listed}");
}

#[test]
fn an_unreachable_database_is_a_clear_error_without_the_password() {
    let env = Env::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://ops:hunter2-secret@127.0.0.1:{port}/catalog");
    let out = env.check(&["--store", &url, "list"]);
    assert!(out.starts_with("exit 1\n"), "{out}");
    assert!(
        out.contains(&format!(
            "PostgreSQL at postgres://ops@127.0.0.1:{port}/catalog: connecting"
        )),
        "{out}"
    );
    assert!(!out.contains("hunter2"), "{out}");
    let out = env.check(&["--store", "mysql://x", "list"]);
    assert!(out.contains("expected a PostgreSQL URL"), "{out}");
}

/// How many tools `list --bundle big` prints on the database (0 when there is no such
/// bundle).
fn count_big(url: &str) -> usize {
    let env = Env::new();
    let out = env
        .command(&[
            "--store",
            url,
            "list",
            "--bundle",
            "big",
            "--include-disabled",
        ])
        .output()
        .unwrap();
    if !out.status.success() {
        return 0;
    }
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("big_"))
        .count()
}

#[test]
fn an_import_killed_half_way_leaves_all_or_nothing_and_runs_again() {
    let Some(db) = toolscout_pgtest::database(
        "an_import_killed_half_way_leaves_all_or_nothing_and_runs_again",
    ) else {
        return;
    };
    const TOOLS: usize = 5_000;
    let env = Env::new();
    let file = env.path().join("big.jsonl");
    let mut lines = String::new();
    for i in 0..TOOLS {
        lines.push_str(&format!(
            r#"{{"name": "big_{i}", "description": "Tool number {i} of a large import.", "parameters": {{"type": "object", "properties": {{"x": {{"type": "string"}}}}}}}}"#
        ));
        lines.push('\n');
    }
    std::fs::write(&file, lines).unwrap();
    let import = |env: &Env| {
        env.command(&[
            "--store",
            db.url(),
            "import",
            "jsonl",
            file.to_str().unwrap(),
            "--bundle",
            "big",
        ])
    };
    let mut killed_mid_way = 0;
    for delay_ms in [300, 900, 1_500, 2_500] {
        let mut child = import(&env)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let finished = child.try_wait().unwrap().is_some();
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let n = count_big(db.url());
        assert!(
            n == 0 || n == TOOLS,
            "killed after {delay_ms} ms: {n} of {TOOLS} tools"
        );
        if !finished && n == 0 {
            killed_mid_way += 1;
        }
        if n == TOOLS {
            break;
        }
    }
    eprintln!("{killed_mid_way} import(s) killed before they committed");
    // Run again (or once more): it completes.
    crate::succeeded(import(&env).output().unwrap());
    assert_eq!(count_big(db.url()), TOOLS);
}

/// Whether `text` holds any run of 4 characters or more of `secret`.
fn holds_a_piece_of(text: &str, secret: &str) -> bool {
    let chars: Vec<char> = secret.chars().collect();
    chars
        .windows(4)
        .any(|w| text.contains(&w.iter().collect::<String>()))
}

/// Issue 61, item 6: a URL the program does not take (another scheme, a libpq string, a
/// leading space) is refused, by the flag and the variable alike, and no error quotes
/// its password, whole or in part.
#[test]
fn store_urls_of_other_forms_are_refused_without_their_password() {
    let env = Env::new();
    let password = "Zq9vW-hunter2";
    let urls = [
        format!("postgresql+psycopg2://alice:{password}@127.0.0.1:1/cat"),
        format!("mysql://alice:{password}@127.0.0.1:1/cat"),
        format!("host=127.0.0.1 port=1 user=alice password={password} dbname=cat"),
        format!("host=127.0.0.1 password='{password} two words' dbname=cat"),
        format!("alice:{password}@127.0.0.1:1/cat"),
        format!("postgres://alice:{password}@127.0.0.1:1/cat?sslpassword={password}x"),
    ];
    let mut said = Vec::new();
    for url in &urls {
        let by_flag = env.all(&["--store", url, "list"]);
        let by_var = env
            .command(&["list"])
            .env("TOOLSCOUT_DATABASE_URL", url)
            .output()
            .unwrap();
        let by_var = format!(
            "exit {}\n{}{}",
            by_var.status.code().unwrap_or(-1),
            String::from_utf8(by_var.stdout).unwrap(),
            String::from_utf8(by_var.stderr).unwrap()
        );
        for out in [&by_flag, &by_var] {
            assert!(!out.starts_with("exit 0"), "{url}: {out}");
            assert!(!holds_a_piece_of(out, password), "{url}: {out}");
        }
        said.push(by_flag);
    }
    // The first three name the URL with its password replaced.
    insta::assert_snapshot!(said[..3].join("---\n"));
    // A leading space is trimmed, not an error of its own: the URL is then used, and the
    // connection's error names the database without the password.
    let out = env.all(&[
        "--store",
        &format!(" postgres://alice:{password}@127.0.0.1:1/cat"),
        "list",
    ]);
    assert!(out.contains("postgres://alice@127.0.0.1:1/cat"), "{out}");
    assert!(!holds_a_piece_of(&out, password), "{out}");
}
