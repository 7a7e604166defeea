//! Embeddings in the sync: only new chunk texts reach the model, looked up by (space, content
//! hash), and an index never mixes two embedding spaces. Uses the real local model
//! (`scripts/fetch-model.sh`).

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::fs;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use quire_embed::{E5Model, EmbedError, Embedder, EmbeddingSpace, default_e5_path};
use quire_index::{IndexLocation, Store, SyncOptions, sync};

fn model() -> Arc<dyn Embedder> {
    static MODEL: OnceLock<Arc<E5Model>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let path = default_e5_path();
            assert!(
                path.exists(),
                "model missing at {}: run scripts/fetch-model.sh",
                path.display()
            );
            Arc::new(E5Model::load(&path).unwrap())
        })
        .clone()
}

fn write_vault(dir: &Path) {
    fs::create_dir_all(dir.join("Notes")).unwrap();
    fs::write(
        dir.join("Notes/Bread.md"),
        "# Bread\n\nFlour, water, salt and time.\n\n## Starter\nFeed it daily.\n",
    )
    .unwrap();
    fs::write(
        dir.join("Notes/Tea.md"),
        "# Tea\n\nOolong at 90 °C for a minute.\n\n## Green\nLower, around 80 °C.\n",
    )
    .unwrap();
    fs::write(dir.join("Run.md"), "# Running\n\nTempo on Saturday.\n").unwrap();
}

fn options(embedder: Arc<dyn Embedder>, rebuild: bool) -> SyncOptions {
    SyncOptions {
        embedder: Some(embedder),
        rebuild,
        ..Default::default()
    }
}

#[test]
fn only_new_chunk_texts_are_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("v");
    write_vault(&vault);
    let index = IndexLocation::new(dir.path().join("i"));
    let first = sync(&vault, &index, &options(model(), false), &()).unwrap();
    assert_eq!(first.chunks_total, 5);
    assert_eq!((first.chunks_embedded, first.chunks_reused), (5, 0));

    // One paragraph edited: one chunk text is new.
    fs::write(
        vault.join("Notes/Tea.md"),
        "# Tea\n\nOolong at 95 °C for a minute.\n\n## Green\nLower, around 80 °C.\n",
    )
    .unwrap();
    let edited = sync(&vault, &index, &options(model(), false), &()).unwrap();
    assert_eq!(
        (
            edited.notes_indexed,
            edited.chunks_embedded,
            edited.chunks_reused
        ),
        (1, 1, 1)
    );

    // A rename changes no chunk text: nothing is embedded.
    fs::rename(vault.join("Run.md"), vault.join("Notes/Run.md")).unwrap();
    let renamed = sync(&vault, &index, &options(model(), false), &()).unwrap();
    assert_eq!(
        (
            renamed.notes_indexed,
            renamed.notes_deleted,
            renamed.chunks_embedded
        ),
        (1, 1, 0)
    );

    fs::remove_file(vault.join("Notes/Bread.md")).unwrap();
    let deleted = sync(&vault, &index, &options(model(), false), &()).unwrap();
    assert_eq!((deleted.notes_deleted, deleted.chunks_embedded), (1, 0));

    // Every remaining chunk has a unit vector of the model's dimension.
    let store = Store::open(&index.store_path()).unwrap();
    let (keys, matrix) = store.vectors(&model().space().id(), 384).unwrap();
    assert_eq!(keys.len() as u64, deleted.chunks_total);
    for row in matrix.chunks_exact(384) {
        let norm: f32 = row.iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-3);
    }
}

/// A deterministic stand-in of another embedding space (for the mismatch rule only).
struct OtherSpace;

impl Embedder for OtherSpace {
    fn space(&self) -> EmbeddingSpace {
        EmbeddingSpace {
            provider: "test".into(),
            model: "letter-counts".into(),
            dimension: 3,
            query_prefix: String::new(),
            passage_prefix: String::new(),
        }
    }
    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.embed_query(t).unwrap()).collect())
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let v = [
            text.len() as f32,
            text.matches('a').count() as f32 + 1.0,
            1.0,
        ];
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        Ok(v.iter().map(|x| x / n).collect())
    }
}

#[test]
fn another_embedding_space_is_embedded_again_and_the_old_vectors_stay_cached() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("v");
    write_vault(&vault);
    let index = IndexLocation::new(dir.path().join("i"));
    let first = sync(&vault, &index, &options(Arc::new(OtherSpace), false), &()).unwrap();
    assert_eq!(first.model_changed_from, None);
    // Another model: every chunk is embedded again in its space, without a rebuild.
    let switched = sync(&vault, &index, &options(model(), false), &()).unwrap();
    assert_eq!(
        switched.model_changed_from.as_deref(),
        Some("letter-counts")
    );
    assert_eq!(switched.chunks_embedded, 5);
    assert_eq!(
        switched.notes_indexed, 0,
        "the notes themselves are not read again"
    );
    let store = Store::open(&index.store_path()).unwrap();
    assert_eq!(
        store.count(quire_index::store::Table::Embeddings).unwrap(),
        10,
        "old vectors stay cached"
    );
    drop(store);
    // The same model again: nothing to do. Back to the first: nothing embedded either.
    let again = sync(&vault, &index, &options(model(), false), &()).unwrap();
    assert_eq!((again.model_changed_from, again.chunks_embedded), (None, 0));
    let back = sync(&vault, &index, &options(Arc::new(OtherSpace), false), &()).unwrap();
    assert!(back.model_changed_from.is_some());
    assert_eq!(back.chunks_embedded, 0, "switching back embeds nothing");
}
