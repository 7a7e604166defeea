#!/usr/bin/env bash
# A cold `quire search` as editors and launchers run it: one whole process per query (hybrid,
# the model loaded: $QUIRE_MODEL, default e5-small; EmbeddingGemma with
# QUIRE_MODEL=~/.local/share/quire/models/embeddinggemma-300m-q8.qgem), over the
# obsidian-tasks-docs vault of the shared corpora indexed with that model. Prints the median
# wall time (hyperfine, RUNS runs after 2 warm-ups) and the median peak
# RSS (/usr/bin/time, RUNS runs) of
#   - hybrid search (goal: ≤ 0.15 s and ≤ 150 MB for a cold process),
#   - the same binary with --mode bm25 (the in-script baseline: no model loaded),
#   - with QUIRE_BASELINE_BIN=/path/to/older/quire, that binary's hybrid search (e.g. one built
#     from an earlier commit in a worktree), and the ratio.
# Usage: scripts/bench/cold-search.sh [RUNS]   (needs hyperfine and GNU time: apt-get install
# hyperfine time; the model: scripts/fetch-model.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-15}
model=${QUIRE_MODEL:-$HOME/.local/share/quire/models/e5-small-q4.bin}
corpora=${QUIRE_CORPORA:-$PWD/../shared/corpora}
vault=$corpora/vaults/obsidian-tasks-docs
# One index per model file (each model is its own embedding space).
work=$PWD/target/bench-cold-search/$(basename "$model")
mkdir -p "$work"
command -v hyperfine >/dev/null || { echo "needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs GNU time (apt-get install time)" >&2; exit 1; }
[ -f "$model" ] || { echo "no model at $model: run scripts/fetch-model.sh" >&2; exit 1; }

cargo build --release --locked -q -p quire --bin quire
quire=$PWD/target/release/quire
index=$work/index
# The index is built once (about a minute of embedding) and reused by later runs.
if [ ! -f "$index/done" ]; then
    rm -rf "$index"
    "$quire" --vault "$vault" --index-dir "$index" --model "$model" index >/dev/null 2>&1
    touch "$index/done"
fi
query="recurring tasks due date"

# name binary mode: median seconds (hyperfine) and median peak RSS in MB (GNU time).
measure() {
    local name=$1 bin=$2 mode=$3
    hyperfine -N -w 2 -r "$runs" --export-json "$work/$name.json" \
        "$bin --vault $vault --index-dir $index --model $model search '$query' --mode $mode" \
        >/dev/null 2>&1
    local rss=()
    for _ in $(seq "$runs"); do
        /usr/bin/time -f "%M" -o "$work/rss" "$bin" --vault "$vault" --index-dir "$index" \
            --model "$model" search "$query" --mode "$mode" >/dev/null 2>&1
        rss+=("$(cat "$work/rss")")
    done
    python3 - "$work/$name.json" "${rss[@]}" >"$work/$name.txt" <<'EOF'
import json, statistics, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(statistics.median(r["times"]), statistics.median(int(x) for x in sys.argv[2:]) / 1024)
EOF
}

measure hybrid "$quire" hybrid
measure bm25 "$quire" bm25
if [ -n "${QUIRE_BASELINE_BIN:-}" ]; then
    measure baseline "$QUIRE_BASELINE_BIN" hybrid
fi

python3 - "$work" "$runs" "${QUIRE_BASELINE_BIN:-}" <<'EOF'
import os, sys
work, runs, baseline = sys.argv[1], sys.argv[2], sys.argv[3]
def read(name):
    t, m = open(os.path.join(work, name + ".txt")).read().split()
    return float(t), float(m)
h, b = read("hybrid"), read("bm25")
print(f"cold search, obsidian-tasks-docs, medians of {runs} whole processes")
print(f"hybrid (e5 loaded)   {h[0]*1000:7.1f} ms  {h[1]:6.1f} MB   goal ≤ 150 ms, ≤ 150 MB")
print(f"bm25 (baseline)      {b[0]*1000:7.1f} ms  {b[1]:6.1f} MB   hybrid costs {h[0]-b[0]:.3f} s and {h[1]-b[1]:.0f} MB more")
if baseline:
    o = read("baseline")
    print(f"baseline binary      {o[0]*1000:7.1f} ms  {o[1]:6.1f} MB   ({baseline})")
    print(f"ratio                {o[0]/h[0]:.2f}x faster, {o[1]/h[1]:.2f}x less memory")
EOF
