//! `GET /api/events`: what the watcher does, as server-sent events, so that a page or the plugin
//! can refresh when the index changes.
//!
//! - `hello` once at connection: `{generation, watching, syncing}`;
//! - `sync_started` when a sync attempt starts: `{at, upserts, deletes, rescan}` (counts of the
//!   notes that changed, and whether the whole vault is rescanned);
//! - `index` after each sync: `{generation, at, notes_indexed, notes_deleted, chunks_total,
//!   chunks_embedded, upserts, deletes, rescan, seconds}`;
//! - `sync_failed` when a sync attempt fails: `{at, message, running}` (the watcher retries; with
//!   `running`, the attempt has been running for a long time and has not finished).
//!
//! A client that falls behind by more than 64 events misses the oldest ones and gets a
//! `lagged` event (`{missed}`); `/api/status` has the current state.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use quire_app::types::WatchEvent;
use serde::Serialize;
use serde_json::{Value as Json, json};
use tokio::sync::broadcast;

use crate::AppState;

/// One thing the watcher did, as clients see it.
#[derive(Debug, Clone, Serialize)]
pub struct IndexEvent {
    /// `sync_started`, `index` or `sync_failed`.
    pub kind: &'static str,
    pub data: Json,
}

/// What `/api/status` says about the watcher.
#[derive(Debug, Default)]
pub(crate) struct SyncState {
    /// A sync attempt is running (between `sync_started` and its outcome).
    pub syncing: AtomicBool,
    /// The outcome of the last attempt.
    pub last: Mutex<Option<IndexEvent>>,
}

/// Turns a watcher event into an [`IndexEvent`], remembers it for `/api/status`, and sends it to
/// every connected client. Runs on the watcher's thread, after the new searchers are in place.
pub(crate) fn publish(
    state: &SyncState,
    events: &broadcast::Sender<IndexEvent>,
    event: &WatchEvent,
) {
    let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let syncing = !matches!(
        event,
        WatchEvent::Synced { .. } | WatchEvent::Failed { running: false, .. }
    );
    state.syncing.store(syncing, Ordering::SeqCst);
    let event = match event {
        WatchEvent::Started { changes } => {
            let _ = events.send(IndexEvent {
                kind: "sync_started",
                data: json!({
                    "at": at,
                    "upserts": changes.upserts.len(),
                    "deletes": changes.deletes.len(),
                    "rescan": changes.rescan,
                }),
            });
            return;
        }
        WatchEvent::Synced { stats, changes } => IndexEvent {
            kind: "index",
            data: json!({
                "generation": stats.generation,
                "at": at,
                "notes_indexed": stats.notes_indexed,
                "notes_unchanged": stats.notes_unchanged,
                "notes_deleted": stats.notes_deleted,
                "notes_skipped": stats.notes_skipped.len(),
                "chunks_total": stats.chunks_total,
                "chunks_embedded": stats.chunks_embedded,
                "chunks_reused": stats.chunks_reused,
                "upserts": changes.upserts,
                "deletes": changes.deletes,
                "rescan": changes.rescan,
                "seconds": stats.seconds,
            }),
        },
        WatchEvent::Failed { message, running } => IndexEvent {
            kind: "sync_failed",
            data: json!({ "at": at, "message": message, "running": running }),
        },
    };
    if let Ok(mut last) = state.last.lock() {
        *last = Some(event.clone());
    }
    // No receiver is fine: nobody is listening.
    let _ = events.send(event);
}

fn sse_event(kind: &str, data: &Json) -> Event {
    Event::default().event(kind).data(data.to_string())
}

/// The current generation of the index, if there is one.
fn current_generation(state: &AppState) -> Option<u64> {
    let searcher = state.live.searcher(Duration::ZERO).ok()?;
    let searcher = searcher.lock().unwrap_or_else(|e| e.into_inner());
    searcher.store().generation().ok()
}

pub(crate) async fn stream(
    State(state): State<Arc<AppState>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let receiver = state.events.subscribe();
    let hello = {
        let state = Arc::clone(&state);
        tokio::task::spawn_blocking(move || current_generation(&state))
            .await
            .ok()
            .flatten()
    };
    let first = sse_event(
        "hello",
        &json!({
            "generation": hello,
            "watching": state.watching,
            "syncing": state.sync.syncing.load(Ordering::SeqCst),
        }),
    );
    let events = futures_util::stream::unfold(
        (Some(first), receiver),
        |(first, mut receiver)| async move {
            if let Some(first) = first {
                return Some((Ok(first), (None, receiver)));
            }
            let event = match receiver.recv().await {
                Ok(event) => sse_event(event.kind, &event.data),
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    sse_event("lagged", &json!({ "missed": missed }))
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            };
            Some((Ok(event), (None, receiver)))
        },
    );
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
