//! The SentencePiece-unigram tokenizer of multilingual-e5-small, driven by the tables in the model
//! file: per-codepoint normalization, space collapsing, the `▁` metaspace, then Viterbi over the
//! pieces. Written here rather than with the `tokenizers` crate because the model file carries its
//! own normalization table and the reference engine's rules (one `<unk>` per unknown character,
//! no special-token splitting) differ from that crate's Unigram model; with this, our token ids
//! equal the reference engine's exactly (see the tests and `docs/e5s1-format.md` §2).
//!
//! The vocabulary is looked up in an open-addressing table of piece ids over the pieces' one
//! string, hashed with FNV-1a: building it for 250,000 pieces takes a few milliseconds (a
//! `HashMap<String, u32>` allocated a string per piece, a large part of a cold search), and
//! Viterbi extends one hash a character at a time instead of hashing every candidate afresh.

use std::collections::HashMap;

use crate::e5s1::TokenizerTables;

const METASPACE: char = '\u{2581}';

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv_extend(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(FNV_PRIME);
    }
    h
}

/// Piece text → id: the pieces' string, their offsets, and slots holding `id + 1` (0 = empty).
struct Vocabulary {
    blob: String,
    offsets: Vec<u32>,
    slots: Vec<u32>,
    mask: usize,
}

impl Vocabulary {
    fn new(blob: String, offsets: Vec<u32>) -> Vocabulary {
        let pieces = offsets.len().saturating_sub(1);
        let size = (pieces * 2).next_power_of_two().max(16);
        let mut v = Vocabulary {
            blob,
            offsets,
            slots: vec![0; size],
            mask: size - 1,
        };
        for id in 0..pieces {
            let h = fnv_extend(FNV_OFFSET, v.piece(id as u32).as_bytes());
            let mut at = h as usize & v.mask;
            // A repeated piece keeps its last id, as a map filled in order would.
            while v.slots[at] != 0 && v.piece(v.slots[at] - 1) != v.piece(id as u32) {
                at = (at + 1) & v.mask;
            }
            v.slots[at] = id as u32 + 1;
        }
        v
    }

    fn piece(&self, id: u32) -> &str {
        let i = id as usize;
        &self.blob[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The id of `text`, whose FNV-1a hash is `h`.
    fn get(&self, text: &str, h: u64) -> Option<u32> {
        let mut at = h as usize & self.mask;
        loop {
            let slot = self.slots[at];
            if slot == 0 {
                return None;
            }
            if self.piece(slot - 1) == text {
                return Some(slot - 1);
            }
            at = (at + 1) & self.mask;
        }
    }
}

/// Text → token ids.
pub struct Tokenizer {
    vocabulary: Vocabulary,
    scores: Vec<f32>,
    normalization: HashMap<u32, Vec<char>>,
    max_piece_bytes: usize,
    unk_score: f32,
    /// Id of the start-of-text token, put before each window.
    pub bos: u32,
    /// Id of the end-of-text token, put after each window.
    pub eos: u32,
    /// Id of the unknown-text token: one per character no piece covers.
    pub unk: u32,
}

impl Tokenizer {
    /// A tokenizer over the tables of a model file.
    pub fn new(tables: TokenizerTables) -> Tokenizer {
        let max_piece_bytes = tables
            .offsets
            .windows(2)
            .map(|w| (w[1] - w[0]) as usize)
            .max()
            .unwrap_or(1);
        let min_score = tables.scores.iter().copied().fold(f32::INFINITY, f32::min);
        Tokenizer {
            vocabulary: Vocabulary::new(tables.blob, tables.offsets),
            scores: tables.scores,
            normalization: tables.normalization,
            max_piece_bytes,
            unk_score: if min_score.is_finite() {
                min_score - 10.0
            } else {
                -30.0
            },
            bos: tables.bos,
            eos: tables.eos,
            unk: tables.unk,
        }
    }

    /// Normalizes, collapses spaces and applies the metaspace: the string Viterbi runs over.
    fn prepare(&self, text: &str) -> Vec<char> {
        let mut chars: Vec<char> = Vec::with_capacity(text.len() + 1);
        for c in text.chars() {
            match self.normalization.get(&(c as u32)) {
                Some(out) => {
                    for &o in out {
                        if !(o == ' ' && chars.last() == Some(&' ')) {
                            chars.push(o);
                        }
                    }
                }
                None => {
                    if !(c == ' ' && chars.last() == Some(&' ')) {
                        chars.push(c);
                    }
                }
            }
        }
        if chars.first() != Some(&' ') {
            chars.insert(0, ' ');
        }
        for c in &mut chars {
            if *c == ' ' {
                *c = METASPACE;
            }
        }
        chars
    }

    /// The content token ids of `text` (no `<s>`/`</s>`).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let chars = self.prepare(text);
        let n = chars.len();
        // byte offsets of each char boundary in the prepared string
        let s: String = chars.iter().collect();
        let bytes = s.as_bytes();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut at = 0;
        for c in &chars {
            offsets.push(at);
            at += c.len_utf8();
        }
        offsets.push(at);
        let mut best = vec![f32::NEG_INFINITY; n + 1];
        // (start position, piece id) of the best path ending at each position
        let mut back: Vec<(usize, u32)> = vec![(0, 0); n + 1];
        best[0] = 0.0;
        for i in 0..n {
            if best[i] == f32::NEG_INFINITY {
                continue;
            }
            let mut e = i + 1;
            let mut h = FNV_OFFSET;
            while e <= n && offsets[e] - offsets[i] <= self.max_piece_bytes {
                h = fnv_extend(h, &bytes[offsets[e - 1]..offsets[e]]);
                if let Some(id) = self.vocabulary.get(&s[offsets[i]..offsets[e]], h)
                    && id != self.unk
                {
                    let score = best[i] + self.scores[id as usize];
                    if score > best[e] {
                        best[e] = score;
                        back[e] = (i, id);
                    }
                }
                e += 1;
            }
            let score = best[i] + self.unk_score;
            if score > best[i + 1] {
                best[i + 1] = score;
                back[i + 1] = (i, self.unk);
            }
        }
        let mut ids = Vec::new();
        let mut at = n;
        while at > 0 {
            let (start, id) = back[at];
            ids.push(id);
            at = start;
        }
        ids.reverse();
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(pieces: &[&str], scores: &[f32]) -> TokenizerTables {
        let mut offsets = vec![0u32];
        let mut blob = String::new();
        for p in pieces {
            blob.push_str(p);
            offsets.push(blob.len() as u32);
        }
        TokenizerTables {
            blob,
            offsets,
            scores: scores.to_vec(),
            bos: 0,
            eos: 1,
            pad: 2,
            unk: 3,
            normalization: HashMap::new(),
        }
    }

    #[test]
    fn viterbi_takes_the_best_scoring_split_and_one_unk_per_unknown_character() {
        let t = Tokenizer::new(tables(
            &["<s>", "</s>", "<pad>", "<unk>", "▁ab", "▁a", "b", "c", "▁"],
            &[0.0, 0.0, 0.0, 0.0, -1.0, -2.0, -2.0, -5.0, -3.0],
        ));
        assert_eq!(t.encode("ab"), vec![4]);
        assert_eq!(t.encode("abc"), vec![4, 7]);
        // x and y are no piece: an unknown each, not one for both.
        assert_eq!(t.encode("ab xy"), vec![4, 8, 3, 3]);
    }
}
