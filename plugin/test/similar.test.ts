// The related-notes pane of the built plugin against a real `quire serve`: it follows the active
// note, lists each related note once with all its relations, and refreshes after a sync; with the
// embedding model, similar notes come without a visible cosine (it is in the badge's tooltip), and
// a reworked copy of the note is listed first, marked "near copy" with the share of text in common.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Related } from "../src/api";
import { buildIndex, getJson, loadPlugin, makeVault, openNote, startQuire, waitFor, type Loaded, type QuireServer, type TestVault } from "./harness";
import { MarkdownView, type View, type WorkspaceLeaf } from "./obsidian-shim";
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

interface Row {
  path: string;
  title: string;
  badges: string[];
  /** The tooltip of the "similar" badge, if the row has one. */
  similarTip: string | null;
  /** All the row's text. */
  text: string;
  el: HTMLElement;
}

function rows(pane: View): Row[] {
  return [...pane.containerEl.querySelectorAll<HTMLElement>(".quire-related-row")].map((row) => ({
    path: row.dataset.path ?? "",
    title: row.querySelector(".quire-related-title")?.textContent ?? "",
    badges: [...row.querySelectorAll(".quire-tag")].map((b) => b.textContent ?? ""),
    similarTip: row.querySelector(".quire-rel-similar")?.getAttribute("title") ?? null,
    text: row.textContent ?? "",
    el: row,
  }));
}

/** The cosine a "similar" badge's tooltip gives, as it is written there (two decimals). */
function tipScore(tip: string | null): string | undefined {
  return /^Cosine (\d\.\d\d)\. It only orders this list/.exec(tip ?? "")?.[1];
}

/** The route's answer for a note, as the pane asks for it (k = 10). */
function related(server: QuireServer, path: string): Promise<Related> {
  return getJson(`${server.url}/api/similar/${path.split("/").map(encodeURIComponent).join("/")}?k=10`) as Promise<Related>;
}

/** The main-area leaf showing the note at `path`. */
function leafOf(loaded: Loaded, path: string): WorkspaceLeaf | undefined {
  return loaded.app.shimWorkspace.shimLeaves.find((l) => l.shimView instanceof MarkdownView && l.shimView.file?.path === path);
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

  it("merges a note that is similar and linked into one row, most similar first, the cosine only in a tooltip", async () => {
    const pane = await openPane(loaded);
    const path = "Projects/Sourdough Experiment.md";
    await openNote(loaded.app, path);
    await waitFor(() => rows(pane).some((r) => r.badges.includes("similar")), "similar notes", 60_000);
    const list = rows(pane);
    const paths = list.map((r) => r.path);
    expect(new Set(paths).size).toBe(paths.length);
    // The similar notes are the route's, in its order (most similar first), none of them a copy.
    const route = await related(server, path);
    expect(route.near_copies).toEqual([]);
    const similar = (route.similar ?? []).filter((n) => n.path !== path);
    expect(similar.length).toBeGreaterThan(2);
    const listed = list.filter((r) => r.badges.includes("similar"));
    expect(listed.map((r) => r.path)).toEqual(similar.map((n) => n.path));
    // No number in the rows besides their titles, the cosine in the tooltip.
    for (const [i, row] of listed.entries()) {
      expect(row.text.replace(row.title, "")).not.toMatch(/\d/);
      expect(row.badges.some((b) => b.includes("near copy"))).toBe(false);
      expect(tipScore(row.similarTip)).toBe(similar[i]?.score?.toFixed(2));
    }
    expect(pane.containerEl.querySelector(".quire-near-copy, .quire-compare")).toBeNull();
    // Sourdough Starter is linked from the note and similar in meaning: one row with both.
    const starter = list.find((r) => r.path === "Resources/Sourdough Starter.md");
    expect(starter?.badges).toEqual(["similar", "linked"]);
    expect(pane.containerEl.querySelector(".quire-pane-info")?.textContent).toBe("");
    await screenshot("similar-pane", pane.containerEl);
  }, 120_000);
});

describe.skipIf(!existsSync(MODEL))("a near copy among the related notes", () => {
  const original = "Resources/Tea Basics.md";
  const copy = "Areas/Tea notes (copy).md";
  let vault: TestVault;
  let server: QuireServer;
  let loaded: Loaded;

  beforeAll(async () => {
    // A reworked copy of a note, planted before the index is built with the embedding model.
    vault = makeVault({ index: false });
    const text = readFileSync(join(vault.vault, original), "utf8");
    writeFileSync(join(vault.vault, copy), text.replace("tea", "brew").replace("tea", "brew"));
    buildIndex(["--vault", vault.vault, "--index-dir", vault.index, "--model", MODEL]);
    server = await startQuire(vault, { embeddings: MODEL });
    loaded = await loadPlugin(vault.vault, { serverUrl: server.url });
  }, 180_000);

  afterAll(async () => {
    loaded?.unload();
    await server?.stop();
    await closeBrowser();
    vault?.remove();
  });

  it("lists the copy first, marked with the share of text in common; a note that is not a copy has no mark", async () => {
    const route = await related(server, original);
    expect(route.near_copies?.map((c) => c.path)).toEqual([copy]);
    const overlap = route.near_copies?.[0]?.overlap ?? NaN;
    expect(overlap).toBeGreaterThanOrEqual(0.4);
    expect(overlap).toBeLessThanOrEqual(1);

    const pane = await openPane(loaded);
    await openNote(loaded.app, original);
    await waitFor(() => rows(pane).some((r) => r.badges.includes("similar")), "similar notes", 60_000);
    const list = rows(pane);
    const first = list[0];
    expect(first?.path).toBe(copy);
    expect(first?.badges[0]).toBe(`near copy · ${Math.round(overlap * 100)}% shared`);
    expect(first?.badges).toContain("similar");
    expect(first?.el.querySelector(".quire-related-path")?.textContent).toBe("Areas/Tea notes (copy)");
    expect(first?.el.querySelector(".quire-rel-near-copy")?.getAttribute("title")).toContain(`${Math.round(overlap * 100)}% of their own text`);
    expect(tipScore(first?.similarTip ?? null)).toBe(route.near_copies?.[0]?.score.toFixed(2));
    // The other similar notes, the most similar of them too, are plainly "similar", without a mark or a compare button.
    const others = list.slice(1);
    const closest = (route.similar ?? []).find((n) => n.path !== copy && n.path !== original);
    expect(others.find((r) => r.path === closest?.path)?.badges).toContain("similar");
    expect(others.filter((r) => r.badges.includes("similar")).length).toBeGreaterThan(2);
    for (const row of others) {
      expect(row.badges.some((b) => b.startsWith("near copy"))).toBe(false);
      expect(row.el.querySelector(".quire-compare, .quire-related-path")).toBeNull();
    }
    expect(pane.containerEl.querySelectorAll(".quire-compare")).toHaveLength(1);
    await screenshot("similar-pane-near-copy", pane.containerEl);
  }, 120_000);

  it("compares the copy with the note: it opens to the right of the note, and is brought forward when open", async () => {
    const pane = await openPane(loaded);
    const workspace = loaded.app.shimWorkspace;
    const left = leafOf(loaded, original);
    expect(left).toBeDefined();
    const button = await waitFor(() => pane.containerEl.querySelector<HTMLButtonElement>(`[data-path="${copy}"] .quire-compare`), "the compare button");
    expect(button.textContent).toBe("Compare");
    button.click();
    const right = await waitFor(() => leafOf(loaded, copy), "the copy to open");
    expect(right.shimSplit?.from).toBe(left);
    expect(right.shimSplit?.direction).toBe("vertical");
    expect(right.shimSplit?.before).toBe(false);
    // The note stays where it was, beside its copy.
    expect(leafOf(loaded, original)).toBe(left);
    expect(workspace.shimActiveLeaf).toBe(right);

    // The pane follows the copy, where the note is the near copy; comparing again opens nothing new.
    const back = await related(server, copy);
    const share = Math.round((back.near_copies?.find((c) => c.path === original)?.overlap ?? NaN) * 100);
    await waitFor(() => rows(pane)[0]?.path === original, "the copy's related notes");
    expect(rows(pane)[0]?.badges[0]).toBe(`near copy · ${share}% shared`);
    const leaves = workspace.shimLeaves.length;
    const revealed = workspace.shimRevealed.length;
    pane.containerEl.querySelector<HTMLButtonElement>(`[data-path="${original}"] .quire-compare`)?.click();
    await waitFor(() => workspace.shimRevealed.length > revealed, "the note brought forward");
    expect(workspace.shimRevealed.at(-1)).toBe(left);
    expect(workspace.shimLeaves).toHaveLength(leaves);
  }, 60_000);
});
