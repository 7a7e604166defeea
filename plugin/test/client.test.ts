// The HTTP client against a scripted server: errors with their codes, streams cut short,
// cancellation, and the token on every request.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isAbort, QuireClient, QuireError } from "../src/api";
import { freePort } from "./harness";

let server: Server;
let base: string;
const seen: { url: string; authorization: string | undefined; body: string }[] = [];
let respond: (request: IncomingMessage, response: ServerResponse) => void = () => undefined;

beforeAll(async () => {
  server = createServer((request, response) => {
    const entry = { url: request.url ?? "", authorization: request.headers.authorization, body: "" };
    seen.push(entry);
    request.setEncoding("utf8");
    request.on("data", (piece: string) => (entry.body += piece));
    request.on("end", () => respond(request, response));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function failure(promise: Promise<unknown>): Promise<QuireError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof QuireError)) throw new Error(`expected a QuireError, got ${String(error)}`);
  return error;
}

describe("QuireClient", () => {
  it("sends the token, and encodes note paths segment by segment", async () => {
    respond = (_, response) => response.end('{"path":"a","title":"A"}');
    const client = new QuireClient(base, " secret-token ");
    await client.similar("Folder/Ünïcode note #1.md", 5);
    expect(seen.at(-1)).toEqual({ url: "/api/similar/Folder/%C3%9Cn%C3%AFcode%20note%20%231.md?k=5", authorization: "Bearer secret-token", body: "" });
    await new QuireClient(base, "").status();
    expect(seen.at(-1)?.authorization).toBeUndefined();
  });

  it("asks for the questions of a note or a folder, and cancels the request when its signal fires", async () => {
    respond = (_, response) => response.end('{"scope":"Projects/","kind":"extractive","paragraphs":2,"k":1,"topics":[],"dropped":[]}');
    const client = new QuireClient(base, "secret-token");
    expect((await client.questions("Projects/")).scope).toBe("Projects/");
    expect(seen.at(-1)).toEqual({ url: "/api/questions/Projects/", authorization: "Bearer secret-token", body: "" });
    const controller = new AbortController();
    await client.questions("Résumés/Q&A #2.md", controller.signal);
    expect(seen.at(-1)).toEqual({ url: "/api/questions/R%C3%A9sum%C3%A9s/Q%26A%20%232.md", authorization: "Bearer secret-token", body: "" });

    respond = (_, response) => {
      response.writeHead(429, { "Content-Type": "application/json" });
      response.end('{"error":{"code":"busy","message":"answers are being written for other requests"}}');
    };
    const busy = await failure(client.questions("Projects/", controller.signal));
    expect([busy.code, busy.status]).toEqual(["busy", 429]);

    // A model writing: the request waits until the signal fires, then the connection is closed.
    let closed = false;
    respond = (request) => request.socket.on("close", () => (closed = true));
    const waiting = client.questions("Projects/", controller.signal).then(
      () => null,
      (e: unknown) => e,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    expect(isAbort(await waiting)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(true);
  });

  it("sends a follow-up with its conversation, and a reflection with its week", async () => {
    respond = (_, response) => {
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      response.end('event: done\ndata: {"kind":"extractive","answer":"A","conversation":"c0ffee"}\n\n');
    };
    const client = new QuireClient(base, "");
    const answer = await client.ask("and in winter?", { mode: "bm25", conversation: "c0ffee" }, () => undefined);
    expect(answer.conversation).toBe("c0ffee");
    expect(seen.at(-1)).toMatchObject({ url: "/api/ask", body: '{"question":"and in winter?","mode":"bm25","conversation":"c0ffee"}' });
    await client.ask("first", { mode: "", conversation: null }, () => undefined);
    expect(seen.at(-1)?.body).toBe('{"question":"first"}');
    await client.reflect({ week: "2026-W48" }, () => undefined);
    expect(seen.at(-1)).toMatchObject({ url: "/api/reflect", body: '{"week":"2026-W48"}' });
  });

  it("turns the server's errors into their code and message", async () => {
    respond = (_, response) => {
      response.writeHead(404, { "Content-Type": "application/json" });
      response.end('{"error":{"code":"note_not_found","message":"no note matches `x`"}}');
    };
    const error = await failure(new QuireClient(base, "").similar("x", 1));
    expect([error.code, error.status, error.message]).toEqual(["note_not_found", 404, "no note matches `x`"]);
    respond = (_, response) => {
      response.writeHead(502);
      response.end("<html>bad gateway</html>");
    };
    expect((await failure(new QuireClient(base, "").status())).message).toBe("quire answered 502: <html>bad gateway</html>");
  });

  it("says when nothing listens", async () => {
    const error = await failure(new QuireClient(`http://127.0.0.1:${await freePort()}`, "").status());
    expect(error.code).toBe("unreachable");
    const stream = await failure(new QuireClient(`http://127.0.0.1:${await freePort()}`, "").ask("q", {}, () => undefined));
    expect(stream.code).toBe("unreachable");
  });

  it("reports an answer cut short by the server", async () => {
    respond = (_, response) => {
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      response.write('event: token\ndata: {"text":"Half an "}\n\n');
      setTimeout(() => response.socket?.destroy(), 50);
    };
    const pieces: string[] = [];
    const error = await failure(new QuireClient(base, "").ask("q", { mode: "bm25" }, (t) => pieces.push(t)));
    expect(pieces).toEqual(["Half an "]);
    expect(error.code).toBe("unreachable");
    expect(error.message).toMatch(/was lost/);
  });

  it("passes on an error event of the stream", async () => {
    respond = (_, response) => {
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      response.end('event: error\ndata: {"error":{"code":"llm_error","message":"the model is down"}}\n\n');
    };
    const error = await failure(new QuireClient(base, "").draft("n", "## H", () => undefined));
    expect([error.code, error.message]).toEqual(["llm_error", "the model is down"]);
  });

  it("stops when its signal fires", async () => {
    respond = (_, response) => {
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      response.write('event: token\ndata: {"text":"a"}\n\n');
    };
    const controller = new AbortController();
    const asked = new QuireClient(base, "").ask("q", {}, () => controller.abort(), controller.signal);
    const error = await asked.then(
      () => null,
      (e: unknown) => e,
    );
    expect(isAbort(error)).toBe(true);
  });
});
