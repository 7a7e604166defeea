//! EmbeddingGemma's tokenizer (Gemma 3's byte-fallback BPE, 262,144 pieces, 514,906 merges) read
//! straight from the tables of the mapped `QGEM1` file. Written by hand because the `tokenizers`
//! crate builds the same tokenizer from its 33 MB `tokenizer.json` in about 1.3 s and 500 MB,
//! which is the whole budget of a cold `quire search`; these tables need no parsing (merges are
//! binary-searched in place) and give the same ids (tested against `tokenizers` on every note of
//! the shared vaults and on XQuAD, `tests/gemma_reference.rs`).
//!
//! The algorithm, as `tokenizer.json` describes it:
//! 1. **Added tokens** (6,415: `<bos>`, `<unused…>`, runs of `\n`, `\t` and `▁`, …) are cut out of
//!    the raw text first, leftmost-longest.
//! 2. Each piece between them is **normalised** (every space becomes `▁`) and is one word: the
//!    pre-tokenizer's split on spaces finds none left.
//! 3. **BPE**: the word starts as its characters (a character with no piece of its own becomes
//!    its UTF-8 bytes' `<0x..>` pieces); then, repeatedly, the adjacent pair with the lowest
//!    merge rank (leftmost on ties) is replaced by its merged piece, until no pair merges.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// The tokenizer's tables: views into the mapped file (or owned, in tests).
pub(crate) struct GemmaTokenizer {
    /// `[left, right, rank, merged]` rows sorted by `(left, right)`.
    merges: Vec<[u32; 4]>,
    /// `(codepoint, id)` of the single-character pieces, sorted by codepoint.
    chars: Vec<(u32, u32)>,
    /// The `<0xNN>` piece of each byte.
    bytes: [u32; 256],
    /// Added tokens by their text.
    added: HashMap<String, u32>,
    /// The longest added token, in bytes.
    added_max: usize,
    /// Whether a byte starts some added token (a cheap test before the lookups).
    added_first: [bool; 256],
}

impl GemmaTokenizer {
    /// Builds the tokenizer from the file's little-endian u32 tables and its added tokens.
    pub fn new(
        merges: &[u8],
        chars: &[u8],
        bytes: &[u8],
        added: Vec<(String, u32)>,
    ) -> Result<GemmaTokenizer, crate::EmbedError> {
        let words = |b: &[u8]| -> Vec<u32> {
            b.chunks_exact(4)
                .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                .collect()
        };
        let m = words(merges);
        let c = words(chars);
        let b = words(bytes);
        if !m.len().is_multiple_of(4) || !c.len().is_multiple_of(2) || b.len() != 256 {
            return Err(crate::EmbedError::Format(
                "QGEM1 tokenizer tables have the wrong sizes".into(),
            ));
        }
        let merges: Vec<[u32; 4]> = m
            .chunks_exact(4)
            .map(|r| [r[0], r[1], r[2], r[3]])
            .collect();
        let chars: Vec<(u32, u32)> = c.chunks_exact(2).map(|r| (r[0], r[1])).collect();
        let sorted = merges
            .windows(2)
            .all(|w| (w[0][0], w[0][1]) < (w[1][0], w[1][1]))
            && chars.windows(2).all(|w| w[0].0 < w[1].0);
        if !sorted {
            return Err(crate::EmbedError::Format(
                "QGEM1 tokenizer tables are not sorted".into(),
            ));
        }
        let mut byte_ids = [0u32; 256];
        byte_ids.copy_from_slice(&b);
        let mut added_first = [false; 256];
        let mut added_max = 0;
        for (text, _) in &added {
            if let Some(&first) = text.as_bytes().first() {
                added_first[first as usize] = true;
            }
            added_max = added_max.max(text.len());
        }
        Ok(GemmaTokenizer {
            merges,
            chars,
            bytes: byte_ids,
            added: added.into_iter().filter(|(t, _)| !t.is_empty()).collect(),
            added_max,
            added_first,
        })
    }

    /// The ids of `text`, without `<bos>`/`<eos>`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::with_capacity(text.len() / 3 + 1);
        let mut start = 0;
        let mut i = 0;
        let raw = text.as_bytes();
        while i < raw.len() {
            if self.added_first[raw[i] as usize]
                && let Some((len, id)) = self.added_at(text, i)
            {
                self.encode_word(&text[start..i], &mut ids);
                ids.push(id);
                i += len;
                start = i;
                continue;
            }
            i += 1;
            while i < raw.len() && !text.is_char_boundary(i) {
                i += 1;
            }
        }
        self.encode_word(&text[start..], &mut ids);
        ids
    }

    /// The longest added token that starts at byte `at`: its length and id.
    fn added_at(&self, text: &str, at: usize) -> Option<(usize, u32)> {
        let rest = &text[at..];
        let longest = self.added_max.min(rest.len());
        (1..=longest)
            .rev()
            .filter(|&n| rest.is_char_boundary(n))
            .find_map(|n| self.added.get(&rest[..n]).map(|&id| (n, id)))
    }

    fn merge(&self, left: u32, right: u32) -> Option<(u32, u32)> {
        self.merges
            .binary_search_by(|row| (row[0], row[1]).cmp(&(left, right)))
            .ok()
            .map(|i| (self.merges[i][2], self.merges[i][3]))
    }

    /// BPE over one normalised word, appending its ids.
    fn encode_word(&self, word: &str, ids: &mut Vec<u32>) {
        if word.is_empty() {
            return;
        }
        let mut symbols: Vec<u32> = Vec::with_capacity(word.len());
        for ch in word.chars() {
            let ch = if ch == ' ' { '\u{2581}' } else { ch };
            match self.chars.binary_search_by_key(&(ch as u32), |&(c, _)| c) {
                Ok(i) => symbols.push(self.chars[i].1),
                Err(_) => {
                    let mut buf = [0u8; 4];
                    for b in ch.encode_utf8(&mut buf).bytes() {
                        symbols.push(self.bytes[b as usize]);
                    }
                }
            }
        }
        let n = symbols.len();
        // A doubly linked list over the symbols; a merged-away symbol is marked dead.
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut next: Vec<usize> = (1..=n).collect();
        let mut alive = vec![true; n];
        let mut queue = BinaryHeap::new();
        for i in 0..n.saturating_sub(1) {
            if let Some((rank, merged)) = self.merge(symbols[i], symbols[i + 1]) {
                queue.push(Reverse((rank, i, merged)));
            }
        }
        while let Some(Reverse((_, pos, merged))) = queue.pop() {
            if !alive[pos] || next[pos] >= n {
                continue;
            }
            let right = next[pos];
            // The pair may have changed since it was queued: it must still merge into `merged`.
            if self.merge(symbols[pos], symbols[right]).map(|m| m.1) != Some(merged) {
                continue;
            }
            symbols[pos] = merged;
            alive[right] = false;
            next[pos] = next[right];
            if next[pos] < n {
                prev[next[pos]] = pos;
            }
            if prev[pos] < n
                && let Some((rank, m)) = self.merge(symbols[prev[pos]], merged)
            {
                queue.push(Reverse((rank, prev[pos], m)));
            }
            if next[pos] < n
                && let Some((rank, m)) = self.merge(merged, symbols[next[pos]])
            {
                queue.push(Reverse((rank, pos, m)));
            }
        }
        ids.extend((0..n).filter(|&i| alive[i]).map(|i| symbols[i]));
    }
}
