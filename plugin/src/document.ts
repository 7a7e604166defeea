/**
 * "Ask this document", the parts without a view: which file can be asked this way (a note by its
 * text, a PDF through the vault's index), whether a document and its question fit in one request
 * to `POST /api/article/ask` (64 KiB with the JSON around them), and the lines of the document a
 * citation points at.
 */

/** The server's limit on a request body, in bytes. */
export const BODY_LIMIT = 65_536;

/** How the active file is asked: a note's text, a PDF (through the vault's index, page by page), or a pasted text (no file, or another kind). */
export type DocumentKind = "note" | "pdf" | "paste";

export function documentKind(file: { extension: string } | null): DocumentKind {
  const extension = file?.extension.toLowerCase();
  if (extension === "md") return "note";
  if (extension === "pdf") return "pdf";
  return "paste";
}

/** The size in bytes of the request body that asks `question` of `text` named `name`. */
export function bodyBytes(text: string, name: string, question: string): number {
  return new TextEncoder().encode(JSON.stringify({ text, name, question })).length;
}

/** Why the document cannot be sent as it is, or null when it fits. */
export function sizeProblem(text: string, name: string, question: string): string | null {
  const bytes = bodyBytes(text, name, question);
  if (bytes <= BODY_LIMIT) return null;
  const kib = (n: number) => `${Math.ceil(n / 1024)} KiB`;
  return `The document is too long to ask in one request: ${kib(bytes)} with the question, of at most ${kib(BODY_LIMIT)}. Ask about a part of it (paste that part), or ask your vault, which has the note indexed.`;
}

/** Lines `start` to `end` (1-based, inclusive) of `text`. */
export function linesOf(text: string, start: number, end: number): string {
  return text
    .split("\n")
    .slice(Math.max(0, start - 1), Math.max(0, end))
    .join("\n");
}
