#!/usr/bin/env python3
"""An OpenAI-compatible /v1/embeddings server that answers instantly with deterministic unit
vectors (a hash of each input seeds them). For benchmarks of quire's index pipeline without the
model's cost: it is never a stand-in for a real embedding model in tests of retrieval quality.

Usage: fake_embed_server.py PORT [DIM]
"""
import hashlib
import json
import random
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIM = int(sys.argv[2]) if len(sys.argv) > 2 else 384


def vector(text):
    rng = random.Random(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest())
    v = [rng.uniform(-1.0, 1.0) for _ in range(DIM)]
    norm = sum(x * x for x in v) ** 0.5 or 1.0
    return [x / norm for x in v]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        inputs = body.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        data = [{"object": "embedding", "index": i, "embedding": vector(t)} for i, t in enumerate(inputs)]
        out = json.dumps({"object": "list", "data": data, "model": body.get("model", "fake")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
