//! How long to wait before trying a request again: the server's `Retry-After` when it sends one,
//! otherwise exponential backoff with jitter, and a sleep that a [`CancelToken`] cuts short.

use std::hash::{BuildHasher, Hasher};
use std::time::{Duration, Instant};

use crate::cancel::{CANCEL_POLL, CancelToken};

/// Retries of a request that failed with 429, a 5xx status or a dropped connection, before any
/// token arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries after the first one (0: never retry).
    pub max_retries: u32,
    /// The backoff before the first retry; it doubles with each retry.
    pub base_delay: Duration,
    /// The longest wait. A server that asks (with `Retry-After`) for more than this is not
    /// retried: its error is reported at once rather than hanging the caller.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0 for the first), or `None` to give up.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Option<Duration> {
        if retry >= self.max_retries {
            return None;
        }
        if let Some(asked) = retry_after {
            return (asked <= self.max_delay).then_some(asked);
        }
        let backoff = self
            .base_delay
            .saturating_mul(1u32 << retry.min(16))
            .min(self.max_delay);
        // "Equal jitter": half the backoff fixed, half random, so clients that failed together do
        // not come back together, yet each still waits a while.
        Some(backoff / 2 + backoff.mul_f64(random_fraction() / 2.0))
    }
}

/// The seconds of a `Retry-After` header. The HTTP-date form is not understood (no chat API
/// sends it) and gives `None`, which falls back to backoff.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let seconds: f64 = value.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// Sleeps for `duration` unless `cancel` is set first; returns `false` when cancelled.
pub fn sleep_unless_cancelled(duration: Duration, cancel: &CancelToken) -> bool {
    let until = Instant::now() + duration;
    loop {
        if cancel.is_cancelled() {
            return false;
        }
        let now = Instant::now();
        if now >= until {
            return true;
        }
        std::thread::sleep((until - now).min(CANCEL_POLL));
    }
}

/// A number in [0, 1) that differs between calls. std's `RandomState` is seeded randomly per
/// process and per instance, which is all the randomness jitter needs (no `rand` dependency).
fn random_fraction() -> f64 {
    let hash = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    (hash >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_within_jitter_and_stops_at_the_budget() {
        let policy = RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
        };
        for _ in 0..20 {
            let first = policy.delay(0, None).unwrap();
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let second = policy.delay(1, None).unwrap();
            assert!(second >= Duration::from_millis(100) && second <= Duration::from_millis(200));
            let third = policy.delay(2, None).unwrap();
            assert!(third >= Duration::from_millis(150) && third <= Duration::from_millis(300));
        }
        assert_eq!(policy.delay(3, None), None);
    }

    #[test]
    fn retry_after_is_obeyed_unless_it_is_too_long() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(2))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(policy.delay(0, Some(Duration::from_secs(3600))), None);
    }

    #[test]
    fn retry_after_is_read_as_seconds() {
        assert_eq!(parse_retry_after(" 1 "), Some(Duration::from_secs(1)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }

    #[test]
    fn a_cancelled_sleep_returns_at_once() {
        let cancel = CancelToken::new();
        cancel.cancel();
        let started = Instant::now();
        assert!(!sleep_unless_cancelled(Duration::from_secs(10), &cancel));
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}
