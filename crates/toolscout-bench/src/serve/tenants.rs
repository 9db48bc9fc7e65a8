//! `toolscout-bench serve --tenants N [--noisy]`: whether one tenant over its request
//! rate slows the others down (issue 39).
//!
//! The bench makes a temporary catalog: the built-ins, and N tenants `t1`…`tN`, each
//! owning a bundle of renamed copies of the built-in tools (`t1_clock` and `t1_json_query`
//! callable, the others spec-only) and of a few tools of the catalog the bench was given
//! (spec-only; that catalog is only read). It serves it with `toolscout serve` as a child
//! process and spreads the clients over the tenants' tokens; each client runs the
//! rotation of `serve` (manifest, search, calls) in its tenant's view, and each
//! tenant's clients together send at most [`PACE`] requests a second, under the tenant's
//! rate ([`WELL_BEHAVED`]): a 429 for them is an error. With `--noisy`, a second run as
//! long adds a tenant `noisy` ([`NOISY`]) whose clients send as fast as they can,
//! ignoring `Retry-After`; the ratio of the well-behaved tenants' p99 with it and without
//! it is what the per-tenant limiter is for.
//!
//! **Rationale:** the well-behaved clients are paced, not looping flat out as `bench
//! serve`'s do: a tenant that sends faster than its own limit is a noisy one, and its
//! 429s would be the limiter working, not an error.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use reqwest::StatusCode;
use serde_json::{Value, json};
use toolscout_catalog::{BundlePut, Catalog, CatalogOptions, TenantLimits, ToolPut, builtin};
use toolscout_spec::{ToolName, ToolSpec};
use uuid::Uuid;

use super::{Caller, ServeArgs, one_request};
use crate::Target;
use crate::harness::{memory, serve_command, spawn_serving};

/// The limits of each well-behaved tenant.
const WELL_BEHAVED: TenantLimits = TenantLimits {
    max_tools: 10_000,
    max_bundles: 100,
    requests_per_second: 200,
    burst: 400,
};

/// Requests a second each well-behaved tenant's clients send together, at most: three
/// quarters of its rate.
const PACE: f64 = 150.0;

/// The limits of the noisy tenant.
const NOISY: TenantLimits = TenantLimits {
    max_tools: 10_000,
    max_bundles: 100,
    requests_per_second: 20,
    burst: 20,
};

/// The noisy tenant's name.
const NOISY_NAME: &str = "noisy";

/// How many tools of the catalog the bench was given (besides the built-ins) are copied
/// into each tenant's bundle.
const COPIED: usize = 4;

/// The built-in tools whose copies are callable; the others are copied spec-only, so
/// that no client touches the workspace or the network.
const CALLED: [&str; 2] = ["clock", "json_query"];

/// A tenant of the bench.
struct BenchTenant {
    name: String,
    token: String,
}

impl BenchTenant {
    /// How its clients call: its token everywhere, its own copies of the tools.
    fn caller(&self) -> Caller {
        Caller {
            token: self.token.clone(),
            manifest_with_token: true,
            clock: format!("{}_clock", self.name),
            json_query: format!("{}_json_query", self.name),
        }
    }
}

pub(crate) fn run(args: &ServeArgs, tenants: usize, target: &Target, json_out: bool) -> Result<()> {
    if args.clients < tenants {
        bail!(
            "--clients {} is fewer than --tenants {tenants}: every tenant needs a client",
            args.clients
        );
    }
    let copied = source_specs(target)?;
    let dir = tempfile::Builder::new()
        .prefix("toolscout-bench-tenants-")
        .tempdir()
        .context("making the bench's temporary catalog")?;
    let catalog_dir = dir.path().join("catalog");
    let (all, tools) = seed(&catalog_dir, &copied, tenants, args.noisy)?;
    let (well_behaved, noisy) = all.split_at(tenants);

    let token = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let mut served = target.clone();
    served.catalog = Some(catalog_dir);
    let mut cmd = serve_command(&served, &token);
    // The temporary catalog is a directory, whatever database the environment names.
    cmd.env_remove("TOOLSCOUT_DATABASE_URL");
    let (server, addr) = spawn_serving(cmd)?;
    let pid = server.pid();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .no_proxy()
        .build()?;
    runtime.block_on(check_views(&client, &addr, &all))?;
    let quiet = runtime.block_on(load(args, &client, &addr, well_behaved, None, pid));
    let loud = noisy
        .first()
        .map(|n| runtime.block_on(load(args, &client, &addr, well_behaved, Some(n), pid)));
    drop(server);
    drop(dir);

    let per_tenant: Vec<usize> = (0..tenants)
        .map(|t| (0..args.clients).filter(|i| i % tenants == t).count())
        .collect();
    let names: Vec<&str> = well_behaved.iter().map(|t| t.name.as_str()).collect();
    let ratio = loud
        .as_ref()
        .map(|l| l.figures.p99 / quiet.figures.p99.max(1e-9));
    if json_out {
        let mut report = json!({
            "tenants": tenants,
            "clients": args.clients,
            "clients_per_tenant": per_tenant,
            "seconds": args.seconds,
            "tools_per_tenant": tools,
            "tenant_limits": limits_json(&WELL_BEHAVED),
            "paced_requests_per_second_per_tenant": PACE,
            "without_noisy": quiet.json(args, &names),
        });
        if let (Some(l), Some(r)) = (&loud, ratio) {
            report["with_noisy"] = l.json(args, &names);
            report["p99_ratio"] = json!(round(r, 100.0));
        }
        return crate::emit(&serde_json::to_string_pretty(&report)?);
    }
    let share = if per_tenant.iter().all(|&n| n == per_tenant[0]) {
        format!("{} a tenant", per_tenant[0])
    } else {
        format!("{per_tenant:?} a tenant")
    };
    let mut text = format!(
        "{tenants} tenants, {} clients ({share}), {} s a run; each tenant's bundle holds {tools} \
         tools and its clients send at most {PACE:.0} requests/s together (its limit: {}/s, burst {})\n\
         without the noisy tenant: {}",
        args.clients,
        args.seconds,
        WELL_BEHAVED.requests_per_second,
        WELL_BEHAVED.burst,
        quiet.line(args, &names),
    );
    if let (Some(l), Some(r)) = (&loud, ratio) {
        text.push_str(&format!(
            "\nwith the noisy tenant:    {}",
            l.line(args, &names)
        ));
        if let Some(n) = &l.noisy {
            text.push_str(&format!("\n{}", n.line()));
        }
        text.push_str(&format!(
            "\np99 of the other tenants with the noisy one / without: {r:.2} (target: at most 2)"
        ));
    }
    let last = loud.as_ref().unwrap_or(&quiet);
    text.push_str(&format!(
        "\nserver memory (RSS): {} KiB at the end, peak {} KiB",
        last.rss_end, last.peak
    ));
    crate::emit(text)
}

/// A few tools of the catalog the bench was given, besides the built-ins, as
/// `toolscout export --format jsonl` prints them (the callable ones, one per name).
fn source_specs(target: &Target) -> Result<Vec<ToolSpec>> {
    let mut args: Vec<String> = Vec::new();
    if let Some(c) = &target.catalog {
        args.extend(["--catalog".to_owned(), c.display().to_string()]);
    }
    args.push("--words-only".to_owned());
    args.extend(["export", "--format", "jsonl"].map(str::to_owned));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = target.output(&args)?;
    let text = String::from_utf8_lossy(&out);
    let mut specs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let spec = toolscout_spec::adapters::jsonl::from_line(line, i + 1)
            .with_context(|| "reading the catalog's tools from `toolscout export`")?;
        if builtin::tool(spec.name.as_str()).is_none() {
            specs.push(spec);
        }
        if specs.len() == COPIED {
            break;
        }
    }
    Ok(specs)
}

/// Makes the catalog in `dir`: the well-behaved tenants `t1`…, then `noisy` when asked,
/// each with its bundle. Returns them and how many tools each bundle holds.
fn seed(
    dir: &Path,
    copied: &[ToolSpec],
    tenants: usize,
    noisy: bool,
) -> Result<(Vec<BenchTenant>, usize)> {
    let catalog = Catalog::open_with(
        dir,
        CatalogOptions::default().with_natives(&builtin::NATIVE_FUNCTIONS),
    )
    .with_context(|| format!("making the bench's catalog in {}", dir.display()))?;
    let mut names: Vec<(String, TenantLimits)> = (1..=tenants)
        .map(|i| (format!("t{i}"), WELL_BEHAVED))
        .collect();
    if noisy {
        names.push((NOISY_NAME.to_owned(), NOISY));
    }
    let mut out = Vec::new();
    let mut tools = 0;
    for (name, limits) in names {
        let (tenant, token) = catalog.operator().add_tenant(&name, limits)?;
        let bundle = Uuid::now_v7();
        catalog.put_bundle(
            bundle,
            &BundlePut::new(format!("{name}-tools"))
                .with_description(format!("Tenant {name}'s copies of a few tools.")),
        )?;
        let puts = tenant_tools(&name, copied)?;
        tools = puts.len();
        catalog
            .put_tools(bundle, puts)
            .with_context(|| format!("adding tenant {name}'s tools"))?;
        catalog
            .operator()
            .set_bundle_owner(bundle, Some(tenant.id))?;
        out.push(BenchTenant {
            name,
            token: token.reveal().to_owned(),
        });
    }
    Ok((out, tools))
}

/// The tools of tenant `name`'s bundle, as (slug, version, put): the built-ins and
/// `copied`, each renamed `<name>_<tool>`. A copy whose new name is too long is left out.
fn tenant_tools(name: &str, copied: &[ToolSpec]) -> Result<Vec<(String, String, ToolPut)>> {
    let renamed = |spec: &ToolSpec| -> Result<ToolSpec> {
        let mut spec = spec.clone();
        spec.name = ToolName::new(format!("{name}_{}", spec.name.as_str()))?;
        spec.title = spec.title.map(|t| format!("{t} ({name})"));
        Ok(spec)
    };
    let mut puts = Vec::new();
    for tool in builtin::bundles().into_iter().flat_map(|b| b.tools) {
        let spec = renamed(&tool.spec)?;
        let put = if CALLED.contains(&tool.func()) {
            ToolPut::native(spec, tool.func())
        } else {
            ToolPut::spec_only(spec)
        };
        puts.push((tool.slug, "1".to_owned(), put));
    }
    for (k, spec) in copied.iter().enumerate() {
        if let Ok(spec) = renamed(spec) {
            puts.push((
                format!("copy-{k}"),
                "1".to_owned(),
                ToolPut::spec_only(spec),
            ));
        }
    }
    Ok(puts)
}

/// Checks, before the load, that each tenant's manifest lists its own tools and no other
/// tenant's: a bench of views that leak would measure the wrong thing.
async fn check_views(client: &reqwest::Client, addr: &str, tenants: &[BenchTenant]) -> Result<()> {
    for t in tenants {
        let manifest: Value = client
            .get(format!("http://{addr}/api/v1/tools"))
            .bearer_auth(&t.token)
            .send()
            .await?
            .error_for_status()
            .with_context(|| format!("reading tenant {}'s manifest", t.name))?
            .json()
            .await?;
        let names: Vec<&str> = manifest["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        let own = format!("{}_json_query", t.name);
        if !names.contains(&own.as_str()) {
            bail!(
                "tenant {}'s manifest does not list its own {own}: {names:?}",
                t.name
            );
        }
        for other in tenants.iter().filter(|o| o.name != t.name) {
            let prefix = format!("{}_", other.name);
            if let Some(n) = names.iter().find(|n| n.starts_with(&prefix)) {
                bail!(
                    "tenant {}'s manifest lists tenant {}'s tool {n}",
                    t.name,
                    other.name
                );
            }
        }
    }
    Ok(())
}

/// What one well-behaved client saw.
#[derive(Default)]
struct ClientTally {
    tenant: usize,
    latencies: Vec<Duration>,
    errors: u64,
    limited: u64,
    first_error: Option<String>,
}

/// What the noisy tenant's clients saw.
#[derive(Default)]
struct NoisyTally {
    clients: usize,
    ok: u64,
    limited: u64,
    other: u64,
    first_other: Option<String>,
}

impl NoisyTally {
    fn json(&self, seconds: u64) -> Value {
        json!({
            "tenant": NOISY_NAME,
            "clients": self.clients,
            "limits": limits_json(&NOISY),
            "ok": self.ok,
            "rate_limited": self.limited,
            "other": self.other,
            "first_other": self.first_other,
            "ok_per_second": round(self.ok as f64 / seconds as f64, 10.0),
        })
    }

    fn line(&self) -> String {
        format!(
            "  noisy tenant ({} clients, limit {}/s, burst {}, Retry-After ignored): {} answered 200, \
             {} refused 429, {} other{}",
            self.clients,
            NOISY.requests_per_second,
            NOISY.burst,
            self.ok,
            self.limited,
            self.other,
            self.first_other
                .as_ref()
                .map(|e| format!(" (first: {e})"))
                .unwrap_or_default()
        )
    }
}

/// The well-behaved tenants' figures of one run.
struct Figures {
    requests: u64,
    p50: f64,
    p99: f64,
    errors: u64,
    limited: u64,
    first_error: Option<String>,
    /// Per tenant: clients, requests, p99 (ms), errors.
    per_tenant: Vec<(usize, u64, f64, u64)>,
}

/// One run: the well-behaved tenants' figures, the noisy tenant's, the server's memory.
struct Run {
    figures: Figures,
    noisy: Option<NoisyTally>,
    rss_end: u64,
    peak: u64,
}

impl Run {
    fn json(&self, args: &ServeArgs, names: &[&str]) -> Value {
        let f = &self.figures;
        let mut out = json!({
            "requests": f.requests,
            "requests_per_second": round(f.requests as f64 / args.seconds as f64, 10.0),
            "p50_ms": round(f.p50, 100.0),
            "p99_ms": round(f.p99, 100.0),
            "errors": f.errors,
            "rate_limited": f.limited,
            "first_error": f.first_error,
            "per_tenant": f.per_tenant.iter().zip(names).map(|((clients, requests, p99, errors), name)| json!({
                "tenant": name,
                "clients": clients,
                "requests": requests,
                "p99_ms": round(*p99, 100.0),
                "errors": errors,
            })).collect::<Vec<_>>(),
            "server_rss_kib": {"end": self.rss_end, "peak": self.peak},
        });
        if let Some(n) = &self.noisy {
            out["noisy_tenant"] = n.json(args.seconds);
        }
        out
    }

    fn line(&self, args: &ServeArgs, names: &[&str]) -> String {
        let f = &self.figures;
        let errors = match (f.errors, &f.first_error) {
            (0, _) | (_, None) => format!("{} errors", f.errors),
            (n, Some(first)) => format!("{n} errors ({} of them 429; first: {first})", f.limited),
        };
        let per_tenant: Vec<String> = f
            .per_tenant
            .iter()
            .zip(names)
            .map(|((_, _, p99, _), name)| format!("{name} {p99:.2}"))
            .collect();
        format!(
            "{} requests, {:.1}/s, p50 {:.2} ms, p99 {:.2} ms, {errors}\n  p99 per tenant (ms): {}",
            f.requests,
            f.requests as f64 / args.seconds as f64,
            f.p50,
            f.p99,
            per_tenant.join(", ")
        )
    }
}

/// Runs the well-behaved tenants' clients (and `noisy`'s, when given) for `args.seconds`.
async fn load(
    args: &ServeArgs,
    client: &reqwest::Client,
    addr: &str,
    tenants: &[BenchTenant],
    noisy: Option<&BenchTenant>,
    pid: u32,
) -> Run {
    let start = Instant::now();
    let deadline = start + Duration::from_secs(args.seconds);
    let share = |t: usize| (0..args.clients).filter(|i| i % tenants.len() == t).count();
    let mut tasks = Vec::new();
    for i in 0..args.clients {
        let tenant = i % tenants.len();
        let caller = tenants[tenant].caller();
        // The tenant's clients share its pace; their starts are spread over a period, so
        // that the clients do not send in step.
        let period = Duration::from_secs_f64(share(tenant) as f64 / PACE);
        let first = start + period.mul_f64(i as f64 / args.clients as f64);
        let (client, addr) = (client.clone(), addr.to_owned());
        tasks.push(tokio::spawn(async move {
            let mut tally = paced_client(i, &client, &addr, &caller, first, period, deadline).await;
            tally.tenant = tenant;
            tally
        }));
    }
    let noisy_tasks: Vec<_> = noisy
        .map(|n| {
            (0..share(0).max(1))
                .map(|i| {
                    let (client, addr, caller) = (client.clone(), addr.to_owned(), n.caller());
                    tokio::spawn(
                        async move { noisy_client(i, &client, &addr, &caller, deadline).await },
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let mut tallies = Vec::new();
    for t in tasks {
        if let Ok(tally) = t.await {
            tallies.push(tally);
        }
    }
    let noisy = if noisy.is_some() {
        let mut all = NoisyTally::default();
        for t in noisy_tasks {
            if let Ok(n) = t.await {
                all.clients += 1;
                all.ok += n.ok;
                all.limited += n.limited;
                all.other += n.other;
                if all.first_other.is_none() {
                    all.first_other = n.first_other;
                }
            }
        }
        Some(all)
    } else {
        None
    };
    let (rss_end, peak) = memory(pid).unwrap_or((0, 0));
    Run {
        figures: figures(&tallies, tenants.len(), share),
        noisy,
        rss_end,
        peak,
    }
}

/// The well-behaved figures of `tallies`, overall and per tenant.
fn figures(tallies: &[ClientTally], tenants: usize, share: impl Fn(usize) -> usize) -> Figures {
    let sorted = |of: &mut dyn Iterator<Item = &ClientTally>| {
        let mut l: Vec<Duration> = of.flat_map(|t| t.latencies.iter().copied()).collect();
        l.sort_unstable();
        l
    };
    let all = sorted(&mut tallies.iter());
    let errors = |of: &mut dyn Iterator<Item = &ClientTally>| of.map(|t| t.errors).sum::<u64>();
    let per_tenant = (0..tenants)
        .map(|t| {
            let mine = sorted(&mut tallies.iter().filter(|c| c.tenant == t));
            let e = errors(&mut tallies.iter().filter(|c| c.tenant == t));
            (share(t), mine.len() as u64 + e, pct(&mine, 0.99), e)
        })
        .collect();
    let errors = errors(&mut tallies.iter());
    Figures {
        requests: all.len() as u64 + errors,
        p50: pct(&all, 0.50),
        p99: pct(&all, 0.99),
        errors,
        limited: tallies.iter().map(|t| t.limited).sum(),
        first_error: tallies.iter().find_map(|t| t.first_error.clone()),
        per_tenant,
    }
}

/// The `p` quantile of sorted latencies, in milliseconds.
fn pct(sorted: &[Duration], p: f64) -> f64 {
    sorted
        .get(((sorted.len() as f64 * p) as usize).min(sorted.len().saturating_sub(1)))
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// A well-behaved client: `serve`'s rotation, one request every `period` at most
/// from `first` on, until `deadline`. A late request delays the next ones; they never
/// catch up in a burst.
async fn paced_client(
    i: usize,
    client: &reqwest::Client,
    addr: &str,
    caller: &Caller,
    first: Instant,
    period: Duration,
    deadline: Instant,
) -> ClientTally {
    let mut ticks = tokio::time::interval_at(first.into(), period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut tally = ClientTally::default();
    let mut n = i;
    loop {
        ticks.tick().await;
        if Instant::now() >= deadline {
            break;
        }
        n += 1;
        let started = Instant::now();
        match one_request(client, addr, caller, n).await {
            Ok(()) => tally.latencies.push(started.elapsed()),
            Err(e) => {
                tally.errors += 1;
                if e.status == Some(StatusCode::TOO_MANY_REQUESTS) {
                    tally.limited += 1;
                }
                tally.first_error.get_or_insert(e.message);
            }
        }
    }
    tally
}

/// A noisy client: the same rotation as fast as it goes, whatever the answers say.
async fn noisy_client(
    i: usize,
    client: &reqwest::Client,
    addr: &str,
    caller: &Caller,
    deadline: Instant,
) -> NoisyTally {
    let mut tally = NoisyTally::default();
    let mut n = i;
    while Instant::now() < deadline {
        n += 1;
        match one_request(client, addr, caller, n).await {
            Ok(()) => tally.ok += 1,
            Err(e) if e.status == Some(StatusCode::TOO_MANY_REQUESTS) => tally.limited += 1,
            Err(e) => {
                tally.other += 1;
                tally.first_other.get_or_insert(e.message);
            }
        }
    }
    tally
}

fn limits_json(limits: &TenantLimits) -> Value {
    json!({"requests_per_second": limits.requests_per_second, "burst": limits.burst})
}

fn round(x: f64, by: f64) -> f64 {
    (x * by).round() / by
}
