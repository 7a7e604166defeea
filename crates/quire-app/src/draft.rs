//! The draft flow, once for every face: the note's section is read (its hash kept, so an
//! insert later writes only over the bytes it was made from), and the passages of the other
//! notes that fit it are retrieved and frozen before the model is called.

use quire_assist::FrozenContext;
use quire_assist::context::{self, ContextLimits, RetrievalRequest, SourceReader};
use quire_assist::draft::DraftTarget;
use quire_search::{AnswerIndex, Mode};

use crate::error::AppError;

/// Writes the draft from its frozen material (streamed to the face's sink); the same call for
/// every face.
pub use quire_assist::draft::write_draft;

/// Reads the section `heading` of note `path` (vault-relative) and retrieves its material from
/// the index `searcher` reads, the note itself excluded. `mode` `None` is the index's default.
pub fn draft_context(
    searcher: &dyn AnswerIndex,
    reader: &SourceReader,
    path: &str,
    heading: &str,
    mode: Option<Mode>,
    limits: ContextLimits,
) -> Result<(DraftTarget, FrozenContext), AppError> {
    let target = DraftTarget::read(reader, path, heading)?;
    let mut request = RetrievalRequest::new(target.query(), limits);
    request.mode = match mode {
        Some(mode) => mode,
        None => searcher.default_mode()?,
    };
    request.exclude = vec![path.to_string()];
    let retrieval = context::retrieve(searcher, &request)?;
    let frozen = context::materialize(reader, retrieval, &limits);
    Ok((target, frozen))
}
