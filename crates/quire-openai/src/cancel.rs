//! A flag that asks a running request (or a wait before a retry) to stop.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often code that waits (for the network, for a retry) looks at its [`CancelToken`].
pub const CANCEL_POLL: Duration = Duration::from_millis(20);

/// A shared flag that asks a running call to stop. Clones share the flag, so one clone can go to
/// a Ctrl-C handler or another thread while the call holds the other.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A token not yet cancelled, shared with no other.
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Asks every call holding a clone of this token to stop. It cannot be undone.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether any clone of this token has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}
