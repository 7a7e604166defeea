#!/usr/bin/env python3
"""Converts EmbeddingGemma-300M (a sentence-transformers folder with f32 safetensors) into
quire's own `QGEM1` file, described in docs/qgem1-format.md.

Usage: convert-gemma.py MODEL_DIR OUT_FILE [--precision q8|f32]

Needs numpy (scripts/fetch-model.sh runs it in a throw-away venv). Reads the safetensors files
itself (an 8-byte header length, a JSON header, raw little-endian data), so nothing else is
needed. Writes OUT_FILE.partial and renames it, so a reader never sees half a file.
"""

import json
import os
import struct
import sys

import numpy as np

MAGIC = b"QGEM1\0\0\0"
ALIGN = 64
BLOCK = 32
TILE = 16


def read_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] != "F32":
            raise SystemExit(f"{path}: tensor {name} is {meta['dtype']}, expected F32")
        a, b = meta["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype="<f4").reshape(meta["shape"])
    return out


def q8_blocks(w):
    """Symmetric int8 per block of 32 inputs: scale = max|w| / 127, values rounded to nearest."""
    rows, cols = w.shape
    blocks = w.reshape(rows, cols // BLOCK, BLOCK).astype(np.float32)
    amax = np.abs(blocks).max(axis=2)
    scale = (amax / 127.0).astype(np.float32)
    inv = np.where(scale > 0, 1.0 / np.where(scale > 0, scale, 1.0), 0.0).astype(np.float32)
    q = np.clip(np.rint(blocks * inv[:, :, None]), -127, 127).astype(np.int8)
    return q.reshape(rows, cols), scale


def q8_tiles(w):
    """A dense [out, inp] matrix in the layout of quire's int8 kernel: values as u8 (q + 128) in
    [out/16][inp/32][8 groups][16 outputs][4 inputs], scales f32 in [out/16][inp/32][16]."""
    out, inp = w.shape
    assert out % TILE == 0 and inp % BLOCK == 0, w.shape
    q, scale = q8_blocks(w)
    u = (q.astype(np.int16) + 128).astype(np.uint8)
    u = u.reshape(out // TILE, TILE, inp // BLOCK, BLOCK // 4, 4).transpose(0, 2, 3, 1, 4)
    s = scale.reshape(out // TILE, TILE, inp // BLOCK).transpose(0, 2, 1)
    return np.ascontiguousarray(u), np.ascontiguousarray(s.astype("<f4"))


def bpe_tables(tok):
    """The tokenizer as quire's own BPE reads it (crates/quire-embed/src/gemma_tokenizer.rs):
    merges `[left, right, rank, merged]` sorted by (left, right), single-character pieces
    `[codepoint, id]` sorted by codepoint, the 256 byte-fallback ids, and the added tokens."""
    model = tok["model"]
    if model["type"] != "BPE" or not model.get("byte_fallback") or model.get("ignore_merges"):
        raise SystemExit("tokenizer.json: not the byte-fallback BPE quire's tokenizer reads")
    normalizer = tok.get("normalizer") or {}
    if normalizer.get("type") != "Replace" or normalizer["pattern"].get("String") != " " \
            or normalizer["content"] != "\u2581":
        raise SystemExit("tokenizer.json: expected the normalizer ' ' -> U+2581")
    if any(t["normalized"] or t["lstrip"] or t["rstrip"] or t["single_word"] for t in tok["added_tokens"]):
        raise SystemExit("tokenizer.json: added tokens with options quire's tokenizer ignores")
    vocab = model["vocab"]
    merges = {}
    for rank, m in enumerate(model["merges"]):
        a, b = m.split(" ", 1) if isinstance(m, str) else m
        merges[(vocab[a], vocab[b])] = (rank, vocab[a + b])
    rows = sorted((a, b, r, n) for (a, b), (r, n) in merges.items())
    chars = sorted((ord(p), i) for p, i in vocab.items() if len(p) == 1)
    byte_ids = [vocab[f"<0x{b:02X}>"] for b in range(256)]
    added = [[t["content"], t["id"]] for t in tok["added_tokens"]]
    return {
        "tok.merges": np.array(rows, dtype="<u4").reshape(-1, 4),
        "tok.chars": np.array(chars, dtype="<u4").reshape(-1, 2),
        "tok.bytes": np.array(byte_ids, dtype="<u4"),
    }, added


def main():
    args = sys.argv[1:]
    precision = "q8"
    if "--precision" in args:
        i = args.index("--precision")
        precision = args[i + 1]
        del args[i : i + 2]
    if len(args) != 2 or precision not in ("q8", "f32"):
        raise SystemExit(__doc__)
    src, dest = args
    config = json.load(open(os.path.join(src, "config.json")))
    st = json.load(open(os.path.join(src, "config_sentence_transformers.json")))
    pooling = json.load(open(os.path.join(src, "1_Pooling", "config.json")))
    if not pooling.get("pooling_mode_mean_tokens"):
        raise SystemExit("only mean pooling is supported")
    if config.get("model_type") != "gemma3_text" or not config.get("use_bidirectional_attention"):
        raise SystemExit("not a bidirectional Gemma-3 encoder (EmbeddingGemma)")
    weights = read_safetensors(os.path.join(src, "model.safetensors"))
    dense = []
    for folder in ("2_Dense", "3_Dense"):
        dc = json.load(open(os.path.join(src, folder, "config.json")))
        if dc.get("bias") or not dc["activation_function"].endswith("Identity"):
            raise SystemExit(f"{folder}: only bias-free identity dense layers are supported")
        dense.append(read_safetensors(os.path.join(src, folder, "model.safetensors"))["linear.weight"])
    tokenizer = open(os.path.join(src, "tokenizer.json"), "rb").read()
    tables, added = bpe_tables(json.loads(tokenizer))

    parts = []  # (name, dtype, shape, [arrays]) in file order
    for name, a in tables.items():
        parts.append((name, "u32", list(a.shape), [a]))
    emb = weights["embed_tokens.weight"]
    if precision == "q8":
        q, scale = q8_blocks(emb)
        parts.append(("embed", "q8_rows", list(emb.shape), [q, scale.astype("<f4")]))
    else:
        parts.append(("embed", "f32", list(emb.shape), [emb]))
    for l in range(config["num_hidden_layers"]):
        p = f"layers.{l}."
        # Matrices with the same input are stored stacked (Q, K and V; gate and up), as the
        # encoder multiplies them: one product, read straight from the map.
        stacked = {
            "qkv_proj": [p + f"self_attn.{m}.weight" for m in ("q_proj", "k_proj", "v_proj")],
            "o_proj": [p + "self_attn.o_proj.weight"],
            "gate_up_proj": [p + f"mlp.{m}.weight" for m in ("gate_proj", "up_proj")],
            "down_proj": [p + "mlp.down_proj.weight"],
        }
        for m, keys in stacked.items():
            w = np.concatenate([weights[k] for k in keys], axis=0)
            if precision == "q8":
                parts.append((f"l{l}.{m}", "q8_tiles", list(w.shape), list(q8_tiles(w))))
            else:
                parts.append((f"l{l}.{m}", "f32", list(w.shape), [w]))
        for n in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                  "post_feedforward_layernorm"):
            w = weights[p + n + ".weight"]
            parts.append((f"l{l}.{n}", "f32", list(w.shape), [w]))
        for n in ("q_norm", "k_norm"):
            w = weights[p + "self_attn." + n + ".weight"]
            parts.append((f"l{l}.{n}", "f32", list(w.shape), [w]))
    parts.append(("norm", "f32", list(weights["norm.weight"].shape), [weights["norm.weight"]]))
    for i, w in enumerate(dense):
        parts.append((f"dense{i}", "f32", list(w.shape), [w]))

    # Offsets are relative to the start of the data section (the first multiple of 64 after the
    # header), so the header can be written once.
    tensors = {}
    at = 0
    tok_at = at
    at = (at + len(tokenizer) + ALIGN - 1) // ALIGN * ALIGN
    for name, dtype, shape, arrays in parts:
        offsets = []
        for a in arrays:
            offsets.append([at, a.nbytes])
            at = (at + a.nbytes + ALIGN - 1) // ALIGN * ALIGN
        tensors[name] = {"dtype": dtype, "shape": shape, "data": offsets}
    header = {
        "format": 1,
        "model": "embeddinggemma-300m",
        "precision": precision,
        "config": {
            "hidden": config["hidden_size"],
            "layers": config["num_hidden_layers"],
            "heads": config["num_attention_heads"],
            "kv_heads": config["num_key_value_heads"],
            "head_dim": config["head_dim"],
            "intermediate": config["intermediate_size"],
            "rms_norm_eps": config["rms_norm_eps"],
            "rope_theta": config["rope_theta"],
            "rope_local_base_freq": config["rope_local_base_freq"],
            "sliding_window": config["sliding_window"],
            "full_attention": [t == "full_attention" for t in config["layer_types"]],
            "query_pre_attn_scalar": config["query_pre_attn_scalar"],
            "max_positions": config["max_position_embeddings"],
            "vocab": config["vocab_size"],
        },
        "prompts": st.get("prompts", {}),
        "tokenizer": [tok_at, len(tokenizer)],
        "added_tokens": added,
        "tensors": tensors,
    }
    head = json.dumps(header, separators=(",", ":")).encode()
    start = (len(MAGIC) + 8 + len(head) + ALIGN - 1) // ALIGN * ALIGN
    tmp = dest + ".partial"
    with open(tmp, "wb") as f:
        f.write(MAGIC)
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        f.write(b"\0" * (start - f.tell()))

        def put(offset, blob):
            pad = start + offset - f.tell()
            assert pad >= 0
            f.write(b"\0" * pad)
            f.write(blob)

        put(tok_at, tokenizer)
        for name, _, _, arrays in parts:
            for (offset, _), a in zip(tensors[name]["data"], arrays):
                put(offset, np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes())
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, dest)


if __name__ == "__main__":
    main()
