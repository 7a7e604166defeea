/** Where the tests find things: the plugin, the repository, the built plugin and the quire binary. */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const PLUGIN_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const REPO_DIR = resolve(PLUGIN_DIR, "..");
export const MAIN_JS = join(PLUGIN_DIR, "main.js");
/** The quire binary: $QUIRE_BIN (relative to plugin/), else the repository's debug build. */
export const QUIRE_BIN = resolve(PLUGIN_DIR, process.env.QUIRE_BIN ?? "../target/debug/quire");
export const SAMPLE_VAULT = join(REPO_DIR, "examples/vault");
/** Where screenshots go: $QUIRE_PLUGIN_SCREENSHOTS, else target/plugin-screenshots. */
export const SCREENSHOTS = resolve(PLUGIN_DIR, process.env.QUIRE_PLUGIN_SCREENSHOTS ?? "../target/plugin-screenshots");
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
