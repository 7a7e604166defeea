//! The two fast paths of the 4-bit e5 model against its f32 path, on passages long enough for
//! the AMX tiles (64 tokens and more, several packed in one batch, lengths that leave partial
//! tiles): vectors within rounding of the f32 ones, and a passage's vector the same whether it
//! is embedded alone or in a batch. Where the CPU has no AMX both runs take the VNNI path and the
//! test still compares it with f32. Its own test binary: [`quire_embed::set_amx`] switches the
//! whole process. Needs the model (`scripts/fetch-model.sh`, run by `scripts/test.sh` and CI).

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use quire_embed::{E5Model, Embedder, Precision, amx_active, default_e5_path, dot, set_amx};

/// Words of each passage: 70 to 700 (one longer than a 512-token window, none a multiple of
/// 32 tokens), and one of 41, under the 64 tokens from which the tiles are used.
const WORDS: [usize; 6] = [70, 133, 95, 260, 41, 700];

fn passages() -> Vec<String> {
    let words = [
        "the", "starter", "doubles", "in", "a", "warm", "kitchen", "after", "feeding", "with",
        "rye", "flour", "and", "water", "while", "interval", "runs", "build", "tempo", "notes",
        "link", "to", "each", "other", "across", "folders", "of", "vault",
    ];
    WORDS
        .iter()
        .enumerate()
        .map(|(p, &n)| {
            (0..n)
                .map(|i| words[(i * 7 + p * 3 + i / 5) % words.len()])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn embed(model: &E5Model, texts: &[&str]) -> Vec<Vec<f32>> {
    model.embed_passages(texts).unwrap()
}

#[test]
fn tile_and_vnni_paths_match_the_f32_path() {
    let path = default_e5_path();
    assert!(
        path.exists(),
        "model missing at {}: run scripts/fetch-model.sh",
        path.display()
    );
    let fast = E5Model::load(&path).unwrap();
    let exact = E5Model::load_with(&path, Precision::F32).unwrap();
    let texts = passages();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let reference = embed(&exact, &refs);

    let tiles_on = amx_active();
    let batched = embed(&fast, &refs);
    let alone: Vec<Vec<f32>> = refs.iter().map(|t| embed(&fast, &[t]).remove(0)).collect();
    set_amx(false);
    let vnni = embed(&fast, &refs);
    set_amx(true);

    for i in 0..refs.len() {
        let (b, a, v) = (
            dot(&batched[i], &reference[i]),
            dot(&alone[i], &reference[i]),
            dot(&vnni[i], &reference[i]),
        );
        eprintln!("passage {i}: tiles {tiles_on}: batched {b:.6}, alone {a:.6}, vnni {v:.6}");
        // bf16 products summed in f32 are closer to f32 than int8 blocks are.
        let floor = if tiles_on { 0.9999 } else { 0.9995 };
        assert!(b > floor && a > floor, "passage {i}: {b} {a}");
        assert!(v > 0.9995, "passage {i}: vnni {v}");
        // Alone or packed with others (other padding, other tile boundaries): the same vector;
        // a short passage alone takes the VNNI path, so only within its rounding.
        let same = if WORDS[i] >= 64 { 0.99999 } else { 0.9999 };
        assert!(dot(&batched[i], &alone[i]) > same, "passage {i}");
    }
    // The paths are distinct computations where tiles are on (not the same code twice).
    if tiles_on {
        assert!(batched.iter().zip(&vnni).any(|(a, b)| a != b));
    }
}
