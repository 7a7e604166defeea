//! The structural audit, once for every face (`quire audit`, `GET /api/audit`), and where its
//! JSON Canvas map may be saved: a path outside the vault is written at once (atomically), a
//! path inside the vault becomes a proposal the user applies, like every other write into it.

use std::path::Path;

use quire_index::IndexLocation;
use quire_vault::Vault;

pub use quire_audit::canvas::UnknownGrouping;
pub use quire_audit::{AuditOptions, AuditReport, Canvas, Grouping, canvas, render_markdown};

use crate::error::AppError;
use crate::live::{Live, VAULT_WAIT};

/// The operation's name in error messages.
const AUDIT: &str = "audit";

/// The audit of the vault a server holds (waits for its first parse at most
/// [`VAULT_WAIT`]).
pub fn audit(live: &Live, options: &AuditOptions) -> Result<AuditReport, AppError> {
    let snapshot = live.vault(VAULT_WAIT)?;
    Ok(quire_audit::audit(&snapshot.vault, options))
}

/// The audit of a vault the caller opened (the CLI reads the vault once per command).
pub fn audit_vault(vault: &Vault, options: &AuditOptions) -> AuditReport {
    quire_audit::audit(vault, options)
}

/// Where a canvas went.
pub type CanvasSaved = crate::proposals::Saved;

/// The canvas as Obsidian reads it: JSON, two-space indent, a final newline.
pub fn canvas_json(canvas: &Canvas) -> Result<String, AppError> {
    let mut text = serde_json::to_string_pretty(canvas)
        .map_err(|e| AppError::Internal(format!("cannot serialize the canvas: {e}")))?;
    text.push('\n');
    Ok(text)
}

/// Saves `canvas` at `target` (a `.canvas` file, relative to the current directory or
/// absolute): outside the vault it is written at once through `quire_vault::atomic`; inside
/// it becomes a proposal in the vault's store under `index`, made by `command`, and nothing in
/// the vault is written. The folder must exist; symbolic links are resolved before deciding,
/// so a link into the vault counts as inside.
pub fn save_canvas(
    vault: &Vault,
    index: &IndexLocation,
    canvas: &Canvas,
    target: &Path,
    command: &str,
) -> Result<CanvasSaved, AppError> {
    let text = canvas_json(canvas)?;
    let bad = |message: String| AppError::bad_arguments(AUDIT, message);
    let name = target
        .file_name()
        .ok_or_else(|| bad(format!("`{}` names no file", target.display())))?;
    if !name.to_string_lossy().to_lowercase().ends_with(".canvas") {
        return Err(bad(format!(
            "`{}` is not a .canvas file: Obsidian opens JSON Canvas maps by that extension",
            target.display()
        )));
    }
    crate::proposals::save_file(
        &vault.root,
        index,
        target,
        &text,
        &format!("Canvas map of the vault: {}", name.to_string_lossy()),
        command,
    )
}

/// The vault's canvas map proposed at the vault-relative `path` (a `.canvas` file), for a face
/// that may only propose (a server): the path must stay inside the vault, through any symbolic
/// link on the way, so nothing is ever written outside it either.
pub fn propose_canvas_live(
    live: &Live,
    path: &str,
    group: Grouping,
    command: &str,
) -> Result<Box<quire_proposals::Proposal>, AppError> {
    crate::resolve::check_request_path(path)?;
    let target = live.root.join(path.trim_start_matches('/'));
    let outside = || quire_vault::VaultError::OutsideVault(path.to_string());
    let folder = target.parent().ok_or_else(outside)?;
    match folder.canonicalize() {
        Ok(folder) if folder.starts_with(&live.root) => {}
        Ok(_) => return Err(outside().into()),
        Err(e) => {
            return Err(AppError::bad_arguments(
                AUDIT,
                format!("the folder of `{path}` cannot be used: {e}"),
            ));
        }
    }
    let snapshot = live.vault(VAULT_WAIT)?;
    let canvas = canvas(&snapshot.vault, group);
    match save_canvas(&snapshot.vault, &live.index, &canvas, &target, command)? {
        crate::proposals::Saved::Proposed(proposal) => Ok(proposal),
        crate::proposals::Saved::Written(at) => Err(AppError::Internal(format!(
            "the canvas went to {} instead of a proposal",
            at.display()
        ))),
    }
}
