//! Request rates per tenant: a token bucket each, so that one tenant cannot starve the
//! others (issue 39).
//!
//! A tenant's bucket holds up to [`TenantLimits::burst`] requests and fills at
//! [`TenantLimits::requests_per_second`]; every request of any of its tokens takes one.
//! An empty bucket is 429 `rate_limited` with `Retry-After` (whole seconds, at least 1).
//! The operator and requests without a token are not limited here (the connection caps
//! hold for everyone).
//!
//! **Rationale:** a refusal is answered after the wait for the next free request, at most
//! 50 ms, and at most 8 refusals of one tenant are held at a time (beyond, at once): a
//! client that ignores `Retry-After` and loops makes a few hundred cheap refusals a
//! second instead of tens of thousands, which on a small machine would take a core from
//! every other tenant. No crate: the arithmetic is a division, and `governor` would bring
//! several dependencies for it.
//!
//! Buckets are per process: N replicas of `serve` admit N times the rate.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use toolscout_catalog::{TenantId, TenantLimits};

/// How long a refusal is held at most before it is answered.
pub(crate) const HOLD: Duration = Duration::from_millis(50);
/// How many refusals of one tenant are held at once.
pub(crate) const MAX_HELD: usize = 8;
/// Past this many buckets, idle ones (full again) are forgotten.
const PRUNE_AT: usize = 4_096;

/// The buckets of one server.
#[derive(Debug, Default)]
pub(crate) struct Limiter {
    buckets: Mutex<HashMap<TenantId, Bucket>>,
    held: Mutex<HashMap<TenantId, usize>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Limiter {
    /// Takes one request from `tenant`'s bucket at `now`, or says how long until one is
    /// free.
    pub(crate) fn take(
        &self,
        tenant: TenantId,
        limits: &TenantLimits,
        now: Instant,
    ) -> Result<(), Duration> {
        let rate = f64::from(limits.requests_per_second.max(1));
        let burst = f64::from(limits.burst.max(1));
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= PRUNE_AT && !buckets.contains_key(&tenant) {
            buckets.retain(|_, b| {
                b.tokens + now.saturating_duration_since(b.at).as_secs_f64() * rate < burst
            });
        }
        let b = buckets.entry(tenant).or_insert(Bucket {
            tokens: burst,
            at: now,
        });
        let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
        b.tokens = (b.tokens + elapsed * rate).min(burst);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - b.tokens) / rate))
        }
    }

    /// Holds a refusal of `tenant` for `min(wait, HOLD)` unless [`MAX_HELD`] of its
    /// refusals are held already.
    pub(crate) async fn hold(&self, tenant: TenantId, wait: Duration) {
        {
            let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
            let n = held.entry(tenant).or_insert(0);
            if *n >= MAX_HELD {
                return;
            }
            *n += 1;
        }
        tokio::time::sleep(wait.min(HOLD)).await;
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = held.get_mut(&tenant) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                held.remove(&tenant);
            }
        }
    }
}

/// `Retry-After` for a wait: whole seconds, at least 1.
pub(crate) fn retry_after(wait: Duration) -> u64 {
    wait.as_secs_f64().ceil().max(1.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(rate: u32, burst: u32) -> TenantLimits {
        TenantLimits {
            requests_per_second: rate,
            burst,
            ..TenantLimits::default()
        }
    }

    #[test]
    fn a_bucket_gives_its_burst_then_its_rate() {
        let l = Limiter::default();
        let t = uuid::Uuid::now_v7();
        let start = Instant::now();
        let lim = limits(10, 3);
        for _ in 0..3 {
            assert!(l.take(t, &lim, start).is_ok());
        }
        let wait = l.take(t, &lim, start).unwrap_err();
        assert!((wait.as_secs_f64() - 0.1).abs() < 1e-6, "{wait:?}");
        // 100 ms later one more, not two.
        let later = start + Duration::from_millis(100);
        assert!(l.take(t, &lim, later).is_ok());
        assert!(l.take(t, &lim, later).is_err());
        // Another tenant has its own bucket.
        assert!(l.take(uuid::Uuid::now_v7(), &lim, later).is_ok());
        // A long pause fills the bucket to its burst, not beyond.
        let much_later = later + Duration::from_secs(60);
        for _ in 0..3 {
            assert!(l.take(t, &lim, much_later).is_ok());
        }
        assert!(l.take(t, &lim, much_later).is_err());
        assert_eq!(retry_after(Duration::from_millis(20)), 1);
        assert_eq!(retry_after(Duration::from_millis(1_500)), 2);
    }

    #[tokio::test]
    async fn refusals_are_held_briefly_and_only_a_few_at_a_time() {
        let l = std::sync::Arc::new(Limiter::default());
        let t = uuid::Uuid::now_v7();
        let started = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..(MAX_HELD * 3) {
            let l = std::sync::Arc::clone(&l);
            tasks.push(tokio::spawn(async move {
                let at = Instant::now();
                l.hold(t, Duration::from_secs(5)).await;
                at.elapsed()
            }));
        }
        let mut held = 0;
        for task in tasks {
            if task.await.unwrap() >= HOLD {
                held += 1;
            }
        }
        assert!(held <= MAX_HELD, "{held}");
        assert!(held >= 1);
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
