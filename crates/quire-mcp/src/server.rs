//! The MCP handler: `tools/list` and `tools/call` over [`crate::tools`], and each note as a
//! resource `quire://note/{path}`.

use std::sync::Arc;

use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::tools;
use quire_app::AppError;
use quire_app::args::ProposeNoteChangeArgs;
use quire_app::bounds::{clip, text_within};
use quire_app::limits::{
    MAX_ARGUMENT_NAME_CHARS, MAX_ERROR_CHARS, MAX_NOTE_TEXT_BYTES, MAX_PATH_CHARS,
    MAX_RESULT_BYTES, check_length,
};
use quire_app::live::{Live, VAULT_WAIT};
use quire_app::proposals::PROPOSE_TOOL;
use quire_app::resolve::{read_current, resolve_note_path};

/// The scheme and prefix of note resources.
pub(crate) const NOTE_URI_PREFIX: &str = "quire://note/";
/// Resources per `resources/list` page.
const RESOURCES_PER_PAGE: usize = 500;

/// Characters escaped in a path segment of a note URI (`/` separates segments and stays).
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// `quire://note/…` for a vault-relative note path.
pub(crate) fn note_uri(path: &str) -> String {
    let segments: Vec<String> = path
        .split('/')
        .map(|s| utf8_percent_encode(s, SEGMENT).to_string())
        .collect();
    format!("{NOTE_URI_PREFIX}{}", segments.join("/"))
}

/// The MCP server over one vault. Cheap to clone: HTTP sessions each get a clone.
#[derive(Clone)]
pub struct QuireServer {
    live: Arc<Live>,
    allow_proposals: bool,
}

impl QuireServer {
    /// A read-only server answering from `live`, the vault's running state.
    pub fn new(live: Arc<Live>) -> Self {
        QuireServer {
            live,
            allow_proposals: false,
        }
    }

    /// With `allow`, the server also lists `propose_note_change` (it makes proposals; it never
    /// applies them).
    pub fn allow_proposals(mut self, allow: bool) -> Self {
        self.allow_proposals = allow;
        self
    }

    fn read_note_resource(&self, uri: &str) -> Result<ReadResourceResult, AppError> {
        // A URI is the prefix and a path, percent-encoded: a character of the path takes at
        // most 12 (4 bytes of UTF-8, `%XX` each).
        check_length("uri", uri, NOTE_URI_PREFIX.len() + 12 * MAX_PATH_CHARS)
            .map_err(|message| AppError::bad_arguments("resources/read", message))?;
        let encoded = uri
            .strip_prefix(NOTE_URI_PREFIX)
            .ok_or_else(|| unknown_resource(uri))?;
        let path = percent_decode_str(encoded)
            .decode_utf8()
            .map_err(|_| unknown_resource(uri))?;
        check_length("path", &path, MAX_PATH_CHARS)
            .map_err(|message| AppError::bad_arguments("resources/read", message))?;
        let path = resolve_note_path(&self.live, &path)?;
        let note = read_current(&self.live, &path)?;
        // A resource has no ranges: a long note is cut at a line break like get_note's text,
        // and a last line says how to read the rest.
        let piece = text_within(&note, 1, note.line_count, 0, MAX_NOTE_TEXT_BYTES)
            .map_err(AppError::Internal)?;
        let text = match piece.rest {
            None => note.source,
            Some((line, into)) => {
                let offset = if into > 0 {
                    format!(", offset={into}")
                } else {
                    String::new()
                };
                format!(
                    "{}\n\n[quire: the note is cut here to stay under {MAX_NOTE_TEXT_BYTES} bytes; read the rest with get_note(path=\"{}\", lines=\"{line}-{}\"{offset})]\n",
                    &note.source[piece.range], note.path, note.line_count
                )
            }
        };
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type("text/markdown"),
        ]))
    }

    fn note_resources(&self, cursor: Option<&str>) -> Result<ListResourcesResult, AppError> {
        let offset: usize = match cursor {
            Some(c) => c
                .parse()
                .map_err(|_| AppError::bad_arguments("resources/list", "bad cursor"))?,
            None => 0,
        };
        let snapshot = self.live.vault(VAULT_WAIT)?;
        let notes = &snapshot.vault.notes;
        // A page ends at RESOURCES_PER_PAGE or when it would outgrow a result's budget.
        let mut used = 0;
        let resources: Vec<Resource> = notes
            .iter()
            .skip(offset)
            .take(RESOURCES_PER_PAGE)
            .map(|n| {
                Resource::new(note_uri(&n.path), n.path.clone())
                    .with_title(clip(&n.title, quire_app::limits::MAX_FIELD_CHARS))
                    .with_mime_type("text/markdown")
                    .with_size(n.source.len() as u64)
            })
            .take_while(|r| {
                used += serde_json::to_string(r).map_or(0, |s| s.len()) + 1;
                used <= MAX_RESULT_BYTES
            })
            .collect();
        let next = offset + resources.len().max(1);
        let mut result = ListResourcesResult::with_all_items(resources);
        if next < notes.len() {
            result.next_cursor = Some(next.to_string());
        }
        Ok(result)
    }
}

/// `propose_note_change`: a pending proposal, with what the user does next.
fn propose(
    live: &Live,
    arguments: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<serde_json::Value, AppError> {
    let args: ProposeNoteChangeArgs = quire_app::args::parse(PROPOSE_TOOL, arguments)?;
    let store = quire_app::proposals::open_store(&live.root, &live.index)?;
    let proposal = quire_app::proposals::propose_note_change(&store, &args, "an MCP client")?;
    let diff = proposal.diff();
    let value = serde_json::json!({
        "id": proposal.id,
        "title": proposal.title,
        "status": proposal.status,
        "files": proposal.changes.iter().map(|c| c.target()).collect::<Vec<_>>(),
        "diff": diff,
        "next": format!(
            "Nothing was written. The user reviews this proposal with `quire proposals show {id}` and applies it with `quire proposals apply {id}` (or rejects it).",
            id = proposal.id
        ),
    });
    Ok(quire_app::fit_result(value, MAX_RESULT_BYTES))
}

/// What a client reads of an error: its message, never longer than [`MAX_ERROR_CHARS`] (a
/// message may name a path or a heading the client sent).
/// A resource URI that names no note resource (the URI as given).
fn unknown_resource(uri: &str) -> AppError {
    AppError::NotFound(format!(
        "unknown resource `{uri}`: note resources look like {NOTE_URI_PREFIX}Folder/Note.md"
    ))
}

fn error_text(error: &AppError) -> String {
    clip(&error.to_string(), MAX_ERROR_CHARS)
}

/// Runs blocking work off the async runtime; a panic inside is an error, never a crash.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, AppError> + Send + 'static,
) -> Result<T, AppError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(AppError::Internal(e.to_string())))
}

impl ServerHandler for QuireServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(
            Implementation::new("quire", env!("CARGO_PKG_VERSION"))
                .with_title("quire (read-only vault)"),
        )
        .with_instructions(if self.allow_proposals {
            format!("{}{}", tools::INSTRUCTIONS, tools::PROPOSAL_INSTRUCTIONS)
        } else {
            tools::INSTRUCTIONS.to_string()
        })
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::definitions(
            self.allow_proposals,
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let proposing = self.allow_proposals && name == PROPOSE_TOOL;
        if !tools::is_tool(&name) && !proposing {
            // An unknown tool is a protocol error (the spec's -32602); everything else is a
            // tool result the agent can read. A long name is not echoed.
            let message = match check_length("name", &name, MAX_ARGUMENT_NAME_CHARS) {
                Ok(()) => format!("unknown tool `{name}`"),
                Err(too_long) => format!("unknown tool: {too_long}"),
            };
            return Err(ErrorData::invalid_params(message, None));
        }
        let live = Arc::clone(&self.live);
        let arguments = request.arguments;
        let work = move || {
            if proposing {
                propose(&live, arguments)
            } else {
                tools::call(&live, &name, arguments)
            }
        };
        let result = match blocking(work).await {
            Ok(value) => CallToolResult::structured(value),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(error_text(&e))]),
        };
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let server = self.clone();
        let cursor = request.and_then(|r| r.cursor);
        blocking(move || server.note_resources(cursor.as_deref()))
            .await
            .map_err(|e| ErrorData::invalid_params(error_text(&e), None))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(format!("{NOTE_URI_PREFIX}{{path}}"), "note")
                .with_title("A note of the vault")
                .with_description(
                    "The current Markdown text of the note at a vault-relative path, e.g. quire://note/Projects/Plan.md",
                )
                .with_mime_type("text/markdown"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let server = self.clone();
        let uri = request.uri;
        blocking(move || server.read_note_resource(&uri))
            .await
            .map(ReadResourceResponse::from)
            .map_err(|e| ErrorData::resource_not_found(error_text(&e), None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn note_uris_escape_each_segment() {
        assert_eq!(
            note_uri("Projects/Top Secret/Plan #2.md"),
            "quire://note/Projects/Top%20Secret/Plan%20%232.md"
        );
        let decoded = percent_decode_str(
            note_uri("Ünïcode/a%b.md")
                .strip_prefix(NOTE_URI_PREFIX)
                .unwrap_or_default(),
        )
        .decode_utf8()
        .map(|c| c.into_owned());
        assert_eq!(decoded.ok().as_deref(), Some("Ünïcode/a%b.md"));
    }
}
