//! [`AppState`]: what every handler shares, and [`ServerOptions`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;
use tokio::sync::broadcast;
use toolscout_catalog::{CatalogEvent, Subscription, TenantId, Viewer};
use toolscout_discover::Toolbox;
use toolscout_invoke::Outcome;
use toolscout_spec::adapters::manifest::{ScenarioInfo, ToolCategory};
use uuid::Uuid;

use toolscout_remote::RemoteCatalog;

use crate::ConnectionLimits;

/// What a request without a token may read ([`Access::Read`](crate::Access::Read) routes), once the server
/// has a token ([`ServerOptions::with_anonymous_reads`]).
///
/// [`ServerOptions::with_anonymous_reads`]: crate::ServerOptions::with_anonymous_reads
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AnonymousReads {
    /// The operator's view while the catalog has no live tenant (a single-team server,
    /// as before tenants existed), the public view (the shared and built-in bundles)
    /// from the first tenant on, decided at each request.
    #[default]
    Auto,
    /// The public view, always.
    Public,
    /// None: every request needs a token.
    Off,
}

/// The default largest request body: 2 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 2 * 1024 * 1024;
/// The most tools one MCP session may activate ([`ServerOptions::activation_cap`]).
pub const MAX_ACTIVATION_CAP: usize = 128;

/// Which tools the Model Context Protocol endpoint lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Expose {
    /// `discover_tools` and `call_tool`: two tools that reach the whole catalog, for
    /// clients that cap the number of tools (40, 128…).
    #[default]
    Discover,
    /// Every callable tool, listed with cursor pagination.
    All,
}

/// Which `Host` (and `Origin`) values the server answers to.
///
/// **Rationale:** a web page on another site can make a browser send requests to
/// `127.0.0.1` (directly, or through a DNS name it rebinds to `127.0.0.1`); the browser
/// then sends that page's `Origin` and the rebound name as `Host`, which this check
/// refuses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostCheck {
    /// Loopback names only: `localhost`, `127.0.0.1` (any `127.x`), `[::1]`, on any
    /// port. The default, for a server bound to loopback.
    #[default]
    Loopback,
    /// These host names (a `name`, or `name:port`), plus the loopback ones.
    Hosts(Vec<String>),
    /// Any `Host` and `Origin` (a public server reached by names it cannot know; the
    /// token and the JSON content type are then the guards).
    Off,
}

impl HostCheck {
    /// Whether a `Host` header value (`name[:port]`) is accepted.
    pub fn allows(&self, host: &str) -> bool {
        if *self == HostCheck::Off {
            return true;
        }
        let host = host.trim().to_ascii_lowercase();
        let Some(name) = host_name(&host) else {
            return false;
        };
        let name = name.as_str();
        match self {
            HostCheck::Off => true,
            HostCheck::Loopback => is_loopback_name(name),
            HostCheck::Hosts(list) => {
                is_loopback_name(name)
                    || list.iter().any(|h| {
                        let h = h.to_ascii_lowercase();
                        h == host || h == name
                    })
            }
        }
    }

    /// Whether the authority of an `Origin` header (`name[:port]`, no scheme) is
    /// accepted; `null` and unreadable origins are not, but when the check is off.
    pub fn allows_origin(&self, authority: &str) -> bool {
        match self {
            HostCheck::Off => true,
            _ => !authority.is_empty() && self.allows(authority),
        }
    }

    /// The accepted names, for error messages.
    pub fn describe(&self) -> String {
        match self {
            HostCheck::Off => "any name".to_owned(),
            HostCheck::Loopback => "localhost, 127.0.0.1 and [::1]".to_owned(),
            HostCheck::Hosts(list) => {
                format!("localhost, 127.0.0.1, [::1] and {}", list.join(", "))
            }
        }
    }
}

/// `name` of `name:port`, `[v6]` of `[v6]:port`, as the `url` crate reads an authority
/// (lower case; an IPv4 address in its usual form); `None` when `host` is no authority.
fn host_name(host: &str) -> Option<String> {
    // Only what a name, an address and a port are written with: the URL parser would
    // read `localhost#.attacker.com` as `localhost` and a fragment.
    if !host
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b':' | b'[' | b']'))
    {
        return None;
    }
    let url = url::Url::parse(&format!("http://{host}/")).ok()?;
    // A user name or a path would mean `host` was more than an authority.
    if !url.username().is_empty() || url.password().is_some() || url.path() != "/" {
        return None;
    }
    url.host_str().map(str::to_owned)
}

fn is_loopback_name(name: &str) -> bool {
    name == "localhost"
        || name == "[::1]"
        || name
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// How the server presents itself and what it allows.
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct ServerOptions {
    /// The `scenario` of the discovery manifest; its name and version are also the MCP
    /// server info.
    pub scenario: ScenarioInfo,
    /// The manifest's categories; derived from the tools' `category` values (name =
    /// title-cased id) when empty.
    pub categories: Vec<ToolCategory>,
    /// The server's own bearer token, the operator's: when set, every request but the
    /// console's static files needs it or a tenant's token, and reads without a token
    /// get what [`ServerOptions::anonymous_reads`] allows. `None` serves everyone as
    /// the operator (`--no-auth`).
    pub token: Option<String>,
    /// What a `GET` read without a token may see on a server with a token
    /// ([`AnonymousReads::Auto`] by default).
    pub anonymous_reads: AnonymousReads,
    /// What the MCP endpoint lists.
    pub expose: Expose,
    /// The largest request body accepted, in bytes (larger ones get 413).
    pub body_limit: usize,
    /// Tools per page of MCP `tools/list` in [`Expose::All`] mode and of JSON-RPC
    /// `tools/list`.
    pub page_size: usize,
    /// The `Host` values (`name` or `name:port`) `/mcp` accepts; `None` keeps rmcp's
    /// loopback-only default, a guard against DNS rebinding.
    pub mcp_allowed_hosts: Option<Vec<String>>,
    /// In [`Expose::Discover`] mode, how many tools one MCP session may activate: a tool
    /// the session described at level 2 or 3, or found at the top of a search, is added to
    /// its `tools/list` (least recently used evicted first). 16 by default, at most
    /// [`MAX_ACTIVATION_CAP`]; 0 turns activation off.
    pub activation_cap: usize,
    /// How many of the best hits of a `discover_tools` search an MCP session activates
    /// (3 by default; 0: searches activate nothing).
    pub search_activations: usize,
    /// The `Host` and `Origin` values every route accepts (loopback names by default).
    pub host_check: HostCheck,
    /// How many connections stay open, and for how long a request's head and body may
    /// take (see [`ConnectionLimits`]; used by [`crate::serve_on`] and
    /// [`crate::console::serve_until`]).
    pub connections: ConnectionLimits,
    /// The most `GET /api/v1/events` streams open at once (503 past it); at most half
    /// of [`ConnectionLimits::max_connections`], so streams never take every connection.
    pub event_streams: usize,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            scenario: ScenarioInfo {
                name: "toolscout".to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                description:
                    "A catalog of tools with progressive disclosure, search and invocation"
                        .to_owned(),
                base_url: None,
            },
            categories: Vec::new(),
            token: None,
            anonymous_reads: AnonymousReads::Auto,
            expose: Expose::Discover,
            body_limit: DEFAULT_BODY_LIMIT,
            page_size: toolscout_catalog::DEFAULT_LISTING_PAGE_SIZE,
            mcp_allowed_hosts: None,
            activation_cap: toolscout_discover::DEFAULT_ACTIVATION_CAP,
            search_activations: toolscout_discover::DEFAULT_ACTIVATE_HITS,
            host_check: HostCheck::Loopback,
            connections: ConnectionLimits::default(),
            event_streams: crate::DEFAULT_MAX_CONNECTIONS / 2,
        }
    }
}

impl ServerOptions {
    /// Sets the scenario's name, version and description.
    pub fn with_scenario(
        mut self,
        name: impl Into<String>,
        version: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        self.scenario.name = name.into();
        self.scenario.version = version.into();
        self.scenario.description = description.into();
        self
    }

    /// Sets the base URL announced in the manifest.
    pub fn with_base_url(mut self, url: Option<&str>) -> Self {
        self.scenario.base_url = url.map(str::to_owned);
        self
    }

    /// Sets the manifest's categories (instead of deriving them).
    pub fn with_categories(mut self, categories: Vec<ToolCategory>) -> Self {
        self.categories = categories;
        self
    }

    /// Requires `Authorization: Bearer <token>` (this token, or a tenant's) on everything
    /// but the console's static files and the `GET` reads that
    /// [`ServerOptions::anonymous_reads`] allows without one.
    pub fn with_token(mut self, token: Option<&str>) -> Self {
        self.token = token.filter(|t| !t.is_empty()).map(str::to_owned);
        self
    }

    /// Sets what a `GET` read without a token may see ([`AnonymousReads`]).
    pub fn with_anonymous_reads(mut self, reads: AnonymousReads) -> Self {
        self.anonymous_reads = reads;
        self
    }

    /// Sets what the MCP endpoint lists.
    pub fn with_expose(mut self, expose: Expose) -> Self {
        self.expose = expose;
        self
    }

    /// Sets the largest request body.
    pub fn with_body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Sets the `Host` values `/mcp` accepts (for a server reached by another name than
    /// `localhost`).
    pub fn with_mcp_allowed_hosts(mut self, hosts: &[&str]) -> Self {
        self.mcp_allowed_hosts = Some(hosts.iter().map(|h| (*h).to_owned()).collect());
        // Every route answers to the names `/mcp` answers to.
        if self.host_check == HostCheck::Loopback {
            self.host_check = HostCheck::Hosts(hosts.iter().map(|h| (*h).to_owned()).collect());
        }
        self
    }

    /// Sets which `Host` and `Origin` values every route accepts.
    pub fn with_host_check(mut self, check: HostCheck) -> Self {
        self.host_check = check;
        self
    }

    /// Sets how many tools one MCP session may activate (0 to [`MAX_ACTIVATION_CAP`]; 0
    /// turns activation off).
    pub fn with_activation_cap(mut self, cap: usize) -> Self {
        self.activation_cap = cap.min(MAX_ACTIVATION_CAP);
        self
    }

    /// Sets how many of the best hits of a `discover_tools` search an MCP session
    /// activates (0: none; at most [`MAX_ACTIVATION_CAP`]).
    pub fn with_search_activations(mut self, hits: usize) -> Self {
        self.search_activations = hits.min(MAX_ACTIVATION_CAP);
        self
    }

    /// Sets the bounds of the connections the server keeps open.
    pub fn with_connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.connections = limits;
        self
    }

    /// Sets the most event streams open at once ([`ServerOptions::event_streams`]).
    pub fn with_event_streams(mut self, streams: usize) -> Self {
        self.event_streams = streams.max(1);
        self
    }

    /// Sets the page size of tool listings (1 to 1000).
    pub fn with_page_size(mut self, size: usize) -> Self {
        self.page_size = size.clamp(1, toolscout_catalog::MAX_LISTING_PAGE_SIZE);
        self
    }
}

/// A tenant token that stopped being valid: one revoked, or every token of a removed
/// tenant (`token` is `None`). [`AppState`] announces each (this process's revocations,
/// and other processes' once the catalog reads them) so that the event streams and MCP
/// sessions opened with the token end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Revocation {
    /// The tenant.
    pub(crate) tenant: TenantId,
    /// The token, or `None` for all of the tenant's (it was removed).
    pub(crate) token: Option<Uuid>,
}

impl Revocation {
    /// The revocations a catalog change carries.
    fn of(events: &[CatalogEvent]) -> impl Iterator<Item = Revocation> + '_ {
        events.iter().filter_map(|e| match e {
            CatalogEvent::TokenRevoked { tenant, token } => Some(Revocation {
                tenant: *tenant,
                token: Some(*token),
            }),
            CatalogEvent::TenantRemoved { tenant } => Some(Revocation {
                tenant: *tenant,
                token: None,
            }),
            _ => None,
        })
    }

    /// Whether it ends what `tenant` opened with `token`.
    pub(crate) fn ends(&self, tenant: TenantId, token: Uuid) -> bool {
        self.tenant == tenant && self.token.is_none_or(|t| t == token)
    }
}

/// Whether `token` is still a live token of the live tenant `tenant`, as `catalog` knows
/// it (a revocation by another process counts once it is read).
pub(crate) fn holds(catalog: &toolscout_catalog::Catalog, tenant: TenantId, token: Uuid) -> bool {
    catalog
        .tenant(&tenant.to_string())
        .is_ok_and(|t| t.is_live() && t.tokens.iter().any(|k| k.id == token && k.is_live()))
}

/// What every handler shares: a [`Toolbox`], the [`ServerOptions`], a channel of
/// catalog changes, and the [`RemoteCatalog`] whose tools are called remotely.
///
/// Cloning is cheap: clones share everything.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    toolbox: Toolbox,
    options: ServerOptions,
    remote: Option<RemoteCatalog>,
    serving: AtomicBool,
    changes: broadcast::Sender<Uuid>,
    revocations: broadcast::Sender<Revocation>,
    subscription: Subscription,
    feed: Arc<crate::feed::ChangeFeed>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.toolbox.catalog().unsubscribe(self.subscription);
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("toolbox", &self.inner.toolbox)
            .field("options", &self.inner.options)
            .field("remote", &self.inner.remote.is_some())
            .finish()
    }
}

impl AppState {
    /// State over `toolbox` with `options`.
    pub fn new(toolbox: Toolbox, options: ServerOptions) -> AppState {
        AppState::build(toolbox, options, None)
    }

    /// State whose calls to the tools of `remote` go to their remote servers.
    pub fn with_remote(toolbox: Toolbox, options: ServerOptions, remote: RemoteCatalog) -> Self {
        AppState::build(toolbox, options, Some(remote))
    }

    fn build(toolbox: Toolbox, options: ServerOptions, remote: Option<RemoteCatalog>) -> Self {
        let (changes, _) = broadcast::channel(64);
        let tx = changes.clone();
        let streams = options
            .event_streams
            .min(options.connections.max_connections / 2)
            .max(1);
        // The feed reads the catalog to name what changed: on a thread of its own, fed
        // by the subscription (which must not hold the toolbox: the catalog holds it), in
        // the order the catalog tells changes (generation order).
        let (feed_tx, feed_rx) = std::sync::mpsc::channel::<toolscout_catalog::CatalogChange>();
        let (revocations, _) = broadcast::channel(64);
        let revoked = revocations.clone();
        // Subscribed before the feed reads the catalog: a change in between reaches the
        // feed, which finds it already read (no name moved), instead of being missed.
        let subscription = toolbox.catalog().subscribe(move |change| {
            // No receiver (no MCP session, no stream of a tenant) is fine.
            let _ = tx.send(change.identity);
            for r in Revocation::of(&change.events) {
                let _ = revoked.send(r);
            }
            let _ = feed_tx.send(change.clone());
        });
        let feed = Arc::new(crate::feed::ChangeFeed::new(toolbox.catalog(), streams));
        let (feeder, fed) = (toolbox.clone(), Arc::clone(&feed));
        let _ = std::thread::Builder::new()
            .name("toolscout-feed".to_owned())
            .spawn(move || {
                // Ends when the subscription (and its sender) goes with the state.
                for change in feed_rx {
                    fed.apply(feeder.catalog(), &change);
                }
            });
        AppState {
            inner: Arc::new(Inner {
                toolbox,
                options,
                remote,
                serving: AtomicBool::new(true),
                changes,
                revocations,
                subscription,
                feed,
            }),
        }
    }

    /// The toolbox.
    pub fn toolbox(&self) -> &Toolbox {
        &self.inner.toolbox
    }

    /// The change feed of `GET /api/v1/events`.
    pub fn feed(&self) -> &crate::feed::ChangeFeed {
        &self.inner.feed
    }

    /// The options.
    pub fn options(&self) -> &ServerOptions {
        &self.inner.options
    }

    /// The remote catalog, when there is one.
    pub fn remote(&self) -> Option<&RemoteCatalog> {
        self.inner.remote.as_ref()
    }

    /// Whether the catalog is being served; while it is not (an import, maintenance),
    /// the manifest and listings answer 503.
    pub fn is_serving(&self) -> bool {
        self.inner.serving.load(Ordering::Relaxed)
    }

    /// Starts or stops serving the catalog.
    pub fn set_serving(&self, serving: bool) {
        self.inner.serving.store(serving, Ordering::Relaxed);
    }

    /// The catalog identity after each change, for as long as the receiver lives.
    pub fn changes(&self) -> broadcast::Receiver<Uuid> {
        self.inner.changes.subscribe()
    }

    /// The tenant tokens revoked from now on (see [`Revocation`]). A receiver that lags
    /// must ask [`holds`] of what it guards.
    pub(crate) fn revocations(&self) -> broadcast::Receiver<Revocation> {
        self.inner.revocations.subscribe()
    }

    /// The toolbox as `viewer` sees the catalog ([`Toolbox::as_viewer`]).
    pub fn toolbox_for(&self, viewer: Viewer) -> Toolbox {
        self.inner.toolbox.as_viewer(viewer)
    }

    /// Calls the tool named `name`: through its remote server when it came from the
    /// [`RemoteCatalog`], through the toolbox otherwise.
    pub async fn call(&self, name: &str, args: Value) -> Outcome {
        self.call_as(name, args, false).await
    }

    /// Like [`AppState::call`]; with `approved`, a tool that requires approval runs
    /// without asking the toolbox's approver: the caller (an authenticated client that
    /// said so) approved it.
    pub async fn call_as(&self, name: &str, args: Value, approved: bool) -> Outcome {
        self.call_for(&Viewer::Operator, name, args, approved).await
    }

    /// [`AppState::call_as`] on behalf of `viewer`: the name is looked up in its view
    /// (a tool outside it is answered as a name nobody holds, with suggestions from the
    /// view only).
    pub async fn call_for(
        &self,
        viewer: &Viewer,
        name: &str,
        args: Value,
        approved: bool,
    ) -> Outcome {
        let toolbox = self.toolbox_for(viewer.clone());
        if self.inner.remote.is_some()
            && let toolscout_discover::Lookup::Found(tool) = toolbox.lookup(name)
        {
            return self.call_tool_for(viewer, &tool, args, approved).await;
        }
        toolbox.call(name, args).approved_if(approved).await
    }

    /// Calls one catalog tool (one version of one bundle), remote or local.
    pub async fn call_tool(&self, tool: &toolscout_catalog::Tool, args: Value) -> Outcome {
        self.call_tool_as(tool, args, false).await
    }

    /// Like [`AppState::call_tool`]; `approved` as in [`AppState::call_as`].
    pub async fn call_tool_as(
        &self,
        tool: &toolscout_catalog::Tool,
        args: Value,
        approved: bool,
    ) -> Outcome {
        self.call_tool_for(&Viewer::Operator, tool, args, approved)
            .await
    }

    /// [`AppState::call_tool_as`] on behalf of `viewer`: a tool outside its view is
    /// answered as a name nobody holds ([`Toolbox::call_tool`]), remote or not.
    pub async fn call_tool_for(
        &self,
        viewer: &Viewer,
        tool: &toolscout_catalog::Tool,
        args: Value,
        approved: bool,
    ) -> Outcome {
        let toolbox = self.toolbox_for(viewer.clone());
        match &self.inner.remote {
            Some(remote)
                if tool.is_callable()
                    && remote.owns(tool.bundle_id)
                    && (*viewer == Viewer::Operator || toolbox.view().head(tool.id).is_ok()) =>
            {
                let at = chrono::Utc::now();
                let outcome = remote.call(tool, args).await;
                let _ = self.inner.toolbox.catalog().record_call(tool.id, at);
                outcome
            }
            _ => toolbox.call_tool(tool, args).approved_if(approved).await,
        }
    }
}
