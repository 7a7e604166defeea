import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // The plugin's `import … from "obsidian"` gets the test shim (the app provides the real module).
    alias: { obsidian: fileURLToPath(new URL("./test/obsidian-shim.ts", import.meta.url)) },
  },
  test: {
    environment: "happy-dom",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Every request the plugin sends to quire is checked against quire's OpenAPI document.
    setupFiles: ["test/contract.ts"],
    // Each integration test file runs its own quire servers; one file at a time keeps a
    // two-core machine responsive enough for the timing of streamed answers.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
