#!/usr/bin/env bash
# Load on `quire serve`'s search: wrk (Debian's `wrk`) against 127.0.0.1, GET /api/search with
# rotating queries, on a generated vault (default 5,000 notes, BM25). Each figure is the median of
# RUNS runs of SECONDS seconds: search latency p50 and p99 and requests/s, first with the vault
# quiet, then while a writer rewrites notes so that the watcher syncs again and again during
# the run (the searches must not wait for the syncs). Only loopback traffic; every run is bounded.
#
# Usage: scripts/bench/serve.sh [NOTES] [RUNS] [SECONDS]
# Needs wrk (apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/../.."
notes=${1:-5000}
runs=${2:-3}
seconds=${3:-10}
command -v wrk >/dev/null || { echo "serve.sh: needs wrk (apt-get install wrk)" >&2; exit 1; }
cargo build --release --locked -q -p quire --bin quire
cargo build --release --locked -q -p quire-vault --example gen_vault
quire=$PWD/target/release/quire
work=$(mktemp -d)
server=""
writer=""
cleanup() {
    [ -n "$writer" ] && kill "$writer" 2>/dev/null || true
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
target/release/examples/gen_vault "$work/vault" "$notes" >/dev/null
"$quire" --vault "$work/vault" --index-dir "$work/index" --no-embeddings index >/dev/null

"$quire" --vault "$work/vault" --index-dir "$work/index" --no-embeddings serve --port 0 \
    2>"$work/serve.log" &
server=$!
url=""
for _ in $(seq 100); do
    url=$(grep -o 'http://[0-9.:]*' "$work/serve.log" | head -1 || true)
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { cat "$work/serve.log" >&2; exit 1; }
for _ in $(seq 100); do
    curl -s "$url/api/status" | grep -q '"ready":true' && break
    sleep 0.1
done

cat >"$work/queries.lua" <<'LUA'
local queries = {"sourdough starter", "garden section", "kyoto tea", "running question",
  "sleep facts", "rust prose", "reading notes", "ordinary prose about tea", "alias", "paragraph 2"}
local i = 0
request = function()
  i = i + 1
  local q = queries[(i % #queries) + 1]:gsub(" ", "+")
  return wrk.format("GET", "/api/search?q=" .. q .. "&k=10")
end
LUA

# One wrk run: prints "p50_ms p99_ms requests_per_s errors".
load() {
    wrk -t2 -c8 -d"${seconds}s" --latency --timeout 10s -s "$work/queries.lua" "$url" >"$work/wrk.out"
    awk '
        function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
        $1 == "50.000%" || $1 == "50%" { p50 = ms($2) }
        $1 == "99.000%" || $1 == "99%" { p99 = ms($2) }
        $1 == "Requests/sec:" { rps = $2 }
        /Non-2xx/ { errors += $NF }
        /Socket errors/ { errors += 1 }
        END { printf "%.2f %.2f %.0f %d\n", p50, p99, rps, errors }
    ' "$work/wrk.out"
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
generation() { curl -s "$url/api/status" | grep -o '"generation":[0-9]*' | head -1 | cut -d: -f2; }

# Rewrites 200 notes every 2 s (a line appended to each): a sync after each debounce.
write_loop() {
    local round=0
    while true; do
        round=$((round + 1))
        find "$work/vault/Areas" -name '*.md' | head -200 | while read -r f; do
            printf '\nEdit %d during the load.\n' "$round" >>"$f"
        done
        sleep 2
    done
}

for label in quiet syncing; do
    : >"$work/$label"
    if [ "$label" = syncing ]; then
        write_loop &
        writer=$!
        sleep 3
    fi
    before=$(generation)
    for _ in $(seq "$runs"); do
        load >>"$work/$label"
    done
    after=$(generation)
    if [ -n "$writer" ]; then kill "$writer" 2>/dev/null || true; wait "$writer" 2>/dev/null || true; writer=""; fi
    printf '%-8s search p50 %6.2f ms  p99 %7.2f ms  %6.0f requests/s  (median of %d runs of %ds; %d non-2xx; %d syncs during the runs)\n' \
        "$label" \
        "$(cut -d' ' -f1 "$work/$label" | median)" \
        "$(cut -d' ' -f2 "$work/$label" | median)" \
        "$(cut -d' ' -f3 "$work/$label" | median)" \
        "$runs" "$seconds" \
        "$(awk '{s += $4} END {print s + 0}' "$work/$label")" \
        "$((after - before))"
done
echo "vault: $notes generated notes; server and wrk (2 threads, 8 connections) share this machine's $(nproc) cores"
