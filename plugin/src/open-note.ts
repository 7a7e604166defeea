/**
 * Opening a note the server named at the lines it named: in the editor, with the cursor on the
 * first line and the range scrolled into the middle of the view; a PDF at the page it named; and
 * a file the server just wrote (the vault map's canvas), once Obsidian has noticed it.
 */
import { type App, MarkdownView, Notice } from "obsidian";
import type { SourceCard } from "./api";
import type { LineRange, QuireHost } from "./host";

export async function openNoteAt(app: App, path: string, lines?: LineRange): Promise<void> {
  const file = app.vault.getFileByPath(path);
  if (!file) {
    new Notice(`${path} is not in this vault. The quire server may serve another folder, or the note was moved since the last sync.`);
    return;
  }
  const leaf = app.workspace.getLeaf(false);
  const line = lines ? Math.max(0, lines.start - 1) : 0;
  await leaf.openFile(file, { active: true, eState: { line } });
  const view = leaf.view;
  if (!lines || !(view instanceof MarkdownView)) return;
  const editor = view.editor;
  const last = Math.min(Math.max(line, lines.end - 1), editor.lastLine());
  const from = { line: Math.min(line, editor.lastLine()), ch: 0 };
  editor.setCursor(from);
  editor.scrollIntoView({ from, to: { line: last, ch: editor.getLine(last).length } }, true);
}

/** Opens a PDF of the vault at `page` (1-based), as a `[[file.pdf#page=N]]` link does. */
export function openPdfPage(app: App, path: string, page: number): Promise<void> {
  return app.workspace.openLinkText(`${path}#page=${page}`, "", false);
}

/**
 * Opens a source card's passage (of an answer, a draft): a note at its lines, a PDF at its page.
 */
export function openSourceCard(host: QuireHost, card: SourceCard): Promise<void> {
  if (card.page) return openPdfPage(host.app, card.path, card.page);
  return host.openNote(card.path, { start: card.start_line, end: card.end_line });
}

/** How long a file just written by the server may take to reach Obsidian's vault (its watcher), in milliseconds. */
const WRITTEN_FILE_WAIT_MS = 5_000;

/**
 * Opens a file the server just wrote (a canvas map) in a new tab, once Obsidian's vault has
 * noticed it. Resolves with whether it opened.
 */
export async function openWrittenFile(app: App, path: string, waitMs = WRITTEN_FILE_WAIT_MS): Promise<boolean> {
  const until = Date.now() + waitMs;
  let file = app.vault.getFileByPath(path);
  while (!file && Date.now() < until) {
    await new Promise((resolve) => window.setTimeout(resolve, 100));
    file = app.vault.getFileByPath(path);
  }
  if (!file) {
    new Notice(`${path} was written; open it from the file explorer.`);
    return false;
  }
  try {
    await app.workspace.getLeaf("tab").openFile(file, { active: true });
    return true;
  } catch (error) {
    new Notice(`${path} was written, and could not be opened: ${String(error)}`);
    return false;
  }
}
