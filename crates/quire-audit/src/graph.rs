//! The link graph seen whole: connected components and hubs.

use quire_vault::Vault;

use crate::{Components, Hub};

/// The connected components of the vault's link graph, links taken in both directions: for
/// each note, the index of its component. Components are numbered largest first, ties broken by
/// their first note's path, so the numbering is stable.
pub(crate) fn component_of(vault: &Vault) -> (Vec<usize>, Vec<Vec<usize>>) {
    let n = vault.notes.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for (i, targets) in vault.graph.outgoing.iter().enumerate() {
        for &j in targets {
            let (a, b) = (root(&mut parent, i), root(&mut parent, j));
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut members: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for i in 0..n {
        let r = root(&mut parent, i);
        members.entry(r).or_default().push(i);
    }
    // Each list is ascending, and notes are sorted by path: the first member is the first path.
    let mut groups: Vec<Vec<usize>> = members.into_values().collect();
    groups.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a[0].cmp(&b[0])));
    let mut of = vec![0; n];
    for (c, group) in groups.iter().enumerate() {
        for &i in group {
            of[i] = c;
        }
    }
    (of, groups)
}

/// Component sizes and the small islands (2 to `island_max` notes, not the largest).
pub(crate) fn components(vault: &Vault, island_max: usize) -> Components {
    let (_, groups) = component_of(vault);
    let islands = groups
        .iter()
        .skip(1)
        .filter(|g| g.len() >= 2 && g.len() <= island_max)
        .map(|g| g.iter().map(|&i| vault.notes[i].path.clone()).collect())
        .collect();
    Components {
        count: groups.len(),
        sizes: groups.iter().map(Vec::len).collect(),
        largest: groups.first().map_or(0, Vec::len),
        islands,
    }
}

/// The `top` notes with the longest lists in `lists` (backlinks or outgoing links), longest
/// first, ties by path; notes with an empty list are left out.
pub(crate) fn top(vault: &Vault, lists: &[Vec<usize>], top: usize) -> Vec<Hub> {
    let mut ranked: Vec<usize> = (0..lists.len()).filter(|&i| !lists[i].is_empty()).collect();
    // Notes are sorted by path, so the index breaks ties by path.
    ranked.sort_by(|&a, &b| lists[b].len().cmp(&lists[a].len()).then(a.cmp(&b)));
    ranked
        .into_iter()
        .take(top)
        .map(|i| Hub {
            path: vault.notes[i].path.clone(),
            count: lists[i].len(),
        })
        .collect()
}
