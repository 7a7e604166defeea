/**
 * Before the tests: builds main.js (the integration tests load the built plugin, as Obsidian
 * does) and checks that the quire binary they drive exists.
 */
import { existsSync } from "node:fs";
import { build } from "../esbuild.config.mjs";
import { MAIN_JS, QUIRE_BIN } from "./paths";

export default async function setup(): Promise<void> {
  await build(MAIN_JS);
  if (!existsSync(QUIRE_BIN)) {
    throw new Error(`No quire binary at ${QUIRE_BIN}: build it with \`cargo build -p quire --locked\` in the repository, or set QUIRE_BIN.`);
  }
}
