//! From a window of raw file events to one [`ChangeSet`]. Pure: no I/O, no clock.
//!
//! The watcher turns each OS event into [`RawEvent`]s with vault-relative paths and pushes them
//! into a [`Coalescer`]; at flush time [`Coalescer::changes`] says what happened to each note over
//! the whole window. Only the first and the last event of a path matter: the first tells whether
//! the note may have been in the index before the window, the last whether it is there now.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

/// One file-system event in vault terms. Paths are vault-relative with `/` separators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawEvent {
    /// A file appeared where the OS says there was none.
    Created(String),
    /// A file is there now: written, touched, or moved here (possibly over an existing file).
    Modified(String),
    /// A file is gone: deleted, or moved out of the vault or into a hidden folder.
    Removed(String),
    /// A file moved within the vault: `Removed(from)` and `Modified(to)` as one change.
    Renamed {
        /// Where the file was.
        from: String,
        /// Where it is now.
        to: String,
    },
    /// A folder appeared, disappeared or moved, or a path that may have been a folder is gone.
    /// Which notes it held is only known by rescanning the vault.
    Folder(String),
    /// The OS dropped events: anything may have changed.
    Overflow,
}

/// What changed in a vault over one debounce window, as reported with every sync.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ChangeSet {
    /// Notes that are there now and were created, changed or moved here.
    pub upserts: BTreeSet<String>,
    /// Notes that are gone: deleted, or moved away.
    pub deletes: BTreeSet<String>,
    /// A folder changed, events were lost, or this is the reconciliation: the sync rescanned the
    /// whole vault, and the notes it found added, changed or removed were added to `upserts` and
    /// `deletes` by comparing the index before and after (see [`ChangeSet::add_index_diff`]).
    pub rescan: bool,
}

impl ChangeSet {
    /// Every note path it names, added or removed (what a sync of these notes alone reads).
    pub fn paths(&self) -> Vec<String> {
        self.upserts.iter().chain(&self.deletes).cloned().collect()
    }

    /// Nothing to sync.
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty() && self.deletes.is_empty() && !self.rescan
    }

    /// Adds what a rescan found, from the index's notes (path → sha256) before and after the sync:
    /// new or changed notes are upserts, vanished notes are deletes. A note that is in the index
    /// after the sync is never a delete, and a delete is never an upsert.
    pub fn add_index_diff(
        &mut self,
        before: &BTreeMap<String, String>,
        after: &BTreeMap<String, String>,
    ) {
        for (path, sha) in after {
            if before.get(path) != Some(sha) {
                self.upserts.insert(path.clone());
            }
        }
        for path in before.keys() {
            if !after.contains_key(path) {
                self.deletes.insert(path.clone());
            }
        }
        self.deletes.retain(|p| !after.contains_key(p));
        let deletes = &self.deletes;
        self.upserts.retain(|p| !deletes.contains(p));
    }
}

/// Whether a vault path names a note file the index reads: `*.md`, `*.canvas` or `*.pdf`, any
/// case, as `quire_vault::scan` decides.
pub fn is_note_path(path: &str) -> bool {
    quire_vault::DocumentKind::of(path).is_some()
}

/// The part of the file system the watcher cares about: the vault below `root`, without hidden
/// names (`.obsidian/`, `.git/`, `.trash/`, any dot-name), `node_modules/` and the index
/// directory when it lies inside the vault. These are the paths `quire_vault::scan` never walks,
/// so an event there can never change the index.
#[derive(Debug, Clone)]
pub struct Scope {
    root: PathBuf,
    /// The index directory as a vault path, when it lies inside the vault.
    index_dir: Option<String>,
}

impl Scope {
    /// `root` and `index_dir` must be canonical (event paths are compared by prefix).
    pub fn new(root: impl Into<PathBuf>, index_dir: &Path) -> Scope {
        let root = root.into();
        let index_dir = vault_relative(&root, index_dir);
        Scope { root, index_dir }
    }

    /// The vault root, canonical, as given to [`Scope::new`].
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The vault path of an absolute event path, or `None` when the path is outside the scope
    /// (outside the vault, hidden, in `node_modules/` or the index directory, or not UTF-8).
    /// The vault root itself is `""`.
    pub fn vault_path(&self, path: &Path) -> Option<String> {
        let rel = vault_relative(&self.root, path)?;
        self.contains(&rel).then_some(rel)
    }

    /// Whether a vault path is inside the scope.
    pub fn contains(&self, path: &str) -> bool {
        let hidden = path
            .split('/')
            .any(|name| name.starts_with('.') || name == "node_modules");
        let in_index = self.index_dir.as_deref().is_some_and(|dir| {
            dir.is_empty()
                || path
                    .strip_prefix(dir)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        });
        !hidden && !in_index
    }
}

/// `path` relative to `root`, `/`-separated; `None` outside `root` or when not UTF-8.
fn vault_relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Option<Vec<&str>> = rel
        .components()
        .map(|c| match c {
            Component::Normal(name) => name.to_str(),
            _ => None,
        })
        .collect();
    Some(parts?.join("/"))
}

/// What is known of one note path within the window.
#[derive(Debug, Clone, Copy)]
struct NoteState {
    /// The note may have existed before the window (so it may be in the index). Only a first
    /// event `Created` proves it did not; a rename target may have replaced an existing note.
    existed: bool,
    /// The note is there after the last event.
    present: bool,
}

/// Accumulates the events of one debounce window.
#[derive(Debug, Clone)]
pub struct Coalescer {
    scope: Scope,
    notes: BTreeMap<String, NoteState>,
    rescan: bool,
}

impl Coalescer {
    /// An empty window over `scope`: no change, no rescan.
    pub fn new(scope: Scope) -> Coalescer {
        Coalescer {
            scope,
            notes: BTreeMap::new(),
            rescan: false,
        }
    }

    /// The part of the file system whose events count.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Adds one event. Returns whether it concerns the index (a note or a folder in the scope);
    /// only such events restart the debounce, so Obsidian's constant writes to
    /// `.obsidian/workspace.json` never delay a flush.
    pub fn push(&mut self, event: RawEvent) -> bool {
        match event {
            RawEvent::Created(path) => self.note(path, false, true),
            RawEvent::Modified(path) => self.note(path, true, true),
            RawEvent::Removed(path) => self.note(path, true, false),
            RawEvent::Renamed { from, to } => {
                let gone = self.note(from, true, false);
                let arrived = self.note(to, true, true);
                gone || arrived
            }
            RawEvent::Folder(path) => {
                let relevant = self.scope.contains(&path);
                self.rescan |= relevant;
                relevant
            }
            RawEvent::Overflow => {
                self.rescan = true;
                true
            }
        }
    }

    /// Records an event on a note path: `existed` applies only to the path's first event.
    fn note(&mut self, path: String, existed: bool, present: bool) -> bool {
        if !is_note_path(&path) || !self.scope.contains(&path) {
            return false;
        }
        self.notes
            .entry(path)
            .and_modify(|state| state.present = present)
            .or_insert(NoteState { existed, present });
        true
    }

    /// The net change of the window so far. A note created and removed within it is no change;
    /// a note removed and written again is an upsert; a burst of writes is one upsert.
    pub fn changes(&self) -> ChangeSet {
        let mut changes = ChangeSet {
            rescan: self.rescan,
            ..ChangeSet::default()
        };
        for (path, state) in &self.notes {
            if state.present {
                changes.upserts.insert(path.clone());
            } else if state.existed {
                changes.deletes.insert(path.clone());
            }
        }
        changes
    }

    /// Starts a new window (after a successful sync).
    pub fn clear(&mut self) {
        self.notes.clear();
        self.rescan = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn coalescer() -> Coalescer {
        Coalescer::new(Scope::new("/vault", Path::new("/vault/_index")))
    }

    fn set(paths: &[&str]) -> BTreeSet<String> {
        paths.iter().map(|p| p.to_string()).collect()
    }

    use RawEvent::*;

    fn s(path: &str) -> String {
        path.to_string()
    }

    fn renamed(from: &str, to: &str) -> RawEvent {
        Renamed {
            from: s(from),
            to: s(to),
        }
    }

    /// Asserts the net change of a window of events: its upserts and its deletes.
    fn assert_net(events: &[RawEvent], upserts: &[&str], deletes: &[&str]) {
        let mut c = coalescer();
        for e in events {
            c.push(e.clone());
        }
        let changes = c.changes();
        assert_eq!(
            (changes.upserts, changes.deletes, changes.rescan),
            (set(upserts), set(deletes), false),
            "{events:?}"
        );
    }

    #[test]
    fn a_burst_of_writes_is_one_upsert() {
        assert_net(&vec![Modified(s("a.md")); 5], &["a.md"], &[]);
    }

    #[test]
    fn upsert_then_delete_is_a_delete_unless_the_note_is_new() {
        assert_net(
            &[Modified(s("old.md")), Removed(s("old.md"))],
            &[],
            &["old.md"],
        );
        let new = || s("new.md");
        assert_net(&[Created(new()), Modified(new()), Removed(new())], &[], &[]);
    }

    #[test]
    fn delete_then_upsert_is_an_upsert() {
        // An editor's safe save: the old file removed, a new one written in its place.
        assert_net(&[Removed(s("a.md")), Created(s("a.md"))], &["a.md"], &[]);
    }

    #[test]
    fn a_rename_is_a_delete_and_an_upsert_in_one_change() {
        assert_net(&[renamed("a.md", "b.md")], &["b.md"], &["a.md"]);
        // Renamed back within the window: the note is where it was, and was maybe edited;
        // `b.md` may have been an existing note that the first rename replaced.
        let back = [renamed("a.md", "b.md"), renamed("b.md", "a.md")];
        assert_net(&back, &["a.md"], &["b.md"]);
        // A new note renamed is only its final name.
        let named = [
            Created(s("Untitled.md")),
            renamed("Untitled.md", "Ideas.md"),
        ];
        assert_net(&named, &["Ideas.md"], &[]);
    }

    #[test]
    fn a_rename_to_or_from_a_non_note_keeps_only_the_note_side() {
        // Atomic save through a temporary file: only the note appears.
        let save = [Created(s("a.md.tmp")), renamed("a.md.tmp", "a.md")];
        assert_net(&save, &["a.md"], &[]);
        // Moved to Obsidian's trash: a delete.
        assert_net(&[renamed("a.md", ".trash/a.md")], &[], &["a.md"]);
    }

    #[test]
    fn folder_events_ask_for_a_rescan() {
        let mut c = coalescer();
        assert!(c.push(Folder(s("Projects"))));
        assert!(c.changes().rescan);
        assert!(!c.changes().is_empty());
        c.clear();
        assert!(c.changes().is_empty());
        assert!(c.push(Overflow));
        assert!(c.changes().rescan);
    }

    #[test]
    fn ignored_paths_are_not_relevant() {
        let mut c = coalescer();
        for path in [
            ".obsidian/workspace.json",
            ".obsidian/snippets/x.md",
            ".git/index",
            ".trash/old.md",
            "Notes/.hidden.md",
            "node_modules/pkg/README.md",
            "_index/quire.sqlite",
            "_index/fulltext/meta.md",
            "image.png",
            "Notes/data.csv",
        ] {
            assert!(!c.push(Modified(s(path))), "{path}");
            assert!(!c.push(Removed(s(path))), "{path}");
        }
        for folder in [
            ".git/objects/ab",
            "node_modules",
            "_index/fulltext",
            "_index",
        ] {
            assert!(!c.push(Folder(s(folder))), "{folder}");
        }
        assert!(c.changes().is_empty());
        // Names that only look like the ignored ones are notes.
        assert!(c.push(Modified(s("_index2/a.md"))));
        assert!(c.push(Modified(s("node_modules_notes/B.MD"))));
        assert_eq!(
            c.changes().upserts,
            set(&["_index2/a.md", "node_modules_notes/B.MD"])
        );
    }

    #[test]
    fn scope_maps_absolute_paths_to_vault_paths() {
        let scope = Scope::new("/v", Path::new("/v/sub/idx"));
        assert_eq!(
            scope.vault_path(Path::new("/v/A/b c.md")).as_deref(),
            Some("A/b c.md")
        );
        assert_eq!(scope.vault_path(Path::new("/v")).as_deref(), Some(""));
        assert_eq!(scope.vault_path(Path::new("/elsewhere/a.md")), None);
        assert_eq!(scope.vault_path(Path::new("/vault/a.md")), None);
        assert_eq!(scope.vault_path(Path::new("/v/sub/idx/lock")), None);
        assert_eq!(scope.vault_path(Path::new("/v/sub/idx")), None);
        assert_eq!(
            scope.vault_path(Path::new("/v/sub/idx.md")).as_deref(),
            Some("sub/idx.md")
        );
        assert_eq!(scope.vault_path(Path::new("/v/.obsidian/app.json")), None);
        // An index outside the vault hides nothing.
        let outside = Scope::new("/v", Path::new("/data/quire/v-1234"));
        assert_eq!(
            outside.vault_path(Path::new("/v/sub/idx/a.md")).as_deref(),
            Some("sub/idx/a.md")
        );
    }

    #[test]
    fn index_diff_completes_a_rescan() {
        let map = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(p, h)| (p.to_string(), h.to_string()))
                .collect()
        };
        let before = map(&[
            ("Old/a.md", "1"),
            ("Old/b.md", "2"),
            ("c.md", "3"),
            ("d.md", "4"),
        ]);
        let after = map(&[
            ("New/a.md", "1"),
            ("New/b.md", "2"),
            ("c.md", "3"),
            ("d.md", "5"),
        ]);
        let mut changes = ChangeSet {
            // An event said `c.md` was removed, but the sync found it back: not a delete.
            deletes: set(&["c.md"]),
            rescan: true,
            ..ChangeSet::default()
        };
        changes.add_index_diff(&before, &after);
        assert_eq!(changes.upserts, set(&["New/a.md", "New/b.md", "d.md"]));
        assert_eq!(changes.deletes, set(&["Old/a.md", "Old/b.md"]));
    }

    /// A file operation in the model vault of the property test.
    #[derive(Debug, Clone)]
    enum Op {
        Write(usize),
        Delete(usize),
        Rename(usize, usize),
    }

    const PATHS: [&str; 6] = [
        "a.md",
        "b.md",
        "Sub/c.md",
        "d.png",
        ".obsidian/e.md",
        "F.MD",
    ];

    fn op() -> impl Strategy<Value = Op> {
        let i = 0..PATHS.len();
        prop_oneof![
            i.clone().prop_map(Op::Write),
            i.clone().prop_map(Op::Delete),
            (i.clone(), i).prop_map(|(a, b)| Op::Rename(a, b)),
        ]
    }

    proptest! {
        /// Any sequence of file operations, reported as the OS reports them: applying the
        /// coalesced change set to the index of before the window gives the notes of after it,
        /// every note written and still there is an upsert, and ignored files never appear.
        #[test]
        fn coalesced_changes_bring_the_index_to_the_final_state(
            initial in proptest::collection::btree_set(0..PATHS.len(), 0..PATHS.len()),
            ops in proptest::collection::vec(op(), 0..24),
        ) {
            let mut present: BTreeSet<usize> = initial.clone();
            let mut written: BTreeSet<usize> = BTreeSet::new();
            let mut c = coalescer();
            for op in ops {
                match op {
                    Op::Write(i) => {
                        let event = if present.insert(i) { Created(s(PATHS[i])) } else { Modified(s(PATHS[i])) };
                        written.insert(i);
                        c.push(event);
                    }
                    Op::Delete(i) => {
                        if present.remove(&i) {
                            c.push(Removed(s(PATHS[i])));
                        }
                    }
                    Op::Rename(a, b) => {
                        if a != b && present.remove(&a) {
                            present.insert(b);
                            written.insert(b);
                            c.push(Renamed { from: s(PATHS[a]), to: s(PATHS[b]) });
                        }
                    }
                }
            }
            let changes = c.changes();
            let scope = c.scope().clone();
            let notes = |set: &BTreeSet<usize>| -> BTreeSet<String> {
                set.iter()
                    .map(|&i| s(PATHS[i]))
                    .filter(|p| is_note_path(p) && scope.contains(p))
                    .collect()
            };
            let mut index = notes(&initial);
            index.retain(|p| !changes.deletes.contains(p));
            index.extend(changes.upserts.iter().cloned());
            prop_assert_eq!(&index, &notes(&present));
            for p in notes(&written).intersection(&notes(&present)) {
                prop_assert!(changes.upserts.contains(p), "{} written but not upserted", p);
            }
            prop_assert!(changes.upserts.is_disjoint(&changes.deletes));
            for p in changes.upserts.iter().chain(&changes.deletes) {
                prop_assert!(is_note_path(p) && scope.contains(p), "{} reported", p);
            }
            prop_assert!(!changes.rescan);
        }
    }
}
