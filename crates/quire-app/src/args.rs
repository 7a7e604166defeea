//! The tools' arguments. Each struct is both the JSON schema a client sees (doc comments become
//! the field descriptions) and what its arguments are parsed into. Parsing happens here rather than
//! in the SDK so that a malformed call (a missing field, a wrong type, `k: -1`) is a tool error the
//! agent can read and correct, not a protocol error.

type JsonObject = serde_json::Map<String, serde_json::Value>;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::AppError;
use crate::limits::{
    MAX_ARGUMENT_NAME_CHARS, MAX_PARAM_CHARS, MAX_PATH_CHARS, MAX_PROPOSED_TEXT_CHARS,
    MAX_QUERY_CHARS, check_length,
};

/// Which retriever ranks the notes.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Words and meaning, fused by reciprocal rank (needs the embedding model).
    Hybrid,
    /// Words only (BM25 over titles, headings and text).
    Bm25,
    /// Meaning only (needs the embedding model).
    Vector,
}

impl From<SearchMode> for quire_search::Mode {
    fn from(mode: SearchMode) -> Self {
        match mode {
            SearchMode::Hybrid => quire_search::Mode::Hybrid,
            SearchMode::Bm25 => quire_search::Mode::Bm25,
            SearchMode::Vector => quire_search::Mode::Vector,
        }
    }
}

/// The arguments of `search_notes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchNotesArgs {
    /// What to look for: words, a phrase or a question.
    pub query: String,
    /// How many notes to return, best first (1 to 50; default 10).
    #[schemars(range(min = 1, max = 50))]
    pub k: Option<u32>,
    /// `hybrid`, `bm25` or `vector`. Default: hybrid when the embedding model is loaded and the
    /// index has embeddings, else bm25.
    pub mode: Option<SearchMode>,
    /// Only notes in this vault folder or below it, e.g. `Projects` or `Projects/2024`.
    pub folder: Option<String>,
    /// Only notes with this tag or a tag nested under it, without `#`: `project` also matches
    /// `project/alpha`.
    pub tag: Option<String>,
    /// Only notes whose frontmatter passes every condition: `status=done`, `rating>=7`,
    /// `created<2024-01-01`, `tags~travel` (`=`, `!=`, `<`, `<=`, `>`, `>=`, `~` contains;
    /// dates and numbers compare as such).
    #[serde(rename = "where")]
    #[schemars(rename = "where")]
    pub conditions: Option<Vec<String>>,
    /// Only notes dated on or after this day, `YYYY-MM-DD` (the `date`/`created` property or a
    /// daily note's file name).
    pub since: Option<String>,
    /// Only notes dated on or before this day, `YYYY-MM-DD`.
    pub until: Option<String>,
    /// Add to each note why it ranked where it did (`explain`: its BM25 and vector ranks and
    /// scores, the fused score, the section that carried it). Default false.
    pub explain: Option<bool>,
}

/// The arguments of `get_note`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetNoteArgs {
    /// The note's vault-relative path, e.g. `Projects/Plan.md` (`.md` optional; case is ignored;
    /// a bare note name is resolved like a wikilink).
    pub path: String,
    /// Only these lines: `A-B` (1-based, inclusive), `A`, or `A-` (to the end). Use the line
    /// ranges from search_notes or get_outline, or the `next` hint of a truncated result.
    pub lines: Option<String>,
    /// Only the section under this heading, as a path of heading texts: `Plan/Week 2`. Not with
    /// `lines`.
    pub heading: Option<String>,
    /// Characters of the selected text to skip (default 0): pass the `next_offset` of a result
    /// cut inside a very long line, with its `next_lines`.
    pub offset: Option<u32>,
}

/// The arguments of `find_related_notes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindRelatedNotesArgs {
    /// The note's vault-relative path (as for get_note).
    pub path: String,
    /// How many similar notes to return (1 to 50; default 10).
    #[schemars(range(min = 1, max = 50))]
    pub k: Option<u32>,
}

/// The arguments of `get_outline`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetOutlineArgs {
    /// The note's vault-relative path (as for get_note).
    pub path: String,
}

/// The arguments of `list_notes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListNotesArgs {
    /// Only notes in this vault folder or below it.
    pub folder: Option<String>,
    /// Only notes with this tag or a tag nested under it, without `#`.
    pub tag: Option<String>,
    /// Only notes with this frontmatter property: `status`, or `status=done` for a value (an
    /// item of a list counts; case is ignored).
    pub property: Option<String>,
    /// Rows to skip: pass the `next_offset` of the previous page (default 0).
    pub offset: Option<u32>,
    /// Rows per page (1 to 200; default 50). Pages are also cut to a size budget.
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u32>,
}

/// The arguments of `vault_tree`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VaultTreeArgs {
    /// Only the subtree of this vault folder, e.g. `Projects` (default: the whole vault). Use it
    /// to open a folder whose children a larger tree left out.
    pub folder: Option<String>,
}

/// What a proposed change does to its note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProposedChange {
    /// A new note with `text` as its content (the path must not exist).
    Create,
    /// `text` added at the end of the section under `heading` (the heading is added at the end
    /// of the note when it has none; no heading: at the end of the note).
    Append,
    /// The note's whole content replaced by `text`.
    Replace,
}

/// The arguments of `propose_note_change`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposeNoteChangeArgs {
    /// The note's vault-relative path, ending in `.md`, e.g. `Projects/Plan.md`.
    #[schemars(length(max = MAX_PATH_CHARS))]
    pub path: String,
    /// `create`, `append` or `replace`.
    pub change: ProposedChange,
    /// The Markdown to write (the new note, the text to append, or the whole new content).
    #[schemars(length(max = MAX_PROPOSED_TEXT_CHARS))]
    pub text: String,
    /// For `append`: the heading's text without `#`, e.g. `Next steps`.
    #[schemars(length(max = MAX_PARAM_CHARS))]
    pub heading: Option<String>,
    /// Why: one line shown to the user who decides (default: the change and the path).
    #[schemars(length(max = MAX_PARAM_CHARS))]
    pub title: Option<String>,
}

impl ProposeNoteChangeArgs {
    /// The limits of [`crate::limits`] on each text argument.
    pub fn check(&self, tool: &str) -> Result<(), AppError> {
        limited(tool, "path", Some(&self.path), MAX_PATH_CHARS)?;
        limited(tool, "text", Some(&self.text), MAX_PROPOSED_TEXT_CHARS)?;
        limited(tool, "heading", self.heading.as_deref(), MAX_PARAM_CHARS)?;
        limited(tool, "title", self.title.as_deref(), MAX_PARAM_CHARS)
    }
}

/// `Err` naming the argument and the limit when `value` is longer than `max` characters.
fn limited(tool: &str, name: &str, value: Option<&str>, max: usize) -> Result<(), AppError> {
    match value {
        Some(value) => {
            check_length(name, value, max).map_err(|message| AppError::bad_arguments(tool, message))
        }
        None => Ok(()),
    }
}

impl SearchNotesArgs {
    /// The limits of [`crate::limits`] on each text argument.
    pub fn check(&self, tool: &str) -> Result<(), AppError> {
        limited(tool, "query", Some(&self.query), MAX_QUERY_CHARS)?;
        limited(tool, "folder", self.folder.as_deref(), MAX_PARAM_CHARS)?;
        limited(tool, "tag", self.tag.as_deref(), MAX_PARAM_CHARS)
    }
}

impl GetNoteArgs {
    /// The limits of [`crate::limits`] on each text argument.
    pub fn check(&self, tool: &str) -> Result<(), AppError> {
        limited(tool, "path", Some(&self.path), MAX_PATH_CHARS)?;
        limited(tool, "lines", self.lines.as_deref(), MAX_PARAM_CHARS)?;
        limited(tool, "heading", self.heading.as_deref(), MAX_PARAM_CHARS)
    }
}

impl FindRelatedNotesArgs {
    /// The limits of [`crate::limits`] on each text argument.
    pub fn check(&self, tool: &str) -> Result<(), AppError> {
        limited(tool, "path", Some(&self.path), MAX_PATH_CHARS)
    }
}

impl GetOutlineArgs {
    /// The limits of [`crate::limits`] on each text argument.
    pub fn check(&self, tool: &str) -> Result<(), AppError> {
        limited(tool, "path", Some(&self.path), MAX_PATH_CHARS)
    }
}

impl ListNotesArgs {
    /// The limits of [`crate::limits`] on each text argument.
    pub fn check(&self, tool: &str) -> Result<(), AppError> {
        limited(tool, "folder", self.folder.as_deref(), MAX_PARAM_CHARS)?;
        limited(tool, "tag", self.tag.as_deref(), MAX_PARAM_CHARS)?;
        limited(tool, "property", self.property.as_deref(), MAX_PARAM_CHARS)
    }
}

impl VaultTreeArgs {
    /// The limits of [`crate::limits`] on each text argument.
    pub fn check(&self, tool: &str) -> Result<(), AppError> {
        limited(tool, "folder", self.folder.as_deref(), MAX_PARAM_CHARS)
    }
}

/// Refuses arguments that could not be valid before serde reads them: serde's messages quote
/// the value they stumble on (`invalid type: string "…"`, `unknown field `…``), and a reply must
/// not echo megabytes. No argument of any tool is longer than the longest limit, wherever it
/// sits (a string inside a list, an unknown field).
fn check_sizes(tool: &str, arguments: &JsonObject) -> Result<(), AppError> {
    fn longest(value: &serde_json::Value) -> Option<&str> {
        match value {
            serde_json::Value::String(s) => Some(s),
            serde_json::Value::Array(items) => {
                items.iter().filter_map(longest).max_by_key(|s| s.len())
            }
            serde_json::Value::Object(map) => map
                .keys()
                .map(String::as_str)
                .chain(map.values().filter_map(longest))
                .max_by_key(|s| s.len()),
            _ => None,
        }
    }
    let max = if tool == crate::proposals::PROPOSE_TOOL {
        MAX_PROPOSED_TEXT_CHARS
    } else {
        MAX_PATH_CHARS.max(MAX_QUERY_CHARS).max(MAX_PARAM_CHARS)
    };
    for (name, value) in arguments {
        if check_length("", name, MAX_ARGUMENT_NAME_CHARS).is_err() {
            return Err(AppError::bad_arguments(
                tool,
                format!(
                    "an argument name is {} characters long; the limit is {MAX_ARGUMENT_NAME_CHARS} characters",
                    name.chars().count()
                ),
            ));
        }
        if let Some(text) = longest(value) {
            check_length(name, text, max)
                .map_err(|message| AppError::bad_arguments(tool, message))?;
        }
    }
    Ok(())
}

/// Parses a tool's arguments (absent arguments are an empty object).
pub fn parse<T: DeserializeOwned>(
    tool: &str,
    arguments: Option<JsonObject>,
) -> Result<T, AppError> {
    let arguments = arguments.unwrap_or_default();
    check_sizes(tool, &arguments)?;
    let object = serde_json::Value::Object(arguments);
    serde_json::from_value(object).map_err(|e| AppError::bad_arguments(tool, e.to_string()))
}

/// A count argument checked against its range (the schema states it; serde does not).
pub fn count_in(
    tool: &str,
    name: &str,
    value: Option<u32>,
    default: u32,
    max: u32,
) -> Result<usize, AppError> {
    crate::limits::check_count(name, u64::from(value.unwrap_or(default)), u64::from(max))
        .map_err(|message| AppError::bad_arguments(tool, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: serde_json::Value) -> Option<JsonObject> {
        value.as_object().cloned()
    }

    #[test]
    fn malformed_arguments_are_tool_errors_that_name_the_problem() {
        let missing = parse::<GetNoteArgs>("get_note", object(json!({}))).unwrap_err();
        assert!(
            missing.to_string().contains("missing field `path`"),
            "{missing}"
        );
        let wrong = parse::<SearchNotesArgs>("search_notes", object(json!({"query": 3})));
        assert!(wrong.unwrap_err().to_string().contains("invalid type"));
        let negative =
            parse::<SearchNotesArgs>("search_notes", object(json!({"query": "x", "k": -1})));
        assert!(negative.unwrap_err().to_string().contains("-1"));
        let unknown =
            parse::<GetOutlineArgs>("get_outline", object(json!({"path": "a", "depth": 2})));
        assert!(
            unknown
                .unwrap_err()
                .to_string()
                .contains("unknown field `depth`")
        );
        assert!(count_in("t", "k", Some(0), 10, 50).is_err());
        assert_eq!(count_in("t", "k", None, 10, 50).unwrap(), 10);
        assert!(parse::<VaultTreeArgs>("vault_tree", None).is_ok());
    }

    #[test]
    fn overlong_arguments_are_refused_with_the_limit_and_never_quoted() {
        let long = "x".repeat(50_000);
        for arguments in [
            json!({"query": long}),
            json!({"query": "q", "k": long}),
            json!({"query": "q", "mode": long}),
            json!({"query": "q", long.clone(): 1}),
            json!({"query": ["q", long]}),
        ] {
            let error = parse::<SearchNotesArgs>("search_notes", object(arguments))
                .and_then(|a| a.check("search_notes").map(|()| a))
                .unwrap_err()
                .to_string();
            assert!(error.len() < 200, "{error}");
            assert!(!error.contains("xxxxxxxxxx"), "{error}");
            assert!(error.contains("limit is"), "{error}");
        }
        let query =
            parse::<SearchNotesArgs>("search_notes", object(json!({"query": "é".repeat(1_001)})));
        assert_eq!(
            query.unwrap_err().to_string(),
            "invalid arguments for `search_notes`: `query` is 1001 characters long; the limit is 1000 characters"
        );
        let heading = parse::<GetNoteArgs>(
            "get_note",
            object(json!({"path": "a.md", "heading": "h".repeat(501)})),
        )
        .unwrap();
        assert!(
            heading
                .check("get_note")
                .unwrap_err()
                .to_string()
                .contains("`heading` is 501")
        );
    }
}
