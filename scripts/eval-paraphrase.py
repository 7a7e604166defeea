#!/usr/bin/env python3
"""Retrieval on paraphrased questions (eval/paraphrase/dev.jsonl): recall@5 and MRR@10 of each
search mode and hybrid fusion variant, for English questions and for questions in other
languages than the notes.

Usage: scripts/eval-paraphrase.py [QUIRE_BINARY] [DEV_SET] [--index-dir DIR]

Indexes each vault of the set with the default embedding model (the vaults are only read) into
DIR/<vault> (kept, so a second run only checks it is up to date) or a temporary directory, and
runs `quire eval --questions` on it: bm25, vector, hybrid (the default fusion) and one hybrid
row per fusion variant in QUIRE_FUSION (comma-separated names, see docs/fusion-variants.md;
by default those of eval/fusion-variants.txt). Latency is the median time of one search with the query
already embedded, as a ratio to `hybrid[rrf]` (the old fusion) in the same run.
A dev set for finding problems, not a target to fit (see eval/paraphrase/README.md).
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = [a for a in sys.argv[1:]]
INDEX_DIR = None
if "--index-dir" in args:
    i = args.index("--index-dir")
    INDEX_DIR = args[i + 1]
    del args[i:i + 2]
BIN = args[0] if len(args) > 0 else os.path.join(ROOT, "target/debug/quire")
DEV = args[1] if len(args) > 1 else os.path.join(ROOT, "eval/paraphrase/dev.jsonl")
CORPORA = os.environ.get("QUIRE_CORPORA", os.path.join(ROOT, "..", "shared", "corpora"))
env = dict(os.environ)
for var in ["QUIRE_LLM_BASE_URL", "QUIRE_LLM_PRESET", "QUIRE_EMBED_BASE_URL"]:
    env.pop(var, None)
if "QUIRE_FUSION" not in env:
    variants = open(os.path.join(ROOT, "eval", "fusion-variants.txt"), encoding="utf-8")
    env["QUIRE_FUSION"] = ",".join(line.strip() for line in variants if line.strip())


def run(cmd):
    out = subprocess.run([BIN] + cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"quire {' '.join(cmd)} failed: {out.stderr}")
    for line in out.stderr.splitlines():
        if line.startswith(("QUIRE_HYDE", "QUIRE_RERANK")):  # the model's time per question
            print(line, file=sys.stderr)
    return out.stdout


def evaluate(base):
    rows = [json.loads(line) for line in open(DEV, encoding="utf-8") if line.strip()]
    results = []  # (row, {retriever: rank})
    latency = {}
    for name in sorted({r["vault"] for r in rows}):
        vault = os.path.join(CORPORA, "vaults", name, "vault")
        index = os.path.join(base, name)
        mine = [r for r in rows if r["vault"] == name]
        questions = os.path.join(base, f"{name}.questions.jsonl")
        with open(questions, "w", encoding="utf-8") as f:
            for r in mine:
                f.write(json.dumps({"question": r["question"], "relevant": r["relevant"]}) + "\n")
        report = json.loads(run(["--vault", vault, "--index-dir", index, "--json", "eval",
                                 "--questions", questions]))
        for r, ranks in zip(mine, report["ranks"]):
            results.append((r, ranks))
        for k, v in report["latency_ms"].items():
            latency.setdefault(k, []).append((v, len(mine)))
    return results, {k: sum(v * n for v, n in xs) / sum(n for _, n in xs) for k, xs in latency.items()}


def main():
    if INDEX_DIR:
        os.makedirs(INDEX_DIR, exist_ok=True)
        results, latency = evaluate(INDEX_DIR)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            results, latency = evaluate(tmp)
    names = list(results[0][1].keys())
    names.sort(key=lambda n: (not n in ("bm25", "vector", "hybrid"), n))
    base = latency.get("hybrid[rrf]") or latency.get("hybrid") or 1.0
    print("| retriever | R@5 all | MRR@10 all | R@5 en | MRR@10 en | R@5 other | MRR@10 other "
          "| search ms (median) | × hybrid[rrf] |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        def stats(keep):
            sub = [ranks[name] for r, ranks in results if keep(r)]
            r5 = sum(1 for x in sub if x and x <= 5) / max(1, len(sub))
            mrr = sum(1 / x for x in sub if x and x <= 10) / max(1, len(sub))
            return r5, mrr
        a, e, o = stats(lambda r: True), stats(lambda r: r["lang"] == "en"), stats(lambda r: r["lang"] != "en")
        print(f"| {name} | {a[0]:.3f} | {a[1]:.3f} | {e[0]:.3f} | {e[1]:.3f} | {o[0]:.3f} | {o[1]:.3f} "
              f"| {latency[name]:.1f} | {latency[name] / base:.2f} |")


if __name__ == "__main__":
    main()
