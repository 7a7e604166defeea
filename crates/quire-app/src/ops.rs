//! The read operations every face offers: search, read a note, related notes, outline, list
//! notes, vault tree. Every one reads; none writes. Each returns one JSON object of data,
//! bounded by [`crate::bounds`] (what to do with it, e.g. which call reads the rest of a cut
//! note, is the face's to say to its users).

use std::time::Duration;

use quire_index::Filter;
use quire_search::SearchRequest;
use quire_vault::outline::select_lines;
use quire_vault::reasoning::ManifestRow;
use quire_vault::{Note, Outline, Vault};
use serde_json::{Value as Json, json};

use crate::args::{
    FindRelatedNotesArgs, GetNoteArgs, GetOutlineArgs, ListNotesArgs, SearchNotesArgs,
    VaultTreeArgs, count_in,
};
use crate::bounds::{fit_result, page, prune_breadth_first, text_within};
use crate::error::AppError;
use crate::limits::{MAX_NOTE_TEXT_BYTES, MAX_RESULT_BYTES};
use crate::live::{INDEX_WAIT, Live, VAULT_WAIT};
use crate::resolve::{read_current, resolve_note_path};

/// The name of the search operation (the agents' server lists its tools by these names).
pub const SEARCH_NOTES: &str = "search_notes";
/// The name of the read-a-note operation.
pub const GET_NOTE: &str = "get_note";
/// The name of the related-notes operation.
pub const FIND_RELATED_NOTES: &str = "find_related_notes";
/// The name of the outline operation.
pub const GET_OUTLINE: &str = "get_outline";
/// The name of the list-notes operation.
pub const LIST_NOTES: &str = "list_notes";
/// The name of the folder-tree operation.
pub const VAULT_TREE: &str = "vault_tree";

/// The most backlinks or outgoing links `find_related_notes` lists.
const LINKS_SHOWN: usize = 100;

/// The most `where` conditions a search takes.
pub const MAX_CONDITIONS: usize = 8;

/// A search filter from what a face received (empty folder and tag mean none); the message
/// says what is wrong with a condition or a date.
pub fn search_filter(
    folder: Option<String>,
    tag: Option<String>,
    conditions: &[String],
    since: Option<String>,
    until: Option<String>,
) -> Result<Filter, String> {
    if conditions.len() > MAX_CONDITIONS {
        return Err(format!(
            "at most {MAX_CONDITIONS} `where` conditions, not {}",
            conditions.len()
        ));
    }
    let day = |name: &str, value: Option<String>| -> Result<Option<String>, String> {
        match value
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
        {
            None => Ok(None),
            Some(v) if v.len() == 10 && quire_index::filter::date_prefix(&v).is_some() => {
                Ok(Some(v))
            }
            Some(v) => Err(format!("`{name}` must be a day, YYYY-MM-DD, not `{v}`")),
        }
    };
    Ok(Filter {
        folder: folder.filter(|f| !f.trim_matches('/').is_empty()),
        note: None,
        tag: tag.filter(|t| !t.trim_start_matches('#').is_empty()),
        conditions: conditions
            .iter()
            .map(|c| quire_index::filter::Condition::parse(c))
            .collect::<Result<_, _>>()?,
        since: day("since", since)?,
        until: day("until", until)?,
    })
}

/// `search_notes`: notes ranked for a query, each with its best sections (also `quire serve`'s search).
pub fn search_notes(live: &Live, args: SearchNotesArgs) -> Result<Json, AppError> {
    args.check(SEARCH_NOTES)?;
    let k = count_in(
        SEARCH_NOTES,
        "k",
        args.k,
        10,
        crate::limits::MAX_RESULTS as u32,
    )?;
    let query = args.query.trim();
    if query.is_empty() {
        return Err(AppError::bad_arguments(SEARCH_NOTES, "`query` is empty"));
    }
    let mut request = SearchRequest::new(query);
    request.k = k;
    request.filter = search_filter(
        args.folder,
        args.tag,
        args.conditions.as_deref().unwrap_or_default(),
        args.since,
        args.until,
    )
    .map_err(|message| AppError::bad_arguments(SEARCH_NOTES, message))?;
    request.explain = args.explain.unwrap_or(false);
    let results = live.search(INDEX_WAIT, args.mode.map(Into::into), request)?;
    let value = serde_json::to_value(&results).unwrap_or_default();
    Ok(fit_result(value, MAX_RESULT_BYTES))
}

/// `get_note`: a note's current text from disk, whole, a line range or a heading's section.
/// Text longer than [`MAX_NOTE_TEXT_BYTES`] is cut with `truncated: true` and `next_lines` (and
/// `next_offset` when a single line is longer than that) to ask for the rest.
pub fn get_note(live: &Live, args: GetNoteArgs) -> Result<Json, AppError> {
    args.check(GET_NOTE)?;
    if args.lines.is_some() && args.heading.is_some() {
        return Err(AppError::bad_arguments(
            GET_NOTE,
            "give `lines` or `heading`, not both",
        ));
    }
    let path = resolve_note_path(live, &args.path)?;
    let note = read_current(live, &path)?;
    let (start, end) = select_lines(&note, args.lines.as_deref(), args.heading.as_deref())?;
    let offset = args.offset.unwrap_or(0) as usize;
    let piece = text_within(&note, start, end, offset, MAX_NOTE_TEXT_BYTES)
        .map_err(|message| AppError::bad_arguments(GET_NOTE, message))?;
    let mut value = json!({
        "path": note.path,
        "title": note.title,
        "sha256": note.sha256,
        "line_count": note.line_count,
        "start_line": piece.first_line,
        "end_line": piece.last_line,
        "text": &note.source[piece.range.clone()],
        "truncated": piece.rest.is_some(),
    });
    if offset > 0 {
        value["offset"] = offset.into();
    }
    // Where the rest starts: `next_lines`, and `next_offset` characters into its first line
    // when a single line was too long to return whole.
    if let Some((line, into)) = piece.rest {
        value["next_lines"] = format!("{line}-{end}").into();
        if into > 0 {
            value["next_offset"] = into.into();
        }
    }
    Ok(fit_result(value, MAX_RESULT_BYTES))
}

/// `{path, title}` of notes `ids` of `vault`, at most [`LINKS_SHOWN`].
fn note_refs(vault: &Vault, ids: &[usize]) -> Json {
    ids.iter()
        .take(LINKS_SHOWN)
        .map(|&j| json!({"path": vault.notes[j].path, "title": vault.notes[j].title}))
        .collect()
}

/// `find_related_notes`: similar notes (vectors), backlinks, outgoing links, index-note parents.
pub fn find_related_notes(live: &Live, args: FindRelatedNotesArgs) -> Result<Json, AppError> {
    args.check(FIND_RELATED_NOTES)?;
    let k = count_in(
        FIND_RELATED_NOTES,
        "k",
        args.k,
        10,
        crate::limits::MAX_RESULTS as u32,
    )?;
    let path = resolve_note_path(live, &args.path)?;
    let snapshot = live.vault(VAULT_WAIT)?;
    let vault = &snapshot.vault;
    let mut value = json!({ "path": path });
    match vault.index_of(&path) {
        Some(i) => {
            let graph = &vault.graph;
            value["title"] = vault.notes[i].title.clone().into();
            value["backlinks"] = note_refs(vault, &graph.backlinks[i]);
            value["backlinks_total"] = graph.backlinks[i].len().into();
            value["outgoing"] = note_refs(vault, &graph.outgoing[i]);
            value["outgoing_total"] = graph.outgoing[i].len().into();
            value["moc_parents"] = note_refs(vault, &graph.moc_parents[i]);
        }
        None => {
            value["links_unavailable"] =
                "the note is newer than the parsed vault; links appear after the next sync".into();
        }
    }
    // Similar notes need vectors; links are useful without them, so their absence is a note in
    // the result, not an error.
    let similar = live.similar(Duration::ZERO, &path, k);
    match similar {
        Ok(notes) => {
            // The similar notes that look like copies of this one (a cosine alone does not
            // say: notes made from one template are as close).
            match live.near_copies(&path, &notes) {
                Ok(Some(copies)) => {
                    value["near_copies"] = serde_json::to_value(copies).unwrap_or_default();
                }
                Ok(None) => {}
                Err(e) => value["near_copies_unavailable"] = e.to_string().into(),
            }
            value["similar"] = serde_json::to_value(notes).unwrap_or_default();
        }
        Err(e) => value["similar_unavailable"] = e.to_string().into(),
    }
    Ok(fit_result(value, MAX_RESULT_BYTES))
}

/// `get_outline`: the heading tree of the note on disk, with line ranges.
pub fn get_outline(live: &Live, args: GetOutlineArgs) -> Result<Json, AppError> {
    args.check(GET_OUTLINE)?;
    let path = resolve_note_path(live, &args.path)?;
    let note = read_current(live, &path)?;
    let outline = serde_json::to_value(Outline::of(&note)).unwrap_or_default();
    let (mut value, omitted) = prune_breadth_first(&outline, "headings", MAX_RESULT_BYTES);
    value["sha256"] = note.sha256.into();
    if omitted > 0 {
        value["truncated"] = format!(
            "{omitted} deeper headings were left out (see omitted_children); read a section by its heading to see its subheadings"
        )
        .into();
    }
    Ok(fit_result(value, MAX_RESULT_BYTES))
}

/// Whether `note` has frontmatter property `spec` (`name`, or `name=value`; case ignored).
fn has_property(note: &Note, spec: &str) -> bool {
    let (name, wanted) = match spec.split_once('=') {
        Some((name, value)) => (name.trim(), Some(value.trim().to_lowercase())),
        None => (spec.trim(), None),
    };
    let matches = |v: &Json| {
        let text = match v {
            Json::String(s) => s.to_lowercase(),
            other => other.to_string().to_lowercase(),
        };
        wanted.as_deref().is_none_or(|w| text == w)
    };
    note.properties
        .iter()
        .filter(|(key, _)| key.eq_ignore_ascii_case(name))
        .any(|(_, value)| match value {
            Json::Array(items) => wanted.is_none() || items.iter().any(matches),
            other => matches(other),
        })
}

fn in_folder(path: &str, folder: &str) -> bool {
    let folder = folder.trim_matches('/');
    folder.is_empty() || path.starts_with(&format!("{folder}/"))
}

fn has_tag(note: &Note, tag: &str) -> bool {
    let tag = tag.trim_start_matches('#').to_lowercase();
    note.tag_names().iter().any(|t| {
        let t = t.to_lowercase();
        t == tag || t.starts_with(&format!("{tag}/"))
    })
}

/// `list_notes`: one manifest row per note that passes the folder, tag and property filters, in
/// path order, a page at a time (`limit` rows, fewer when the page outgrows the result budget);
/// `next_offset` when more remain.
pub fn list_notes(live: &Live, args: ListNotesArgs) -> Result<Json, AppError> {
    args.check(LIST_NOTES)?;
    let limit = count_in(LIST_NOTES, "limit", args.limit, 50, 200)?;
    let offset = args.offset.unwrap_or(0) as usize;
    let snapshot = live.vault(VAULT_WAIT)?;
    let notes = &snapshot.vault.notes;
    let rows = &snapshot.manifest().notes;
    let selected: Vec<&ManifestRow> = rows
        .iter()
        .zip(notes)
        .filter(|(_, note)| {
            args.folder
                .as_deref()
                .is_none_or(|f| in_folder(&note.path, f))
        })
        .filter(|(_, note)| args.tag.as_deref().is_none_or(|t| has_tag(note, t)))
        .filter(|(_, note)| {
            args.property
                .as_deref()
                .is_none_or(|p| has_property(note, p))
        })
        .map(|(row, _)| row)
        .collect();
    let (shown, next_offset) = page(&selected, offset, limit, MAX_RESULT_BYTES);
    let mut value = json!({
        "total": selected.len(),
        "offset": offset,
        "returned": shown.len(),
        "notes": shown,
    });
    if let Some(next) = next_offset {
        value["next_offset"] = next.into();
    }
    Ok(value)
}

/// `vault_tree`: the folder tree of the vault or of one folder (names are case-sensitive),
/// pruned breadth-first under the result budget; `truncated` says how many entries were left out.
pub fn vault_tree(live: &Live, args: VaultTreeArgs) -> Result<Json, AppError> {
    args.check(VAULT_TREE)?;
    let snapshot = live.vault(VAULT_WAIT)?;
    let mut node = snapshot.tree();
    let folder = args.folder.as_deref().unwrap_or("").trim_matches('/');
    for name in folder.split('/').filter(|s| !s.is_empty()) {
        node = node.folder(name).ok_or_else(|| {
            AppError::bad_arguments(
                VAULT_TREE,
                format!("no folder `{folder}` in the vault (folder names are case-sensitive)"),
            )
        })?;
    }
    let node = serde_json::to_value(node).unwrap_or_default();
    let (tree, omitted) = prune_breadth_first(&node, "children", MAX_RESULT_BYTES);
    let mut value = json!({ "folder": folder, "tree": tree });
    if omitted > 0 {
        value["truncated"] = format!(
            "{omitted} deeper entries were left out (folders marked omitted_children); ask for one folder to open it"
        )
        .into();
    }
    Ok(value)
}
