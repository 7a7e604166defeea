#!/usr/bin/env python3
"""Answerability of offline `quire ask`: how often the "notes do not seem to cover this" flag is
right, on a dev set of answerable and unanswerable questions (eval/answerability/dev.jsonl; a row
without `answerable` counts as answerable, so eval/paraphrase/dev.jsonl measures how often a
question its notes do answer, in other words, is wrongly flagged).

Usage: scripts/eval-answerability.py [QUIRE_BINARY] [DEV_SET] [--index-dir DIR]

The cosine sweep covers 0.30 to 0.88, the range of any model quire ships (e5-small's scores sit
near the top of it, EmbeddingGemma's spread over all of it); QUIRE_MODEL picks the model.
--index-dir keeps the indexes (DIR/<vault>) so a second run only checks them.

Indexes each vault of the set into a temporary directory (the vaults are only read), asks every
question offline with vectors (the default model) and without (--no-embeddings), and prints, for
each mode, the share of unanswerable questions flagged and of answerable ones wrongly flagged at
quire's thresholds, then the same over a sweep of thresholds (to calibrate, not to fit: the
held-out check is the second half of the set, see --split).
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARGS = sys.argv[1:]
INDEX_DIR = None
if "--index-dir" in ARGS:
    i = ARGS.index("--index-dir")
    INDEX_DIR = ARGS[i + 1]
    del ARGS[i:i + 2]
BIN = ARGS[0] if len(ARGS) > 0 else os.path.join(ROOT, "target/debug/quire")
DEV = ARGS[1] if len(ARGS) > 1 else os.path.join(ROOT, "eval/answerability/dev.jsonl")
CORPORA = os.environ.get("QUIRE_CORPORA", os.path.join(ROOT, "..", "shared", "corpora"))
VAULTS = {"sample": os.path.join(ROOT, "examples/vault")}

env = dict(os.environ)
for var in ["QUIRE_LLM_BASE_URL", "QUIRE_LLM_PRESET", "QUIRE_EMBED_BASE_URL"]:
    env.pop(var, None)
env["QUIRE_LLM_LOCAL"] = "0"


def vault_dir(name):
    return VAULTS.get(name) or os.path.join(CORPORA, "vaults", name, "vault")


def run(args):
    out = subprocess.run([BIN] + args, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"quire {' '.join(args)} failed: {out.stderr}")
    return out.stdout


def main():
    rows = [json.loads(line) for line in open(DEV, encoding="utf-8") if line.strip()]
    results = {"vectors": [], "words": []}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = INDEX_DIR or tmp
        for name in sorted({r["vault"] for r in rows}):
            index = os.path.join(tmp, name)
            run(["--vault", vault_dir(name), "--index-dir", index, "index"])
            for r in (r for r in rows if r["vault"] == name):
                for mode, extra in [("vectors", []), ("words", ["--no-embeddings"])]:
                    answer = json.loads(run(["--vault", vault_dir(name), "--index-dir", index,
                                             "--json", *extra, "ask", r["question"]]))
                    evidence = answer.get("evidence") or {}
                    results[mode].append((r, evidence))
    for mode, got in results.items():
        key, thresholds = (("best_cosine", [round(0.30 + 0.02 * i, 2) for i in range(30)])
                           if mode == "vectors" else
                           ("coverage", [0.3, 0.4, 0.5, 0.6, 0.67, 0.75]))
        parts = [("all", lambda r: True)] + [
            (f"vault {v}", lambda r, v=v: r["vault"] == v) for v in sorted({r["vault"] for r in rows})]
        for part, keep in parts:
            sub = [(r, e) for r, e in got if keep(r)]
            print(f"\n## {mode} ({key}), {part}")
            report(sub, lambda e: e.get("weak", True), "quire's rule")
            if part == "all":
                for t in thresholds:
                    report(sub, lambda e, t=t: (e.get(key) or 0) < t, f"{key} < {t}")
                if mode == "vectors":
                    # Either signal weak: the passages are not close in meaning, or they lack
                    # too many of the question's own words.
                    for c in (0.40, 0.42, 0.45, 0.48):
                        for w in (0.4, 0.5, 0.6, 0.67, 0.75):
                            report(sub, lambda e, c=c, w=w: (e.get("best_cosine") or 0) < c
                                   or (e.get("coverage") or 0) < w, f"cos<{c} or cov<{w}")
    if os.environ.get("QUIRE_DUMP"):
        with open(os.environ["QUIRE_DUMP"], "w", encoding="utf-8") as f:
            for mode, got in results.items():
                for r, e in got:
                    f.write(json.dumps({"mode": mode, **r, "evidence": e}, ensure_ascii=False) + "\n")


def report(got, flagged, label):
    no = [e for r, e in got if not r.get("answerable", True)]
    yes = [e for r, e in got if r.get("answerable", True)]
    caught = sum(1 for e in no if flagged(e)) / max(1, len(no))
    wrong = sum(1 for e in yes if flagged(e)) / max(1, len(yes))
    print(f"{label:<22} unanswerable flagged {caught:6.1%} ({len(no)})   "
          f"answerable wrongly flagged {wrong:6.1%} ({len(yes)})")


if __name__ == "__main__":
    main()
