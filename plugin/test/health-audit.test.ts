// The vault health view's topics, vault map and deep audit, in the built plugin against a real
// `quire serve` with the embedding model and a scripted language model: the topic clusters are
// the route's; Make a map of content proposes a note that lists the cluster's notes (or says why
// not); the vault map is a proposal that, once applied in the review pane, is written and opened;
// the deep audit shows its plan, then the weak notes, recommendations and action plan, failed
// batches and a failed review honestly, a second plan that counts the cached records, a busy
// model, and Stop: the request and the model's call are cancelled, the notes reviewed before it
// keep their records, and the next run sends only the rest.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeepAuditReport, MocResult, Proposal, ProposalSummary, ServerStatus } from "../src/api";
import type { QuireHost } from "../src/host";
import {
  getJson,
  loadPlugin,
  makeVault,
  postJson,
  startFakeChat,
  startQuire,
  treeBytes,
  waitFor,
  type FakeChat,
  type Loaded,
  type QuireServer,
  type TestVault,
} from "./harness";
import { MarkdownView, type View } from "./obsidian-shim";
import { closeBrowser, screenshot } from "./screenshot";

/** The embedding model scripts/fetch-model.sh installs: topic clusters need the notes' vectors. */
const MODEL = process.env.QUIRE_TEST_MODEL ?? join(homedir(), ".local/share/quire/models/e5-small-q4.bin");

let chat: FakeChat;
let vault: TestVault;
let server: QuireServer;
let loaded: Loaded;

/**
 * How the scripted model answers the deep audit: a batch with `failTitle` fails, the review
 * fails; a batch with `holdTitle` is answered in `HELD_PIECES` pieces (held open for a while),
 * and `held` is the titles of the last batch held.
 */
const script = { failTitle: null as string | null, reviewFails: false, holdTitle: null as string | null, held: [] as string[] };

/** The pieces of a held answer: at 200 ms apart, 20 s. */
const HELD_PIECES = 100;

/** The weak note the scripted model finds. */
const WEAK = "Resources/Loose thought.md";

/** The scripted model: a valid record per note sent (or no JSON for the failing batch), the vault-wide review, an answer to anything else. */
function reply(asked: FakeChat["requests"][number]): string | string[] {
  const system = asked.messages[0]?.content ?? "";
  const user = asked.messages.find((m) => m.role === "user")?.content ?? "";
  if (system.startsWith("You review notes")) {
    const notes = [...user.matchAll(/^\[N(\d+)\] (.*)$/gm)].map(([, n, title]) => ({ id: `N${n}`, title: title ?? "" }));
    if (notes.some((n) => n.title === script.failTitle)) return "Sorry, I cannot review these notes.";
    const records = notes.map(({ id, title }) => ({
      id,
      main_idea: `About ${title}.`,
      key_points: [],
      entities: [],
      quality: title === "Loose thought" ? { score: 2, issues: ["stub: two lines"] } : { score: 4, issues: [] },
      suggested_tags: [],
      topics: [],
      suggested_links: [],
    }));
    const json = JSON.stringify({ records });
    if (!notes.some((n) => n.title === script.holdTitle)) return json;
    script.held = notes.map((n) => n.title);
    const size = Math.ceil(json.length / HELD_PIECES);
    return Array.from({ length: HELD_PIECES }, (_, i) => json.slice(i * size, (i + 1) * size));
  }
  if (system.startsWith("You review a personal knowledge vault")) {
    if (script.reviewFails) return "No JSON today.";
    return JSON.stringify({
      clusters: [{ id: 1, name: "Learning and making" }],
      recommendations: [{ text: "Link the loose thought from the reading list", notes: [WEAK, "Resources/Reading List.md", "Nowhere at all.md"] }],
      action_plan: [{ step: "Expand the stub into a real note", notes: [WEAK] }],
    });
  }
  return "Slowly, as the notes say [S1].";
}

beforeAll(async () => {
  chat = await startFakeChat([[]], 0);
  chat.reply = reply;
  vault = makeVault({ embeddings: MODEL });
  server = await startQuire(vault, { embeddings: MODEL, chatUrl: chat.url });
  loaded = await loadPlugin(vault.vault, { serverUrl: server.url });
  await waitFor(() => loaded.app.shimStatusBarEl.querySelector(".quire-status")?.textContent?.startsWith("quire: gen"), "the connection", 60_000);
  await (loaded.plugin as unknown as QuireHost).checkProposals();
}, 180_000);

afterAll(async () => {
  loaded?.unload();
  await server?.stop();
  await chat?.close();
  await closeBrowser();
  vault?.remove();
});

/** The health view, opened once (a second command would look again). */
async function healthView(): Promise<View> {
  const open = loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-health");
  if (open) return open.shimView;
  loaded.app.shimRunCommand("quire:vault-health");
  const leaf = await waitFor(() => loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-health"), "the vault health view");
  return leaf.shimView;
}

function text(el: Element | null | undefined): string {
  return el?.textContent ?? "";
}

function topicRows(view: View): HTMLElement[] {
  return [...view.containerEl.querySelectorAll<HTMLElement>(".quire-topic-row")];
}

function notesOf(row: HTMLElement): string[] {
  return [...row.querySelectorAll<HTMLElement>(".quire-topic-note")].map((a) => a.dataset.path ?? "");
}

function button(el: Element, label: string): HTMLButtonElement {
  const found = [...el.querySelectorAll("button")].find((b) => b.textContent === label);
  if (!found) throw new Error(`no ${label} button`);
  return found;
}

/** The route's dry run, as the view asks for it (nothing is sent to the model). */
async function dryRun(): Promise<DeepAuditReport> {
  const { status, body } = await postJson(`${server.url}/api/audit/deep`, { dry_run: true });
  expect(status).toBe(200);
  return body as DeepAuditReport;
}

function paneDetail(): HTMLElement | null {
  const leaf = loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-proposals");
  return leaf?.view.containerEl.querySelector<HTMLElement>(".quire-proposal-detail[data-id]") ?? null;
}

/** The proposal the review pane shows once it shows one other than `before`, with its diff. */
async function shownProposal(before: string | undefined): Promise<{ detail: HTMLElement; proposal: Proposal }> {
  const detail = await waitFor(() => {
    const el = paneDetail();
    return el && el.dataset.id !== before && el.querySelector(".quire-diff-file") ? el : null;
  }, "the review pane on the new proposal");
  const proposal = (await getJson(`${server.url}/api/proposals/${detail.dataset.id ?? ""}`)) as Proposal;
  return { detail, proposal };
}

async function pending(): Promise<ProposalSummary[]> {
  return ((await getJson(`${server.url}/api/proposals`)) as { proposals: ProposalSummary[] }).proposals;
}

async function indexGeneration(): Promise<number> {
  return ((await getJson(`${server.url}/api/status`)) as ServerStatus).generation ?? 0;
}

function baseName(path: string): string {
  return path.replace(/^.*\//, "").replace(/\.md$/, "");
}

/** A request held open until its answer ends (a streamed answer holds one of the server's generation slots). */
function hold(path: string, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(`${server.url}${path}`, { method: "POST", headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(payload) } }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(payload);
  });
}

describe.skipIf(!existsSync(MODEL))("the vault's topics, its map and the deep audit", () => {
  it("lists the route's topic clusters, their notes as links that open them", async () => {
    const view = await healthView();
    const rows = await waitFor(() => topicRows(view).length > 0 && topicRows(view), "the topics", 60_000);
    const route = await dryRun();
    expect(route.topics_unavailable).toBeNull();
    expect(route.clusters.length).toBeGreaterThanOrEqual(3);
    expect(text(view.containerEl.querySelector(".quire-audit-topics .quire-health-section-title"))).toBe(`Topics (${route.clusters.length})`);
    expect(rows.map((row) => [row.dataset.cluster, text(row.querySelector(".quire-topic-name")), text(row.querySelector(".quire-topic-count")), notesOf(row)])).toEqual(
      route.clusters.map((c) => [String(c.id), c.name, `${c.notes.length} notes`, c.notes]),
    );
    // No model named them yet: the name is the terms, and there is no separate terms line.
    expect(rows.map((row) => text(row.querySelector(".quire-topic-name")))).toEqual(route.clusters.map((c) => c.terms.slice(0, 3).join(", ")));
    expect(view.containerEl.querySelector(".quire-topic-terms")).toBeNull();
    expect(route.topics?.maps_left_out).toEqual(["Areas/Running MOC.md", "Home.md"]);
    expect(text(view.containerEl.querySelector(".quire-topics-info"))).toBe(
      `${route.topics?.notes_clustered} notes grouped by meaning into ${route.clusters.length} topics; 2 maps of content left out.`,
    );

    // A long cluster shows 8 notes, and the rest on demand.
    const long = rows.find((row) => notesOf(row).length > 8);
    if (!long) throw new Error("no cluster of more than 8 notes");
    const count = notesOf(long).length;
    expect(long.querySelectorAll(".quire-topic-note-item.is-folded")).toHaveLength(count - 8);
    button(long, `Show ${count - 8} more`).click();
    expect(long.querySelectorAll(".is-folded")).toHaveLength(0);
    expect(long.querySelector(".quire-topic-more")).toBeNull();

    const link = rows[1]?.querySelector<HTMLElement>(".quire-topic-note");
    const path = link?.dataset.path ?? "";
    expect(text(link)).toBe(path.replace(/\.md$/, ""));
    link?.click();
    await waitFor(() => loaded.app.workspace.getActiveFile()?.path === path, "the note to open");
    await screenshot("health-topics", view.containerEl);
  });

  it("makes a map of content of a cluster: the proposal opens in the review pane and lists the cluster's notes; a cluster it skips says why", async () => {
    const view = await healthView();
    let made: { row: HTMLElement; message: string } | null = null;
    let skipped = 0;
    for (const row of topicRows(view)) {
      const id = Number(row.dataset.cluster);
      const messageEl = row.querySelector(".quire-topic-message") as HTMLElement;
      const before = paneDetail()?.dataset.id;
      button(row, "Make a map of content").click();
      const message = await waitFor(() => {
        const t = text(messageEl);
        return t && t !== "Making a map of content…" && t;
      }, "the map's outcome");
      if (message.startsWith("Proposed ")) {
        made = { row, message };
        const { detail, proposal } = await shownProposal(before);
        expect(proposal.status).toBe("pending");
        expect(proposal.title).toMatch(new RegExp(`^Map of content for topic ${id} `));
        const [change] = proposal.changes;
        expect(proposal.changes).toHaveLength(1);
        expect(change?.kind).toBe("create");
        expect(change?.path).toMatch(/ MOC\.md$/);
        // The new note lists every note of the cluster, once, as a wikilink.
        const cluster = notesOf(row);
        const listed = [...(change?.content ?? "").matchAll(/^- \[\[(.+)\]\]$/gm)].map((m) => m[1]);
        expect([...listed].sort()).toEqual(cluster.map(baseName).sort());
        expect(message).not.toContain("The topics changed");
        expect(message).toMatch(new RegExp(`^Proposed ${change?.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: ${cluster.length} notes under \\d+ headings?\\. It is open in the proposals pane`));
        // The pane shows it as a new note, its links among the added lines.
        expect(detail.querySelector<HTMLElement>(".quire-diff-file")?.dataset.path).toBe(change?.path);
        const added = [...detail.querySelectorAll(".quire-diff-line.is-added .quire-diff-text")].map((t) => t.textContent);
        for (const name of cluster.map(baseName)) expect(added).toContain(`- [[${name}]]`);
        break;
      }
      // Skipped: the route says the same for this cluster (asking it again changes nothing).
      skipped++;
      const route = (await postJson(`${server.url}/api/moc`, { cluster: id })).body as MocResult;
      expect(route.proposals).toEqual([]);
      const why = route.skipped[0];
      if (why?.reason === "already_mapped") {
        expect(message).toBe(`Not made: ${(why.mapped_by ?? "?").replace(/\.md$/, "")} already maps this topic: it links to ${why.linked} of its ${why.notes} notes.`);
        expect(row.querySelector<HTMLElement>(".quire-topic-mapped-by")?.dataset.path).toBe(why.mapped_by);
      } else {
        expect(why?.reason).toBe("too_small");
        expect(message).toBe(`Not made: a map of content needs 3 notes or more, and this topic has ${why?.notes}.`);
      }
    }
    if (!made) throw new Error("no cluster got a map of content");
    // Asked again, the map waits for review: the row says so and links to it.
    const id = paneDetail()?.dataset.id ?? "";
    button(made.row, "Make a map of content").click();
    const review = await waitFor(() => made.row.querySelector<HTMLElement>(".quire-topic-review"), "the link to the pending map");
    expect(text(made.row.querySelector(".quire-topic-message"))).toBe("Not made: a map of content of these notes is already waiting for review. Review it");
    expect(review.dataset.id).toBe(id);
    (paneDetail()?.querySelector(".quire-proposal-back") as HTMLElement).click();
    expect(paneDetail()).toBeNull();
    review.click();
    await waitFor(() => paneDetail()?.dataset.id === id, "the pane on the pending map");
    expect(skipped).toBeLessThan(topicRows(view).length);
    await postJson(`${server.url}/api/proposals/${id}/reject`, {});
  });

  it("makes the vault map grouped by linked notes: applied in the review pane, the canvas is written and opens", async () => {
    const view = await healthView();
    const group = view.containerEl.querySelector(".quire-map-group") as HTMLSelectElement;
    expect([...group.options].map((o) => [o.value, o.textContent])).toEqual([
      ["folder", "Grouped by folder"],
      ["component", "Grouped by linked notes"],
    ]);
    group.value = "component";
    const before = paneDetail()?.dataset.id;
    button(view.containerEl, "Make the vault map").click();
    const { detail, proposal } = await shownProposal(before);
    expect(proposal.changes.map((c) => [c.kind, c.path])).toEqual([["create", "Vault map.canvas"]]);
    expect((await pending()).find((p) => p.id === proposal.id)?.files).toEqual(["Vault map.canvas"]);
    expect(text(view.containerEl.querySelector(".quire-map-message"))).toBe("Proposed Vault map.canvas: it is open in the proposals pane, and opens once you apply it.");
    // Grouped by the link graph's components, not by folder.
    const canvas = JSON.parse(proposal.changes[0]?.content ?? "{}") as { nodes: { type: string; label?: string; file?: string }[] };
    const groups = canvas.nodes.filter((n) => n.type === "group").map((n) => n.label ?? "");
    expect(groups.length).toBeGreaterThan(0);
    for (const label of groups) expect(label).toMatch(/^(Around .+ \(\d+ notes?\)|Notes without links \(\d+\))$/);
    expect(canvas.nodes.filter((n) => n.type === "file").length).toBeGreaterThanOrEqual(40);
    const path = join(vault.vault, "Vault map.canvas");
    expect(existsSync(path)).toBe(false);
    const noteLeaf = loaded.app.shimWorkspace.shimLeaves.find((l) => l.shimSide === "main" && l.shimView instanceof MarkdownView);
    expect(noteLeaf).toBeDefined();

    const generation = await indexGeneration();
    button(detail, "Apply").click();
    const opened = await waitFor(() => {
      const leaf = loaded.app.shimWorkspace.shimActiveLeaf;
      return leaf?.shimView instanceof MarkdownView && leaf.shimView.file?.path === "Vault map.canvas" && leaf;
    }, "the canvas to open");
    expect(readFileSync(path, "utf8")).toBe(proposal.changes[0]?.content);
    expect(opened.shimSide).toBe("main");
    // In a tab of its own: the note open before is still open.
    expect(opened).not.toBe(noteLeaf);
    expect(loaded.app.shimWorkspace.shimLeaves).toContain(noteLeaf);
    expect(((await getJson(`${server.url}/api/proposals/${proposal.id}`)) as Proposal).status).toBe("applied");
    // The server reads the new file before the next test counts the vault's notes.
    await waitFor(async () => (await indexGeneration()) > generation, "the server to read the map", 30_000);
  });

  it("plans the deep audit, then runs it: failed batches and a failed review said, the second plan counts the cached records", async () => {
    const view = await healthView();
    expect(view.containerEl.querySelector(".quire-deep-none")).toBeNull();
    const route = await dryRun();
    const model = route.model ?? "";
    expect(model).toMatch(/^fake-model /);
    const plan = route.plan;
    if (!plan) throw new Error("no plan");
    // Every note of the vault (the map's canvas among them), none reviewed yet.
    const notes = plan.notes;
    expect(notes).toBeGreaterThanOrEqual(47);
    expect([plan.cached, plan.to_send]).toEqual([0, notes]);

    button(view.containerEl, "Deep audit").click();
    const line = await waitFor(() => view.containerEl.querySelector<HTMLElement>(".quire-deep-plan-line[data-cached]"), "the plan");
    expect(text(line)).toBe(`${notes} notes: 0 with a cached record, ${notes} to send to ${model} in ${plan.requests} requests (about ${plan.estimated_tokens.toLocaleString("en-US")} tokens).`);

    // A batch's replies never validate, nor do the review's.
    script.failTitle = "Sleep";
    script.reviewFails = true;
    const sent = chat.requests.length;
    const run = button(view.containerEl, "Run");
    run.click();
    // While it runs, Run is Stop.
    expect(run.disabled).toBe(false);
    expect(run.textContent).toBe("Stop");
    expect((view.containerEl.querySelector(".quire-deep-start") as HTMLButtonElement).disabled).toBe(true);
    const summary = await waitFor(() => text(view.containerEl.querySelector(".quire-deep-summary")), "the run", 60_000);
    const requests = chat.requests.length - sent;
    // The failed batch was asked twice (a repair), the review twice.
    expect(requests).toBe(plan.requests + 1 + 2);
    expect(summary).toMatch(new RegExp(`^Done in \\d+ s\\. Sent ${plan.requests + 1} requests for the notes and 2 for the vault-wide review; 0 records from the cache\\.$`));
    const failed = [...view.containerEl.querySelectorAll<HTMLElement>(".quire-deep-failed")];
    expect(failed).toHaveLength(1);
    expect(text(failed[0])).toMatch(/^Not reviewed \(the reply never validated: not the JSON object asked for: .+\): /);
    const failedPaths = [...(failed[0]?.querySelectorAll<HTMLElement>(".quire-deep-note") ?? [])].map((a) => a.dataset.path ?? "");
    expect(failedPaths).toContain("Areas/Sleep.md");
    expect(failedPaths).not.toContain(WEAK);
    expect(text(view.containerEl.querySelector(".quire-deep-reduce-error"))).toMatch(
      /^The vault-wide review failed: not the JSON object asked for: .+\. The records of the notes are kept, so a second run sends only what is missing\.$/,
    );
    expect(view.containerEl.querySelector(".quire-deep-recommendations")).toBeNull();
    // The notes reviewed have their records: the weak one is listed.
    const weak = [...view.containerEl.querySelectorAll<HTMLElement>(".quire-deep-quality-row")];
    expect(weak.map((row) => [row.dataset.path, text(row.querySelector(".quire-deep-score")), text(row.querySelector(".quire-deep-issues"))])).toEqual([[WEAK, "2/5", "stub: two lines"]]);
    expect(view.containerEl.querySelector(".quire-deep-run")).toBeNull();

    // The second plan: only the failed batch's notes are sent again.
    button(view.containerEl, "Deep audit").click();
    const second = await waitFor(() => view.containerEl.querySelector<HTMLElement>(".quire-deep-plan-line[data-cached]"), "the second plan");
    expect(second.dataset.cached).toBe(String(notes - failedPaths.length));
    expect(second.dataset.toSend).toBe(String(failedPaths.length));
    expect(text(second)).toMatch(new RegExp(`^${notes} notes: ${notes - failedPaths.length} with a cached record, ${failedPaths.length} to send to .+ in 1 request \\(about [\\d,]+ tokens\\)\\.$`));

    script.failTitle = null;
    script.reviewFails = false;
    const again = chat.requests.length;
    button(view.containerEl, "Run").click();
    await waitFor(() => view.containerEl.querySelector(".quire-deep-recommendations"), "the second run", 60_000);
    expect(chat.requests.length - again).toBe(2);
    expect(text(view.containerEl.querySelector(".quire-deep-summary"))).toMatch(
      new RegExp(`^Done in \\d+ s\\. Sent 1 request for the notes and 1 for the vault-wide review; ${notes - failedPaths.length} records from the cache, 1 path that named no note dropped\\.$`),
    );
    expect(view.containerEl.querySelector(".quire-deep-failed, .quire-deep-reduce-error")).toBeNull();
    const items = (cls: string) =>
      [...view.containerEl.querySelectorAll(`${cls} .quire-deep-item`)].map((item) => [
        text(item.querySelector(".quire-deep-item-text")),
        [...item.querySelectorAll<HTMLElement>(".quire-deep-note")].map((a) => a.dataset.path),
      ]);
    // The path that is no note is dropped.
    expect(items(".quire-deep-recommendations")).toEqual([["Link the loose thought from the reading list", [WEAK, "Resources/Reading List.md"]]]);
    expect(items(".quire-deep-actions")).toEqual([["Expand the stub into a real note", [WEAK]]]);
    // The model named topic 1; its terms are said beside the name.
    const first = topicRows(view).find((row) => row.dataset.cluster === "1");
    expect(text(first?.querySelector(".quire-topic-name"))).toBe("Learning and making");
    expect(text(first?.querySelector(".quire-topic-terms"))).toBe(`Terms: ${route.clusters[0]?.terms.slice(0, 3).join(", ")}`);
    await screenshot("health-deep-audit", view.containerEl);

    // A weak note opens from its link.
    view.containerEl.querySelector<HTMLElement>(`.quire-deep-quality-row[data-path="${WEAK}"] .quire-deep-note`)?.click();
    await waitFor(() => loaded.app.workspace.getActiveFile()?.path === WEAK, "the weak note to open");

    // The third plan: every record is cached, nothing to send.
    button(view.containerEl, "Deep audit").click();
    const third = await waitFor(() => view.containerEl.querySelector<HTMLElement>(".quire-deep-plan-line[data-cached]"), "the third plan");
    expect(text(third)).toBe(`${notes} notes: ${notes} with a cached record, nothing to send to ${model} for them; a run only reviews the vault as a whole.`);
    // The dry run names no cluster; the view keeps the model's name of a cluster whose notes are the same.
    expect(text(topicRows(view).find((row) => row.dataset.cluster === "1")?.querySelector(".quire-topic-name"))).toBe("Learning and making");
  });

  it("says that the model is busy when both generation slots are taken, and runs once they are free", async () => {
    const view = await healthView();
    const run = await waitFor(() => view.containerEl.querySelector<HTMLButtonElement>(".quire-deep-run"), "the Run button");
    const notes = (await dryRun()).plan?.notes ?? 0;
    chat.delayMs = 3_000;
    const sent = chat.requests.length;
    const asks = [hold("/api/ask", { question: "How often do I feed the starter?" }), hold("/api/ask", { question: "When do I run?" })];
    try {
      await waitFor(() => chat.requests.length - sent >= 2, "both answers to hold the model");
      run.click();
      const status = await waitFor(() => view.containerEl.querySelector<HTMLElement>(".quire-deep-status.is-error"), "the refusal");
      expect(text(status)).toBe("Not run: the language model is busy with other requests (the server writes two at a time). Try again when one has finished.");
      expect(run.disabled).toBe(false);
      expect(run.textContent).toBe("Run");
    } finally {
      expect(await Promise.all(asks)).toEqual([200, 200]);
      chat.delayMs = 0;
    }
    // Free again: everything is cached, the review too, so nothing is sent.
    const before = chat.requests.length;
    run.click();
    const summary = await waitFor(() => text(view.containerEl.querySelector(".quire-deep-summary")), "the run", 60_000);
    expect(summary).toMatch(new RegExp(`^Done in \\d+ s\\. Sent 0 requests for the notes and 0 for the vault-wide review; ${notes} records from the cache, 1 path that named no note dropped\\.$`));
    expect(chat.requests.length).toBe(before);
  });

  it("stops a deep audit: the request and the model's call are cancelled, the notes reviewed before keep their records, and the next run sends only the rest", async () => {
    const view = await healthView();
    // Four new notes to review (every other note has its record), long enough for two requests of two.
    mkdirSync(join(vault.vault, "Stop"), { recursive: true });
    for (const n of [1, 2, 3, 4]) writeFileSync(join(vault.vault, "Stop", `Stop test ${n}.md`), longNote(n));
    const plan = await waitFor(
      async () => {
        const planned = (await dryRun()).plan;
        return planned?.to_send === 4 && planned;
      },
      "the server to read the new notes",
      30_000,
    );
    expect(plan.requests).toBe(2);
    const notes = plan.notes;
    button(view.containerEl, "Deep audit").click();
    const line = await waitFor(() => view.containerEl.querySelector<HTMLElement>(".quire-deep-plan-line[data-cached]"), "the plan");
    expect([line.dataset.cached, line.dataset.toSend]).toEqual([String(notes - 4), "4"]);
    const files = treeBytes(vault.vault);

    // The request with the last note is held; the other is answered at once.
    script.holdTitle = "Stop test 4";
    script.held = [];
    chat.delayMs = 200;
    const sent = chat.requests.length;
    const cancelled = chat.cancelled;
    const start = view.containerEl.querySelector(".quire-deep-start") as HTMLButtonElement;
    const run = button(view.containerEl, "Run");
    try {
      run.click();
      expect(run.textContent).toBe("Stop");
      expect(run.disabled).toBe(false);
      expect(run.classList.contains("mod-warning")).toBe(true);
      expect(run.classList.contains("mod-cta")).toBe(false);
      expect(start.disabled).toBe(true);
      await waitFor(() => chat.requests.length - sent >= 2 && script.held.length > 0, "both requests of notes");
      expect(script.held).toContain("Stop test 4");
      const held = script.held.length;
      // The request answered has its records kept while the other one is held.
      await waitFor(async () => (await dryRun()).plan?.cached === notes - held, "the answered request's records", 30_000);
      const status = view.containerEl.querySelector(".quire-deep-status");
      expect(text(status)).toMatch(/^The language model is reviewing the notes…/);

      run.click();
      await waitFor(() => text(status).startsWith("Stopped"), "the stop");
      expect(text(status)).toMatch(/^Stopped after \d+ s\. The notes reviewed so far keep their records, so the next run sends only the rest; Deep audit counts what is left\.$/);
      expect(status?.classList.contains("is-error")).toBe(false);
      expect(run.textContent).toBe("Run");
      expect(run.disabled).toBe(false);
      expect(run.classList.contains("mod-cta")).toBe(true);
      expect(run.classList.contains("mod-warning")).toBe(false);
      expect(start.disabled).toBe(false);
      expect(view.containerEl.querySelector(".quire-deep-summary")).toBeNull();
      // quire saw the client go and cancelled the held call to the model; no review of the vault followed.
      await waitFor(() => chat.cancelled > cancelled, "quire to cancel the model call", 10_000);
      expect(chat.cancelled - cancelled).toBe(1);
      expect(chat.requests.length - sent).toBe(2);
      // The status line stays (the timer is stopped), and the vault is as it was.
      await new Promise((r) => setTimeout(r, 1_200));
      expect(text(status)).toMatch(/^Stopped after /);
      expect(treeBytes(vault.vault)).toEqual(files);

      // The plan counts the records kept: only the held request's notes are left.
      button(view.containerEl, "Deep audit").click();
      const after = await waitFor(() => {
        const el = view.containerEl.querySelector<HTMLElement>(".quire-deep-plan-line[data-cached]");
        return el !== line && el;
      }, "the plan after the stop");
      expect([after.dataset.cached, after.dataset.toSend]).toEqual([String(notes - held), String(held)]);
      expect(view.containerEl.querySelector(".quire-deep-status")).toBeNull();
    } finally {
      script.holdTitle = null;
      chat.delayMs = 0;
    }

    // Run again: the server takes it, sends the held request's notes only, and answers.
    const again = chat.requests.length;
    button(view.containerEl, "Run").click();
    const summary = await waitFor(() => text(view.containerEl.querySelector(".quire-deep-summary")), "the run after the stop", 60_000);
    expect(summary).toMatch(
      new RegExp(`^Done in \\d+ s\\. Sent 1 request for the notes and 1 for the vault-wide review; ${notes - script.held.length} records from the cache, 1 path that named no note dropped\\.$`),
    );
    const asked = chat.requests[again]?.messages.find((m) => m.role === "user")?.content ?? "";
    expect([...asked.matchAll(/^\[N\d+\] (.*)$/gm)].map((m) => m[1])).toEqual(script.held);
    expect(chat.requests.length - again).toBe(2);
    expect(treeBytes(vault.vault)).toEqual(files);
  });
});

/** A note of some 2,000 tokens (the map cuts it to 1,200): two fill a request. */
function longNote(n: number): string {
  const line = `Stop test ${n} keeps a long log of feeding the starter, running intervals and the books read, one entry at a time.`;
  return `# Stop test ${n}\n\n${Array.from({ length: 80 }, (_, i) => `${line} Entry ${i + 1}.`).join("\n\n")}\n`;
}
