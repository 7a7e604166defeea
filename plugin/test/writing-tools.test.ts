// The writing tools and "Save as a note" of the built plugin against a real `quire serve`: split
// makes a proposal that opens in the proposals pane; transform without a language model shows the
// server's refusal, and with the scripted model proposes its text; the batch's dry run shows the
// count in a confirmation, and cancelling it makes nothing; a cancelled tool stops waiting; a
// conversation of the ask view is saved as a proposed note with its question, answer and sources.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Proposal, ProposalSummary } from "../src/api";
import { conversationPath, conversationText, sourceLink } from "../src/conversation-note";
import { loadSettings } from "../src/settings";
import { getJson, key, loadPlugin, makeVault, noticesSince, openNote, postJson, startFakeChat, startQuire, waitFor, type FakeChat, type Loaded, type QuireServer, type TestVault } from "./harness";
import { Menu, Modal, Notice, type View } from "./obsidian-shim";
import { closeBrowser, screenshot } from "./screenshot";

const NEEDS_MODEL = "quire: `transform` needs a language model (see `quire config`: a provider, or the local model in a `local-llm` build)";
const CANCELLED =
  "quire: cancelled. The plugin stopped waiting; the server may still finish, and a proposal it makes then appears in Review proposals.";

interface Setup {
  vault: TestVault;
  server: QuireServer;
  loaded: Loaded;
}

async function setup(chatUrl?: string): Promise<Setup> {
  const vault = makeVault();
  const server = await startQuire(vault, chatUrl ? { chatUrl } : {});
  const loaded = await loadPlugin(vault.vault, { serverUrl: server.url });
  await waitFor(() => loaded.app.shimStatusBarEl.querySelector(".quire-status")?.textContent?.startsWith("quire: gen"), "the connection");
  return { vault, server, loaded };
}

async function teardown(s: Setup | undefined): Promise<void> {
  s?.loaded.unload();
  await s?.server.stop();
  s?.vault.remove();
}

async function pending(s: Setup): Promise<ProposalSummary[]> {
  return ((await getJson(`${s.server.url}/api/proposals`)) as { proposals: ProposalSummary[] }).proposals;
}

async function rejectAll(s: Setup): Promise<void> {
  for (const proposal of await pending(s)) await postJson(`${s.server.url}/api/proposals/${proposal.id}/reject`, {});
}

function paneDetail(s: Setup): HTMLElement | null {
  const leaf = s.loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-proposals");
  return leaf?.view.containerEl.querySelector<HTMLElement>(".quire-proposal-detail[data-id]") ?? null;
}

/** The proposal the pane shows once it has opened on one other than the one it showed before. */
async function shownProposal(s: Setup, before: string | undefined): Promise<{ pane: HTMLElement; proposal: Proposal }> {
  const detail = await waitFor(() => {
    const el = paneDetail(s);
    return el?.dataset.id !== before && el?.querySelector(".quire-diff-file") ? el : null;
  }, "the proposals pane on the new proposal", 30_000);
  const proposal = (await getJson(`${s.server.url}/api/proposals/${detail.dataset.id ?? ""}`)) as Proposal;
  return { pane: detail, proposal };
}

function lastModal(): Modal {
  const modal = Modal.shimOpen[Modal.shimOpen.length - 1];
  if (!modal) throw new Error("no modal is open");
  return modal;
}

function button(el: HTMLElement, text: string): HTMLButtonElement {
  const found = [...el.querySelectorAll("button")].find((b) => b.textContent === text);
  if (!found) throw new Error(`no button "${text}"`);
  return found;
}

describe("the conversation note", () => {
  it("names the note by the minute, links each source to its heading (a PDF's to its page), and keeps the latest turns that fit", () => {
    const now = new Date(2026, 11, 7, 9, 5);
    expect(conversationPath("Conversations/", now, () => false)).toBe("Conversations/Conversation 2026-12-07 0905.md");
    const taken = new Set(["Conversation 2026-12-07 0905.md"]);
    expect(conversationPath("", now, (p) => taken.has(p))).toBe("Conversation 2026-12-07 0905 2.md");
    const card = { id: "S1", path: "Areas/Sleep.md", title: "Sleep", heading_path: ["Sleep", "What [seems] to help"], start_line: 11, end_line: 16, cited: true };
    expect(sourceLink(card)).toBe("[[Areas/Sleep#What  seems  to help]]");
    expect(sourceLink({ ...card, heading_path: [] })).toBe("[[Areas/Sleep]]");
    // A PDF's page opens the PDF at that page, not at a heading it does not have.
    const pdf = { id: "S2", path: "Papers/Kelp.pdf", title: "Kelp", heading_path: ["Page 2"], start_line: 6, end_line: 9, page: 2, link: "[[Kelp.pdf#page=2]]", cited: true };
    expect(sourceLink(pdf)).toBe("[[Papers/Kelp.pdf#page=2]]");
    const answer = { kind: "generated" as const, answer: "x".repeat(30_000), citations: [], invalid_citations: [], sources: [card], warnings: [] };
    const { text, left } = conversationText(
      [
        { question: "first?", answer },
        { question: "second?", answer },
      ],
      "Conversation",
    );
    expect(left).toBe(1);
    expect(text).toContain("## second?");
    expect(text).not.toContain("## first?");
    expect(text).toContain("The first question is left out");
    expect(text.length).toBeLessThanOrEqual(48_000);
  });

  it("keeps a retriever setting of the three the server knows, and drops another", () => {
    expect(loadSettings({ retriever: "tree" }).retriever).toBe("tree");
    expect(loadSettings({ retriever: "bm25" }).retriever).toBe("");
    expect(loadSettings({ conversationFolder: " /Chats/ " }).conversationFolder).toBe("Chats");
  });
});

describe("writing tools without a language model", () => {
  let s: Setup;

  beforeAll(async () => {
    s = await setup();
  });

  afterEach(async () => {
    for (const modal of [...Modal.shimOpen]) modal.close();
    await rejectAll(s);
  });

  afterAll(async () => {
    await teardown(s);
  });

  it("splits the note in the editor: the proposal opens in the pane with its new notes", async () => {
    await openNote(s.loaded.app, "Areas/Running Training.md");
    const shown = paneDetail(s)?.dataset.id;
    s.loaded.app.shimRunCommand("quire:split-note");
    const { pane, proposal } = await shownProposal(s, shown);
    expect(proposal.title).toBe("Split Areas/Running Training.md into 4 notes (by headings)");
    expect(proposal.status).toBe("pending");
    const files = [...pane.querySelectorAll<HTMLElement>(".quire-diff-file")].map((f) => [f.dataset.path, f.querySelector(".quire-tag")?.textContent]);
    expect(files).toEqual([
      ["Areas/Principles.md", "New note"],
      ["Areas/Weekly structure.md", "New note"],
      ["Areas/Progress.md", "New note"],
      ["Areas/Race day.md", "New note"],
      ["Areas/Running Training.md", "Rewritten"],
    ]);
    expect((await pending(s)).map((p) => p.id)).toEqual([proposal.id]);
  });

  it("says the server's refusal when transforming a selection needs a model, and proposes nothing", async () => {
    const view = await openNote(s.loaded.app, "Areas/Sleep.md");
    view.shimEditor.setSelection({ line: 12, ch: 0 }, { line: 14, ch: 5 });
    const before = Notice.shimShown.length;
    s.loaded.app.shimRunCommand("quire:transform");
    const modal = lastModal();
    expect(modal.titleEl.textContent).toBe("Transform lines 13-15");
    button(modal.contentEl, "Shorten").click();
    expect(Modal.shimOpen).not.toContain(modal);
    await waitFor(() => noticesSince(before).includes(NEEDS_MODEL), "the server's message");
    // While it ran, a notice said so (it is gone now).
    expect(noticesSince(before)[0]).toMatch(/^quire: rewriting lines 13-15 of Areas\/Sleep\.md \(shorten\)…/);
    expect(await pending(s)).toEqual([]);
  });

  it("lists the tools in the editor's menu; a tool that needs a model is refused with the server's words", async () => {
    const view = await openNote(s.loaded.app, "Resources/Sourdough Starter.md");
    const menu = new Menu();
    s.loaded.app.shimWorkspace.trigger("editor-menu", menu, view.editor, view);
    expect(menu.shimItems.map((i) => i.shimTitle)).toEqual([
      "Draft this section",
      "Transform the selection",
      "Continue the note from here",
      "Split into atomic notes",
      "Make flashcards",
      "Dataview query from a question",
      "Ask this document",
    ]);
    const before = Notice.shimShown.length;
    menu.shimItems.find((i) => i.shimTitle === "Make flashcards")?.shimClick();
    const refusal = await waitFor(() => noticesSince(before).find((n) => n.includes("needs a language model")), "the refusal");
    expect(refusal).toBe("quire: `flashcards` needs a language model (see `quire config`: a provider, or the local model in a `local-llm` build)");
    expect(await pending(s)).toEqual([]);
  });

  it("shows the dry run's count in a confirmation; cancelling it makes no proposal", async () => {
    const before = Notice.shimShown.length;
    s.loaded.app.shimRunCommand("quire:batch-transform");
    const form = lastModal();
    const where = form.contentEl.querySelector(".quire-tool-select") as HTMLInputElement;
    where.value = "Resources/Books";
    button(form.contentEl, "Fix grammar").click();
    const confirm = await waitFor(() => Modal.shimOpen.find((m) => m.contentEl.querySelector(".quire-batch-count")), "the confirmation");
    expect(confirm.contentEl.querySelector(".quire-batch-count")?.textContent).toMatch(/^3 notes to fix grammar: about \d+ tokens to send/);
    expect([...confirm.contentEl.querySelectorAll(".quire-batch-notes li")].map((li) => li.textContent)).toEqual([
      "Resources/Books/Crime and Punishment.md",
      "Resources/Books/Make It Stick.md",
      "Resources/Books/The Rust Programming Language.md",
    ]);
    expect(button(confirm.contentEl, "Transform 3 notes")).toBeTruthy();
    button(confirm.contentEl, "Cancel").click();
    expect(Modal.shimOpen).not.toContain(confirm);
    // Give a request that should not be made the time to make something.
    await new Promise((r) => setTimeout(r, 500));
    expect(await pending(s)).toEqual([]);
    expect(noticesSince(before).filter((n) => !n.startsWith("quire: finding the notes"))).toEqual([]);
  });

  it("runs the batch once confirmed: without a model the server's refusal is shown", async () => {
    const before = Notice.shimShown.length;
    s.loaded.app.shimRunCommand("quire:batch-transform");
    const form = lastModal();
    (form.contentEl.querySelector(".quire-tool-select") as HTMLInputElement).value = "Resources/Books";
    button(form.contentEl, "Improve").click();
    const confirm = await waitFor(() => Modal.shimOpen.find((m) => m.contentEl.querySelector(".quire-batch-count")), "the confirmation");
    button(confirm.contentEl, "Transform 3 notes").click();
    const refusal = await waitFor(() => noticesSince(before).find((n) => n.includes("needs a language model")), "the refusal");
    expect(refusal).toBe("quire: `batch` needs a language model (see `quire config`); `dry_run` works without one");
    expect(noticesSince(before).some((n) => n.startsWith("quire: transforming 3 notes (improve)…"))).toBe(true);
    expect(await pending(s)).toEqual([]);
  });
});

describe("writing tools and saved conversations with a language model", () => {
  let s: Setup;
  let chat: FakeChat;

  beforeAll(async () => {
    chat = await startFakeChat([["- Screens off ", "early; no late coffee."]], 20);
    s = await setup(chat.url);
  });

  afterEach(async () => {
    for (const modal of [...Modal.shimOpen]) modal.close();
    await rejectAll(s);
  });

  afterAll(async () => {
    await teardown(s);
    await chat?.close();
    await closeBrowser();
  });

  it("transforms the selection: the proposal replaces those lines with the model's text", async () => {
    chat.script = [["- Screens off ", "early; no late coffee."]];
    const view = await openNote(s.loaded.app, "Areas/Sleep.md");
    view.shimEditor.setSelection({ line: 12, ch: 0 }, { line: 15, ch: 0 });
    const shown = paneDetail(s)?.dataset.id;
    s.loaded.app.shimRunCommand("quire:transform");
    const modal = lastModal();
    expect(modal.titleEl.textContent).toBe("Transform lines 13-15");
    (modal.contentEl.querySelector(".quire-tool-instruction") as HTMLTextAreaElement).value = "Make it one line";
    await screenshot("writing-tool", modal.modalEl);
    button(modal.contentEl, "Use this instruction").click();
    const { pane, proposal } = await shownProposal(s, shown);
    expect(proposal.title).toBe("Rewrite lines 13-15 of Areas/Sleep.md: Make it one line");
    const added = [...pane.querySelectorAll(".quire-diff-line.is-added .quire-diff-text")].map((l) => l.textContent);
    const removed = [...pane.querySelectorAll(".quire-diff-line.is-removed .quire-diff-text")].map((l) => l.textContent);
    expect(added).toEqual(["- Screens off early; no late coffee."]);
    expect(removed).toEqual([
      "- Screens off by 22:30. The phone charges in the kitchen.",
      "- No coffee after 14:00, which also means no second cup at the afternoon meeting.",
      "- A short walk after dinner.",
    ]);
    // The model was given the selected lines and the instruction.
    const prompt = JSON.stringify(chat.requests[chat.requests.length - 1]?.messages ?? []);
    expect(prompt).toContain("A short walk after dinner.");
    expect(prompt).toContain("Make it one line");
  });

  it("continues the note after the cursor's line: the proposal inserts the model's text there", async () => {
    chat.script = [["- Chamomile tea ", "after dinner."]];
    const view = await openNote(s.loaded.app, "Areas/Sleep.md");
    // On line 15, "- A short walk after dinner."
    view.shimEditor.setCursor({ line: 14, ch: 3 });
    const shown = paneDetail(s)?.dataset.id;
    s.loaded.app.shimRunCommand("quire:complete");
    const { proposal } = await shownProposal(s, shown);
    const [change] = proposal.changes;
    expect(change?.path).toBe("Areas/Sleep.md");
    const lines = (change?.content ?? "").split("\n");
    const at = lines.indexOf("- A short walk after dinner.");
    expect(at).toBe(14);
    expect(lines.slice(at + 1).join("\n")).toMatch(/^\n?- Chamomile tea after dinner\.\n/);
  });

  it("proposes a Dataview query from a question at the end of the note", async () => {
    chat.script = [['TABLE rating FROM "Resources/Books" ', "WHERE rating = 5"]];
    await openNote(s.loaded.app, "Resources/Reading List.md");
    const shown = paneDetail(s)?.dataset.id;
    s.loaded.app.shimRunCommand("quire:dataview");
    const modal = lastModal();
    const input = modal.contentEl.querySelector(".quire-tool-question") as HTMLTextAreaElement;
    input.value = "Which books did I rate 5?";
    key(input, "Enter");
    const { pane, proposal } = await shownProposal(s, shown);
    expect(proposal.changes.map((c) => c.path)).toEqual(["Resources/Reading List.md"]);
    const added = [...pane.querySelectorAll(".quire-diff-line.is-added .quire-diff-text")].map((l) => l.textContent);
    expect(added).toContain('TABLE rating FROM "Resources/Books" WHERE rating = 5');
    expect(added).toContain("```dataview");
    expect(JSON.stringify(chat.requests[chat.requests.length - 1]?.messages ?? [])).toContain("Which books did I rate 5?");
  });

  it("saves the conversation as a proposed note with the question, the answer and its sources as wikilinks", async () => {
    chat.script = [["You feed the starter ", "once a day [S1]."]];
    s.loaded.app.shimRunCommand("quire:ask");
    const leaf = await waitFor(() => s.loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-ask"), "the ask view");
    const view: View = leaf.shimView;
    const before = Notice.shimShown.length;
    // Nothing to save yet.
    (view.containerEl.querySelector(".quire-save-conversation") as HTMLButtonElement).click();
    expect(noticesSince(before)).toEqual(["Ask a question first: there is nothing to save yet."]);

    const input = view.containerEl.querySelector("textarea") as HTMLTextAreaElement;
    input.value = "How often do I feed the starter?";
    key(input, "Enter");
    const turn = await waitFor(() => view.containerEl.querySelector(".quire-turn .quire-source") && view.containerEl.querySelector(".quire-turn"), "the answer");
    await waitFor(() => !turn.querySelector(".is-streaming"), "the complete answer");
    const firstSource = turn.querySelector(".quire-source-card")?.getAttribute("data-source");
    expect(firstSource).toBe("S1");

    const shown = paneDetail(s)?.dataset.id;
    (view.containerEl.querySelector(".quire-save-conversation") as HTMLButtonElement).click();
    const { proposal } = await shownProposal(s, shown);
    expect(proposal.status).toBe("pending");
    expect(proposal.title).toBe("Save the conversation “How often do I feed the starter?”");
    const [change] = proposal.changes;
    expect(proposal.changes).toHaveLength(1);
    expect(change?.kind).toBe("create");
    expect(change?.path).toMatch(/^Conversations\/Conversation \d{4}-\d{2}-\d{2} \d{4}\.md$/);
    const content = change?.content ?? "";
    expect(content).toContain("## How often do I feed the starter?");
    expect(content).toContain("You feed the starter once a day [S1].");
    const link = /^- S1: (\[\[[^\]]+\]\])/m.exec(content)?.[1];
    expect(link).toMatch(/^\[\[Resources\/Sourdough Starter(#[^\]]+)?\]\]$/);
    expect((await pending(s)).map((p) => p.id)).toEqual([proposal.id]);
  });

  it("cancels a tool that takes long: the plugin stops waiting and says the server may still finish", async () => {
    chat.delayMs = 250;
    chat.script = [Array.from({ length: 12 }, (_, i) => `word${i} `)];
    const view = await openNote(s.loaded.app, "Areas/Sleep.md");
    view.shimEditor.setSelection({ line: 12, ch: 0 }, { line: 12, ch: 10 });
    const before = Notice.shimShown.length;
    s.loaded.app.shimRunCommand("quire:transform");
    button(lastModal().contentEl, "Improve").click();
    const running = await waitFor(() => Notice.shimShown.slice(before).find((n) => n.messageEl.querySelector(".quire-tool-cancel")), "the running notice");
    (running.messageEl.querySelector(".quire-tool-cancel") as HTMLButtonElement).click();
    await waitFor(() => noticesSince(before).includes(CANCELLED), "the cancelled notice");
    expect(running.containerEl.isConnected).toBe(false);
    // The server was not stopped: its proposal arrives later, to be reviewed (or rejected).
    const made = await waitFor(async () => (await pending(s)).find((p) => p.title.startsWith("Rewrite line")), "the server's proposal", 20_000);
    expect(made.title).toBe("Rewrite lines 13-13 of Areas/Sleep.md: Rewrite it to be clearer and better organised. Keep its meaning, facts, links and Markdown.");
  });
});
