// "Ask your vault" of the built plugin against a real `quire serve` whose language model is a
// scripted fake that streams its answer piece by piece.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  key,
  loadPlugin,
  makeVault,
  startFakeChat,
  startQuire,
  waitFor,
  type FakeChat,
  type Loaded,
  type QuireServer,
  type TestVault,
} from "./harness";
import { MarkdownView, type View } from "./obsidian-shim";
import { closeBrowser, screenshot } from "./screenshot";

const ANSWER = [
  "You feed the starter **once a day** ",
  "while it lives on the counter, ",
  "at 1:5:5 in winter [S2]. ",
  "In the fridge it is fed once a week [S2, S99].",
];
const SECOND = ["Bubbles was born on 3 October 2026 [S1]."];
const SLOW = ["One ", "piece ", "at ", "a ", "time ", "until ", "you ", "stop ", "me."];

let vault: TestVault;
let chat: FakeChat;
let server: QuireServer;
let loaded: Loaded;

beforeAll(async () => {
  vault = makeVault();
  chat = await startFakeChat([ANSWER, SECOND, SLOW]);
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

async function askView(): Promise<View> {
  loaded.app.shimRunCommand("quire:ask");
  const leaf = await waitFor(() => loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-ask"), "the ask view");
  return leaf.shimView;
}

function ask(view: View, question: string): void {
  const input = view.containerEl.querySelector("textarea") as HTMLTextAreaElement;
  input.value = question;
  key(input, "Enter");
}

function lastTurn(view: View): HTMLElement {
  const turns = view.containerEl.querySelectorAll(".quire-turn");
  return turns[turns.length - 1] as HTMLElement;
}

describe("ask your vault", () => {
  it("streams the answer as text, then renders it with linked citations, warnings and source cards", async () => {
    const view = await askView();
    ask(view, "How often do I feed the starter?");
    const turn = lastTurn(view);
    expect(turn.querySelector(".quire-question")?.textContent).toBe("How often do I feed the starter?");
    const body = turn.querySelector(".quire-answer-body") as HTMLElement;
    const button = view.containerEl.querySelector(".quire-ask-button") as HTMLButtonElement;
    // While it streams: plain text (the Markdown is not rendered yet), no cards, a stop button.
    await waitFor(() => body.textContent?.includes("once a day"), "the first streamed piece");
    expect(body.hasClass("is-streaming")).toBe(true);
    expect(body.textContent).toContain("**once a day**");
    expect(body.querySelector("strong")).toBeNull();
    expect(turn.querySelector(".quire-answer-meta")?.textContent).toBe("Writing…");
    expect(turn.querySelectorAll(".quire-source")).toHaveLength(0);
    expect(button.textContent).toBe("Stop");

    await waitFor(() => !body.hasClass("is-streaming") && turn.querySelector(".quire-source"), "the complete answer");
    expect(button.textContent).toBe("Ask");
    expect(body.querySelector("strong")?.textContent).toBe("once a day");
    expect(turn.querySelector(".quire-answer-meta")?.textContent).toMatch(/^Written by fake-model .*from your notes$/);
    // S2 is a checked citation; S99 matches no source: the server removed it and says so.
    const cites = [...body.querySelectorAll("a.quire-cite")].map((a) => a.textContent);
    expect(cites).toContain("S2");
    expect(cites).not.toContain("S99");
    expect(body.textContent).not.toContain("S99");
    const warnings = [...turn.querySelectorAll(".quire-warning")].map((w) => w.textContent);
    expect(warnings.some((w) => w?.includes("S99"))).toBe(true);
    const cards = [...turn.querySelectorAll(".quire-source")];
    expect(cards.length).toBeGreaterThan(1);
    const cited = cards.filter((c) => c.hasClass("is-cited")).map((c) => c.querySelector(".quire-source-id")?.textContent);
    expect(cited).toEqual(["S2"]);
    // The model got the question and numbered sources, and nothing else of the vault.
    const prompt = JSON.stringify(chat.requests[0]?.messages);
    expect(prompt).toContain("How often do I feed the starter?");
    expect(prompt).toContain("[S1]");
    await screenshot("ask-view", view.containerEl);
  });

  it("opens the note at the cited lines from a source card or a citation", async () => {
    const view = await askView();
    const turn = lastTurn(view);
    const card = turn.querySelector('.quire-source-card[data-source="S2"]') as HTMLElement;
    const where = /^(.*):(\d+)–(\d+)$/.exec(card.querySelector(".quire-lines")?.textContent ?? "");
    expect(where).not.toBeNull();
    const [, path, start, end] = where ?? [];
    card.click();
    const opened = await waitFor(() => {
      const v = loaded.app.shimWorkspace.shimActiveLeaf?.shimView;
      return v instanceof MarkdownView && v.file?.path === path && v.shimEditor.shimScrolledTo && v;
    }, "the cited note");
    expect(opened.shimEditor.getCursor().line).toBe(Number(start) - 1);
    expect(opened.shimEditor.shimScrolledTo?.range.to.line).toBe(Number(end) - 1);

    opened.shimEditor.setCursor({ line: 0, ch: 0 });
    opened.shimEditor.shimScrolledTo = null;
    (turn.querySelector("a.quire-cite") as HTMLElement).click();
    await waitFor(() => {
      const v = loaded.app.shimWorkspace.shimActiveLeaf?.shimView;
      return v instanceof MarkdownView && v.shimEditor.shimScrolledTo;
    }, "the note from the citation");
  });

  it("keeps the conversation and sends each question on its own", async () => {
    const view = await askView();
    ask(view, "When was Bubbles born?");
    await waitFor(() => view.containerEl.querySelectorAll(".quire-turn").length === 2 && lastTurn(view).querySelector(".quire-source"), "the second answer");
    expect(lastTurn(view).querySelector(".quire-answer-body")?.textContent).toContain("3 October 2026");
    const sent = JSON.stringify(chat.requests[1]?.messages);
    expect(sent).toContain("When was Bubbles born?");
    expect(sent).not.toContain("How often do I feed the starter?");
    expect(view.containerEl.querySelectorAll(".quire-turn")).toHaveLength(2);
  });

  it("stops an answer: the request is cancelled and the next question works", async () => {
    chat.delayMs = 400;
    const view = await askView();
    const requests = chat.requests.length;
    ask(view, "Tell me everything slowly.");
    const turn = lastTurn(view);
    const body = turn.querySelector(".quire-answer-body") as HTMLElement;
    await waitFor(() => body.textContent?.includes("piece"), "the first pieces");
    (view.containerEl.querySelector(".quire-ask-button") as HTMLButtonElement).click();
    await waitFor(() => turn.querySelector(".quire-answer-meta")?.textContent?.startsWith("Stopped"), "the stop");
    expect(body.textContent).not.toContain("me.");
    expect((view.containerEl.querySelector(".quire-ask-button") as HTMLButtonElement).textContent).toBe("Ask");
    // quire saw the client go and cancelled the model's answer.
    await waitFor(() => chat.cancelled > 0, "quire to cancel the model call", 10_000);
    expect(chat.requests.length).toBe(requests + 1);

    chat.delayMs = 10;
    ask(view, "And now quickly?");
    await waitFor(() => lastTurn(view).querySelector(".quire-source"), "an answer after the stop");
  });

  it("starts a new conversation", async () => {
    const view = await askView();
    (view.containerEl.querySelector(".quire-new-conversation") as HTMLElement).click();
    expect(view.containerEl.querySelectorAll(".quire-turn")).toHaveLength(0);
  });
});

describe("ask without a language model", () => {
  let other: TestVault;
  let plain: QuireServer;
  let local: Loaded;

  beforeAll(async () => {
    // Another copy: one server keeps an index at a time.
    other = makeVault();
    plain = await startQuire(other);
    local = await loadPlugin(other.vault, { serverUrl: plain.url });
  });

  afterAll(async () => {
    local?.unload();
    await plain?.stop();
    other?.remove();
  });

  it("shows an extractive answer, whose quoted [Sn] stay text", async () => {
    local.app.shimRunCommand("quire:ask");
    const leaf = await waitFor(() => local.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-ask"), "the ask view");
    const view = leaf.shimView;
    ask(view, "How often do I feed the starter?");
    const turn = lastTurn(view);
    await waitFor(() => turn.querySelector(".quire-source"), "the answer");
    expect(turn.querySelector(".quire-answer-meta")?.textContent).toMatch(/^Extractive/);
    const body = turn.querySelector(".quire-answer-body") as HTMLElement;
    expect(body.textContent).toContain("[S1]");
    expect(body.querySelectorAll("a.quire-cite")).toHaveLength(0);
  });
});
