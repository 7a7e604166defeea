#!/usr/bin/env python3
"""Hybrid fusion variants on the public test sets: SciFact nDCG@10 and XQuAD nDCG@10 per
language (and its minimum), for bm25, vector, hybrid (the default fusion) and each variant.

Usage: scripts/eval-fusion.py [QUIRE_BINARY] [--sets scifact,xquad] [--langs ar,de,…]

Runs `quire --json eval DIR` once per set with QUIRE_FUSION set to the variants (eval/fusion-variants.txt
unless QUIRE_FUSION is set): each query is embedded and searched
once, and every variant fuses the same two rankings. Corpus vectors are cached by `quire eval`,
so only the first run embeds the corpora. Latency: median per query (BM25 + query embedding +
scan + fusion), as a ratio to hybrid[rrf] (the old fusion) of the same run.
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = sys.argv[1:]
SETS = ["scifact", "xquad"]
if "--sets" in args:
    i = args.index("--sets")
    SETS = args[i + 1].split(",")
    del args[i:i + 2]
XQUAD = ["ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh"]
if "--langs" in args:
    i = args.index("--langs")
    XQUAD = args[i + 1].split(",")
    del args[i:i + 2]
BIN = args[0] if args else os.path.join(ROOT, "target/debug/quire")
CORPORA = os.environ.get("QUIRE_CORPORA", os.path.join(ROOT, "..", "shared", "corpora"))


env = dict(os.environ)
env.pop("QUIRE_EMBED_BASE_URL", None)
if "QUIRE_FUSION" not in env:
    variants = open(os.path.join(ROOT, "eval", "fusion-variants.txt"), encoding="utf-8")
    env["QUIRE_FUSION"] = ",".join(line.strip() for line in variants if line.strip())


def evaluate(path):
    out = subprocess.run([BIN, "--json", "eval", path], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"quire eval {path} failed: {out.stderr}")
    return json.loads(out.stdout)


def main():
    reports = {}
    out = os.environ.get("QUIRE_FUSION_OUT")  # the reports as JSON, written after each set
    if "scifact" in SETS:
        reports["scifact"] = evaluate(os.path.join(CORPORA, "ir", "scifact"))
    if "xquad" in SETS:
        for lang in XQUAD:
            reports[lang] = evaluate(os.path.join(CORPORA, "ir", "xquad", lang))
            print(f"xquad {lang} done", file=sys.stderr)
            if out:
                json.dump(reports, open(out, "w"), indent=1)
    any_report = next(iter(reports.values()))
    names = sorted(any_report["ndcg_at_10"], key=lambda n: (n not in ("bm25", "vector", "hybrid"), n))
    langs = [l for l in XQUAD if l in reports]
    langs.sort()
    print("| retriever | SciFact nDCG@10 | × latency | XQuAD min (lang) | XQuAD mean | "
          + " | ".join(langs) + " |")
    print("|---|---|---|---|---|" + "---|" * len(langs))
    for name in names:
        cells = []
        if "scifact" in reports:
            r = reports["scifact"]
            base = r["latency_ms"].get("hybrid[rrf]") or 1.0
            cells += [f"{r['ndcg_at_10'][name]:.4f}", f"{r['latency_ms'][name] / base:.2f}"]
        else:
            cells += ["", ""]
        if langs:
            per = {l: reports[l]["ndcg_at_10"][name] for l in langs}
            low = min(per, key=per.get)
            cells += [f"{per[low]:.3f} ({low})", f"{sum(per.values()) / len(per):.3f}"]
            cells += [f"{per[l]:.3f}" for l in langs]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
