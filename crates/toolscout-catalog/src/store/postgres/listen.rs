//! The `LISTEN` connection: hears every committed write's notice, reconnecting when it
//! is lost, and tells the catalog's threads what it heard.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use tokio_postgres::{Config, NoTls};

/// The channel a committed write notifies, with its generation.
pub(crate) const CHANNEL: &str = "toolscout_catalog";

/// What the `LISTEN` connection knows, shared with the catalog's threads.
#[derive(Debug, Default)]
pub(super) struct Listen {
    pub(super) state: Mutex<ListenState>,
    pub(super) changed: Condvar,
}

#[derive(Debug, Default)]
pub(super) struct ListenState {
    /// Whether the listener is connected and listening.
    pub(super) connected: bool,
    /// The generation read just after `LISTEN`: a state older than it may have missed
    /// notices.
    pub(super) since: u64,
    /// The latest generation a notice announced.
    pub(super) latest: u64,
    /// How many times the listener (re)connected.
    pub(super) epoch: u64,
}

impl Listen {
    pub(super) fn lock(&self) -> MutexGuard<'_, ListenState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn update(&self, f: impl FnOnce(&mut ListenState)) {
        f(&mut self.lock());
        self.changed.notify_all();
    }
}

/// Listens to [`CHANNEL`] for ever (until the runtime ends), reconnecting with a backoff
/// of 100 ms doubling to 5 s.
pub(super) async fn listen(config: Config, shared: Arc<Listen>) {
    use futures_util::StreamExt as _;
    let mut backoff = Duration::from_millis(100);
    loop {
        if let Ok((client, mut connection)) = config.connect(NoTls).await {
            backoff = Duration::from_millis(100);
            let heard = Arc::clone(&shared);
            let messages = tokio::spawn(async move {
                let mut stream =
                    futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                while let Some(Ok(message)) = stream.next().await {
                    if let tokio_postgres::AsyncMessage::Notification(n) = message
                        && n.channel() == CHANNEL
                        && let Ok(g) = n.payload().parse::<u64>()
                    {
                        heard.update(|s| s.latest = s.latest.max(g));
                    }
                }
            });
            let listening = async {
                client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
                let row = client
                    .query_one("SELECT generation FROM catalog_meta", &[])
                    .await?;
                row.try_get::<_, i64>(0)
            }
            .await;
            if let Ok(g) = listening {
                shared.update(|s| {
                    s.connected = true;
                    s.since = u64::try_from(g).unwrap_or(0);
                    s.epoch += 1;
                });
            }
            // Until the server or the network ends the connection.
            let _ = messages.await;
            drop(client);
            shared.update(|s| s.connected = false);
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}
