// "Ask this document" of the built plugin against a real `quire serve` (`POST /api/article/ask`)
// whose language model is a scripted fake: a pasted text and the note in the editor, each answered
// from that text alone, with its citations and the lines they cite; and what is never sent.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bodyBytes, BODY_LIMIT, documentKind, linesOf, sizeProblem } from "../src/document";
import { key, loadPlugin, makeVault, openNote, startFakeChat, startQuire, waitFor, type FakeChat, type Loaded, type QuireServer, type TestVault } from "./harness";
import { MarkdownView, Modal } from "./obsidian-shim";

const OTTERS = [
  "# Otters",
  "",
  "Sea otters live along the coasts of the North Pacific.",
  "",
  "## Sleeping",
  "",
  "Otters hold hands while they sleep, so that they do not drift apart.",
  "A group of resting otters is called a raft.",
  "",
  "## Food",
  "",
  "They eat sea urchins and crabs, and open shells with a stone.",
].join("\n");

const PASTED_ANSWER = ["They hold **hands** ", "while they sleep [S1]."];
const NOTE_ANSWER = ["Once a day on the counter [S1]."];

describe("the document helpers", () => {
  it("tells a note, a PDF and anything else apart", () => {
    expect(documentKind({ extension: "md" })).toBe("note");
    expect(documentKind({ extension: "PDF" })).toBe("pdf");
    expect(documentKind({ extension: "canvas" })).toBe("paste");
    expect(documentKind(null)).toBe("paste");
  });

  it("measures the body as the server does, and cites lines 1-based and inclusive", () => {
    expect(bodyBytes("é", "n", "q")).toBe(JSON.stringify({ text: "é", name: "n", question: "q" }).length + 1);
    expect(sizeProblem("a".repeat(1000), "n", "q")).toBeNull();
    expect(sizeProblem("a".repeat(BODY_LIMIT), "n", "q")).toMatch(/^The document is too long to ask in one request: 65 KiB with the question, of at most 64 KiB/);
    expect(linesOf(OTTERS, 7, 8)).toBe("Otters hold hands while they sleep, so that they do not drift apart.\nA group of resting otters is called a raft.");
    expect(linesOf(OTTERS, 1, 1)).toBe("# Otters");
  });
});

describe("ask this document", () => {
  let vault: TestVault;
  let chat: FakeChat;
  let server: QuireServer;
  let loaded: Loaded;

  beforeAll(async () => {
    vault = makeVault();
    chat = await startFakeChat([PASTED_ANSWER, NOTE_ANSWER]);
    server = await startQuire(vault, { chatUrl: chat.url });
    loaded = await loadPlugin(vault.vault, { serverUrl: server.url });
  });

  afterAll(async () => {
    for (const modal of [...Modal.shimOpen]) modal.close();
    loaded?.unload();
    await server?.stop();
    await chat?.close();
    vault?.remove();
  });

  async function openDialog(): Promise<Modal> {
    const before = Modal.shimOpen.length;
    loaded.app.shimRunCommand("quire:ask-document");
    return waitFor(() => Modal.shimOpen.length > before && Modal.shimOpen[Modal.shimOpen.length - 1], "the dialog");
  }

  function sources(modal: Modal): { id: string; lines: string; text: string; cited: boolean }[] {
    return [...modal.contentEl.querySelectorAll<HTMLElement>(".quire-document-source")].map((item) => ({
      id: item.dataset.source ?? "",
      lines: item.querySelector(".quire-lines")?.textContent ?? "",
      text: item.querySelector(".quire-document-lines")?.textContent ?? "",
      cited: item.hasClass("is-cited"),
    }));
  }

  it("answers from a pasted text alone, streamed, then with its citation and the lines it cites", async () => {
    // No note is open: the dialog starts empty, for a pasted text.
    const modal = await openDialog();
    expect(modal.titleEl.textContent).toBe("Ask this document");
    const text = modal.contentEl.querySelector(".quire-document-text") as HTMLTextAreaElement;
    expect(text.value).toBe("");
    text.value = OTTERS;
    const question = modal.contentEl.querySelector(".quire-document-question") as HTMLTextAreaElement;
    question.value = "Why do otters hold hands?";
    key(question, "Enter");
    const body = modal.contentEl.querySelector(".quire-answer-body") as HTMLElement;
    await waitFor(() => body.textContent?.includes("**hands**"), "the streamed answer");
    expect(body.hasClass("is-streaming")).toBe(true);
    await waitFor(() => !body.hasClass("is-streaming") && sources(modal).length > 0, "the complete answer");
    expect(body.querySelector("strong")?.textContent).toBe("hands");
    expect([...body.querySelectorAll("a.quire-cite")].map((a) => a.textContent)).toEqual(["S1"]);
    expect(modal.contentEl.querySelector(".quire-answer-meta")?.textContent).toMatch(/^Written by fake-model .*from this document$/);
    const [first] = sources(modal);
    expect(first?.id).toBe("S1");
    expect(first?.cited).toBe(true);
    // The card shows the lines of the pasted text it names.
    const range = /^lines? (\d+)(?:–(\d+))?$/.exec(first?.lines ?? "");
    expect(range).not.toBeNull();
    const start = Number(range?.[1]);
    const end = Number(range?.[2] ?? range?.[1]);
    expect(first?.text).toBe(linesOf(OTTERS, start, end));
    expect(first?.text).toContain("hold hands");
    // The model got the question and the pasted text, and nothing of the vault.
    const prompt = JSON.stringify(chat.requests[0]?.messages);
    expect(prompt).toContain("Why do otters hold hands?");
    expect(prompt).toContain("hold hands while they sleep");
    expect(prompt).not.toContain("Bubbles");
    modal.close();
  });

  it("asks the note in the editor, and a cited passage opens the note at its lines", async () => {
    const path = "Resources/Sourdough Starter.md";
    await openNote(loaded.app, path);
    const modal = await openDialog();
    const onDisk = readFileSync(join(vault.vault, path), "utf8");
    expect((modal.contentEl.querySelector(".quire-document-text") as HTMLTextAreaElement).value).toBe(onDisk);
    expect(modal.contentEl.querySelector(".quire-document-from")?.textContent).toContain(path);
    const question = modal.contentEl.querySelector(".quire-document-question") as HTMLTextAreaElement;
    question.value = "How often is the starter fed?";
    (modal.contentEl.querySelector(".quire-document-button") as HTMLButtonElement).click();
    await waitFor(() => sources(modal).some((s) => s.cited), "the cited passage");
    const cited = sources(modal).find((s) => s.cited);
    const link = modal.contentEl.querySelector<HTMLElement>(".quire-document-source.is-cited a.quire-lines");
    const range = /(\d+)(?:–(\d+))?$/.exec(link?.textContent ?? "");
    expect(cited?.text).toBe(linesOf(onDisk, Number(range?.[1]), Number(range?.[2] ?? range?.[1])));
    expect(cited?.id).toBe("S1");
    // The model was given the question and the passage the card shows (its first line, say), from the note alone.
    const prompt = (chat.requests[1]?.messages ?? []).map((m) => m.content).join("\n");
    expect(prompt).toContain("How often is the starter fed?");
    expect(prompt).toContain((cited?.text ?? "").split("\n").find((line) => line.trim()) ?? "-");
    expect(prompt).not.toContain("Otters");
    link?.click();
    expect(Modal.shimOpen).not.toContain(modal);
    const view = await waitFor(() => {
      const v = loaded.app.shimWorkspace.shimActiveLeaf?.shimView;
      return v instanceof MarkdownView && v.file?.path === path && v.shimEditor.shimScrolledTo && v;
    }, "the note at the cited lines");
    expect(view.shimEditor.getCursor().line).toBe(Number(range?.[1]) - 1);
  });

  it("sends nothing for a document over the body limit, and says so", async () => {
    const modal = await openDialog();
    const requests = chat.requests.length;
    (modal.contentEl.querySelector(".quire-document-text") as HTMLTextAreaElement).value = "Otters. ".repeat(9000);
    (modal.contentEl.querySelector(".quire-document-question") as HTMLTextAreaElement).value = "Why?";
    (modal.contentEl.querySelector(".quire-document-button") as HTMLButtonElement).click();
    await waitFor(() => modal.contentEl.querySelector(".quire-answer-meta")?.textContent?.startsWith("The document is too long"), "the refusal");
    const bytes = bodyBytes("Otters. ".repeat(9000), "Resources/Sourdough Starter.md", "Why?");
    expect(modal.contentEl.querySelector(".quire-answer-meta")?.textContent).toContain(`${Math.ceil(bytes / 1024)} KiB with the question`);
    await new Promise((r) => setTimeout(r, 200));
    expect(chat.requests.length).toBe(requests);
    modal.close();
  });
});
