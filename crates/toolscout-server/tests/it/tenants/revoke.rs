//! Revoking a token takes effect on what is open: the token's `/api/v1/events` streams
//! and MCP sessions (their SSE streams) end within a second, whether the revocation is
//! this server's, another process's on the same directory, or another replica's on the
//! same PostgreSQL database, and the next request with it is 401.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolscout_catalog::{Catalog, CatalogOptions, builtin};
use toolscout_server::ServerOptions;
use uuid::Uuid;

use super::two::Two;
use crate::events::{Reader, replica};
use crate::mcp_session::Session;
use crate::socket::spawn;

/// What a tenant holds open: an event stream, an MCP session through rmcp's client, and
/// a session opened by hand with its SSE stream (`GET /mcp`) read here.
struct Open {
    events: Reader,
    client: Session,
    session: String,
    mcp_stream: reqwest::Response,
}

impl Open {
    async fn start(url: &str, token: &str) -> Open {
        let mut events = Reader::open_with(url, None, Some(token)).await;
        assert_eq!(events.next().await.unwrap().event, "ready");
        let client = Session::connect_with(url, Some(token)).await;
        assert_eq!(client.names().await.len(), 2);
        let http = reqwest::Client::new();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}
        }});
        let response = http
            .post(format!("{url}/mcp"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&init)
            .send()
            .await
            .unwrap();
        let session = response.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let initialized = http
            .post(format!("{url}/mcp"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
            .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await
            .unwrap();
        assert_eq!(initialized.status(), 202);
        let mcp_stream = http
            .get(format!("{url}/mcp"))
            .bearer_auth(token)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-06-18")
            .send()
            .await
            .unwrap();
        assert_eq!(mcp_stream.status(), 200);
        Open {
            events,
            client,
            session,
            mcp_stream,
        }
    }

    /// Both streams end within `wait` of `since`.
    async fn ended(&mut self, since: Instant, wait: Duration) {
        let deadline = since + wait;
        let left = deadline.saturating_duration_since(Instant::now());
        assert_eq!(
            self.events.next_within(left).await,
            Ok(None),
            "the event stream did not end within {wait:?}"
        );
        let left = deadline.saturating_duration_since(Instant::now());
        let end = tokio::time::timeout(left, async {
            while let Ok(Some(_)) = self.mcp_stream.chunk().await {}
        })
        .await;
        assert!(
            end.is_ok(),
            "the MCP session's stream did not end within {wait:?}"
        );
        assert!(since.elapsed() < wait, "{:?}", since.elapsed());
    }

    /// Neither stream has ended: nothing but heartbeats comes for a while.
    async fn still_open(&mut self) {
        assert!(
            self.events
                .next_within(Duration::from_millis(300))
                .await
                .is_err(),
            "the event stream ended"
        );
        // (Its first event, rmcp's priming one, may come now.)
        let end = tokio::time::timeout(Duration::from_millis(300), async {
            while let Ok(Some(_)) = self.mcp_stream.chunk().await {}
        })
        .await;
        assert!(end.is_err(), "the MCP session's stream ended");
    }
}

/// The status of the next REST, JSON-RPC and MCP requests with `token`: the token's
/// `/api/v1/whoami`, a `tools/list` over `/rpc`, a `tools/list` in `session` and a new
/// MCP session.
async fn next_requests(url: &str, token: &str, session: &str) -> Vec<u16> {
    let http = reqwest::Client::new();
    let whoami = http
        .get(format!("{url}/api/v1/whoami"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let rpc = http
        .post(format!("{url}/rpc"))
        .bearer_auth(token)
        .json(&json!({"jsonrpc": "2.0", "method": "tools/list", "id": 1}))
        .send()
        .await
        .unwrap();
    let mcp = |body: Value, session: Option<&str>| {
        let mut request = http
            .post(format!("{url}/mcp"))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-06-18");
        }
        request.send()
    };
    let in_session = mcp(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        Some(session),
    )
    .await
    .unwrap();
    let new_session = mcp(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}
        }}),
        None,
    )
    .await
    .unwrap();
    [whoami, rpc, in_session, new_session]
        .iter()
        .map(|r| r.status().as_u16())
        .collect()
}

fn token_id(catalog: &Catalog, tenant: &str) -> Uuid {
    catalog.tenant(tenant).unwrap().tokens[0].id
}

#[tokio::test]
async fn a_revoked_tokens_streams_and_sessions_end_and_its_next_request_is_401() {
    let w = Two::start(ServerOptions::default()).await;
    let mut alpha = Open::start(&w.url, &w.alpha.token).await;
    let mut bravo = Open::start(&w.url, &w.bravo.token).await;
    // Alpha's token is let through (not 401) before.
    let before = next_requests(&w.url, &w.alpha.token, &alpha.session).await;
    assert!(before.iter().all(|s| *s != 401), "{before:?}");

    let started = Instant::now();
    w.catalog()
        .revoke_token(token_id(w.catalog(), "alpha"))
        .unwrap();
    alpha.ended(started, Duration::from_secs(1)).await;
    assert_eq!(
        next_requests(&w.url, &w.alpha.token, &alpha.session).await,
        [401, 401, 401, 401]
    );
    // The rmcp client's session is gone with it.
    assert!(alpha.client.client.list_all_tools().await.is_err());
    // Bravo's are untouched.
    bravo.still_open().await;
    assert_eq!(bravo.client.names().await.len(), 2);
}

#[tokio::test]
async fn a_revocation_by_another_process_ends_them_too() {
    let w = Two::start(ServerOptions::default()).await;
    // The server follows the directory, as `toolscout serve` does.
    let _follower = w.f.state.toolbox().follow();
    let mut alpha = Open::start(&w.url, &w.alpha.token).await;
    let other = Catalog::open_with(
        w.catalog().root(),
        CatalogOptions::default().with_natives(&builtin::NATIVE_FUNCTIONS),
    )
    .unwrap();
    let started = Instant::now();
    other.revoke_token(token_id(&other, "alpha")).unwrap();
    alpha.ended(started, Duration::from_secs(1)).await;
    assert_eq!(
        next_requests(&w.url, &w.alpha.token, &alpha.session).await,
        [401, 401, 401, 401]
    );
}

#[tokio::test]
async fn removing_a_tenant_ends_what_each_of_its_tokens_opened() {
    let w = Two::start(ServerOptions::default()).await;
    let second = w
        .catalog()
        .add_token(w.alpha.id, "second laptop")
        .unwrap()
        .reveal()
        .to_owned();
    let mut first = Open::start(&w.url, &w.alpha.token).await;
    let mut other = Open::start(&w.url, &second).await;
    let mut bravo = Open::start(&w.url, &w.bravo.token).await;
    // Revoking one token ends what it opened, not what the other did.
    let started = Instant::now();
    w.catalog()
        .revoke_token(token_id(w.catalog(), "alpha"))
        .unwrap();
    first.ended(started, Duration::from_secs(1)).await;
    other.still_open().await;
    let started = Instant::now();
    w.catalog().remove_tenant(w.alpha.id).unwrap();
    other.ended(started, Duration::from_secs(1)).await;
    assert_eq!(
        next_requests(&w.url, &second, &other.session).await,
        [401, 401, 401, 401]
    );
    bravo.still_open().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgresql_a_revocation_on_one_replica_ends_what_another_serves() {
    let Some(db) = toolscout_pgtest::database(
        "on_postgresql_a_revocation_on_one_replica_ends_what_another_serves",
    ) else {
        return;
    };
    let (da, dbb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, _fa) = replica(&db, da.path());
    let (b, _fb) = replica(&db, dbb.path());
    let (_tenant, token) = a
        .toolbox()
        .catalog()
        .add_tenant("alpha", toolscout_catalog::TenantLimits::default())
        .unwrap();
    let token = token.reveal().to_owned();
    let url_b = spawn(b.clone()).await;
    // Replica B knows the token (its first request catches up).
    let mut alpha = Open::start(&url_b, &token).await;
    let started = Instant::now();
    a.toolbox()
        .catalog()
        .revoke_token(token_id(a.toolbox().catalog(), "alpha"))
        .unwrap();
    alpha.ended(started, Duration::from_secs(1)).await;
    assert_eq!(
        next_requests(&url_b, &token, &alpha.session).await,
        [401, 401, 401, 401]
    );
}
