#!/usr/bin/env bash
# Hybrid search at a million chunks, end to end: a generated vault of 191,000 notes
# (scripts/bench/gen_large_vault.py: 1,000,071 chunks), BM25 over its real text, and a vector for
# every chunk — synthetic (the `fill_vectors` example of quire-index: clustered unit vectors
# stored under the default model's embedding space), because embedding a million chunks with
# the real model would take about six hours on 2 cores. `quire index` with the model then finds
# nothing to embed and builds the approximate index (HNSW) as after a real first index; its time
# is the build's. Queries are embedded by the real model, so a search does all a real one does:
# embed the query, BM25, the graph search with exact rescoring, fusion, snippets. Rankings are
# not judged (the vectors mean nothing), only timed.
#
# Prints, as medians with p90/p99, warm searches through `quire serve` (GET /api/search, the
# process already up: what an editor plugin or the web page sees) in hybrid mode against the
# baseline in the same run, BM25 mode (no query embedding, no vectors), and whole `quire search`
# processes of both modes (model load included) with their peak RSS.
#
# Usage: scripts/bench/million.sh [NOTES] [RUNS]   (default 191000 notes, 5 rounds of 40 queries)
# The vault and index are kept in target/bench-million (about 12 GB) and reused by later runs;
# the first run takes about 40 minutes (generation, BM25 index, vectors, the graph's build).
set -euo pipefail
cd "$(dirname "$0")/../.."
notes=${1:-191000}
runs=${2:-5}
model=${QUIRE_MODEL:-$HOME/.local/share/quire/models/e5-small-q4.bin}
[ -f "$model" ] || { echo "no model at $model: run scripts/fetch-model.sh" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 1; }
work=$PWD/target/bench-million/$notes
mkdir -p "$work"
cargo build --release --locked -q -p quire --bin quire
cargo build --release --locked -q -p quire-index --example fill_vectors
quire=$PWD/target/release/quire
q=("$quire" --vault "$work/vault" --index-dir "$work/index" --model "$model")
step() { printf '%s: ' "$1"; shift; /usr/bin/time -f "%e s, %M KB peak RSS" "$@" 2>&1 >/dev/null | tail -1; }
if [ ! -f "$work/vault.done" ]; then
    rm -rf "$work/vault"
    step "generated vault" python3 scripts/bench/gen_large_vault.py "$work/vault" "$notes"
    touch "$work/vault.done"
fi
if [ ! -f "$work/index.done" ]; then
    rm -rf "$work/index"
    step "BM25 index (quire index --no-embeddings)" "${q[@]}" --no-embeddings index
    step "synthetic vectors" target/release/examples/fill_vectors "$work/index" "$model"
    step "approximate index (quire index: nothing to embed, HNSW build)" "${q[@]}" index
    touch "$work/index.done"
fi
"${q[@]}" --json status >"$work/status.json" 2>/dev/null || true

server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
"${q[@]}" serve --port 0 2>"$work/serve.log" &
server=$!
started=$(date +%s.%N)
url=""
for _ in $(seq 1200); do
    url=$(grep -o 'http://[0-9.:]*' "$work/serve.log" | head -1 || true)
    [ -n "$url" ] && break
    sleep 0.25
done
[ -n "$url" ] || { echo "quire serve did not start" >&2; cat "$work/serve.log" >&2; exit 1; }
printf 'quire serve listening after %.1f s\n' "$(echo "$(date +%s.%N) - $started" | bc -l)"

python3 - "$url" "$work" "$runs" "${q[@]}" <<'PY'
import json, os, random, statistics, subprocess, sys, time, urllib.parse, urllib.request
url, work, runs, quire = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]

# 40 queries: titles of notes spread over the vault (the made-up words of its own notes).
titles = sorted(
    os.path.splitext(f)[0]
    for d, _, fs in os.walk(os.path.join(work, "vault"))
    for f in fs
    if f.endswith(".md") and "Daily" not in d
)
random.Random(7).shuffle(titles)
queries = titles[:40]
# Longer questions (three titles joined, about 8 made-up words): the query embedding grows with
# the tokens.
long_queries = [" ".join(titles[40 + 3 * i:43 + 3 * i]) for i in range(40)]

def get(q, mode):
    u = f"{url}/api/search?" + urllib.parse.urlencode({"q": q, "mode": mode, "k": 10})
    t = time.perf_counter()
    with urllib.request.urlopen(u, timeout=120) as r:
        body = json.load(r)
    return (time.perf_counter() - t) * 1e3, body

def pct(xs, p):
    xs = sorted(xs)
    return xs[round((len(xs) - 1) * p)]

# Warm-up: the first queries page in the graph, the model and the full-text segments.
for q in queries[:10]:
    for mode in ("bm25", "hybrid"):
        get(q, mode)
runs_of = {"bm25": ("bm25", queries), "vector": ("vector", queries),
           "hybrid": ("hybrid", queries), "hybrid, long": ("hybrid", long_queries)}
ms = {name: [] for name in runs_of}
hits = {name: 0 for name in runs_of}
# Round after round of every mode (drift on the shared machine hits each alike); within a mode
# every query differs from the one before, so none reuses the searcher's last query vector.
for _ in range(runs):
    for name, (mode, qs) in runs_of.items():
        for q in qs:
            took, body = get(q, mode)
            ms[name].append(took)
            hits[name] += bool(body.get("results"))
status = json.load(open(os.path.join(work, "status.json"))) if os.path.getsize(os.path.join(work, "status.json")) else {}
print("index:", json.dumps({k: v for k, v in status.items() if isinstance(v, (int, float, str))}))
print(f"warm, through quire serve ({len(queries)} queries x {runs} rounds, k=10; the long ones ~8 words):")
base = statistics.median(ms["bm25"])
for mode, xs in ms.items():
    print(f"  {mode:12s} p50 {statistics.median(xs):6.1f} ms  p90 {pct(xs, .9):6.1f}  p99 {pct(xs, .99):6.1f}  "
          f"x{statistics.median(xs) / base:4.2f} bm25  (answered {hits[mode]}/{len(xs)})")

print("whole processes (quire search, model loaded for hybrid), 10 runs each:")
for mode in ("bm25", "hybrid"):
    wall, rss = [], []
    for i in range(10):
        t = time.perf_counter()
        subprocess.run(["/usr/bin/time", "-f", "%M", "-o", os.path.join(work, "rss"), *quire,
                        "search", queries[i], "--mode", mode], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall.append((time.perf_counter() - t) * 1e3)
        rss.append(int(open(os.path.join(work, "rss")).read().split()[-1]) / 1024)
    print(f"  {mode:7s} p50 {statistics.median(wall):6.1f} ms  max {max(wall):6.1f}  peak RSS p50 {statistics.median(rss):5.0f} MB")
PY
