// Obsidian's plugin guidelines as lint rules (eslint-plugin-obsidianmd's recommended config, which
// brings typescript-eslint's type-checked rules), over the plugin and its tests.
import { defineConfig } from "eslint/config";
import obsidianmd from "eslint-plugin-obsidianmd";

export default defineConfig([
  { ignores: ["main.js", "node_modules/**"] },
  ...obsidianmd.configs.recommended,
  {
    // The tests run in Node (vitest), not in Obsidian's windows: the rules about popout windows
    // and the vault's config folder do not apply to them, and the shim implements Obsidian's DOM
    // helpers with the DOM's own calls. The plugin's code (src/) gets every rule.
    files: ["test/**/*.ts"],
    rules: {
      "obsidianmd/prefer-window-timers": "off",
      "obsidianmd/hardcoded-config-path": "off",
      "obsidianmd/prefer-create-el": "off",
      "obsidianmd/no-global-this": "off",
      "obsidianmd/prefer-instanceof": "off",
    },
  },
  {
    languageOptions: {
      parserOptions: {
        // The plain ES modules, outside tsconfig.json's TypeScript (openapi-contract.mjs is shared
        // with web-tests/, which runs it as it is).
        projectService: { allowDefaultProject: ["eslint.config.mjs", "esbuild.config.mjs", "test/openapi-contract.mjs"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
]);
