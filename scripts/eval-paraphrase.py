#!/usr/bin/env python3
"""Retrieval on paraphrased questions (eval/paraphrase/dev.jsonl): recall@5 and MRR@10 of each
search mode, for English questions and for questions in other languages than the notes.

Usage: scripts/eval-paraphrase.py [QUIRE_BINARY] [DEV_SET]

Indexes each vault of the set into a temporary directory with the default embedding model (the
vaults are only read) and runs `quire search --json -k 10` per question and mode. A dev set for
finding problems, not a target to fit (see eval/paraphrase/README.md).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/debug/quire")
DEV = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "eval/paraphrase/dev.jsonl")
CORPORA = os.environ.get("QUIRE_CORPORA", os.path.join(ROOT, "..", "shared", "corpora"))
MODES = ["bm25", "vector", "hybrid"]

env = dict(os.environ)
for var in ["QUIRE_LLM_BASE_URL", "QUIRE_LLM_PRESET", "QUIRE_EMBED_BASE_URL"]:
    env.pop(var, None)


def run(args):
    out = subprocess.run([BIN] + args, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"quire {' '.join(args)} failed: {out.stderr}")
    return out.stdout


def main():
    rows = [json.loads(line) for line in open(DEV, encoding="utf-8") if line.strip()]
    ranks = {m: [] for m in MODES}
    seconds = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted({r["vault"] for r in rows}):
            vault = os.path.join(CORPORA, "vaults", name, "vault")
            index = os.path.join(tmp, name)
            run(["--vault", vault, "--index-dir", index, "index"])
            for r in (r for r in rows if r["vault"] == name):
                for mode in MODES:
                    started = time.time()
                    found = json.loads(run(["--vault", vault, "--index-dir", index, "--json",
                                            "search", r["question"], "-k", "10", "--mode", mode]))
                    seconds[mode].append(time.time() - started)
                    paths = [hit["path"] for hit in found["results"]]
                    rank = next((i + 1 for i, p in enumerate(paths) if p in r["relevant"]), None)
                    ranks[mode].append((r, rank))
    print("| mode | R@5 all | MRR@10 all | R@5 English | R@5 other languages | median s/query (process) |")
    print("|---|---|---|---|---|---|")
    for mode in MODES:
        got = ranks[mode]
        def r5(keep):
            sub = [rank for r, rank in got if keep(r)]
            return sum(1 for x in sub if x and x <= 5) / max(1, len(sub))
        mrr = sum(1 / rank for _, rank in got if rank) / max(1, len(got))
        med = sorted(seconds[mode])[len(seconds[mode]) // 2]
        print(f"| {mode} | {r5(lambda r: True):.3f} | {mrr:.3f} | {r5(lambda r: r['lang'] == 'en'):.3f} "
              f"| {r5(lambda r: r['lang'] != 'en'):.3f} | {med:.2f} |")


if __name__ == "__main__":
    main()
