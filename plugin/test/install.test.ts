// scripts/install-plugin.sh builds the plugin and copies exactly its three release files into a
// vault; and the release files agree with each other.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PLUGIN_DIR, REPO_DIR } from "./paths";

const SCRIPT = join(REPO_DIR, "scripts/install-plugin.sh");
const work = mkdtempSync(join(tmpdir(), "quire-install-"));

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("scripts/install-plugin.sh", () => {
  it("copies main.js, manifest.json and styles.css into .obsidian/plugins/quire, keeping the saved settings", () => {
    const vault = join(work, "My Vault");
    const target = join(vault, ".obsidian/plugins/quire");
    mkdirSync(target, { recursive: true });
    writeFileSync(join(target, "data.json"), '{"serverUrl":"http://127.0.0.1:9999"}');
    const out = execFileSync(SCRIPT, [vault], { encoding: "utf8" });
    expect(out).toContain(target);
    expect(readdirSync(target).sort()).toEqual(["data.json", "main.js", "manifest.json", "styles.css"]);
    for (const file of ["main.js", "manifest.json", "styles.css"]) {
      expect(readFileSync(join(target, file), "utf8"), file).toBe(readFileSync(join(PLUGIN_DIR, file), "utf8"));
    }
    expect(readFileSync(join(target, "data.json"), "utf8")).toBe('{"serverUrl":"http://127.0.0.1:9999"}');
  });

  it("refuses a missing vault and a missing argument", () => {
    const missing = spawnSync(SCRIPT, [join(work, "nowhere")], { encoding: "utf8" });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("is not a folder");
    const usage = spawnSync(SCRIPT, [], { encoding: "utf8" });
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain("usage:");
  });
});

describe("the release files", () => {
  const manifest = JSON.parse(readFileSync(join(PLUGIN_DIR, "manifest.json"), "utf8")) as Record<string, unknown>;
  const versions = JSON.parse(readFileSync(join(PLUGIN_DIR, "versions.json"), "utf8")) as Record<string, string>;
  const pkg = JSON.parse(readFileSync(join(PLUGIN_DIR, "package.json"), "utf8")) as { version: string };

  it("agree on the version and the minimum app version, and say the plugin is desktop-only", () => {
    expect(manifest.version).toBe(pkg.version);
    expect(versions[pkg.version]).toBe(manifest.minAppVersion);
    expect(manifest.isDesktopOnly).toBe(true);
    expect(manifest.id).toBe("quire");
  });

  it("main.js loads nothing from the network and writes no HTML", () => {
    const main = readFileSync(join(PLUGIN_DIR, "main.js"), "utf8");
    expect(main).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|console\.log/);
    const urls = main.match(/https?:\/\/[^\s"'`)]+/g) ?? [];
    expect(urls.filter((url) => !url.startsWith("http://127.0.0.1"))).toEqual([]);
  });
});
