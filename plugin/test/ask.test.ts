// "Ask your vault" of the built plugin against a real `quire serve` whose language model is a
// scripted fake that streams its answer piece by piece.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  key,
  loadPlugin,
  makeVault,
  startFakeChat,
  startQuire,
  startRecorder,
  waitFor,
  type AskRecord,
  type FakeChat,
  type Loaded,
  type QuireServer,
  type Recorder,
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

/** The ask view's retriever dropdown. */
function retrieverSelect(view: View): HTMLSelectElement {
  return view.containerEl.querySelector("select.quire-ask-retriever") as HTMLSelectElement;
}

function choose(select: HTMLSelectElement, value: string): void {
  select.value = value;
  select.dispatchEvent(new Event("change", { bubbles: true }));
}

/** The line under a turn's answer that says what answered. */
function answeredByLine(turn: HTMLElement): string | null | undefined {
  return turn.querySelector(".quire-answered-by")?.textContent;
}

/** The plugin as the views see it: its settings and the connection's state. */
function pluginOf(plugin: Loaded): { settings: { retriever: string }; connectionState(): { kind: string }; updateSettings(change: object): Promise<void> } {
  return plugin.plugin as unknown as ReturnType<typeof pluginOf>;
}

/** The parts of the `done` event's `retrieval` report that the tests read. */
interface Retrieval {
  retriever?: string;
  notes?: string[];
  descent?: { sections: { path: string }[]; requests: number };
}

/** The `done` event's `retrieval` report of a recorded ask (empty before the event). */
function retrievalOf(record: AskRecord | undefined): Retrieval {
  const report = record?.done?.retrieval;
  return report && typeof report === "object" ? report : {};
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
  let recorded: Recorder;
  let local: Loaded;

  beforeAll(async () => {
    // Another copy: one server keeps an index at a time.
    other = makeVault();
    plain = await startQuire(other);
    recorded = await startRecorder(plain.url);
    local = await loadPlugin(other.vault, { serverUrl: recorded.url });
  });

  afterAll(async () => {
    local?.unload();
    await recorded?.close();
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

  it("offers search only: tree descent and auto are disabled, with a tooltip saying why", async () => {
    local.app.shimRunCommand("quire:ask");
    const leaf = await waitFor(() => local.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-ask"), "the ask view");
    const view = leaf.shimView;
    const select = retrieverSelect(view);
    await waitFor(() => pluginOf(local).connectionState().kind === "online", "the connection");
    expect(Array.from(select.options).map((o) => [o.value, o.disabled, o.title])).toEqual([
      ["hybrid", false, "Search finds the passages by their words (and meaning)"],
      ["tree", true, "Needs a language model on the server, and it has none"],
      ["auto", true, "Needs a language model on the server, and it has none"],
    ]);
    expect(select.title).toContain("Tree descent and auto need a language model on the server, and it has none.");
    // The setting is the server's default: search, sent as such, and said under the answer.
    expect(select.value).toBe("hybrid");
    const before = recorded.asks.length;
    ask(view, "Where does Bubbles live?");
    const first = lastTurn(view);
    await waitFor(() => answeredByLine(first), "the answer");
    expect(recorded.asks[before]?.body.retriever).toBe("hybrid");
    expect(retrievalOf(recorded.asks[before]).retriever).toBe("hybrid");
    expect(answeredByLine(first)).toBe("Answered by search.");

    // A setting of tree descent cannot be had here: a new conversation starts on search, and its
    // question is answered instead of refused.
    await pluginOf(local).updateSettings({ retriever: "tree" });
    (view.containerEl.querySelector(".quire-new-conversation") as HTMLElement).click();
    expect(select.value).toBe("hybrid");
    ask(view, "When was Bubbles born?");
    const turn = lastTurn(view);
    await waitFor(() => answeredByLine(turn) || turn.querySelector(".quire-answer.is-error"), "the answer");
    expect(turn.querySelector(".quire-answer.is-error")).toBeNull();
    expect(recorded.asks).toHaveLength(before + 2);
    expect(recorded.asks[before + 1]?.body.retriever).toBe("hybrid");
    expect(retrievalOf(recorded.asks[before + 1]).retriever).toBe("hybrid");
    expect(answeredByLine(turn)).toBe("Answered by search.");
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

describe("the retriever, chosen per question", () => {
  const STARTER = "Resources/Sourdough Starter.md";
  let fourth: TestVault;
  let model: FakeChat;
  let quire: QuireServer;
  let recorder: Recorder;
  let plugin: Loaded;
  /** What the fake model picks when it descends: the starter's note, or nothing. */
  let descentPicks: "starter" | "nothing" = "starter";

  /** The model's calls of a tree descent (they have the descent's system prompt). */
  function descentCalls(): number {
    return model.requests.filter((r) => r.messages[0]?.content.startsWith("You find where")).length;
  }

  beforeAll(async () => {
    fourth = makeVault();
    model = await startFakeChat([["unused"]], 10);
    // The descent's steps get the JSON choice they ask for (the starter's note, from the listing);
    // the answers cite their first source.
    model.reply = (request) => {
      if (!request.messages[0]?.content.startsWith("You find where")) return "Feed it once a day [S1].";
      const id = /(D\d+) Resources\/Sourdough Starter\.md/.exec(request.messages[1]?.content ?? "")?.[1];
      return JSON.stringify({ choose: descentPicks === "starter" && id ? [id] : [], why: "the note about the starter" });
    };
    quire = await startQuire(fourth, { chatUrl: model.url });
    recorder = await startRecorder(quire.url);
    plugin = await loadPlugin(fourth.vault, { serverUrl: recorder.url, retriever: "auto" });
  });

  afterAll(async () => {
    plugin?.unload();
    await recorder?.close();
    await quire?.stop();
    await model?.close();
    fourth?.remove();
  });

  async function view(): Promise<View> {
    plugin.app.shimRunCommand("quire:ask");
    const leaf = await waitFor(() => plugin.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-ask"), "the ask view");
    return leaf.shimView;
  }

  /** Asks `question` and waits for its answer; returns its turn and what the server received and answered. */
  async function askAndWait(on: View, question: string): Promise<{ turn: HTMLElement; record: AskRecord }> {
    const before = recorder.asks.length;
    const count = turns(on).length;
    ask(on, question);
    await waitFor(() => turns(on).length === count + 1 && answeredByLine(lastTurn(on)), "the answer and its line");
    expect(recorder.asks).toHaveLength(before + 1);
    const record = recorder.asks[before] as AskRecord;
    expect(record.done).not.toBeNull();
    return { turn: lastTurn(on), record };
  }

  it("starts on the setting, all three offered with a model, and sends it with the question", async () => {
    const on = await view();
    await waitFor(() => pluginOf(plugin).connectionState().kind === "online", "the connection");
    const select = retrieverSelect(on);
    const options = Array.from(select.options);
    expect(options.map((o) => [o.value, o.textContent])).toEqual([
      ["hybrid", "Search"],
      ["tree", "Tree descent"],
      ["auto", "Auto"],
    ]);
    expect(options.map((o) => o.disabled)).toEqual([false, false, false]);
    // The setting is auto (not the first option, nor what a fallback would give).
    expect(select.value).toBe("auto");

    const { turn, record } = await askAndWait(on, "How often do I feed the starter?");
    expect(record.body.retriever).toBe("auto");
    expect(record.body.conversation).toBeUndefined();
    // Auto searched, found good evidence and did not descend; the line says so, as the report does.
    const report = retrievalOf(record);
    expect(report.retriever).toBe("auto");
    expect(report.descent).toBeUndefined();
    expect(report.notes).toEqual(["auto: search found good evidence, so the vault was not descended"]);
    expect(answeredByLine(turn)).toBe("Answered by search (auto). Search found good evidence, so the vault was not descended.");
    // The server lists the note among the warnings too; the view says it once, in the line.
    expect(record.done?.warnings).toContain("auto: search found good evidence, so the vault was not descended");
    expect(turn.querySelectorAll(".quire-warning")).toHaveLength(0);
    expect(descentCalls()).toBe(0);
  });

  it("sends another choice with the next question, as the server reports, and leaves the setting", async () => {
    const on = await view();
    const select = retrieverSelect(on);
    const first = lastTurn(on);
    choose(select, "tree");
    const { turn, record } = await askAndWait(on, "How warm should it be kept?");
    expect(record.body.retriever).toBe("tree");
    // A follow-up in the same conversation.
    expect(record.body.conversation).toBe(recorder.asks[0]?.done?.conversation);
    expect(typeof record.body.conversation).toBe("string");
    const report = retrievalOf(record);
    expect(report.retriever).toBe("tree");
    // The model descended (its calls are the ones the report counts) and read the starter's note only.
    expect(report.descent?.requests).toBeGreaterThan(0);
    expect(descentCalls()).toBe(report.descent?.requests);
    expect(report.descent?.sections.map((s) => s.path)).toEqual([STARTER]);
    const paths = Array.from(turn.querySelectorAll(".quire-lines")).map((l) => (l.textContent ?? "").replace(/:\d+–\d+$/, ""));
    expect(paths.length).toBeGreaterThan(0);
    expect(new Set(paths)).toEqual(new Set([STARTER]));
    const line = turn.querySelector(".quire-answered-by") as HTMLElement;
    expect(line.textContent).toBe("Answered by tree descent.");
    expect(line.getAttribute("title")).toMatch(/^Shown \d+ notes, chose D\d+ Resources\/Sourdough Starter\.md: the note about the starter\n/);
    // The earlier answer keeps its own line; the setting is still auto.
    expect(answeredByLine(first)).toMatch(/^Answered by search \(auto\)\./);
    expect(pluginOf(plugin).settings.retriever).toBe("auto");
    expect(select.value).toBe("tree");
    await screenshot("ask-view-retriever", on.containerEl);
  });

  it("keeps the choice for the conversation's next question; a descent that finds nothing leaves it to search", async () => {
    const on = await view();
    descentPicks = "nothing";
    const calls = descentCalls();
    const { turn, record } = await askAndWait(on, "And in winter?");
    descentPicks = "starter";
    expect(record.body.retriever).toBe("tree");
    const report = retrievalOf(record);
    expect(report.descent?.sections).toEqual([]);
    expect(descentCalls()).toBeGreaterThan(calls);
    expect(report.notes).toEqual(["the descent found nothing: search answered"]);
    expect(answeredByLine(turn)).toBe("Answered by search. The descent found nothing: search answered.");
    expect(Array.from(turn.querySelectorAll(".quire-warning")).map((w) => w.textContent)).not.toContain("the descent found nothing: search answered");
    // Search's passages: more notes than the starter's.
    const paths = new Set(Array.from(turn.querySelectorAll(".quire-lines")).map((l) => (l.textContent ?? "").replace(/:\d+–\d+$/, "")));
    expect(paths.size).toBeGreaterThan(1);
  });

  it("with auto, descends for a question about the vault's structure, and says both answered", async () => {
    const on = await view();
    choose(retrieverSelect(on), "auto");
    const calls = descentCalls();
    const { turn, record } = await askAndWait(on, "Which notes are about the sourdough starter?");
    expect(record.body.retriever).toBe("auto");
    const report = retrievalOf(record);
    expect(report.retriever).toBe("auto");
    expect(report.descent?.sections.map((s) => s.path)).toEqual([STARTER]);
    expect(descentCalls()).toBe(calls + (report.descent?.requests ?? 0));
    expect(report.notes ?? []).toEqual([]);
    expect(answeredByLine(turn)).toBe("Answered by tree descent and search (auto).");
  });

  it("puts the dropdown back on the setting for a new conversation", async () => {
    const on = await view();
    const select = retrieverSelect(on);
    choose(select, "tree");
    (on.containerEl.querySelector(".quire-new-conversation") as HTMLElement).click();
    expect(select.value).toBe("auto");
    const { turn, record } = await askAndWait(on, "How often do I feed the starter?");
    expect(record.body.retriever).toBe("auto");
    expect(record.body.conversation).toBeUndefined();
    expect(retrievalOf(record).retriever).toBe("auto");
    expect(answeredByLine(turn)).toMatch(/^Answered by search \(auto\)\./);
  });
});
