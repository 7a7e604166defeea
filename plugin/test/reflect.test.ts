// "Reflect on a week" of the built plugin against a real `quire serve` on the sample vault, whose
// daily notes are Journal/2026-11-16.md … 2026-11-29.md (2026-W47 and 2026-W48): offline, where
// the server assembles the reflection from the notes, and with a scripted model.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shiftWeek, weekDays, weekOf } from "../src/weeks";
import { loadPlugin, makeVault, startFakeChat, startQuire, waitFor, type FakeChat, type Loaded, type QuireServer, type TestVault } from "./harness";
import { MarkdownView, type View } from "./obsidian-shim";
import { closeBrowser, screenshot } from "./screenshot";

const WEEK_48 = ["Monday 2026-11-23", "Tuesday 2026-11-24", "Wednesday 2026-11-25", "Thursday 2026-11-26", "Friday 2026-11-27", "Saturday 2026-11-28", "Sunday 2026-11-29"];

function openView(loaded: Loaded): View | undefined {
  return loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-reflect")?.shimView;
}

/** Runs a reflect command; resolves with the view once the command's reflection has started. */
async function reflectCommand(loaded: Loaded, command: string): Promise<View> {
  const earlier = openView(loaded)?.containerEl.querySelector(".quire-reflection-body") ?? null;
  loaded.app.shimRunCommand(command);
  const view = await waitFor(() => openView(loaded), "the reflect view");
  await waitFor(() => {
    const body = view.containerEl.querySelector(".quire-reflection-body");
    return body && body !== earlier;
  }, "the command's reflection");
  return view;
}

function el(view: View, selector: string): HTMLElement {
  const found = view.containerEl.querySelector(selector);
  if (!(found instanceof HTMLElement)) throw new Error(`no ${selector} in the reflect view`);
  return found;
}

/** Waits for the reflection to be complete (rendered) or to have stopped. */
function reflected(view: View): Promise<HTMLElement> {
  return waitFor(() => {
    const body = view.containerEl.querySelector(".quire-reflection-body");
    return body instanceof HTMLElement && !body.hasClass("is-streaming") && el(view, ".quire-reflect-button").textContent === "Reflect" && body;
  }, "the reflection");
}

function dayCards(view: View): { title: string; path: string; cited: boolean; uncited: boolean }[] {
  return Array.from(view.containerEl.querySelectorAll(".quire-day")).map((day) => ({
    title: day.querySelector(".quire-source-title")?.textContent ?? "",
    path: day.querySelector(".quire-day-card")?.getAttribute("data-path") ?? "",
    cited: day.hasClass("is-cited"),
    uncited: day.hasClass("is-uncited"),
  }));
}

function pickWeek(view: View, week: string): void {
  const input = el(view, ".quire-week-input") as HTMLInputElement;
  input.value = week;
  input.dispatchEvent(new Event("change", { bubbles: true }));
}

function activeNote(loaded: Loaded): string | null {
  const view = loaded.app.shimWorkspace.shimActiveLeaf?.shimView;
  return view instanceof MarkdownView ? (view.file?.path ?? null) : null;
}

describe("reflect without a language model", () => {
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

  it("reflects on this week from the command", async () => {
    const view = await reflectCommand(loaded, "quire:reflect-this-week");
    await reflected(view);
    const thisWeek = weekOf();
    expect((el(view, ".quire-week-input") as HTMLInputElement).value).toBe(thisWeek);
    const { from, to } = weekDays(thisWeek);
    expect(el(view, ".quire-week-range").textContent).toMatch(new RegExp(`^${from} – ${to} · \\d+ daily notes?$`));
    // The sample vault's daily notes are in 2026-W47 and 2026-W48 only.
    if (!["2026-W47", "2026-W48"].includes(thisWeek)) {
      expect(el(view, ".quire-answer-meta").textContent).toBe("No daily notes in these days");
      expect(el(view, ".quire-reflection-body").textContent).toBe(`No daily notes between ${from} and ${to}.`);
      expect(dayCards(view)).toEqual([]);
    }
  });

  it("reflects on a week picked in the view: the notes' own points, themes and open loops", async () => {
    const view = await reflectCommand(loaded, "quire:reflect-this-week");
    await reflected(view);
    pickWeek(view, "2026-W48");
    // Picking a week does not reflect yet.
    expect(el(view, ".quire-week-range").textContent).toBe("2026-11-23 – 2026-11-29");
    expect(view.containerEl.querySelector(".quire-reflection-body")).toBeNull();
    el(view, ".quire-reflect-button").click();
    const body = await reflected(view);
    expect(el(view, ".quire-week-range").textContent).toBe("2026-11-23 – 2026-11-29 · 7 daily notes");
    expect(el(view, ".quire-answer-meta").textContent).toBe("Extractive: your daily notes' own points (no language model is configured)");
    expect(Array.from(body.querySelectorAll("h2")).map((h) => h.textContent)).toEqual(["What happened", "Themes", "Open loops", "Next week"]);
    expect(body.textContent).toContain("Email the landlord about the radiator");
    expect(body.textContent).not.toContain("Missed the 2 a.m. alarm"); // 2026-11-22, the week before
    // Each day is cited as a wikilink, rendered as a link to its note.
    const links = Array.from(body.querySelectorAll("a.internal-link")).map((a) => a.getAttribute("data-href"));
    expect(links).toContain("2026-11-24");
    // An extractive reflection quotes every day: no day is marked as cited or not.
    const cards = dayCards(view);
    expect(cards.map((c) => c.title)).toEqual(WEEK_48);
    expect(cards.map((c) => c.path)).toEqual(WEEK_48.map((t) => `Journal/${t.split(" ")[1] ?? ""}.md`));
    expect(cards.some((c) => c.cited || c.uncited)).toBe(false);
  });

  it("moves between weeks, and reflects on last week from the command", async () => {
    const view = await reflectCommand(loaded, "quire:reflect-this-week");
    await reflected(view);
    pickWeek(view, "2026-W48");
    el(view, ".quire-week-previous").click();
    expect((el(view, ".quire-week-input") as HTMLInputElement).value).toBe("2026-W47");
    expect(el(view, ".quire-week-range").textContent).toBe("2026-11-16 – 2026-11-22");
    el(view, ".quire-reflect-button").click();
    await reflected(view);
    expect(dayCards(view).map((c) => c.title)).toEqual([
      "Monday 2026-11-16",
      "Tuesday 2026-11-17",
      "Wednesday 2026-11-18",
      "Thursday 2026-11-19",
      "Friday 2026-11-20",
      "Saturday 2026-11-21",
      "Sunday 2026-11-22",
    ]);
    el(view, ".quire-week-next").click();
    expect((el(view, ".quire-week-input") as HTMLInputElement).value).toBe("2026-W48");

    await reflectCommand(loaded, "quire:reflect-last-week");
    await reflected(view);
    expect((el(view, ".quire-week-input") as HTMLInputElement).value).toBe(shiftWeek(weekOf(), -1));
    expect(loaded.app.shimWorkspace.shimLeaves.filter((l) => l.view.getViewType() === "quire-reflect")).toHaveLength(1);
  });
});

describe("reflect with a language model", () => {
  const REFLECTION = [
    "## What happened\n\n",
    "- A **rest day**, and rye crackers from the discard [S1].\n",
    "- The holiday was approved and the flights booked [S3].\n",
    "- A point that names no day.\n",
    "- A point from a day that is not there [S9].\n",
    "\n## Open loops\n\n- Email the landlord about the radiator [S7].\n",
  ];
  const SLOW = ["One ", "point ", "at ", "a ", "time ", "until ", "you ", "stop ", "me."];
  let vault: TestVault;
  let chat: FakeChat;
  let server: QuireServer;
  let loaded: Loaded;

  beforeAll(async () => {
    vault = makeVault();
    chat = await startFakeChat([REFLECTION, SLOW]);
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

  it("streams the reflection as text, then renders it with day links, warnings and day cards", async () => {
    const view = await reflectCommand(loaded, "quire:reflect-this-week");
    await reflected(view);
    const before = chat.requests.length;
    pickWeek(view, "2026-W48");
    el(view, ".quire-reflect-button").click();
    const streaming = el(view, ".quire-reflection-body");
    await waitFor(() => streaming.textContent?.includes("rest day"), "the first streamed pieces");
    expect(streaming.hasClass("is-streaming")).toBe(true);
    expect(streaming.textContent).toContain("**rest day**");
    expect(streaming.querySelector("strong")).toBeNull();
    expect(el(view, ".quire-reflect-button").textContent).toBe("Stop");
    expect(el(view, ".quire-answer-meta").textContent).toBe("Writing…");

    const body = await reflected(view);
    expect(el(view, ".quire-answer-meta").textContent).toMatch(/^Written by fake-model .*from your daily notes$/);
    expect(body.querySelector("strong")?.textContent).toBe("rest day");
    // The model cites days as [S1]; the server shows them as wikilinks to the daily notes.
    expect(Array.from(body.querySelectorAll("a.internal-link")).map((a) => a.getAttribute("data-href"))).toEqual(["2026-11-23", "2026-11-25", "2026-11-29"]);
    expect(body.textContent).not.toContain("S9");
    const warnings = Array.from(view.containerEl.querySelectorAll(".quire-warning")).map((w) => w.textContent ?? "");
    expect(warnings.some((w) => /2 points cite no day/.test(w))).toBe(true);
    expect(warnings.some((w) => w.includes("S9"))).toBe(true);
    const cards = dayCards(view);
    expect(cards.map((c) => c.title)).toEqual(WEEK_48);
    expect(cards.filter((c) => c.cited).map((c) => c.title)).toEqual(["Monday 2026-11-23", "Wednesday 2026-11-25", "Sunday 2026-11-29"]);
    expect(cards.filter((c) => c.uncited)).toHaveLength(4);
    // The model read that week's daily notes, and no other day's.
    expect(chat.requests).toHaveLength(before + 1);
    const prompt = JSON.stringify(chat.requests[before]?.messages);
    expect(prompt).toContain("Daily notes, 2026-11-23 – 2026-11-29");
    expect(prompt).toContain("Holiday approved!");
    expect(prompt).not.toContain("Missed the 2 a.m. alarm");
    await screenshot("reflect-view", view.containerEl);
  });

  it("opens a daily note from its card or from a link in the reflection", async () => {
    const view = openView(loaded);
    if (!view) throw new Error("no reflect view");
    const card = el(view, '.quire-day-card[data-path="Journal/2026-11-25.md"]');
    card.click();
    await waitFor(() => activeNote(loaded) === "Journal/2026-11-25.md", "the day's note from its card");

    const link = el(view, '.quire-reflection-body a.internal-link[data-href="2026-11-29"]');
    link.click();
    await waitFor(() => activeNote(loaded) === "Journal/2026-11-29.md", "the day's note from the link");
    expect(loaded.app.shimWorkspace.shimLinksOpened.at(-1)).toBe("2026-11-29");
  });

  it("stops a reflection: the request is cancelled", async () => {
    chat.delayMs = 400;
    const view = await reflectCommand(loaded, "quire:reflect-this-week");
    await reflected(view);
    pickWeek(view, "2026-W48");
    const cancelled = chat.cancelled;
    el(view, ".quire-reflect-button").click();
    const body = el(view, ".quire-reflection-body");
    await waitFor(() => body.textContent?.includes("point"), "the first pieces");
    el(view, ".quire-reflect-button").click();
    await reflected(view);
    expect(el(view, ".quire-answer-meta").textContent).toBe("Stopped. The reflection above is incomplete.");
    expect(body.textContent).not.toContain("me.");
    expect(dayCards(view)).toEqual([]);
    await waitFor(() => chat.cancelled > cancelled, "quire to cancel the model call", 10_000);
  });
});
