//! One note of a real vault, for the local model's test and bench: "Evergreen notes turn ideas
//! into objects that you can manipulate", from the kepano-obsidian vault of the shared corpora
//! (`$QUIRE_CORPORA`, else `../shared/corpora` beside the repository). It has YAML frontmatter,
//! wikilinks, a quote and an emoji tag.

use std::path::PathBuf;

/// The note's path inside the vault, as a source block names it.
pub const EVERGREEN_NOTE: &str =
    "Notes/Evergreen notes turn ideas into objects that you can manipulate.md";

/// The note's text; panics with the path it tried when the corpora are missing.
pub fn evergreen_note_text() -> String {
    let corpora = std::env::var_os("QUIRE_CORPORA").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora"),
        PathBuf::from,
    );
    let path = corpora
        .join("vaults/kepano-obsidian/vault")
        .join(EVERGREEN_NOTE);
    std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!(
            "cannot read {} ({error}); the shared corpora belong beside the repository, or \
             set QUIRE_CORPORA",
            path.display()
        )
    })
}
