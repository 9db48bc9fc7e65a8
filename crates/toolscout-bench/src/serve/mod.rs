//! `toolscout-bench serve`: a load test. Starts `toolscout serve` as a child process on
//! a loopback port, runs N concurrent clients against it for a while, each mixing the
//! manifest, `tools/search` and `tools/call`, and prints requests per second, p50 and
//! p99 latency, the errors, and the server's memory over the run (from
//! `/proc/<pid>/status`: resident size at the start, at the end, and its peak).
//! `--tenants N` runs tenants instead ((`tenants.rs`)).

mod tenants;

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde_json::{Value, json};

use crate::Target;
use crate::harness::{memory, start, stop};

/// Arguments of `toolscout-bench serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// Concurrent clients.
    #[arg(long, default_value_t = 16)]
    pub(crate) clients: usize,
    /// How long to run, in seconds (each run, with --hostile or --noisy).
    #[arg(long, default_value_t = 60)]
    pub(crate) seconds: u64,
    /// After the run, run again as long while one more client sends the costliest
    /// `json_query` calls it can, one a second; print both runs, the ratio of their p99,
    /// and how long the server then takes to stop on SIGTERM.
    #[arg(long, conflicts_with = "tenants")]
    hostile: bool,
    /// Serve N tenants instead, on a temporary catalog (the built-ins, and for each tenant
    /// a bundle of its own: renamed copies of the built-in tools and of a few tools of
    /// this catalog, which is only read); the clients are spread over the tenants'
    /// tokens, each tenant's together sending at most 150 requests a second (its limit:
    /// 200, bursts of 400). Prints their requests/s, p50, p99 and errors (a 429 is one).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=100))]
    pub(crate) tenants: Option<u16>,
    /// With --tenants: run again as long with one more tenant, `noisy` (20 requests a
    /// second, bursts of 20), whose clients (as many as one tenant has) send as fast as
    /// they can, ignoring Retry-After; print its 200s and 429s and the ratio of the
    /// other tenants' p99 with it and without it.
    #[arg(long, requires = "tenants")]
    pub(crate) noisy: bool,
}

/// What one client saw.
#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    errors: u64,
    first_error: Option<String>,
}

pub(crate) fn run(args: &ServeArgs, target: &Target, json_out: bool) -> Result<()> {
    if args.clients == 0 || args.seconds == 0 {
        bail!("--clients and --seconds must be at least 1");
    }
    if let Some(tenants) = args.tenants {
        return tenants::run(args, usize::from(tenants), target, json_out);
    }
    let token = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let (server, addr) = start(target, &token)?;
    let pid = server.pid();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let clean = runtime.block_on(phase(args, &addr, &token, pid, false))?;
    let hostile = if args.hostile {
        Some(runtime.block_on(phase(args, &addr, &token, pid, true))?)
    } else {
        None
    };
    let stopped = if args.hostile {
        Some(stop(server)?)
    } else {
        drop(server);
        None
    };
    let mut report = clean.report(args);
    if let (Some(h), Some(stopped)) = (&hostile, stopped) {
        let ratio = h.pct(0.99) / clean.pct(0.99).max(1e-9);
        report = json!({
            "clean": report,
            "hostile": h.report(args),
            "p99_ratio": (ratio * 100.0).round() / 100.0,
            "stopped_after_sigterm_s": (stopped.as_secs_f64() * 100.0).round() / 100.0,
        });
    }
    if json_out {
        return crate::emit(&serde_json::to_string_pretty(&report)?);
    }
    let mut text = clean.line(args);
    if let (Some(h), Some(stopped)) = (&hostile, stopped) {
        let ratio = h.pct(0.99) / clean.pct(0.99).max(1e-9);
        text = format!(
            "clean:   {text}\nhostile: {}\n{}\np99 with the hostile client / without: {ratio:.2}; \
             the server stopped {:.2} s after SIGTERM",
            h.line(args),
            h.hostile_line(),
            stopped.as_secs_f64()
        );
    }
    crate::emit(text)
}

/// What one run saw: every client's tally, the hostile client's, the server's memory.
struct Phase {
    latencies: Vec<Duration>,
    errors: u64,
    first_error: Option<String>,
    hostile: Option<HostileTally>,
    rss_start: Option<u64>,
    early: u64,
    rss_end: u64,
    peak: u64,
}

impl Phase {
    fn pct(&self, p: f64) -> f64 {
        let l = &self.latencies;
        l.get(((l.len() as f64 * p) as usize).min(l.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    }

    fn requests(&self) -> u64 {
        self.latencies.len() as u64 + self.errors
    }

    fn report(&self, args: &ServeArgs) -> Value {
        let rps = self.requests() as f64 / args.seconds as f64;
        let mut report = json!({
            "clients": args.clients,
            "seconds": args.seconds,
            "requests": self.requests(),
            "requests_per_second": (rps * 10.0).round() / 10.0,
            "p50_ms": (self.pct(0.50) * 100.0).round() / 100.0,
            "p99_ms": (self.pct(0.99) * 100.0).round() / 100.0,
            "errors": self.errors,
            "first_error": self.first_error,
            "server_rss_kib": {"start": self.rss_start, "early": self.early, "end": self.rss_end, "peak": self.peak},
        });
        if let Some(h) = &self.hostile {
            report["hostile_calls"] = json!({
                "sent": h.sent,
                "refused": h.refused,
                "answered": h.answered,
                "failed": h.failed,
                "slowest_ms": h.slowest.as_secs_f64() * 1000.0,
                "slowest_call": h.slowest_call,
            });
        }
        report
    }

    fn line(&self, args: &ServeArgs) -> String {
        let rps = self.requests() as f64 / args.seconds as f64;
        format!(
            "{} clients for {} s: {} requests, {rps:.1}/s, p50 {:.2} ms, p99 {:.2} ms, {} errors{}\n\
             server memory (RSS): {} KiB at start, {} KiB at 10%, {} KiB at the end, peak {} KiB",
            args.clients,
            args.seconds,
            self.requests(),
            self.pct(0.50),
            self.pct(0.99),
            self.errors,
            self.first_error
                .as_ref()
                .map(|e| format!(" (first: {e})"))
                .unwrap_or_default(),
            self.rss_start.unwrap_or_default(),
            self.early,
            self.rss_end,
            self.peak,
        )
    }

    fn hostile_line(&self) -> String {
        match &self.hostile {
            None => String::new(),
            Some(h) => format!(
                "hostile client: {} json_query calls, {} refused, {} answered, {} failed otherwise; \
                 slowest {:.1} ms ({})",
                h.sent,
                h.refused,
                h.answered,
                h.failed,
                h.slowest.as_secs_f64() * 1000.0,
                h.slowest_call
            ),
        }
    }
}

/// Runs the clients (and, when `hostile`, the hostile client) for `args.seconds`.
async fn phase(
    args: &ServeArgs,
    addr: &str,
    token: &str,
    pid: u32,
    hostile: bool,
) -> Result<Phase> {
    let rss_start = memory(pid).map(|m| m.0);
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    let mut samples = Vec::new();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .no_proxy()
        .build()?;
    let mut tasks = Vec::new();
    for i in 0..args.clients {
        let (client, addr, caller) = (client.clone(), addr.to_owned(), Caller::operator(token));
        tasks.push(tokio::spawn(async move {
            one_client(i, &client, &addr, &caller, deadline).await
        }));
    }
    let hostile_task = hostile.then(|| {
        let (client, addr, token) = (client.clone(), addr.to_owned(), token.to_owned());
        tokio::spawn(async move { hostile_client(&client, &addr, &token, deadline).await })
    });
    // The server's memory, every second while the clients run.
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if let Some((rss, _)) = memory(pid) {
            samples.push(rss);
        }
    }
    let mut tallies = Vec::new();
    for t in tasks {
        tallies.push(t.await?);
    }
    let hostile = match hostile_task {
        Some(t) => Some(t.await?),
        None => None,
    };
    let (rss_end, peak) = memory(pid).unwrap_or((0, 0));
    let mut latencies: Vec<Duration> = tallies
        .iter()
        .flat_map(|t| t.latencies.iter().copied())
        .collect();
    latencies.sort_unstable();
    // Memory in the second tenth of the run.
    let early = samples.get(samples.len() / 10).copied().unwrap_or_default();
    Ok(Phase {
        latencies,
        errors: tallies.iter().map(|t| t.errors).sum(),
        first_error: tallies.iter().find_map(|t| t.first_error.clone()),
        hostile,
        rss_start,
        early,
        rss_end,
        peak,
    })
}

/// What the hostile client saw.
#[derive(Default)]
struct HostileTally {
    sent: u64,
    refused: u64,
    answered: u64,
    failed: u64,
    slowest: Duration,
    slowest_call: String,
}

/// The costliest `json_query` calls this client knows, named: each is at or near a
/// bound of `toolscout_invoke::jsonpath` (nesting, cost, patterns), or far past one.
fn hostile_calls() -> Vec<(&'static str, Value)> {
    let strings: Vec<String> = (0..60_000).map(|i| format!("item {i:05}")).collect();
    let records: Vec<Value> = (0..12_000)
        .map(|i| json!({"s": format!("x{i}"), "p": format!("x{}?", i % 16)}))
        .collect();
    let tree = |depth: usize, width: usize| {
        let mut v = json!({"a": 1});
        for _ in 0..depth {
            v = Value::Array(vec![v; width]);
        }
        v
    };
    vec![
        (
            "1,000 nested parentheses",
            json!({"value": [{"a": 1}], "path": format!("$[?{}@.a{}]", "(".repeat(1000), ")".repeat(1000))}),
        ),
        (
            "30 nested filters",
            json!({"value": [{"a": 1}], "path": format!("$[?{}@.a{}]", "@[?".repeat(30), "]".repeat(30))}),
        ),
        (
            "4 nested filters over 60,000 nodes",
            json!({"value": tree(4, 15), "path": "$[?@[?@[?@[?@.a == 1]]]]"}),
        ),
        (
            "descendants of every node, 150,000 nodes",
            json!({"value": tree(5, 10), "path": "$..*"}),
        ),
        (
            "descendant filter under the cost bound",
            json!({"value": tree(3, 40), "path": "$..[?@..a]"}),
        ),
        (
            "a 64 KiB pattern over 60,000 strings",
            json!({"value": strings, "path": format!("$[?search(@, '{}')]", "(a|b)*c{1,30}".repeat(6))}),
        ),
        (
            "16 patterns from the value over 12,000 records",
            json!({"value": records, "path": "$[?search(@.s, @.p)]"}),
        ),
        (
            "a pattern that compiles too large",
            json!({"value": ["a"], "path": "$[?match(@, '\\\\w{1,1000}')]"}),
        ),
    ]
}

/// One call a second, rotating through [`hostile_calls`], until `deadline`.
async fn hostile_client(
    client: &reqwest::Client,
    addr: &str,
    token: &str,
    deadline: Instant,
) -> HostileTally {
    let calls: Vec<(&str, String)> = hostile_calls()
        .into_iter()
        .map(|(name, args)| {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "json_query", "arguments": args}});
            (name, body.to_string())
        })
        .collect();
    let mut tally = HostileTally::default();
    let mut ticks = tokio::time::interval(Duration::from_secs(1));
    let mut n = 0;
    while Instant::now() < deadline {
        ticks.tick().await;
        let (name, body) = &calls[n % calls.len()];
        n += 1;
        let started = Instant::now();
        let answer = client
            .post(format!("http://{addr}/rpc"))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await;
        let reply: Option<Value> = match answer {
            Ok(resp) => resp.json().await.ok(),
            Err(_) => None,
        };
        let took = started.elapsed();
        tally.sent += 1;
        match reply.as_ref().map(|r| &r["result"]) {
            Some(r) if r["ok"] == json!(true) => tally.answered += 1,
            Some(r)
                if matches!(
                    r["error"]["kind"].as_str(),
                    Some("invalid_arguments" | "too_large")
                ) =>
            {
                tally.refused += 1;
            }
            _ => tally.failed += 1,
        }
        if took > tally.slowest {
            tally.slowest = took;
            (*name).clone_into(&mut tally.slowest_call);
        }
    }
    tally
}

/// Who a client is: the token it sends and the tools it calls.
pub(crate) struct Caller {
    /// The bearer token of its `/rpc` requests.
    pub(crate) token: String,
    /// Whether it reads the manifest with its token (a tenant's view) or without.
    pub(crate) manifest_with_token: bool,
    /// The clock it calls: the built-in one, or a tenant's copy.
    pub(crate) clock: String,
    /// The `json_query` it calls: the built-in one, or a tenant's copy.
    pub(crate) json_query: String,
}

impl Caller {
    /// The server's own token, the manifest without a token, the built-in tools.
    fn operator(token: &str) -> Caller {
        Caller {
            token: token.to_owned(),
            manifest_with_token: false,
            clock: "clock".to_owned(),
            json_query: "json_query".to_owned(),
        }
    }
}

/// Why a request failed: the HTTP status when one came, and what to print.
pub(crate) struct Failure {
    pub(crate) status: Option<reqwest::StatusCode>,
    pub(crate) message: String,
}

impl Failure {
    fn new(status: Option<reqwest::StatusCode>, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
        }
    }
}

impl From<reqwest::Error> for Failure {
    fn from(e: reqwest::Error) -> Failure {
        Failure::new(e.status(), e.to_string())
    }
}

/// One client: a fixed rotation of manifest reads, searches and calls until `deadline`.
async fn one_client(
    i: usize,
    client: &reqwest::Client,
    addr: &str,
    caller: &Caller,
    deadline: Instant,
) -> Tally {
    let mut tally = Tally::default();
    let mut n = i;
    while Instant::now() < deadline {
        n += 1;
        let started = Instant::now();
        match one_request(client, addr, caller, n).await {
            Ok(()) => tally.latencies.push(started.elapsed()),
            Err(e) => {
                tally.errors += 1;
                tally.first_error.get_or_insert(e.message);
            }
        }
    }
    tally
}

/// Request `n` of a client's rotation: a quarter manifest reads, half searches, a
/// quarter calls (of `json_query` and the clock).
pub(crate) async fn one_request(
    client: &reqwest::Client,
    addr: &str,
    caller: &Caller,
    n: usize,
) -> Result<(), Failure> {
    const QUERIES: [&str; 5] = ["read a file", "time zone", "json", "write", "search files"];
    match n % 4 {
        0 => {
            get_manifest(
                client,
                addr,
                caller.manifest_with_token.then_some(caller.token.as_str()),
            )
            .await
        }
        1 | 2 => {
            let q = QUERIES[n % QUERIES.len()];
            rpc(client, addr, &caller.token, json!({"jsonrpc": "2.0", "id": n, "method": "tools/search", "params": {"query": q}})).await
        }
        _ => {
            let call = if n % 8 == 3 {
                json!({"name": caller.clock, "arguments": {"action": "now", "time_zone": "Europe/Paris"}})
            } else {
                json!({"name": caller.json_query, "arguments": {"value": {"a": [1, 2, {"b": n}]}, "path": "$..b"}})
            };
            rpc(
                client,
                addr,
                &caller.token,
                json!({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call}),
            )
            .await
        }
    }
}

async fn get_manifest(
    client: &reqwest::Client,
    addr: &str,
    token: Option<&str>,
) -> Result<(), Failure> {
    let mut request = client.get(format!("http://{addr}/api/v1/tools"));
    if let Some(t) = token {
        request = request.bearer_auth(t);
    }
    let resp = request.send().await?;
    let status = resp.status();
    let body = resp.bytes().await?;
    if !status.is_success() || body.is_empty() {
        return Err(Failure::new(
            Some(status),
            format!("manifest answered {status}"),
        ));
    }
    Ok(())
}

async fn rpc(
    client: &reqwest::Client,
    addr: &str,
    token: &str,
    body: Value,
) -> Result<(), Failure> {
    let resp = client
        .post(format!("http://{addr}/rpc"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await?;
    let status = resp.status();
    if !status.is_success() {
        return Err(Failure::new(
            Some(status),
            format!("/rpc answered {status}"),
        ));
    }
    let reply: Value = resp.json().await?;
    if let Some(e) = reply.get("error") {
        return Err(Failure::new(Some(status), format!("/rpc error {e}")));
    }
    if reply["result"]["ok"] == json!(false) {
        return Err(Failure::new(
            Some(status),
            format!("tool call failed: {}", reply["result"]["error"]),
        ));
    }
    Ok(())
}
