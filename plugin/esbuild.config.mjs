// Bundles src/main.ts into main.js, the file Obsidian loads. `obsidian`, Electron, CodeMirror and
// Node's own modules are provided by the app at run time, so they stay `require` calls.
//
//   node esbuild.config.mjs production   one build of main.js (what `npm run build` does)
//   node esbuild.config.mjs              rebuild main.js on every change, with a source map
import { builtinModules } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import esbuild from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));

const external = [
  "obsidian",
  "electron",
  "@codemirror/*",
  "@lezer/*",
  ...builtinModules,
  ...builtinModules.map((name) => `node:${name}`),
];

/** The build options; `production` drops the source map. */
export function options(production, outfile = join(here, "main.js")) {
  return {
    entryPoints: [join(here, "src/main.ts")],
    bundle: true,
    external,
    format: "cjs",
    platform: "node",
    target: "es2021",
    logLevel: "warning",
    sourcemap: production ? false : "inline",
    treeShaking: true,
    legalComments: "none",
    outfile,
  };
}

/** Builds main.js once. */
export async function build(outfile) {
  await esbuild.build(options(true, outfile));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (process.argv[2] === "production") {
    await build();
  } else {
    const context = await esbuild.context(options(false));
    await context.watch();
  }
}
