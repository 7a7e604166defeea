//! Which models a session runs with, chosen once for every face: the embedding model (an
//! OpenAI-compatible endpoint when `QUIRE_EMBED_BASE_URL` is set, else `--model`, else the
//! vault's `[embedding] model`, else the default file) and the chat model (a configured provider,
//! else, in a build with the `local-llm` feature, the local GGUF model once fetched).
//!
//! A missing default embedding model is not an error: quire then works with BM25 alone, and
//! [`LoadedEmbedder::note`] says so for the face to show. A model the user named and that is
//! missing or broken is an error.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use quire_embed::Embedder;
use quire_llm::{ChatModel, OpenAiCompatible, ProviderConfig};

/// Why a model could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The embeddings endpoint (`QUIRE_EMBED_BASE_URL`) did not answer as one.
    #[error("cannot reach the embeddings endpoint {url}: {source}")]
    Endpoint {
        /// The endpoint's base URL.
        url: String,
        /// What the client said.
        #[source]
        source: quire_embed::EmbedError,
    },
    /// The model the user named (`--model`, `[embedding] model`) is not there.
    #[error("no model file at {}", .0.display())]
    Missing(PathBuf),
    /// The model file is there and could not be loaded.
    #[error("cannot load the model {}: {source}", path.display())]
    Load {
        /// The model's file or folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: quire_embed::EmbedError,
    },
    /// The chat provider's settings, or the local model, could not be used.
    #[error(transparent)]
    Chat(#[from] quire_llm::LlmError),
    /// The local chat model could not be loaded.
    #[error("loading the local model {}: {source}", path.display())]
    LocalChat {
        /// The GGUF file.
        path: PathBuf,
        /// Why.
        #[source]
        source: quire_llm::LlmError,
    },
}

/// What the face was asked for: `--no-embeddings`, `--model`, and the vault whose configuration
/// may name a model.
#[derive(Debug, Clone, Copy, Default)]
pub struct EmbedderChoice<'a> {
    /// Load no model (BM25 only).
    pub disabled: bool,
    /// A model named by the user: `gemma`, `e5-small`, a file or a model folder.
    pub model: Option<&'a str>,
    /// The vault, whose `[embedding] model` is read when `model` is `None`.
    pub vault_root: Option<&'a Path>,
}

/// The embedding model a session got, and what to tell the user when it got none.
pub struct LoadedEmbedder {
    /// `None`: BM25 only.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// Why there is none although none was refused (the default model is not fetched).
    pub note: Option<String>,
}

/// Loads the embedding model `choice` names (see the module's doc).
pub fn load_embedder(choice: &EmbedderChoice<'_>) -> Result<LoadedEmbedder, ModelError> {
    if choice.disabled {
        return Ok(LoadedEmbedder {
            embedder: None,
            note: None,
        });
    }
    if let Some(config) = quire_embed::RemoteConfig::from_env() {
        let url = config.base_url.clone();
        let remote = quire_embed::RemoteEmbedder::connect(config)
            .map_err(|source| ModelError::Endpoint { url, source })?;
        return Ok(LoadedEmbedder {
            embedder: Some(Arc::new(remote)),
            note: None,
        });
    }
    let (path, chosen) = model_path(choice);
    if !path.exists() {
        if chosen {
            return Err(ModelError::Missing(path));
        }
        return Ok(LoadedEmbedder {
            embedder: None,
            note: Some(format!(
                "no embedding model at {} (run scripts/fetch-model.sh): using BM25 only",
                path.display()
            )),
        });
    }
    let model = quire_embed::load_local(&path).map_err(|source| ModelError::Load {
        path: path.clone(),
        source,
    })?;
    Ok(LoadedEmbedder {
        embedder: Some(Arc::from(model)),
        note: None,
    })
}

/// The local embedding model's path: the user's choice, else the vault's `[embedding] model`,
/// else the default (`$QUIRE_MODEL` or the fetched file); and whether the user named one.
pub fn model_path(choice: &EmbedderChoice<'_>) -> (PathBuf, bool) {
    if let Some(model) = choice.model {
        return (quire_embed::resolve_model(model), true);
    }
    let configured = choice
        .vault_root
        .and_then(|root| quire_vault::config::VaultConfig::load(root).ok())
        .and_then(|c| c.embedding.model);
    match configured {
        Some(model) => (quire_embed::resolve_model(&model), true),
        None => (quire_embed::default_model_path(), false),
    }
}

/// The default embedding model's file (`$QUIRE_MODEL`, else the fetched EmbeddingGemma file).
pub fn default_model_path() -> PathBuf {
    quire_embed::default_model_path()
}

/// EmbeddingGemma with its weights rounded again to `bits` (8 is the file's own precision): a
/// measuring switch for `quire eval`, with its own embedding space so nothing mixes.
pub fn gemma_with_bits(bits: u32) -> Result<Arc<dyn Embedder>, ModelError> {
    let path = quire_embed::default_gemma_path();
    let model = quire_embed::GemmaModel::load_with_bits(&path, 768, bits)
        .map_err(|source| ModelError::Load { path, source })?;
    Ok(Arc::new(model))
}

/// Whether embeddings come from an OpenAI-compatible endpoint (`QUIRE_EMBED_BASE_URL`), and its
/// URL and model name.
pub fn remote_embeddings() -> Option<quire_embed::RemoteConfig> {
    quire_embed::RemoteConfig::from_env()
}

/// The chat model, or `None` to work offline (extractive answers): the configured provider
/// first; else, in a build with the `local-llm` feature, the local GGUF model once it has been
/// fetched (`scripts/fetch-llm.sh`), unless `QUIRE_LLM_LOCAL=0`.
pub fn chat_model() -> Result<Option<Box<dyn ChatModel>>, ModelError> {
    if let Some(p) = ProviderConfig::from_env()? {
        return Ok(Some(Box::new(OpenAiCompatible::new(p))));
    }
    local_model()
}

/// The local model file that [`chat_model`] would load, if any.
#[cfg(feature = "local-llm")]
pub fn local_model_path() -> Option<PathBuf> {
    if std::env::var("QUIRE_LLM_LOCAL").is_ok_and(|v| v.trim() == "0") {
        return None;
    }
    Some(quire_llm::default_local_model_path()).filter(|path| path.is_file())
}

/// The local model file that [`chat_model`] would load: none in a build without `local-llm`.
#[cfg(not(feature = "local-llm"))]
pub fn local_model_path() -> Option<PathBuf> {
    None
}

#[cfg(feature = "local-llm")]
fn local_model() -> Result<Option<Box<dyn ChatModel>>, ModelError> {
    let Some(path) = local_model_path() else {
        return Ok(None);
    };
    let options = quire_llm::LocalOptions::from_env()?;
    let model = quire_llm::LocalLlama::load(&path, options)
        .map_err(|source| ModelError::LocalChat { path, source })?;
    Ok(Some(Box::new(model)))
}

#[cfg(not(feature = "local-llm"))]
fn local_model() -> Result<Option<Box<dyn ChatModel>>, ModelError> {
    Ok(None)
}
