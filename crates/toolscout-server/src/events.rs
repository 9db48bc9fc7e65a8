//! The HTTP side of the feed: `GET /api/v1/events`, one stream per client, from the
//! operator's events or a view's (see [`crate::feed`]), ended by a [`Guard`] when its reader
//! may read it no more.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Extension, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{OwnedSemaphorePermit, broadcast};
use toolscout_catalog::{TenantId, Viewer};
use toolscout_discover::Toolbox;
use uuid::Uuid;

use crate::feed::{HEARTBEAT, Position, Start};
use crate::state::{AppState, Revocation, holds};
use crate::{AppError, Principal};

fn sse(name: &str, id: Option<String>, data: &impl Serialize) -> Event {
    let event = Event::default()
        .event(name)
        .data(serde_json::to_string(data).unwrap_or_default());
    match id {
        Some(id) => event.id(id),
        None => event,
    }
}

/// `GET /api/v1/events`.
pub(crate) async fn events(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
) -> Response {
    let feed = state.feed();
    let Ok(permit) = Arc::clone(&feed.streams).try_acquire_owned() else {
        let mut response = AppError::unavailable(
            "every event stream this server allows is in use; try again shortly",
        )
        .into_response();
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        return response;
    };
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    // Watching for revocations before anything is read: one between the request's
    // authentication and now is caught by the first check of the guard.
    let guard = Guard::new(&state, &principal);
    let viewer = principal.viewer();
    // Following a view may read the catalog (its identity): off the async threads.
    let reader = state.clone();
    let start = tokio::task::spawn_blocking(move || {
        reader
            .feed()
            .follow(reader.toolbox().catalog(), &viewer, last.as_deref())
    })
    .await;
    let (first, source) = match start {
        Ok(start) => first_events(start),
        Err(e) => {
            return AppError::unavailable(format!("the event stream cannot start: {e}"))
                .into_response();
        }
    };
    let stream = Stream {
        first: first.into(),
        source,
        heartbeat: tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT),
        guard,
        checked: false,
        _permit: permit,
    };
    let stream = futures_util::stream::unfold(stream, |mut s| async move {
        let event = s.next().await?;
        Some((Ok::<_, Infallible>(event), s))
    });
    let mut response = Sse::new(stream).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    *response.status_mut() = StatusCode::OK;
    response
}

/// A position and an identity: what `ready` and `reset` tell (`{"generation", "identity"}`
/// on the operator's stream, `{"seq", "identity"}` on a view's).
#[derive(Serialize)]
struct Mark {
    #[serde(flatten)]
    position: Position,
    #[serde(skip_serializing_if = "Option::is_none")]
    identity: Option<Uuid>,
}

/// The first events of a stream, and its source.
fn first_events(start: Start) -> (Vec<Event>, Source) {
    let mark = Mark {
        position: start.position(start.number),
        identity: Some(start.identity),
    };
    let id = start.id(start.number);
    let mut first: Vec<Event> = vec![];
    let mut sent = start.number;
    match &start.backlog {
        None => first.push(sse("ready", Some(id), &mark)),
        Some(Some(backlog)) => {
            // Resumed: the latest sent is the client's, or the backlog's last.
            sent = start.last.unwrap_or(start.number);
            for e in backlog {
                sent = sent.max(e.number());
                first.push(sse("change", Some(start.id(e.number())), &**e));
            }
        }
        Some(None) => first.push(sse("reset", Some(id), &mark)),
    }
    (first, Source { start, sent })
}

/// Where a stream's live events come from: its audience's channel; `sent` is the number
/// of the latest event sent.
struct Source {
    start: Start,
    sent: u64,
}

impl Source {
    /// The next event to send: `Ok(None)` for one already sent, `Err` when the stream
    /// must end (fallen behind, or the server is going: the client reconnects and
    /// resumes).
    async fn next(&mut self) -> Result<Option<Event>, RecvError> {
        let e = self.start.rx.recv().await?;
        let number = e.number();
        if e.reset {
            // Names moved that no event in order can tell: the client re-reads.
            self.sent = self.sent.max(number);
            let mark = Mark {
                position: e.position,
                identity: Some(e.identity),
            };
            return Ok(Some(sse("reset", Some(self.start.id(number)), &mark)));
        }
        if number <= self.sent {
            return Ok(None);
        }
        self.sent = number;
        Ok(Some(sse("change", Some(self.start.id(number)), &*e)))
    }

    fn heartbeat(&self) -> Event {
        let mark = Mark {
            position: self.start.position(self.sent),
            identity: None,
        };
        sse("heartbeat", None, &mark)
    }
}

/// Ends a stream whose reader may read it no more: a tenant's once its token is revoked
/// (or its tenant removed); an anonymous reader's of the operator's view once the catalog
/// has a tenant.
struct Guard {
    toolbox: Toolbox,
    /// A tenant's stream: the tenant, the token, and the revocations to watch.
    tenant: Option<(TenantId, Uuid, broadcast::Receiver<Revocation>)>,
    /// A stream without a token in the operator's view.
    until_tenants: bool,
}

impl Guard {
    fn new(state: &AppState, principal: &Principal) -> Guard {
        let tenant = match principal {
            Principal::Tenant { id, token, .. } => Some((*id, *token, state.revocations())),
            _ => None,
        };
        Guard {
            toolbox: state.toolbox().clone(),
            tenant,
            until_tenants: *principal == Principal::Anonymous(Viewer::Operator),
        }
    }

    /// Whether the reader may still read the stream (read from the catalog).
    fn admits(&self) -> bool {
        let catalog = self.toolbox.catalog();
        match &self.tenant {
            Some((tenant, token, _)) => holds(catalog, *tenant, *token),
            None => !(self.until_tenants && catalog.has_tenants()),
        }
    }

    /// Resolves when the tenant's token is revoked; never for another stream.
    async fn revoked(&mut self) {
        let Guard {
            toolbox, tenant, ..
        } = self;
        let Some((tenant, token, rx)) = tenant else {
            return std::future::pending().await;
        };
        loop {
            match rx.recv().await {
                Ok(r) if r.ends(*tenant, *token) => return,
                Ok(_) => {}
                // Revocations were missed: the catalog says whether this was one.
                Err(RecvError::Lagged(_)) => {
                    if !holds(toolbox.catalog(), *tenant, *token) {
                        return;
                    }
                }
                // The server is going; the events' channel ends the stream.
                Err(RecvError::Closed) => return std::future::pending().await,
            }
        }
    }
}

/// One client's stream.
struct Stream {
    first: VecDeque<Event>,
    source: Source,
    heartbeat: tokio::time::Interval,
    guard: Guard,
    /// Whether the guard was asked once, at the start.
    checked: bool,
    /// Held while the stream lives.
    _permit: OwnedSemaphorePermit,
}

impl Stream {
    /// The next event; `None` ends the stream (the client fell behind, may read no more,
    /// or the server stops).
    async fn next(&mut self) -> Option<Event> {
        if !self.checked {
            self.checked = true;
            if !self.guard.admits() {
                return None;
            }
        }
        if let Some(e) = self.first.pop_front() {
            return Some(e.retry(Duration::from_secs(2)));
        }
        let Stream {
            source,
            heartbeat,
            guard,
            ..
        } = self;
        loop {
            tokio::select! {
                got = source.next() => match got {
                    Ok(None) => continue,
                    Ok(Some(event)) => {
                        if guard.until_tenants && !guard.admits() {
                            return None;
                        }
                        heartbeat.reset();
                        return Some(event);
                    }
                    Err(_) => return None,
                },
                _ = heartbeat.tick() => return Some(source.heartbeat()),
                () = guard.revoked() => return None,
            }
        }
    }
}
