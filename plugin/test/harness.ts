/**
 * What the integration tests run on: a temporary copy of the sample vault indexed by the real
 * quire binary, `quire serve` on it, a scripted OpenAI-compatible chat server for answers and
 * drafts, and the built plugin (main.js) loaded into the shim app as Obsidian loads it.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, get, request, type Server } from "node:http";
import { createRequire } from "node:module";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runInThisContext } from "node:vm";
import type * as O from "obsidian";
import { noteQuireServer } from "./contract";
import * as obsidian from "./obsidian-shim";
import { MAIN_JS, PLUGIN_DIR, QUIRE_BIN, SAMPLE_VAULT } from "./paths";

/** The environment quire runs in: no embedding model, no local model, nothing inherited. */
export function quireEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) if (name.startsWith("QUIRE_")) delete env[name];
  return { ...env, QUIRE_MODEL: "/nonexistent/quire-model.bin", QUIRE_LLM_LOCAL: "0", ...extra };
}

export interface TestVault {
  dir: string;
  vault: string;
  index: string;
  remove(): void;
}

/** A copy of examples/vault with its index built (BM25 only unless `embeddings`; none if `index: false`). */
export function makeVault(options: { embeddings?: string; index?: boolean } = {}): TestVault {
  const dir = mkdtempSync(join(tmpdir(), "quire-plugin-"));
  const vault = join(dir, "vault");
  const index = join(dir, "index");
  cpSync(SAMPLE_VAULT, vault, { recursive: true });
  const args = ["--vault", vault, "--index-dir", index];
  if (options.embeddings) args.push("--model", options.embeddings);
  else args.push("--no-embeddings");
  if (options.index !== false) buildIndex(args);
  return { dir, vault, index, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Every file under `root` (dot folders too), by path relative to it, with the sha256 of its
 * bytes: equal before and after means nothing was written, renamed or deleted.
 */
export function treeBytes(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[path.slice(root.length + 1)] = createHash("sha256").update(readFileSync(path)).digest("hex");
  }
  return out;
}

/** `quire index` with these global flags. */
export function buildIndex(args: string[]): void {
  execFileSync(QUIRE_BIN, [...args, "index"], { env: quireEnv(), stdio: ["ignore", "ignore", "pipe"] });
}

export interface QuireServer {
  url: string;
  port: number;
  child: ChildProcess;
  stderr(): string;
  stop(): Promise<void>;
}

/** Starts `quire serve` on the vault; resolves once it listens. */
export function startQuire(
  vault: TestVault,
  options: { port?: number; chatUrl?: string; embeddings?: string; env?: Record<string, string>; serveArgs?: string[] } = {},
): Promise<QuireServer> {
  const env = quireEnv(options.env);
  if (options.chatUrl) Object.assign(env, { QUIRE_LLM_BASE_URL: options.chatUrl, QUIRE_LLM_MODEL: "fake-model" });
  const model = options.embeddings ? ["--model", options.embeddings] : ["--no-embeddings"];
  const args = ["--vault", vault.vault, "--index-dir", vault.index, ...model, "serve", "--port", String(options.port ?? 0), "--debounce-ms", "200", ...(options.serveArgs ?? [])];
  const child = spawn(QUIRE_BIN, args, { env, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`quire serve did not start:\n${log}`)), 60_000);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (piece: string) => {
      log += piece;
      const match = /listening on http:\/\/([^\s/]+)\//.exec(log);
      if (match?.[1] && timer) {
        clearTimeout(timer);
        const url = `http://${match[1]}`;
        noteQuireServer(url);
        resolve({
          url,
          port: Number(new URL(url).port),
          child,
          stderr: () => log,
          stop: () => stopChild(child),
        });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`quire serve exited (${code}):\n${log}`));
    });
  });
}

export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGINT");
    setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
  });
}

/** A port nothing listens on (it was free a moment ago). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface FakeChat {
  url: string;
  /** The pieces of the next answers, one list per request; the last list repeats. */
  script: string[][];
  /**
   * When set, the answer to each request, made from it (the script is not read): a string is sent
   * in two pieces, a list piece by piece (a long list holds the answer open for a while).
   */
  reply?: (request: FakeChat["requests"][number]) => string | string[];
  /** Milliseconds between pieces. */
  delayMs: number;
  requests: { messages: { role: string; content: string }[]; stream?: boolean }[];
  /** Answers whose client (quire) went away before they were complete. */
  cancelled: number;
  close(): Promise<void>;
}

/** A fake `POST /v1/chat/completions` that streams scripted answers piece by piece. */
export function startFakeChat(script: string[][], delayMs = 150): Promise<FakeChat> {
  const chat: Omit<FakeChat, "url" | "close"> = { script, delayMs, requests: [], cancelled: 0 };
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (piece: Buffer) => (body += piece.toString("utf8")));
    request.on("end", () => {
      void (async () => {
        const asked = JSON.parse(body || "{}") as FakeChat["requests"][number];
        chat.requests.push(asked);
        const replied = chat.reply?.(asked);
        const pieces =
          typeof replied === "string"
            ? [replied.slice(0, 1), replied.slice(1)]
            : (replied ?? (chat.script.length > 1 ? (chat.script.shift() ?? []) : (chat.script[0] ?? [])));
        let finished = false;
        response.on("close", () => {
          if (!finished) chat.cancelled++;
        });
        response.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
        for (const [i, piece] of pieces.entries()) {
          if (i > 0) await new Promise((r) => setTimeout(r, chat.delayMs));
          if (response.destroyed) return;
          const chunk = { id: "fake", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] };
          response.write(`data: ${JSON.stringify(chunk)}\n\n`);
        }
        const end = { id: "fake", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] };
        finished = true;
        response.end(`data: ${JSON.stringify(end)}\n\ndata: [DONE]\n\n`);
      })();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve(
        Object.assign(chat, {
          url: `http://127.0.0.1:${port}/v1`,
          close: () =>
            new Promise<void>((done) => {
              server.closeAllConnections();
              server.close(() => done());
            }),
        }),
      );
    });
  });
}

export interface AskRecord {
  /** The JSON body quire received. */
  body: Record<string, unknown>;
  /** The `done` event's object, once it went through (null before, or when the answer ended otherwise). */
  done: Record<string, unknown> | null;
}

export interface Recorder {
  url: string;
  /** Each `POST /api/ask` that went through, in order. */
  asks: AskRecord[];
  /** Each `POST /api/draft` that went through, in order. */
  drafts: AskRecord[];
  close(): Promise<void>;
}

/**
 * A proxy in front of `quire serve` (at `target`) that passes every request and answer through
 * as they come, and records each `POST /api/ask` and `POST /api/draft`: the body the server
 * received and its `done` event.
 */
export function startRecorder(target: string): Promise<Recorder> {
  const asks: AskRecord[] = [];
  const drafts: AskRecord[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const pieces: Buffer[] = [];
    incoming.on("data", (piece: Buffer) => pieces.push(piece));
    incoming.on("end", () => {
      const body = Buffer.concat(pieces);
      const records = incoming.method !== "POST" ? null : incoming.url === "/api/ask" ? asks : incoming.url === "/api/draft" ? drafts : null;
      const record: AskRecord | null = records ? { body: JSON.parse(body.toString("utf8")) as Record<string, unknown>, done: null } : null;
      if (record) records?.push(record);
      const upstream = request(`${target}${incoming.url ?? "/"}`, { method: incoming.method, headers: incoming.headers }, (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        let text = "";
        answer.on("data", (piece: Buffer) => {
          if (record && !record.done) {
            text += piece.toString("utf8");
            const done = /(?:^|\n)event: done\ndata: (.*)\n/.exec(text)?.[1];
            if (done) record.done = JSON.parse(done) as Record<string, unknown>;
          }
          outgoing.write(piece);
        });
        answer.on("end", () => outgoing.end());
        answer.on("error", () => outgoing.destroy());
      });
      upstream.on("error", () => outgoing.destroy());
      // The client went away (a stopped answer, the plugin unloaded): so does the proxy's request.
      outgoing.on("close", () => upstream.destroy());
      upstream.end(body);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      // It forwards everything, /api/openapi.json too: the plugin's requests through it are checked.
      noteQuireServer(`http://127.0.0.1:${port}`);
      resolve({
        url: `http://127.0.0.1:${port}`,
        asks,
        drafts,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

type PluginClass = new (app: O.App, manifest: O.PluginManifest) => O.Plugin;

/** Loads the built main.js as Obsidian does: a CommonJS module whose `obsidian` is the app's (here, the shim). */
export function loadBuiltPlugin(): PluginClass {
  const code = readFileSync(MAIN_JS, "utf8");
  const nodeRequire = createRequire(MAIN_JS);
  const module = { exports: {} as { default?: PluginClass } };
  const wrapper = runInThisContext(`(function (exports, require, module, __filename, __dirname) {${code}\n})`, { filename: MAIN_JS }) as (
    exports: object,
    require: (id: string) => unknown,
    module: object,
    filename: string,
    dirname: string,
  ) => void;
  wrapper(module.exports, (id) => (id === "obsidian" ? obsidian : nodeRequire(id)), module, MAIN_JS, PLUGIN_DIR);
  const plugin = module.exports.default;
  if (!plugin) throw new Error("main.js exports no plugin class");
  return plugin;
}

export const MANIFEST = JSON.parse(readFileSync(join(PLUGIN_DIR, "manifest.json"), "utf8")) as O.PluginManifest;

export interface Loaded {
  app: obsidian.App;
  plugin: O.Plugin;
  /** The plugin as the shim's Plugin (for its load state). */
  component: obsidian.Plugin;
  unload(): void;
}

/**
 * The built plugin loaded into a shim app over `vaultDir`, with these settings saved; `prepare`
 * gets the plugin before it loads (to shorten its timers).
 */
export async function loadPlugin(vaultDir: string, settings: Record<string, unknown>, prepare?: (plugin: O.Plugin) => void): Promise<Loaded> {
  const app = new obsidian.App(vaultDir);
  app.shimData = settings;
  const Plugin = loadBuiltPlugin();
  const plugin = new Plugin(app as unknown as O.App, MANIFEST);
  prepare?.(plugin);
  const component = plugin as unknown as obsidian.Plugin;
  component.load();
  await component.shimLoading;
  app.shimWorkspace.shimLayoutReady();
  return { app, plugin, component, unload: () => component.unload() };
}

/** Waits until `check` returns a truthy value, and returns it. */
export async function waitFor<T>(
  check: () => T | false | null | undefined | "" | 0 | Promise<T | false | null | undefined | "" | 0>,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** GET a JSON document, outside the plugin. */
export function getJson(url: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    get(url, (response) => {
      let text = "";
      response.on("data", (piece: Buffer) => (text += piece.toString("utf8")));
      response.on("end", () => resolve(JSON.parse(text)));
    }).on("error", reject);
  });
}

/** POST a JSON body, outside the plugin (as an MCP client or another device would); resolves with the status and the parsed answer. */
export function postJson(url: string, body: unknown): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(url, { method: "POST", headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(payload) } }, (response) => {
      let text = "";
      response.on("data", (piece: Buffer) => (text += piece.toString("utf8")));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as unknown }));
    });
    req.on("error", reject);
    req.end(payload);
  });
}

/** Whether something answers HTTP at `url`. */
export function reachable(url: string): Promise<boolean> {
  return getJson(url).then(
    () => true,
    () => false,
  );
}

export function noticesSince(count: number): string[] {
  return obsidian.Notice.shimShown.slice(count).map((notice) => notice.shimText);
}

/** Opens a note of the vault in the main area, as clicking it in the file explorer does. */
export async function openNote(app: obsidian.App, path: string): Promise<obsidian.MarkdownView> {
  const file = app.vault.getFileByPath(path);
  if (!file) throw new Error(`no note ${path}`);
  await app.workspace.getLeaf(false).openFile(file);
  const view = app.shimWorkspace.shimActiveLeaf?.shimView;
  if (!(view instanceof obsidian.MarkdownView)) throw new Error("the note did not open in a Markdown view");
  return view;
}

/** Types into an input and sends the `input` event, as a keystroke does. */
export function type(input: HTMLInputElement | HTMLTextAreaElement, text: string): void {
  input.value = text;
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

export function key(el: HTMLElement, name: string, init: KeyboardEventInit = {}): void {
  el.dispatchEvent(new KeyboardEvent("keydown", { key: name, bubbles: true, cancelable: true, ...init }));
}
