//! Per-tool rate limits: at most N calls in any sliding minute.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const WINDOW: Duration = Duration::from_secs(60);
/// Past this many keys, those with no call in the window are forgotten.
const PRUNE_AT: usize = 4_096;

/// Call times of each rate-limited tool (and caller: the key is the invoker's) within the
/// last minute.
#[derive(Debug, Default)]
pub(crate) struct RateLimiter {
    calls: Mutex<HashMap<String, VecDeque<Instant>>>,
}

impl RateLimiter {
    /// Takes a slot for `tool`, or says how long until one frees up.
    pub(crate) fn acquire(&self, tool: &str, per_minute: u32) -> Result<(), Duration> {
        let now = Instant::now();
        // A poisoned lock only means another call panicked mid-update; the data is still usable.
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        if calls.len() >= PRUNE_AT && !calls.contains_key(tool) {
            // Keys are per tool and caller: forget those with no call in the window.
            calls.retain(|_, times| {
                times
                    .back()
                    .is_some_and(|t| now.duration_since(*t) < WINDOW)
            });
        }
        let times = calls.entry(tool.to_owned()).or_default();
        while times
            .front()
            .is_some_and(|t| now.duration_since(*t) >= WINDOW)
        {
            times.pop_front();
        }
        if times.len() >= per_minute as usize {
            let oldest = times.front().copied().unwrap_or(now);
            return Err(WINDOW.saturating_sub(now.duration_since(oldest)));
        }
        times.push_back(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliding_window() {
        let rl = RateLimiter::default();
        assert!(rl.acquire("t", 2).is_ok());
        assert!(rl.acquire("t", 2).is_ok());
        let wait = rl.acquire("t", 2).unwrap_err();
        assert!(wait <= WINDOW && wait > Duration::from_secs(59));
        assert!(rl.acquire("other", 2).is_ok());
        assert!(rl.acquire("t", 0).is_err());
    }
}
