//! The harness every load bench shares: a `toolscout serve` child on a loopback port
//! (started with the bench's catalog, workspace and ranking flags, killed when dropped),
//! its memory from `/proc`, and percentiles.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use crate::Target;

/// The server child, killed when dropped.
pub(crate) struct Server(Child, Arc<std::sync::atomic::AtomicUsize>);

impl Server {
    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.0.id()
    }

    /// How many times the server said that an audit found its search index out of line
    /// with the catalog (and mended it): an index update was lost.
    pub(crate) fn audit_mends(&self) -> usize {
        self.1.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `toolscout serve` on a free loopback port with `token`; returns it and its
/// address.
pub(crate) fn start(target: &Target, token: &str) -> Result<(Server, String)> {
    spawn_serving(serve_command(target, token))
}

/// `toolscout serve --addr 127.0.0.1:0 --token TOKEN` with the catalog, workspace and
/// ranking flags of `target`, not started yet.
pub(crate) fn serve_command(target: &Target, token: &str) -> Command {
    let mut cmd = target.command();
    if let Some(c) = &target.catalog {
        cmd.arg("--catalog").arg(c);
    }
    if let Some(w) = &target.workspace {
        cmd.arg("--workspace").arg(w);
    }
    cmd.args(target.ranking_args());
    cmd.args(["serve", "--addr", "127.0.0.1:0", "--token", token]);
    cmd
}

/// Spawns `cmd`, a `toolscout … serve --addr 127.0.0.1:0 …`, and waits until it says
/// where it serves; returns it and its address. Its output is read on, so that it never
/// blocks on a full pipe.
pub(crate) fn spawn_serving(mut cmd: Command) -> Result<(Server, String)> {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {} serve", cmd.get_program().display()))?;
    let stderr = child.stderr.take().context("reading the server's output")?;
    let mends = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let server = Server(child, Arc::clone(&mends));
    let mut lines = BufReader::new(stderr);
    // What it said before it was ready (its last lines), for the error if it ends.
    let mut said: Vec<String> = Vec::new();
    loop {
        let mut line = String::new();
        if lines.read_line(&mut line)? == 0 {
            bail!(
                "{} ended before it was ready{}",
                cmd.get_program().display(),
                if said.is_empty() {
                    String::new()
                } else {
                    format!(": {}", said.join(" | "))
                }
            );
        }
        if said.len() == 20 {
            said.remove(0);
        }
        said.push(line.trim_end().chars().take(500).collect());
        if let Some(rest) = line.strip_prefix("serving ")
            && let Some(addr) = rest
                .split("http://")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
        {
            let addr = addr.to_owned();
            // Keep reading its output, so that it never blocks on a full pipe.
            std::thread::spawn(move || {
                let mut sink = String::new();
                while lines.read_line(&mut sink).is_ok_and(|n| n > 0) {
                    if sink.starts_with("search index audit") {
                        mends.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    sink.clear();
                }
            });
            return Ok((server, addr));
        }
    }
}

/// Sends SIGTERM to the server and waits for it to exit; returns how long it took (at
/// most 60 s, then it is killed and that is an error).
pub(crate) fn stop(mut server: Server) -> Result<Duration> {
    let pid = server.0.id().to_string();
    let started = Instant::now();
    let sent = Command::new("kill").args(["-TERM", &pid]).status()?;
    if !sent.success() {
        bail!("kill -TERM {pid} failed");
    }
    while started.elapsed() < Duration::from_secs(60) {
        if server.0.try_wait()?.is_some() {
            return Ok(started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    bail!("the server did not stop within 60 s of SIGTERM")
}

/// The resident size and its peak (`VmRSS`, `VmHWM`) of process `pid`, in KiB (Linux).
pub(crate) fn memory(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// The `p` quantile (0 to 1) of `sorted`, the nearest rank; 0 of none.
pub(crate) fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}
