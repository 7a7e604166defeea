// The built plugin's link to the server: a clear notice when quire is down, refused or has no
// index, reconnecting by itself; the status bar (generation, notes, sync); and starting and
// stopping `quire serve` for the vault.
import { chmodSync, writeFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  freePort,
  loadPlugin,
  makeVault,
  noticesSince,
  getJson,
  quireEnv,
  reachable,
  startQuire,
  waitFor,
  type Loaded,
  type QuireServer,
  type TestVault,
} from "./harness";
import type { ServerStatus } from "../src/api";
import { Notice } from "./obsidian-shim";
import { QUIRE_BIN } from "./paths";

const cleanups: (() => unknown)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function vaultForTest(options: { index?: boolean } = {}): TestVault {
  const vault = makeVault(options);
  cleanups.push(() => vault.remove());
  return vault;
}

async function serve(vault: TestVault, options: Parameters<typeof startQuire>[1] = {}): Promise<QuireServer> {
  const server = await startQuire(vault, options);
  cleanups.push(() => server.stop());
  return server;
}

async function plugin(vault: TestVault, settings: Record<string, unknown>): Promise<Loaded> {
  const loaded = await loadPlugin(vault.vault, settings);
  cleanups.push(() => loaded.unload());
  return loaded;
}

/**
 * The texts `el` shows from now on, each once in a row. A sync of one note starts and ends
 * within tens of milliseconds, quicker than polling would see.
 */
function textsShown(el: HTMLElement): () => string[] {
  const texts: string[] = [];
  const observer = new MutationObserver((records) => {
    for (const record of records) {
      for (const node of Array.from(record.addedNodes)) {
        const text = node.textContent ?? "";
        if (node.nodeType === Node.TEXT_NODE && texts.at(-1) !== text) texts.push(text);
      }
    }
  });
  observer.observe(el, { childList: true });
  cleanups.push(() => observer.disconnect());
  return () => texts;
}

function statusBar(loaded: Loaded): HTMLElement {
  const el = loaded.app.shimStatusBarEl.querySelector(".quire-status");
  if (!(el instanceof HTMLElement)) throw new Error("no status bar item");
  return el;
}

describe("the connection to quire serve", () => {
  it("says once that quire is down and what to do, then reconnects by itself when it comes back", async () => {
    const vault = vaultForTest();
    const port = await freePort();
    const before = Notice.shimShown.length;
    const loaded = await plugin(vault, { serverUrl: `http://127.0.0.1:${port}` });
    const bar = statusBar(loaded);
    await waitFor(() => bar.textContent === "quire: offline", "the offline status");
    expect(bar.hasClass("is-down")).toBe(true);
    const [down] = noticesSince(before);
    expect(down).toContain(`Cannot reach quire at http://127.0.0.1:${port}.`);
    expect(down).toContain(`quire --vault "${vault.vault}" serve --port ${port}`);
    expect(down).toContain("Start the server automatically");
    expect(bar.getAttribute("aria-label")).toBe(down);
    // It keeps trying (1 s, 2 s, …) without saying it again.
    await new Promise((r) => setTimeout(r, 3_500));
    expect(noticesSince(before)).toEqual([down]);

    const server = await serve(vault, { port });
    await waitFor(() => bar.textContent === "quire: gen 1 · 47 notes", "the reconnection", 20_000);
    expect(noticesSince(before)).toEqual([down, "Connected to quire: 47 notes indexed."]);
    expect(bar.hasClass("is-ok")).toBe(true);
    expect(bar.getAttribute("aria-label")).toMatch(/^Index generation 1: 47 notes, \d+ chunks, 0 embeddings\./);

    // The server stops: the events stream ends, the plugin says so and comes back with it.
    await server.stop();
    await waitFor(() => bar.textContent === "quire: offline", "the offline status again");
    await serve(vault, { port });
    await waitFor(() => bar.textContent?.startsWith("quire: gen"), "the second reconnection", 20_000);
    expect(noticesSince(before).filter((n) => n.startsWith("Connected"))).toHaveLength(2);
  });

  it("shows the generation, the note count and a sync while the server runs it", async () => {
    const vault = vaultForTest();
    const server = await serve(vault);
    const loaded = await plugin(vault, { serverUrl: server.url });
    const bar = statusBar(loaded);
    await waitFor(() => bar.textContent === "quire: gen 1 · 47 notes", "the status");
    expect(bar.hasClass("is-ok")).toBe(true);
    const shown = textsShown(bar);
    // A note changes on disk (Obsidian is not told): the server says when its sync starts and ends.
    writeFileSync(join(vault.vault, "Areas/Sleep.md"), "# Sleep\n\nEight hours, no screens after ten.\n");
    await waitFor(() => bar.textContent === "quire: gen 2 · 47 notes", "the sync to be reported");
    // sync_started, then index (its generation read from /api/status a moment later).
    expect(shown()).toEqual(["quire: gen 1 · 47 notes · syncing…", "quire: gen 1 · 47 notes", "quire: gen 2 · 47 notes"]);
    expect(bar.hasClass("is-ok")).toBe(true);
    // The tooltip's last sync comes with the status read after the event, and how long ago it
    // was depends on the machine's load: wait for it, in seconds or minutes.
    await waitFor(
      () => /Last sync \d+ (s|min) ago\./.test(bar.getAttribute("aria-label") ?? ""),
      "the last sync in the tooltip",
    );
  });

  it("says when the server needs a token, and connects once it is set", async () => {
    const vault = vaultForTest();
    const token = "a-token-of-twenty-characters";
    const server = await serve(vault, { env: { QUIRE_TOKEN: token } });
    const before = Notice.shimShown.length;
    const loaded = await plugin(vault, { serverUrl: server.url });
    const bar = statusBar(loaded);
    await waitFor(() => bar.textContent === "quire: refused", "the refusal");
    expect(noticesSince(before)[0]).toMatch(/needs a token: set the server's token in the plugin's settings/);
    const tab = loaded.app.shimSettingTabs[0];
    await tab?.setControlValue("token", token);
    await waitFor(() => bar.textContent === "quire: gen 1 · 47 notes", "the connection with the token", 20_000);
  });

  it("says when the index does not exist yet", async () => {
    const vault = vaultForTest({ index: false });
    const server = await serve(vault, { serveArgs: ["--no-watch"] });
    const before = Notice.shimShown.length;
    const loaded = await plugin(vault, { serverUrl: server.url });
    const bar = statusBar(loaded);
    await waitFor(() => bar.textContent === "quire: indexing…", "the missing index", 20_000);
    expect(noticesSince(before)).toEqual([
      "quire has no index of this vault yet, and this server does not build one (it runs with --no-watch). Run quire index for this vault, then it connects by itself.",
    ]);
  });
});

describe("the sync state the server reports", () => {
  it("follows hello, sync_started, a slow sync, a failed one and the next index", async () => {
    // A scripted server: its /api/status, and an events stream the test writes to.
    const status: ServerStatus = { ready: true, generation: 3, notes_indexed: 5, chunks: 9, embeddings: 0, default_mode: "bm25", llm: null, watching: true, syncing: false, last_sync: null };
    let events: ServerResponse | null = null;
    const fake = createServer((request, response) => {
      if (request.url === "/api/status") {
        response.writeHead(200, { "Content-Type": "application/json" });
        response.end(JSON.stringify(status));
      } else if (request.url === "/api/events") {
        response.writeHead(200, { "Content-Type": "text/event-stream" });
        // A sync started between the status and the events: hello says so.
        response.write(`event: hello\ndata: ${JSON.stringify({ generation: 3, watching: true, syncing: true })}\n\n`);
        events = response;
      } else {
        response.writeHead(404);
        response.end();
      }
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          fake.closeAllConnections();
          fake.close(() => resolve());
        }),
    );
    const send = (name: string, data: object) => events?.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
    const vault = vaultForTest({ index: false });
    const loaded = await plugin(vault, { serverUrl: `http://127.0.0.1:${(fake.address() as AddressInfo).port}` });
    const bar = statusBar(loaded);
    await waitFor(() => bar.textContent === "quire: gen 3 · 5 notes · syncing…", "the sync hello reports");
    expect(bar.hasClass("is-busy")).toBe(true);

    // A sync that is slow to finish is reported as a failure that is still running: still syncing.
    const slow = "the sync of 2 notes has been running for 120 s and has not finished";
    status.syncing = true;
    status.last_sync = { kind: "sync_failed", data: { at: new Date().toISOString(), message: slow, running: true } };
    send("sync_failed", { at: status.last_sync.data.at, message: slow, running: true });
    await waitFor(() => bar.getAttribute("aria-label")?.includes(`A sync is slow: ${slow}`), "the slow sync in the tooltip");
    expect(bar.textContent).toBe("quire: gen 3 · 5 notes · syncing…");

    // It fails: no longer syncing.
    status.syncing = false;
    status.last_sync = { kind: "sync_failed", data: { at: new Date().toISOString(), message: "disk full", running: false } };
    send("sync_failed", { at: status.last_sync.data.at, message: "disk full", running: false });
    await waitFor(() => bar.textContent === "quire: gen 3 · 5 notes · sync failed", "the failure");
    expect(bar.hasClass("is-down")).toBe(true);
    await waitFor(
      () => /Last sync failed \d+ (s|min) ago: disk full/.test(bar.getAttribute("aria-label") ?? ""),
      "the failed sync in the tooltip",
    );

    // The next attempt starts, and succeeds.
    send("sync_started", { at: new Date().toISOString(), upserts: 1, deletes: 0, rescan: false });
    await waitFor(() => bar.textContent === "quire: gen 3 · 5 notes · syncing…", "the next sync");
    Object.assign(status, { generation: 4, last_sync: { kind: "index", data: { at: new Date().toISOString(), generation: 4 } } });
    send("index", { generation: 4, at: new Date().toISOString(), upserts: ["A.md"], deletes: [] });
    await waitFor(() => bar.textContent === "quire: gen 4 · 5 notes", "the index");
    expect(bar.hasClass("is-ok")).toBe(true);
  });
});

describe("starting the server for the vault", () => {
  it("starts quire serve on the port of the server URL, and stops it when the plugin unloads", async () => {
    const vault = vaultForTest();
    const port = await freePort();
    // The plugin runs `quire --vault <vault> serve --port <port>`; the rest comes from the environment.
    const saved = { ...process.env };
    cleanups.push(() => {
      process.env = saved;
    });
    process.env = quireEnv({ QUIRE_INDEX_DIR: vault.index });
    const loaded = await loadPlugin(vault.vault, { serverUrl: `http://127.0.0.1:${port}`, autoStart: true, quireBinary: QUIRE_BIN });
    const bar = statusBar(loaded);
    await waitFor(() => bar.textContent === "quire: gen 1 · 47 notes", "the started server", 30_000);
    const status = (await getJson(`http://127.0.0.1:${port}/api/status`)) as { vault_root: string };
    expect(status.vault_root).toBe(vault.vault);

    loaded.unload();
    await waitFor(async () => !(await reachable(`http://127.0.0.1:${port}/api/status`)), "the server to stop", 10_000);
  });

  it("shows what the server wrote when it fails to start", async () => {
    const vault = vaultForTest();
    const port = await freePort();
    const fake = join(vault.dir, "fake-quire");
    writeFileSync(fake, '#!/bin/sh\necho "quire: index is locked by pid 4242 (another quire serve or watch)" >&2\nexit 1\n');
    chmodSync(fake, 0o755);
    const before = Notice.shimShown.length;
    const loaded = await plugin(vault, { serverUrl: `http://127.0.0.1:${port}`, autoStart: true, quireBinary: fake });
    const bar = statusBar(loaded);
    await waitFor(() => bar.textContent === "quire: offline", "the failure");
    expect(noticesSince(before)[0]).toBe(
      "quire serve could not start. quire serve stopped (exit code 1):\nquire: index is locked by pid 4242 (another quire serve or watch)",
    );
  });

  it("says when the quire program is not there", async () => {
    const vault = vaultForTest();
    const port = await freePort();
    const before = Notice.shimShown.length;
    await plugin(vault, { serverUrl: `http://127.0.0.1:${port}`, autoStart: true, quireBinary: "/nonexistent/quire" });
    const notice = await waitFor(() => noticesSince(before)[0], "the notice");
    expect(notice).toBe(
      `quire serve could not start. There is no quire program at "/nonexistent/quire". Install quire, or set the path of the quire program in the plugin's settings.`,
    );
  });
});
