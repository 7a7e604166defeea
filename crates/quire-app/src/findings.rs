//! The findings inbox, once for every face (`quire findings`, `GET /api/findings`): the audit's
//! findings one by one, each with a stable id; dismissed for good or snoozed for some days, kept
//! outside the vault in `<index>/findings.json`; a finding that no longer holds drops out by
//! itself; and each run says what is new since the last ("3 new unresolved links").

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

pub use quire_audit::{Finding, FindingKind};

use crate::error::AppError;

/// The operation's name in error messages.
const FINDINGS: &str = "findings";
/// The longest snooze, in days.
pub const MAX_SNOOZE_DAYS: u64 = 365;

/// A finding in the inbox.
#[derive(Debug, Clone, Serialize)]
pub struct InboxFinding {
    /// Its id (16 hex digits of the sha256 of its kind and subject): the same while it holds.
    pub id: String,
    /// The finding.
    #[serde(flatten)]
    pub finding: Finding,
    /// Not there at the last run.
    pub new: bool,
}

/// The inbox after a run.
#[derive(Debug, Clone, Serialize)]
pub struct Inbox {
    /// The findings to look at (neither dismissed nor snoozed), by kind then subject.
    pub findings: Vec<InboxFinding>,
    /// New since the last run, in words: "3 new unresolved links, 1 new orphan note"; empty on
    /// the first run or when nothing is new.
    pub new_since_last: String,
    /// Whether this is the first run for this index (nothing counts as new then).
    pub first_run: bool,
    /// Findings that hold and were dismissed.
    pub dismissed: usize,
    /// Findings that hold and are snoozed, and until when.
    pub snoozed: Vec<(String, NaiveDate)>,
}

/// What `findings.json` keeps.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    /// Dismissed ids, and when.
    #[serde(default)]
    dismissed: BTreeMap<String, String>,
    /// Snoozed ids, and the day they come back.
    #[serde(default)]
    snoozed: BTreeMap<String, NaiveDate>,
    /// Every id that held at the last run.
    #[serde(default)]
    seen: BTreeSet<String>,
    /// When the last run was (RFC 3339); `None` before the first.
    #[serde(default)]
    last_run: Option<String>,
}

fn state_path(index_dir: &Path) -> PathBuf {
    index_dir.join("findings.json")
}

fn load(index_dir: &Path) -> Result<State, AppError> {
    let path = state_path(index_dir);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            AppError::Internal(format!(
                "{} is not a findings file quire wrote ({e}): remove it to start the inbox afresh",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
        Err(e) => Err(AppError::Internal(format!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

fn save(index_dir: &Path, state: &State) -> Result<(), AppError> {
    let path = state_path(index_dir);
    std::fs::create_dir_all(index_dir)
        .map_err(|e| AppError::Internal(format!("cannot create {}: {e}", index_dir.display())))?;
    let json = serde_json::to_vec_pretty(state).map_err(|e| AppError::Internal(e.to_string()))?;
    quire_vault::atomic::write_atomic(&path, &json)
        .map_err(|e| AppError::Internal(format!("cannot write {}: {e}", path.display())))
}

/// A finding's id: 16 hex digits of the sha256 of its kind and subject.
pub fn finding_id(finding: &Finding) -> String {
    let kind = serde_json::to_string(&finding.kind).unwrap_or_default();
    let key = format!("{kind}\0{}", finding.subject);
    quire_proposals::sha256_hex(key.as_bytes())[..16].to_string()
}

fn checked_id(id: &str) -> Result<String, AppError> {
    let id = id.trim();
    if id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(id.to_ascii_lowercase())
    } else {
        Err(AppError::bad_arguments(
            FINDINGS,
            "a finding id is 16 hex digits, as `quire findings` lists them",
        ))
    }
}

/// Runs the inbox over the audit `report` on `today`: what to look at, what is new since the
/// last run; records this run (in `<index_dir>/findings.json`).
pub fn inbox(
    index_dir: &Path,
    report: &quire_audit::AuditReport,
    today: NaiveDate,
) -> Result<Inbox, AppError> {
    let mut state = load(index_dir)?;
    let first_run = state.last_run.is_none();
    let all: Vec<(String, Finding)> = quire_audit::findings(report)
        .into_iter()
        .map(|f| (finding_id(&f), f))
        .collect();
    // A snooze that has run out is over.
    state.snoozed.retain(|_, until| *until > today);
    let mut inbox = Inbox {
        findings: Vec::new(),
        new_since_last: String::new(),
        first_run,
        dismissed: 0,
        snoozed: Vec::new(),
    };
    let mut new_by_kind: BTreeMap<FindingKind, usize> = BTreeMap::new();
    for (id, finding) in &all {
        if state.dismissed.contains_key(id) {
            inbox.dismissed += 1;
            continue;
        }
        if let Some(until) = state.snoozed.get(id) {
            inbox.snoozed.push((id.clone(), *until));
            continue;
        }
        let new = !first_run && !state.seen.contains(id);
        if new {
            *new_by_kind.entry(finding.kind).or_default() += 1;
        }
        inbox.findings.push(InboxFinding {
            id: id.clone(),
            finding: finding.clone(),
            new,
        });
    }
    inbox.new_since_last = new_by_kind
        .iter()
        .map(|(kind, n)| format!("{n} new {}", kind.words(*n)))
        .collect::<Vec<_>>()
        .join(", ");
    state.seen = all.iter().map(|(id, _)| id.clone()).collect();
    state.last_run = Some(chrono::Local::now().to_rfc3339());
    save(index_dir, &state)?;
    Ok(inbox)
}

/// Dismisses a finding for good (it stays dismissed while it holds, and if it comes back).
pub fn dismiss(index_dir: &Path, id: &str) -> Result<(), AppError> {
    let id = checked_id(id)?;
    let mut state = load(index_dir)?;
    state.snoozed.remove(&id);
    state
        .dismissed
        .insert(id, chrono::Local::now().to_rfc3339());
    save(index_dir, &state)
}

/// Snoozes a finding for `days` (1 to [`MAX_SNOOZE_DAYS`]): it is out of the inbox until then.
/// Returns the day it comes back.
pub fn snooze(
    index_dir: &Path,
    id: &str,
    days: u64,
    today: NaiveDate,
) -> Result<NaiveDate, AppError> {
    let id = checked_id(id)?;
    let days = crate::limits::check_count("days", days, MAX_SNOOZE_DAYS)
        .map_err(|m| AppError::bad_arguments(FINDINGS, m))?;
    let until = today + chrono::Days::new(days as u64);
    let mut state = load(index_dir)?;
    state.dismissed.remove(&id);
    state.snoozed.insert(id, until);
    save(index_dir, &state)?;
    Ok(until)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_audit::{AuditReport, UnresolvedLinkAt};

    fn report(orphans: &[&str], links: &[(&str, usize, &str)]) -> AuditReport {
        let empty = tempfile::tempdir().unwrap();
        let vault = quire_vault::Vault::open(empty.path(), &Default::default()).unwrap();
        let mut report = quire_audit::audit(&vault, &quire_audit::AuditOptions::default());
        report.orphans = orphans.iter().map(|s| s.to_string()).collect();
        report.unresolved_links = links
            .iter()
            .map(|(note, line, target)| UnresolvedLinkAt {
                note: note.to_string(),
                line: *line,
                target: target.to_string(),
            })
            .collect();
        report
    }

    #[test]
    fn dismissed_and_snoozed_findings_leave_the_inbox_and_new_ones_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let day = NaiveDate::from_ymd_opt(2026, 12, 7).unwrap();
        let first = report(&["A.md", "B.md"], &[("A.md", 3, "Gone")]);
        let run = inbox(dir.path(), &first, day).unwrap();
        assert!(run.first_run);
        assert_eq!(run.findings.len(), 3);
        assert!(run.findings.iter().all(|f| !f.new));
        assert_eq!(run.new_since_last, "");
        let link = run.findings[0].id.clone();
        let orphan_b = run.findings[2].id.clone();
        assert_eq!(run.findings[0].finding.kind, FindingKind::UnresolvedLink);

        dismiss(dir.path(), &link).unwrap();
        assert_eq!(
            snooze(dir.path(), &orphan_b, 3, day).unwrap(),
            day + chrono::Days::new(3)
        );
        // Two new unresolved links and a new orphan; A.md no longer an orphan.
        let second = report(
            &["B.md", "C.md"],
            &[("A.md", 3, "Gone"), ("C.md", 1, "X"), ("C.md", 2, "Y")],
        );
        let run = inbox(dir.path(), &second, day).unwrap();
        assert!(!run.first_run);
        assert_eq!(
            run.new_since_last,
            "2 new unresolved links, 1 new orphan note"
        );
        let subjects: Vec<&str> = run
            .findings
            .iter()
            .map(|f| f.finding.subject.as_str())
            .collect();
        assert_eq!(subjects, ["C.md:1:X", "C.md:2:Y", "C.md"]);
        assert_eq!(run.dismissed, 1);
        assert_eq!(
            run.snoozed,
            vec![(orphan_b.clone(), day + chrono::Days::new(3))]
        );
        // The snooze runs out; nothing is new any more.
        let later = day + chrono::Days::new(3);
        let run = inbox(dir.path(), &second, later).unwrap();
        assert!(run.findings.iter().any(|f| f.id == orphan_b));
        assert_eq!(run.new_since_last, "");
        assert!(dismiss(dir.path(), "../../etc").is_err());
        assert!(snooze(dir.path(), &orphan_b, 0, day).is_err());
    }
}
