/**
 * Opening a note the server named at the lines it named: in the editor, with the cursor on the
 * first line and the range scrolled into the middle of the view.
 */
import { type App, MarkdownView, Notice } from "obsidian";
import type { LineRange } from "./host";

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
