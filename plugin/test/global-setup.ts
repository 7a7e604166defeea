/**
 * Before the tests: builds main.js (the integration tests load the built plugin, as Obsidian
 * does) and checks that the quire binary they drive exists. After them: says how many of the
 * plugin's requests were checked against quire's OpenAPI document (contract.ts).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { build } from "../esbuild.config.mjs";
import { MAIN_JS, QUIRE_BIN } from "./paths";

export default async function setup(project: TestProject): Promise<() => void> {
  await build(MAIN_JS);
  if (!existsSync(QUIRE_BIN)) {
    throw new Error(`No quire binary at ${QUIRE_BIN}: build it with \`cargo build -p quire --locked\` in the repository, or set QUIRE_BIN.`);
  }
  const dir = mkdtempSync(join(tmpdir(), "quire-contract-"));
  const log = join(dir, "counts.jsonl");
  project.provide("contractLog", log);
  return () => {
    const files = existsSync(log)
      ? readFileSync(log, "utf8")
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as { checked: number; toQuire: number; unchecked: number })
      : [];
    const sum = (name: "checked" | "toQuire" | "unchecked") => files.reduce((total, file) => total + file[name], 0);
    const withRequests = files.filter((file) => file.toQuire > 0).length;
    process.stdout.write(
      `contract: ${sum("checked")} requests of the plugin checked against quire's OpenAPI document (${sum("toQuire")} sent to quire by ${withRequests} of ${files.length} test files; ${sum("unchecked")} while the document could not be read)\n`,
    );
    rmSync(dir, { recursive: true, force: true });
  };
}
