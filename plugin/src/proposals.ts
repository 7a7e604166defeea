/**
 * The words of the proposals review: how old a proposal is, who made it, what it writes, and
 * what to do when an apply is refused because a note changed since. Pure: no DOM, no requests.
 */
import type { FileChange } from "./api";

/** `1 proposal`, `3 proposals`. */
export function countLabel(count: number): string {
  return `${count} ${count === 1 ? "proposal" : "proposals"}`;
}

/** How long ago a proposal was made: `just now`, `5 min ago`, `3 h ago`, `2 days ago`, else its day. */
export function proposalAge(created: string, now = Date.now()): string {
  const at = Date.parse(created);
  if (Number.isNaN(at)) return created;
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 60) return "just now";
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  if (days < 14) return days === 1 ? "1 day ago" : `${days} days ago`;
  return `on ${created.slice(0, 10)}`;
}

const PROPOSE_TOOL = /^propose_note_change \((.+)\)$/;

/**
 * Who made a proposal, from its `command`: the MCP tool and its client, or the command itself
 * (`quire draft Plan.md "Budget"`, `quire transform …`).
 */
export function originLabel(command: string): string {
  const tool = PROPOSE_TOOL.exec(command.trim());
  if (tool) {
    const who = tool[1] ?? "";
    if (who === "quire serve /api/proposals") return "the HTTP API (POST /api/proposals)";
    return who;
  }
  return command.trim() || "an unknown command";
}

/** The files a proposal writes, for one line: the first three, then how many more. */
export function filesLabel(files: readonly string[], shown = 3): string {
  if (files.length <= shown) return files.join(", ");
  return `${files.slice(0, shown).join(", ")} and ${files.length - shown} more`;
}

/** The file a `note_changed` refusal names (`Areas/Sleep.md changed since proposal … was made from it …`). */
export function changedFile(message: string): string | null {
  const match = /^(.+?) changed since proposal \S+ was made from it/.exec(message);
  return match?.[1] ?? null;
}

/**
 * How to make a proposal again after its note changed: a proposal is made from the note as it
 * was, so only what made it can make it again from the note as it is now.
 */
export function remakeAdvice(command: string): string {
  const trimmed = command.trim();
  const tool = PROPOSE_TOOL.exec(trimmed);
  if (tool?.[1] === "an MCP client") return "Ask the MCP client (your assistant) to propose the change again from the note as it is now.";
  if (tool) return `Make it again where it came from (${originLabel(trimmed)}), from the note as it is now.`;
  if (trimmed.startsWith("quire ")) return `Make it again from the note as it is now by running: ${trimmed}`;
  return `Make it again where it came from (${trimmed || "the command that made it"}), from the note as it is now.`;
}

/** What a file's change does, in words. */
export function changeLabel(change: Pick<FileChange, "kind" | "heading">): string {
  switch (change.kind) {
    case "create":
      return "New note";
    case "replace":
      return "Rewritten";
    case "append":
      return change.heading ? `Added under “${change.heading}”` : "Added at the end";
    case "rename":
      return "Renamed";
  }
}

/**
 * The vault paths a proposal's source may name, most likely first: the source as given, without
 * a `#heading` or `:lines` part, and with `.md` added. Sources are note paths, mostly.
 */
export function sourceCandidates(source: string): string[] {
  const plain = source.trim().replace(/#.*$/, "").replace(/:\d+(?:[-–]\d+)?$/, "");
  const candidates = [source.trim(), plain];
  if (plain && !/\.[a-z0-9]+$/i.test(plain)) candidates.push(`${plain}.md`);
  return [...new Set(candidates.filter((c) => c))];
}

/**
 * The file to open once a proposal is applied: the canvas it writes, when a canvas is its only
 * change (the vault map), else null (a note is not opened: its editor, if open, shows the new text).
 */
export function openAfterApply(changes: readonly Pick<FileChange, "path" | "new_path">[], written: readonly string[]): string | null {
  const [only] = changes;
  if (changes.length !== 1 || !only) return null;
  const path = only.new_path ?? only.path;
  return /\.canvas$/i.test(path) && written.includes(path) ? path : null;
}
