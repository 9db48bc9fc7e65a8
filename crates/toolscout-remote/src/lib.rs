//! `toolscout-remote`: remote catalogs, the consumer side of the tool-discovery protocol.
//!
//! This crate is the client: it reads other toolscout servers' manifests and calls their
//! tools, and has no HTTP server in it (`toolscout-server` serves the manifest and uses
//! this crate for its own `--remote` sources).
//!
//! A [`RemoteCatalog`] reads `GET /api/v1/tools` from a list of [`RemoteSource`]s and
//! keeps one bundle of the local catalog per source in step with what it serves:
//!
//! * the manifest is read a page at a time (`?limit=` [`DEFAULT_PAGE_LIMIT`], then
//!   `page_token=` each page's `next_page_token`), at most [`MAX_MANIFEST_PAGES`] pages and
//!   [`MAX_MANIFEST_BYTES`] (decompressed) for all of them together, gzip-compressed when
//!   the source allows; a source that does not page answers the whole manifest to the
//!   first request, which is read as the only page. Nothing is imported before the last
//!   page has been read; when the source's catalog changes between two pages (its page
//!   token is stale), the walk starts again from the first page;
//! * the manifest is cached for the `max-age` of its first page (60 s when none) and then
//!   revalidated with that page's `ETag` (`If-None-Match` → 304 keeps the bundle as it
//!   is). **Rationale:** a toolscout server's page `ETag`s all change with its catalog
//!   identity, so a first page that did not change means that no page did; asking again
//!   for every page would cost what revalidation is meant to save;
//! * `protocol_version` is checked: an unknown major version is skipped with a warning,
//!   unknown fields of a known one are ignored;
//! * while a source answers 503 (or anything but 200/304), or not at all, its bundle is
//!   disabled, so its tools are listed as unavailable ("its bundle is disabled");
//! * per-tool overrides ([`RemoteCatalog::set_override`]) beat the manifest's
//!   `enabled_by_default`, and survive every refresh.
//!
//! Remote tools are stored as HTTP tools whose `impl` calls the remote's invoke route,
//! `POST {endpoint}/api/v1/tools/{name}/invoke` with the body template
//! `{"args":${@args}}` (the whole arguments object, optional members included) and
//! `extractExpr` `$.value`, so that any [`Toolbox`] can call them with
//! [`Toolbox::call`](toolscout_discover::Toolbox::call), as long as its invoker allows
//! the remote's host and holds the source's token under
//! [`RemoteSource::token_secret`] ([`RemoteSource::secrets`] gives them). A server with
//! a [`RemoteCatalog`] (`toolscout_server::AppState::with_remote`) calls them through
//! [`RemoteCatalog::call`] instead, which passes the remote's outcome on unchanged
//! (error kind included) rather than as an HTTP tool's error.
//!
//! ```
//! use toolscout_remote::RemoteSource;
//!
//! let source = RemoteSource::new("http://127.0.0.1:7411/").with_token(Some("s3cret"));
//! assert_eq!(source.endpoint, "http://127.0.0.1:7411");
//! // Imported tools send `Authorization: Bearer ${REMOTE_TOKEN_…}`: the invoker that
//! // calls them holds the token under that name, granted to 127.0.0.1:7411 alone.
//! assert!(source.token_secret().starts_with("REMOTE_TOKEN_"));
//! let secrets = RemoteSource::secrets(&[source]);
//! # let _ = secrets;
//! ```

#![cfg_attr(test, allow(clippy::unwrap_used))]

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use reqwest::header::{ETAG, IF_NONE_MATCH};
use serde_json::{Value, json};
use toolscout_catalog::Tool;
use toolscout_discover::Toolbox;
use toolscout_invoke::{ErrorKind, Outcome, SecretStore, ToolError};
pub use toolscout_spec::adapters::manifest::DEFAULT_PAGE_LIMIT;
use toolscout_spec::adapters::manifest::{MAX_PAGE_LIMIT, STALE_PAGE_TOKEN, ToolManifest};
use uuid::Uuid;

mod error;
mod import;

pub use error::{Error, Result};

use import::{apply_overrides, check_version, import, max_age};

/// How long a manifest without `max-age` is fresh.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(60);

/// The longest a manifest is trusted without asking again, whatever its `max-age`: a day.
pub const MAX_MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// The largest manifest read from a remote, in bytes once decompressed, all its pages
/// together.
pub const MAX_MANIFEST_BYTES: usize = 16 << 20;

/// The most pages read of one remote manifest; a source that still has a next page after
/// them is unavailable.
pub const MAX_MANIFEST_PAGES: usize = 1000;

/// How many times a refresh reads a manifest from its first page, when the source's
/// catalog keeps changing between two of its pages.
const MAX_WALKS: usize = 3;

/// The largest error answer read to see whether a page token was stale.
const MAX_ERROR_BYTES: usize = 64 << 10;

/// The largest answer of a remote invoke route, in bytes.
pub const MAX_OUTCOME_BYTES: usize = 16 << 20;

/// The protocol major version this consumer reads.
pub const SUPPORTED_MAJOR: u64 = 1;

/// The placeholder of `toolscout-invoke`'s templates that expands to the whole
/// arguments object (`${@args}`).
const ALL_ARGS: &str = "@args";

/// One server that publishes a manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct RemoteSource {
    /// Base URL, e.g. `http://127.0.0.1:7411` (the manifest is at `/api/v1/tools`).
    pub endpoint: String,
    /// Bearer token sent with invoke requests.
    pub token: Option<String>,
}

impl RemoteSource {
    /// A source at `endpoint` (a trailing `/` is dropped).
    pub fn new(endpoint: impl Into<String>) -> Self {
        RemoteSource {
            endpoint: endpoint.into().trim_end_matches('/').to_owned(),
            token: None,
        }
    }

    /// Sends `Authorization: Bearer <token>` with invoke requests (an empty token is
    /// none).
    pub fn with_token(mut self, token: Option<&str>) -> Self {
        self.token = token.filter(|t| !t.is_empty()).map(str::to_owned);
        self
    }

    /// The name of the secret that holds this source's token in the invoker of the
    /// consuming [`Toolbox`]: `REMOTE_TOKEN_` and 12 hexadecimal digits of
    /// [`RemoteSource::bundle_id`]. Imported tools send `Authorization: Bearer ${name}`.
    pub fn token_secret(&self) -> String {
        let id = self.bundle_id().simple().to_string();
        format!("REMOTE_TOKEN_{}", id[id.len() - 12..].to_ascii_uppercase())
    }

    /// The tokens of `sources` (those that have one), each under its
    /// [`RemoteSource::token_secret`] and granted to the source's host and port only (a
    /// tool that names the secret but calls another host is refused): add them to the
    /// secrets of the invoker that calls the imported tools.
    pub fn secrets(sources: &[RemoteSource]) -> SecretStore {
        let mut store = SecretStore::default();
        for source in sources {
            if let Some(token) = &source.token {
                let name = source.token_secret();
                store.insert(name.clone(), token.as_str());
                match source.authority() {
                    Some(authority) => store.grant_host(&name, &authority),
                    // An endpoint that is no URL: no host may have the token.
                    None => store.grant_tool(&name, ""),
                }
            }
        }
        store
    }

    /// `host:port` of the endpoint (`[v6]:port` for IPv6), the port explicit.
    fn authority(&self) -> Option<String> {
        let url = reqwest::Url::parse(&self.endpoint).ok()?;
        let port = url.port_or_known_default()?;
        // `host_str` keeps the brackets of an IPv6 address.
        Some(format!("{}:{port}", url.host_str()?))
    }

    /// The local bundle of this source: a UUIDv7-shaped id derived from the endpoint,
    /// so that it is the same after a restart.
    pub fn bundle_id(&self) -> Uuid {
        let hash = Uuid::new_v5(&Uuid::NAMESPACE_URL, self.endpoint.as_bytes());
        uuid::Builder::from_bytes(*hash.as_bytes())
            .with_version(uuid::Version::SortRand)
            .with_variant(uuid::Variant::RFC4122)
            .into_uuid()
    }
}

/// What a refresh did with one source.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SourceStatus {
    /// The cached manifest is still fresh; nothing was asked.
    Cached,
    /// The source said 304: the manifest did not change.
    NotModified,
    /// A new manifest was read and its tools imported.
    Fetched {
        /// How many tools it has.
        tools: usize,
    },
    /// The source did not answer usefully; its tools are unavailable.
    Unavailable {
        /// Why.
        reason: String,
    },
    /// The manifest was not used (unknown major version); its tools are unavailable.
    Skipped {
        /// Why.
        reason: String,
    },
}

/// Tasks aborted when dropped.
struct AbortAll(Vec<tokio::task::JoinHandle<()>>);

impl Drop for AbortAll {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

/// One source's result of [`RemoteCatalog::refresh`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceReport {
    /// The source's endpoint.
    pub endpoint: String,
    /// What happened.
    pub status: SourceStatus,
}

#[derive(Debug, Default)]
struct Cache {
    etag: Option<String>,
    fresh_until: Option<Instant>,
    /// The manifest's tools, by name, kept to re-apply overrides.
    defaults: BTreeMap<String, bool>,
}

/// Remote tools, fed into a local [`Toolbox`]'s catalog (and so its index); see the
/// module documentation.
///
/// Cloning is cheap: clones share everything.
#[derive(Clone)]
pub struct RemoteCatalog {
    inner: Arc<Inner>,
    page_size: usize,
}

struct Inner {
    toolbox: Toolbox,
    client: reqwest::Client,
    sources: Vec<RemoteSource>,
    caches: Vec<tokio::sync::Mutex<Cache>>,
    overrides: Mutex<BTreeMap<String, bool>>,
    preferences: Option<PathBuf>,
}

impl std::fmt::Debug for RemoteCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteCatalog")
            .field("sources", &self.inner.sources)
            .field("page_size", &self.page_size)
            .finish()
    }
}

impl RemoteCatalog {
    /// A remote catalog over `sources`, feeding `toolbox`. Nothing is fetched before
    /// [`RemoteCatalog::refresh`].
    pub fn new(toolbox: Toolbox, sources: Vec<RemoteSource>) -> Result<RemoteCatalog> {
        RemoteCatalog::build(toolbox, sources, None)
    }

    /// Like [`RemoteCatalog::new`], keeping the per-tool overrides in `path` (a JSON
    /// object of tool name → enabled), read now and written on every change.
    pub fn with_preferences(
        toolbox: Toolbox,
        sources: Vec<RemoteSource>,
        path: impl Into<PathBuf>,
    ) -> Result<RemoteCatalog> {
        RemoteCatalog::build(toolbox, sources, Some(path.into()))
    }

    fn build(
        toolbox: Toolbox,
        sources: Vec<RemoteSource>,
        preferences: Option<PathBuf>,
    ) -> Result<RemoteCatalog> {
        // reqwest is built without a TLS provider (aws-lc is not built): ring, unless the
        // process has installed one already, which is just as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
        // No redirects and no proxy: a manifest or an invoke answer comes from the
        // source's own address, and its token goes nowhere else.
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(|e| Error::Remote {
                endpoint: String::new(),
                reason: format!("cannot build an HTTP client: {e}"),
            })?;
        let overrides = match &preferences {
            Some(p) if p.exists() => {
                let text = std::fs::read_to_string(p).map_err(|e| Error::Io {
                    context: format!("reading {}", p.display()),
                    source: e,
                })?;
                serde_json::from_str(&text).map_err(|e| Error::Remote {
                    endpoint: String::new(),
                    reason: format!("preferences file {}: {e}", p.display()),
                })?
            }
            _ => BTreeMap::new(),
        };
        let caches = sources
            .iter()
            .map(|_| tokio::sync::Mutex::default())
            .collect();
        Ok(RemoteCatalog {
            inner: Arc::new(Inner {
                toolbox,
                client,
                sources,
                caches,
                overrides: Mutex::new(overrides),
                preferences,
            }),
            page_size: DEFAULT_PAGE_LIMIT,
        })
    }

    /// Asks the sources for pages of `size` tools, from 1 to
    /// [`MAX_PAGE_LIMIT`] (a size out of those bounds is
    /// brought within them); [`DEFAULT_PAGE_LIMIT`] unless set. Clones made after this
    /// call share it.
    #[must_use]
    pub fn with_page_size(mut self, size: usize) -> Self {
        self.page_size = size.clamp(1, MAX_PAGE_LIMIT);
        self
    }

    /// The sources.
    pub fn sources(&self) -> &[RemoteSource] {
        &self.inner.sources
    }

    /// Whether `bundle` is the bundle of one of the sources.
    pub fn owns(&self, bundle: Uuid) -> bool {
        self.inner.sources.iter().any(|s| s.bundle_id() == bundle)
    }

    /// The user's overrides: tool name → enabled.
    pub fn overrides(&self) -> BTreeMap<String, bool> {
        self.lock_overrides().clone()
    }

    fn lock_overrides(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, bool>> {
        self.inner
            .overrides
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Enables (`Some(true)`), disables (`Some(false)`) or returns to the manifest's
    /// default (`None`) the remote tool `name`, now and after every refresh.
    pub async fn set_override(&self, name: &str, enabled: Option<bool>) -> Result<()> {
        let snapshot = {
            let mut o = self.lock_overrides();
            match enabled {
                Some(e) => o.insert(name.to_owned(), e),
                None => o.remove(name),
            };
            o.clone()
        };
        if let Some(path) = &self.inner.preferences {
            let text = serde_json::to_string_pretty(&snapshot).unwrap_or_default();
            std::fs::write(path, text).map_err(|e| Error::Io {
                context: format!("writing {}", path.display()),
                source: e,
            })?;
        }
        for (i, source) in self.inner.sources.iter().enumerate() {
            let defaults = self.inner.caches[i].lock().await.defaults.clone();
            let toolbox = self.inner.toolbox.clone();
            let bundle = source.bundle_id();
            let overrides = snapshot.clone();
            tokio::task::spawn_blocking(move || {
                apply_overrides(&toolbox, bundle, &defaults, &overrides)
            })
            .await
            .map_err(|e| Error::Remote {
                endpoint: source.endpoint.clone(),
                reason: e.to_string(),
            })??;
        }
        Ok(())
    }

    /// Reads every source whose manifest is no longer fresh, and brings its bundle in
    /// step. Never fails: a source's trouble is its [`SourceStatus`].
    pub async fn refresh(&self) -> Vec<SourceReport> {
        self.refresh_inner(false).await
    }

    /// Calls [`RemoteCatalog::refresh`] every `every` (each source is asked only once its
    /// manifest is stale) until the returned task is aborted.
    pub fn spawn_refresh(&self, every: Duration) -> tokio::task::JoinHandle<()> {
        let this = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                this.refresh().await;
            }
        })
    }

    /// [`RemoteCatalog::spawn_refresh`], and for each source a subscription to its change
    /// feed (`GET {endpoint}/api/v1/events`): a change (or a `reset`, or the stream's
    /// start after a reconnection) revalidates that source at once instead of at its
    /// `max-age`. A source without the feed (404: an older server) is left to the
    /// periodic refresh; a stream that drops, or is quiet past twice its heartbeat, is
    /// opened again after a backoff of 1 s doubling to 30 s, resuming with
    /// `Last-Event-ID`. The tasks end when the returned one is aborted.
    pub fn spawn_follow(&self, every: Duration) -> tokio::task::JoinHandle<()> {
        let this = self.clone();
        tokio::spawn(async move {
            let mut tasks = vec![this.spawn_refresh(every)];
            for i in 0..this.inner.sources.len() {
                let this = this.clone();
                tasks.push(tokio::spawn(async move { this.follow_source(i).await }));
            }
            // Aborting this task drops the guard, which aborts the others.
            let _guard = AbortAll(tasks);
            std::future::pending::<()>().await;
        })
    }

    /// Follows source `i`'s change feed until it has none (see [`Self::spawn_follow`]).
    async fn follow_source(&self, i: usize) {
        let source = &self.inner.sources[i];
        let url = format!("{}/api/v1/events", source.endpoint.trim_end_matches('/'));
        let mut last: Option<String> = None;
        let mut backoff = Duration::from_secs(1);
        loop {
            let mut request = self.inner.client.get(&url);
            if let Some(id) = &last {
                request = request.header("last-event-id", id);
            }
            match request.send().await {
                Ok(r) if r.status() == reqwest::StatusCode::NOT_FOUND => {
                    tracing::info!(endpoint = %source.endpoint, "no change feed: refreshed at its max-age");
                    return;
                }
                Ok(mut r) if r.status().is_success() => {
                    backoff = Duration::from_secs(1);
                    let mut buf = String::new();
                    // Quiet past twice the heartbeat: the stream is dead.
                    while let Ok(Ok(Some(chunk))) =
                        tokio::time::timeout(Duration::from_secs(45), r.chunk()).await
                    {
                        buf.push_str(&String::from_utf8_lossy(&chunk));
                        if buf.len() > 1 << 20 {
                            break;
                        }
                        while let Some(end) = buf.find("\n\n") {
                            let block: String = buf.drain(..end + 2).collect();
                            let (mut event, mut id) = ("", None);
                            for line in block.lines() {
                                if let Some(v) = line.strip_prefix("event:") {
                                    event = match v.trim() {
                                        "change" => "change",
                                        "reset" => "reset",
                                        "ready" => "ready",
                                        _ => "",
                                    };
                                } else if let Some(v) = line.strip_prefix("id:") {
                                    id = Some(v.trim().to_owned());
                                }
                            }
                            if id.is_some() {
                                last = id;
                            }
                            if !event.is_empty() {
                                let mut cache = self.inner.caches[i].lock().await;
                                self.refresh_one(source, &mut cache, true).await;
                            }
                        }
                    }
                }
                _ => {}
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(30));
        }
    }

    /// Like [`RemoteCatalog::refresh`], asking every source now (with `If-None-Match`).
    pub async fn revalidate(&self) -> Vec<SourceReport> {
        self.refresh_inner(true).await
    }

    async fn refresh_inner(&self, force: bool) -> Vec<SourceReport> {
        let mut reports = Vec::new();
        for (i, source) in self.inner.sources.iter().enumerate() {
            let mut cache = self.inner.caches[i].lock().await;
            let status = self.refresh_one(source, &mut cache, force).await;
            if let SourceStatus::Unavailable { reason } | SourceStatus::Skipped { reason } = &status
            {
                tracing::warn!(endpoint = %source.endpoint, %reason, "remote catalog unavailable");
            }
            reports.push(SourceReport {
                endpoint: source.endpoint.clone(),
                status,
            });
        }
        reports
    }

    async fn refresh_one(
        &self,
        source: &RemoteSource,
        cache: &mut Cache,
        force: bool,
    ) -> SourceStatus {
        if !force && cache.fresh_until.is_some_and(|t| Instant::now() < t) {
            return SourceStatus::Cached;
        }
        let status = match self.fetch(source, cache.etag.as_deref()).await {
            Err(status) => status,
            Ok(Fetched::NotModified { max_age }) => {
                cache.fresh_until = Instant::now().checked_add(max_age);
                self.set_available(source, true).await;
                SourceStatus::NotModified
            }
            Ok(Fetched::Manifest {
                manifest,
                etag,
                max_age,
            }) => self.store(source, cache, manifest, etag, max_age).await,
        };
        if matches!(
            status,
            SourceStatus::Unavailable { .. } | SourceStatus::Skipped { .. }
        ) {
            cache.fresh_until = None;
            self.set_available(source, false).await;
        }
        status
    }

    /// Reads the source's manifest, every page of it (see the module documentation),
    /// revalidating with `etag` when there is one; starts again from the first page
    /// (without `etag`) when the source's catalog changed between two pages.
    async fn fetch(
        &self,
        source: &RemoteSource,
        etag: Option<&str>,
    ) -> std::result::Result<Fetched, SourceStatus> {
        let mut etag = etag;
        for _ in 0..MAX_WALKS {
            match self.walk(source, etag).await {
                Ok(fetched) => return Ok(fetched),
                Err(Stop::Status(status)) => return Err(status),
                Err(Stop::Changed) => etag = None,
            }
        }
        Err(unavailable(format!(
            "the source's catalog changed while its manifest was read, {MAX_WALKS} times in a row"
        )))
    }

    /// One read of the manifest from its first page to its last.
    async fn walk(
        &self,
        source: &RemoteSource,
        etag: Option<&str>,
    ) -> std::result::Result<Fetched, Stop> {
        let mut merged: Option<ToolManifest> = None;
        let mut names = HashSet::new();
        // The first page's: what revalidates the whole manifest, and how long it is fresh.
        let mut first_etag = None;
        let mut first_max_age = DEFAULT_MAX_AGE;
        let mut token: Option<String> = None;
        let mut read = 0;
        for page in 1..=MAX_MANIFEST_PAGES {
            let url = self.page_url(source, token.as_deref())?;
            let mut req = self.inner.client.get(url.clone());
            if page == 1
                && let Some(etag) = etag
            {
                req = req.header(IF_NONE_MATCH, etag);
            }
            let resp = req
                .send()
                .await
                .map_err(|e| unavailable(format!("no answer from {url}: {e}")))?;
            let status = resp.status();
            if page == 1 {
                first_max_age = max_age(resp.headers());
                first_etag = resp
                    .headers()
                    .get(ETAG)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                if status == StatusCode::NOT_MODIFIED && etag.is_some() {
                    return Ok(Fetched::NotModified {
                        max_age: first_max_age,
                    });
                }
            }
            let which = if page == 1 {
                "the manifest".to_owned()
            } else {
                format!("page {page} of the manifest")
            };
            if status != StatusCode::OK {
                if page > 1 && is_stale_page_token(resp).await {
                    return Err(Stop::Changed);
                }
                return Err(unavailable(format!("{which} answered {status}")).into());
            }
            let bytes = read_limited(resp, read, MAX_MANIFEST_BYTES)
                .await
                .map_err(|reason| unavailable(format!("{which} could not be read: {reason}")))?;
            read += bytes.len();
            let body: Value = serde_json::from_slice(&bytes)
                .map_err(|e| unavailable(format!("{which} is not JSON: {e}")))?;
            drop(bytes);
            check_version(&body).map_err(|reason| SourceStatus::Skipped { reason })?;
            let mut part: ToolManifest = serde_json::from_value(body)
                .map_err(|e| unavailable(format!("{which} does not read: {e}")))?;
            let next = part.next_page_token.take().filter(|t| !t.is_empty());
            let manifest = match merged.take() {
                None => {
                    // A name listed twice is imported once, as it was first listed.
                    part.tools.retain(|t| names.insert(t.name.clone()));
                    part
                }
                Some(mut merged) => {
                    append(&mut merged, part, &mut names);
                    merged
                }
            };
            let Some(next) = next else {
                return Ok(Fetched::Manifest {
                    manifest: Box::new(manifest),
                    etag: first_etag,
                    max_age: first_max_age,
                });
            };
            merged = Some(manifest);
            token = Some(next);
        }
        Err(unavailable(format!(
            "the manifest has more than {MAX_MANIFEST_PAGES} pages"
        ))
        .into())
    }

    /// `{endpoint}/api/v1/tools?limit=…[&page_token=…]`.
    fn page_url(
        &self,
        source: &RemoteSource,
        token: Option<&str>,
    ) -> std::result::Result<reqwest::Url, Stop> {
        let base = format!("{}/api/v1/tools", source.endpoint);
        let mut url = reqwest::Url::parse(&base)
            .map_err(|e| unavailable(format!("{base} is not a URL: {e}")))?;
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("limit", &self.page_size.to_string());
            if let Some(token) = token {
                query.append_pair("page_token", token);
            }
        }
        Ok(url)
    }

    /// Imports a manifest read whole into the source's bundle, and remembers it.
    async fn store(
        &self,
        source: &RemoteSource,
        cache: &mut Cache,
        manifest: Box<ToolManifest>,
        etag: Option<String>,
        max_age: Duration,
    ) -> SourceStatus {
        let overrides = self.overrides();
        let toolbox = self.inner.toolbox.clone();
        let source_c = source.clone();
        let imported =
            tokio::task::spawn_blocking(move || import(&toolbox, &source_c, &manifest, &overrides))
                .await;
        match imported {
            Ok(Ok(defaults)) => {
                let tools = defaults.len();
                cache.defaults = defaults;
                cache.etag = etag;
                cache.fresh_until = Instant::now().checked_add(max_age);
                SourceStatus::Fetched { tools }
            }
            Ok(Err(e)) => unavailable(format!("the manifest could not be imported: {e}")),
            Err(e) => unavailable(format!("the import failed: {e}")),
        }
    }

    /// Enables or disables a source's bundle, if it exists and needs it.
    async fn set_available(&self, source: &RemoteSource, available: bool) {
        let toolbox = self.inner.toolbox.clone();
        let bundle = source.bundle_id();
        let _ = tokio::task::spawn_blocking(move || {
            let catalog = toolbox.catalog();
            if let Ok(b) = catalog.bundle(bundle)
                && b.soft_deleted_at.is_none()
                && b.is_enabled != available
                && let Err(e) = catalog.patch_bundle(bundle, available)
            {
                tracing::warn!(%bundle, error = %e, "cannot change a remote bundle");
            }
        })
        .await;
    }

    /// Refuses an invoke URL that is not the source's own invoke route on the source's
    /// origin, or whose host the toolbox's invoker does not allow.
    ///
    /// **Rationale:** the URL is read from the catalog, which can be edited; the source's
    /// token must only ever go to the source.
    fn check_invoke_url(
        &self,
        source: &RemoteSource,
        name: &str,
        url: &str,
    ) -> std::result::Result<(), ToolError> {
        let refused = |why: &str| {
            ToolError::new(
                ErrorKind::HostNotAllowed,
                format!("refused to call remote tool '{name}': {why}"),
            )
            .with_details(json!({"tool": name, "endpoint": source.endpoint}))
        };
        let parsed =
            reqwest::Url::parse(url).map_err(|_| refused("its invoke URL is not a URL"))?;
        let endpoint = reqwest::Url::parse(&source.endpoint)
            .map_err(|_| refused("the source's endpoint is not a URL"))?;
        let prefix = format!("{}/api/v1/tools/", source.endpoint);
        if parsed.origin() != endpoint.origin() || !url.starts_with(&prefix) {
            return Err(refused(
                "its invoke URL is not the invoke route of the server it was imported from",
            ));
        }
        let host = parsed.host_str().unwrap_or_default();
        if !self
            .inner
            .toolbox
            .invoker()
            .http_config()
            .allowed_hosts
            .matches_url(&parsed)
        {
            return Err(refused(&format!(
                "host '{host}' is not in the allowed hosts"
            )));
        }
        Ok(())
    }

    /// Calls `tool` (a tool of one of the sources) through its remote's invoke route.
    ///
    /// The call goes only to the source's own invoke route (its origin, host and port
    /// allowed by the toolbox's invoker), follows no redirect and no proxy, and reads at
    /// most [`MAX_OUTCOME_BYTES`].
    pub async fn call(&self, tool: &Tool, args: Value) -> Outcome {
        let name = tool.spec.name.as_str();
        let Some(url) = tool
            .implementation
            .get("urlTemplate")
            .and_then(Value::as_str)
        else {
            return Outcome::Err(ToolError::new(
                ErrorKind::Misconfigured,
                format!("remote tool '{name}' has no invoke URL"),
            ));
        };
        let Some(source) = self
            .inner
            .sources
            .iter()
            .find(|s| s.bundle_id() == tool.bundle_id)
        else {
            return Outcome::Err(ToolError::new(
                ErrorKind::Misconfigured,
                format!("tool '{name}' is not a tool of a remote source"),
            ));
        };
        if let Err(e) = self.check_invoke_url(source, name, url) {
            return Outcome::Err(e);
        }
        let mut req = self.inner.client.post(url).json(&json!({ "args": args }));
        if let Some(token) = source.token.as_deref() {
            req = req.bearer_auth(token);
        }
        if let Some(secs) = tool.spec.metadata.timeout_seconds {
            req = req.timeout(Duration::from_secs(u64::from(secs)));
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                let kind = if e.is_timeout() {
                    ErrorKind::Timeout
                } else {
                    ErrorKind::Transport
                };
                return Outcome::Err(
                    ToolError::new(
                        kind,
                        format!("the remote server of '{name}' did not answer: {e}; try later or use another tool"),
                    )
                    .with_details(json!({"url": url})),
                );
            }
        };
        let status = resp.status();
        let body: Value = match read_limited(resp, 0, MAX_OUTCOME_BYTES).await {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            Err(reason) => {
                return Outcome::Err(
                    ToolError::new(
                        ErrorKind::TooLarge,
                        format!("the answer of the remote server of '{name}' could not be read: {reason}"),
                    )
                    .with_details(json!({"url": url})),
                );
            }
        };
        if let Ok(outcome) = serde_json::from_value::<Outcome>(body.clone()) {
            return outcome;
        }
        let said = body["error"]["message"]
            .as_str()
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        Outcome::Err(
            ToolError::new(
                ErrorKind::HttpStatus,
                format!("the remote server of '{name}' answered {status} without an outcome{said}"),
            )
            .with_details(json!({"url": url, "status": status.as_u16()})),
        )
    }
}

/// The body of `resp`, refused when it and the `already` bytes read before it (earlier
/// pages of one manifest) pass `limit` bytes: by its `Content-Length`, or while it is
/// read. A compressed body is counted decompressed (reqwest decompresses it, and then
/// knows no length up front).
async fn read_limited(
    mut resp: reqwest::Response,
    already: usize,
    limit: usize,
) -> std::result::Result<Vec<u8>, String> {
    let too_large = || {
        if already == 0 {
            format!("the answer is larger than {limit} bytes")
        } else {
            format!("the manifest's pages are larger than {limit} bytes together")
        }
    };
    let room = limit.saturating_sub(already);
    if resp
        .content_length()
        .is_some_and(|n| n > u64::try_from(room).unwrap_or(u64::MAX))
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| e.to_string())? {
        if body.len() + chunk.len() > room {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// What a read of a manifest found.
enum Fetched {
    /// The first page answered 304.
    NotModified { max_age: Duration },
    /// Every page, read into one manifest; the first page's `ETag` and `max-age`.
    Manifest {
        manifest: Box<ToolManifest>,
        etag: Option<String>,
        max_age: Duration,
    },
}

/// Why a read of a manifest's pages stopped before the last.
enum Stop {
    /// A page token was stale: the source's catalog changed between two pages.
    Changed,
    /// The refresh ends with this status.
    Status(SourceStatus),
}

fn unavailable(reason: String) -> SourceStatus {
    SourceStatus::Unavailable { reason }
}

impl From<SourceStatus> for Stop {
    fn from(status: SourceStatus) -> Self {
        Stop::Status(status)
    }
}

/// Adds a later page's tools (those not listed yet) and categories (those not listed
/// yet) to the manifest of the pages before it.
fn append(whole: &mut ToolManifest, part: ToolManifest, names: &mut HashSet<String>) {
    whole.tools.extend(
        part.tools
            .into_iter()
            .filter(|t| names.insert(t.name.clone())),
    );
    for category in part.categories {
        if !whole.categories.iter().any(|c| c.id == category.id) {
            whole.categories.push(category);
        }
    }
}

/// Whether an answer other than 200 to a later page says that its page token is stale
/// (400 with the code [`STALE_PAGE_TOKEN`]).
async fn is_stale_page_token(resp: reqwest::Response) -> bool {
    if resp.status() != StatusCode::BAD_REQUEST {
        return false;
    }
    let Ok(bytes) = read_limited(resp, 0, MAX_ERROR_BYTES).await else {
        return false;
    };
    serde_json::from_slice::<Value>(&bytes)
        .is_ok_and(|body| body["error"]["code"].as_str() == Some(STALE_PAGE_TOKEN))
}
