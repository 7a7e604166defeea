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
const FOLLOW_UP = ["In winter it gets **warm water** ", "and the same 1:5:5 feed [S2]."];
const SLOW = ["One ", "piece ", "at ", "a ", "time ", "until ", "you ", "stop ", "me."];
const QUICK = ["Quickly: once a day [S1]."];
const BUBBLES = ["Bubbles was born on 3 October 2026 [S1]."];

let vault: TestVault;
let chat: FakeChat;
let server: QuireServer;
let loaded: Loaded;

beforeAll(async () => {
  vault = makeVault();
  chat = await startFakeChat([ANSWER, FOLLOW_UP, SLOW, QUICK, BUBBLES]);
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

function turns(view: View): HTMLElement[] {
  return Array.from(view.containerEl.querySelectorAll<HTMLElement>(".quire-turn"));
}

function lastTurn(view: View): HTMLElement {
  const all = turns(view);
  return all[all.length - 1] as HTMLElement;
}

/** A turn's source cards: id → `path:start–end`. */
function cardPlaces(turn: HTMLElement): Map<string, string> {
  return new Map(
    Array.from(turn.querySelectorAll(".quire-source-card")).map((card) => [card.getAttribute("data-source") ?? "", card.querySelector(".quire-lines")?.textContent ?? ""]),
  );
}

/** The roles of the messages the model got in request `i`. */
function roles(i: number): string[] {
  return (chat.requests[i]?.messages ?? []).map((m) => m.role);
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

  it("continues the conversation: the follow-up carries the first turn, and the sources keep their ids", async () => {
    const view = await askView();
    const first = lastTurn(view);
    const firstCards = cardPlaces(first);
    ask(view, "And in winter?");
    await waitFor(() => turns(view).length === 2 && lastTurn(view).querySelector(".quire-source"), "the follow-up's answer");
    const second = lastTurn(view);
    // The first turn stays above, as it was rendered.
    expect(first.querySelector(".quire-question")?.textContent).toBe("How often do I feed the starter?");
    expect(first.querySelector(".quire-answer-body strong")?.textContent).toBe("once a day");
    expect(second.querySelector(".quire-question")?.textContent).toBe("And in winter?");
    expect(second.querySelector(".quire-answer-body strong")?.textContent).toBe("warm water");
    // The model got the first question and its answer as shown (S99 removed) before the follow-up.
    expect(roles(1)).toEqual(["system", "user", "assistant", "user"]);
    const [, question, answer, followUp] = chat.requests[1]?.messages ?? [];
    expect(question?.content).toContain("Question: How often do I feed the starter?");
    expect(answer?.content).toContain("You feed the starter **once a day**");
    expect(answer?.content).toContain("[S2]");
    expect(answer?.content).not.toContain("S99");
    expect(followUp?.content).toContain("Question: And in winter?");
    // It found the same passages again: the model is told so, rather than given them twice.
    expect(followUp?.content).toContain("No new sources for this question; the earlier sources still apply.");
    // S2 names the same passage in both turns, and so does every id the two turns share.
    const secondCards = cardPlaces(second);
    expect(secondCards.get("S2")).toBeTruthy();
    expect(secondCards.get("S2")).toBe(firstCards.get("S2"));
    for (const [id, where] of secondCards) if (firstCards.has(id)) expect([id, where]).toEqual([id, firstCards.get(id)]);
    expect([...second.querySelectorAll(".quire-source.is-cited .quire-source-id")].map((e) => e.textContent)).toEqual(["S2"]);
    expect((second.querySelector("a.quire-cite") as HTMLElement).getAttribute("data-source")).toBe("S2");
    await screenshot("ask-view", view.containerEl);
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

    expect(turn.querySelector(".quire-answer-meta")?.textContent).toBe("Stopped. The answer above is incomplete and is left out of the conversation.");

    // The next question goes on with the conversation, which the server kept without the stopped turn.
    chat.delayMs = 10;
    ask(view, "And now quickly?");
    await waitFor(() => lastTurn(view).querySelector(".quire-source"), "an answer after the stop");
    const sent = chat.requests[requests + 1]?.messages ?? [];
    expect(sent.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant", "user"]);
    expect(JSON.stringify(sent)).not.toContain("Tell me everything slowly.");
  });

  it("starts a new conversation: the next question is asked without the earlier turns", async () => {
    const view = await askView();
    (view.containerEl.querySelector(".quire-new-conversation") as HTMLElement).click();
    expect(turns(view)).toHaveLength(0);
    const before = chat.requests.length;
    ask(view, "When was Bubbles born?");
    await waitFor(() => lastTurn(view)?.querySelector(".quire-source"), "the answer");
    expect(lastTurn(view).querySelector(".quire-answer-body")?.textContent).toContain("3 October 2026");
    expect(roles(before)).toEqual(["system", "user"]);
    expect(JSON.stringify(chat.requests[before]?.messages)).not.toContain("feed the starter");
  });

  it("says when the server no longer has the conversation, and asks the question in a new one", async () => {
    const view = await askView();
    // The server restarts on its port: conversations live in its memory only.
    await server.stop();
    server = await startQuire(vault, { chatUrl: chat.url, port: server.port });
    const before = chat.requests.length;
    ask(view, "Where does Bubbles live?");
    const turn = lastTurn(view);
    await waitFor(() => turn.querySelector(".quire-source"), "the answer in a new conversation", 20_000);
    const ended = Array.from(view.containerEl.querySelectorAll(".quire-conversation-ended"));
    expect(ended).toHaveLength(1);
    expect(ended[0]?.nextElementSibling).toBe(turn);
    expect(ended[0]?.textContent).toMatch(/^The conversation above has ended on the server .* This question starts a new one\.$/);
    expect(turn.hasClass("is-error")).toBe(false);
    expect(turn.querySelector(".quire-answer-meta")?.textContent).toMatch(/^Written by fake-model/);
    // The model was asked once, the question on its own (the refused follow-up never reached it).
    expect(chat.requests.length).toBe(before + 1);
    expect(roles(before)).toEqual(["system", "user"]);
    // The new conversation goes on: the next question carries this one.
    ask(view, "Since when?");
    await waitFor(() => turns(view).length === 3 && lastTurn(view).querySelector(".quire-source"), "the next answer");
    expect(roles(before + 1)).toEqual(["system", "user", "assistant", "user"]);
    expect(chat.requests[before + 1]?.messages[1]?.content).toContain("Question: Where does Bubbles live?");
    expect(view.containerEl.querySelectorAll(".quire-conversation-ended")).toHaveLength(1);
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

describe("ask with expanded questions", () => {
  const PASSAGE = ["Feed the sourdough starter once a day with equal weights of flour and water."];
  const EXPANDED = ["Once a day [S1]."];
  let third: TestVault;
  let model: FakeChat;
  let expanding: QuireServer;
  let plugin: Loaded;

  beforeAll(async () => {
    third = makeVault();
    model = await startFakeChat([PASSAGE, EXPANDED]);
    expanding = await startQuire(third, { chatUrl: model.url });
    plugin = await loadPlugin(third.vault, { serverUrl: expanding.url, expandQuestions: true });
  });

  afterAll(async () => {
    plugin?.unload();
    await expanding?.stop();
    await model?.close();
    third?.remove();
  });

  it("has the model write a passage to search with before it answers", async () => {
    plugin.app.shimRunCommand("quire:ask");
    const leaf = await waitFor(() => plugin.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-ask"), "the ask view");
    const view = leaf.shimView;
    ask(view, "How often should the bread culture get its meal?");
    const turn = lastTurn(view);
    await waitFor(() => turn.querySelector(".quire-source"), "the answer");
    expect(model.requests).toHaveLength(2);
    const first = JSON.stringify(model.requests[0]?.messages);
    expect(first).toContain("bread culture");
    expect(first).not.toContain("[S1]");
    const second = JSON.stringify(model.requests[1]?.messages);
    expect(second).toContain("[S1]");
    expect(second).toContain("Sourdough Starter");
    expect(turn.querySelector(".quire-answer-body")?.textContent).toContain("Once a day");
  });
});
