//! `quire proposals`: list, show (the diff, coloured on a terminal), apply, reject.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Subcommand;
use quire_app::proposals::{
    Applied, ApplyOptions, Proposal, ProposalStore, RecoveryOutcome, Status,
};

use crate::Cli;
use crate::common::{index_location, print_json, vault_root};

/// Waits this many milliseconds between the files of an apply: a hook for the crash test
/// (kill -9 midway), not a user setting.
const PAUSE_ENV: &str = "QUIRE_TEST_APPLY_PAUSE_MS";

#[derive(Subcommand, Debug)]
pub(crate) enum ProposalAction {
    /// Pending proposals, newest first (the default); --all for applied and rejected ones too.
    List {
        #[arg(long)]
        all: bool,
    },
    /// A proposal's title, origin, sources and diff.
    Show { id: String },
    /// Write a pending proposal into the vault: every file checked against the bytes it was made
    /// from, backed up, and written atomically.
    Apply { id: String },
    /// Set a pending proposal aside; nothing is written.
    Reject { id: String },
}

pub(crate) fn run(
    cli: &Cli,
    action: Option<&ProposalAction>,
    out: &mut String,
) -> Result<ExitCode> {
    let store = open(cli)?;
    match action.unwrap_or(&ProposalAction::List { all: false }) {
        ProposalAction::List { all } => list(cli, &store, *all, out)?,
        ProposalAction::Show { id } => {
            let proposal = store.get(id)?;
            if cli.json {
                print_json(out, &proposal);
            } else {
                out.push_str(&render(&proposal, colour()));
            }
        }
        ProposalAction::Apply { id } => {
            let applied = apply(&store, id)?;
            if cli.json {
                print_json(out, &applied);
            } else {
                out.push_str(&applied_text(&applied));
            }
            if !applied.not_written.is_empty() {
                return Ok(ExitCode::FAILURE);
            }
        }
        ProposalAction::Reject { id } => {
            let proposal = store.reject(id)?;
            if cli.json {
                print_json(out, &proposal);
            } else {
                outln!(
                    out,
                    "rejected {}: {} (nothing was written)",
                    proposal.id,
                    proposal.title
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The vault's store, saying on stderr what a crash recovery did.
pub(crate) fn open(cli: &Cli) -> Result<ProposalStore> {
    let store = quire_app::proposals::open_store(&vault_root(cli)?, &index_location(cli)?)?;
    for recovered in store.recovered() {
        match &recovered.outcome {
            RecoveryOutcome::RolledBack => eprintln!(
                "quire: an apply of proposal {} was interrupted before any note was written: nothing changed, it is still pending",
                recovered.id
            ),
            RecoveryOutcome::Completed { conflicts } if conflicts.is_empty() => eprintln!(
                "quire: an apply of proposal {} was interrupted midway: it was finished from its journal",
                recovered.id
            ),
            RecoveryOutcome::Completed { conflicts } => eprintln!(
                "quire: an apply of proposal {} was interrupted midway and finished, except for files changed meanwhile or that cannot be written (left as they are): {}",
                recovered.id,
                conflicts.join(", ")
            ),
            RecoveryOutcome::Discarded { reason, kept } => eprintln!(
                "quire: ignored an apply journal that quire did not write ({reason}); nothing it names was touched; it was moved to {}",
                kept.display()
            ),
        }
    }
    Ok(store)
}

/// Applies a proposal (the crash test's pause read from [`PAUSE_ENV`]).
pub(crate) fn apply(store: &ProposalStore, id: &str) -> Result<Applied> {
    let options = ApplyOptions {
        pause_between_files: std::env::var(PAUSE_ENV)
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map(Duration::from_millis),
    };
    Ok(store.apply(id, &options)?)
}

/// What an apply wrote and where the originals are.
pub(crate) fn applied_text(applied: &Applied) -> String {
    let mut text = format!(
        "applied {}: {}\n",
        applied.proposal.id, applied.proposal.title
    );
    for path in &applied.written {
        text.push_str(&format!("  wrote {path}\n"));
    }
    for failed in &applied.not_written {
        text.push_str(&format!(
            "  NOT written {}: {} (its new content is kept as {}.proposed in the backups)\n",
            failed.path, failed.reason, failed.path
        ));
    }
    if applied
        .proposal
        .changes
        .iter()
        .any(|c| c.base_sha256.is_some())
    {
        text.push_str(&format!(
            "the files as they were are kept in {}\n",
            applied.backup_dir.display()
        ));
    }
    text
}

fn list(cli: &Cli, store: &ProposalStore, all: bool, out: &mut String) -> Result<()> {
    let listing = store.listing()?;
    // A proposal file that does not read back is named on stderr (and left out), so the others
    // still list.
    for bad in &listing.unreadable {
        eprintln!("skipped proposal {}: {}", bad.id, bad.reason);
    }
    let rows: Vec<_> = listing
        .proposals
        .into_iter()
        .filter(|p| all || p.status == Status::Pending)
        .collect();
    if cli.json {
        print_json(out, &rows);
        return Ok(());
    }
    if rows.is_empty() {
        outln!(
            out,
            "no {}proposals{}",
            if all { "" } else { "pending " },
            if all {
                ""
            } else {
                " (--all lists applied and rejected ones)"
            }
        );
        return Ok(());
    }
    for row in &rows {
        outln!(
            out,
            "{}  {:<8}  +{} -{}  {}  ({})",
            row.id,
            row.status.as_str(),
            row.lines_added,
            row.lines_removed,
            row.title,
            row.files.join(", ")
        );
    }
    outln!(
        out,
        "\n`quire proposals show ID` shows a diff; `apply ID` writes it, `reject ID` sets it aside."
    );
    Ok(())
}

/// Colour when stdout is a terminal and `NO_COLOR` is not set.
pub(crate) fn colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// A proposal for people: its header, then its diff (added lines green, removed red).
pub(crate) fn render(proposal: &Proposal, colour: bool) -> String {
    let mut text = format!(
        "proposal {} ({})\n{}\nmade by: {}\nmade: {}\n",
        proposal.id,
        proposal.status.as_str(),
        proposal.title,
        proposal.command,
        proposal.created
    );
    if !proposal.sources.is_empty() {
        text.push_str(&format!("sources: {}\n", proposal.sources.join(", ")));
    }
    if !proposal.conflicts.is_empty() {
        text.push_str(&format!(
            "not written (changed meanwhile): {}\n",
            proposal.conflicts.join(", ")
        ));
    }
    text.push('\n');
    for line in proposal.diff().lines() {
        let paint = match line.as_bytes().first() {
            _ if !colour => None,
            _ if line.starts_with("+++") || line.starts_with("---") => Some("1"),
            Some(b'+') => Some("32"),
            Some(b'-') => Some("31"),
            Some(b'@') => Some("36"),
            _ => None,
        };
        match paint {
            Some(code) => text.push_str(&format!("\x1b[{code}m{line}\x1b[0m\n")),
            None => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    text
}
