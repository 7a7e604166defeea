// The search modal of the built plugin against a real `quire serve` on the sample vault.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectContractViolation } from "./contract";
import { key, loadPlugin, makeVault, startQuire, type, waitFor, type Loaded, type QuireServer, type TestVault } from "./harness";
import { MarkdownView, Modal } from "./obsidian-shim";
import { closeBrowser, screenshot } from "./screenshot";

let vault: TestVault;
let server: QuireServer;
let loaded: Loaded;

beforeAll(async () => {
  vault = makeVault();
  server = await startQuire(vault);
  loaded = await loadPlugin(vault.vault, { serverUrl: server.url, searchLimit: 5 });
  await waitFor(() => loaded.app.shimStatusBarEl.textContent?.includes("47 notes"), "the status bar to show the index");
});

afterAll(async () => {
  loaded?.unload();
  await server?.stop();
  await closeBrowser();
  vault?.remove();
});

function openModal(): Modal {
  loaded.app.shimRunCommand("quire:search");
  const modal = Modal.shimOpen.at(-1);
  if (!modal) throw new Error("the search modal did not open");
  return modal;
}

describe("search", () => {
  it("is a command and a ribbon icon, with no default hotkey", () => {
    const command = loaded.app.shimCommands.get("quire:search");
    expect(command?.name).toBe("Search notes");
    expect(command?.hotkeys).toBeUndefined();
    const ribbon = loaded.app.shimRibbonEl.querySelector('[aria-label="Search notes with quire"]');
    expect(ribbon).not.toBeNull();
    (ribbon as HTMLElement).click();
    const modal = Modal.shimOpen.at(-1);
    expect(modal?.modalEl.hasClass("quire-search-modal")).toBe(true);
    modal?.close();
  });

  it("searches as you type, once typing pauses, and groups sections by note", async () => {
    const modal = openModal();
    const input = modal.contentEl.querySelector("input") as HTMLInputElement;
    type(input, "sour");
    type(input, "sourdough");
    type(input, "sourdough starter");
    const results = await waitFor(() => modal.contentEl.querySelectorAll(".quire-result").length > 0 && modal.contentEl.querySelectorAll(".quire-result"), "results");
    const first = results[0] as HTMLElement;
    expect(first.dataset.path).toBe("Resources/Sourdough Starter.md");
    expect(first.querySelector(".quire-result-title")?.textContent).toBe("Sourdough Starter");
    // One note, several sections, each with its heading path, lines and a marked snippet.
    const sections = first.querySelectorAll(".quire-section");
    expect(sections.length).toBeGreaterThan(1);
    const paths = [...sections].map((s) => s.querySelector(".quire-heading-path")?.textContent);
    expect(paths).toContain("Sourdough Starter › Feeding schedule");
    expect(sections[0]?.querySelector(".quire-lines")?.textContent).toMatch(/^L\d+–\d+$/);
    expect([...first.querySelectorAll("mark")].map((m) => m.textContent?.toLowerCase())).toContain("starter");
    // Each note once.
    const notes = [...results].map((r) => (r as HTMLElement).dataset.path);
    expect(new Set(notes).size).toBe(notes.length);
    expect(notes.length).toBeLessThanOrEqual(5);
    expect(modal.contentEl.querySelector(".quire-search-info")?.textContent).toMatch(/notes? · bm25 · generation 1/);
    await screenshot("search-modal", modal.modalEl);
    modal.close();
  });

  it("opens the chosen section's note at its lines (↓ then Enter)", async () => {
    const modal = openModal();
    const input = modal.contentEl.querySelector("input") as HTMLInputElement;
    type(input, "feeding schedule ratio");
    await waitFor(() => modal.contentEl.querySelector(".quire-section.is-selected"), "a selected section");
    const choices = [...modal.contentEl.querySelectorAll(".quire-choice")];
    const selected = choices.findIndex((c) => c.hasClass("is-selected"));
    key(input, "ArrowDown");
    const chosen = choices[selected + 1] as HTMLElement;
    expect(chosen.hasClass("is-selected")).toBe(true);
    const path = (chosen.closest(".quire-result") as HTMLElement).dataset.path;
    const lines = /L(\d+)–(\d+)/.exec(chosen.querySelector(".quire-lines")?.textContent ?? "");
    key(input, "Enter");
    expect(Modal.shimOpen).not.toContain(modal);
    const view = await waitFor(() => {
      const v = loaded.app.shimWorkspace.shimActiveLeaf?.shimView;
      return v instanceof MarkdownView && v.file?.path === path && v;
    }, "the note to open");
    const start = Number(lines?.[1]) - 1;
    const end = Number(lines?.[2]) - 1;
    await waitFor(() => view.shimEditor.shimScrolledTo, "the editor to scroll");
    expect(view.shimEditor.getCursor()).toEqual({ line: start, ch: 0 });
    expect(view.shimEditor.shimScrolledTo?.range.from.line).toBe(start);
    expect(view.shimEditor.shimScrolledTo?.range.to.line).toBe(end);
    expect(loaded.app.shimWorkspace.shimActiveLeaf?.shimEState).toEqual({ line: start });
  });

  it("says so when nothing matches, and shows the server's error as text", async () => {
    const modal = openModal();
    const input = modal.contentEl.querySelector("input") as HTMLInputElement;
    type(input, "zzzqqqxxy");
    await waitFor(() => modal.contentEl.querySelector(".quire-search-info")?.textContent?.startsWith("No note matched"), "no results");
    // A query over the document's 1,000 characters, on purpose: the plugin leaves the limit to the server.
    expectContractViolation(/^GET \/api\/search\?/, /^query parameter q: 1001 characters, more than maxLength 1000$/);
    type(input, "x".repeat(1001));
    const info = await waitFor(() => modal.contentEl.querySelector(".quire-search-info.is-error"), "an error");
    expect(info.textContent).toMatch(/1,?000/);
    modal.close();
  });
});
