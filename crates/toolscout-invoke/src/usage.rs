//! Usage metrics: one [`UsageEvent`] per call, delivered to a [`UsageSink`] off the
//! call's path.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::mpsc;

use crate::ErrorKind;

/// One finished call.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageEvent {
    /// The tool.
    pub tool: String,
    /// When the call started.
    pub at: DateTime<Utc>,
    /// Whether it succeeded.
    pub ok: bool,
    /// Why it failed, when it did.
    pub error_kind: Option<ErrorKind>,
    /// How long it took.
    pub duration: Duration,
}

/// Receives usage events (e.g. to update a catalog's `lastCalledAt` and `callCount`).
///
/// The invoker calls [`UsageSink::record`] from one background task, in call order,
/// after each call has returned. `record` runs on the async runtime, so it should be
/// quick; for blocking work (writing a catalog file), use the channel sender, which is a
/// sink, and drain the receiver where blocking is fine:
///
/// ```
/// use toolscout_invoke::{Invoker, UsageEvent};
/// let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<UsageEvent>();
/// let invoker = Invoker::default().with_usage_sink(tx);
/// # let _ = (invoker, rx.try_recv());
/// ```
pub trait UsageSink: Send + Sync + 'static {
    /// Records one call.
    fn record(&self, event: UsageEvent);
}

/// Delivers events to a sink from one background task, in call order.
pub(crate) struct Dispatch {
    sink: Arc<dyn UsageSink>,
    queue: Mutex<Option<mpsc::UnboundedSender<UsageEvent>>>,
}

impl Dispatch {
    pub(crate) fn new(sink: Arc<dyn UsageSink>) -> Self {
        Dispatch {
            sink,
            queue: Mutex::new(None),
        }
    }

    /// Queues `event`; the first event starts the delivery task on the current runtime.
    /// Outside a runtime, or when that runtime is gone, the sink is called directly.
    pub(crate) fn send(&self, event: UsageEvent) {
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        let event = match queue.as_ref() {
            Some(tx) => match tx.send(event) {
                Ok(()) => return,
                Err(mpsc::error::SendError(event)) => event,
            },
            None => event,
        };
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            drop(queue);
            self.sink.record(event);
            return;
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<UsageEvent>();
        let sink = self.sink.clone();
        handle.spawn(async move {
            while let Some(e) = rx.recv().await {
                sink.record(e);
            }
        });
        // The receiver was just created and is owned by the task: this send succeeds.
        let _ = tx.send(event);
        *queue = Some(tx);
    }
}

impl UsageSink for mpsc::UnboundedSender<UsageEvent> {
    fn record(&self, event: UsageEvent) {
        // A closed receiver means nobody wants the metrics any more.
        let _ = self.send(event);
    }
}
