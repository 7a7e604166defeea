//! The SentencePiece-unigram tokenizer of multilingual-e5-small, driven by the tables in the model
//! file: per-codepoint normalization, space collapsing, the `▁` metaspace, then Viterbi over the
//! pieces. Written here rather than with the `tokenizers` crate because the model file carries its
//! own normalization table and the reference engine's rules (one `<unk>` per unknown character,
//! no special-token splitting) differ from that crate's Unigram model; with this, our token ids
//! equal the reference engine's exactly (see the tests and `docs/e5s1-format.md` §2).

use std::collections::HashMap;

use crate::e5s1::TokenizerTables;

const METASPACE: char = '\u{2581}';

/// Text → token ids.
pub struct Tokenizer {
    ids: HashMap<String, u32>,
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
        let max_piece_bytes = tables.pieces.iter().map(|p| p.len()).max().unwrap_or(1);
        let min_score = tables.scores.iter().copied().fold(f32::INFINITY, f32::min);
        let ids = tables
            .pieces
            .into_iter()
            .enumerate()
            .map(|(i, p)| (p, i as u32))
            .collect();
        Tokenizer {
            ids,
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
            while e <= n && offsets[e] - offsets[i] <= self.max_piece_bytes {
                if let Some(&id) = self.ids.get(&s[offsets[i]..offsets[e]])
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
