//! The audit's findings one by one: each thing a person might fix (an orphan, an unresolved
//! link at its line, a family of near-duplicate tags…) as a [`Finding`] with a stable subject,
//! so a findings inbox can dismiss or snooze it and tell what is new since the last run. Pure:
//! a function of the report.

use serde::Serialize;

use crate::AuditReport;

/// What kind of thing a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A link that finds no note or attachment.
    UnresolvedLink,
    /// A note with no link to or from another note.
    Orphan,
    /// A note others link to that links to none.
    DeadEnd,
    /// Tags that differ only in case, `-`/`_` or a plural.
    NearDuplicateTags,
    /// A title more than one note has.
    DuplicateTitle,
    /// A note with nothing after its frontmatter.
    EmptyNote,
    /// A note over the word limit.
    OversizedNote,
    /// A note with text and no heading.
    NoHeadings,
    /// An attachment no note links to.
    UnlinkedAttachment,
    /// A small group of notes linked among themselves only.
    Island,
}

impl FindingKind {
    /// The kind in words, singular and plural (for "3 new unresolved links").
    pub fn words(self, count: usize) -> &'static str {
        let one = count == 1;
        match self {
            FindingKind::UnresolvedLink if one => "unresolved link",
            FindingKind::UnresolvedLink => "unresolved links",
            FindingKind::Orphan if one => "orphan note",
            FindingKind::Orphan => "orphan notes",
            FindingKind::DeadEnd if one => "dead end",
            FindingKind::DeadEnd => "dead ends",
            FindingKind::NearDuplicateTags if one => "family of near-duplicate tags",
            FindingKind::NearDuplicateTags => "families of near-duplicate tags",
            FindingKind::DuplicateTitle if one => "duplicate title",
            FindingKind::DuplicateTitle => "duplicate titles",
            FindingKind::EmptyNote if one => "empty note",
            FindingKind::EmptyNote => "empty notes",
            FindingKind::OversizedNote if one => "oversized note",
            FindingKind::OversizedNote => "oversized notes",
            FindingKind::NoHeadings if one => "note without headings",
            FindingKind::NoHeadings => "notes without headings",
            FindingKind::UnlinkedAttachment if one => "unlinked attachment",
            FindingKind::UnlinkedAttachment => "unlinked attachments",
            FindingKind::Island if one => "island",
            FindingKind::Island => "islands",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Its kind.
    pub kind: FindingKind,
    /// What it is about, the same from run to run while it holds: the note (and for a link its
    /// line and target), the tags or the notes of a group.
    pub subject: String,
    /// The note to open, when there is one.
    pub path: Option<String>,
    /// The line to open it at, when there is one.
    pub line: Option<usize>,
    /// The finding in words.
    pub message: String,
}

fn finding(
    kind: FindingKind,
    subject: String,
    path: Option<&str>,
    line: Option<usize>,
    message: String,
) -> Finding {
    Finding {
        kind,
        subject,
        path: path.map(str::to_string),
        line,
        message,
    }
}

/// Every finding of `report`, by kind then subject.
pub fn findings(report: &AuditReport) -> Vec<Finding> {
    use FindingKind as K;
    let mut out = Vec::new();
    for link in &report.unresolved_links {
        out.push(finding(
            K::UnresolvedLink,
            format!("{}:{}:{}", link.note, link.line, link.target),
            Some(&link.note),
            Some(link.line),
            format!("`{}` finds no note or attachment", link.target),
        ));
    }
    for note in &report.orphans {
        out.push(finding(
            K::Orphan,
            note.clone(),
            Some(note),
            None,
            "no link to or from another note".into(),
        ));
    }
    for note in &report.dead_ends {
        out.push(finding(
            K::DeadEnd,
            note.clone(),
            Some(note),
            None,
            "linked to, but links to no note".into(),
        ));
    }
    for family in &report.near_duplicate_tags {
        let names: Vec<&str> = family.variants.iter().map(|t| t.name.as_str()).collect();
        out.push(finding(
            K::NearDuplicateTags,
            names.join(" "),
            None,
            None,
            format!("tags written several ways: {}", names.join(", ")),
        ));
    }
    for group in &report.duplicate_titles {
        out.push(finding(
            K::DuplicateTitle,
            group.paths.join(" "),
            group.paths.first().map(String::as_str),
            None,
            format!(
                "{} notes are titled “{}”: {}",
                group.paths.len(),
                group.title,
                group.paths.join(", ")
            ),
        ));
    }
    for note in &report.empty_notes {
        out.push(finding(
            K::EmptyNote,
            note.clone(),
            Some(note),
            None,
            "nothing after its frontmatter".into(),
        ));
    }
    for note in &report.oversized_notes {
        out.push(finding(
            K::OversizedNote,
            note.path.clone(),
            Some(&note.path),
            None,
            format!("{} words", note.words),
        ));
    }
    for note in &report.notes_without_headings {
        out.push(finding(
            K::NoHeadings,
            note.clone(),
            Some(note),
            None,
            "text without a heading".into(),
        ));
    }
    for file in &report.unlinked_attachments {
        out.push(finding(
            K::UnlinkedAttachment,
            file.clone(),
            Some(file),
            None,
            "no note links to or embeds it".into(),
        ));
    }
    for island in &report.components.islands {
        out.push(finding(
            K::Island,
            island.join(" "),
            island.first().map(String::as_str),
            None,
            format!(
                "{} notes linked only among themselves: {}",
                island.len(),
                island.join(", ")
            ),
        ));
    }
    out.sort_by(|a, b| a.kind.cmp(&b.kind).then_with(|| a.subject.cmp(&b.subject)));
    out
}
