/**
 * What the status bar says about the server and its index: the generation, the note count and
 * whether a sync is running, or why there is no connection.
 */
import type { ConnectionState } from "./connection";

export interface StatusLine {
  text: string;
  /** The longer story, for the tooltip. */
  tooltip: string;
  /** `ok`, `busy` (connecting, indexing, syncing) or `down`. */
  tone: "ok" | "busy" | "down";
}

function ago(iso: string | undefined, now: number): string {
  if (!iso) return "";
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  return new Date(iso).toLocaleString();
}

export function statusLine(state: ConnectionState, syncing: boolean, now = Date.now()): StatusLine {
  switch (state.kind) {
    case "connecting":
      return { text: "quire: connecting…", tooltip: "Connecting to quire serve.", tone: "busy" };
    case "offline":
      return { text: "quire: offline", tooltip: state.message, tone: "down" };
    case "refused":
      return { text: "quire: refused", tooltip: state.message, tone: "down" };
    case "indexing":
      return {
        text: "quire: indexing…",
        tooltip: state.status.message ?? "quire is building the index of this vault.",
        tone: "busy",
      };
    case "online": {
      const status = state.status;
      const notes = status.notes_indexed ?? 0;
      const last = status.last_sync;
      // A failure that says `running` reports a sync that is slow to finish, not its end.
      const stalled = last?.kind === "sync_failed" && last.data.running === true;
      const failed = last?.kind === "sync_failed" && !stalled;
      const parts = [`quire: gen ${status.generation ?? 0}`, `${notes} ${notes === 1 ? "note" : "notes"}`];
      if (syncing) parts.push("syncing…");
      else if (failed) parts.push("sync failed");
      const facts = [
        `Index generation ${status.generation ?? 0}: ${notes} notes, ${status.chunks ?? 0} chunks, ${status.embeddings ?? 0} embeddings.`,
        `Search mode: ${status.default_mode ?? "?"}. Language model: ${status.llm ?? "none (answers are extractive)"}.`,
      ];
      if (stalled) facts.push(`A sync is slow: ${last.data.message ?? ""}`);
      else if (failed) facts.push(`Last sync failed ${ago(last.data.at, now)}: ${last.data.message ?? ""}`);
      else if (last) facts.push(`Last sync ${ago(last.data.at, now)}.`);
      if (status.watching === false) facts.push("This server does not watch the vault (--no-watch): changes are not indexed.");
      return { text: parts.join(" · "), tooltip: facts.join("\n"), tone: syncing ? "busy" : failed ? "down" : "ok" };
    }
  }
}
