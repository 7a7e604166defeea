/**
 * "Ask this document": a question answered from one document alone, the note in the editor or
 * a pasted text, through `POST /api/article/ask` (nothing is written; the vault is not searched).
 * The answer streams in as plain text, then is rendered with its citations, and each passage it
 * was given is listed with the lines of the document it holds, the cited ones first; for a note,
 * a passage opens the note at its lines. A PDF is asked through "Ask your vault" instead.
 */
import { Component, MarkdownRenderer, Modal, Notice, type App } from "obsidian";
import { isAbort, QuireError, type ArticleAnswer, type SourceCard } from "./api";
import { answerWarnings, kindLabel, linkCitations, safeMarkdown } from "./answer";
import { documentKind, linesOf, PDF_ADVICE, sizeProblem } from "./document";
import type { QuireHost } from "./host";

/** The name a pasted text's passages get (`pasted text:3-7`). */
const PASTED_NAME = "pasted text";

/** Opens "Ask this document" for the active file: its text when it is a note, else an empty text to paste into. */
export async function askThisDocument(host: QuireHost): Promise<void> {
  const file = host.app.workspace.getActiveFile();
  const kind = documentKind(file);
  if (kind === "pdf") {
    new Notice(PDF_ADVICE, 12_000);
    return;
  }
  const note = kind === "note" && file ? { path: file.path, text: await host.app.vault.read(file) } : null;
  new DocumentAskModal(host.app, host, note).open();
}

export class DocumentAskModal extends Modal {
  private textEl!: HTMLTextAreaElement;
  private questionEl!: HTMLTextAreaElement;
  private buttonEl!: HTMLButtonElement;
  private metaEl!: HTMLElement;
  private warningsEl!: HTMLElement;
  private bodyEl!: HTMLElement;
  private sourcesEl!: HTMLElement;
  private running: AbortController | null = null;
  private rendered = new Component();

  constructor(
    app: App,
    private readonly host: QuireHost,
    /** The note asked, with its text; null for a pasted text. */
    private readonly note: { path: string; text: string } | null,
  ) {
    super(app);
  }

  override onOpen(): void {
    const root = this.contentEl;
    root.addClass("quire-document-ask");
    this.setTitle("Ask this document");
    root.createDiv({
      cls: "quire-document-from",
      text: this.note
        ? `From the note ${this.note.path} alone (not the rest of the vault). Edit the text below to ask about a part of it.`
        : "Paste the text to ask about: it is read on its own, not with your vault, and nothing is saved.",
    });
    this.textEl = root.createEl("textarea", {
      cls: "quire-document-text",
      placeholder: "Paste the document here…",
      attr: { rows: 8, "aria-label": "Document" },
    });
    this.textEl.value = this.note?.text ?? "";
    this.questionEl = root.createEl("textarea", {
      cls: "quire-document-question",
      placeholder: "Ask a question about this document…",
      attr: { rows: 2, "aria-label": "Question" },
    });
    this.questionEl.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        if (!this.running) void this.ask();
      }
    });
    this.buttonEl = root.createEl("button", { cls: "mod-cta quire-document-button", text: "Ask", attr: { type: "button" } });
    this.buttonEl.addEventListener("click", () => {
      if (this.running) this.running.abort();
      else void this.ask();
    });
    const answer = root.createDiv({ cls: "quire-answer" });
    this.metaEl = answer.createDiv({ cls: "quire-answer-meta" });
    this.warningsEl = answer.createEl("ul", { cls: "quire-warnings" });
    this.bodyEl = answer.createDiv({ cls: "quire-answer-body" });
    this.sourcesEl = answer.createEl("ul", { cls: "quire-document-sources" });
    this.rendered.load();
    (this.note ? this.questionEl : this.textEl).focus();
  }

  override onClose(): void {
    this.running?.abort();
    this.rendered.unload();
    this.contentEl.empty();
  }

  /** Asks the question of the text in the dialog; resolves when the answer is complete, stopped or refused. */
  async ask(): Promise<void> {
    const text = this.textEl.value;
    const question = this.questionEl.value.trim();
    if (this.running) return;
    if (!text.trim()) {
      this.metaEl.setText("Paste the document first.");
      return;
    }
    if (!question) {
      this.metaEl.setText("Write a question first.");
      return;
    }
    const name = this.note?.path ?? PASTED_NAME;
    const tooLong = sizeProblem(text, name, question);
    this.warningsEl.empty();
    this.sourcesEl.empty();
    this.bodyEl.empty();
    this.bodyEl.removeClass("is-error");
    if (tooLong) {
      this.metaEl.setText(tooLong);
      this.bodyEl.addClass("is-error");
      return;
    }
    const controller = new AbortController();
    this.running = controller;
    this.setButton(true);
    this.metaEl.setText("Reading the document…");
    this.bodyEl.addClass("is-streaming");
    let streamed = "";
    try {
      const answer = await this.host.client().askArticle(
        text,
        name,
        question,
        (piece) => {
          if (!streamed) this.metaEl.setText("Writing…");
          streamed += piece;
          this.bodyEl.setText(streamed);
        },
        controller.signal,
      );
      await this.showAnswer(answer, text);
    } catch (error) {
      this.bodyEl.removeClass("is-streaming");
      if (isAbort(error)) this.metaEl.setText(streamed ? "Stopped. The answer above is incomplete." : "Stopped.");
      else {
        this.metaEl.setText(problem(error));
        this.bodyEl.addClass("is-error");
      }
    } finally {
      if (this.running === controller) {
        this.running = null;
        this.setButton(false);
      }
    }
  }

  private setButton(running: boolean): void {
    this.buttonEl.setText(running ? "Stop" : "Ask");
    this.buttonEl.toggleClass("mod-cta", !running);
    this.buttonEl.toggleClass("mod-warning", running);
  }

  private async showAnswer(answer: ArticleAnswer, text: string): Promise<void> {
    this.metaEl.setText(kindLabel(answer.kind, answer.model).replace(/your notes/g, "this document"));
    for (const warning of answerWarnings(answer.warnings, answer.invalid_citations)) this.warningsEl.createEl("li", { cls: "quire-warning", text: warning });
    this.bodyEl.empty();
    this.bodyEl.removeClass("is-streaming");
    await MarkdownRenderer.render(this.app, safeMarkdown(answer.answer), this.bodyEl, "", this.rendered);
    const items = this.renderSources(answer.sources, text);
    const citable = new Set(answer.kind === "generated" ? answer.citations.map((c) => c.id) : []);
    linkCitations(this.bodyEl, citable, (id) => {
      const item = items.get(id);
      item?.addClass("is-flashing");
      window.setTimeout(() => item?.removeClass("is-flashing"), 1200);
    });
  }

  /** The passages the answer was given, the cited ones first, each with the document's lines it holds. */
  private renderSources(sources: readonly SourceCard[], text: string): Map<string, HTMLElement> {
    const items = new Map<string, HTMLElement>();
    const ordered = [...sources.filter((s) => s.cited), ...sources.filter((s) => !s.cited)];
    for (const source of ordered) {
      const item = this.sourcesEl.createEl("li", { cls: "quire-document-source", attr: { "data-source": source.id } });
      item.toggleClass("is-cited", source.cited);
      const head = item.createDiv({ cls: "quire-source-head" });
      head.createSpan({ cls: "quire-source-id", text: source.id });
      const where = source.start_line === source.end_line ? `line ${source.start_line}` : `lines ${source.start_line}–${source.end_line}`;
      const place = head.createEl(this.note ? "a" : "span", { cls: "quire-lines", text: where });
      if (source.cited) head.createSpan({ cls: "quire-tag", text: "cited" });
      if (this.note && place instanceof HTMLAnchorElement) {
        const path = this.note.path;
        place.href = "#";
        place.setAttr("title", `Open ${path} at ${where}`);
        place.addEventListener("click", (event) => {
          event.preventDefault();
          this.close();
          void this.host.openNote(path, { start: source.start_line, end: source.end_line });
        });
      }
      item.createEl("pre", { cls: "quire-document-lines", text: linesOf(text, source.start_line, source.end_line) });
      items.set(source.id, item);
    }
    return items;
  }
}

function problem(error: unknown): string {
  if (!(error instanceof QuireError)) return String(error);
  switch (error.code) {
    case "unreachable":
      return `${error.message}. It reconnects by itself; see the status bar.`;
    case "payload_too_large":
      return "The document is too long for the server (64 KiB with the question): ask about a part of it.";
    case "busy":
      return "quire is writing other answers; ask again when one has finished.";
    case "llm_error":
      return `The language model failed: ${error.message}`;
    default:
      return error.message;
  }
}
