/**
 * A reader of server-sent events (https://html.spec.whatwg.org/multipage/server-sent-events.html)
 * for response bodies that arrive in pieces: `quire serve` streams `/api/ask`, `/api/draft`,
 * `/api/reflect` and `/api/events` this way. A piece may end anywhere, even inside a line; an event is complete at
 * its blank line.
 */

export interface SseEvent {
  /** The `event:` field, `message` when there is none. */
  name: string;
  /** The `data:` lines joined by `\n`. */
  data: string;
}

export class SseParser {
  private buffer = "";
  private name = "";
  private data: string[] = [];

  /** Takes the next piece of the body and returns the events it completed. */
  push(piece: string): SseEvent[] {
    this.buffer += piece;
    const events: SseEvent[] = [];
    for (;;) {
      const end = this.buffer.search(/\r\n|\r|\n/);
      // A lone `\r` at the end may be the first half of `\r\n`: wait for the next piece.
      if (end < 0 || (this.buffer[end] === "\r" && end === this.buffer.length - 1)) break;
      const line = this.buffer.slice(0, end);
      const breakLength = this.buffer.startsWith("\r\n", end) ? 2 : 1;
      this.buffer = this.buffer.slice(end + breakLength);
      const event = this.line(line);
      if (event) events.push(event);
    }
    return events;
  }

  private line(line: string): SseEvent | null {
    if (line === "") {
      const event = this.data.length ? { name: this.name || "message", data: this.data.join("\n") } : null;
      this.name = "";
      this.data = [];
      return event;
    }
    // A comment: the server's keep-alive.
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.name = value;
    else if (field === "data") this.data.push(value);
    return null;
  }
}
