// The related-notes pane of the built plugin against a real `quire serve`: it follows the active
// note, lists each related note once with all its relations, and refreshes after a sync.
import { existsSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPlugin, makeVault, openNote, startQuire, waitFor, type Loaded, type QuireServer, type TestVault } from "./harness";
import { MarkdownView, type View } from "./obsidian-shim";
import { closeBrowser, screenshot } from "./screenshot";

/** The embedding model scripts/fetch-model.sh installs; with it, the pane also shows notes similar in meaning. */
const MODEL = process.env.QUIRE_TEST_MODEL ?? join(homedir(), ".local/share/quire/models/e5-small-q4.bin");

async function openPane(loaded: Loaded): Promise<View> {
  loaded.app.shimRunCommand("quire:open-related-notes");
  const leaf = await waitFor(() => loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-similar"), "the pane");
  expect(loaded.app.shimWorkspace.shimRevealed).toContain(leaf);
  expect(leaf.shimSide).toBe("right");
  return leaf.shimView;
}

function rows(pane: View): { path: string; title: string; badges: string[] }[] {
  return [...pane.containerEl.querySelectorAll(".quire-related-row")].map((row) => ({
    path: (row as HTMLElement).dataset.path ?? "",
    title: row.querySelector(".quire-related-title")?.textContent ?? "",
    badges: [...row.querySelectorAll(".quire-tag")].map((b) => b.textContent ?? ""),
  }));
}

function header(pane: View): string {
  return pane.containerEl.querySelector(".quire-pane-header")?.textContent ?? "";
}

describe("related notes, links only (no embedding model)", () => {
  let vault: TestVault;
  let server: QuireServer;
  let loaded: Loaded;

  beforeAll(async () => {
    vault = makeVault();
    server = await startQuire(vault);
    loaded = await loadPlugin(vault.vault, { serverUrl: server.url });
  });

  afterAll(async () => {
    loaded?.unload();
    await server?.stop();
    vault?.remove();
  });

  it("follows the active note and lists each related note once, with all its relations", async () => {
    const pane = await openPane(loaded);
    expect(header(pane)).toBe("No note open");
    await openNote(loaded.app, "Home.md");
    await waitFor(() => header(pane) === "Home" && rows(pane).length > 0, "Home's related notes");
    const list = rows(pane);
    const paths = list.map((r) => r.path);
    expect(new Set(paths).size).toBe(paths.length);
    expect(paths).not.toContain("Home.md");
    // Running MOC links to Home, Home links to it, and it is a map of content listing Home: one row.
    expect(list.find((r) => r.path === "Areas/Running MOC.md")?.badges).toEqual(["links here", "linked", "map of content"]);
    expect(list.find((r) => r.path === "Projects/Homelab.md")?.badges).toEqual(["linked"]);
    expect(pane.containerEl.querySelector(".quire-pane-info")?.textContent).toMatch(/embedding model/);

    await openNote(loaded.app, "Projects/Sourdough Experiment.md");
    await waitFor(() => header(pane) === "Sourdough Experiment", "the pane to follow");
    await waitFor(() => rows(pane).some((r) => r.path === "Resources/Sourdough Starter.md"), "Sourdough Experiment's links");
  });

  it("opens a related note, and refreshes when a sync changes the links", async () => {
    const pane = await openPane(loaded);
    const row = await waitFor(() => pane.containerEl.querySelector('[data-path="Resources/Sourdough Starter.md"] .quire-related-title'), "a row");
    (row as HTMLElement).click();
    const view = await waitFor(() => {
      const v = loaded.app.shimWorkspace.shimActiveLeaf?.shimView;
      return v instanceof MarkdownView && v.file?.path === "Resources/Sourdough Starter.md" && v;
    }, "the related note to open");
    expect(view.file?.basename).toBe("Sourdough Starter");
    await waitFor(() => header(pane) === "Sourdough Starter", "the pane to follow the opened note");

    // A new note linking here: the server syncs it, reads the vault's links again and then says so
    // on /api/events; the pane reloads once, and sees the new backlink.
    writeFileSync(join(vault.vault, "Areas", "Levain Notes.md"), "# Levain Notes\n\nFed as in [[Sourdough Starter]].\n");
    await waitFor(
      () => rows(pane).find((r) => r.path === "Areas/Levain Notes.md")?.badges.includes("links here"),
      "the new backlink after the sync",
      20_000,
    );
  });

  it("stops following notes when it is closed", async () => {
    const workspace = loaded.app.shimWorkspace;
    const before = workspace.shimListeners("file-open");
    const leaf = workspace.shimLeaves.find((l) => l.view.getViewType() === "quire-similar");
    leaf?.detach();
    await waitFor(() => workspace.shimListeners("file-open") === before - 1, "the pane's listener to go");
  });
});

describe.skipIf(!existsSync(MODEL))("related notes with the embedding model", () => {
  let vault: TestVault;
  let server: QuireServer;
  let loaded: Loaded;

  beforeAll(async () => {
    vault = makeVault({ embeddings: MODEL });
    server = await startQuire(vault, { embeddings: MODEL });
    loaded = await loadPlugin(vault.vault, { serverUrl: server.url });
  }, 180_000);

  afterAll(async () => {
    loaded?.unload();
    await server?.stop();
    await closeBrowser();
    vault?.remove();
  });

  it("merges a note that is similar and linked into one row, most similar first", async () => {
    const pane = await openPane(loaded);
    await openNote(loaded.app, "Projects/Sourdough Experiment.md");
    await waitFor(() => rows(pane).some((r) => r.badges.some((b) => b.startsWith("similar"))), "similar notes", 60_000);
    const list = rows(pane);
    const paths = list.map((r) => r.path);
    expect(new Set(paths).size).toBe(paths.length);
    const scores = list.flatMap((r) => r.badges.filter((b) => b.startsWith("similar ")).map((b) => Number(b.slice(8))));
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    // Sourdough Starter is linked from the note and similar in meaning: one row with both.
    const starter = list.find((r) => r.path === "Resources/Sourdough Starter.md");
    expect(starter?.badges.some((b) => b.startsWith("similar "))).toBe(true);
    expect(starter?.badges).toContain("linked");
    expect(pane.containerEl.querySelector(".quire-pane-info")?.textContent).toBe("");
    await screenshot("similar-pane", pane.containerEl);
  }, 120_000);
});
