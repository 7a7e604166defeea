// "Draft this section" of the built plugin against a real `quire serve` with a scripted model:
// the draft streams into a preview, and Insert puts it at the end of the section as one editor
// change that undo takes back, without touching the file.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  loadPlugin,
  makeVault,
  noticesSince,
  openNote,
  startFakeChat,
  startQuire,
  waitFor,
  type FakeChat,
  type Loaded,
  type QuireServer,
  type TestVault,
} from "./harness";
import { Menu, Modal, Notice, type MarkdownView } from "./obsidian-shim";
import { closeBrowser, screenshot } from "./screenshot";

const NOTE = "Projects/Sourdough Experiment.md";
const DRAFT = [
  "Each bake used the same flour blend as the [[Country Loaf]] ",
  "and a levain fed at the usual ratio [S2].\n\n",
  "Bulk fermentation ran warm, so the dough was checked every half hour [S1].",
];
const SLOW = ["One ", "piece ", "at ", "a ", "time ", "until ", "you ", "stop ", "me."];

let vault: TestVault;
let chat: FakeChat;
let server: QuireServer;
let loaded: Loaded;

beforeAll(async () => {
  vault = makeVault();
  chat = await startFakeChat([DRAFT, SLOW]);
  server = await startQuire(vault, { chatUrl: chat.url });
  loaded = await loadPlugin(vault.vault, { serverUrl: server.url });
});

afterAll(async () => {
  loaded?.unload();
  await server?.stop();
  await chat?.close();
  await closeBrowser();
  vault?.remove();
});

function lineOf(view: MarkdownView, text: string): number {
  const line = view.shimEditor.getValue().split("\n").indexOf(text);
  if (line < 0) throw new Error(`no line ${text}`);
  return line;
}

function draftModal(): Modal {
  const modal = Modal.shimOpen.at(-1);
  if (!modal?.modalEl.hasClass("quire-draft-modal")) throw new Error("the draft preview did not open");
  return modal;
}

describe("draft this section", () => {
  it("streams the draft of the section at the cursor and inserts it as one change that undo takes back", async () => {
    const view = await openNote(loaded.app, NOTE);
    const editor = view.shimEditor;
    const original = editor.getValue();
    // The cursor in the middle of the Setup section's list.
    editor.setCursor({ line: lineOf(view, "- Salt: 2%"), ch: 3 });
    loaded.app.shimRunCommand("quire:draft-section");
    const modal = draftModal();
    expect(modal.titleEl.textContent).toBe("Draft: Setup");
    const body = modal.contentEl.querySelector(".quire-draft-body") as HTMLElement;
    const insert = [...modal.contentEl.querySelectorAll("button")].find((b) => b.textContent === "Insert") as HTMLButtonElement;

    await waitFor(() => body.textContent?.includes("Country Loaf"), "the first streamed piece");
    expect(body.hasClass("is-streaming")).toBe(true);
    expect(insert.disabled).toBe(true);
    await waitFor(() => !insert.disabled, "the complete draft");
    expect(body.hasClass("is-streaming")).toBe(false);
    expect(body.querySelector("a.internal-link")?.textContent).toBe("Country Loaf");
    expect(modal.contentEl.querySelectorAll(".quire-source").length).toBeGreaterThan(0);
    // The server was asked for that heading of that note.
    expect(JSON.stringify(chat.requests.at(-1)?.messages)).toContain("Setup");
    await screenshot("draft-preview", modal.modalEl);

    insert.click();
    expect(Modal.shimOpen).not.toContain(modal);
    expect(editor.shimRecords).toHaveLength(1);
    expect(editor.shimRecords[0]?.kind).toBe("transaction");
    const lines = editor.getValue().split("\n");
    const bulk = lines.indexOf("- Bulk at about 24 °C");
    expect(lines.slice(bulk, bulk + 6)).toEqual([
      "- Bulk at about 24 °C",
      "",
      // quire turns the model's [S2] into a link to the source note.
      "Each bake used the same flour blend as the [[Country Loaf]] and a levain fed at the usual ratio [[Sourdough Starter]].",
      "",
      "Bulk fermentation ran warm, so the dough was checked every half hour [[Sourdough Starter]].",
      "",
    ]);
    expect(lines[bulk + 6]).toBe("## Results");
    // Only the editor changed: the file is Obsidian's to save.
    expect(readFileSync(join(vault.vault, NOTE), "utf8")).toBe(original);
    editor.undo();
    expect(editor.getValue()).toBe(original);
  });

  it("is in the editor's context menu, and Cancel stops the request", async () => {
    const view = await openNote(loaded.app, NOTE);
    view.shimEditor.setCursor({ line: lineOf(view, "## Observations") + 1, ch: 0 });
    chat.delayMs = 400;
    const menu = new Menu();
    loaded.app.shimWorkspace.trigger("editor-menu", menu, view.editor, view);
    const item = menu.shimItems.find((i) => i.shimTitle === "Draft this section");
    expect(item?.shimIcon).toBe("pen-line");
    item?.shimClick();
    const modal = draftModal();
    expect(modal.titleEl.textContent).toBe("Draft: Observations");
    const cancelled = chat.cancelled;
    await waitFor(() => modal.contentEl.querySelector(".quire-draft-body")?.textContent, "the first piece");
    [...modal.contentEl.querySelectorAll("button")].find((b) => b.textContent === "Cancel")?.click();
    expect(Modal.shimOpen).not.toContain(modal);
    await waitFor(() => chat.cancelled > cancelled, "quire to cancel the model call", 10_000);
    expect(view.shimEditor.shimRecords).toHaveLength(0);
    chat.delayMs = 150;
  });

  it("asks for a heading when the cursor is above every heading", async () => {
    const view = await openNote(loaded.app, NOTE);
    view.shimEditor.setCursor({ line: 1, ch: 0 });
    const before = Notice.shimShown.length;
    const open = Modal.shimOpen.length;
    loaded.app.shimRunCommand("quire:draft-section");
    expect(Modal.shimOpen.length).toBe(open);
    expect(noticesSince(before)).toEqual(["Click inside a section, under its heading, to draft it."]);
  });
});

describe("draft without a language model", () => {
  let other: TestVault;
  let plain: QuireServer;
  let local: Loaded;

  beforeAll(async () => {
    other = makeVault();
    plain = await startQuire(other);
    local = await loadPlugin(other.vault, { serverUrl: plain.url });
  });

  afterAll(async () => {
    local?.unload();
    await plain?.stop();
    other?.remove();
  });

  it("shows the gathered material and does not offer to insert it", async () => {
    const view = await openNote(local.app, NOTE);
    view.shimEditor.setCursor({ line: lineOf(view, "## Setup"), ch: 0 });
    local.app.shimRunCommand("quire:draft-section");
    const modal = draftModal();
    await waitFor(() => modal.contentEl.querySelector(".quire-source"), "the material");
    const warnings = [...modal.contentEl.querySelectorAll(".quire-warning")].map((w) => w.textContent);
    expect(warnings.some((w) => w?.includes("cannot be inserted"))).toBe(true);
    const insert = [...modal.contentEl.querySelectorAll("button")].find((b) => b.textContent === "Insert") as HTMLButtonElement;
    expect(insert.disabled).toBe(true);
    modal.close();
  });
});
