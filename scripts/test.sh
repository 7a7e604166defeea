#!/usr/bin/env bash
# Runs every check CI runs: formatting, lints, and the whole test suite.
# The tests read the shared corpora from ../shared/corpora beside the repository (or $QUIRE_CORPORA).
set -euo pipefail
cd "$(dirname "$0")/.."
# The embedding tests need the default model (fetched once into the user's data dir).
./scripts/fetch-model.sh >/dev/null
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
