//! The limits on what a client may send and what one answer may carry. They are the same on
//! every face (the CLI, the HTTP API, the agents' server on stdio or HTTP): each uses these
//! constants rather than its own, so a request refused on one face is refused on all of them,
//! with the same numbers in the message.
//!
//! Lengths of text arguments are counted in characters (Unicode scalar values), sizes of
//! messages and results in bytes. An argument over its limit is refused with a message that
//! states the limit and the length given, never the value itself: a reply never echoes
//! megabytes back.

/// The largest request: one message on stdio (a line), one HTTP request body (every route).
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// The longest search query (`search_notes`' `query`, `/api/search`'s `q`).
pub const MAX_QUERY_CHARS: usize = 1_000;
/// The longest question (`/api/ask`).
pub const MAX_QUESTION_CHARS: usize = 4_000;
/// The longest note path argument (`path` of the note tools, `/api/ask`'s and `/api/draft`'s
/// `note`, the path of `/api/notes/{path}` and its siblings).
pub const MAX_PATH_CHARS: usize = 1_000;
/// The longest other text argument: `folder`, `tag`, `property`, `heading`, `lines`.
pub const MAX_PARAM_CHARS: usize = 500;
/// The longest text an agent may propose for a note (`propose_note_change`'s `text`, the body of
/// a proposal made over HTTP); it must also fit [`MAX_BODY_BYTES`].
pub const MAX_PROPOSED_TEXT_CHARS: usize = 48_000;
/// The longest argument name: longer ones are refused without being quoted.
pub const MAX_ARGUMENT_NAME_CHARS: usize = 64;

/// The most JSON one result carries, in bytes (about 16k tokens).
pub const MAX_RESULT_BYTES: usize = 60_000;
/// The most note text one result carries, in bytes of its JSON string (escapes included).
pub const MAX_NOTE_TEXT_BYTES: usize = 40_000;
/// The longest title, heading, snippet or other text field shown whole in a result that had to
/// be cut to fit [`MAX_RESULT_BYTES`]; longer ones end in `…`.
pub const MAX_FIELD_CHARS: usize = 1_000;
/// The longest error message sent back, in characters.
pub const MAX_ERROR_CHARS: usize = 2_000;

/// The most notes one search or similar-notes request returns (`k`, on every face).
pub const MAX_RESULTS: u64 = 50;
/// The most notes in an answer's context (`ask --notes`, `/api/ask`'s `notes`).
pub const MAX_CONTEXT_NOTES: u64 = 12;
/// The most candidate notes an answer asks of the index (`ask --candidates`).
pub const MAX_CANDIDATE_NOTES: u64 = 200;
/// The most passages per note, among the candidates and in the context.
pub const MAX_PASSAGES_PER_NOTE: u64 = 20;
/// The most characters of note text in an answer's context (`ask --budget`).
pub const MAX_CONTEXT_BUDGET: u64 = 200_000;

/// The characters of daily-note text a reflection reads by default, shared among the days.
pub const REFLECT_BUDGET: u64 = 12_000;
/// The most characters of daily-note text a reflection reads (`reflect --budget`, `/api/reflect`).
pub const MAX_REFLECT_BUDGET: u64 = 100_000;

/// `Ok(value)` when `value` is from 1 to `max`, else the one message every face gives (the CLI
/// as an error, HTTP as 400 `bad_request`, the agents' server as an error result).
pub fn check_count(name: &str, value: u64, max: u64) -> Result<usize, String> {
    if (1..=max).contains(&value) {
        return Ok(usize::try_from(value).unwrap_or(usize::MAX));
    }
    Err(count_message(name, &value.to_string(), max))
}

/// The message for a count that is not a whole number from 1 to `max` (`given` as it came).
pub fn count_message(name: &str, given: &str, max: u64) -> String {
    format!("`{name}` must be a whole number from 1 to {max}, not {given}")
}

/// How much context an answer gets, from a request's numbers (`None`: the default), each
/// checked against its limit above: the same rules whichever face asks.
pub fn context_limits(
    notes: Option<u64>,
    candidates: Option<u64>,
    candidate_chunks: Option<u64>,
    chunks_per_note: Option<u64>,
    budget: Option<u64>,
) -> Result<quire_assist::context::ContextLimits, String> {
    let mut limits = quire_assist::context::ContextLimits::default();
    let checked = |name: &str, value: Option<u64>, max: u64, default: usize| match value {
        Some(v) => check_count(name, v, max),
        None => Ok(default),
    };
    limits.notes = checked("notes", notes, MAX_CONTEXT_NOTES, limits.notes)?;
    limits.candidate_notes = checked(
        "candidates",
        candidates,
        MAX_CANDIDATE_NOTES,
        limits.candidate_notes,
    )?;
    limits.candidate_chunks = checked(
        "candidate_chunks",
        candidate_chunks,
        MAX_PASSAGES_PER_NOTE,
        limits.candidate_chunks,
    )?;
    limits.chunks_per_note = checked(
        "chunks_per_note",
        chunks_per_note,
        MAX_PASSAGES_PER_NOTE,
        limits.chunks_per_note,
    )?;
    limits.budget = checked("budget", budget, MAX_CONTEXT_BUDGET, limits.budget)?;
    Ok(limits)
}

/// `Err` with a message that states the limit when `value` is longer than `max` characters.
/// The message names the argument and gives both lengths; it never quotes the value.
pub fn check_length(name: &str, value: &str, max: usize) -> Result<(), String> {
    // Counting stops past the limit: a megabyte-long value costs no more than a short one.
    if value.len() <= max || value.chars().take(max + 1).count() <= max {
        return Ok(());
    }
    Err(format!(
        "`{name}` is {} characters long; the limit is {max} characters",
        value.chars().count()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_checked_with_one_message() {
        assert_eq!(check_count("k", 50, MAX_RESULTS), Ok(50));
        assert_eq!(
            check_count("k", 51, MAX_RESULTS).unwrap_err(),
            "`k` must be a whole number from 1 to 50, not 51"
        );
        assert!(check_count("k", 0, MAX_RESULTS).is_err());
        let limits = context_limits(Some(12), None, None, None, None).unwrap();
        assert_eq!((limits.notes, limits.candidate_notes), (12, 12));
        assert_eq!(
            context_limits(Some(13), None, None, None, None).unwrap_err(),
            "`notes` must be a whole number from 1 to 12, not 13"
        );
    }

    #[test]
    fn lengths_are_counted_in_characters_and_never_quoted() {
        assert!(check_length("q", &"é".repeat(1_000), 1_000).is_ok());
        let message = check_length("q", &"é".repeat(1_001), 1_000).unwrap_err();
        assert_eq!(
            message,
            "`q` is 1001 characters long; the limit is 1000 characters"
        );
        assert!(!message.contains('é'));
    }
}
