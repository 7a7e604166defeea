//! The tools as MCP lists them: what each is called and tells an agent. What they answer is
//! the application's ([`quire_app::ops`]); the six read tools read, and the one more tool of
//! `quire mcp --allow-proposals`, `propose_note_change`, only makes a proposal the user applies
//! (or not) — no tool writes into the vault.

use quire_app::AppError;
use quire_app::args::parse;
use quire_app::args::{
    FindRelatedNotesArgs, GetNoteArgs, GetOutlineArgs, ListNotesArgs, ProposeNoteChangeArgs,
    SearchNotesArgs, VaultTreeArgs,
};
use quire_app::bounds::fit_result;
use quire_app::limits::{MAX_NOTE_TEXT_BYTES, MAX_RESULT_BYTES};
use quire_app::live::Live;
use quire_app::ops::{
    self, FIND_RELATED_NOTES, GET_NOTE, GET_OUTLINE, LIST_NOTES, SEARCH_NOTES, VAULT_TREE,
};
use quire_app::proposals::PROPOSE_TOOL;
use rmcp::handler::server::tool::schema_for_input;
use rmcp::model::{Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde_json::{Map, Value as Json};

/// What the server tells a client about itself at initialization.
pub(crate) const INSTRUCTIONS: &str = "quire gives read-only access to a Markdown (Obsidian) \
vault. Find notes with search_notes (results carry line ranges), read exactly those lines with \
get_note(path, lines), see a note's headings with get_outline, its neighbours with \
find_related_notes, and the vault's shape with vault_tree and list_notes. Paths are \
vault-relative, e.g. `Projects/Plan.md`. Nothing here changes the vault.";

/// Added to [`INSTRUCTIONS`] when proposals are allowed.
pub(crate) const PROPOSAL_INSTRUCTIONS: &str = " To suggest a change to a note, call \
propose_note_change: it makes a proposal that the user reviews as a diff and applies or rejects \
(`quire proposals`); it never writes the note itself.";

fn tool<A: JsonSchema + 'static>(
    name: &'static str,
    title: &str,
    description: &'static str,
) -> Tool {
    // The argument structs are objects by construction, so their schemas always pass rmcp's check.
    let schema = schema_for_input::<A>().unwrap_or_default();
    Tool::new(name, description, schema)
        .with_title(title)
        .with_annotations(
            ToolAnnotations::new()
                .read_only(true)
                .destructive(false)
                .idempotent(true)
                .open_world(false),
        )
}

/// The tool that makes a proposal (listed with `--allow-proposals` only).
fn propose_tool() -> Tool {
    let schema = schema_for_input::<ProposeNoteChangeArgs>().unwrap_or_default();
    Tool::new(
        PROPOSE_TOOL,
        "Propose one change to one Markdown note: create it, append text under a heading, or \
         replace its content. Nothing is written: the result is a pending proposal (an id and \
         the diff) that the user reviews and applies or rejects. Read the note first \
         (get_note); a proposal made from stale text is refused when applied.",
        schema,
    )
    .with_title("Propose a change to a note")
    .with_annotations(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .idempotent(false)
            .open_world(false),
    )
}

/// The tools as `tools/list` shows them (`propose_note_change` when `allow_proposals`).
pub(crate) fn definitions(allow_proposals: bool) -> Vec<Tool> {
    let mut tools = read_tools();
    if allow_proposals {
        tools.push(propose_tool());
    }
    tools
}

fn read_tools() -> Vec<Tool> {
    vec![
        tool::<SearchNotesArgs>(
            SEARCH_NOTES,
            "Search notes",
            "Search the vault's notes by words and, when the embedding model is loaded, by \
             meaning. Returns up to k notes, best first, each with its best sections: heading \
             path, line range (1-based, inclusive) and a snippet. To read a section in full, \
             call get_note with its path and `lines`.",
        ),
        tool::<GetNoteArgs>(
            GET_NOTE,
            "Read a note",
            "Read a note's current text from disk: the whole note, a line range (`lines`) or the \
             section under a heading (`heading`). Returns the text with its line range, the \
             note's title, line count and the sha256 of the file. Long text is cut at a line \
             break (a very long line inside it) with `truncated: true`, `next_lines` (and \
             `next_offset`) to pass back as `lines` (and `offset`) for the rest, and a `next` \
             hint saying so.",
        ),
        tool::<FindRelatedNotesArgs>(
            FIND_RELATED_NOTES,
            "Find related notes",
            "Notes related to a note: the most similar notes by meaning (when the index has \
             embeddings; `near_copies` lists those that look like copies of it), the notes that \
             link to it (backlinks), the notes it links to \
             (outgoing), and the index notes (maps of content) that list it.",
        ),
        tool::<GetOutlineArgs>(
            GET_OUTLINE,
            "Outline of a note",
            "A note's headings as a tree, each with the line where it starts and the last line \
             of its section. Use it to pick the lines to read with get_note.",
        ),
        tool::<ListNotesArgs>(
            LIST_NOTES,
            "List notes",
            "One row per note, filtered by folder, tag or frontmatter property: path, title, \
             tags, aliases, selected properties, top headings, links out, backlink count, word \
             and line counts, sha256. Paged: pass `next_offset` back as `offset` for more.",
        ),
        tool::<VaultTreeArgs>(
            VAULT_TREE,
            "Vault tree",
            "The vault's folders and notes as a tree, with note counts per folder and heading \
             counts per note. A large vault is cut to its top levels (`omitted_children` marks \
             a cut); pass `folder` to open one folder.",
        ),
    ]
}

pub(crate) fn is_tool(name: &str) -> bool {
    [
        SEARCH_NOTES,
        GET_NOTE,
        FIND_RELATED_NOTES,
        GET_OUTLINE,
        LIST_NOTES,
        VAULT_TREE,
    ]
    .contains(&name)
}

/// Runs read tool `name` with the client's JSON arguments: the application's operation, with
/// the hints an agent needs to go on (how to read the rest of a cut note, the next page, a
/// section of a result), fitted under [`MAX_RESULT_BYTES`]. Blocking: call it off the runtime.
pub(crate) fn call(
    live: &Live,
    name: &str,
    arguments: Option<Map<String, Json>>,
) -> Result<Json, AppError> {
    let mut value = match name {
        SEARCH_NOTES => ops::search_notes(live, parse(name, arguments)?),
        GET_NOTE => ops::get_note(live, parse(name, arguments)?),
        FIND_RELATED_NOTES => ops::find_related_notes(live, parse(name, arguments)?),
        GET_OUTLINE => ops::get_outline(live, parse(name, arguments)?),
        LIST_NOTES => ops::list_notes(live, parse(name, arguments)?),
        VAULT_TREE => ops::vault_tree(live, parse(name, arguments)?),
        _ => Err(AppError::bad_arguments(name, "no such tool")),
    }?;
    add_hints(name, &mut value);
    Ok(fit_result(value, MAX_RESULT_BYTES))
}

/// The agent's next step, said in the tools' own terms.
fn add_hints(name: &str, value: &mut Json) {
    match name {
        SEARCH_NOTES => {
            let empty = value["results"].as_array().is_none_or(Vec::is_empty);
            value["hint"] = if empty {
                "No note matched. Try other words, mode `hybrid` or `vector` (meaning), or drop the filters."
            } else {
                "Read a section with get_note(path, lines=\"start_line-end_line\")."
            }
            .into();
        }
        GET_NOTE => {
            let Some(lines) = value["next_lines"].as_str().map(str::to_string) else {
                return;
            };
            value["next"] = match value["next_offset"].as_u64() {
                Some(into) => format!(
                    "Line {} is too long to return whole: the text was cut {into} characters into it to stay under {MAX_NOTE_TEXT_BYTES} bytes. Call get_note with lines=\"{lines}\" and offset={into} for the rest.",
                    lines.split('-').next().unwrap_or_default()
                ),
                None => format!(
                    "The text was cut at line {} to stay under {MAX_NOTE_TEXT_BYTES} bytes: call get_note with lines=\"{lines}\" for the rest.",
                    value["end_line"]
                ),
            }
            .into();
        }
        LIST_NOTES => {
            if let Some(next) = value["next_offset"].as_u64() {
                value["hint"] =
                    format!("More notes: call list_notes again with offset={next}.").into();
            }
        }
        VAULT_TREE if value.get("truncated").is_some() => {
            value["hint"] = "Call vault_tree with folder=\"<path>\" to open a folder.".into();
        }
        GET_OUTLINE if value.get("truncated").is_some() => {
            value["hint"] =
                "Read a section with get_note(path, heading) to see its subheadings.".into();
        }
        _ => {}
    }
}
