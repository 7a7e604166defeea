//! What a proposal is: requests in ([`NewProposal`], [`ChangeRequest`]), stored changes with
//! their bases and diffs out ([`Proposal`], [`FileChange`]).

use serde::{Deserialize, Serialize};

/// A change someone asks for, before quire reads the files it applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeRequest {
    /// A new file with this content; the path must not exist.
    Create {
        /// Vault-relative path.
        path: String,
        /// The file's content.
        content: String,
    },
    /// An existing file's whole new content.
    Replace {
        /// Vault-relative path.
        path: String,
        /// The bytes the new content was computed from (read earlier); the proposal is refused
        /// when the file holds other bytes now. `None`: made from the file as it is now.
        base: Option<Vec<u8>>,
        /// The new content.
        content: String,
    },
    /// Text added at the end of a heading's section (the heading is added at the end of the
    /// note when it has none), as `draft --insert` does.
    AppendUnderHeading {
        /// Vault-relative path of an existing note.
        path: String,
        /// The bytes the text was written for (read earlier); the proposal is refused when the
        /// note holds other bytes now. `None`: the note as it is now.
        base: Option<Vec<u8>>,
        /// The heading's text, without `#` marks; empty: at the end of the note.
        heading: String,
        /// The level of a heading that has to be added (1 to 6).
        level: u8,
        /// The text to add.
        text: String,
    },
    /// A file moved to a new path, its content unchanged.
    Rename {
        /// Vault-relative path now.
        from: String,
        /// Vault-relative path after; must not exist.
        to: String,
    },
}

/// A proposal to make: what it is, who made it, from what, and its changes.
#[derive(Debug, Clone)]
pub struct NewProposal {
    /// A one-line title for lists.
    pub title: String,
    /// The command (or tool) that made it, e.g. `quire draft Plan.md "## Budget"`.
    pub command: String,
    /// What it was made from (note paths, passages), shown with it.
    pub sources: Vec<String>,
    /// The changes, applied together.
    pub changes: Vec<ChangeRequest>,
}

/// What a stored change does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// A new file.
    Create,
    /// An existing file's content replaced.
    Replace,
    /// Text added under a heading of an existing note.
    Append,
    /// A file moved.
    Rename,
}

/// One file's change, made from known bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// What it does.
    pub kind: ChangeKind,
    /// The vault-relative path the change reads (the file created, for [`ChangeKind::Create`]).
    pub path: String,
    /// Where a rename moves the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_path: Option<String>,
    /// The heading an append goes under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heading: Option<String>,
    /// The first line of the text an append adds, in the new content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// sha256 (hex) of the bytes the change was made from; `None` for a new file.
    pub base_sha256: Option<String>,
    /// sha256 (hex) of the file after the change.
    pub new_sha256: String,
    /// The file's whole content after the change.
    pub content: String,
    /// The unified diff from the base to the content.
    pub diff: String,
}

impl FileChange {
    /// Where the content ends up: the new path of a rename, else the path.
    pub fn target(&self) -> &str {
        self.new_path.as_deref().unwrap_or(&self.path)
    }
}

/// Where a proposal is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Made, not yet applied or rejected.
    Pending,
    /// Written into the vault.
    Applied,
    /// Set aside by the user; nothing was written.
    Rejected,
}

impl Status {
    /// `pending`, `applied` or `rejected`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Applied => "applied",
            Status::Rejected => "rejected",
        }
    }
}

/// A stored proposal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proposal {
    /// `YYYYMMDD-HHMMSS-xxxx` (local time, then random hex): sorts by creation.
    pub id: String,
    /// One line for lists.
    pub title: String,
    /// The command that made it.
    pub command: String,
    /// What it was made from.
    pub sources: Vec<String>,
    /// When it was made (RFC 3339).
    pub created: String,
    /// Pending, applied or rejected.
    pub status: Status,
    /// When it was applied or rejected (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided: Option<String>,
    /// Where the files it replaced are kept, once applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backup_dir: Option<String>,
    /// Files a recovery could not finish (changed by someone meanwhile), once applied.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts: Vec<String>,
    /// The changes, applied together.
    pub changes: Vec<FileChange>,
}

impl Proposal {
    /// The whole diff of every change, in order.
    pub fn diff(&self) -> String {
        self.changes.iter().map(|c| c.diff.as_str()).collect()
    }

    /// The short form for lists.
    pub fn summary(&self) -> ProposalSummary {
        let (mut added, mut removed) = (0, 0);
        for line in self.changes.iter().flat_map(|c| c.diff.lines()) {
            if line.starts_with('+') && !line.starts_with("+++") {
                added += 1;
            } else if line.starts_with('-') && !line.starts_with("---") {
                removed += 1;
            }
        }
        ProposalSummary {
            id: self.id.clone(),
            title: self.title.clone(),
            command: self.command.clone(),
            created: self.created.clone(),
            status: self.status,
            files: self
                .changes
                .iter()
                .map(|c| c.target().to_string())
                .collect(),
            lines_added: added,
            lines_removed: removed,
        }
    }
}

/// A proposal in a list: no contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProposalSummary {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The command that made it.
    pub command: String,
    /// When it was made.
    pub created: String,
    /// Pending, applied or rejected.
    pub status: Status,
    /// The files it writes.
    pub files: Vec<String>,
    /// Lines its diff adds.
    pub lines_added: usize,
    /// Lines its diff removes.
    pub lines_removed: usize,
}
