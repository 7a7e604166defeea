#!/usr/bin/env bash
# Builds the Obsidian plugin (plugin/) and installs it into a vault:
#   ./scripts/install-plugin.sh VAULT
# copies main.js, manifest.json and styles.css into VAULT/.obsidian/plugins/quire/ (nothing else;
# the plugin's saved settings, data.json, are kept). Needs Node.js 20 or later and npm; the first
# run installs the build tools into plugin/node_modules with `npm ci`.
# Then in Obsidian: Settings → Community plugins → turn on "Quire".
set -euo pipefail
if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 VAULT" >&2
  exit 2
fi
vault=$1
if [ ! -d "$vault" ]; then
  echo "install-plugin: $vault is not a folder" >&2
  exit 1
fi
plugin_dir="$(cd "$(dirname "$0")/../plugin" && pwd)"
if ! command -v npm >/dev/null 2>&1; then
  echo "install-plugin: npm is needed to build the plugin (Node.js 20 or later)" >&2
  exit 1
fi
if [ ! -d "$plugin_dir/node_modules" ]; then
  (cd "$plugin_dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
(cd "$plugin_dir" && npm run --silent build)
target="$vault/.obsidian/plugins/quire"
mkdir -p "$target"
for file in main.js manifest.json styles.css; do
  cp "$plugin_dir/$file" "$target/$file"
done
echo "installed the quire plugin in $target"
echo "in Obsidian: Settings → Community plugins → turn on \"Quire\" (reload the plugins if it was on)"
