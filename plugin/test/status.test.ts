// What the status bar says.
import { describe, expect, it } from "vitest";
import type { ServerStatus } from "../src/api";
import { statusLine } from "../src/status";

const NOW = Date.parse("2026-12-03T12:00:00Z");
const READY: ServerStatus = {
  ready: true,
  generation: 7,
  notes_indexed: 1,
  chunks: 4,
  embeddings: 0,
  default_mode: "bm25",
  llm: null,
  watching: true,
  last_sync: { kind: "index", data: { at: "2026-12-03T11:59:30Z" } },
};

describe("statusLine", () => {
  it("shows the generation, the notes and a running sync", () => {
    expect(statusLine({ kind: "online", status: READY }, false, NOW)).toEqual({
      text: "quire: gen 7 · 1 note",
      tooltip:
        "Index generation 7: 1 notes, 4 chunks, 0 embeddings.\nSearch mode: bm25. Language model: none (answers are extractive).\nLast sync 30 s ago.",
      tone: "ok",
    });
    expect(statusLine({ kind: "online", status: { ...READY, notes_indexed: 3 } }, true, NOW)).toMatchObject({ text: "quire: gen 7 · 3 notes · syncing…", tone: "busy" });
  });

  it("says when the last sync failed, or the server does not watch", () => {
    const failed: ServerStatus = { ...READY, watching: false, last_sync: { kind: "sync_failed", data: { at: "2026-12-03T11:50:00Z", message: "disk full" } } };
    const line = statusLine({ kind: "online", status: failed }, false, NOW);
    expect(line.text).toBe("quire: gen 7 · 1 note · sync failed");
    expect(line.tone).toBe("down");
    expect(line.tooltip).toContain("Last sync failed 10 min ago: disk full");
    expect(line.tooltip).toContain("--no-watch");
  });

  it("tells a sync that is slow to finish from one that failed", () => {
    const message = "the sync of 1 note has been running for 120 s and has not finished";
    const slow: ServerStatus = { ...READY, last_sync: { kind: "sync_failed", data: { at: "2026-12-03T11:59:00Z", message, running: true } } };
    const line = statusLine({ kind: "online", status: slow }, true, NOW);
    expect(line.text).toBe("quire: gen 7 · 1 note · syncing…");
    expect(line.tone).toBe("busy");
    expect(line.tooltip).toContain(`A sync is slow: ${message}`);
    expect(line.tooltip).not.toContain("failed");
  });

  it("says why there is no connection", () => {
    expect(statusLine({ kind: "offline", message: "Cannot reach quire." }, false)).toEqual({ text: "quire: offline", tooltip: "Cannot reach quire.", tone: "down" });
    expect(statusLine({ kind: "refused", message: "Token." }, false).text).toBe("quire: refused");
    expect(statusLine({ kind: "indexing", status: { ready: false, message: "building" } }, false)).toEqual({ text: "quire: indexing…", tooltip: "building", tone: "busy" });
    expect(statusLine({ kind: "connecting" }, false).tone).toBe("busy");
  });
});
