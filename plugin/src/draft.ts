/**
 * "Draft this section": the heading at the cursor is sent to `POST /api/draft`, the draft
 * streams into a preview, and "Insert" puts it at the end of the section through the editor, as
 * one change (one Ctrl-Z takes it back). The file is never written underneath the editor: the
 * editor holds the note, and Obsidian saves it as it saves any edit.
 */
import { Component, type Editor, type MarkdownFileInfo, MarkdownRenderer, MarkdownView, Modal, Notice } from "obsidian";
import { isAbort, QuireError, type Draft } from "./api";
import { answerWarnings, kindLabel, renderSourceCards, safeMarkdown } from "./answer";
import type { QuireHost } from "./host";
import { openSourceCard } from "./open-note";
import { draftInsertion, findHeading, headingAt, type Heading } from "./sections";

/** Inserts `draft` at the end of the section under `heading`, as one editor change. */
export function insertDraft(editor: Editor, heading: Heading, draft: string): boolean {
  const lines = editor.getValue().split("\n");
  const current = findHeading(lines, heading);
  if (!current) {
    new Notice(`The heading "${heading.raw}" is no longer in the note, so the draft was not inserted.`);
    return false;
  }
  const at = draftInsertion(lines, current, draft);
  const from = { line: at.line, ch: at.ch };
  // The cursor goes to the first line of the draft (after the blank line).
  editor.transaction({ changes: [{ from, to: from, text: at.text }], selection: { from: { line: at.line + 2, ch: 0 } } }, "quire-draft");
  return true;
}

/** The editor of `path` if it is still open: the one the command ran in, or another one. */
function editorOf(host: QuireHost, path: string, context: MarkdownFileInfo, editor: Editor): Editor | null {
  if (context.file?.path === path) return editor;
  for (const leaf of host.app.workspace.getLeavesOfType("markdown")) {
    if (leaf.view instanceof MarkdownView && leaf.view.file?.path === path) return leaf.view.editor;
  }
  return null;
}

/** The command: drafts the section at the cursor of `editor`. */
export function draftSection(host: QuireHost, editor: Editor, context: MarkdownFileInfo): DraftModal | null {
  const file = context.file;
  if (!file) {
    new Notice("Open a note to draft one of its sections.");
    return null;
  }
  const heading = headingAt(editor.getValue().split("\n"), editor.getCursor().line);
  if (!heading) {
    new Notice("Click inside a section, under its heading, to draft it.");
    return null;
  }
  const path = file.path;
  const modal = new DraftModal(host, path, heading, (draft) => {
    const target = editorOf(host, path, context, editor);
    if (!target) {
      new Notice(`${path} is no longer open, so the draft was not inserted. Open it and draft again.`);
      return false;
    }
    return insertDraft(target, heading, draft);
  });
  modal.open();
  return modal;
}

export class DraftModal extends Modal {
  private readonly component = new Component();
  private controller: AbortController | null = null;
  private draft: Draft | null = null;
  private metaEl!: HTMLElement;
  private bodyEl!: HTMLElement;
  private warningsEl!: HTMLElement;
  private sourcesEl!: HTMLElement;
  private insertEl!: HTMLButtonElement;
  /** Settles when the draft is complete, stopped or failed. */
  finished: Promise<void> = Promise.resolve();

  constructor(
    private readonly host: QuireHost,
    private readonly path: string,
    private readonly heading: Heading,
    private readonly insert: (draft: string) => boolean,
  ) {
    super(host.app);
  }

  override onOpen(): void {
    this.component.load();
    this.modalEl.addClass("quire-draft-modal");
    this.setTitle(`Draft: ${this.heading.text}`);
    const { contentEl } = this;
    contentEl.empty();
    contentEl.createDiv({ cls: "quire-draft-target", text: `${this.path} › ${this.heading.raw}` });
    this.metaEl = contentEl.createDiv({ cls: "quire-answer-meta", text: "Gathering passages from your other notes…" });
    this.warningsEl = contentEl.createEl("ul", { cls: "quire-warnings" });
    this.bodyEl = contentEl.createDiv({ cls: "quire-draft-body quire-answer-body is-streaming" });
    this.sourcesEl = contentEl.createEl("ul", { cls: "quire-sources" });
    const buttons = contentEl.createDiv({ cls: "modal-button-container" });
    this.insertEl = buttons.createEl("button", { cls: "mod-cta", text: "Insert", attr: { type: "button", disabled: true } });
    this.insertEl.addEventListener("click", () => this.onInsert());
    const cancel = buttons.createEl("button", { text: "Cancel", attr: { type: "button" } });
    cancel.addEventListener("click", () => this.close());
    this.finished = this.run();
  }

  override onClose(): void {
    this.controller?.abort();
    this.component.unload();
    this.contentEl.empty();
  }

  private async run(): Promise<void> {
    const controller = new AbortController();
    this.controller = controller;
    let text = "";
    try {
      const draft = await this.host.client().draft(
        this.path,
        this.heading.raw,
        (piece) => {
          if (!text) this.metaEl.setText("Writing…");
          text += piece;
          this.bodyEl.setText(text);
        },
        controller.signal,
      );
      this.draft = draft;
      this.metaEl.setText(kindLabel(draft.kind, draft.model));
      for (const warning of answerWarnings(draft.warnings, draft.invalid_citations)) {
        this.warningsEl.createEl("li", { cls: "quire-warning", text: warning });
      }
      if (draft.kind !== "generated") {
        // As `quire draft --insert`: only a written draft goes into the note, not the gathered material.
        this.warningsEl.createEl("li", {
          cls: "quire-warning",
          text: "No language model is configured on the server, so this is material to write from, not a draft: it cannot be inserted.",
        });
      }
      this.bodyEl.empty();
      this.bodyEl.removeClass("is-streaming");
      await MarkdownRenderer.render(this.app, safeMarkdown(draft.draft), this.bodyEl, this.path, this.component);
      renderSourceCards(this.sourcesEl, draft.sources, (card) => {
        this.close();
        void openSourceCard(this.host, card);
      });
      this.insertEl.disabled = draft.kind !== "generated" || !draft.draft.trim();
    } catch (error) {
      this.bodyEl.removeClass("is-streaming");
      if (isAbort(error)) this.metaEl.setText("Stopped.");
      else {
        this.metaEl.setText(error instanceof QuireError ? error.message : String(error));
        this.metaEl.addClass("is-error");
      }
    } finally {
      if (this.controller === controller) this.controller = null;
    }
  }

  private onInsert(): void {
    if (!this.draft || this.insertEl.disabled) return;
    if (this.insert(this.draft.draft)) this.close();
  }
}
