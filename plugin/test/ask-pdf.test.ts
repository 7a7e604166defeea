// "Ask this document" on the PDF in the editor, of the built plugin against a real `quire serve`
// whose index holds a small PDF page by page, and a scripted fake model: the question goes to
// `POST /api/ask` with the PDF as its `note`, the answer comes from that PDF's pages alone and
// cites them by page, a card or a citation opens the PDF at its page (in the ask view, the draft
// preview and search too), Stop cancels, and a PDF the index does not have yet is said to be not
// indexed. Nothing is written into the vault.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  buildIndex,
  getJson,
  key,
  loadPlugin,
  makeVault,
  noticesSince,
  openNote,
  startFakeChat,
  startQuire,
  startRecorder,
  treeBytes,
  type,
  waitFor,
  type FakeChat,
  type Loaded,
  type QuireServer,
  type Recorder,
  type TestVault,
} from "./harness";
import { Modal, Notice, PdfView } from "./obsidian-shim";
import { makePdf } from "./pdf";
import { closeBrowser, screenshot } from "./screenshot";

const PDF = "Papers/Kelp.pdf";
/** A note with a section to draft, about what the PDF's pages say. */
const NOTE = "Notes/Kelp reading.md";
const NOTE_TEXT = "# Kelp reading\n\nWhat I read about kelp forests.\n\n## Urchin grazing and recovery\n\n";
const PAGES = [
  ["Photosynthesis in kelp forests", "Carbon is fixed near the surface."],
  ["Grazing by sea urchins", "Urchin barrens follow the loss of otters."],
  ["Recovery after marine heatwaves", "Kelp returns within four years."],
];
const QUESTION = "What do sea urchins do to kelp, and how does it recover after heatwaves?";
const ANSWER = ["Sea urchins graze the **kelp** down to barrens [S1], ", "and the kelp returns within four years [S2]."];
const SLOW = ["One ", "page ", "at ", "a ", "time ", "until ", "you ", "stop ", "me."];

let vault: TestVault;
let chat: FakeChat;
let server: QuireServer;
let recorder: Recorder;
let loaded: Loaded;
/** The vault's files and their bytes once the PDF is in it. */
let before: Record<string, string>;

beforeAll(async () => {
  // The PDF is in the vault before it is indexed: the index reads it page by page.
  vault = makeVault({ index: false });
  mkdirSync(join(vault.vault, "Papers"));
  writeFileSync(join(vault.vault, PDF), makePdf(PAGES));
  buildIndex(["--vault", vault.vault, "--index-dir", vault.index, "--no-embeddings"]);
  // A note to draft a section of: read from disk when drafted, and left out of the index (so
  // that asking the vault finds the PDF's pages rather than it).
  mkdirSync(join(vault.vault, "Notes"), { recursive: true });
  writeFileSync(join(vault.vault, NOTE), NOTE_TEXT);
  before = treeBytes(vault.vault);
  chat = await startFakeChat([ANSWER, ANSWER, ANSWER, SLOW]);
  // Not watching: a PDF written later stays out of the index (as one is until the next sync).
  server = await startQuire(vault, { chatUrl: chat.url, serveArgs: ["--no-watch"] });
  recorder = await startRecorder(server.url);
  loaded = await loadPlugin(vault.vault, { serverUrl: recorder.url });
});

afterAll(async () => {
  for (const modal of [...Modal.shimOpen]) modal.close();
  loaded?.unload();
  await recorder?.close();
  await server?.stop();
  await chat?.close();
  await closeBrowser();
  vault?.remove();
});

/** Opens a file of the vault in the main area, as clicking it in the file explorer does. */
async function openFile(path: string): Promise<void> {
  const file = loaded.app.vault.getFileByPath(path);
  if (!file) throw new Error(`no file ${path}`);
  await loaded.app.workspace.getLeaf(false).openFile(file);
  expect(loaded.app.workspace.getActiveFile()?.path).toBe(path);
}

async function openDialog(): Promise<Modal> {
  const count = Modal.shimOpen.length;
  loaded.app.shimRunCommand("quire:ask-document");
  return waitFor(() => Modal.shimOpen.length > count && Modal.shimOpen[Modal.shimOpen.length - 1], "the dialog");
}

function ask(modal: Modal, question: string): void {
  const input = modal.contentEl.querySelector(".quire-document-question") as HTMLTextAreaElement;
  input.value = question;
  key(input, "Enter");
}

function meta(modal: Modal): string {
  return modal.contentEl.querySelector(".quire-answer-meta")?.textContent ?? "";
}

/** The source cards shown: id → where the card says its passage is. */
function cards(modal: Modal): Map<string, string> {
  return new Map([...modal.contentEl.querySelectorAll(".quire-source-card")].map((card) => [card.getAttribute("data-source") ?? "", card.querySelector(".quire-lines")?.textContent ?? ""]));
}

/** The sources of the last answer (or draft) as the server sent them (its `done` event). */
function sentSources(records = recorder.asks): { id: string; path: string; page?: number; heading_path: string[]; cited: boolean }[] {
  const done = records.at(-1)?.done;
  if (!done || !Array.isArray(done.sources)) throw new Error("no done event was recorded");
  return done.sources as { id: string; path: string; page?: number; heading_path: string[]; cited: boolean }[];
}

/** The page the server gave source `id` (of the last answer, or of the last draft). */
function pageOf(id: string, records = recorder.asks): number {
  const page = sentSources(records).find((s) => s.id === id)?.page;
  if (typeof page !== "number") throw new Error(`source ${id} has no page`);
  return page;
}

/** Asks the PDF in the editor `QUESTION`; resolves with the dialog once the answer is complete. */
async function askThePdf(): Promise<Modal> {
  await openFile(PDF);
  const modal = await openDialog();
  ask(modal, QUESTION);
  await waitFor(() => !modal.contentEl.querySelector(".quire-answer-body")?.hasClass("is-streaming") && cards(modal).size > 0, "the complete answer");
  return modal;
}

/** Waits for a PDF opened at a page in the active leaf; resolves with its path and the page (`#page=N`). */
function openedPdf(): Promise<{ path: string | undefined; subpath: unknown }> {
  return waitFor(() => {
    const leaf = loaded.app.shimWorkspace.shimActiveLeaf;
    const view = leaf?.shimView;
    return view instanceof PdfView && leaf?.shimEState?.subpath !== undefined && { path: view.file?.path, subpath: leaf.shimEState.subpath };
  }, "a PDF opened at a page");
}

describe("ask this PDF", () => {
  it("asks the PDF in the editor through the index: its pages alone, streamed, cited by page", async () => {
    await openFile(PDF);
    const notices = Notice.shimShown.length;
    const modal = await openDialog();
    expect(modal.titleEl.textContent).toBe("Ask this PDF");
    expect(modal.contentEl.querySelector(".quire-document-from")?.textContent).toBe(
      `From the PDF ${PDF} alone, page by page, through the vault's index (not the rest of the vault). A cited page opens the PDF at that page.`,
    );
    // There is no text to edit: the server has the PDF's pages.
    expect(modal.contentEl.querySelector(".quire-document-text")).toBeNull();
    ask(modal, QUESTION);
    const body = modal.contentEl.querySelector(".quire-answer-body") as HTMLElement;
    await waitFor(() => body.textContent?.includes("**kelp**"), "the streamed answer");
    expect(body.hasClass("is-streaming")).toBe(true);
    expect((modal.contentEl.querySelector(".quire-document-button") as HTMLButtonElement).textContent).toBe("Stop");
    await waitFor(() => !body.hasClass("is-streaming") && cards(modal).size > 0, "the complete answer");
    expect(body.querySelector("strong")?.textContent).toBe("kelp");
    expect(meta(modal)).toMatch(/^Written by fake-model .*from this PDF$/);
    expect(noticesSince(notices)).toEqual([]);

    // The request named the PDF, with nothing the server's OpenAPI document does not describe.
    const asked = recorder.asks.at(-1);
    expect(asked?.body).toEqual({ question: QUESTION, note: PDF });
    const openapi = (await getJson(`${server.url}/api/openapi.json`)) as {
      paths: Record<string, { post: { requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> } } }>;
    };
    const described = Object.keys(openapi.paths["/api/ask"]?.post.requestBody.content["application/json"]?.schema.properties ?? {});
    expect(described).toEqual(expect.arrayContaining(Object.keys(asked?.body ?? { missing: true })));

    // Every passage is one of the PDF's pages, and its card says which.
    const sources = sentSources();
    expect(sources.length).toBeGreaterThanOrEqual(2);
    expect(sources.every((s) => s.path === PDF && typeof s.page === "number")).toBe(true);
    expect(cards(modal)).toEqual(new Map(sources.map((s) => [s.id, `${PDF}, page ${pageOf(s.id)}`])));
    // The page is said once: the server's heading path of a page ("Page 2") is not shown above it.
    expect(sources.every((s) => s.heading_path.join() === `Page ${s.page}`)).toBe(true);
    expect(modal.contentEl.querySelectorAll(".quire-source-card .quire-heading-path")).toHaveLength(0);
    expect([...body.querySelectorAll("a.quire-cite")].map((a) => a.textContent)).toEqual(["S1", "S2"]);
    // The model was given the question and the PDF's text, and nothing of the vault's notes.
    const prompt = (chat.requests[0]?.messages ?? []).map((m) => m.content).join("\n");
    expect(prompt).toContain(QUESTION);
    expect(prompt).toContain(PAGES[pageOf("S1") - 1]?.[1] ?? "-");
    expect(prompt).not.toContain("Sourdough");
    await screenshot("ask-pdf", modal.modalEl);

    // A card opens the PDF at its page, and closes the dialog.
    const card = modal.contentEl.querySelector('.quire-source-card[data-source="S2"]') as HTMLElement;
    card.click();
    expect(await openedPdf()).toEqual({ path: PDF, subpath: `#page=${pageOf("S2")}` });
    expect(loaded.app.shimWorkspace.shimLinksOpened).toEqual([`${PDF}#page=${pageOf("S2")}`]);
    expect(Modal.shimOpen).not.toContain(modal);
  });

  it("opens the PDF at the cited page from a citation, and writes nothing into the vault", async () => {
    const modal = await askThePdf();
    const opened = loaded.app.shimWorkspace.shimLinksOpened.length;
    (modal.contentEl.querySelector('a.quire-cite[data-source="S1"]') as HTMLElement).click();
    expect(await openedPdf()).toEqual({ path: PDF, subpath: `#page=${pageOf("S1")}` });
    expect(loaded.app.shimWorkspace.shimLinksOpened.slice(opened)).toEqual([`${PDF}#page=${pageOf("S1")}`]);
    expect(Modal.shimOpen).not.toContain(modal);
    expect(treeBytes(vault.vault)).toEqual(before);
  });

  it("in the ask view too, a PDF's card opens the PDF at its page", async () => {
    loaded.app.shimRunCommand("quire:ask");
    const leaf = await waitFor(() => loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-ask"), "the ask view");
    const view = leaf.shimView.containerEl;
    const input = view.querySelector("textarea") as HTMLTextAreaElement;
    input.value = QUESTION;
    key(input, "Enter");
    const card = await waitFor(
      () => [...view.querySelectorAll<HTMLElement>(".quire-source-card")].find((c) => c.querySelector(".quire-lines")?.textContent?.startsWith(`${PDF}, page `)),
      "a card of the PDF",
    );
    const id = card.getAttribute("data-source") ?? "";
    // The vault was asked, not the PDF alone.
    expect(recorder.asks.at(-1)?.body.note).toBeUndefined();
    expect(card.querySelector(".quire-lines")?.textContent).toBe(`${PDF}, page ${pageOf(id)}`);
    expect(card.querySelector(".quire-heading-path")).toBeNull();
    // A note's card keeps its heading path.
    const note = sentSources().find((s) => s.page === undefined);
    expect(note?.heading_path.length).toBeGreaterThan(0);
    expect(view.querySelector(`.quire-source-card[data-source="${note?.id}"] .quire-heading-path`)?.textContent).toBe(note?.heading_path.join(" › "));
    await openFile("Home.md");
    card.click();
    expect(await openedPdf()).toEqual({ path: PDF, subpath: `#page=${pageOf(id)}` });
    expect(loaded.app.shimWorkspace.shimLinksOpened.at(-1)).toBe(`${PDF}#page=${pageOf(id)}`);
  });

  it("in the draft preview too, a PDF's card says its page once and opens the PDF at its page", async () => {
    chat.reply = () => "Urchins graze kelp down to barrens [S1].";
    try {
      const view = await openNote(loaded.app, NOTE);
      view.shimEditor.setCursor({ line: NOTE_TEXT.split("\n").indexOf("## Urchin grazing and recovery") + 1, ch: 0 });
      loaded.app.shimRunCommand("quire:draft-section");
      const modal = Modal.shimOpen.at(-1);
      if (!modal?.modalEl.hasClass("quire-draft-modal")) throw new Error("the draft preview did not open");
      const card = await waitFor(
        () => [...modal.contentEl.querySelectorAll<HTMLElement>(".quire-source-card")].find((c) => c.querySelector(".quire-lines")?.textContent?.startsWith(`${PDF}, page `)),
        "a card of the PDF",
      );
      const id = card.getAttribute("data-source") ?? "";
      expect(recorder.drafts.at(-1)?.body).toEqual({ note: NOTE, heading: "## Urchin grazing and recovery" });
      expect(card.querySelector(".quire-lines")?.textContent).toBe(`${PDF}, page ${pageOf(id, recorder.drafts)}`);
      expect(card.querySelector(".quire-heading-path")).toBeNull();
      // The card closes the preview and opens the PDF at its page, not at its first page.
      const opened = loaded.app.shimWorkspace.shimLinksOpened.length;
      card.click();
      expect(Modal.shimOpen).not.toContain(modal);
      expect(await openedPdf()).toEqual({ path: PDF, subpath: `#page=${pageOf(id, recorder.drafts)}` });
      expect(loaded.app.shimWorkspace.shimLinksOpened.slice(opened)).toEqual([`${PDF}#page=${pageOf(id, recorder.drafts)}`]);
    } finally {
      chat.reply = undefined;
    }
  });

  it("in search too, a PDF's section says its page and opens the PDF at it", async () => {
    await openFile("Home.md");
    loaded.app.shimRunCommand("quire:search");
    const modal = Modal.shimOpen.at(-1);
    if (!modal?.modalEl.hasClass("quire-search-modal")) throw new Error("the search modal did not open");
    type(modal.contentEl.querySelector("input") as HTMLInputElement, "urchins grazing");
    const result = await waitFor(() => modal.contentEl.querySelector<HTMLElement>(`.quire-result[data-path="${PDF}"]`), "the PDF among the results");
    const sections = [...result.querySelectorAll<HTMLElement>(".quire-section")];
    expect(sections.length).toBeGreaterThan(0);
    // Its page, once; not the lines of its extracted text.
    expect(sections[0]?.querySelector(".quire-lines")?.textContent).toBe("page 2");
    expect(sections[0]?.querySelector(".quire-heading-path")).toBeNull();
    const opened = loaded.app.shimWorkspace.shimLinksOpened.length;
    sections[0]?.click();
    expect(await openedPdf()).toEqual({ path: PDF, subpath: "#page=2" });
    expect(loaded.app.shimWorkspace.shimLinksOpened.slice(opened)).toEqual([`${PDF}#page=2`]);
    expect(Modal.shimOpen).not.toContain(modal);
  });

  it("stops an answer: the request is cancelled", async () => {
    await openFile(PDF);
    const modal = await openDialog();
    const cancelled = chat.cancelled;
    ask(modal, QUESTION);
    const button = modal.contentEl.querySelector(".quire-document-button") as HTMLButtonElement;
    await waitFor(() => meta(modal) === "Writing…", "the streamed answer");
    expect(button.textContent).toBe("Stop");
    button.click();
    await waitFor(() => meta(modal).startsWith("Stopped"), "the stop");
    expect(meta(modal)).toBe("Stopped. The answer above is incomplete.");
    expect(button.textContent).toBe("Ask");
    expect(cards(modal).size).toBe(0);
    // quire saw the client go and cancelled the model's answer.
    await waitFor(() => chat.cancelled > cancelled, "quire to cancel the model call", 10_000);
    modal.close();
  });

  it("says that a PDF the index does not have yet is not indexed, rather than the server's error", async () => {
    const later = "Papers/Later.pdf";
    writeFileSync(join(vault.vault, later), makePdf([["Written after the sync"]]));
    const files = treeBytes(vault.vault);
    const models = chat.requests.length;
    await openFile(later);
    const modal = await openDialog();
    ask(modal, "What does it say?");
    await waitFor(() => meta(modal).includes("not indexed"), "the refusal");
    expect(recorder.asks.at(-1)?.body).toEqual({ question: "What does it say?", note: later });
    expect(meta(modal)).toBe(
      `${later} is not indexed yet. quire reads a PDF's text page by page when it syncs the vault: wait for the sync to finish (see the status bar), or run \`quire scan\` to see whether the PDF was read or skipped, and why (a scanned PDF without a text layer has nothing to read).`,
    );
    expect(modal.contentEl.querySelector(".quire-answer-body")?.hasClass("is-error")).toBe(true);
    expect(cards(modal).size).toBe(0);
    expect(chat.requests.length).toBe(models);
    expect(treeBytes(vault.vault)).toEqual(files);
    modal.close();
  });
});
