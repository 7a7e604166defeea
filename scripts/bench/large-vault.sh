#!/usr/bin/env bash
# A large generated vault (default 100,000 notes; scripts/bench/gen_large_vault.py, realistic
# folders, sizes, links, tags, lists and Zipf-distributed words): the scan, a cold BM25 index, a
# no-op sync and a one-note edit synced by `quire index` (seconds, peak RSS, and where the time
# went: the sync's own phases), then `quire serve` watching it: a note edited with a word no
# other note has, and the time until /api/search finds it, minus the watcher's debounce. The
# baseline, in the same run, is `quire scan` (read and parse every note, write nothing).
# Figures are medians of RUNS runs.
#
# Usage: scripts/bench/large-vault.sh [NOTES] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
notes=${1:-100000}
runs=${2:-3}
debounce_ms=300
cargo build --release --locked -q -p quire --bin quire
quire=$PWD/target/release/quire
work=$(mktemp -d)
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
started=$(date +%s.%N)
python3 scripts/bench/gen_large_vault.py "$work/vault" "$notes" >"$work/gen.txt"
printf 'generated: %s (%.0f s)\n' "$(cat "$work/gen.txt")" "$(echo "$(date +%s.%N) - $started" | bc -l)"
q=("$quire" --vault "$work/vault" --index-dir "$work/index" --no-embeddings)

# timed NAME CMD…: appends "seconds max_rss_kb" to $work/NAME and keeps the command's stdout.
timed() {
    local name=$1
    shift
    /usr/bin/time -f "%e %M" -o "$work/t" "$@" >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
    cat "$work/t" >>"$work/$name"
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
col() { cut -d' ' -f"$2" "$work/$1" | median; }
# phases: the sync's phases (ms) from its --json output, appended to $work/NAME.phases.
phases() {
    python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["phases"]; print(" ".join(f"{k[:-3]}={v:.0f}" for k,v in p.items() if v >= 1))' "$work/out" >>"$work/$1.phases"
}
report() {
    printf '%-34s %7.2f s  %6.0f MB peak RSS  %6.2fx scan' "$2" "$(col "$1" 1)" "$(echo "$(col "$1" 2) / 1024" | bc -l)" \
        "$(echo "$(col "$1" 1) / $base" | bc -l)"
    [ -f "$work/$1.phases" ] && printf '   phases (ms, last run): %s' "$(tail -1 "$work/$1.phases")"
    echo
}

for _ in $(seq "$runs"); do timed scan "$quire" --vault "$work/vault" --json scan; done
base=$(col scan 1)
for _ in $(seq "$runs"); do
    rm -rf "$work/index"
    timed cold "${q[@]}" --json index
    phases cold
done
for _ in $(seq "$runs"); do timed noop "${q[@]}" --json index; phases noop; done
victim=$(find "$work/vault/Areas" -name '*.md' | sort | sed -n 1p)
for i in $(seq "$runs"); do
    printf '\nEdited %d: zqxedit%d.\n' "$i" "$i" >>"$victim"
    timed edit "${q[@]}" --json index
    phases edit
done
timed search "${q[@]}" --json search "zqxedit$runs" --mode bm25
# (The answer repeats the query: a result is what must contain the word.)
grep -q '"chunk_id"' "$work/out" || { echo "the edited note was not found" >&2; exit 1; }

echo "$notes notes; medians of $runs runs (2 cores)"
report scan "baseline: quire scan (read+parse)"
report cold "cold index, BM25"
report noop "no-op sync"
report edit "one-note edit, quire index"
report search "search (whole process)"

# The watcher: edit → searchable through `quire serve`.
"${q[@]}" serve --port 0 --debounce-ms "$debounce_ms" 2>"$work/serve.log" &
server=$!
url=""
for _ in $(seq 600); do
    url=$(grep -o 'http://[0-9.:]*' "$work/serve.log" | head -1 || true)
    [ -n "$url" ] && curl -s "$url/api/status" | grep -q '"ready":true' && break
    sleep 0.1
done
[ -n "$url" ] || { cat "$work/serve.log" >&2; exit 1; }
# Let the reconciliation and the first parse of the vault finish.
for _ in $(seq 1200); do
    grep -q 'read [0-9]* notes' "$work/serve.log" && grep -q 'index at generation' "$work/serve.log" && break
    sleep 0.1
done
latencies=()
for i in $(seq "$runs"); do
    word="zqxserve${i}x$RANDOM"
    sleep 1
    before=$(date +%s%N)
    printf '\nServed edit: %s.\n' "$word" >>"$victim"
    while ! curl -s "$url/api/search?q=$word&mode=bm25&k=1" | grep -q '"chunk_id"'; do
        sleep 0.005
        [ $(( ($(date +%s%N) - before) / 1000000 )) -gt 60000 ] && { echo "not searchable after 60 s" >&2; exit 1; }
    done
    after=$(date +%s%N)
    latencies+=($(( (after - before) / 1000000 - debounce_ms )))
done
rss=$(awk '/VmHWM/ {print $2}' "/proc/$server/status")
printf 'edit → searchable under quire serve:  %s ms after the %d ms debounce (median of: %s)  serve peak RSS %.0f MB\n' \
    "$(printf '%s\n' "${latencies[@]}" | median)" "$debounce_ms" "${latencies[*]}" "$(echo "$rss / 1024" | bc -l)"
grep -o 'read [0-9]* notes in [0-9.]*s' "$work/serve.log" | tail -1 | sed 's/^/last vault re-parse after an edit (not on the search path): /'
