// The built plugin's link to the server: a clear notice when quire is down, refused or has no
// index, reconnecting by itself; the status bar (generation, notes, sync); and starting and
// stopping `quire serve` for the vault.
import { chmodSync, writeFileSync } from "node:fs";
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
import { Notice, TFile } from "./obsidian-shim";
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

  it("shows the generation, the note count and a running sync in the status bar", async () => {
    const vault = vaultForTest();
    const server = await serve(vault);
    const loaded = await plugin(vault, { serverUrl: server.url });
    const bar = statusBar(loaded);
    await waitFor(() => bar.textContent === "quire: gen 1 · 47 notes", "the status");
    // A note is saved: Obsidian reports it, the server syncs it a moment later.
    const path = "Areas/Sleep.md";
    writeFileSync(join(vault.vault, path), "# Sleep\n\nEight hours, no screens after ten.\n");
    loaded.app.shimVault.trigger("modify", new TFile(path));
    expect(bar.textContent).toBe("quire: gen 1 · 47 notes · syncing…");
    expect(bar.hasClass("is-busy")).toBe(true);
    await waitFor(() => bar.textContent === "quire: gen 2 · 47 notes", "the sync to be reported");
    expect(bar.getAttribute("aria-label")).toMatch(/Last sync \d+ s ago\./);
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
