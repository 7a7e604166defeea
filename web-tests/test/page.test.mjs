// quire serve's web page in a real browser: Debian's chromium, headless, driven by
// playwright-core (which downloads nothing). The server is the real `quire serve` binary on a
// temporary copy of the sample vault, answering questions through a fake OpenAI-compatible chat
// server on 127.0.0.1 that streams a scripted answer slowly enough to watch it arrive.
//
// Environment: QUIRE_BIN (default ../target/debug/quire), CHROMIUM (default /usr/bin/chromium),
// QUIRE_ARTIFACTS (default ../target/web-tests; the screenshots go there).
//
// The contract: every request the page sends to a quire server must be one the server documents
// in its own OpenAPI document (`GET /api/openapi.json`, whose request schemas the server generates
// from its Rust types). The browser context reports each request of every page it opens (the
// extra pages too); after each test, those sent to a quire server since the last check are held
// to the document with the plugin's tests' check (plugin/test/openapi-contract.mjs), and the test
// fails when one has a route, a method, a query parameter or a JSON body the document does not
// allow, or when a test that uses the page sent it nothing to check.

import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { contractProblems } from "../../plugin/test/openapi-contract.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "../..");
const QUIRE = process.env.QUIRE_BIN || join(repo, "target/debug/quire");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const ARTIFACTS = process.env.QUIRE_ARTIFACTS || join(repo, "target/web-tests");
const ANSWER = [
  "You feed the starter **once a day** ",
  "at a 1:5:5 ratio in winter ",
  "[S1]. <b>not bold</b> ",
  "stays text.",
];

let work, vault, server, chat, browser, page, base, offline, embedded;
const pageErrors = [];
const chatRequests = [];

// ---- The contract: the page's requests against quire's OpenAPI document ----------------------

/** The origins of the quire servers the tests started: the page's requests to them are checked. */
const quireOrigins = new Set();
/** Each origin's document, fetched once. */
const documents = new Map();
/** The page's requests to quire not yet checked: { method, origin, path, body }. */
let pageRequests = [];
/** How many were checked in all, and by test. */
const contractCounts = { checked: 0, byTest: [] };
/** Tests that use no page (nothing is asked of them). */
const WITHOUT_PAGE_REQUESTS = new Set(["the page raised no script error and no policy violation"]);

/** A request of a page in the browser (the `request` event of the context: every page's). */
function notePageRequest(request) {
  const url = new URL(request.url());
  if (!quireOrigins.has(url.origin)) return;
  // The page itself, its assets, the document, and the event stream (not a request/response route).
  if (url.pathname === "/" || url.pathname.startsWith("/assets/") || url.pathname === "/api/openapi.json" || url.pathname === "/api/events") return;
  const body = request.postData();
  pageRequests.push({ method: request.method(), origin: url.origin, path: url.pathname + url.search, body: body ?? undefined });
}

/** How many requests the page sent to `url`'s server since the last check. */
const sentTo = (url) => pageRequests.filter((sent) => sent.origin === new URL(url).origin).length;

function documentOf(origin) {
  if (!documents.has(origin)) {
    documents.set(origin, fetch(`${origin}/api/openapi.json`).then(async (response) => {
      const doc = await response.json();
      if (response.status !== 200 || typeof doc.openapi !== "string" || !doc.paths) throw new Error(`no OpenAPI document at ${origin} (${response.status})`);
      return doc;
    }));
  }
  return documents.get(origin);
}

/** Checks the page's requests since the last call; throws what broke the document. Returns how many were checked. */
async function verifyContract(when) {
  const sent = pageRequests;
  pageRequests = [];
  const failures = [];
  for (const request of sent) {
    const problems = contractProblems(await documentOf(request.origin), request.method, request.path, request.body);
    contractCounts.checked++;
    if (problems.length === 0) continue;
    const body = request.body === undefined ? "(no body)" : request.body.length > 600 ? `${request.body.slice(0, 600)}…` : request.body;
    failures.push(`${request.method} ${request.path} (at ${request.origin})\n  body: ${body}\n${problems.map((p) => `  - ${p}`).join("\n")}`);
  }
  if (failures.length > 0) {
    throw new Error(`The page's requests break quire's OpenAPI document (GET /api/openapi.json) ${when}:\n${failures.join("\n")}`);
  }
  return sent.length;
}

afterEach(async (t) => {
  let checked;
  try {
    checked = await verifyContract("in this test");
  } catch (error) {
    // Also as a diagnostic of the test: a test that failed already reports its own error only.
    t.diagnostic(error.message);
    throw error;
  }
  contractCounts.byTest.push(checked);
  if (checked === 0 && !WITHOUT_PAGE_REQUESTS.has(t.name)) {
    throw new Error("contract: the page sent quire no request to check in this test (is the request recording broken?)");
  }
});

/// A fake /v1/chat/completions: each answer is streamed piece by piece, 250 ms apart.
function startFakeChat() {
  return new Promise((resolveStart) => {
    const fake = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", async () => {
        chatRequests.push(JSON.parse(body || "{}"));
        response.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
        for (const [i, piece] of ANSWER.entries()) {
          if (i > 0) await new Promise((r) => setTimeout(r, 250));
          const chunk = { id: "fake", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] };
          response.write(`data: ${JSON.stringify(chunk)}\n\n`);
        }
        const end = { id: "fake", object: "chat.completion.chunk", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] };
        response.write(`data: ${JSON.stringify(end)}\n\ndata: [DONE]\n\n`);
        response.end();
      });
    });
    fake.listen(0, "127.0.0.1", () => resolveStart(fake));
  });
}

/// Starts `quire serve --port 0` and resolves with its base URL once it listens. Without
/// `chatUrl` no model is configured (answers are extractive).
function startQuire(vault, index, chatUrl, model) {
  const env = { ...process.env, QUIRE_MODEL: model || "/nonexistent/quire-model.bin" };
  for (const name of ["QUIRE_LLM_PRESET", "QUIRE_LLM_API_KEY", "QUIRE_LLM_BASE_URL", "QUIRE_LLM_MODEL", "QUIRE_EMBED_BASE_URL", "QUIRE_TOKEN", "QUIRE_VAULT", "QUIRE_INDEX_DIR"]) delete env[name];
  if (chatUrl) Object.assign(env, { QUIRE_LLM_BASE_URL: chatUrl, QUIRE_LLM_MODEL: "fake-model" });
  const child = spawn(QUIRE, ["--vault", vault, "--index-dir", index, ...(model ? [] : ["--no-embeddings"]), "serve", "--port", "0", "--debounce-ms", "200"],
    { env, stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolveStart, reject) => {
    let log = "";
    const timer = setTimeout(() => reject(new Error(`quire serve did not start:\n${log}`)), 60000);
    child.stderr.on("data", (data) => {
      log += data;
      process.stderr.write(`[quire] ${data}`);
      const m = log.match(/listening on (http:\/\/[^\s/]+)\//);
      if (m) { clearTimeout(timer); quireOrigins.add(new URL(m[1]).origin); resolveStart({ child, url: m[1] }); }
    });
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`quire serve exited (${code}):\n${log}`)); });
  });
}

async function waitForIndex(url) {
  for (let i = 0; i < 300; i++) {
    const status = await (await fetch(`${url}/api/status`)).json();
    if (status.ready && status.notes_indexed > 0) return status;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the index was not built in time");
}

before(async () => {
  assert.ok(existsSync(QUIRE), `${QUIRE} not found: build quire first (cargo build -p quire)`);
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} not found: apt-get install chromium`);
  mkdirSync(ARTIFACTS, { recursive: true });
  work = mkdtempSync(join(tmpdir(), "quire-web-"));
  vault = join(work, "vault");
  cpSync(join(repo, "examples/vault"), vault, { recursive: true });
  // A note whose text is markup: it must be shown as text, never run.
  writeFileSync(join(vault, "Hostile.md"),
    "# Hostile markup\n\nZanzibar <img src=x onerror=\"window.__pwned=1\"> and <script>window.__pwned=2</script> text.\n");
  chat = await startFakeChat();
  const started = await startQuire(vault, join(work, "index"), `http://127.0.0.1:${chat.address().port}/v1`);
  server = started.child;
  base = started.url;
  await waitForIndex(base);
  browser = await chromium.launchPersistentContext(join(work, "profile"), {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1400, height: 1000 },
  });
  browser.on("request", notePageRequest);
  page = browser.pages()[0] || (await browser.newPage());
  page.on("pageerror", (error) => pageErrors.push(String(error)));
  page.on("console", (message) => { if (message.type() === "error") pageErrors.push(message.text()); });
  page.setDefaultTimeout(15000);
  await page.goto(`${base}/`);
});

after(async () => {
  // What the page sent after the last test's check (its polling) is held to the document too.
  let late;
  try {
    late = await verifyContract("after the last test");
  } catch (error) {
    late = error;
  }
  console.log(`contract: ${contractCounts.checked} requests of the page checked against quire's OpenAPI document (${contractCounts.byTest.join(" + ")} in the ${contractCounts.byTest.length} tests, the rest after them)`);
  if (browser) await browser.close();
  if (server) server.kill("SIGINT");
  if (offline) offline.kill("SIGINT");
  if (embedded) embedded.kill("SIGINT");
  if (chat) chat.close();
  if (work) rmSync(work, { recursive: true, force: true });
  if (late instanceof Error) throw late;
});

test("the status shows the index of the sample vault", async () => {
  await page.waitForFunction(() => /\d+ notes/.test(document.getElementById("status-summary").textContent));
  const summary = await page.textContent("#status-summary");
  assert.match(summary, /48 notes · \d+ chunks · gen \d+/);
  await page.click("#status-pill");
  assert.match(await page.textContent("#status-facts"), /fake-model/);
  assert.match(await page.textContent("#status-skipped"), /No file was skipped/);
  await page.click("#status-pill");
});

test("typing a query shows results grouped by note, with highlighted snippets", async () => {
  await page.keyboard.press("/");
  assert.equal(await page.evaluate(() => document.activeElement.id), "q");
  await page.keyboard.type("feeding the starter", { delay: 20 });
  await page.waitForSelector(".result");
  const first = page.locator(".result").first();
  assert.equal(await first.getAttribute("data-path"), "Resources/Sourdough Starter.md");
  assert.ok((await first.locator("mark").count()) > 0, "matched words are marked");
  assert.match(await first.locator(".lines").first().textContent(), /^L\d+–\d+$/);
  const href = await first.locator("a.obsidian").getAttribute("href");
  assert.equal(href, "obsidian://open?vault=vault&file=Resources%2FSourdough%20Starter");
  const paths = await page.$$eval(".result", (items) => items.map((i) => i.dataset.path));
  assert.equal(new Set(paths).size, paths.length, "one entry per note");
});

test("the keyboard opens a result in the read view, with related notes", async () => {
  await page.focus("#q");
  await page.keyboard.press("ArrowDown");
  assert.ok(await page.locator(".result").first().evaluate((e) => e.classList.contains("selected")));
  await page.keyboard.press("Enter");
  await page.waitForSelector("#reader:not([hidden])");
  await page.waitForFunction(() => document.getElementById("reader-title").textContent === "Sourdough Starter");
  assert.match(await page.textContent("#reader-text"), /Ratio 1:5:5/);
  await page.waitForFunction(() => document.getElementById("similar-info").textContent !== "Loading…");
  const related = await page.textContent("#similar-list");
  assert.ok(related.length > 0, "backlinks or links are listed");
  await page.keyboard.press("Escape");
  await page.waitForSelector("#reader", { state: "hidden" });
});

test("note text that is markup is shown as text and never runs", async () => {
  await page.fill("#q", "Zanzibar");
  await page.waitForSelector('.result[data-path="Hostile.md"]');
  const snippet = await page.locator('.result[data-path="Hostile.md"] .snippet').first().textContent();
  assert.match(snippet, /<img src=x/);
  assert.equal(await page.locator(".results img, .results script").count(), 0);
  await page.locator('.result[data-path="Hostile.md"] .note-title').click();
  await page.waitForFunction(() => document.getElementById("reader-text").textContent.includes("<script>"));
  assert.equal(await page.locator("#reader-text img, #reader-text script").count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await page.click("#reader-close");
});

test("asking streams the answer, then renders it with clickable source cards", async () => {
  await page.fill("#question", "How often do I feed the sourdough starter?");
  await page.click("#ask-button");
  // While the model writes, the text grows in the streaming view.
  await page.waitForFunction(() => {
    const a = document.getElementById("answer");
    return a.classList.contains("streaming") && a.textContent.includes("once a day") && !a.textContent.includes("stays text");
  });
  await page.waitForSelector("#answer.done", { timeout: 30000 });
  const html = await page.innerHTML("#answer");
  assert.match(html, /<strong>once a day<\/strong>/);
  assert.match(html, /&lt;b&gt;not bold&lt;\/b&gt;/, "model output is escaped");
  assert.equal(await page.locator("#answer b").count(), 0);
  assert.equal(await page.locator("#answer a.cite").count(), 1);
  const cards = page.locator("#sources .source");
  assert.ok((await cards.count()) >= 1);
  const cited = page.locator("#sources .source.cited");
  assert.equal(await cited.count(), 1);
  assert.match(await cited.textContent(), /S1/);
  assert.match(await page.textContent("#answer-meta"), /written by fake-model/);
  // The citation check: the cited card carries its sentence's mark, the meta line the summary.
  assert.match(await cited.locator(".tag[class*='support-']").first().textContent(), /1 (supported|misattributed|unsupported)/);
  assert.match(await page.textContent("#answer-meta"), /citations: \d of 1 cited sentences supported/);
  // The model saw the sources as [S1] headers with the note's text.
  const prompt = JSON.stringify(chatRequests.at(-1).messages);
  assert.match(prompt, /\[S1\]/);
  // A citation leads to its source card, and the card to the lines in the read view.
  await page.click("#answer a.cite");
  await page.waitForSelector("#reader:not([hidden])");
  await page.waitForSelector("#reader-text .line.hit");
  await page.screenshot({ path: join(ARTIFACTS, "page.png"), fullPage: true });
});

test("a tree descent shows its trace beside the answer", async () => {
  // The fake model answers every request with prose, so its choices never validate: the
  // descent stops, says why, and search answers.
  const before = chatRequests.length;
  await page.selectOption("#retriever", "tree");
  await page.fill("#question", "How often do I feed the sourdough starter?");
  await page.click("#ask-button");
  await page.waitForSelector("#answer.done", { timeout: 60000 });
  await page.waitForSelector("#descent:not([hidden])");
  assert.match(await page.textContent("#descent-steps"), /stopped: the model's choice never validated/);
  assert.match(await page.textContent("#answer-meta"), /the descent found nothing: search answered/);
  const descentRequests = chatRequests.slice(before).filter((r) => r.response_format && r.response_format.json_schema.name === "descent_choice");
  assert.equal(descentRequests.length, 2, "a choice and its repair");
  await page.selectOption("#retriever", "hybrid");
});

test("expand has the model write a passage to search with before it answers", async () => {
  const before = chatRequests.length;
  await page.check("#expand");
  await page.fill("#question", "How often should the bread culture get its meal?");
  await page.click("#ask-button");
  await page.waitForSelector("#answer.done", { timeout: 60000 });
  const sent = chatRequests.slice(before);
  assert.equal(sent.length, 2, "the passage, then the answer");
  const first = JSON.stringify(sent[0].messages);
  assert.match(first, /bread culture/);
  assert.doesNotMatch(first, /\[S1\]/, "no note in the passage request");
  assert.match(JSON.stringify(sent[1].messages), /\[S1\]/);
  assert.match(await page.textContent("#answer-meta"), /expand: searched with the question/);
  await page.uncheck("#expand");
});

test("text quoted from a note never becomes a citation link", async () => {
  // No model: the answer is extractive, the best passages quoted as written. A note that
  // contains `[S2]` must not turn into a link to source S2 (another note's passage).
  const quotes = join(work, "quotes");
  cpSync(join(repo, "examples/vault"), quotes, { recursive: true });
  writeFileSync(join(quotes, "Quokka Census.md"),
    "# Quokka census\n\nThe quokka census [S2] counted forty quokkas on the island [S1, S3].\n");
  const started = await startQuire(quotes, join(work, "quotes-index"));
  offline = started.child;
  await waitForIndex(started.url);
  const other = await browser.newPage();
  other.on("pageerror", (error) => pageErrors.push(String(error)));
  try {
    await other.goto(`${started.url}/`);
    await other.fill("#question", "How many quokkas did the quokka census count?");
    await other.click("#ask-button");
    await other.waitForSelector("#answer.done", { timeout: 30000 });
    assert.ok(sentTo(started.url) > 0, "the other page's requests are seen by the contract check");
    assert.match(await other.textContent("#answer-meta"), /extractive/);
    const text = await other.textContent("#answer");
    assert.match(text, /quokka census \[S2\] counted forty quokkas on the island \[S1, S3\]/);
    assert.equal(await other.locator("#answer a.cite").count(), 0, await other.innerHTML("#answer"));
    assert.ok((await other.locator("#sources .source").count()) >= 2, "the sources are still listed");
  } finally {
    await other.close();
  }
});

test("a pasted article is asked in its own panel, with cards that show its lines", async () => {
  const article = "# Tortoise care\n\n## Feeding\n\nFeed the tortoise leafy greens once a day; <img src=x onerror=\"window.__pwned=3\"> dandelions are a treat.\n\n## Housing\n\nA tortoise needs a warm, dry enclosure with a basking lamp.\n";
  await page.fill("#article-name", "Tortoise.md");
  await page.fill("#article-text", article);
  await page.fill("#article-question", "How often do I feed the tortoise?");
  await page.click("#article-button");
  await page.waitForSelector("#article-answer.done", { timeout: 30000 });
  const html = await page.innerHTML("#article-answer");
  assert.match(html, /<strong>once a day<\/strong>/);
  assert.match(html, /&lt;b&gt;not bold&lt;\/b&gt;/, "model output is escaped");
  assert.equal(await page.locator("#article-answer a.cite").count(), 1);
  assert.match(await page.textContent("#article-meta"), /written by fake-model.* · Tortoise\.md: \d+ chunks, no embedding model/);
  // The model saw the article as a fenced source named after it, never as a note.
  const prompt = chatRequests.at(-1).messages[1].content;
  assert.match(prompt, /\[S1\] Tortoise\.md › Tortoise care › Feeding \(lines 1–5\)\n⟦⟦⟦\n/);
  // The cited card names the article's lines; the citation opens it and shows those lines, as text.
  const cited = page.locator("#article-sources .source.cited");
  assert.equal(await cited.count(), 1);
  assert.match(await cited.textContent(), /S1.*Tortoise care › Feeding.*Tortoise\.md:1-5/);
  await page.click("#article-answer a.cite");
  const lines = cited.locator("pre.article-lines");
  await lines.waitFor({ state: "visible" });
  assert.equal(await lines.textContent(), "# Tortoise care\n\n## Feeding\n\nFeed the tortoise leafy greens once a day; <img src=x onerror=\"window.__pwned=3\"> dandelions are a treat.");
  assert.equal(await page.locator("#article-sources img").count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.doesNotMatch(await page.textContent("#reader-path"), /Tortoise/, "an article is not opened as a note");
  // Too long for the server's body limit: said before anything is sent.
  const sent = chatRequests.length;
  await page.fill("#article-text", "x".repeat(70 * 1024));
  await page.click("#article-button");
  await page.waitForFunction(() => /longer than the server takes/.test(document.getElementById("article-meta").textContent));
  assert.equal(chatRequests.length, sent);
  await page.screenshot({ path: join(ARTIFACTS, "article.png"), fullPage: true });
});

test("a note saved while the page is open shows up without a reload", async () => {
  await page.fill("#q", "zeppelin");
  await page.waitForFunction(() => /No note matched/.test(document.getElementById("search-info").textContent));
  writeFileSync(join(vault, "Airships.md"), "# Airships\n\nThe zeppelin flew over the lake.\n");
  // The watcher syncs; /api/events tells the page, which refreshes the status and the results.
  await page.waitForSelector('.result[data-path="Airships.md"]', { timeout: 30000 });
  await page.waitForFunction(() => /^49 notes/.test(document.getElementById("status-summary").textContent));
  assert.ok(await page.locator("#live-dot.on").count(), "the page is connected to the events");
});

test("a proposal is listed, shown as a diff with a long unchanged run folded, and applied or rejected", async () => {
  const { readFileSync } = await import("node:fs");
  const propose = async (body) => {
    const response = await fetch(`${base}/api/proposals`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    assert.equal(response.status, 200, await response.clone().text());
    return (await response.json()).id;
  };
  // A note with a long unchanged run between two edits.
  const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
  writeFileSync(join(vault, "Ledger.md"), `# Ledger\n\n${lines.join("\n")}\n`);
  const edited = [...lines];
  edited[1] = "line 2, corrected";
  edited[27] = "line 28, corrected";
  const applied = await propose({ path: "Ledger.md", change: "replace", text: `# Ledger\n\n${edited.join("\n")}\n` });
  const rejected = await propose({ path: "Ideas/Kites.md", change: "create", text: "# Kites\n\nA kite <b>festival</b>.\n" });
  // The header says changes wait, without a reload (the page polls and listens to index events).
  await page.reload();
  await page.waitForFunction(() => /^2 proposals$/.test(document.getElementById("proposals-count").textContent));
  await page.click("#proposals-pill");
  await page.waitForSelector(`#proposal-list li[data-id="${applied}"]`);
  await page.click(`#proposal-list li[data-id="${applied}"] button`);
  await page.waitForSelector("#proposal-diff .diff-line.added");
  assert.deepEqual(await page.locator("#proposal-diff .diff-line.added").allTextContents(),
    ["+line 2, corrected", "+line 28, corrected"]);
  assert.deepEqual(await page.locator("#proposal-diff .diff-line.removed").allTextContents(), ["-line 2", "-line 28"]);
  const fold = page.locator("#proposal-diff .diff-fold");
  assert.equal(await fold.count(), 1);
  const folded = Number((await fold.textContent()).match(/(\d+) unchanged/)[1]);
  assert.ok(folded > 6, `${folded} lines folded`);
  const before = await page.locator("#proposal-diff .diff-line.same").count();
  await fold.click();
  assert.equal(await page.locator("#proposal-diff .diff-line.same").count(), before + folded);
  await page.screenshot({ path: join(ARTIFACTS, "proposal.png"), fullPage: true });
  await page.click("#proposal-apply");
  await page.waitForFunction(() => /^Applied: wrote Ledger\.md/.test(document.getElementById("proposal-outcome").textContent));
  assert.match(readFileSync(join(vault, "Ledger.md"), "utf8"), /line 28, corrected/);
  // The created note is shown whole, as text; rejecting writes nothing.
  await page.click(`#proposal-list li[data-id="${rejected}"] button`);
  await page.waitForFunction(() => /new note Ideas\/Kites\.md/.test(document.getElementById("proposal-diff").textContent));
  assert.equal(await page.locator("#proposal-diff b").count(), 0);
  assert.match(await page.textContent("#proposal-diff"), /\+A kite <b>festival<\/b>\./);
  await page.click("#proposal-reject");
  await page.waitForFunction(() => /^Rejected/.test(document.getElementById("proposal-outcome").textContent));
  assert.ok(!existsSync(join(vault, "Ideas/Kites.md")));
  await page.waitForFunction(() => /^0 proposals$/.test(document.getElementById("proposals-count").textContent));
  // A note changed after its proposal was made: the apply is refused, naming the file.
  const stale = await propose({ path: "Ledger.md", change: "append", text: "- one more line" });
  writeFileSync(join(vault, "Ledger.md"), "# Ledger\n\nrewritten meanwhile\n");
  await page.evaluate(() => document.getElementById("proposals-pill").click());
  await page.evaluate(() => document.getElementById("proposals-pill").click());
  await page.waitForSelector(`#proposal-list li[data-id="${stale}"]`);
  await page.click(`#proposal-list li[data-id="${stale}"] button`);
  await page.waitForSelector("#proposal-diff .diff-line.added");
  await page.click("#proposal-apply");
  await page.waitForFunction(() => /Ledger\.md changed since proposal/.test(document.getElementById("proposal-outcome").textContent));
  assert.equal(readFileSync(join(vault, "Ledger.md"), "utf8"), "# Ledger\n\nrewritten meanwhile\n");
  // That refusal was the 409 the browser logs as a failed load: expected here, and only it.
  const refusals = pageErrors.filter((e) => /status of 409 \(Conflict\)/.test(e));
  assert.equal(refusals.length, 1, pageErrors.join("\n"));
  pageErrors.splice(pageErrors.indexOf(refusals[0]), 1);
  // A proposal file cut short by hand: the list still shows the others and names it, with why.
  const file = join(work, "index", "proposals", `${stale}.json`);
  const text = readFileSync(file, "utf8");
  writeFileSync(file, text.slice(0, text.length / 2));
  await page.evaluate(() => document.getElementById("proposals-pill").click());
  await page.evaluate(() => document.getElementById("proposals-pill").click());
  await page.waitForFunction((id) => document.getElementById("proposals-info").textContent.includes(`could not be read and is left out: ${id} (`), stale);
  assert.equal(await page.locator(`#proposal-list li[data-id="${stale}"]`).count(), 0);
  rmSync(file);
});

test("vault health lists the findings, opens one at its line, and dismisses or snoozes them", async () => {
  await page.click("#health-pill");
  await page.waitForSelector("#finding-list li.finding");
  // The sample vault's unresolved link to `Marathon Plan`, at its line in the running MOC.
  const link = page.locator('#finding-list li[data-kind="unresolved_link"]', { hasText: "Marathon Plan" });
  assert.equal(await link.count(), 1);
  assert.match(await link.textContent(), /Areas\/Running MOC\.md:\d+/);
  await link.locator("button.link").click();
  await page.waitForFunction(() => /Running MOC\.md/.test(document.getElementById("reader-path").textContent));
  const before = await page.locator("#finding-list li.finding").count();
  const id = await link.getAttribute("data-id");
  await link.locator("button.dismiss").click();
  await page.waitForFunction((n) => document.querySelectorAll("#finding-list li.finding").length === n - 1, before);
  assert.equal(await page.locator(`#finding-list li[data-id="${id}"]`).count(), 0);
  await page.locator("#finding-list li.finding button.snooze").first().click();
  await page.waitForFunction((n) => document.querySelectorAll("#finding-list li.finding").length === n - 2, before);
  assert.match(await page.textContent("#health-info"), /1 dismissed, 1 snoozed/);
  // A new unresolved link shows as new on the next look.
  const notes = (await (await fetch(`${base}/api/status`)).json()).notes_indexed;
  writeFileSync(join(vault, "Kestrels.md"), "# Kestrels\n\nSee [[Falconry Notes]] and [[Home]].\n");
  // Once the server has synced and read the new note, the next look finds its link.
  for (let i = 0; i < 300; i++) {
    if ((await (await fetch(`${base}/api/status`)).json()).notes_indexed > notes) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // (A look before the server has read the note again misses it; the next one still counts it
  // as new, since it was not there at the look before.)
  const fresh = page.locator('#finding-list li.finding.new[data-kind="unresolved_link"]', { hasText: "Falconry Notes" });
  for (let i = 0; i < 50 && (await fresh.count()) === 0; i++) {
    await page.click("#health-pill");
    await page.click("#health-pill");
    await page.waitForFunction(() => !/^$/.test(document.getElementById("health-info").textContent));
    await new Promise((r) => setTimeout(r, 200));
  }
  await fresh.waitFor();
  assert.match(await page.textContent("#health-info"), /since the last look: .*1 new unresolved link/);
  await page.screenshot({ path: join(ARTIFACTS, "health.png"), fullPage: true });
});

test("the page raised no script error and no policy violation", () => {
  assert.deepEqual(pageErrors, []);
});

test("related notes put a near copy first, with the share of text in common, and show no cosine", async () => {
  // A server with the embedding model (e5-small, fetched by scripts/test.sh) on a vault with a
  // reworked copy of a note.
  const data = process.env.XDG_DATA_HOME || join(process.env.HOME || "", ".local/share");
  const model = join(data, "quire/models/e5-small-q4.bin");
  assert.ok(existsSync(model), `${model} missing: run scripts/fetch-model.sh`);
  const copyVault = join(work, "vault-copies");
  cpSync(join(repo, "examples/vault"), copyVault, { recursive: true });
  const tea = readFileSync(join(copyVault, "Resources/Tea Basics.md"), "utf8");
  writeFileSync(join(copyVault, "Areas/Tea notes (copy).md"), tea.replace("tea", "brew").replace("tea", "brew"));
  const started = await startQuire(copyVault, join(work, "index-copies"), null, model);
  embedded = started.child;
  await waitForIndex(started.url);
  // Vectors come after the words: wait until the note has its similar notes.
  let related = {};
  for (let i = 0; i < 600 && !(related.similar && related.similar.length); i++) {
    if (i) await new Promise((r) => setTimeout(r, 100));
    related = await (await fetch(`${started.url}/api/similar/Resources%2FTea%20Basics.md?k=8`)).json();
  }
  assert.equal(related.near_copies.length, 1, JSON.stringify(related));
  const copy = related.near_copies[0];
  assert.equal(copy.path, "Areas/Tea notes (copy).md");
  const other = await browser.newPage();
  try {
    await other.goto(`${started.url}/`);
    await other.fill("#q", "tea basics");
    await other.waitForSelector('.result[data-path="Resources/Tea Basics.md"]');
    await other.locator('.result[data-path="Resources/Tea Basics.md"] .note-title').click();
    // The related list is filled in one go once the note and then its related notes have loaded
    // (the info line is empty before the first load starts, so it is no signal).
    await other.waitForSelector("#similar-list li");
    assert.ok(sentTo(started.url) > 0, "the other page's requests are seen by the contract check");
    const rows = await other.$$eval("#similar-list li", (items) => items.map((li) => ({
      title: li.querySelector("button").textContent,
      tag: li.querySelector(".tag").textContent,
      hint: li.querySelector(".tag").title,
    })));
    assert.equal(rows[0].tag, `near copy · ${Math.round(copy.overlap * 100)}% shared`);
    assert.match(rows[0].hint, /^Areas\/Tea notes \(copy\)\.md: cosine \d\.\d\d$/);
    const similar = rows.filter((r) => r.tag === "similar");
    assert.equal(similar.length, related.similar.length - 1, "the copy is listed once");
    for (const row of similar) assert.match(row.hint, /^cosine \d\.\d\d: it only orders this list$/);
    assert.equal(rows.filter((r) => /\d/.test(r.tag) && !r.tag.startsWith("near copy")).length, 0);
  } finally {
    await other.close();
  }
});
