/**
 * "Ask this document": a question answered from one document alone (nothing is written).
 *
 * The note in the editor, or a pasted text, is sent whole to `POST /api/article/ask` (the vault is
 * not searched); each passage the answer was given is listed with the lines of the document it
 * holds, the cited ones first, and for a note a passage opens the note at its lines.
 *
 * The PDF in the editor is asked through the vault's index, which holds its text page by page:
 * `POST /api/ask` with the PDF as its `note`, so that only that PDF's passages are used. Its
 * passages are source cards with their pages, and a card or a citation opens the PDF at its page.
 * A PDF the index does not have yet is said to be not indexed yet.
 *
 * Either way the answer streams in as plain text, then is rendered with its citations; Stop
 * cancels it.
 */
import { Component, MarkdownRenderer, Modal, type App } from "obsidian";
import { isAbort, QuireError, type Answer, type SourceCard } from "./api";
import { answerWarnings, kindLabel, linkCitations, renderSourceCards, safeMarkdown } from "./answer";
import { documentKind, linesOf, sizeProblem } from "./document";
import type { QuireHost } from "./host";
import { openSourceCard } from "./open-note";

/** The name a pasted text's passages get (`pasted text:3-7`). */
const PASTED_NAME = "pasted text";

/** What is asked: the note in the editor with its text, a pasted text, or a PDF of the vault (through its index). */
export type AskedDocument = { kind: "note"; path: string; text: string } | { kind: "paste" } | { kind: "pdf"; path: string };

/** Opens "Ask this document" for the active file: a note with its text, a PDF, else an empty text to paste into. */
export async function askThisDocument(host: QuireHost): Promise<void> {
  const file = host.app.workspace.getActiveFile();
  const kind = documentKind(file);
  let asked: AskedDocument = { kind: "paste" };
  if (file && kind === "pdf") asked = { kind, path: file.path };
  else if (file && kind === "note") asked = { kind, path: file.path, text: await host.app.vault.read(file) };
  new DocumentAskModal(host.app, host, asked).open();
}

/** What the dialog says under its title. */
function introduction(asked: AskedDocument): string {
  switch (asked.kind) {
    case "note":
      return `From the note ${asked.path} alone (not the rest of the vault). Edit the text below to ask about a part of it.`;
    case "paste":
      return "Paste the text to ask about: it is read on its own, not with your vault, and nothing is saved.";
    case "pdf":
      return `From the PDF ${asked.path} alone, page by page, through the vault's index (not the rest of the vault). A cited page opens the PDF at that page.`;
  }
}

export class DocumentAskModal extends Modal {
  /** The document's text; none for a PDF (the server has its pages). */
  private textEl: HTMLTextAreaElement | null = null;
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
    private readonly asked: AskedDocument,
  ) {
    super(app);
  }

  override onOpen(): void {
    const root = this.contentEl;
    const pdf = this.asked.kind === "pdf";
    root.addClass("quire-document-ask");
    this.setTitle(pdf ? "Ask this PDF" : "Ask this document");
    root.createDiv({ cls: "quire-document-from", text: introduction(this.asked) });
    if (!pdf) {
      this.textEl = root.createEl("textarea", { cls: "quire-document-text", placeholder: "Paste the document here…", attr: { rows: 8, "aria-label": "Document" } });
      this.textEl.value = this.asked.kind === "note" ? this.asked.text : "";
    }
    this.questionEl = root.createEl("textarea", {
      cls: "quire-document-question",
      placeholder: pdf ? "Ask a question about this PDF…" : "Ask a question about this document…",
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
    this.sourcesEl = answer.createEl("ul", { cls: pdf ? "quire-sources" : "quire-document-sources" });
    this.rendered.load();
    (this.asked.kind === "paste" ? this.textEl : this.questionEl)?.focus();
  }

  override onClose(): void {
    this.running?.abort();
    this.rendered.unload();
    this.contentEl.empty();
  }

  /** Asks the question of the document; resolves when the answer is complete, stopped or refused. */
  async ask(): Promise<void> {
    if (this.running) return;
    const text = this.textEl?.value ?? "";
    const question = this.questionEl.value.trim();
    if (this.textEl && !text.trim()) {
      this.metaEl.setText("Paste the document first.");
      return;
    }
    if (!question) {
      this.metaEl.setText("Write a question first.");
      return;
    }
    const tooLong = this.textEl ? sizeProblem(text, this.name(), question) : null;
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
    this.metaEl.setText(this.asked.kind === "pdf" ? "Finding the pages…" : "Reading the document…");
    this.bodyEl.addClass("is-streaming");
    let streamed = "";
    const onText = (piece: string) => {
      if (!streamed) this.metaEl.setText("Writing…");
      streamed += piece;
      this.bodyEl.setText(streamed);
    };
    try {
      await this.showAnswer(await this.send(text, question, onText, controller.signal), text);
    } catch (error) {
      this.bodyEl.removeClass("is-streaming");
      if (isAbort(error)) this.metaEl.setText(streamed ? "Stopped. The answer above is incomplete." : "Stopped.");
      else {
        this.metaEl.setText(problem(error, this.asked));
        this.bodyEl.addClass("is-error");
      }
    } finally {
      if (this.running === controller) {
        this.running = null;
        this.setButton(false);
      }
    }
  }

  /** The name the document's passages get: the note's path, or `pasted text`. */
  private name(): string {
    return this.asked.kind === "paste" ? PASTED_NAME : this.asked.path;
  }

  /** The request for the answer: a PDF through the vault's index, a text on its own. */
  private send(text: string, question: string, onText: (text: string) => void, signal: AbortSignal): Promise<Answer> {
    const client = this.host.client();
    if (this.asked.kind === "pdf") return client.ask(question, { note: this.asked.path, mode: this.host.settings.searchMode }, onText, signal);
    return client.askArticle(text, this.name(), question, onText, signal);
  }

  private setButton(running: boolean): void {
    this.buttonEl.setText(running ? "Stop" : "Ask");
    this.buttonEl.toggleClass("mod-cta", !running);
    this.buttonEl.toggleClass("mod-warning", running);
  }

  private async showAnswer(answer: Answer, text: string): Promise<void> {
    const pdf = this.asked.kind === "pdf";
    this.metaEl.setText(kindLabel(answer.kind, answer.model).replace(/your notes/g, pdf ? "this PDF" : "this document"));
    for (const warning of answerWarnings(answer.warnings, answer.invalid_citations)) this.warningsEl.createEl("li", { cls: "quire-warning", text: warning });
    this.bodyEl.empty();
    this.bodyEl.removeClass("is-streaming");
    await MarkdownRenderer.render(this.app, safeMarkdown(answer.answer), this.bodyEl, "", this.rendered);
    const items = pdf ? renderSourceCards(this.sourcesEl, answer.sources, (card) => this.openPage(card)) : this.renderSources(answer.sources, text);
    const citable = new Set(answer.kind === "generated" ? answer.citations.map((c) => c.id) : []);
    linkCitations(this.bodyEl, citable, (id) => {
      const source = answer.sources.find((s) => s.id === id);
      if (pdf && source) {
        this.openPage(source);
        return;
      }
      const item = items.get(id);
      item?.addClass("is-flashing");
      window.setTimeout(() => item?.removeClass("is-flashing"), 1200);
    });
  }

  /** Closes the dialog and opens the PDF at the card's page. */
  private openPage(card: SourceCard): void {
    this.close();
    void openSourceCard(this.host, card);
  }

  /** The passages the answer was given, the cited ones first, each with the document's lines it holds. */
  private renderSources(sources: readonly SourceCard[], text: string): Map<string, HTMLElement> {
    const items = new Map<string, HTMLElement>();
    const ordered = [...sources.filter((s) => s.cited), ...sources.filter((s) => !s.cited)];
    const note = this.asked.kind === "note" ? this.asked.path : null;
    for (const source of ordered) {
      const item = this.sourcesEl.createEl("li", { cls: "quire-document-source", attr: { "data-source": source.id } });
      item.toggleClass("is-cited", source.cited);
      const head = item.createDiv({ cls: "quire-source-head" });
      head.createSpan({ cls: "quire-source-id", text: source.id });
      const where = source.start_line === source.end_line ? `line ${source.start_line}` : `lines ${source.start_line}–${source.end_line}`;
      const place = head.createEl(note ? "a" : "span", { cls: "quire-lines", text: where });
      if (source.cited) head.createSpan({ cls: "quire-tag", text: "cited" });
      if (note && place instanceof HTMLAnchorElement) {
        place.href = "#";
        place.setAttr("title", `Open ${note} at ${where}`);
        place.addEventListener("click", (event) => {
          event.preventDefault();
          this.close();
          void this.host.openNote(note, { start: source.start_line, end: source.end_line });
        });
      }
      item.createEl("pre", { cls: "quire-document-lines", text: linesOf(text, source.start_line, source.end_line) });
      items.set(source.id, item);
    }
    return items;
  }
}

function problem(error: unknown, asked: AskedDocument): string {
  if (!(error instanceof QuireError)) return String(error);
  switch (error.code) {
    case "unreachable":
      return `${error.message}. It reconnects by itself; see the status bar.`;
    case "note_not_found":
      return asked.kind === "pdf"
        ? `${asked.path} is not indexed yet. quire reads a PDF's text page by page when it syncs the vault: wait for the sync to finish (see the status bar), or run \`quire scan\` to see whether the PDF was read or skipped, and why (a scanned PDF without a text layer has nothing to read).`
        : error.message;
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
