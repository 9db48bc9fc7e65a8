//! The accept loop: HTTP/1 connections served within [`ConnectionLimits`].
//!
//! **Rationale:** `axum::serve` sets no timer, so a connection that sends nothing, half a
//! header or half a body stays open for as long as its peer likes, and nothing caps how
//! many there are: a thousand idle sockets use up a 1,024-descriptor limit and new
//! requests time out. Here every connection has a deadline for its request head (also
//! between requests of a kept-alive connection), every request body a deadline between
//! two of its pieces, and the number of open connections a cap: at the cap, the idle
//! connection accepted first is closed to make room, else the first one still sending a
//! request body (a slow upload loses to a new request); a connection whose request has
//! been read, or whose answer is streaming, is never closed for that, and with only such
//! connections open the new one is refused.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Request, Response};
use http_body::{Body as HttpBody, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};
use tower_service::Service as _;

/// The bounds of the connections a server keeps open.
///
/// ```
/// use std::time::Duration;
/// use toolscout_server::ConnectionLimits;
///
/// let limits = ConnectionLimits::default()
///     .with_max_connections(256)
///     .with_header_read_timeout(Duration::from_secs(5));
/// assert_eq!(limits.max_connections, 256);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionLimits {
    /// Most connections open at once (at least 1). At the cap, the idle connection
    /// accepted first is closed for a new one, else the first one still sending a
    /// request body; with neither, the new one is refused.
    pub max_connections: usize,
    /// How long a connection may take to send a request's head (its line and headers),
    /// counted from when the server waits for it: a new connection, and a kept-alive one
    /// between requests (so it is the idle timeout too).
    pub header_read_timeout: Duration,
    /// How long a request body may go without sending anything; the request then fails
    /// (400) and the connection is closed.
    pub body_read_timeout: Duration,
    /// How long a stopping server lets the requests in flight finish; then their
    /// connections are closed and what they were running (a recipe's run) is cancelled.
    pub shutdown_grace: Duration,
}

/// [`ConnectionLimits::max_connections`] by default.
///
/// **Rationale:** under the common soft limit of 1,024 file descriptors, with room left
/// for the catalog's files, the index and outgoing requests.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;

/// How long a shutdown waits for requests in flight by default before it stops anyway
/// (a streaming MCP session or a chat turn can last much longer), cancelling them
/// ([`crate::ConnectionLimits::shutdown_grace`]).
pub const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            shutdown_grace: SHUTDOWN_GRACE,
        }
    }
}

impl ConnectionLimits {
    /// Sets the most connections open at once (at least 1).
    #[must_use]
    pub fn with_max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }

    /// Sets how long a request's head may take (see
    /// [`ConnectionLimits::header_read_timeout`]).
    #[must_use]
    pub fn with_header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Sets how long a request body may stall (see
    /// [`ConnectionLimits::body_read_timeout`]).
    #[must_use]
    pub fn with_body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// Sets how long a stopping server lets requests finish (see
    /// [`ConnectionLimits::shutdown_grace`]).
    #[must_use]
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.shutdown_grace = grace;
        self
    }
}

/// What the accept loop knows of one connection's requests.
#[derive(Default)]
struct Activity {
    /// Requests being served, their answers' bodies included.
    in_flight: AtomicUsize,
    /// Requests whose bodies have not all arrived.
    reading: AtomicUsize,
}

/// One open connection, as the accept loop sees it.
struct Live {
    activity: Arc<Activity>,
    /// Closes it (a stored permit: it may come before the task first waits).
    evict: Arc<Notify>,
}

/// The open connections, by the order they were accepted.
#[derive(Default)]
struct Tracker {
    live: Mutex<BTreeMap<u64, Live>>,
}

impl Tracker {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Live>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Closes the idle connection accepted first, else the first one still sending a
    /// request body; returns whether there was one.
    fn evict_idle(&self) -> bool {
        let mut live = self.lock();
        let first_where = |idle: fn(&Activity) -> bool| {
            live.iter()
                .find(|(_, c)| idle(&c.activity))
                .map(|(id, _)| *id)
        };
        let chosen = first_where(|a| a.in_flight.load(Ordering::Acquire) == 0)
            .or_else(|| first_where(|a| a.reading.load(Ordering::Acquire) > 0));
        match chosen.and_then(|id| live.remove(&id)) {
            Some(conn) => {
                conn.evict.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Removes its connection from the tracker when the connection's task ends, however it
/// ends.
struct Registered {
    tracker: Arc<Tracker>,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.tracker.lock().remove(&self.id);
    }
}

/// Counts a request in one of [`Activity`]'s counters until dropped.
struct Counted(Arc<Activity>, fn(&Activity) -> &AtomicUsize);

impl Counted {
    fn enter(activity: &Arc<Activity>, counter: fn(&Activity) -> &AtomicUsize) -> Counted {
        counter(activity).fetch_add(1, Ordering::AcqRel);
        Counted(Arc::clone(activity), counter)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        (self.1)(&self.0).fetch_sub(1, Ordering::AcqRel);
    }
}

/// Serves `router` on `listener` within `limits` until `shutdown` completes, then lets
/// the connections finish their requests (no new ones are read) and returns once all
/// are closed.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let tracker = Arc::new(Tracker::default());
    let (stop_tx, stop_rx) = watch::channel(false);
    // Every connection task holds a receiver: `closed()` completes when all are gone.
    let (done_tx, done_rx) = watch::channel(());
    let mut next_id = 0u64;
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors (or another passing failure): make room, and
                // wait a moment rather than spin on the error.
                tracing::warn!("accepting a connection failed: {e}");
                tracker.evict_idle();
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        if tracker.lock().len() >= limits.max_connections && !tracker.evict_idle() {
            tracing::warn!(
                "{} connections are open and none is idle: a new one is refused",
                limits.max_connections
            );
            drop(stream);
            continue;
        }
        let _ = stream.set_nodelay(true);
        let activity = Arc::new(Activity::default());
        let evict = Arc::new(Notify::new());
        next_id += 1;
        tracker.lock().insert(
            next_id,
            Live {
                activity: Arc::clone(&activity),
                evict: Arc::clone(&evict),
            },
        );
        let registered = Registered {
            tracker: Arc::clone(&tracker),
            id: next_id,
        };
        tokio::spawn(connection(
            stream,
            router.clone(),
            limits,
            activity,
            evict,
            stop_rx.clone(),
            (registered, done_rx.clone()),
        ));
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(done_rx);
    done_tx.closed().await;
    Ok(())
}

/// Serves one connection until it ends, is evicted, or the server stops (then its
/// request in flight is finished first, for at most the shutdown grace: then the
/// connection is dropped, and with it the request's work).
async fn connection(
    stream: tokio::net::TcpStream,
    router: Router,
    limits: ConnectionLimits,
    activity: Arc<Activity>,
    evict: Arc<Notify>,
    mut stop: watch::Receiver<bool>,
    _held: (Registered, watch::Receiver<()>),
) {
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let guard = Counted::enter(&activity, |a| &a.in_flight);
        let reading = Counted::enter(&activity, |a| &a.reading);
        let request = request.map(|body| TimedBody::new(body, limits.body_read_timeout, reading));
        let mut router = router.clone();
        async move {
            let response: Response<Body> = match router.call(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            Ok::<_, Infallible>(response.map(|body| {
                Body::new(Tracked {
                    inner: body,
                    _guard: guard,
                })
            }))
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let conn = builder
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    let mut conn = std::pin::pin!(conn);
    let mut stopping = false;
    // Armed when the server stops: a request still running then (a recipe's run, say)
    // is cancelled, not waited for.
    let grace = tokio::time::sleep(Duration::MAX);
    let mut grace = std::pin::pin!(grace);
    loop {
        tokio::select! {
            served = conn.as_mut() => {
                if let Err(e) = served {
                    tracing::debug!("connection ended: {e}");
                }
                return;
            }
            () = evict.notified() => return,
            changed = stop.changed(), if !stopping => {
                stopping = true;
                if changed.is_ok() {
                    conn.as_mut().graceful_shutdown();
                }
                grace
                    .as_mut()
                    .reset(tokio::time::Instant::now() + limits.shutdown_grace);
            }
            () = grace.as_mut(), if stopping => return,
        }
    }
}

/// An answer's body that keeps its request counted as in flight until it is dropped
/// (a streamed answer is in flight until its last byte).
struct Tracked {
    inner: Body,
    _guard: Counted,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A request body that fails once nothing has come for its timeout, and counts as
/// being read until it has all arrived (or is dropped).
struct TimedBody {
    inner: Incoming,
    timeout: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
    reading: Option<Counted>,
}

impl TimedBody {
    fn new(inner: Incoming, timeout: Duration, reading: Counted) -> TimedBody {
        let reading = (!inner.is_end_stream()).then_some(reading);
        TimedBody {
            inner,
            timeout,
            deadline: Box::pin(tokio::time::sleep(timeout)),
            reading,
        }
    }
}

/// A request body that stalled past [`ConnectionLimits::body_read_timeout`].
#[derive(Debug, thiserror::Error)]
#[error("the request body sent nothing for {} s", .0.as_secs())]
struct BodyStalled(Duration);

impl HttpBody for TimedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                let next = tokio::time::Instant::now() + this.timeout;
                this.deadline.as_mut().reset(next);
                if frame.is_none() || this.inner.is_end_stream() {
                    this.reading = None;
                }
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(BodyStalled(this.timeout).into()))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
