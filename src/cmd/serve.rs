//! `toolscout serve`: the catalog over HTTP (manifest, REST, JSON-RPC, MCP) or MCP over stdio.

use std::net::SocketAddr;

use anyhow::{Context as _, Result, bail};
use toolscout_server::console::{ChatSettings, Console};
use toolscout_server::{
    AnonymousReads, AppState, ConnectionLimits, Expose, HostCheck, ServerOptions,
};

use super::agent_opts::SubagentArgs;
use super::context::{Context, Global, Remotes, connect_remotes};

/// How often the remote catalogs are checked; each is read again only once its manifest
/// is stale (its `max-age`).
const REMOTE_REFRESH: std::time::Duration = std::time::Duration::from_secs(15);

/// Which tools MCP clients see.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ExposeArg {
    /// `discover_tools` and `call_tool`: the whole catalog through two tools.
    Discover,
    /// Every callable tool, listed with pagination.
    All,
}

/// What a `GET` read without a token sees, on a server with a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AnonymousReadsArg {
    /// Every tool while the catalog has no tenant; from the first tenant on, only the
    /// shared and built-in tools (decided at each request).
    Auto,
    /// Only the shared and built-in tools, tenants or not.
    Public,
    /// Nothing: every request needs a token, the GET reads too.
    Off,
}

impl From<AnonymousReadsArg> for AnonymousReads {
    fn from(arg: AnonymousReadsArg) -> Self {
        match arg {
            AnonymousReadsArg::Auto => AnonymousReads::Auto,
            AnonymousReadsArg::Public => AnonymousReads::Public,
            AnonymousReadsArg::Off => AnonymousReads::Off,
        }
    }
}

/// Transports for MCP besides HTTP.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Mcp {
    /// MCP over stdin and stdout (for clients that start the server themselves).
    Stdio,
}

/// Arguments of `serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:7411")]
    addr: SocketAddr,
    /// The server's own bearer token, which sees and may change everything (default:
    /// $TOOLSCOUT_TOKEN; without either, a random token is made at start-up and printed).
    /// Every request but the GET reads must carry it or a tenant's token (`toolscout
    /// tenant`); see --anonymous-reads for the GET reads.
    #[arg(long, env = "TOOLSCOUT_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Serve without a token: anyone who reaches the port may change the catalog and
    /// call every tool. Refused with --public.
    #[arg(long, conflicts_with = "token")]
    no_auth: bool,
    /// What a GET read (manifest, listings, search) without a token sees: `auto`, every
    /// tool until the catalog has a tenant, then only the shared and built-in ones;
    /// `public`, only those; `off`, nothing (401).
    #[arg(long, value_enum, default_value = "auto", conflicts_with = "no_auth")]
    anonymous_reads: AnonymousReadsArg,
    /// Listen on an address other than loopback (then any Host name is accepted, and the
    /// token is the guard: a --token or $TOOLSCOUT_TOKEN given must hold 256 bits, e.g.
    /// 64 random hexadecimal digits).
    #[arg(long)]
    public: bool,
    /// Serve MCP over stdio instead of HTTP.
    #[arg(long, value_enum)]
    mcp: Option<Mcp>,
    /// What MCP clients see.
    #[arg(long, value_enum, default_value = "discover")]
    expose: ExposeArg,
    /// With `--expose discover`: how many tools an MCP session may activate, that is add
    /// to its tools list once it has described them or found them at the top of a search
    /// (least recently used evicted first; 0: none).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(0..=128))]
    activation_cap: u16,
    /// With `--expose discover`: how many of the best hits of a `discover_tools` search an
    /// MCP session activates (0: none).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(0..=128))]
    search_activations: u16,
    /// Most connections open at once; past it the idle connection accepted first is
    /// closed for a new one. A connection must send a request's head within 10 s (also
    /// between requests), and a request body may stall 30 s at most.
    #[arg(long, default_value_t = toolscout_server::DEFAULT_MAX_CONNECTIONS as u32, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    max_connections: u32,
    /// Most `GET /api/v1/events` streams open at once (503 with Retry-After past it);
    /// at most half of --max-connections.
    #[arg(long, default_value_t = (toolscout_server::DEFAULT_MAX_CONNECTIONS / 2) as u32, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    event_streams: u32,
    /// How long a stopping server (SIGINT, SIGTERM) lets the requests in flight finish,
    /// in seconds; then they are cancelled (a recipe's run with them).
    #[arg(long, value_name = "SECONDS", default_value_t = 10, value_parser = clap::value_parser!(u16).range(0..=3600))]
    shutdown_grace: u16,
    #[command(flatten)]
    remotes: Remotes,
    #[command(flatten)]
    chat: ChatArgs,
}

/// The OpenAI-compatible endpoint of the web console's chat.
#[derive(Debug, clap::Args)]
struct ChatArgs {
    /// Model of the console's chat (default: $TOOLSCOUT_MODEL); without it the chat says
    /// that no endpoint is configured.
    #[arg(long, env = "TOOLSCOUT_MODEL")]
    model: Option<String>,
    /// Base URL of the chat's OpenAI-compatible endpoint, with its version (default: $OPENAI_BASE_URL).
    #[arg(
        long,
        env = "OPENAI_BASE_URL",
        default_value = "https://api.openai.com/v1"
    )]
    base_url: String,
    /// API key of the chat's endpoint (default: $OPENAI_API_KEY; may be empty for local servers).
    #[arg(
        long,
        env = "OPENAI_API_KEY",
        default_value = "",
        hide_env_values = true
    )]
    api_key: String,
    /// Model requests per chat turn before giving up.
    #[arg(long, default_value_t = 16)]
    max_steps: u32,
    #[command(flatten)]
    subagents: SubagentArgs,
}

pub(crate) fn run(args: &Args, global: &Global) -> Result<()> {
    if !args.addr.ip().is_loopback() && !args.public && args.mcp.is_none() {
        bail!(
            "{} is not a loopback address: pass --public to serve the catalog to other machines (and --token to guard changes)",
            args.addr
        );
    }
    if args.public && args.no_auth {
        bail!(
            "--public with --no-auth would let anyone on the network change the catalog and call every tool; drop --no-auth (a token is made and printed) or give --token"
        );
    }
    let subagents = match (&args.chat.model, &args.chat.subagents.file) {
        (Some(model), _) => args.chat.subagents.subagents(model, true)?,
        (None, Some(file)) => bail!(
            "--agents {}: the agents are the console chat's, which needs --model (or $TOOLSCOUT_MODEL)",
            file.display()
        ),
        (None, None) => Vec::new(),
    };
    let sources = args.remotes.sources()?;
    if args.mcp.is_none() {
        args.remotes.check_not_self(args.addr)?;
    }
    let toolbox = Context::open_with_remotes(global, &sources)?
        .with_approver(super::approve::TerminalApprover::server(&global.approve)?)?
        .into_toolbox()?;
    raise_open_files(args.max_connections as usize);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let remote = runtime.block_on(connect_remotes(&toolbox, &sources))?;
    let tools = toolbox.callable_heads().len();
    let token = match (&args.token, args.no_auth || args.mcp.is_some()) {
        (Some(t), _) if !t.is_empty() => Some(t.clone()),
        (_, true) => None,
        _ => Some(random_token()?),
    };
    if args.public
        && let (Some(t), Some(_)) = (&token, &args.token)
    {
        check_public_token(t)?;
    }
    let options = ServerOptions::default()
        .with_token(token.as_deref())
        .with_anonymous_reads(args.anonymous_reads.into())
        .with_host_check(if args.public {
            HostCheck::Off
        } else {
            HostCheck::Loopback
        })
        .with_expose(match args.expose {
            ExposeArg::Discover => Expose::Discover,
            ExposeArg::All => Expose::All,
        })
        .with_connection_limits(
            ConnectionLimits::default()
                .with_max_connections(args.max_connections as usize)
                .with_shutdown_grace(std::time::Duration::from_secs(u64::from(
                    args.shutdown_grace,
                ))),
        )
        .with_event_streams(args.event_streams as usize)
        .with_activation_cap(usize::from(args.activation_cap))
        .with_search_activations(usize::from(args.search_activations))
        .with_base_url(Some(&format!("http://{}", args.addr)));
    let state = match remote {
        Some(remote) => {
            let _guard = runtime.enter();
            // The task lives as long as the runtime, that is as long as the server.
            drop(remote.spawn_follow(REMOTE_REFRESH));
            AppState::with_remote(toolbox, options, remote)
        }
        None => AppState::new(toolbox, options),
    };
    if args.mcp.is_some() {
        eprintln!("serving MCP over stdio ({tools} tools)");
        let served = runtime
            .block_on(toolscout_server::serve_stdio(state))
            .context("serving MCP over stdio");
        runtime.shutdown_timeout(BLOCKING_GRACE);
        return served;
    }
    let tenants = state
        .toolbox()
        .catalog()
        .tenants()
        .iter()
        .filter(|t| t.is_live())
        .count();
    let reads = match (args.anonymous_reads, tenants) {
        (AnonymousReadsArg::Off, _) => "every request, GET reads too",
        (AnonymousReadsArg::Auto, 0) => "every request but GET reads",
        _ => {
            "every request but GET reads (which without a token see only the shared and built-in tools)"
        }
    };
    match (&token, &args.token) {
        (Some(t), None) => eprintln!(
            "token: {t}\n  (made for this run: send Authorization: Bearer <token> with {reads}; choose one with --token or $TOOLSCOUT_TOKEN)"
        ),
        (None, _) => eprintln!(
            "warning: no token (--no-auth): anyone who reaches {} can change the catalog and call every tool",
            args.addr
        ),
        _ => {}
    }
    if token.is_some() && tenants > 0 {
        let anonymous = match args.anonymous_reads {
            AnonymousReadsArg::Off => "need a token too",
            _ => "see only the shared and built-in tools",
        };
        eprintln!(
            "{tenants} tenant(s): each sends a token of its own (`toolscout tenant token add`) and sees its own, the shared and the built-in tools; GET reads without a token {anonymous}; the server's token sees everything"
        );
    }
    let served = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.addr)
            .await
            .with_context(|| format!("binding {}", args.addr))?;
        let addr = listener.local_addr()?;
        eprintln!(
            "serving {tools} tools on http://{addr} (console at /, GET /api/v1/tools, POST /rpc, /mcp)"
        );
        let chat = args.chat.model.as_deref().map(|model| {
            ChatSettings::new(&args.chat.base_url, &args.chat.api_key, model)
                .with_max_steps(args.chat.max_steps)
                .with_subagents(subagents)
        });
        let console = Console::default().with_chat(chat);
        let reaper = tokio::spawn(reap_every(state.toolbox().clone(), REAP_INTERVAL));
        // Other processes' writes reach the index, the MCP sessions and the event feed
        // as soon as the store announces them, not at the next request; an audit that
        // finds the index out of line with the catalog mends it and says so.
        let follower = state.toolbox().follow_reporting(|audit| {
            note(&format!(
                "search index audit at generation {}: {} tool(s) indexed again, {} dropped (an update was lost; mended)",
                audit.generation, audit.repaired, audit.removed
            ));
        });
        let served =
            toolscout_server::console::serve_until(listener, state, console, shutdown_signal())
                .await
                .context("serving");
        reaper.abort();
        drop(follower);
        if served.is_ok() {
            note("stopped; usage counts written");
        }
        served
    });
    // A blocking task still running (a tool call whose caller timed out) must not keep
    // the process alive: dropping the runtime would wait for it without end.
    runtime.shutdown_timeout(BLOCKING_GRACE);
    served
}

/// How long a stopping server waits for blocking work (tool calls past their timeout)
/// once the requests are done.
const BLOCKING_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// How often `serve` reaps deleted bundles (and once at start).
const REAP_INTERVAL: std::time::Duration = std::time::Duration::from_secs(3600);

/// Runs [`Catalog::reap`](toolscout_catalog::Catalog::reap) now and then every
/// `interval`, off the async threads; a failure is logged, not fatal.
async fn reap_every(toolbox: toolscout_discover::Toolbox, interval: std::time::Duration) {
    let mut ticks = tokio::time::interval(interval);
    loop {
        ticks.tick().await;
        let toolbox = toolbox.clone();
        let reaped = tokio::task::spawn_blocking(move || {
            toolbox.catalog().operator().reap(chrono::Utc::now())
        })
        .await;
        match reaped {
            Ok(Ok(removed)) if !removed.is_empty() => {
                note(&format!("reaped {} deleted bundle(s)", removed.len()));
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => note(&format!("warning: reaping deleted bundles failed: {e}")),
            Err(e) => note(&format!("warning: reaping deleted bundles stopped: {e}")),
        }
    }
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM, saying that the server is stopping.
async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
    note("stopping: finishing the requests in flight, then writing usage counts");
}

/// Raises the soft limit of open files toward the hard one, so that `connections` and
/// the catalog's own files fit (a server that runs out of descriptors refuses
/// connections, however idle its others are); says so when it cannot.
fn raise_open_files(connections: usize) {
    #[cfg(unix)]
    {
        use nix::sys::resource::{Resource, getrlimit, setrlimit};
        let wanted = (connections as u64).saturating_mul(2).saturating_add(256);
        let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
            return;
        };
        if soft >= wanted {
            return;
        }
        let raised = wanted.min(hard);
        if setrlimit(Resource::RLIMIT_NOFILE, raised, hard).is_err() || raised < wanted {
            note(&format!(
                "warning: at most {} files may be open (ulimit -n) for {connections} connections; \
                 lower --max-connections or raise the limit",
                raised.max(soft)
            ));
        }
    }
    #[cfg(not(unix))]
    let _ = connections;
}

/// A line on stderr for the person who started the server. Unlike `eprintln!`, a
/// stderr that was closed (a supervisor gone, `serve 2>&-`) is not a panic: the server
/// must still shut down cleanly and write its usage counts.
fn note(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// A token of 256 random bits from the operating system's generator, as 64 hexadecimal
/// digits.
fn random_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("making a random token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The fewest bits a token of a `--public` server must hold (32 bytes).
const PUBLIC_TOKEN_BITS: f64 = 256.0;
/// The fewest different characters such a token must have.
const PUBLIC_TOKEN_DISTINCT: usize = 16;

/// How many bits `token` holds at most, estimated as its length times the bits of the
/// smallest alphabet it is written in: hexadecimal digits (4 bits), else the classes it
/// uses (lower case 26, upper case 26, digits 10, anything else 33 letters).
///
/// **Rationale:** a person's password reads as far more than it holds; this estimate
/// cannot tell, but it does refuse what is short, and with [`PUBLIC_TOKEN_DISTINCT`]
/// what repeats a few characters. What `serve` makes (64 hexadecimal digits of 32
/// random bytes) passes it.
fn token_bits(token: &str) -> f64 {
    let alphabet = if !token.is_empty() && token.chars().all(|c| c.is_ascii_hexdigit()) {
        16
    } else {
        let has = |f: fn(&char) -> bool| token.chars().any(|c| f(&c));
        [
            (has(char::is_ascii_lowercase), 26),
            (has(char::is_ascii_uppercase), 26),
            (has(char::is_ascii_digit), 10),
            (has(|c| !c.is_ascii_alphanumeric()), 33),
        ]
        .iter()
        .filter(|(present, _)| *present)
        .map(|(_, n)| n)
        .sum()
    };
    token.chars().count() as f64 * f64::from(alphabet.max(1)).log2()
}

/// Refuses the token of a `--public` server when it is too weak to be its only guard
/// (see [`token_bits`]); the message never quotes it.
fn check_public_token(token: &str) -> Result<()> {
    let bits = token_bits(token);
    let distinct = token
        .chars()
        .collect::<std::collections::HashSet<_>>()
        .len();
    if bits < PUBLIC_TOKEN_BITS || distinct < PUBLIC_TOKEN_DISTINCT {
        bail!(
            "--public needs a token of at least {PUBLIC_TOKEN_BITS} bits, the only guard of a server others reach: the one given (--token or $TOOLSCOUT_TOKEN) is {} character(s) long, {distinct} different, about {} bits; give 64 random hexadecimal digits (e.g. `openssl rand -hex 32`), or none and one is made",
            token.chars().count(),
            bits.floor()
        );
    }
    Ok(())
}
