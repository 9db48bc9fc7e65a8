//! Usage metrics: one [`UsageEvent`] per call, delivered to a [`UsageSink`] off the
//! call's path.

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
/// The invoker calls [`UsageSink::record`] from a spawned task, after the call has
/// returned; an unbounded channel sender is a sink:
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

impl UsageSink for mpsc::UnboundedSender<UsageEvent> {
    fn record(&self, event: UsageEvent) {
        // A closed receiver means nobody wants the metrics any more.
        let _ = self.send(event);
    }
}
