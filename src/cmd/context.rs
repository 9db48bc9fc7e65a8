//! What every catalog command starts from: the catalog directory, the invoker with the
//! built-in native tools, and (for search, calls and serving) a [`Toolbox`]; for `serve`
//! and `chat`, the remote catalogs (`--remote`) whose tools join it.

use std::hash::Hasher as _;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use toolscout_catalog::{Catalog, CatalogOptions, Tool, ToolHead};
use toolscout_discover::Toolbox;
use toolscout_invoke::builtin::BuiltinConfig;
use toolscout_invoke::{AllowedHosts, HttpConfig, Invoker, SecretStore};
use toolscout_remote::{RemoteCatalog, RemoteSource, SourceStatus};
use toolscout_search::{Embedder, SearchIndex};

/// Catalogs with at least this many tools get a progress spinner while they are indexed.
const LARGE_CATALOG: usize = 5_000;

/// Options every command shares.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct Global {
    /// The catalog directory (default: $TOOLSCOUT_HOME, else $XDG_DATA_HOME/toolscout,
    /// else ~/.local/share/toolscout). The built-in tools are always there.
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) catalog: Option<PathBuf>,
    /// Keep the catalog in this PostgreSQL database instead
    /// (`postgres://user:password@host:port/database`): every process that opens the same
    /// database shares one catalog. The catalog directory then holds only this process's
    /// own files (the heads snapshot, the search index, `mcp-servers.json`).
    #[cfg(feature = "postgres")]
    #[arg(
        long,
        global = true,
        env = "TOOLSCOUT_DATABASE_URL",
        hide_env_values = true,
        value_name = "URL",
        value_parser = StoreUrlParser
    )]
    pub(crate) store: Option<StoreUrl>,
    /// The directory the file tools may touch (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,
    /// A host `http_get` and HTTP tools may reach, e.g. `api.github.com`,
    /// `*.example.com`, or with a port, `localhost:8080` (repeatable). Without a port only
    /// 80 and 443 are allowed; `host:*` allows any port.
    #[arg(long = "allow-host", global = true, value_name = "HOST")]
    pub(crate) allow_hosts: Vec<String>,
    /// Let the allowed hosts resolve to loopback and private addresses (local services).
    #[arg(long, global = true)]
    pub(crate) allow_private: bool,
    /// The longest any one tool call may run, a recipe's whole run included, in seconds,
    /// whatever a tool's `timeout_seconds` says.
    #[arg(long, global = true, value_name = "SECONDS", default_value_t = 600,
        value_parser = clap::value_parser!(u32).range(1..=86_400))]
    pub(crate) max_call_seconds: u32,
    /// Approve every call of TOOL, a tool that requires approval, without asking
    /// (repeatable; `call`, `chat` and `serve`): `bundle/tool` (e.g. `files/write-file`),
    /// `tenant:bundle/tool` for a tenant's tool, or a bare name (`write_file`), which
    /// names only your own and the built-in tools of that name, never a tenant's.
    #[arg(
        id = "approve_tools",
        long = "approve",
        global = true,
        value_name = "TOOL"
    )]
    pub(crate) approve: Vec<String>,
    #[command(flatten)]
    pub(crate) meaning: MeaningArgs,
    #[command(flatten)]
    pub(crate) secrets: SecretArgs,
}

/// The `--store` URL; its `Debug` leaves the password out (the URL is never printed).
#[cfg(feature = "postgres")]
#[derive(Clone)]
pub(crate) struct StoreUrl(pub(crate) String);

#[cfg(feature = "postgres")]
impl StoreUrl {
    /// The URL of `--store` (or `$TOOLSCOUT_DATABASE_URL`), trimmed of white space; an
    /// error names it with its password replaced ([`redacted_url`]).
    fn parse(s: &str) -> std::result::Result<StoreUrl, String> {
        let url = s.trim();
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(StoreUrl(url.to_owned()));
        }
        let why = if url.contains("://") {
            "is a URL of another database or driver"
        } else if url.contains('=') {
            "is a key=value connection string, which is not read"
        } else {
            "is not a URL"
        };
        Err(format!(
            "--store {:?} {why}: expected a PostgreSQL URL, postgres://user:password@host:port/database",
            redacted_url(url)
        ))
    }
}

/// clap's parser of [`StoreUrl`]. **Rationale:** clap's own error for a value a parser
/// refuses quotes the value whole ("invalid value '…' for '--store <URL>'"), password
/// and all, even when the value came from `$TOOLSCOUT_DATABASE_URL`; this one says only
/// what [`StoreUrl::parse`] says.
#[cfg(feature = "postgres")]
#[derive(Debug, Clone, Copy)]
struct StoreUrlParser;

#[cfg(feature = "postgres")]
impl clap::builder::TypedValueParser for StoreUrlParser {
    type Value = StoreUrl;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> std::result::Result<StoreUrl, clap::Error> {
        let refuse = |why: String| {
            clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{why}\n"))
                .with_cmd(cmd)
        };
        let text = value
            .to_str()
            .ok_or_else(|| refuse("--store: the URL is not UTF-8 text".to_owned()))?;
        StoreUrl::parse(text).map_err(refuse)
    }
}

#[cfg(feature = "postgres")]
impl std::fmt::Debug for StoreUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoreUrl(<hidden>)")
    }
}

/// `text`, a database URL or connection string, with every password in it replaced by
/// `***`: the password of a URL's user (`scheme://user:***@host`), a query parameter or
/// a `key=value` word whose key names a password (`password=***`, `sslpassword=***`,
/// quoted values whole), and what lies between `:` and `@` in any other word
/// (`user:***@host`). What is left names the database for an error message.
pub(crate) fn redacted_url(text: &str) -> String {
    const HIDDEN: &str = "***";
    let is_password_key = |k: &str| {
        let k = k.trim().to_ascii_lowercase();
        k.contains("password") || k.contains("passwd") || k == "pass" || k == "pwd"
    };
    if let Ok(mut url) = url::Url::parse(text)
        && url.has_host()
    {
        let query_password = url.query_pairs().any(|(k, _)| is_password_key(&k));
        if url.password().is_none() && !query_password {
            // Nothing to hide: as it was written (the parser would normalise it).
            return text.to_owned();
        }
        if url.password().is_some() {
            let _ = url.set_password(Some(HIDDEN));
        }
        if query_password {
            let pairs: Vec<(String, String)> = url
                .query_pairs()
                .map(|(k, v)| {
                    let v = if is_password_key(&k) {
                        HIDDEN.to_owned()
                    } else {
                        v.into_owned()
                    };
                    (k.into_owned(), v)
                })
                .collect();
            url.query_pairs_mut().clear().extend_pairs(pairs);
        }
        return url.to_string().replace("%2A%2A%2A", HIDDEN);
    }
    // Not a URL with a host: a libpq `key=value` string, or something that only looks
    // like a URL. Word by word; a quoted password value runs to its closing quote.
    let mut out: Vec<String> = Vec::new();
    let mut words = text.split_whitespace();
    while let Some(word) = words.next() {
        match word.split_once('=') {
            Some((key, value)) if is_password_key(key) => {
                if let Some(rest) = value.strip_prefix('\'') {
                    let mut closed = rest.ends_with('\'') && !rest.is_empty();
                    while !closed {
                        match words.next() {
                            Some(w) => closed = w.ends_with('\''),
                            None => break,
                        }
                    }
                }
                out.push(format!("{key}={HIDDEN}"));
            }
            _ => match (word.find(':'), word.rfind('@')) {
                (Some(colon), Some(at)) if colon < at => {
                    let user_end = word[..at].rfind("//").map_or(colon, |slashes| {
                        word[slashes..at].find(':').map_or(at, |c| slashes + c)
                    });
                    out.push(format!("{}:{HIDDEN}{}", &word[..user_end], &word[at..]));
                }
                _ => out.push(word.to_owned()),
            },
        }
    }
    out.join(" ")
}

/// The prefix of the environment variables that hold secrets: `TOOLSCOUT_SECRET_API_KEY`
/// is the secret `API_KEY`.
pub(crate) const SECRET_PREFIX: &str = "TOOLSCOUT_SECRET_";

/// Secrets for the `${NAME}` placeholders of HTTP tools, and who may use them.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct SecretArgs {
    /// A JSON file of secrets, private to its owner (chmod 600): `{"NAME": {"value":
    /// "…", "hosts": ["api.example.com"], "tools": ["get_weather"]}}` (default:
    /// $TOOLSCOUT_SECRETS_FILE). Variables $TOOLSCOUT_SECRET_<NAME> add more.
    #[arg(
        long,
        global = true,
        env = "TOOLSCOUT_SECRETS_FILE",
        value_name = "FILE"
    )]
    pub(crate) secrets_file: Option<PathBuf>,
    /// Grants the secret NAME to requests to HOST (`api.example.com`, `*.example.com`,
    /// `localhost:8080`), e.g. `API_KEY=api.example.com` (repeatable).
    #[arg(
        id = "secret_hosts",
        long = "secret-host",
        global = true,
        value_name = "NAME=HOST"
    )]
    pub(crate) hosts: Vec<String>,
    /// Grants the secret NAME to the tool TOOL, e.g. `API_KEY=weather/get-weather`
    /// (`tenant:bundle/tool` for a tenant's tool; a bare name, `API_KEY=get_weather`,
    /// grants it to your own and the built-in tools of that name, never a tenant's)
    /// (repeatable).
    // The ids are explicit: a global flag's id must not be a subcommand's field name
    // (`eval agent --tools` would then fail to downcast at parse time).
    #[arg(
        id = "secret_tools",
        long = "secret-tool",
        global = true,
        value_name = "NAME=TOOL"
    )]
    pub(crate) tools: Vec<String>,
}

impl SecretArgs {
    /// The secrets of the file and of the `TOOLSCOUT_SECRET_` variables, with their grants.
    /// Every secret must be granted to a tool or a host: one that is not is an error
    /// that names it, not a secret any tool may use.
    pub(crate) fn store(&self) -> Result<SecretStore> {
        self.store_from(std::env::vars())
    }

    fn store_from(&self, vars: impl IntoIterator<Item = (String, String)>) -> Result<SecretStore> {
        let mut store = SecretStore::from_vars(SECRET_PREFIX, vars);
        if let Some(path) = &self.secrets_file {
            store.extend(
                SecretStore::from_file(path)
                    .with_context(|| format!("reading the secrets file {}", path.display()))?,
            );
        }
        for (flag, list, host) in [
            ("--secret-host", &self.hosts, true),
            ("--secret-tool", &self.tools, false),
        ] {
            for grant in list {
                let (name, target) = grant
                    .split_once('=')
                    .filter(|(n, t)| !n.is_empty() && !t.is_empty())
                    .ok_or_else(|| {
                        anyhow::anyhow!(
                            "{flag} {grant:?}: expected NAME=VALUE, e.g. API_KEY=api.example.com"
                        )
                    })?;
                if !store.contains(name) {
                    bail!(
                        "{flag} {grant:?}: there is no secret '{name}'; set $TOOLSCOUT_SECRET_{name} or put it in --secrets-file"
                    );
                }
                if host {
                    store.grant_host(name, target);
                } else {
                    toolscout_invoke::ToolSelector::parse(target)
                        .with_context(|| format!("{flag} {grant:?}"))?;
                    store.grant_tool(name, target);
                }
            }
        }
        let ungranted: Vec<&str> = store.names().filter(|n| !store.is_granted(n)).collect();
        if !ungranted.is_empty() {
            bail!(
                "the secret(s) {} are granted to no tool or host; grant each with --secret-host NAME=HOST or --secret-tool NAME=TOOL (or \"hosts\"/\"tools\" in the secrets file)",
                ungranted.join(", ")
            );
        }
        Ok(store)
    }
}

/// Ranking by meaning: which sentence encoder, if any.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct MeaningArgs {
    /// A sentence-encoder model directory (all-MiniLM-L6-v2, which
    /// `scripts/fetch-model.sh` fetches; any BERT-family sentence-transformers folder; or a
    /// model2vec static model), or `built-in` for the built-in potion-base-8M, that ranks
    /// searches by meaning too. Repeat it to mix models: their cosines are averaged.
    /// Default: the model in $TOOLSCOUT_MODEL_DIR (a directory without a model there means
    /// words only), else in ~/.cache/toolscout/models/all-MiniLM-L6-v2, mixed with the
    /// built-in one; without either, the built-in one alone
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) encoder: Vec<PathBuf>,
    /// Rank by words only, even when a model is there
    #[arg(long, global = true, conflicts_with = "encoder")]
    pub(crate) words_only: bool,
}

/// The `--encoder` value that names the built-in model.
const BUILT_IN: &str = "built-in";

impl MeaningArgs {
    /// The embedder these arguments ask for: `None` for words only (`--words-only`, or a
    /// `$TOOLSCOUT_MODEL_DIR` that holds no model). Without `--encoder`, a model in the
    /// default place mixed at equal weights with the built-in potion-base-8M (the two err
    /// on different tools; see [`toolscout_embed::Ensemble`]), else the built-in one alone.
    ///
    /// Each model's vector cache is
    /// `~/.cache/toolscout/vectors/<model>-<max tokens>[.<scope>].bin`: one file per
    /// catalog (`scope`, hashed), so that a command reads back the vectors of its own
    /// catalog and not those of every catalog ever embedded.
    pub(crate) fn embedder(&self, scope: Option<&Path>) -> Result<Option<Arc<dyn Embedder>>> {
        if self.words_only {
            return Ok(None);
        }
        let mut dirs: Vec<Option<PathBuf>> = self
            .encoder
            .iter()
            .map(|d| (d.as_os_str() != BUILT_IN).then(|| d.clone()))
            .collect();
        if dirs.is_empty() {
            match toolscout_embed::default_model_dir() {
                Some(d) if d.join("model.safetensors").exists() => dirs = vec![Some(d), None],
                // A model directory named but empty turns meaning off, as it always has.
                _ if std::env::var_os("TOOLSCOUT_MODEL_DIR").is_some_and(|d| !d.is_empty()) => {
                    return Ok(None);
                }
                _ => dirs = vec![None],
            }
        }
        let mut members: Vec<Arc<dyn Embedder>> = Vec::with_capacity(dirs.len());
        for dir in dirs {
            let encoder = match dir {
                Some(dir) => toolscout_embed::Encoder::load(&dir).with_context(|| {
                    format!(
                        "loading the sentence encoder from {} (scripts/fetch-model.sh fetches it)",
                        dir.display()
                    )
                })?,
                None => toolscout_embed::Encoder::bundled()
                    .context("loading the built-in sentence encoder")?,
            };
            members.push(cached(encoder, scope)?);
        }
        if members.len() == 1 {
            return Ok(members.pop());
        }
        let ensemble =
            toolscout_embed::Ensemble::new(members.into_iter().map(|m| (m, 1.0)).collect())
                .context("mixing the sentence encoders")?;
        Ok(Some(Arc::new(ensemble)))
    }
}

/// `encoder` behind its vector cache for `scope`'s catalog (see
/// [`MeaningArgs::embedder`]), or alone without a home directory.
fn cached(encoder: toolscout_embed::Encoder, scope: Option<&Path>) -> Result<Arc<dyn Embedder>> {
    let cache =
        toolscout_embed::CachedEncoder::default_cache_file(encoder.model(), encoder.max_tokens())
            .map(|file| match scope {
                Some(scope) => {
                    let scope = scope.canonicalize().unwrap_or_else(|_| scope.to_path_buf());
                    file.with_extension(format!(
                        "{:016x}.bin",
                        fnv1a(scope.as_os_str().as_encoded_bytes())
                    ))
                }
                None => file,
            });
    Ok(match cache {
        Some(file) => Arc::new(
            toolscout_embed::CachedEncoder::open(encoder, &file)
                .with_context(|| format!("opening the vector cache {}", file.display()))?,
        ),
        None => Arc::new(encoder),
    })
}

/// 64-bit FNV-1a: a stable name for a path.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = fnv::FnvHasher::default();
    h.write(bytes);
    h.finish()
}

impl Global {
    /// The catalog directory, created when missing.
    /// Where the catalog is, for messages: the database (no password) or the directory.
    pub(crate) fn store_name(&self, dir: &Path) -> String {
        #[cfg(feature = "postgres")]
        if self.store.is_some() {
            return format!("PostgreSQL (local files in {})", dir.display());
        }
        dir.display().to_string()
    }

    pub(crate) fn catalog_dir(&self) -> Result<PathBuf> {
        let dir = match &self.catalog {
            Some(d) => d.clone(),
            None => default_dir()?,
        };
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("creating the catalog directory {}", dir.display()))?;
        Ok(dir)
    }
}

fn default_dir() -> Result<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(home) = var("TOOLSCOUT_HOME") {
        return Ok(home);
    }
    if let Some(data) = var("XDG_DATA_HOME") {
        return Ok(data.join("toolscout"));
    }
    if let Some(home) = var("HOME") {
        return Ok(home.join(".local/share/toolscout"));
    }
    bail!("no catalog directory: pass --catalog DIR or set TOOLSCOUT_HOME")
}

/// Other toolscout servers whose tools join the catalog (`serve`, `chat`).
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct Remotes {
    /// The base URL of another toolscout server whose tools join this catalog, e.g.
    /// `http://127.0.0.1:7411` (repeatable). Its manifest is read at start and then
    /// whenever it is stale; its tools are kept in a bundle `remote-<name>` of the
    /// catalog, unavailable while the server does not answer, and called through its
    /// invoke route. Its host and port are allowed for HTTP calls (a remote on `localhost`
    /// or a loopback or private address may be reached there, nothing else private).
    #[arg(long = "remote", value_name = "URL")]
    pub(crate) urls: Vec<String>,
    /// The bearer token sent with calls to the remotes' tools, when they need one
    /// (default: $TOOLSCOUT_REMOTE_TOKEN).
    #[arg(
        long,
        env = "TOOLSCOUT_REMOTE_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN",
        requires = "urls"
    )]
    pub(crate) remote_token: Option<String>,
}

impl Remotes {
    /// The sources, each URL checked; the error names the flag, the URL and the problem.
    pub(crate) fn sources(&self) -> Result<Vec<RemoteSource>> {
        let mut sources: Vec<RemoteSource> = Vec::with_capacity(self.urls.len());
        for url in &self.urls {
            remote_host(url)?;
            let source = RemoteSource::new(url.as_str()).with_token(self.remote_token.as_deref());
            if !sources.iter().any(|s| s.endpoint == source.endpoint) {
                sources.push(source);
            }
        }
        Ok(sources)
    }
}

impl Remotes {
    /// Refuses a remote that is the server at `addr` itself: its tools would call
    /// themselves over HTTP without end.
    pub(crate) fn check_not_self(&self, addr: std::net::SocketAddr) -> Result<()> {
        for url in &self.urls {
            let (host, port) = remote_authority(url)?;
            let listens_locally = addr.ip().is_loopback() || addr.ip().is_unspecified();
            // Other host names may or may not be this machine; only these are sure.
            let same_host = match host.parse::<std::net::IpAddr>() {
                Ok(ip) => ip == addr.ip() || (ip.is_loopback() && addr.ip().is_unspecified()),
                Err(_) => (host == "localhost" || host.ends_with(".localhost")) && listens_locally,
            };
            if port == addr.port() && same_host {
                bail!(
                    "--remote {} is this server's own address ({addr}): its tools would call themselves; give another server's URL",
                    redacted_url(url)
                );
            }
        }
        Ok(())
    }
}

/// The host of a `--remote` URL (`http://HOST[:PORT][/PREFIX]`), or an error that says
/// what is wrong with it.
fn remote_host(url: &str) -> Result<String> {
    remote_authority(url).map(|(host, _)| host)
}

/// The host (lower case) and port of a `--remote` URL, or an error that says what is
/// wrong with it.
fn remote_authority(url: &str) -> Result<(String, u16)> {
    // Named with any password replaced: the one error that says passwords do not go in
    // the URL must not print it.
    let bad = |why: &str| anyhow::anyhow!("--remote {:?}: {why}", redacted_url(url));
    let lower = url.to_ascii_lowercase();
    let rest = ["http://", "https://"]
        .iter()
        .find_map(|scheme| lower.starts_with(scheme).then(|| &url[scheme.len()..]))
        .ok_or_else(|| bad("expected an http:// or https:// URL, e.g. http://127.0.0.1:7411"))?;
    if url.contains("${") || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad(
            "a URL must not contain spaces, control characters or '${'",
        ));
    }
    if url.contains(['?', '#']) {
        return Err(bad(
            "expected the server's base URL, without a query or fragment (the manifest is read from <URL>/api/v1/tools)",
        ));
    }
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.contains('@') {
        return Err(bad(
            "user names and passwords do not go in the URL; use --remote-token",
        ));
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(v6) => {
            let (host, after) = v6
                .split_once(']')
                .ok_or_else(|| bad("an IPv6 address needs its closing ']'"))?;
            (host, after.strip_prefix(':'))
        }
        None => match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    if host.is_empty() {
        return Err(bad("the URL has no host"));
    }
    let port = match port {
        Some(p) => p
            .parse::<u16>()
            .map_err(|_| bad(&format!("{p:?} is not a port number")))?,
        None if lower.starts_with("https://") => 443,
        None => 80,
    };
    Ok((host.to_ascii_lowercase(), port))
}

/// Whether `host` is this machine or a private network: `localhost`, or an address that
/// is not public by the invoker's rule ([`toolscout_invoke::is_public_ip`]), the one
/// rule the HTTP tools are held to.
fn is_local(host: &str) -> bool {
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| !toolscout_invoke::is_public_ip(ip))
}

/// A remote catalog over `sources` feeding `toolbox`, read once (each source's trouble is
/// a warning on stderr, and its tools are unavailable); `None` without sources. Call it
/// inside the runtime that will go on using it.
pub(crate) async fn connect_remotes(
    toolbox: &Toolbox,
    sources: &[RemoteSource],
) -> Result<Option<RemoteCatalog>> {
    if sources.is_empty() {
        return Ok(None);
    }
    let remote = RemoteCatalog::new(toolbox.clone(), sources.to_vec())
        .context("setting up the remote catalogs")?;
    for report in remote.refresh().await {
        match report.status {
            SourceStatus::Fetched { tools } => {
                eprintln!("remote {}: {tools} tools", report.endpoint);
            }
            SourceStatus::Unavailable { reason } | SourceStatus::Skipped { reason } => {
                eprintln!(
                    "warning: remote {}: {reason}; its tools are unavailable until it answers",
                    report.endpoint
                );
            }
            _ => {}
        }
    }
    Ok(Some(remote))
}

/// An opened catalog and an invoker whose native functions it knows about.
pub(crate) struct Context {
    pub(crate) catalog: Catalog,
    pub(crate) invoker: Invoker,
    /// Which sentence encoder the search index ranks by, loaded by [`Context::into_toolbox`].
    meaning: MeaningArgs,
}

impl Context {
    /// Opens the catalog and registers the built-in native tools.
    pub(crate) fn open(global: &Global) -> Result<Context> {
        Context::open_with_remotes(global, &[])
    }

    /// Like [`Context::open`], with an invoker that can call the tools of `remotes`:
    /// their hosts are allowed (private addresses too when one is local) and their
    /// tokens are secrets.
    pub(crate) fn open_with_remotes(global: &Global, remotes: &[RemoteSource]) -> Result<Context> {
        let workspace = match &global.workspace {
            Some(w) => w.clone(),
            None => std::env::current_dir().context("reading the current directory")?,
        };
        let builtin_hosts =
            AllowedHosts::new(&global.allow_hosts).allow_private(global.allow_private);
        // Each remote adds its own host and port, and only that entry may be private:
        // a remote on 127.0.0.1 opens nothing else of this machine to the HTTP tools.
        let mut hosts = builtin_hosts.clone();
        for source in remotes {
            let (host, port) = remote_authority(&source.endpoint)?;
            let entry = if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            };
            hosts = if is_local(&host) {
                hosts.with_private_host(&entry)
            } else {
                hosts.with_host(&entry)
            };
        }
        let mut secrets = global.secrets.store()?;
        secrets.extend(RemoteSource::secrets(remotes));
        let mut invoker = Invoker::default()
            .with_http_config(HttpConfig::with_allowed_hosts(hosts))
            .with_secrets(secrets)
            .with_max_timeout(std::time::Duration::from_secs(u64::from(
                global.max_call_seconds,
            )));
        // `http_get` keeps the hosts of --allow-host: a remote is for its tools.
        let config = BuiltinConfig::new(workspace, builtin_hosts);
        toolscout_invoke::builtin::register(&mut invoker, &config)
            .context("registering the built-in tools")?;
        let dir = global.catalog_dir()?;
        super::mcp::register(&mut invoker, &super::mcp::load(&dir)?)
            .context("registering the tools of imported MCP servers")?;
        let options = CatalogOptions::default().with_natives(&invoker.native_names());
        #[cfg(feature = "postgres")]
        let options = match &global.store {
            Some(url) => options.with_postgres(url.0.clone()),
            None => options,
        };
        let catalog = Catalog::open_with(&dir, options)
            .with_context(|| format!("opening the catalog in {}", global.store_name(&dir)))?;
        for issue in catalog.issues() {
            eprintln!("warning: skipped {issue}");
        }
        Ok(Context {
            catalog,
            invoker,
            meaning: global.meaning.clone(),
        })
    }

    /// Ends a short command: writes the pending usage counts, then leaves the catalog's
    /// memory to the operating system, which takes it back at exit at once, instead of
    /// freeing it one allocation at a time.
    ///
    /// **Rationale:** on 92,589 tools freeing the catalog took about a fifth of a `list`.
    pub(crate) fn finish(self) {
        let Context {
            catalog, invoker, ..
        } = self;
        // The invoker may own child processes and connections: those are ended.
        drop(invoker);
        let _ = catalog.flush_usage();
        std::mem::forget(catalog);
    }

    /// Sets who approves calls of tools that require approval (see
    /// [`super::approve::TerminalApprover`]).
    /// A bare `--approve` name that two of the operator's bundles hold is an error
    /// ([`super::approve::TerminalApprover::check_bare_names`]).
    pub(crate) fn with_approver(
        mut self,
        approver: super::approve::TerminalApprover,
    ) -> Result<Self> {
        approver.check_bare_names(&self.catalog)?;
        self.invoker = std::mem::take(&mut self.invoker).with_approver(approver);
        Ok(self)
    }

    /// The catalog, its search index and the invoker, in step.
    ///
    /// The index lives in the catalog directory (`index/words/`, or `index/<model>/` when
    /// ranked by meaning too, with the tools' vectors): it is reopened and brought up to
    /// date with the tools that changed since it was last committed (by any process),
    /// rebuilt when it is missing or damaged, and kept in memory only when the directory
    /// cannot hold it.
    pub(crate) fn into_toolbox(self) -> Result<Toolbox> {
        let embedder = self.meaning.embedder(Some(self.catalog.root()))?;
        let name = embedder.as_ref().map_or_else(
            || "words".to_owned(),
            |e| {
                let name: String = e
                    .model()
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                // Never `.`, `..` or empty: the directory is the catalog's `index/<name>`.
                if name.chars().all(|c| c == '.') {
                    format!("model{name}")
                } else {
                    name
                }
            },
        );
        let dir = self.catalog.root().join("index").join(name);
        let mut index = match SearchIndex::open_or_rebuild(&dir) {
            Ok(index) => {
                if let toolscout_search::Opened::Rebuilt(why) = index.opened() {
                    eprintln!(
                        "note: rebuilding the search index in {}: {why}",
                        dir.display()
                    );
                }
                index
            }
            Err(e) => {
                eprintln!("warning: searching from memory: {e}");
                SearchIndex::in_memory()?
            }
        };
        if let Some(e) = &embedder {
            index = index.with_embedder(e.clone());
        }
        // Embedding is the slow part the first time (later runs read the vector cache).
        let worth_a_bar = if embedder.is_some() {
            200
        } else {
            LARGE_CATALOG
        };
        let terminal = std::io::stderr().is_terminal();
        let mut bar: Option<indicatif::ProgressBar> = None;
        let mut progress = |done: usize, total: usize| {
            if !terminal || total < worth_a_bar {
                return;
            }
            let b = bar.get_or_insert_with(|| {
                let b = indicatif::ProgressBar::new(total as u64);
                b.set_message("indexing tools");
                if let Ok(style) =
                    indicatif::ProgressStyle::with_template("{msg} {bar:30} {pos}/{len} ({eta})")
                {
                    b.set_style(style);
                }
                b
            });
            b.set_position(done as u64);
        };
        let toolbox = Toolbox::new_with_progress(self.catalog, index, self.invoker, &mut progress)?;
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        Ok(toolbox)
    }
}

/// [`Context::finish`] for a command that made a toolbox.
pub(crate) fn finish_toolbox(toolbox: Toolbox) {
    let _ = toolbox.catalog().flush_usage();
    std::mem::forget(toolbox);
}

/// One tool per name, as [`picks_by_name`] chooses it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pick {
    pub(crate) id: uuid::Uuid,
    pub(crate) callable: bool,
}

/// Every tool of the catalog (disabled ones too), one per name, as `Toolbox::lookup`
/// picks it ([`Catalog::name_holders`]); in id order. No tool file is read, and no head
/// is copied.
pub(crate) fn picks_by_name(catalog: &Catalog) -> Vec<Pick> {
    catalog
        .name_holders()
        .into_iter()
        .map(|(id, callable)| Pick { id, callable })
        .collect()
}

/// [`picks_by_name`], each as its head.
pub(crate) fn heads_by_name(catalog: &Catalog) -> Vec<ToolHead> {
    picks_by_name(catalog)
        .iter()
        .filter_map(|p| catalog.head(p.id).ok())
        .collect()
}

/// [`heads_by_name`], each tool read whole (every stored tool's file).
pub(crate) fn tools_by_name(catalog: &Catalog) -> Vec<Tool> {
    heads_by_name(catalog)
        .iter()
        .filter_map(|h| catalog.tool(h.id).ok())
        .collect()
}

/// The tools of one bundle, one per name, as [`Catalog::bundle_name_holders`] picks them
/// (also where another bundle's tool holds the name in the catalog); in id order, each
/// read whole.
pub(crate) fn tools_of_bundle(catalog: &Catalog, bundle: uuid::Uuid) -> Result<Vec<Tool>> {
    catalog
        .bundle_name_holders(bundle)
        .into_iter()
        .map(|(id, _)| catalog.tool(id).map_err(anyhow::Error::from))
        .collect()
}

/// The tool named `name` (disabled ones too), or an error that suggests close names:
/// of several with that name, the one [`heads_by_name`] keeps
/// ([`Catalog::name_holder`]): one tool is wanted, and only its name's are weighed.
pub(crate) fn find_tool(catalog: &Catalog, name: &str) -> Result<Tool> {
    let id = match catalog.name_holder(name) {
        Some((id, _)) => id,
        None => {
            let mut names: Vec<String> = Vec::with_capacity(catalog.len());
            catalog.for_each_head(|h, _| names.push(h.name.clone()));
            names.sort_unstable();
            names.dedup();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let found = super::find(&names, name)?;
            catalog
                .name_holder(found)
                .context("the tool vanished while it was looked up")?
                .0
        }
    };
    catalog
        .tool(id)
        .with_context(|| format!("reading the tool '{name}'"))
}
