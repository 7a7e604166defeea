/**
 * "Questions this note answers", in words: which scope a command asks about, where a topic's
 * central passage is, the first lines of that passage as a quote, the line above the rows, and
 * what a refusal of the server means. The view (`questions-view.ts`) only lays these out.
 */
import { QuireError, type PassageRef, type Questions } from "./api";

/** How many lines of a central passage the quote shows (without a question). */
export const QUOTE_LINES = 3;

/**
 * The folder of the note at `path`, as the server takes a folder (`Projects/Homelab/`), or ""
 * for a note at the top of the vault (the route reads folders, not the whole vault).
 */
export function folderOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash + 1);
}

/** A note's name: its path without the folders and `.md`. */
export function noteName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1).replace(/\.md$/i, "");
}

/** What the view's header names: the note, or the folder with its slash. */
export function scopeLabel(scope: string): string {
  return scope.endsWith("/") ? scope : noteName(scope);
}

/**
 * Where a passage is, in words: the note's name and the headings above the passage
 * (`Sourdough Starter › Feeding schedule`); a first heading that repeats the note's name is left
 * out of the headings.
 */
export function sourceLabel(ref: PassageRef): string {
  const name = noteName(ref.path);
  const headings = ref.heading_path[0]?.trim() === name ? ref.heading_path.slice(1) : ref.heading_path;
  return [name, ...headings].join(" › ");
}

/** The passage's lines: `line 5` or `lines 5–9`. */
export function linesLabel(ref: PassageRef): string {
  return ref.end_line > ref.start_line ? `lines ${ref.start_line}–${ref.end_line}` : `line ${ref.start_line}`;
}

/**
 * The first `max` lines of a central passage, for a quote: blank lines left out, and a heading
 * line too when the passage has more (its heading is in the source's label already); `…` ends
 * the quote when lines were left.
 */
export function quoteLines(text: string, max = QUOTE_LINES): string {
  let lines = text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  const body = lines.filter((line) => !/^#{1,6}\s/.test(line));
  if (body.length) lines = body;
  const shown = lines.slice(0, max);
  if (lines.length > max) shown.push("…");
  return shown.join("\n");
}

/** The line above the rows: how many paragraphs made how many topics. */
export function summaryLine(questions: Questions): string {
  const paragraphs = `${questions.paragraphs} ${questions.paragraphs === 1 ? "paragraph" : "paragraphs"}`;
  const topics = `${questions.topics.length} ${questions.topics.length === 1 ? "topic" : "topics"}`;
  return `${paragraphs} grouped into ${topics} by meaning.`;
}

/** Said above the rows when the server has no language model. */
export const EXTRACTIVE_NOTE =
  "No language model is configured on the server, so no questions were written: each topic shows its most central passage instead.";

/** What the view says for a failed request. */
export function questionsProblem(error: unknown): string {
  if (!(error instanceof QuireError)) return String(error);
  switch (error.code) {
    case "unreachable":
      return `${error.message}. It reconnects by itself; see the status bar.`;
    case "busy":
      return "The language model is busy writing other answers. Try again when one has finished.";
    case "llm_error":
      return `The language model failed: ${error.message}`;
    case "note_not_found":
    case "note_not_indexed":
      return `${error.message}. A new note is indexed a moment after it is saved.`;
    default:
      return error.message;
  }
}
