// The settings: their defaults, the tab drawn with Setting rows (before Obsidian 1.13) and the
// declarative definitions (1.13 and later), both saving through the plugin.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS, loadSettings, SETTINGS } from "../src/settings";
import { freePort, loadPlugin, type Loaded } from "./harness";
import type { PluginSettingTab } from "./obsidian-shim";

describe("loadSettings", () => {
  it("fills in the defaults and drops values of the wrong kind", () => {
    expect(loadSettings(null)).toEqual(DEFAULT_SETTINGS);
    expect(loadSettings({ serverUrl: " http://127.0.0.1:9000 ", autoStart: "yes", searchLimit: 70, searchMode: "bm25", extra: 1 })).toEqual({
      ...DEFAULT_SETTINGS,
      serverUrl: "http://127.0.0.1:9000",
      searchMode: "bm25",
    });
  });
});

describe("the settings tab", () => {
  let dir: string;
  let loaded: Loaded;
  let tab: PluginSettingTab;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "quire-settings-"));
    // Nothing listens there: these tests do not need the server.
    loaded = await loadPlugin(dir, { serverUrl: `http://127.0.0.1:${await freePort()}` });
    const found = loaded.app.shimSettingTabs[0];
    if (!found) throw new Error("no settings tab");
    tab = found;
  });

  afterAll(() => {
    loaded.unload();
    rmSync(dir, { recursive: true, force: true });
  });

  it("declares every setting for Obsidian 1.13's settings (and its search)", () => {
    const definitions = tab.getSettingDefinitions();
    const keys = definitions.map((d) => ("control" in d && d.control ? d.control.key : null));
    expect(keys).toEqual(Object.keys(DEFAULT_SETTINGS));
    expect(definitions.map((d) => ("name" in d ? d.name : ""))).toEqual(SETTINGS.map((s) => s.name));
  });

  it("reads and saves values through the plugin", async () => {
    expect(tab.getControlValue("searchLimit")).toBe("10");
    await tab.setControlValue("searchLimit", "20");
    await tab.setControlValue("searchMode", "bm25");
    await tab.setControlValue("autoStart", "not a boolean");
    expect(loaded.app.shimData).toMatchObject({ searchLimit: 20, searchMode: "bm25", autoStart: false });
    expect(tab.getControlValue("searchLimit")).toBe("20");
  });

  it("draws the same settings with Setting rows, and saves what is typed", async () => {
    tab.shimOpenBefore113();
    const rows = [...tab.containerEl.querySelectorAll(".setting-item")];
    expect(rows.map((r) => r.querySelector(".setting-item-name")?.textContent)).toEqual(SETTINGS.map((s) => s.name));
    const binary = rows[2]?.querySelector("input") as HTMLInputElement;
    expect(binary.value).toBe("quire");
    binary.value = "/opt/quire/bin/quire";
    binary.dispatchEvent(new Event("input"));
    const mode = rows[4]?.querySelector("select") as HTMLSelectElement;
    expect(mode.value).toBe("bm25");
    await new Promise((r) => setTimeout(r, 10));
    expect(loaded.app.shimData).toMatchObject({ quireBinary: "/opt/quire/bin/quire" });
  });
});
