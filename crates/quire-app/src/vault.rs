//! The vault model as the faces show it, named here so that a face depends on `quire-app`
//! alone: the parsed vault and its notes, chunks, outlines and links, the reasoning index
//! (tree, manifest, export), PDF pages and the worker process that reads PDFs, and `atomic`, the
//! one way quire reads a file safely or replaces one (for the files a face writes outside the
//! vault, as an AI client's configuration). All of it is `quire_vault`'s, pure or confined I/O;
//! nothing here writes into the vault (that is [`crate::proposals`]).

pub use quire_vault::chunk::MAX_CHUNKS_PER_NOTE;
pub use quire_vault::document::{AttachmentRead, read_attachments, read_document};
pub use quire_vault::links::{Resolution, UnresolvedLink, describe_link};
pub use quire_vault::outline::select_lines;
pub use quire_vault::vault::check_confined;
pub use quire_vault::{
    Chunk, LinkKind, OpenOptions, Outline, OutlineNode, Skipped, Vault, VaultError, VaultSettings,
};
pub use quire_vault::{atomic, pdf, reasoning};
