#!/usr/bin/env python3
"""Sweeps offline ask's answerability rule over the output of the answerability probe
(`cargo run --release -p quire-app --example answerability_probe SET INDEX_DIR > OUT.jsonl`).

Usage: scripts/sweep-answerability.py NAME=OUT.jsonl [NAME=OUT.jsonl ...]

For each set it prints the share of unanswerable questions flagged and of answerable ones
(a row without `answerable` counts as answerable) wrongly flagged, for each combination of
  C     the weak best cosine,
  gate  the share of the question's other content words the vault must hold,
  s, g  the absent word's least weight (dq) and greatest gain (dp),
with the weighty-word rule (dq >= 0.15, dp <= -0.02) as quire has it. The rule is the one in
quire_assist::evidence::unmatched_word; this is for calibrating it, on sets to read, not to fit.
"""
import json
import sys


def flagged(row, c, gate, s, g):
    if row["best"] < c:
        return True
    words = row["words"]
    if any(w["dq"] >= 0.15 and w["dp"] <= -0.02 for w in words):
        return True
    for i, w in enumerate(words):
        if w.get("mentioned") is not False or w["dq"] < s or w["dp"] > g:
            continue
        others = [o["mentioned"] for j, o in enumerate(words) if j != i and o.get("mentioned") is not None]
        if others and sum(others) / len(others) >= gate:
            return True
    return False


def rates(rows, *rule):
    no = [r for r in rows if r.get("answerable") is False]
    yes = [r for r in rows if r.get("answerable") is not False]
    share = lambda rs: sum(flagged(r, *rule) for r in rs) / len(rs) if rs else float("nan")
    return share(no), share(yes)


def main():
    sets = []
    for arg in sys.argv[1:]:
        name, path = arg.split("=", 1)
        sets.append((name, [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]))
    for c in (0.34, 0.36, 0.38, 0.40, 0.42):
        for gate in (0.0, 0.3, 0.5):
            for s in (0.07, 0.08, 0.10):
                for g in (-0.02, 0.0, 0.01):
                    cells = []
                    for name, rows in sets:
                        no, yes = rates(rows, c, gate, s, g)
                        cells.append(f"{name} {no:.2f}/{yes:.2f}")
                    print(f"C {c:.2f} gate {gate:.1f} s {s:.2f} g {g:+.2f} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
