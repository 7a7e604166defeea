/**
 * Headings and sections of a note's text, as the editor holds it: which section the cursor is
 * in, and where a draft of that section goes (after the section's own text, before the next
 * heading of the same or a higher level). ATX headings only, as CommonMark defines them; lines
 * inside front matter and fenced code are not headings.
 */

export interface Heading {
  /** 0-based line. */
  line: number;
  level: number;
  /** The heading's text: `Setup`. */
  text: string;
  /** The line as written, trimmed: `## Setup`. */
  raw: string;
}

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

export function headings(lines: readonly string[]): Heading[] {
  const found: Heading[] = [];
  let start = 0;
  if (lines[0]?.trimEnd() === "---") {
    const close = lines.findIndex((line, i) => i > 0 && /^(---|\.\.\.)\s*$/.test(line));
    if (close > 0) start = close + 1;
  }
  let fence: string | null = null;
  for (let i = start; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const opening = FENCE.exec(line);
    if (fence !== null) {
      if (opening?.[1] && opening[1][0] === fence[0] && opening[1].length >= fence.length && line.trim() === opening[1]) fence = null;
      continue;
    }
    if (opening?.[1]) {
      fence = opening[1];
      continue;
    }
    const match = ATX.exec(line);
    if (match?.[1] && match[2]?.trim()) {
      found.push({ line: i, level: match[1].length, text: match[2].trim(), raw: line.trim() });
    }
  }
  return found;
}

/** The heading of the section the cursor is in: the nearest heading at or above its line. */
export function headingAt(lines: readonly string[], cursorLine: number): Heading | null {
  let nearest: Heading | null = null;
  for (const heading of headings(lines)) {
    if (heading.line > cursorLine) break;
    nearest = heading;
  }
  return nearest;
}

/** The same heading in a text that may have changed since: on its old line, else the nearest one with the same text and level. */
export function findHeading(lines: readonly string[], wanted: Heading): Heading | null {
  const candidates = headings(lines).filter((h) => h.raw === wanted.raw && h.level === wanted.level);
  const best = candidates.sort((a, b) => Math.abs(a.line - wanted.line) - Math.abs(b.line - wanted.line))[0];
  return best ?? null;
}

export interface Insertion {
  /** 0-based line and column where the text goes. */
  line: number;
  ch: number;
  text: string;
}

/**
 * Where a draft of the section under `heading` goes: at the end of the section's last line that
 * is not blank, one blank line after it, keeping a blank line before the next heading.
 */
export function draftInsertion(lines: readonly string[], heading: Heading, draft: string): Insertion {
  const next = headings(lines).find((h) => h.line > heading.line && h.level <= heading.level);
  const end = next ? next.line : lines.length;
  let last = heading.line;
  for (let i = end - 1; i > heading.line; i--) {
    if ((lines[i] ?? "").trim()) {
      last = i;
      break;
    }
  }
  let text = `\n\n${draft.trim()}`;
  if (next && last === end - 1) text += "\n";
  return { line: last, ch: (lines[last] ?? "").length, text };
}
