// The vault health view of the built plugin against a real `quire serve`: the findings inbox by
// kind, a finding's note opened at its line, Dismiss and Snooze kept across looks by the server,
// and a link to nowhere written meanwhile marked new with what is new since the last look. Without
// embeddings nor a language model, the topics say why there are none and the deep audit is a line.
// Each GET of /api/findings is a look the server records, so the tests ask through the view only.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeepAuditReport, ServerStatus } from "../src/api";
import { getJson, loadPlugin, postJson, makeVault, startQuire, waitFor, type Loaded, type QuireServer, type TestVault } from "./harness";
import { MarkdownView, type View } from "./obsidian-shim";
import { closeBrowser, screenshot } from "./screenshot";

let vault: TestVault;
let server: QuireServer;
let loaded: Loaded;

beforeAll(async () => {
  vault = makeVault();
  server = await startQuire(vault);
  loaded = await loadPlugin(vault.vault, { serverUrl: server.url });
  await waitFor(() => loaded.app.shimStatusBarEl.querySelector(".quire-status")?.textContent?.startsWith("quire: gen"), "the connection");
});

afterAll(async () => {
  loaded?.unload();
  await server?.stop();
  await closeBrowser();
  vault?.remove();
});

function healthLeaves() {
  return loaded.app.shimWorkspace.shimLeaves.filter((l) => l.view.getViewType() === "quire-health");
}

/** The view once it shows a look (its counts line is written then). */
async function shownView(): Promise<View> {
  const leaf = await waitFor(() => healthLeaves()[0], "the vault health view");
  expect(leaf.shimSide).toBe("right");
  await waitFor(() => counts(leaf.shimView), "the findings");
  return leaf.shimView;
}

/** Opens the view afresh (closing it first if it is open): one look. */
async function openAfresh(): Promise<View> {
  for (const leaf of healthLeaves()) leaf.detach();
  loaded.app.shimRunCommand("quire:vault-health");
  return shownView();
}

function text(view: View, selector: string): string {
  return view.containerEl.querySelector(selector)?.textContent ?? "";
}

function counts(view: View): string {
  return text(view, ".quire-health-counts");
}

function newSince(view: View): string {
  return text(view, ".quire-health-new-since");
}

function rows(view: View, kind?: string): HTMLElement[] {
  const scope = kind ? `.quire-health-section[data-kind="${kind}"] ` : "";
  return [...view.containerEl.querySelectorAll<HTMLElement>(`${scope}.quire-health-row`)];
}

function rowFor(view: View, words: string): HTMLElement | undefined {
  return rows(view).find((row) => row.querySelector(".quire-health-message")?.textContent?.includes(words));
}

function sectionTitle(view: View, kind: string): string {
  return text(view, `.quire-health-section[data-kind="${kind}"] .quire-health-section-title`);
}

function button(row: HTMLElement, label: string): HTMLButtonElement {
  const found = [...row.querySelectorAll("button")].find((b) => b.textContent === label);
  if (!found) throw new Error(`no ${label} button in the row`);
  return found;
}

/** The inbox the server keeps outside the vault, read from disk (reading it is not a look). */
function inboxFile(): { dismissed: Record<string, string>; snoozed: Record<string, string> } {
  return JSON.parse(readFileSync(join(vault.index, "findings.json"), "utf8")) as { dismissed: Record<string, string>; snoozed: Record<string, string> };
}

function dayIn(days: number): string {
  const at = new Date();
  at.setDate(at.getDate() + days);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}`;
}

describe("vault health", () => {
  it("opens from the ribbon and lists the findings by kind, the unresolved link to Marathon Plan at its line", async () => {
    const ribbon = loaded.app.shimRibbonEl.querySelector<HTMLElement>('[aria-label="Vault health"]');
    expect(ribbon).not.toBeNull();
    ribbon?.click();
    const view = await shownView();
    // The index's first look: nothing counts as new.
    expect(newSince(view)).toMatch(/^First look at this vault/);
    expect(view.containerEl.querySelectorAll(".quire-health-new")).toHaveLength(0);
    const links = rows(view, "unresolved_link");
    expect(links.length).toBeGreaterThanOrEqual(2);
    expect(sectionTitle(view, "unresolved_link")).toBe(`Unresolved links (${links.length})`);
    expect(sectionTitle(view, "orphan")).toMatch(/^Orphan notes \(\d+\)$/);
    const all = rows(view).length;
    expect(counts(view)).toBe(`${all} findings · 0 dismissed · 0 snoozed`);
    const marathon = rowFor(view, "Marathon Plan");
    expect(marathon?.closest(".quire-health-section")?.getAttribute("data-kind")).toBe("unresolved_link");
    expect(marathon?.querySelector(".quire-health-message code")?.textContent).toBe("Marathon Plan");
    const place = marathon?.querySelector<HTMLElement>(".quire-health-place");
    expect(place?.textContent).toBe("Areas/Running MOC, line 23");
    expect(place?.dataset.path).toBe("Areas/Running MOC.md");
    expect(place?.dataset.line).toBe("23");
  });

  it("without embeddings or a language model: the topics say why there are none, and the deep audit is one line", async () => {
    const view = await shownView();
    const { status, body } = await postJson(`${server.url}/api/audit/deep`, { dry_run: true });
    expect(status).toBe(200);
    const route = body as DeepAuditReport;
    expect(route.clusters).toEqual([]);
    expect(route.model).toBeNull();
    expect(route.topics_unavailable).toMatch(/needs embeddings/);
    const info = await waitFor(() => {
      const t = text(view, ".quire-topics-info");
      return t && t !== "Grouping the notes by meaning…" && t;
    }, "the topics");
    expect(info).toBe(`No topics: ${route.topics_unavailable}.`);
    expect(text(view, ".quire-audit-topics .quire-health-section-title")).toBe("Topics");
    expect(view.containerEl.querySelectorAll(".quire-topic-row")).toHaveLength(0);
    expect(text(view, ".quire-audit-deep")).toBe("Deep auditA language model enables the deep audit: a review of every note, recommendations and an action plan.");
    expect(view.containerEl.querySelector(".quire-deep-start, .quire-deep-run")).toBeNull();
    // The vault map needs neither.
    expect(view.containerEl.querySelector(".quire-map-make")?.textContent).toBe("Make the vault map");
  });

  it("opens the note at the finding's line", async () => {
    const view = await shownView();
    const place = rowFor(view, "Marathon Plan")?.querySelector<HTMLElement>(".quire-health-place");
    place?.click();
    const opened = await waitFor(() => {
      const v = loaded.app.shimWorkspace.shimActiveLeaf?.shimView;
      return v instanceof MarkdownView && v.file?.path === "Areas/Running MOC.md" && v;
    }, "the note to open");
    const line = opened.shimEditor.getCursor().line;
    expect(line).toBe(22);
    expect(opened.shimEditor.getLine(line)).toContain("[[Marathon Plan]]");
  });

  it("dismisses a finding for good: its row goes, and the next look does not list it", async () => {
    const view = await shownView();
    const before = rows(view, "unresolved_link").length;
    const all = rows(view).length;
    const marathon = rowFor(view, "Marathon Plan");
    if (!marathon) throw new Error("no Marathon Plan row");
    const id = marathon.dataset.id ?? "";
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    button(marathon, "Dismiss").click();
    await waitFor(() => !view.containerEl.contains(marathon), "the row to go");
    expect(sectionTitle(view, "unresolved_link")).toBe(`Unresolved links (${before - 1})`);
    expect(counts(view)).toBe(`${all - 1} findings · 1 dismissed · 0 snoozed`);
    expect(Object.keys(inboxFile().dismissed)).toEqual([id]);

    const again = await openAfresh();
    expect(rowFor(again, "Marathon Plan")).toBeUndefined();
    expect(again.containerEl.querySelector(`[data-id="${id}"]`)).toBeNull();
    expect(counts(again)).toBe(`${all - 1} findings · 1 dismissed · 0 snoozed`);
    expect(newSince(again)).toBe("Nothing new since the last look.");
  });

  it("snoozes a finding for 7 days: its row goes, and the next look counts it as snoozed", async () => {
    const view = await shownView();
    const all = rows(view).length;
    const row = rows(view, "unresolved_link")[0];
    if (!row) throw new Error("no unresolved link left");
    const id = row.dataset.id ?? "";
    button(row, "7 days").click();
    await waitFor(() => !view.containerEl.contains(row), "the row to go");
    expect(counts(view)).toBe(`${all - 1} findings · 1 dismissed · 1 snoozed`);
    expect(inboxFile().snoozed).toEqual({ [id]: dayIn(7) });

    const again = await openAfresh();
    expect(again.containerEl.querySelector(`[data-id="${id}"]`)).toBeNull();
    expect(counts(again)).toBe(`${all - 1} findings · 1 dismissed · 1 snoozed`);
  });

  it("marks a link to nowhere written meanwhile as new, and says what is new since the last look", async () => {
    const view = await shownView();
    const indexed = async () => ((await getJson(`${server.url}/api/status`)) as ServerStatus).notes_indexed ?? 0;
    const notes = await indexed();
    writeFileSync(join(vault.vault, "Fresh.md"), "# Fresh\n\nSee [[Nowhere at all]] for more.\n");
    await waitFor(async () => (await indexed()) === notes + 1, "the server to read the new note", 30_000);
    // A look made before the server re-read the note may miss it; it stays new until a look lists it.
    const fresh = await waitFor(
      async () => {
        const button = view.containerEl.querySelector<HTMLButtonElement>(".quire-health-refresh");
        button?.click();
        await waitFor(() => button && !button.disabled && counts(view), "the look", 15_000);
        return rowFor(view, "Nowhere at all");
      },
      "the new finding",
      30_000,
    );
    expect(fresh.closest(".quire-health-section")?.getAttribute("data-kind")).toBe("unresolved_link");
    expect(fresh.classList.contains("is-new")).toBe(true);
    expect(fresh.querySelector(".quire-health-new")?.textContent).toBe("new");
    expect(fresh.querySelector<HTMLElement>(".quire-health-place")?.dataset.line).toBe("3");
    expect(newSince(view)).toMatch(/^New since the last look: (.*, )?1 new unresolved link[,.]/);
    // The findings of the earlier looks are not new.
    const old = rowFor(view, "Ideas for 2027");
    expect(old).toBeDefined();
    expect(old?.classList.contains("is-new")).toBe(false);
    expect(old?.querySelector(".quire-health-new")).toBeNull();
    await screenshot("health-findings", view.containerEl);
  });

  it("drops a finding that no longer holds by itself", async () => {
    const view = await shownView();
    expect(rowFor(view, "Nowhere at all")).toBeDefined();
    const generation = async () => ((await getJson(`${server.url}/api/status`)) as ServerStatus).generation ?? 0;
    const before = await generation();
    writeFileSync(join(vault.vault, "Fresh.md"), "# Fresh\n\nSee [[Running MOC]] for more.\n");
    await waitFor(async () => (await generation()) > before, "the server to read the changed note", 30_000);
    await waitFor(
      async () => {
        const button = view.containerEl.querySelector<HTMLButtonElement>(".quire-health-refresh");
        button?.click();
        await waitFor(() => button && !button.disabled && counts(view), "the look", 15_000);
        return !rowFor(view, "Nowhere at all");
      },
      "the fixed link to leave the list",
      30_000,
    );
    expect(rowFor(view, "Ideas for 2027")).toBeDefined();
    expect(counts(view)).toMatch(/ · 1 dismissed · 1 snoozed$/);
  });
});
