/**
 * The contract between the plugin and `quire serve`, checked in every test (a vitest setup
 * file): each request the plugin sends to a quire server must be one the server documents in its
 * own OpenAPI document (`GET /api/openapi.json`, whose request schemas the server generates from
 * its Rust types). A test fails when the plugin sent a route, a method, a query parameter or a
 * JSON body that the document does not allow.
 *
 * How the requests are seen: the plugin sends through `requestUrl` (the shim sends through
 * `sendRequestUrl`) and through Node's `http`/`https` `request` (replaced here on the module
 * objects, which the built main.js gets from `require`). The plugin's requests are those whose
 * call stack runs through main.js: the tests' own requests (the harness's `postJson`, the
 * recorder's forwarding) are not held to the document. An independent witness, on
 * `ClientRequest.prototype.end`, sees every HTTP request the plugin ends, however it was made:
 * one the interception missed fails the test, so a broken interception cannot pass unnoticed.
 *
 * Which servers are quire: the ones the harness started (`startQuire`, and `startRecorder`'s
 * proxies, which forward `/api/openapi.json` too); scripted fake servers are left alone, as the
 * document fetch would disturb what they record. The document is fetched from the request's
 * origin when the request is made (the server is up then), once per origin.
 */
import { appendFileSync } from "node:fs";
import type * as Http from "node:http";
import { createRequire } from "node:module";
import type * as O from "obsidian";
import { afterAll, afterEach, inject } from "vitest";
import { contractProblems, type OpenApi } from "./openapi-contract.mjs";
import { MAIN_JS } from "./paths";

declare module "vitest" {
  export interface ProvidedContext {
    /** The file each test file appends its counts to (global-setup.ts sums them up). */
    contractLog: string;
  }
}

// ---- A request against the document ------------------------------------------------------------

// The check itself (the JSON Schema subset validator, the path templates, the query parameters) is
// in openapi-contract.mjs, shared with the web page's browser tests (web-tests/). It is written by
// hand, not with a validator package: the document uses a small subset of JSON Schema 2020-12,
// and 60 lines check it without a dependency. A keyword outside the subset is reported, not
// skipped.

// ---- Seeing the plugin's requests -------------------------------------------------------------

const nodeRequire = createRequire(import.meta.url);
const http = nodeRequire("node:http") as typeof Http;
const https = nodeRequire("node:https") as typeof Http;
const plainRequest = http.request;

interface Sent {
  method: string;
  origin: string;
  path: string;
  /** quire's document for the origin (undefined: not a quire server). */
  doc?: Promise<OpenApi>;
  /** Once the body is complete: the problems, or null when the request could not be checked. */
  result?: Promise<string[] | null>;
  body?: string;
}

/** The origins of the quire servers (and proxies of them) the harness started. */
const quireOrigins = new Set<string>();
const documents = new Map<string, Promise<OpenApi>>();
/** Requests not yet checked; the keys seen by the replacements and by the witness since the last check. */
let pending: Sent[] = [];
let intercepted: string[] = [];
let witnessed: string[] = [];
/** This test file's counts. */
const counts = { intercepted: 0, toQuire: 0, checked: 0, unchecked: 0 };

/** A quire server (or a proxy in front of one) at `url`: the plugin's requests to it are checked. */
export function noteQuireServer(url: string): void {
  quireOrigins.add(new URL(url).origin);
}

/** `METHOD origin/path` of a request the contract covers (null: not an `/api/` route the plugin is held to). */
function keyOf(method: string, url: string): { key: string; origin: string; path: string } | null {
  const { origin, pathname, search } = new URL(url);
  if (!pathname.startsWith("/api/") || pathname === "/api/openapi.json" || pathname === "/api/events") return null;
  return { key: `${method} ${origin}${pathname}${search}`, origin, path: pathname + search };
}

function fetchDocument(origin: string, authorization: string | undefined): Promise<OpenApi> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = authorization ? { Authorization: authorization } : {};
    const request = plainRequest(`${origin}/api/openapi.json`, { headers }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (piece: string) => (text += piece));
      response.on("error", reject);
      response.on("end", () => {
        try {
          const doc = JSON.parse(text) as Partial<OpenApi>;
          if (response.statusCode === 200 && typeof doc.openapi === "string" && doc.paths) resolve(doc as OpenApi);
          else reject(new Error(`no OpenAPI document at ${origin} (${response.statusCode})`));
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    });
    request.setTimeout(10_000, () => request.destroy(new Error("timed out")));
    request.on("error", reject);
    request.end();
  });
}

/** The origin's document, fetched once; a failed fetch (server down, token missing) is tried again by the next request. */
function documentOf(origin: string, authorization: string | undefined): Promise<OpenApi> {
  const known = documents.get(origin);
  if (known) return known;
  const doc = fetchDocument(origin, authorization);
  documents.set(origin, doc);
  doc.catch(() => {
    if (documents.get(origin) === doc) documents.delete(origin);
  });
  return doc;
}

function intercept(method: string, url: string, authorization: string | undefined): Sent | null {
  const route = keyOf(method, url);
  if (!route) return null;
  intercepted.push(route.key);
  counts.intercepted++;
  const sent: Sent = { method, origin: route.origin, path: route.path };
  if (quireOrigins.has(route.origin)) sent.doc = documentOf(route.origin, authorization);
  pending.push(sent);
  return sent;
}

function finish(sent: Sent, body: string | undefined): void {
  sent.body = body;
  sent.result = (sent.doc ?? Promise.reject(new Error("not quire"))).then(
    (doc) => contractProblems(doc, sent.method, sent.path, body),
    () => null,
  );
}

const text = (chunk: unknown): string => (typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8"));

/** Whether the code that runs now was called by the plugin (the built main.js). */
function fromPlugin(): boolean {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 50;
  const stack = new Error().stack ?? "";
  Error.stackTraceLimit = limit;
  return stack.includes(MAIN_JS);
}

/** The shim's `requestUrl` sends through here: the request is noted, and `send`'s own HTTP request is not noted again. */
let sendingRequestUrl = false;
export function sendRequestUrl<T>(param: O.RequestUrlParam, send: () => T): T {
  const authorization = Object.entries(param.headers ?? {}).find(([name]) => name.toLowerCase() === "authorization")?.[1];
  const sent = intercept(param.method ?? "GET", param.url, authorization);
  if (sent) finish(sent, param.body === undefined ? undefined : text(typeof param.body === "string" ? param.body : new Uint8Array(param.body)));
  sendingRequestUrl = true;
  try {
    return send();
  } finally {
    sendingRequestUrl = false;
  }
}

/** `http.request` and `https.request`, as main.js's `require` gives them: each request is noted, its body read as it is written. */
for (const module of [http, https]) {
  const original = module.request;
  module.request = function (this: unknown, ...args: unknown[]) {
    const request = (original as (...a: unknown[]) => Http.ClientRequest).apply(this, args);
    if (sendingRequestUrl || !fromPlugin()) return request;
    const authorization = request.getHeader("authorization");
    const sent = intercept(request.method, `${request.protocol}//${String(request.getHeader("host"))}${request.path}`, typeof authorization === "string" ? authorization : undefined);
    if (!sent) return request;
    const chunks: string[] = [];
    const write = request.write.bind(request);
    const end = request.end.bind(request);
    request.write = ((...a: unknown[]) => {
      if (a[0] != null && typeof a[0] !== "function") chunks.push(text(a[0]));
      return (write as (...x: unknown[]) => boolean)(...a);
    }) as typeof request.write;
    request.end = ((...a: unknown[]) => {
      if (a[0] != null && typeof a[0] !== "function") chunks.push(text(a[0]));
      if (!sent.result) finish(sent, chunks.length > 0 ? chunks.join("") : undefined);
      return (end as (...x: unknown[]) => Http.ClientRequest)(...a);
    }) as typeof request.end;
    return request;
  };
}

/** The witness: every request ends here, however it was made; those made from main.js's code are the plugin's. */
const witnessedRequests = new WeakSet<Http.ClientRequest>();
// eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the request as `this`
const prototypeEnd = http.ClientRequest.prototype.end;
http.ClientRequest.prototype.end = function (this: Http.ClientRequest, ...a: unknown[]) {
  const route = keyOf(this.method, `${this.protocol}//${String(this.getHeader("host"))}${this.path}`);
  if (route && !witnessedRequests.has(this)) {
    witnessedRequests.add(this);
    if (fromPlugin()) {
      witnessed.push(route.key);
      if (quireOrigins.has(route.origin)) counts.toQuire++;
    }
  }
  return (prototypeEnd as (...x: unknown[]) => Http.ClientRequest).apply(this, a);
} as typeof prototypeEnd;

// ---- The checks -------------------------------------------------------------------------------

/** Violations the running test makes on purpose (to see the server's answer to them). */
let expected: { request: RegExp; problem: RegExp; seen: boolean }[] = [];

/**
 * The running test sends, on purpose, a request the document does not allow (to show the
 * server's error): a problem matching `problem` in a request matching `request` (`METHOD
 * /path?query`) does not fail it, and the test fails if it does not happen.
 */
export function expectContractViolation(request: RegExp, problem: RegExp): void {
  expected.push({ request, problem, seen: false });
}

/** The problems left once those the test expects are taken out. */
function unexpected(sent: Sent, problems: string[], wanted: typeof expected): string[] {
  return problems.filter((problem) => {
    const allowed = wanted.find((e) => e.request.test(`${sent.method} ${sent.path}`) && e.problem.test(problem));
    if (allowed) allowed.seen = true;
    return !allowed;
  });
}

/** Checks the requests sent since the last call; throws what broke the document, or was not intercepted. */
async function verify(when: string): Promise<void> {
  const wanted = expected;
  expected = [];
  const missed = [...witnessed];
  for (const key of intercepted) {
    const at = missed.indexOf(key);
    if (at >= 0) missed.splice(at, 1);
  }
  witnessed = [];
  intercepted = [];
  if (missed.length > 0) {
    throw new Error(`contract: ${missed.length} request(s) of the plugin went past the interception (${when}):\n${missed.join("\n")}`);
  }
  const done = pending.filter((sent) => sent.result !== undefined);
  pending = pending.filter((sent) => sent.result === undefined);
  const failures: string[] = [];
  for (const sent of done) {
    let problems = await sent.result;
    if (problems === null || problems === undefined) {
      if (sent.doc) counts.unchecked++;
      continue;
    }
    counts.checked++;
    problems = unexpected(sent, problems, wanted);
    if (problems.length === 0) continue;
    const body = sent.body === undefined ? "(no body)" : sent.body.length > 600 ? `${sent.body.slice(0, 600)}…` : sent.body;
    failures.push(`${sent.method} ${sent.path} (at ${sent.origin})\n  body: ${body}\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
  const absent = wanted.filter((e) => !e.seen);
  for (const e of absent) failures.push(`expected on purpose, and not sent: a request matching ${String(e.request)} with a problem matching ${String(e.problem)}`);
  if (failures.length > 0) {
    throw new Error(`The plugin's requests break quire's OpenAPI document (GET /api/openapi.json) ${when}:\n${failures.join("\n")}`);
  }
}

afterEach(() => verify("in this test"));

afterAll(async (suite) => {
  // Requests still open (a stream cut by the end of the file) are checked with what they sent.
  for (const sent of pending) if (!sent.result) finish(sent, undefined);
  await verify("at the end of the file");
  const file = "filepath" in suite ? suite.filepath : (suite.file?.filepath ?? "?");
  appendFileSync(inject("contractLog"), `${JSON.stringify({ file, ...counts })}\n`);
  if (counts.toQuire > 0 && counts.checked === 0) {
    throw new Error(
      `contract: the plugin sent ${counts.toQuire} request(s) to quire in this file and none was checked against its OpenAPI document (${counts.intercepted} intercepted, ${counts.unchecked} without a document)`,
    );
  }
});
