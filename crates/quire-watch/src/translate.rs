//! From `notify` events to [`RawEvent`]s. The only I/O here is asking whether a path is a
//! directory, for the events where the OS does not say (a rename target, an event of unknown kind).

use std::path::Path;

use notify::EventKind;
use notify::event::{CreateKind, ModifyKind, RemoveKind, RenameMode};

use crate::coalesce::{RawEvent, Scope, is_note_path};

/// The vault events of one `notify` event; paths outside the scope are dropped here or by the
/// coalescer. On Linux a rename arrives as `From`, `To` and then `Both`: each is translated, and
/// the coalescer's result does not change when it sees the same rename twice.
pub(crate) fn raw_events(event: &notify::Event, scope: &Scope) -> Vec<RawEvent> {
    if event.need_rescan() {
        return vec![RawEvent::Overflow];
    }
    let paths = event.paths.iter().filter_map(|p| in_scope(scope, p));
    match event.kind {
        EventKind::Create(kind) => paths
            .map(|(path, rel)| {
                let folder = match kind {
                    CreateKind::Folder => true,
                    CreateKind::File => false,
                    _ => path.is_dir(),
                };
                if folder {
                    RawEvent::Folder(rel)
                } else {
                    RawEvent::Created(rel)
                }
            })
            .collect(),
        EventKind::Remove(kind) => paths
            .map(|(_, rel)| match kind {
                RemoveKind::Folder => RawEvent::Folder(rel),
                RemoveKind::File => RawEvent::Removed(rel),
                _ => gone(rel),
            })
            .collect(),
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) if event.paths.len() == 2 => {
            let from = in_scope(scope, &event.paths[0]);
            let to = in_scope(scope, &event.paths[1]);
            match (from, to) {
                (Some((_, from)), Some((to_path, to)))
                    if is_note_path(&from) && is_note_path(&to) && !to_path.is_dir() =>
                {
                    vec![RawEvent::Renamed { from, to }]
                }
                (from, to) => from
                    .map(|(_, rel)| gone(rel))
                    .into_iter()
                    .chain(to.map(|(path, rel)| arrived(path, rel)))
                    .collect(),
            }
        }
        EventKind::Modify(ModifyKind::Name(RenameMode::From)) => {
            paths.map(|(_, rel)| gone(rel)).collect()
        }
        EventKind::Modify(ModifyKind::Name(RenameMode::To)) => {
            paths.map(|(path, rel)| arrived(path, rel)).collect()
        }
        // The OS did not say what happened: look at what is there now.
        EventKind::Modify(ModifyKind::Name(_)) | EventKind::Any | EventKind::Other => paths
            .map(|(path, rel)| {
                if path.symlink_metadata().is_ok() {
                    arrived(path, rel)
                } else {
                    gone(rel)
                }
            })
            .collect(),
        EventKind::Modify(_) => paths.map(|(_, rel)| RawEvent::Modified(rel)).collect(),
        // Opening, reading and closing change nothing.
        EventKind::Access(_) => Vec::new(),
    }
}

/// The path with its vault path, when it is in the scope.
fn in_scope<'a>(scope: &Scope, path: &'a Path) -> Option<(&'a Path, String)> {
    scope.vault_path(path).map(|rel| (path, rel))
}

/// Something left this path. A note path is a note removed; any other path may have been a
/// folder of notes (a renamed folder's old name no longer exists to be asked), so it asks for a
/// rescan. A removed attachment comes as `RemoveKind::File` and never gets here.
fn gone(rel: String) -> RawEvent {
    if is_note_path(&rel) {
        RawEvent::Removed(rel)
    } else {
        RawEvent::Folder(rel)
    }
}

/// Something arrived at this path (moved in, renamed to): a folder, or a file that may replace
/// one that was there.
fn arrived(path: &Path, rel: String) -> RawEvent {
    if path.is_dir() {
        RawEvent::Folder(rel)
    } else {
        RawEvent::Modified(rel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{AccessKind, DataChange, Flag};
    use notify::{Event, EventKind};

    const ROOT: &str = "/nonexistent-vault";

    /// The vault events of a `notify` event of `kind` on these vault paths.
    fn translate(kind: EventKind, paths: &[&str]) -> Vec<RawEvent> {
        let scope = Scope::new(ROOT, Path::new("/elsewhere/index"));
        let event = paths
            .iter()
            .fold(Event::new(kind), |e, p| e.add_path(Path::new(ROOT).join(p)));
        raw_events(&event, &scope)
    }

    fn s(path: &str) -> String {
        path.to_string()
    }

    #[test]
    fn notify_kinds_map_to_vault_events() {
        use RawEvent::*;
        let name = |mode| EventKind::Modify(ModifyKind::Name(mode));
        let cases: Vec<(EventKind, &[&str], Vec<RawEvent>)> = vec![
            (
                EventKind::Create(CreateKind::File),
                &["a.md"],
                vec![Created(s("a.md"))],
            ),
            (
                EventKind::Create(CreateKind::Folder),
                &["New"],
                vec![Folder(s("New"))],
            ),
            (
                EventKind::Modify(ModifyKind::Data(DataChange::Any)),
                &["a.md"],
                vec![Modified(s("a.md"))],
            ),
            (
                EventKind::Remove(RemoveKind::File),
                &["a.md"],
                vec![Removed(s("a.md"))],
            ),
            (
                EventKind::Remove(RemoveKind::Folder),
                &["Old"],
                vec![Folder(s("Old"))],
            ),
            (
                name(RenameMode::Both),
                &["a.md", "b.md"],
                vec![Renamed {
                    from: s("a.md"),
                    to: s("b.md"),
                }],
            ),
            // A folder renamed: its old name is gone, and cannot be asked what it was.
            (
                name(RenameMode::From),
                &["Projects"],
                vec![Folder(s("Projects"))],
            ),
            // Moved into the trash: only the removal is inside the scope.
            (
                name(RenameMode::Both),
                &["a.md", ".trash/a.md"],
                vec![Removed(s("a.md"))],
            ),
            (EventKind::Access(AccessKind::Any), &["a.md"], vec![]),
            // An event of unknown kind on a path that is not there: gone.
            (EventKind::Any, &["gone.md"], vec![Removed(s("gone.md"))]),
            (
                EventKind::Modify(ModifyKind::Any),
                &[".obsidian/workspace.json"],
                vec![],
            ),
        ];
        for (kind, paths, expected) in cases {
            assert_eq!(translate(kind, paths), expected, "{kind:?} {paths:?}");
        }
        let overflow = Event::new(EventKind::Other).set_flag(Flag::Rescan);
        let scope = Scope::new(ROOT, Path::new("/elsewhere/index"));
        assert_eq!(raw_events(&overflow, &scope), vec![Overflow]);
    }

    #[test]
    fn a_rename_target_that_is_a_directory_is_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("Archive")).unwrap();
        std::fs::write(root.join("note.md"), "x").unwrap();
        let scope = Scope::new(&root, Path::new("/elsewhere/index"));
        let renamed = Event::new(EventKind::Modify(ModifyKind::Name(RenameMode::To)))
            .add_path(root.join("Archive"));
        assert_eq!(
            raw_events(&renamed, &scope),
            vec![RawEvent::Folder("Archive".into())]
        );
        let unknown = Event::new(EventKind::Any).add_path(root.join("note.md"));
        assert_eq!(
            raw_events(&unknown, &scope),
            vec![RawEvent::Modified("note.md".into())]
        );
    }
}
