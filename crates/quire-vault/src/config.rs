//! The vault's own settings: `.quire/config.toml` inside the vault. Every key is optional and
//! defaults to something that works offline.
//!
//! ```toml
//! [vault]
//! include = []                    # globs; empty = every note
//! exclude = ["Templates/**"]      # globs of notes to skip
//! max_file_mb = 5.0               # larger notes are skipped and reported
//!
//! [manifest]
//! properties = ["type", "status", "tags", "aliases", "created", "updated", "date"]
//!
//! [chunk]
//! target_tokens = 256
//! max_tokens = 448
//!
//! [embedding]
//! model = "gemma"                 # or "e5-small", or the path of a model file or folder
//! ```

use std::path::Path;

use serde::Deserialize;

use crate::error::VaultError;

/// The contents of `.quire/config.toml`; a missing file or table gives the defaults.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct VaultConfig {
    /// `[vault]`: which notes are read.
    pub vault: VaultSection,
    /// `[manifest]`: what the reasoning index's manifest shows.
    pub manifest: ManifestSection,
    /// `[chunk]`: chunk sizes.
    pub chunk: ChunkSection,
    /// `[embedding]`: which embedding model.
    pub embedding: EmbeddingSection,
}

/// The `[embedding]` table.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddingSection {
    /// `gemma`, `e5-small`, or the path of a model file or folder; `None`: the default model. A
    /// `--model` flag overrides it.
    pub model: Option<String>,
}

/// The `[vault]` table.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct VaultSection {
    /// Globs (vault-relative); when any is set, only notes matching one are read. Flags add to them.
    pub include: Vec<String>,
    /// Globs of notes to skip (a folder's pattern covers everything below it). Flags add to them.
    pub exclude: Vec<String>,
    /// Notes larger than this many MiB are skipped and reported; `None`: 5 MiB. A flag overrides it.
    pub max_file_mb: Option<f64>,
}

/// The `[manifest]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ManifestSection {
    /// Frontmatter keys copied into the manifest.
    pub properties: Vec<String>,
}

impl Default for ManifestSection {
    fn default() -> Self {
        ManifestSection {
            properties: [
                "type", "status", "tags", "aliases", "created", "updated", "modified", "date",
                "due",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
}

/// The `[chunk]` table.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct ChunkSection {
    /// Neighbouring pieces merge while a chunk stays at or under this many tokens (capped at
    /// `max_tokens`); `None`: 256.
    pub target_tokens: Option<usize>,
    /// The largest chunk, in tokens (at least 16); `None`: 448.
    pub max_tokens: Option<usize>,
}

/// The config file's place in a vault.
pub const CONFIG_PATH: &str = ".quire/config.toml";

impl VaultConfig {
    /// Reads `.quire/config.toml` under `root`; a missing file gives the defaults, a broken one an
    /// error naming the file and the problem.
    pub fn load(root: &Path) -> Result<VaultConfig, VaultError> {
        let path = root.join(CONFIG_PATH);
        match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str(&text).map_err(|e| VaultError::Config {
                path,
                message: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(VaultConfig::default()),
            Err(e) => Err(VaultError::Config {
                path,
                message: e.to_string(),
            }),
        }
    }
}
