// Reviewing proposals with the built plugin against a real `quire serve`: a proposal made while
// the plugin runs raises a notice and a badge; its diff shows added and removed lines, folds the
// long unchanged runs and shows a new note whole; Apply writes the file and the open editor shows
// the new text; a note changed since is refused by name; Reject writes nothing.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Proposal, ProposalSummary } from "../src/api";
import { splitLines } from "../src/diff-view";
import type { QuireHost } from "../src/host";
import { getJson, loadPlugin, makeVault, noticesSince, openNote, postJson, startQuire, waitFor, type Loaded, type QuireServer, type TestVault } from "./harness";
import { Notice, type View } from "./obsidian-shim";
import { closeBrowser, screenshot } from "./screenshot";

let vault: TestVault;
let server: QuireServer;
let loaded: Loaded;

beforeAll(async () => {
  vault = makeVault();
  server = await startQuire(vault);
  // Proposals are asked for every 300 ms here (every 25 s in Obsidian).
  loaded = await loadPlugin(vault.vault, { serverUrl: server.url }, (plugin) => Object.assign(plugin, { proposalCheckMs: 300 }));
  await waitFor(() => loaded.app.shimStatusBarEl.querySelector(".quire-status")?.textContent?.startsWith("quire: gen"), "the connection");
  // The first list read from the server is the baseline: wait for it, so that the next proposal is news.
  await (loaded.plugin as unknown as QuireHost).checkProposals();
});

afterEach(async () => {
  // Each test starts with nothing pending.
  for (const proposal of await pending()) await postJson(`${server.url}/api/proposals/${proposal.id}/reject`, {});
  await waitFor(() => badge() === "", "the badge to clear");
});

afterAll(async () => {
  loaded?.unload();
  await server?.stop();
  await closeBrowser();
  vault?.remove();
});

async function pending(all = false): Promise<ProposalSummary[]> {
  return ((await getJson(`${server.url}/api/proposals${all ? "?all=true" : ""}`)) as { proposals: ProposalSummary[] }).proposals;
}

/** Makes a proposal as an MCP client or another device would: outside the plugin. */
async function propose(args: Record<string, unknown>): Promise<Proposal> {
  const { status, body } = await postJson(`${server.url}/api/proposals`, args);
  if (status !== 200) throw new Error(`POST /api/proposals answered ${status}: ${JSON.stringify(body)}`);
  return body as Proposal;
}

function badge(): string {
  return loaded.app.shimRibbonEl.querySelector(".quire-proposals-badge")?.textContent ?? "";
}

function statusItem(): HTMLElement {
  const el = loaded.app.shimStatusBarEl.querySelector(".quire-proposals-status");
  if (!(el instanceof HTMLElement)) throw new Error("no proposals item in the status bar");
  return el;
}

async function openPane(): Promise<View> {
  loaded.app.shimRunCommand("quire:review-proposals");
  const leaf = await waitFor(() => loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-proposals"), "the pane");
  expect(leaf.shimSide).toBe("right");
  return leaf.shimView;
}

function row(pane: View, id: string): HTMLElement | null {
  return pane.containerEl.querySelector(`.quire-proposal-row[data-id="${id}"]`);
}

/** Opens the proposal from the list, and waits for its diff. */
async function openProposal(pane: View, id: string): Promise<HTMLElement> {
  const title = await waitFor(() => row(pane, id)?.querySelector(".quire-proposal-title"), "the proposal in the list");
  (title as HTMLElement).click();
  return waitFor(() => {
    const detail = pane.containerEl.querySelector(".quire-proposal-detail");
    return detail instanceof HTMLElement && detail.dataset.id === id && detail.querySelector(".quire-diff-file") && detail;
  }, "the proposal's diff");
}

function button(detail: HTMLElement, text: string): HTMLButtonElement {
  const found = [...detail.querySelectorAll("button")].find((b) => b.textContent === text);
  if (!found) throw new Error(`no ${text} button`);
  return found;
}

function lines(el: Element, kind?: string): string[] {
  return [...el.querySelectorAll(`.quire-diff-line${kind ? `.is-${kind}` : ""} .quire-diff-text`)].map((t) => t.textContent ?? "");
}

function numbers(el: Element): number[] {
  return [...el.querySelectorAll(".quire-diff-line .quire-diff-num")].map((n) => Number(n.textContent));
}

describe("proposals review", () => {
  it("lists a proposal made while the plugin runs, with a notice and a badge", async () => {
    const pane = await openPane();
    expect(pane.containerEl.querySelector(".quire-pane-info")?.textContent).toMatch(/^Nothing to review\./);
    expect(statusItem().hasClass("is-empty")).toBe(true);
    const before = Notice.shimShown.length;

    const first = await propose({ path: "Areas/Sleep.md", change: "append", heading: "Next steps", text: "- Try a new pillow\n", title: "A next step for sleep" });
    await waitFor(() => noticesSince(before).length, "the notice");
    expect(noticesSince(before)).toEqual(["quire: 1 new proposal to review: A next step for sleep"]);
    expect(badge()).toBe("1");
    expect(statusItem().textContent).toBe("1 proposal to review");
    expect(statusItem().hasClass("is-empty")).toBe(false);
    const listed = await waitFor(() => row(pane, first.id), "the row");
    expect(listed.querySelector(".quire-proposal-title")?.textContent).toBe("A next step for sleep");
    expect(listed.querySelector(".quire-proposal-origin")?.textContent).toBe("the HTTP API (POST /api/proposals)");
    expect(listed.querySelector(".quire-proposal-origin")?.getAttribute("title")).toBe("propose_note_change (quire serve /api/proposals)");
    expect(listed.querySelector(".quire-proposal-age")?.textContent).toBe("just now");
    expect(listed.querySelector(".quire-proposal-files")?.textContent).toBe("Areas/Sleep.md");
    // A blank line, the heading, a blank line and the item.
    expect(listed.querySelector(".quire-diff-stat")?.textContent).toBe("+4−0");
    expect(pane.containerEl.querySelector(".quire-pane-header")?.textContent).toBe("1 proposal to review");

    // A second one: only it is new.
    const second = await propose({ path: "Ideas/Pillows.md", change: "create", text: "# Pillows\n\nBuckwheat or latex?\n" });
    await waitFor(() => noticesSince(before).length === 2, "the second notice");
    expect(noticesSince(before)[1]).toBe("quire: 1 new proposal to review: Create Ideas/Pillows.md");
    await waitFor(() => badge() === "2", "the badge to count 2");
    expect(statusItem().textContent).toBe("2 proposals to review");
    await waitFor(() => row(pane, second.id), "the second row");
    // Newest first.
    expect([...pane.containerEl.querySelectorAll(".quire-proposal-row")].map((r) => (r as HTMLElement).dataset.id)).toEqual([second.id, first.id]);
    // Nothing is said again while nothing new arrives.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(noticesSince(before)).toHaveLength(2);

    // Clicking the notice of a proposal opens it.
    const link = Notice.shimShown[before + 1]?.messageEl.querySelector(".quire-proposals-notice");
    if (!(link instanceof HTMLElement)) throw new Error("the notice opens nothing");
    link.click();
    await waitFor(() => pane.containerEl.querySelector<HTMLElement>(".quire-proposal-detail")?.dataset.id === second.id, "the notice to open its proposal");
  });

  it("shows the diff: a new note whole, removed and added lines, a long unchanged run folded, the source as a link", async () => {
    const pane = await openPane();
    const { status, body } = await postJson(`${server.url}/api/split`, { note: "Running Training", by_headings: true });
    expect(status).toBe(200);
    const proposal = (body as { proposal: Proposal }).proposal;
    const summary = await waitFor(async () => (await pending()).find((p) => p.id === proposal.id), "the summary");
    const detail = await openProposal(pane, proposal.id);
    expect(detail.querySelector(".quire-proposal-heading")?.textContent).toBe("Split Areas/Running Training.md into 4 notes (by headings)");
    expect(detail.querySelector(".quire-proposal-origin")?.textContent).toBe("Made by quire split Areas/Running Training.md");

    const files = [...detail.querySelectorAll(".quire-diff-file")] as HTMLElement[];
    expect(files.map((f) => [f.dataset.path, f.querySelector(".quire-tag")?.textContent])).toEqual([
      ["Areas/Principles.md", "New note"],
      ["Areas/Weekly structure.md", "New note"],
      ["Areas/Progress.md", "New note"],
      ["Areas/Race day.md", "New note"],
      ["Areas/Running Training.md", "Rewritten"],
    ]);
    // A new note is shown whole, every line added, nothing folded.
    const progress = proposal.changes.find((c) => c.path === "Areas/Progress.md");
    expect(lines(files[2] as HTMLElement)).toEqual(splitLines(progress?.content ?? "x"));
    expect(lines(files[2] as HTMLElement, "added")).toHaveLength(splitLines(progress?.content ?? "").length);
    expect(files[2]?.querySelector(".quire-diff-fold")).toBeNull();
    // Every added and removed line is there, and coloured by its class.
    expect(detail.querySelectorAll(".quire-diff-line.is-added")).toHaveLength(summary.lines_added);
    expect(detail.querySelectorAll(".quire-diff-line.is-removed")).toHaveLength(summary.lines_removed);
    expect(summary.lines_removed).toBeGreaterThan(0);

    // The rewritten note: its first 14 lines are unchanged; 11 are folded, 3 kept above the change.
    const rewritten = files[4] as HTMLElement;
    expect(lines(rewritten, "removed")).toContain("## Principles");
    const fold = rewritten.querySelector(".quire-diff-fold") as HTMLElement;
    expect(fold.textContent).toBe("… 11 unchanged lines");
    expect(numbers(rewritten).slice(0, 3)).toEqual([12, 13, 14]);
    expect(lines(rewritten)).not.toContain("# Running Training");
    await screenshot("proposal-diff", pane.containerEl);
    fold.click();
    expect(rewritten.querySelector(".quire-diff-fold")).toBeNull();
    expect(numbers(rewritten).slice(0, 14)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    expect(lines(rewritten)[10]).toBe("# Running Training");

    // The note it was made from opens from its link.
    const source = detail.querySelector(".quire-proposal-source") as HTMLElement;
    expect(source.textContent).toBe("Areas/Running Training");
    source.click();
    await waitFor(() => loaded.app.workspace.getActiveFile()?.path === "Areas/Running Training.md", "the source to open");
  });

  it("applies a proposal: the file is written, and the open editor shows the new text", async () => {
    const path = "Areas/Sleep.md";
    const old = readFileSync(join(vault.vault, path), "utf8");
    const editor = await openNote(loaded.app, path);
    expect(editor.getViewData()).toBe(old);
    const pane = await openPane();
    const proposal = await propose({ path, change: "append", heading: "Next steps", text: "- Try a new pillow\n" });
    const detail = await openProposal(pane, proposal.id);
    expect(lines(detail, "added")).toEqual(["", "## Next steps", "", "- Try a new pillow"]);
    const before = Notice.shimShown.length;
    button(detail, "Apply").click();

    await waitFor(() => noticesSince(before).length, "the notice");
    expect(noticesSince(before)).toEqual([`Applied “Add to ${path}”: wrote ${path}.`]);
    const now = readFileSync(join(vault.vault, path), "utf8");
    expect(now).toBe(`${old}\n## Next steps\n\n- Try a new pillow\n`);
    // The editor holds the applied text, not the old one…
    expect(editor.getViewData()).toBe(now);
    // …so saving it (as Obsidian does on its own) writes nothing over the change.
    await editor.save();
    expect(editor.shimWrites).toBe(0);
    expect(readFileSync(join(vault.vault, path), "utf8")).toBe(now);

    expect((await pending(true)).find((p) => p.id === proposal.id)?.status).toBe("applied");
    await waitFor(() => row(pane, proposal.id) === null && !pane.containerEl.hasClass("is-showing-proposal"), "the list without it");
    await waitFor(() => badge() === "", "the badge to clear");
  });

  it("refuses to apply over a note that changed on disk since, naming it, and writes nothing", async () => {
    const path = "Areas/Writing Habits.md";
    const pane = await openPane();
    const proposal = await propose({ path, change: "replace", text: "# Writing Habits\n\nWrite every day.\n" });
    const detail = await openProposal(pane, proposal.id);
    // Someone edits the note after the proposal was made.
    const edited = `${readFileSync(join(vault.vault, path), "utf8")}\nOne more line, written elsewhere.\n`;
    writeFileSync(join(vault.vault, path), edited);
    const before = Notice.shimShown.length;
    button(detail, "Apply").click();

    const message = await waitFor(() => detail.querySelector(".quire-proposal-message.is-error")?.textContent, "the refusal");
    expect(message).toBe(
      `Not applied: ${path} changed since this proposal was made, so nothing was written. Make it again where it came from (the HTTP API (POST /api/proposals)), from the note as it is now.`,
    );
    expect(noticesSince(before)).toEqual([message]);
    expect(readFileSync(join(vault.vault, path), "utf8")).toBe(edited);
    expect((await pending()).map((p) => p.id)).toContain(proposal.id);
    // It can still be rejected.
    expect(button(detail, "Reject").disabled).toBe(false);
  });

  it("saves what was typed in the open editor before applying: a note edited since is refused, and the typing kept", async () => {
    const path = "Areas/Weekly Review.md";
    const editor = await openNote(loaded.app, path);
    const pane = await openPane();
    const proposal = await propose({ path, change: "append", text: "- Review the proposals too\n" });
    const detail = await openProposal(pane, proposal.id);
    // Typed, and not saved yet (Obsidian saves a moment later).
    const typed = `${editor.getViewData()}\nTyped just now.\n`;
    editor.shimEditor.setValue(typed);
    button(detail, "Apply").click();

    const message = await waitFor(() => detail.querySelector(".quire-proposal-message.is-error")?.textContent, "the refusal");
    expect(message).toMatch(new RegExp(`^Not applied: ${path} changed since this proposal was made`));
    expect(editor.shimWrites).toBe(1);
    expect(readFileSync(join(vault.vault, path), "utf8")).toBe(typed);
    expect(editor.getViewData()).toBe(typed);
  });

  it("names a stored proposal that cannot be read, and lists the others", async () => {
    const pane = await openPane();
    const kept = await propose({ path: "Ideas/Kept.md", change: "create", text: "# Kept\n" });
    const broken = await propose({ path: "Ideas/Broken.md", change: "create", text: "# Broken\n" });
    await waitFor(() => row(pane, broken.id), "both rows");
    const notice = () => pane.containerEl.querySelector<HTMLElement>(".quire-proposals-unreadable");
    expect(notice()?.hidden).toBe(true);
    // The file cut short by hand: the server leaves it out and says why.
    const file = join(vault.index, "proposals", `${broken.id}.json`);
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.slice(0, text.length / 2));
    await waitFor(() => row(pane, broken.id) === null, "the broken one to leave the list");
    expect(row(pane, kept.id)).not.toBeNull();
    expect(notice()?.hidden).toBe(false);
    expect(notice()?.textContent).toMatch(new RegExp(`^1 stored proposal could not be read and is left out: ${broken.id} \\(.+\\)$`));
    rmSync(file);
    await waitFor(() => notice()?.hidden === true, "the notice to go once the file is gone");
  });

  it("rejects a proposal: it leaves the list and nothing is written", async () => {
    const pane = await openPane();
    const proposal = await propose({ path: "Ideas/Pillows.md", change: "create", text: "# Pillows\n\nBuckwheat or latex?\n" });
    const detail = await openProposal(pane, proposal.id);
    // A new note is shown whole.
    expect(lines(detail, "added")).toEqual(["# Pillows", "", "Buckwheat or latex?"]);
    const before = Notice.shimShown.length;
    button(detail, "Reject").click();

    await waitFor(() => noticesSince(before).length, "the notice");
    expect(noticesSince(before)).toEqual(["Rejected “Create Ideas/Pillows.md”: nothing was written."]);
    await waitFor(() => row(pane, proposal.id) === null && !pane.containerEl.hasClass("is-showing-proposal"), "the list without it");
    expect(existsSync(join(vault.vault, "Ideas/Pillows.md"))).toBe(false);
    expect((await pending(true)).find((p) => p.id === proposal.id)?.status).toBe("rejected");
    expect(await pending()).toEqual([]);
    expect(badge()).toBe("");
  });
});
