//! A throw-away PostgreSQL cluster for toolscout's tests, so that `cargo test` runs the
//! PostgreSQL store against a real server on any machine, with nothing to set up:
//!
//! 1. `$TOOLSCOUT_TEST_DATABASE_URL` set: that server (an administrator's URL; each test
//!    gets a database of its own on it).
//! 2. `$TOOLSCOUT_SKIP_POSTGRES` set: the tests say they are skipped, and pass.
//! 3. Otherwise Debian's PostgreSQL (`/usr/lib/postgresql/<version>/bin`), installed with
//!    `apt-get` when missing and this process may (root), runs a cluster of its own in a
//!    temporary directory on a free loopback port, as the `postgres` user when this
//!    process is root (the server refuses root). It is started once per test process
//!    and stopped, and its directory removed, by a watchdog once that process ends.
//!
//! A test calls [`database`] and gets a fresh, empty database, dropped at the end.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// Set to a PostgreSQL URL: the tests use that server instead of starting one.
pub const URL_VAR: &str = "TOOLSCOUT_TEST_DATABASE_URL";
/// Set (to anything): the PostgreSQL tests are skipped, and say so.
pub const SKIP_VAR: &str = "TOOLSCOUT_SKIP_POSTGRES";

/// The server the tests of this process use.
#[derive(Debug)]
pub struct Server {
    /// An administrator's URL, to the `postgres` database.
    admin: String,
    /// The cluster this process started; `None` for `$TOOLSCOUT_TEST_DATABASE_URL`.
    cluster: Option<Cluster>,
}

#[derive(Debug)]
struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    as_postgres: bool,
}

/// A database of one test, dropped when this is.
#[derive(Debug)]
pub struct TestDatabase {
    name: String,
    url: String,
    server: &'static Server,
}

impl TestDatabase {
    /// Its URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The server's administrator URL (to its `postgres` database): for a child process
    /// that should make its databases on the same server ([`URL_VAR`]).
    pub fn admin_url(&self) -> &str {
        &self.server.admin
    }

    /// Restarts the server (a fast shutdown and a start), as an operator or a crash
    /// would: every connection is cut. `Err` for a server this process did not start.
    pub fn restart_server(&self) -> Result<(), String> {
        let Some(c) = &self.server.cluster else {
            return Err(format!(
                "the server of ${URL_VAR} is not restarted by the tests"
            ));
        };
        run(
            c.as_postgres,
            &c.bin.join("pg_ctl"),
            &[
                "-D",
                &c.data.to_string_lossy(),
                // A log file, or the server keeps this process's pipes open.
                "-l",
                &c.data.with_file_name("log").to_string_lossy(),
                "-w",
                "-t",
                "60",
                "-m",
                "fast",
                "restart",
            ],
        )
    }

    /// Holds the advisory lock `(class, key)` from a session of its own until the
    /// returned guard is dropped: another party that makes a writer wait.
    pub fn hold_lock(&self, class: i32, key: i32) -> Result<HeldLock, String> {
        let url = self.url.clone();
        let (locked_tx, locked_rx) = std::sync::mpsc::channel::<Result<(), String>>();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = locked_tx.send(Err(e.to_string()));
                    return;
                }
            };
            rt.block_on(async {
                let (client, connection) =
                    match tokio_postgres::connect(&url, tokio_postgres::NoTls).await {
                        Ok(c) => c,
                        Err(e) => {
                            let _ = locked_tx.send(Err(e.to_string()));
                            return;
                        }
                    };
                let task = tokio::spawn(connection);
                let locked = client
                    .execute("SELECT pg_advisory_lock($1, $2)", &[&class, &key])
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string());
                let _ = locked_tx.send(locked);
                // Held until the guard says otherwise (or goes).
                let _ = tokio::task::spawn_blocking(move || stopped.recv()).await;
                drop(client);
                let _ = task.await;
            });
        });
        locked_rx
            .recv()
            .map_err(|_| "the lock's thread ended".to_owned())??;
        Ok(HeldLock {
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Runs `sql` on this database as the administrator (for a test that plays another
    /// party: ends connections, damages a table).
    pub fn admin(&self, sql: &str) -> Result<(), String> {
        execute(&self.url, sql)
    }
}

/// An advisory lock held by [`TestDatabase::hold_lock`]; released when dropped.
#[derive(Debug)]
pub struct HeldLock {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // Best effort: a database left behind goes with the cluster.
        let _ = execute(
            &self.server.admin,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

/// A fresh database for the test `test`, or `None` (printed) when the PostgreSQL tests
/// are skipped.
///
/// # Panics
///
/// When no server can be found, installed or started: the message says what to do
/// (install PostgreSQL, set `$TOOLSCOUT_TEST_DATABASE_URL`, or skip with
/// `$TOOLSCOUT_SKIP_POSTGRES`).
pub fn database(test: &str) -> Option<TestDatabase> {
    if skipped(test) {
        return None;
    }
    static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
    let server = match SERVER.get_or_init(|| start(true)) {
        Ok(s) => s,
        Err(e) => cannot(test, e),
    };
    create(test, server)
}

/// [`database`] on a server of its own, started for this test (also when
/// `$TOOLSCOUT_TEST_DATABASE_URL` is set): for a test that restarts the server, which
/// would cut the other tests' connections.
///
/// # Panics
///
/// As [`database`].
pub fn database_on_own_server(test: &str) -> Option<TestDatabase> {
    if skipped(test) {
        return None;
    }
    let server = match start(false) {
        // Stopped with the others when the process ends.
        Ok(s) => Box::leak(Box::new(s)),
        Err(e) => cannot(test, &e),
    };
    create(test, server)
}

fn skipped(test: &str) -> bool {
    if std::env::var_os(URL_VAR).is_none() && std::env::var_os(SKIP_VAR).is_some() {
        eprintln!("skipped: {test} needs PostgreSQL, and ${SKIP_VAR} is set");
        return true;
    }
    false
}

fn cannot(test: &str, e: &str) -> ! {
    panic!(
        "{test} needs PostgreSQL: {e}. Install PostgreSQL, or set ${URL_VAR} to a server's \
         URL, or set ${SKIP_VAR}=1 to skip these tests"
    )
}

fn create(test: &str, server: &'static Server) -> Option<TestDatabase> {
    let name = format!("t_{}", uuid::Uuid::new_v4().simple());
    if let Err(e) = execute(&server.admin, &format!("CREATE DATABASE {name}")) {
        panic!("{test}: creating a database: {e}");
    }
    let url = match server.admin.rsplit_once('/') {
        Some((base, _)) => format!("{base}/{name}"),
        None => panic!("{test}: the URL {:?} names no database", server.admin),
    };
    Some(TestDatabase { name, url, server })
}

/// The server of `$TOOLSCOUT_TEST_DATABASE_URL` (when `shared` and it is set), or a new
/// cluster.
fn start(shared: bool) -> Result<Server, String> {
    if let Ok(url) = std::env::var(URL_VAR)
        && shared
    {
        return Ok(Server {
            admin: url,
            cluster: None,
        });
    }
    let bin = find_or_install()?;
    let root = id_is_root();
    let dir = tempfile::Builder::new()
        .prefix("toolscout-pg-")
        .tempdir()
        .map_err(|e| format!("a temporary directory: {e}"))?
        .keep();
    if root {
        run(
            false,
            Path::new("chown"),
            &["postgres:", &dir.to_string_lossy()],
        )?;
    }
    let data = dir.join("data");
    run(
        root,
        &bin.join("initdb"),
        &[
            "-D",
            &data.to_string_lossy(),
            "-U",
            "toolscout",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
            "--no-instructions",
        ],
    )?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("a free port: {e}"))?
        .port();
    let options = format!(
        "-c listen_addresses=127.0.0.1 -p {port} -k {} -c max_connections=300 -c fsync=off \
         -c synchronous_commit=off -c full_page_writes=off",
        dir.display()
    );
    let log = dir.join("log");
    run(
        root,
        &bin.join("pg_ctl"),
        &[
            "-D",
            &data.to_string_lossy(),
            "-l",
            &log.to_string_lossy(),
            "-w",
            "-t",
            "60",
            "-o",
            &options,
            "start",
        ],
    )?;
    // The watchdog: once this process has ended, stop the cluster and remove it.
    let stop = format!(
        "{} -D '{}' -m immediate stop",
        bin.join("pg_ctl").display(),
        data.display()
    );
    let stop = if root {
        format!("runuser -u postgres -- {stop}")
    } else {
        stop
    };
    let watchdog = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf '{dir}'",
        pid = std::process::id(),
        dir = dir.display()
    );
    Command::new("setsid")
        .args(["sh", "-c", &watchdog])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting the cluster's watchdog: {e}"))?;
    Ok(Server {
        admin: format!("postgres://toolscout@127.0.0.1:{port}/postgres"),
        cluster: Some(Cluster {
            bin,
            data,
            as_postgres: root,
        }),
    })
}

fn id_is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The newest `/usr/lib/postgresql/<version>/bin` with `initdb` and `pg_ctl`.
fn find_bin() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            (bin.join("initdb").exists() && bin.join("pg_ctl").exists()).then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

fn find_or_install() -> Result<PathBuf, String> {
    if let Some(bin) = find_bin() {
        return Ok(bin);
    }
    if !id_is_root() || !Path::new("/usr/bin/apt-get").exists() {
        return Err(
            "no /usr/lib/postgresql/<version>/bin, and this process cannot install \
                    Debian's `postgresql` (it needs root and apt-get)"
                .to_owned(),
        );
    }
    eprintln!("installing postgresql with apt-get (once)…");
    for args in [
        &["update", "-qq"][..],
        &[
            "install",
            "-y",
            "-qq",
            "--no-install-recommends",
            "postgresql",
        ][..],
    ] {
        let status = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("running apt-get: {e}"))?;
        if !status.success() {
            return Err(format!("`apt-get {}` failed ({status})", args.join(" ")));
        }
    }
    find_bin().ok_or_else(|| "apt-get installed postgresql, but no initdb was found".to_owned())
}

/// Runs `program` (as the `postgres` user when `as_postgres`), failing with its output.
fn run(as_postgres: bool, program: &Path, args: &[&str]) -> Result<(), String> {
    let mut cmd = if as_postgres {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    // A directory the `postgres` user may not enter would make its tools fail.
    cmd.current_dir("/");
    let out = cmd
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running {}: {e}", program.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} {} failed ({}): {}{}",
            program.display(),
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Runs `sql` on the database at `url`, on a thread of its own (so that it works from a
/// test on a runtime too).
fn execute(url: &str, sql: &str) -> Result<(), String> {
    let (url, sql) = (url.to_owned(), sql.to_owned());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async {
            let connect = tokio_postgres::connect(&url, tokio_postgres::NoTls);
            let (client, connection) = tokio::time::timeout(Duration::from_secs(30), connect)
                .await
                .map_err(|_| "connecting: no answer within 30 s".to_owned())?
                .map_err(|e| format!("connecting: {e}"))?;
            let task = tokio::spawn(connection);
            let result = client.batch_execute(&sql).await.map_err(|e| {
                e.as_db_error()
                    .map_or_else(|| e.to_string(), |db| db.message().to_owned())
            });
            drop(client);
            let _ = task.await;
            result
        })
    })
    .join()
    .map_err(|_| "the database thread panicked".to_owned())?
}
