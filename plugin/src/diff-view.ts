/**
 * What the review pane shows of one file's change, worked out from the server's unified diff and
 * the file's new content: every line of the new file, the removed lines where they were, and
 * long runs of unchanged lines folded (the diff itself keeps only 3 lines around each change;
 * the new content fills in the rest, so a fold opens onto the real lines). Pure: no DOM.
 */

export type RowKind = "added" | "removed" | "same" | "note";

export interface DiffRow {
  kind: RowKind;
  /** The line without its `+`, `-` or ` ` mark (for a note, the note: `No newline at end of file`). */
  text: string;
  /** Its number in the file before the change (removed and unchanged lines). */
  old?: number;
  /** Its number in the file after the change (added and unchanged lines). */
  new?: number;
}

export interface Hunk {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
  rows: DiffRow[];
}

export interface ParsedDiff {
  /** A file moved (`rename from` / `rename to`). */
  renamed: { from: string; to: string } | null;
  /** The file did not exist before (`--- /dev/null`). */
  created: boolean;
  hunks: Hunk[];
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * Reads a unified diff of one file (`rename from`/`rename to`, `---`/`+++` headers, hunks).
 * Lines are counted against each hunk's header, so a removed line that reads `-- x` is not taken
 * for a header. Lines it does not understand are left out.
 */
export function parseUnifiedDiff(diff: string): ParsedDiff {
  const parsed: ParsedDiff = { renamed: null, created: false, hunks: [] };
  let from: string | null = null;
  let hunk: Hunk | null = null;
  let oldLeft = 0;
  let newLeft = 0;
  let oldLine = 0;
  let newLine = 0;
  const lines = diff.split("\n");
  if (lines.at(-1) === "") lines.pop();
  for (const line of lines) {
    if (hunk && (oldLeft > 0 || newLeft > 0)) {
      const mark = line[0] ?? " ";
      const text = line.slice(1);
      if (mark === "+" && newLeft > 0) {
        hunk.rows.push({ kind: "added", text, new: newLine++ });
        newLeft--;
        continue;
      }
      if (mark === "-" && oldLeft > 0) {
        hunk.rows.push({ kind: "removed", text, old: oldLine++ });
        oldLeft--;
        continue;
      }
      if (mark === " " && oldLeft > 0 && newLeft > 0) {
        hunk.rows.push({ kind: "same", text, old: oldLine++, new: newLine++ });
        oldLeft--;
        newLeft--;
        continue;
      }
      if (mark === "\\") {
        hunk.rows.push({ kind: "note", text: text.trim() });
        continue;
      }
      // A line that does not fit the header's counts ends the hunk.
      oldLeft = newLeft = 0;
    }
    if (line.startsWith("\\") && hunk) {
      // "\ No newline at end of file" after a hunk's last line.
      hunk.rows.push({ kind: "note", text: line.slice(1).trim() });
      continue;
    }
    const header = HUNK.exec(line);
    if (header) {
      const oldCount = header[2] === undefined ? 1 : Number(header[2]);
      const newCount = header[4] === undefined ? 1 : Number(header[4]);
      hunk = { oldStart: Number(header[1]), oldCount, newStart: Number(header[3]), newCount, rows: [] };
      parsed.hunks.push(hunk);
      oldLeft = oldCount;
      newLeft = newCount;
      oldLine = hunk.oldStart === 0 ? 1 : hunk.oldStart;
      newLine = hunk.newStart === 0 ? 1 : hunk.newStart;
    } else if (line.startsWith("rename from ")) {
      from = line.slice("rename from ".length);
    } else if (line.startsWith("rename to ") && from !== null) {
      parsed.renamed = { from, to: line.slice("rename to ".length) };
    } else if (line === "--- /dev/null") {
      parsed.created = true;
    }
  }
  return parsed;
}

/** The lines of a text, without the empty string after its last newline. */
export function splitLines(text: string): string[] {
  if (!text) return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** The line after a hunk, on one side: a hunk of 0 lines sits after its start line. */
function after(start: number, count: number): number {
  return count === 0 ? start + 1 : start + count;
}

/**
 * The whole new file with the changes in place: the diff's hunks, and between them the
 * unchanged lines of `content` (the file after the change). When `content` does not hold the
 * lines the hunks name (it should), the hunks alone are returned.
 */
export function fileRows(diff: ParsedDiff, content: string): DiffRow[] {
  const lines = splitLines(content);
  const rows: DiffRow[] = [];
  let nextOld = 1;
  let nextNew = 1;
  const unchanged = (until: number): boolean => {
    if (until - 1 > lines.length) return false;
    for (let n = nextNew; n < until; n++) rows.push({ kind: "same", text: lines[n - 1] ?? "", old: nextOld + (n - nextNew), new: n });
    return true;
  };
  for (const hunk of diff.hunks) {
    const first = hunk.newCount === 0 ? hunk.newStart + 1 : hunk.newStart;
    if (!unchanged(first)) return diff.hunks.flatMap((h) => h.rows);
    rows.push(...hunk.rows);
    nextOld = after(hunk.oldStart, hunk.oldCount);
    nextNew = after(hunk.newStart, hunk.newCount);
  }
  if (!unchanged(lines.length + 1)) return diff.hunks.flatMap((h) => h.rows);
  return rows;
}

/** Rows shown as they are, or a run of unchanged lines folded into one row that opens onto them. */
export type Piece = { kind: "rows"; rows: DiffRow[] } | { kind: "fold"; rows: DiffRow[] };

/** Unchanged lines kept in view on each side of a change. */
export const CONTEXT_LINES = 3;
/** A run is folded only when it hides at least this many lines. */
export const MIN_FOLDED = 4;

/**
 * Folds the long runs of unchanged lines: `context` lines stay in view next to each change, and
 * a run that would hide fewer than `minFolded` lines is shown whole. A run at the top or the end
 * of the file keeps context on its changed side only, so a run there is folded once it is longer
 * than `context + minFolded - 1` lines (6 by default).
 */
export function foldUnchanged(rows: readonly DiffRow[], context = CONTEXT_LINES, minFolded = MIN_FOLDED): Piece[] {
  const pieces: Piece[] = [];
  const show = (part: DiffRow[]) => {
    if (!part.length) return;
    const last = pieces.at(-1);
    if (last?.kind === "rows") last.rows.push(...part);
    else pieces.push({ kind: "rows", rows: [...part] });
  };
  let i = 0;
  while (i < rows.length) {
    if (rows[i]?.kind !== "same") {
      show([rows[i] as DiffRow]);
      i++;
      continue;
    }
    let end = i;
    while (end < rows.length && rows[end]?.kind === "same") end++;
    const run = rows.slice(i, end);
    const head = i > 0 ? context : 0;
    const tail = end < rows.length ? context : 0;
    if (run.length - head - tail >= minFolded) {
      show(run.slice(0, head));
      pieces.push({ kind: "fold", rows: run.slice(head, run.length - tail) });
      show(run.slice(run.length - tail));
    } else {
      show(run);
    }
    i = end;
  }
  return pieces;
}
