// "Questions this note answers" of the built plugin against a real `quire serve`: the route groups
// the paragraphs by their vectors, so the servers here are given the embedding model (as the
// related-notes test gives it for notes similar in meaning). Without a language model each row
// quotes its topic's central passage; with the scripted fake model each row is the model's
// question, and its Ask button asks it in the ask view. The server's refusals (no vectors, a folder
// without paragraphs, the model busy) are shown in the view.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeNotePath, QuireError, type Questions, type ServerStatus } from "../src/api";
import { folderOf, linesLabel, questionsProblem, quoteLines, sourceLabel } from "../src/questions";
import { getJson, loadPlugin, noticesSince, makeVault, openNote, startFakeChat, startQuire, waitFor, type FakeChat, type Loaded, type QuireServer, type TestVault } from "./harness";
import { MarkdownView, Notice, type View } from "./obsidian-shim";
import { closeBrowser, screenshot } from "./screenshot";

/** The embedding model scripts/fetch-model.sh installs: the route needs the paragraphs' vectors. */
const MODEL = process.env.QUIRE_TEST_MODEL ?? join(homedir(), ".local/share/quire/models/e5-small-q4.bin");

const STARTER = "Resources/Sourdough Starter.md";
const BUSY = "The language model is busy writing other answers. Try again when one has finished.";

interface Row {
  number: string;
  question: string | null;
  quote: string | null;
  path: string;
  line: number;
  source: string;
  lines: string;
  asks: boolean;
}

/** What the route answers, asked outside the plugin. */
async function route(server: QuireServer, scope: string): Promise<Questions> {
  return (await getJson(`${server.url}/api/questions/${encodeNotePath(scope)}`)) as Questions;
}

async function routeError(server: QuireServer, scope: string): Promise<{ code: string; message: string }> {
  return ((await getJson(`${server.url}/api/questions/${encodeNotePath(scope)}`)) as { error: { code: string; message: string } }).error;
}

function questionsLeaf(loaded: Loaded) {
  return loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-questions");
}

/** Runs the command and returns the view (right sidebar). */
async function runCommand(loaded: Loaded, which: "note" | "folder"): Promise<View> {
  loaded.app.shimRunCommand(`quire:questions-${which}`);
  const leaf = await waitFor(() => questionsLeaf(loaded), "the questions view");
  expect(leaf.shimSide).toBe("right");
  return leaf.shimView;
}

function text(view: View, selector: string): string {
  return view.containerEl.querySelector(selector)?.textContent ?? "";
}

function loading(view: View): boolean {
  return view.containerEl.querySelector(".quire-questions-view")?.hasClass("is-loading") ?? false;
}

function rows(view: View): Row[] {
  return [...view.containerEl.querySelectorAll<HTMLElement>(".quire-questions-row")].map((row) => {
    const source = row.querySelector<HTMLElement>(".quire-questions-source");
    return {
      number: row.dataset.number ?? "",
      question: row.querySelector(".quire-questions-question")?.textContent ?? null,
      quote: row.querySelector(".quire-questions-quote")?.textContent ?? null,
      path: source?.dataset.path ?? "",
      line: Number(source?.dataset.line),
      source: source?.textContent ?? "",
      lines: row.querySelector(".quire-lines")?.textContent ?? "",
      asks: row.querySelector(".quire-questions-ask") !== null,
    };
  });
}

/** Waits for the view to show rows for the scope labelled `scope` (the request complete). */
async function shown(view: View, scope: string, timeoutMs = 30_000): Promise<Row[]> {
  await waitFor(() => !loading(view) && text(view, ".quire-questions-scope") === scope && rows(view).length > 0, `the questions of ${scope}`, timeoutMs);
  return rows(view);
}

/** The label a passage's source should have: the note's name, then its headings without the note's own. */
function expectedSource(path: string, headings: string[]): string {
  const name = path.slice(path.lastIndexOf("/") + 1).replace(/\.md$/, "");
  return [name, ...(headings[0] === name ? headings.slice(1) : headings)].join(" › ");
}

function button(view: View, selector: string): HTMLButtonElement {
  const found = view.containerEl.querySelector<HTMLButtonElement>(selector);
  if (!found) throw new Error(`no ${selector}`);
  return found;
}

async function connected(loaded: Loaded): Promise<void> {
  await waitFor(() => loaded.app.shimStatusBarEl.querySelector(".quire-status")?.textContent?.startsWith("quire: gen"), "the connection");
}

describe("questions in words", () => {
  it("takes a note's folder, its subfolders' notes included, and none for a note at the top", () => {
    expect(folderOf("Resources/Sourdough Starter.md")).toBe("Resources/");
    expect(folderOf("Resources/Books/Make It Stick.md")).toBe("Resources/Books/");
    expect(folderOf("Home.md")).toBe("");
  });

  it("names a passage by its note and headings, and quotes its first lines without its heading", () => {
    const ref = { path: "Resources/Sourdough Starter.md", heading_path: ["Sourdough Starter", "Troubleshooting", "Liquid on top"], start_line: 27, end_line: 31 };
    expect(sourceLabel(ref)).toBe("Sourdough Starter › Troubleshooting › Liquid on top");
    expect(sourceLabel({ ...ref, heading_path: ["Starter notes"] })).toBe("Sourdough Starter › Starter notes");
    expect(linesLabel(ref)).toBe("lines 27–31");
    expect(linesLabel({ ...ref, end_line: 27 })).toBe("line 27");
    expect(quoteLines("### Liquid on top\n\nHooch: it is hungry.\nStir it in.\n\nOr pour it off.\nThen feed.")).toBe("Hooch: it is hungry.\nStir it in.\nOr pour it off.\n…");
    expect(quoteLines("## Only a heading")).toBe("## Only a heading");
    expect(quoteLines("One line.")).toBe("One line.");
  });

  it("says what a refusal means", () => {
    expect(questionsProblem(new QuireError("busy", "answers are being written for other requests", 429))).toBe(BUSY);
    expect(questionsProblem(new QuireError("bad_request", "no indexed paragraphs with vectors in Scratch/", 400))).toBe("no indexed paragraphs with vectors in Scratch/");
  });
});

describe.skipIf(!existsSync(MODEL))("questions without a language model (central passages)", () => {
  let vault: TestVault;
  let server: QuireServer;
  let loaded: Loaded;

  beforeAll(async () => {
    vault = makeVault({ embeddings: MODEL });
    server = await startQuire(vault, { embeddings: MODEL });
    loaded = await loadPlugin(vault.vault, { serverUrl: server.url });
    await connected(loaded);
  }, 180_000);

  afterAll(async () => {
    loaded?.unload();
    await server?.stop();
    vault?.remove();
  });

  it("shows one row per topic of the note: its central passage quoted, its source and lines", async () => {
    await openNote(loaded.app, STARTER);
    const view = await runCommand(loaded, "note");
    const list = await shown(view, "Sourdough Starter");
    const expected = await route(server, STARTER);
    expect(expected.kind).toBe("extractive");
    expect(expected.topics.length).toBeGreaterThan(1);
    expect(text(view, ".quire-questions-title")).toBe("Questions this note answers");
    expect(text(view, ".quire-questions-info")).toBe(`${expected.paragraphs} paragraphs grouped into ${expected.topics.length} topics by meaning.`);
    expect(text(view, ".quire-questions-extractive")).toMatch(/^No language model is configured on the server/);
    expect(list).toHaveLength(expected.topics.length);
    for (const [i, topic] of expected.topics.entries()) {
      const row = list[i];
      expect(row?.number).toBe(String(topic.number));
      expect(row?.question).toBeNull();
      expect(row?.asks).toBe(false);
      expect([row?.path, row?.line]).toEqual([topic.central.path, topic.central.start_line]);
      expect(row?.source).toBe(expectedSource(topic.central.path, topic.central.heading_path));
      expect(row?.lines).toBe(`lines ${topic.central.start_line}–${topic.central.end_line}`);
      // The quote is the passage's first lines, without its heading line (the source names it).
      const quoted = (row?.quote ?? "").split("\n").filter((l) => l !== "…");
      expect(quoted.length).toBeGreaterThan(0);
      expect(quoted.length).toBeLessThanOrEqual(3);
      const passageLines = topic.central_text.split("\n").map((l) => l.trim());
      for (const line of quoted) {
        expect(line.startsWith("#")).toBe(false);
        expect(passageLines).toContain(line);
      }
      expect(quoted[0]).toBe(passageLines.find((l) => l && !l.startsWith("#")));
    }
  });

  it("opens the note of a source at its lines", async () => {
    const view = questionsLeaf(loaded)?.shimView as View;
    const topic = (await route(server, STARTER)).topics.find((t) => t.central.start_line > 1);
    if (!topic) throw new Error("no topic below the first line");
    const before = loaded.app.shimWorkspace.shimActiveLeaf?.shimView;
    const link = view.containerEl.querySelector<HTMLElement>(`.quire-questions-row[data-number="${topic.number}"] .quire-questions-source`);
    link?.click();
    const opened = await waitFor(() => {
      const v = loaded.app.shimWorkspace.shimActiveLeaf?.shimView;
      return v !== before && v instanceof MarkdownView && v.shimEditor.shimScrolledTo && v;
    }, "the note at the source's lines");
    expect(opened.file?.path).toBe(topic.central.path);
    expect(opened.shimEditor.getCursor().line).toBe(topic.central.start_line - 1);
    expect(opened.shimEditor.shimScrolledTo?.range.to.line).toBe(topic.central.end_line - 1);
  });

  it("shows the topics of the note's folder, its subfolders included", async () => {
    const view = await runCommand(loaded, "folder");
    const list = await shown(view, "Resources/");
    const expected = await route(server, "Resources/");
    expect(expected.scope).toBe("Resources/");
    expect(text(view, ".quire-questions-title")).toBe("Questions this folder answers");
    expect(list.map((r) => [r.number, r.path, r.line])).toEqual(expected.topics.map((t) => [String(t.number), t.central.path, t.central.start_line]));
    // The folder's notes at any depth: topics come from Resources/ and from its subfolders.
    expect(list.every((r) => r.path.startsWith("Resources/"))).toBe(true);
    expect(expected.topics.some((t) => t.passages.some((p) => p.path.split("/").length > 2))).toBe(true);
    expect(expected.topics.some((t) => t.passages.some((p) => p.path.split("/").length === 2))).toBe(true);
  });

  it("shows the server's message for a folder without paragraphs, and says a note at the top of the vault has no folder", async () => {
    mkdirSync(join(vault.vault, "Scratch"));
    writeFileSync(join(vault.vault, "Scratch", "Blank.md"), "# Blank\n");
    const refused = await routeError(server, "Scratch/");
    expect(refused.message).toMatch(/no indexed paragraphs with vectors in Scratch\//);
    await openNote(loaded.app, "Scratch/Blank.md");
    const view = await runCommand(loaded, "folder");
    await waitFor(() => !loading(view) && text(view, ".quire-questions-scope") === "Scratch/" && text(view, ".quire-questions-info") !== "", "the refusal");
    expect(text(view, ".quire-questions-info")).toBe(refused.message);
    expect(view.containerEl.querySelector(".quire-questions-info")?.hasClass("is-error")).toBe(true);
    expect(rows(view)).toHaveLength(0);
    expect(button(view, ".quire-questions-refresh").disabled).toBe(false);

    await openNote(loaded.app, "Home.md");
    await runCommand(loaded, "folder");
    await waitFor(() => text(view, ".quire-questions-scope") === "The top of the vault", "the top of the vault");
    expect(text(view, ".quire-questions-info")).toMatch(/^This note is at the top of the vault/);
    expect(rows(view)).toHaveLength(0);
    // The note itself still can be asked about.
    await runCommand(loaded, "note");
    expect((await shown(view, "Home")).length).toBe((await route(server, "Home.md")).topics.length);
    expect(view.containerEl.querySelector(".quire-questions-info")?.hasClass("is-error")).toBe(false);
  });
});

describe("questions from a server without the embedding model", () => {
  let vault: TestVault;
  let server: QuireServer;
  let loaded: Loaded;

  beforeAll(async () => {
    vault = makeVault();
    server = await startQuire(vault);
    loaded = await loadPlugin(vault.vault, { serverUrl: server.url });
    await connected(loaded);
  });

  afterAll(async () => {
    loaded?.unload();
    await server?.stop();
    vault?.remove();
  });

  it("shows the server's refusal in the view", async () => {
    const refused = await routeError(server, STARTER);
    expect(refused.code).toBe("bad_request");
    await openNote(loaded.app, STARTER);
    const view = await runCommand(loaded, "note");
    await waitFor(() => !loading(view) && text(view, ".quire-questions-info").includes("vectors"), "the refusal");
    expect(text(view, ".quire-questions-info")).toBe(refused.message);
    expect(text(view, ".quire-questions-scope")).toBe("Sourdough Starter");
    expect(rows(view)).toHaveLength(0);
  });
});

describe.skipIf(!existsSync(MODEL))("questions written by a language model", () => {
  const FIRST = ["How often ", "is the starter fed?"];
  // Decorated as models write: the view shows the server's cleaned question.
  const SECOND = ['1. "What does a healthy ', 'starter look like?" [S1]'];
  const ANSWER = ["Once a day, ", "at 1:5:5 [S1]."];
  let vault: TestVault;
  let chat: FakeChat;
  let server: QuireServer;
  let loaded: Loaded;

  beforeAll(async () => {
    vault = makeVault({ embeddings: MODEL });
    chat = await startFakeChat([FIRST, SECOND, ANSWER], 300);
    server = await startQuire(vault, { embeddings: MODEL, chatUrl: chat.url });
    loaded = await loadPlugin(vault.vault, { serverUrl: server.url });
    await connected(loaded);
  }, 180_000);

  afterAll(async () => {
    loaded?.unload();
    await server?.stop();
    await chat?.close();
    await closeBrowser();
    vault?.remove();
  });

  it("says it is waiting for the model, then shows the model's questions with their sources", async () => {
    const llm = ((await getJson(`${server.url}/api/status`)) as ServerStatus).llm;
    expect(llm).toBeTruthy();
    await openNote(loaded.app, STARTER);
    const view = await runCommand(loaded, "note");
    await waitFor(() => loading(view), "the loading state");
    expect(text(view, ".quire-questions-info")).toBe(`Grouping the paragraphs into topics, then ${llm ?? ""} writes a question for each. This takes a few seconds per topic…`);
    expect(rows(view)).toHaveLength(0);
    expect(button(view, ".quire-questions-refresh").disabled).toBe(true);

    const list = await shown(view, "Sourdough Starter");
    expect(chat.requests).toHaveLength(2);
    expect(list.map((r) => r.question)).toEqual(["How often is the starter fed?", "What does a healthy starter look like?"]);
    expect(list.map((r) => r.quote)).toEqual([null, null]);
    expect(list.every((r) => r.asks)).toBe(true);
    expect(view.containerEl.querySelector(".quire-questions-extractive")).toBeNull();
    // Each question's source is the central passage of the topic the model was asked about.
    for (const [i, row] of list.entries()) {
      expect(row.path).toBe(STARTER);
      const prompt = chat.requests[i]?.messages.map((m) => m.content).join("\n") ?? "";
      expect(prompt).toContain("The question these passages answer:");
      // The first source the model got is the central passage (its headings begin with the note's title here).
      expect(prompt).toContain(`[S1] ${STARTER} › ${row.source} (${row.lines})`);
    }
  });

  it("asks a question in the ask view", async () => {
    const view = questionsLeaf(loaded)?.shimView as View;
    const ask = view.containerEl.querySelector<HTMLButtonElement>('.quire-questions-row[data-number="1"] .quire-questions-ask');
    ask?.click();
    const leaf = await waitFor(() => loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-ask"), "the ask view");
    const askView = leaf.shimView;
    const turn = await waitFor(() => askView.containerEl.querySelector<HTMLElement>(".quire-turn"), "the question asked");
    expect(turn.querySelector(".quire-question")?.textContent).toBe("How often is the starter fed?");
    await waitFor(() => turn.querySelector(".quire-source"), "the answer", 30_000);
    expect(turn.querySelector(".quire-answer-body")?.textContent).toContain("Once a day, at 1:5:5");
    expect(chat.requests).toHaveLength(3);
    expect(JSON.stringify(chat.requests[2]?.messages)).toContain("Question: How often is the starter fed?");
    // The questions view is still there with its rows.
    expect(rows(view)).toHaveLength(2);
  });

  it("puts a question in the ask view's box while an answer is still being written", async () => {
    const view = questionsLeaf(loaded)?.shimView as View;
    const askView = loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-ask")?.shimView as View;
    chat.script.splice(0, chat.script.length, ["Slowly ", "once ", "a day."], ANSWER);
    chat.delayMs = 1000;
    const notices = Notice.shimShown.length;
    view.containerEl.querySelector<HTMLButtonElement>('.quire-questions-row[data-number="1"] .quire-questions-ask')?.click();
    await waitFor(() => askView.containerEl.querySelectorAll(".quire-turn").length === 2, "the second turn");
    view.containerEl.querySelector<HTMLButtonElement>('.quire-questions-row[data-number="2"] .quire-questions-ask')?.click();
    const input = askView.containerEl.querySelector("textarea") as HTMLTextAreaElement;
    await waitFor(() => input.value === "What does a healthy starter look like?", "the question in the box");
    expect(askView.containerEl.querySelectorAll(".quire-turn")).toHaveLength(2);
    expect(noticesSince(notices)).toEqual(["An answer is still being written: the question is in the box, to ask when it is complete."]);
    chat.delayMs = 10;
    await waitFor(() => [...askView.containerEl.querySelectorAll(".quire-turn")].every((turn) => turn.querySelector(".quire-source")), "the answer being written");
    expect(askView.containerEl.querySelectorAll(".quire-turn")[1]?.querySelector(".quire-answer-body")?.textContent).toContain("Slowly once a day.");
    expect(askView.containerEl.querySelectorAll(".quire-turn")).toHaveLength(2);
    await screenshot("questions-view", view.containerEl);
  });

  it("says the model is busy when both answer slots are taken, and Try again asks again", async () => {
    const view = questionsLeaf(loaded)?.shimView as View;
    chat.script.splice(0, chat.script.length, ["Why ", "so ", "slow?"]);
    chat.delayMs = 400;
    const before = chat.requests.length;
    // Two other clients hold the server's two answer slots while the model writes for them.
    const others = [route(server, STARTER), route(server, STARTER)];
    await waitFor(() => chat.requests.length >= before + 2, "the other clients' model calls");
    button(view, ".quire-questions-refresh").click();
    await waitFor(() => text(view, ".quire-questions-info") === BUSY, "the busy message");
    expect(view.containerEl.querySelector(".quire-questions-info")?.hasClass("is-error")).toBe(true);
    expect(rows(view)).toHaveLength(0);
    const [first] = await Promise.all(others);
    expect(first?.kind).toBe("generated");
    chat.delayMs = 10;
    button(view, ".quire-questions-retry").click();
    const list = await shown(view, "Sourdough Starter");
    expect(list.map((r) => r.question)).toEqual(["Why so slow?", "Why so slow?"]);
    expect(view.containerEl.querySelector(".quire-questions-retry")).toBeNull();
    // The same topics as the other clients got.
    expect(list.map((r) => [r.path, r.line])).toEqual((first?.topics ?? []).map((t) => [t.central.path, t.central.start_line]));
  });

  it("cancels a request still running when the folder is asked for", async () => {
    const view = questionsLeaf(loaded)?.shimView as View;
    chat.delayMs = 500;
    const before = chat.requests.length;
    const cancelled = chat.cancelled;
    await openNote(loaded.app, STARTER);
    await runCommand(loaded, "note");
    await waitFor(() => chat.requests.length > before, "the model's first call");
    await runCommand(loaded, "folder");
    // The note's request is dropped: quire stops the model's answer for it.
    await waitFor(() => chat.cancelled > cancelled, "quire to stop the model's call", 10_000);
    chat.delayMs = 10;
    const list = await shown(view, "Resources/", 60_000);
    expect(text(view, ".quire-questions-title")).toBe("Questions this folder answers");
    expect(view.containerEl.querySelector(".quire-questions-info")?.hasClass("is-error")).toBe(false);
    expect(list.length).toBe((await route(server, "Resources/")).topics.length);
  });
});
