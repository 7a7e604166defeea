/**
 * The open editors of the files a proposal writes. Before an apply, each is saved, so that what
 * the user typed is on disk and the server's check sees it (a note edited since the proposal
 * was made is refused, not overwritten). After it, each shows the text on disk, so that no
 * editor holds the old text and saves it over the applied change.
 */
import { type App, MarkdownView } from "obsidian";

/** The Markdown views open on one of `paths`. */
export function viewsOf(app: App, paths: readonly string[]): MarkdownView[] {
  const wanted = new Set(paths);
  const views: MarkdownView[] = [];
  for (const leaf of app.workspace.getLeavesOfType("markdown")) {
    const view = leaf.view;
    if (view instanceof MarkdownView && view.file && wanted.has(view.file.path)) views.push(view);
  }
  return views;
}

/** Saves each open editor of `paths` (a view with nothing unsaved writes nothing). */
export async function saveEditors(app: App, paths: readonly string[]): Promise<void> {
  for (const view of viewsOf(app, paths)) await view.save();
}

/**
 * Puts the text on disk into each open editor of `paths` that holds something else. Returns the
 * paths whose editors were updated.
 */
export async function showTextOnDisk(app: App, paths: readonly string[]): Promise<string[]> {
  const updated: string[] = [];
  for (const view of viewsOf(app, paths)) {
    const file = view.file;
    if (!file) continue;
    const text = await app.vault.read(file);
    if (view.getViewData() === text) continue;
    view.setViewData(text, false);
    updated.push(file.path);
  }
  return updated;
}
