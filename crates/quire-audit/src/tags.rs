//! Tags: counts as written, the hierarchy of nested tags, and families of near-duplicates.

use std::collections::{BTreeMap, BTreeSet};

use quire_vault::Note;

use crate::{TagFamily, TagNode, TagStat};

/// Every tag as written, with its notes and uses; most notes first, then by name.
pub(crate) fn tag_stats(notes: &[Note]) -> Vec<TagStat> {
    let mut stats: BTreeMap<&str, (BTreeSet<usize>, usize)> = BTreeMap::new();
    for (i, note) in notes.iter().enumerate() {
        for tag in &note.tags {
            let entry = stats.entry(tag.name.as_str()).or_default();
            entry.0.insert(i);
            entry.1 += 1;
        }
    }
    let mut tags: Vec<TagStat> = stats
        .into_iter()
        .map(|(name, (notes, uses))| TagStat {
            name: name.to_string(),
            notes: notes.len(),
            uses,
        })
        .collect();
    tags.sort_by(|a, b| b.notes.cmp(&a.notes).then_with(|| a.name.cmp(&b.name)));
    tags
}

/// The tag hierarchy: each level counts the distinct notes tagged with it or below it.
pub(crate) fn tag_tree(notes: &[Note]) -> Vec<TagNode> {
    // Every prefix of every tag (`a`, `a/b`, `a/b/c`) with the notes under it.
    let mut levels: BTreeMap<Vec<&str>, BTreeSet<usize>> = BTreeMap::new();
    for (i, note) in notes.iter().enumerate() {
        for tag in &note.tags {
            let parts: Vec<&str> = tag.name.split('/').filter(|p| !p.is_empty()).collect();
            for end in 1..=parts.len() {
                levels.entry(parts[..end].to_vec()).or_default().insert(i);
            }
        }
    }
    fn children(levels: &BTreeMap<Vec<&str>, BTreeSet<usize>>, parent: &[&str]) -> Vec<TagNode> {
        // Keys are sorted, so the children of `parent` follow it in order.
        levels
            .iter()
            .filter(|(key, _)| key.len() == parent.len() + 1 && key.starts_with(parent))
            .map(|(key, notes)| TagNode {
                name: key[key.len() - 1].to_string(),
                path: key.join("/"),
                notes: notes.len(),
                children: children(levels, key),
            })
            .collect()
    }
    children(&levels, &[])
}

/// A tag's spelling with case, `-` and `_` folded away: `To-Do` → `todo`.
fn folded(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The singular forms a folded tag may be the plural of: `todos` → `todo`, `boxes` → `box` and
/// `boxe`. Only the last level of a nested tag is a word that takes a plural.
fn singulars(folded: &str) -> Vec<&str> {
    let mut forms = Vec::new();
    if let Some(stem) = folded.strip_suffix("es").filter(|s| !s.is_empty()) {
        forms.push(stem);
    }
    if let Some(stem) = folded.strip_suffix('s').filter(|s| !s.is_empty()) {
        forms.push(stem);
    }
    forms
}

/// Families of tags that fold to the same spelling, or where one is the other plus `s`/`es`.
/// A plural joins a family only when its singular is also a tag (`status` is not the plural of
/// `statu` unless someone wrote `#statu`).
pub(crate) fn near_duplicates(tags: &[TagStat]) -> Vec<TagFamily> {
    let keys: Vec<String> = tags.iter().map(|t| folded(&t.name)).collect();
    let mut by_key: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, key) in keys.iter().enumerate() {
        by_key.entry(key.as_str()).or_default().push(i);
    }
    let mut family: Vec<usize> = (0..tags.len()).collect();
    fn root(family: &mut [usize], mut i: usize) -> usize {
        while family[i] != i {
            family[i] = family[family[i]];
            i = family[i];
        }
        i
    }
    fn join(family: &mut [usize], a: usize, b: usize) {
        let (ra, rb) = (root(family, a), root(family, b));
        family[ra.max(rb)] = ra.min(rb);
    }
    for (i, key) in keys.iter().enumerate() {
        for same in &by_key[key.as_str()] {
            join(&mut family, i, *same);
        }
        for singular in singulars(key) {
            if let Some(found) = by_key.get(singular) {
                for j in found {
                    join(&mut family, i, *j);
                }
            }
        }
    }
    let mut groups: BTreeMap<usize, Vec<TagStat>> = BTreeMap::new();
    for (i, tag) in tags.iter().enumerate() {
        let r = root(&mut family, i);
        groups.entry(r).or_default().push(tag.clone());
    }
    let mut families: Vec<TagFamily> = groups
        .into_values()
        .filter(|variants| variants.len() > 1)
        .map(|mut variants| {
            variants.sort_by(|a, b| a.name.cmp(&b.name));
            TagFamily { variants }
        })
        .collect();
    families.sort_by(|a, b| a.variants[0].name.cmp(&b.variants[0].name));
    families
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn stat(name: &str) -> TagStat {
        TagStat {
            name: name.into(),
            notes: 1,
            uses: 1,
        }
    }

    fn names(families: &[TagFamily]) -> Vec<Vec<&str>> {
        families
            .iter()
            .map(|f| f.variants.iter().map(|v| v.name.as_str()).collect())
            .collect()
    }

    #[test]
    fn case_plurals_and_separators_make_one_family() {
        let tags: Vec<TagStat> = [
            "todo",
            "todos",
            "ToDo",
            "to-do",
            "box",
            "boxes",
            "status",
            "project/task",
            "project/tasks",
            "notes",
            "note",
            "news",
        ]
        .iter()
        .map(|n| stat(n))
        .collect();
        assert_eq!(
            names(&near_duplicates(&tags)),
            [
                vec!["ToDo", "to-do", "todo", "todos"],
                vec!["box", "boxes"],
                vec!["note", "notes"],
                vec!["project/task", "project/tasks"],
            ]
        );
    }

    #[test]
    fn the_tree_counts_notes_at_each_level() {
        let notes = [
            quire_vault::parse_note("a.md", "#work/q1 #work/q2 #home\n", &Default::default()),
            quire_vault::parse_note("b.md", "#work/q1/done\n", &Default::default()),
        ];
        let tree = tag_tree(&notes);
        assert_eq!(tree.len(), 2);
        assert_eq!((tree[0].name.as_str(), tree[0].notes), ("home", 1));
        let work = &tree[1];
        assert_eq!((work.path.as_str(), work.notes), ("work", 2));
        assert_eq!(work.children[0].path, "work/q1");
        assert_eq!(work.children[0].notes, 2);
        assert_eq!(work.children[0].children[0].path, "work/q1/done");
        assert_eq!(work.children[1].notes, 1);
    }
}
