//! Proposed changes to a vault: the one way anything quire makes is written into a note.
//!
//! A [`Proposal`] is a set of file changes (create, replace, append under a heading, rename),
//! each made from known bytes: for every existing file it records the sha256 of the bytes it was
//! computed from, the file's whole new content and a unified diff. Proposals live in the index
//! directory (`<index>/proposals/<id>.json`), outside the vault, survive restarts, and touch the
//! vault only when applied ([`ProposalStore::apply`]).
//!
//! Applying, in order (all under one lock, `<index>/proposals/apply.lock`):
//! 1. every base hash is checked against the file on disk, every new file's path must be free;
//! 2. every file that will be replaced or renamed is copied to `<index>/backups/<id>/<path>`;
//! 3. every new content is staged beside its target (a synced dot-file,
//!    [`quire_vault::atomic::stage_beside`]) and a journal naming them is written;
//! 4. the base hashes are checked once more, the journal is marked `committing`, and each staged
//!    file is renamed over its target ([`quire_vault::atomic::commit_staged`]);
//! 5. the proposal is marked applied and the journal removed.
//!
//! A crash before step 4 leaves every note as it was (the next open removes the staged files
//! and the proposal stays pending). A crash during step 4 leaves some files new and some old;
//! the next open of the store ([`ProposalStore::open`]) finishes the renames from the journal
//! (roll forward: every staged file is complete and synced), so the proposal ends applied as a
//! whole. A file that a user changed in between is never overwritten: that file is reported and
//! left as the user wrote it, its staged content kept beside the backups.
//!
//! Pure parts (diffs, [`edit`](quire_vault::edit) of a note's text) have no I/O; the store does
//! the file work.

mod apply;
mod diff;
mod error;
mod model;
mod store;

pub use apply::{Applied, ApplyOptions, NotWritten, Recovered, RecoveryOutcome};
pub use diff::unified_diff;
pub use error::ProposalError;
pub use model::{
    ChangeKind, ChangeRequest, FileChange, NewProposal, Proposal, ProposalSummary, Status,
};
pub use store::{
    Listing, MAX_CHANGES, MAX_CONTENT_BYTES, MAX_NAME_BYTES, ProposalStore, Unreadable, sha256_hex,
};
