/**
 * The words of the vault health view: a finding kind's section title, the findings grouped by
 * kind in the server's order, what is new since the last look, the counts, and where a finding
 * opens. Pure: no DOM, no requests.
 */
import type { Finding, FindingsInbox } from "./api";

/** The section title of each kind the server names (an unknown kind is said from its name). */
const KIND_TITLES: Record<string, string> = {
  unresolved_link: "Unresolved links",
  orphan: "Orphan notes",
  dead_end: "Dead ends",
  near_duplicate_tags: "Near-duplicate tags",
  duplicate_title: "Duplicate titles",
  empty_note: "Empty notes",
  oversized_note: "Oversized notes",
  no_headings: "Notes without headings",
  unlinked_attachment: "Unlinked attachments",
  island: "Islands",
};

/** What a section of the kind is called: `Unresolved links`. */
export function kindTitle(kind: string): string {
  const known = KIND_TITLES[kind];
  if (known) return known;
  const words = kind.replace(/_/g, " ").trim();
  return words ? words.charAt(0).toUpperCase() + words.slice(1) : "Other findings";
}

/** A section's heading with its count: `Unresolved links (4)`. */
export function sectionHeading(kind: string, count: number): string {
  return `${kindTitle(kind)} (${count})`;
}

export interface FindingGroup {
  kind: string;
  findings: Finding[];
}

/** The findings by kind, the kinds in the order the server lists them (it sorts by kind). */
export function groupByKind(findings: readonly Finding[]): FindingGroup[] {
  const groups = new Map<string, Finding[]>();
  for (const finding of findings) {
    const group = groups.get(finding.kind);
    if (group) group.push(finding);
    else groups.set(finding.kind, [finding]);
  }
  return [...groups].map(([kind, list]) => ({ kind, findings: list }));
}

/** What is new since the last look, in a sentence. */
export function newSinceLine(inbox: Pick<FindingsInbox, "new_since_last" | "first_run">): string {
  if (inbox.first_run) return "First look at this vault: from the next look on, what is new since then is marked.";
  if (inbox.new_since_last) return `New since the last look: ${inbox.new_since_last}.`;
  return "Nothing new since the last look.";
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** The counts under it: `7 findings · 1 dismissed · 2 snoozed`. */
export function countsLine(shown: number, dismissed: number, snoozed: number): string {
  return [plural(shown, "finding", "findings"), `${dismissed} dismissed`, `${snoozed} snoozed`].join(" · ");
}

/** Where a finding opens, in words: `Areas/Running MOC, line 23` (null without a path). */
export function placeLabel(finding: Pick<Finding, "path" | "line">): string | null {
  if (!finding.path) return null;
  const name = finding.path.replace(/\.md$/i, "");
  return finding.line ? `${name}, line ${finding.line}` : name;
}

/** A message cut at its backticks: the odd pieces were quoted as code (`Marathon Plan`). */
export function messagePieces(message: string): { text: string; code: boolean }[] {
  const parts = message.split("`");
  // An unmatched backtick is text.
  if (parts.length % 2 === 0) return [{ text: message, code: false }];
  return parts.map((text, i) => ({ text, code: i % 2 === 1 })).filter((piece) => piece.text);
}

/** The snooze lengths offered, in days. */
export const SNOOZE_DAYS = [1, 7, 30] as const;

/** A snooze button's words: `1 day`, `7 days`. */
export function snoozeLabel(days: number): string {
  return plural(days, "day", "days");
}
