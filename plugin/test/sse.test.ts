// The server-sent events reader, with bodies cut at every possible place.
import { describe, expect, it } from "vitest";
import { SseParser, type SseEvent } from "../src/sse";

const BODY =
  'event: hello\ndata: {"generation":1}\n\n' +
  ": keep-alive\n\n" +
  'event: token\r\ndata: {"text":"a\\nb"}\r\n\r\n' +
  "data: first line\ndata: second line\n\n" +
  'event: done\ndata:{"answer":"é ✓"}\n\n';

const EXPECTED: SseEvent[] = [
  { name: "hello", data: '{"generation":1}' },
  { name: "token", data: '{"text":"a\\nb"}' },
  { name: "message", data: "first line\nsecond line" },
  { name: "done", data: '{"answer":"é ✓"}' },
];

describe("SseParser", () => {
  it("reads events, comments, CRLF lines and multi-line data", () => {
    expect(new SseParser().push(BODY)).toEqual(EXPECTED);
  });

  it("gives the same events wherever the body is cut", () => {
    for (let cut = 0; cut <= BODY.length; cut++) {
      const parser = new SseParser();
      const events = [...parser.push(BODY.slice(0, cut)), ...parser.push(BODY.slice(cut))];
      expect(events, `cut at ${cut}`).toEqual(EXPECTED);
    }
  });

  it("gives the same events one character at a time", () => {
    const parser = new SseParser();
    expect([...BODY].flatMap((c) => parser.push(c))).toEqual(EXPECTED);
  });

  it("waits for the blank line that ends an event", () => {
    const parser = new SseParser();
    expect(parser.push("event: token\ndata: {}\n")).toEqual([]);
    expect(parser.push("\n")).toEqual([{ name: "token", data: "{}" }]);
  });
});
