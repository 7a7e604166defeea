"""The PyTorch baseline for crates/quire-embed/benches/embed.rs: reads {"model_dir", "texts",
"batches", "runs"} as JSON on stdin, embeds the texts with sentence-transformers at each batch
size (median of runs, after one warm-up), and prints {"torch_threads", "passages_per_second":
{batch: value}} as JSON on stdout."""
import json
import statistics
import sys
import time

import torch
from sentence_transformers import SentenceTransformer

job = json.load(sys.stdin)
model = SentenceTransformer(job["model_dir"], device="cpu")
texts = job["texts"]
model.encode(texts[:4], batch_size=4)
result = {}
for batch in job["batches"]:
    n = 8 if batch == 1 else len(texts)
    times = []
    for _ in range(job["runs"]):
        start = time.perf_counter()
        model.encode(texts[:n], batch_size=batch, normalize_embeddings=True)
        times.append(time.perf_counter() - start)
    result[str(batch)] = n / statistics.median(times)
print(json.dumps({"torch_threads": torch.get_num_threads(), "passages_per_second": result}))
