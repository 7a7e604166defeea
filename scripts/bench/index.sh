#!/usr/bin/env bash
# Cold index of a generated vault (default 10,000 notes, the parse bench's notes): wall time,
# notes/s and peak RSS, each as the median of RUNS runs, with a baseline measured in the same
# script: `quire scan`, which reads and parses every note and writes nothing. Then the index with
# embeddings from an instant fake OpenAI-compatible server (the pipeline's own cost: chunk texts
# out, vectors in, stored, loaded), a no-change sync, and the peak RSS of a hybrid search over
# the 10k-note index (the vectors loaded) and of one with the local e5 model loaded.
#
# Usage: scripts/bench/index.sh [NOTES] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
notes=${1:-10000}
runs=${2:-3}
cargo build --release --locked -q -p quire --bin quire
cargo build --release --locked -q -p quire-vault --example gen_vault
quire=$PWD/target/release/quire
work=$(mktemp -d)
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
target/release/examples/gen_vault "$work/vault" "$notes" >/dev/null
bytes=$(du -sb "$work/vault" | cut -f1)

# run NAME CMD…: appends "seconds max_rss_kb" of one run to $work/NAME.
run() {
    local name=$1
    shift
    /usr/bin/time -f "%e %M" -o "$work/t" "$@" >/dev/null 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
    cat "$work/t" >>"$work/$name"
}
# median NAME COLUMN
median() { cut -d' ' -f"$2" "$work/$1" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
report() {
    local name=$1 label=$2 s kb
    s=$(median "$name" 1)
    kb=$(median "$name" 2)
    printf '%-44s %8.2f s  %8.0f notes/s  %6.0f MB peak RSS  %5.2fx scan\n' \
        "$label" "$s" "$(echo "$notes / $s" | bc -l)" "$(echo "$kb / 1024" | bc -l)" "$(echo "$s / $base" | bc -l)"
}

for _ in $(seq "$runs"); do
    run scan "$quire" --vault "$work/vault" --json scan
done
base=$(median scan 1)
for _ in $(seq "$runs"); do
    rm -rf "$work/index-bm25"
    run bm25 "$quire" --vault "$work/vault" --index-dir "$work/index-bm25" --no-embeddings --json index
done
for _ in $(seq "$runs"); do
    run nochange "$quire" --vault "$work/vault" --index-dir "$work/index-bm25" --no-embeddings --json index
done

port=$((20000 + RANDOM % 20000))
python3 scripts/bench/fake_embed_server.py "$port" 384 &
server=$!
for _ in $(seq 50); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null && break || sleep 0.1
done
export QUIRE_EMBED_BASE_URL="http://127.0.0.1:$port/v1" QUIRE_EMBED_MODEL=fake-384
run vectors "$quire" --vault "$work/vault" --index-dir "$work/index-vec" --json index
chunks=$("$quire" --vault "$work/vault" --index-dir "$work/index-vec" --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["chunks"])')
for _ in $(seq "$runs"); do
    run serve_fake "$quire" --vault "$work/vault" --index-dir "$work/index-vec" --json search "sourdough starter hydration" --mode hybrid
done
unset QUIRE_EMBED_BASE_URL QUIRE_EMBED_MODEL

echo "generated vault: $notes notes, $((bytes / 1000000)) MB, $chunks chunks; medians of $runs runs (2 cores)"
report scan "baseline: quire scan (read + parse, no writes)"
report bm25 "cold index, BM25 only"
report nochange "no-change sync"
report vectors "cold index + vectors (instant fake server)"
printf '%-44s %6.0f MB peak RSS (%s chunk vectors loaded)\n' "hybrid search, 10k-note index, fake embedder" \
    "$(echo "$(median serve_fake 2) / 1024" | bc -l)" "$chunks"

model=${QUIRE_MODEL:-$HOME/.local/share/quire/models/e5-small-q4.bin}
if [ -f "$model" ]; then
    # The local model's own footprint: index a small vault with it, then search in hybrid mode.
    mkdir -p "$work/small"
    target/release/examples/gen_vault "$work/small" 40 >/dev/null
    "$quire" --vault "$work/small" --index-dir "$work/index-e5" --model "$model" index >/dev/null 2>&1
    for _ in $(seq "$runs"); do
        run serve_e5 "$quire" --vault "$work/small" --index-dir "$work/index-e5" --model "$model" --json search "sourdough starter hydration" --mode hybrid
    done
    printf '%-44s %6.0f MB peak RSS, %.2f s per query process\n' "hybrid search with the local e5 model" \
        "$(echo "$(median serve_e5 2) / 1024" | bc -l)" "$(median serve_e5 1)"
fi
