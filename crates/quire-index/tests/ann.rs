//! The approximate vector index over a store: recall against the exact scan on a fixed seed,
//! the build kept until the rows after it pass the limit, extended then, and removed when the
//! space falls under the threshold; a build of another store is never used.

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use quire_index::Store;
use quire_index::ann::{AnnBase, AnnRefresh, AnnSettings, ann_dir, refresh};
use quire_testkit::VectorRng;

const DIM: usize = 384;
const SPACE: &str = "test-space";

/// Clustered unit vectors (texts on a few hundred topics), as embeddings of real text are.
fn clustered(rng: &mut VectorRng, n: usize) -> Vec<Vec<f32>> {
    let centres: Vec<Vec<f32>> = (0..200).map(|_| rng.unit(DIM, None, 1.0)).collect();
    (0..n)
        .map(|i| rng.unit(DIM, Some(&centres[i % centres.len()]), 0.12))
        .collect()
}

fn put(store: &mut Store, from: usize, vectors: &[Vec<f32>]) {
    let rows: Vec<(String, Vec<f32>)> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| (format!("{:012x}{:052x}", from + i, 0), v.clone()))
        .collect();
    store.put_embeddings(SPACE, &rows).unwrap();
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn recall_at_10_against_the_exact_scan_is_at_least_095() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("quire.sqlite")).unwrap();
    let mut rng = VectorRng(0x5eed);
    let vectors = clustered(&mut rng, 20_000);
    put(&mut store, 0, &vectors);
    let settings = AnnSettings {
        min_rows: 1_000,
        max_delta: 100,
    };
    let built = refresh(dir.path(), &store, SPACE, DIM, &settings).unwrap();
    assert!(
        matches!(
            built,
            AnnRefresh::Built {
                rows: 20_000,
                added: 20_000,
                ..
            }
        ),
        "{built:?}"
    );
    let base = AnnBase::open(dir.path(), &store, SPACE, DIM)
        .unwrap()
        .unwrap();
    let (queries, mut found) = (200, 0);
    for q in 0..queries {
        let query = rng.unit(DIM, Some(&vectors[(q * 97) % vectors.len()]), 0.1);
        let mut exact: Vec<(usize, f32)> = vectors
            .iter()
            .enumerate()
            .map(|(i, v)| (i, dot(&query, v)))
            .collect();
        exact.sort_by(|a, b| b.1.total_cmp(&a.1));
        let truth: Vec<i64> = exact[..10].iter().map(|(i, _)| *i as i64 + 1).collect();
        // Candidates as a search takes them (40 for 10 wanted), rescored exactly.
        let mut got: Vec<(i64, f32)> = base
            .search(&query, 40, i64::MAX)
            .unwrap()
            .into_iter()
            .map(|(rowid, _)| (rowid, dot(&query, &vectors[rowid as usize - 1])))
            .collect();
        got.sort_by(|a, b| b.1.total_cmp(&a.1));
        found += got[..10].iter().filter(|(r, _)| truth.contains(r)).count();
    }
    let recall = found as f64 / (queries * 10) as f64;
    assert!(recall >= 0.95, "recall@10 {recall:.3}");
}

#[test]
fn a_build_is_kept_then_extended_and_removed_under_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("quire.sqlite")).unwrap();
    let mut rng = VectorRng(7);
    let settings = AnnSettings {
        min_rows: 500,
        max_delta: 50,
    };
    put(&mut store, 0, &clustered(&mut rng, 400));
    assert_eq!(
        refresh(dir.path(), &store, SPACE, DIM, &settings).unwrap(),
        AnnRefresh::Exact { rows: 400 }
    );
    assert!(
        AnnBase::open(dir.path(), &store, SPACE, DIM)
            .unwrap()
            .is_none()
    );

    put(&mut store, 400, &clustered(&mut rng, 200));
    let first = refresh(dir.path(), &store, SPACE, DIM, &settings).unwrap();
    assert!(
        matches!(
            first,
            AnnRefresh::Built {
                rows: 600,
                added: 600,
                ..
            }
        ),
        "{first:?}"
    );

    put(&mut store, 600, &clustered(&mut rng, 30));
    assert_eq!(
        refresh(dir.path(), &store, SPACE, DIM, &settings).unwrap(),
        AnnRefresh::Kept {
            rows: 600,
            delta: 30
        }
    );
    put(&mut store, 630, &clustered(&mut rng, 30));
    let second = refresh(dir.path(), &store, SPACE, DIM, &settings).unwrap();
    assert!(
        matches!(
            second,
            AnnRefresh::Built {
                rows: 660,
                added: 60,
                ..
            }
        ),
        "{second:?}"
    );
    let files: Vec<_> = std::fs::read_dir(ann_dir(dir.path())).unwrap().collect();
    assert_eq!(files.len(), 1, "the older build is removed");
    let base = AnnBase::open(dir.path(), &store, SPACE, DIM)
        .unwrap()
        .unwrap();
    assert_eq!((base.rows, base.last_rowid), (660, 660));

    // Another space's settings (a higher threshold) remove the build: searches scan exactly.
    let higher = AnnSettings {
        min_rows: 1_000,
        max_delta: 50,
    };
    assert_eq!(
        refresh(dir.path(), &store, SPACE, DIM, &higher).unwrap(),
        AnnRefresh::Exact { rows: 660 }
    );
    assert_eq!(std::fs::read_dir(ann_dir(dir.path())).unwrap().count(), 0);
}

#[test]
fn a_build_that_does_not_belong_to_the_store_is_never_opened() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = VectorRng(11);
    let settings = AnnSettings {
        min_rows: 10,
        max_delta: 0,
    };
    {
        let mut store = Store::open(&dir.path().join("quire.sqlite")).unwrap();
        put(&mut store, 0, &clustered(&mut rng, 100));
        refresh(dir.path(), &store, SPACE, DIM, &settings).unwrap();
    }
    // A new store in the same directory (the old one deleted by hand), with other texts.
    std::fs::remove_file(dir.path().join("quire.sqlite")).unwrap();
    let mut store = Store::open(&dir.path().join("quire.sqlite")).unwrap();
    put(&mut store, 5_000, &clustered(&mut rng, 100));
    assert!(
        AnnBase::open(dir.path(), &store, SPACE, DIM)
            .unwrap()
            .is_none()
    );
    // A torn file under a build's name is not opened either.
    let rebuilt = refresh(dir.path(), &store, SPACE, DIM, &settings).unwrap();
    assert!(
        matches!(rebuilt, AnnRefresh::Built { rows: 100, .. }),
        "{rebuilt:?}"
    );
    let file = std::fs::read_dir(ann_dir(dir.path()))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    assert!(
        AnnBase::open(dir.path(), &store, SPACE, DIM)
            .unwrap()
            .is_none()
    );
}
