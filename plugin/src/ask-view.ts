/**
 * "Ask your vault": a conversation with the notes. Each answer streams in as plain text while
 * the server writes it, then is rendered as Markdown, with its checked citations linked to
 * source cards that open the note at the cited lines. A stop button cancels the request.
 *
 * The server answers each question on its own (`POST /api/ask` takes no history yet), so the
 * conversation is kept here for reading, and each question is sent alone.
 */
import { Component, ItemView, MarkdownRenderer, type WorkspaceLeaf } from "obsidian";
import { isAbort, QuireError, type Answer, type SourceCard } from "./api";
import { answerWarnings, kindLabel, linkCitations, renderSourceCards, safeMarkdown } from "./answer";
import type { QuireHost } from "./host";

export const ASK_VIEW = "quire-ask";

interface Turn {
  question: string;
  answer: Answer | null;
}

/** The elements of one answer, filled as it arrives. */
interface AnswerEls {
  meta: HTMLElement;
  warnings: HTMLElement;
  body: HTMLElement;
  sources: HTMLElement;
}

export class AskView extends ItemView {
  private logEl!: HTMLElement;
  private inputEl!: HTMLTextAreaElement;
  private buttonEl!: HTMLButtonElement;
  private running: AbortController | null = null;
  /** Owns what the Markdown renderer made for this conversation. */
  private conversation = new Component();
  private turns: Turn[] = [];

  constructor(
    leaf: WorkspaceLeaf,
    private readonly host: QuireHost,
  ) {
    super(leaf);
  }

  override getViewType(): string {
    return ASK_VIEW;
  }

  override getDisplayText(): string {
    return "Ask your vault";
  }

  override getIcon(): string {
    return "message-circle-question";
  }

  override async onOpen(): Promise<void> {
    const root = this.contentEl;
    root.empty();
    root.addClass("quire-ask-view");
    const header = root.createDiv({ cls: "quire-pane-header quire-ask-header" });
    header.createSpan({ text: "Ask your vault" });
    const clear = header.createEl("button", { cls: "quire-new-conversation", text: "New conversation", attr: { type: "button" } });
    clear.addEventListener("click", () => this.clear());
    this.logEl = root.createDiv({ cls: "quire-ask-log" });
    const form = root.createDiv({ cls: "quire-ask-form" });
    this.inputEl = form.createEl("textarea", {
      cls: "quire-ask-input",
      placeholder: "Ask a question about your notes…",
      attr: { rows: 3, "aria-label": "Question" },
    });
    const row = form.createDiv({ cls: "quire-ask-row" });
    row.createSpan({ cls: "quire-hint", text: "Enter asks; shift+enter starts a new line. Each question is answered on its own." });
    this.buttonEl = row.createEl("button", { cls: "mod-cta quire-ask-button", text: "Ask", attr: { type: "button" } });
    this.buttonEl.addEventListener("click", () => {
      if (this.running) this.running.abort();
      else void this.ask(this.inputEl.value);
    });
    this.inputEl.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        if (!this.running) void this.ask(this.inputEl.value);
      }
    });
    this.addChild(this.conversation);
  }

  override async onClose(): Promise<void> {
    this.running?.abort();
    this.contentEl.empty();
  }

  /** Starts a new conversation: the answers so far are dropped. */
  clear(): void {
    this.running?.abort();
    this.turns = [];
    this.removeChild(this.conversation);
    this.conversation = this.addChild(new Component());
    this.logEl.empty();
  }

  /** Asks `question`, showing the answer as it arrives; resolves when it is complete or stopped. */
  async ask(question: string): Promise<void> {
    question = question.trim();
    if (!question || this.running) return;
    this.inputEl.value = "";
    const turn: Turn = { question, answer: null };
    this.turns.push(turn);
    const turnEl = this.logEl.createDiv({ cls: "quire-turn" });
    turnEl.createDiv({ cls: "quire-question", text: question });
    const answerEl = turnEl.createDiv({ cls: "quire-answer" });
    const els: AnswerEls = {
      meta: answerEl.createDiv({ cls: "quire-answer-meta", text: "Retrieving passages…" }),
      warnings: answerEl.createEl("ul", { cls: "quire-warnings" }),
      body: answerEl.createDiv({ cls: "quire-answer-body is-streaming" }),
      sources: answerEl.createEl("ul", { cls: "quire-sources" }),
    };
    const controller = new AbortController();
    this.running = controller;
    this.setButton(true);
    let text = "";
    try {
      const answer = await this.host.client().ask(
        question,
        this.host.settings.searchMode,
        (piece) => {
          if (!text) els.meta.setText("Writing…");
          text += piece;
          els.body.setText(text);
          this.scrollToEnd();
        },
        controller.signal,
      );
      turn.answer = answer;
      await this.showAnswer(els, answer);
    } catch (error) {
      els.body.removeClass("is-streaming");
      if (isAbort(error)) {
        els.meta.setText(text ? "Stopped. The answer above is incomplete." : "Stopped.");
      } else {
        els.meta.setText(askProblem(error));
        answerEl.addClass("is-error");
      }
    } finally {
      if (this.running === controller) this.running = null;
      this.setButton(false);
    }
  }

  private setButton(running: boolean): void {
    this.buttonEl.setText(running ? "Stop" : "Ask");
    this.buttonEl.toggleClass("mod-cta", !running);
    this.buttonEl.toggleClass("mod-warning", running);
  }

  private scrollToEnd(): void {
    this.logEl.scrollTop = this.logEl.scrollHeight;
  }

  private async showAnswer(els: AnswerEls, answer: Answer): Promise<void> {
    els.meta.setText(kindLabel(answer.kind, answer.model));
    for (const warning of answerWarnings(answer.warnings, answer.invalid_citations)) {
      els.warnings.createEl("li", { cls: "quire-warning", text: warning });
    }
    const cards = renderSourceCards(els.sources, answer.sources, (card) => void this.openSource(card));
    els.body.empty();
    els.body.removeClass("is-streaming");
    await MarkdownRenderer.render(this.app, safeMarkdown(answer.answer), els.body, "", this.conversation);
    // Only a model's answer cites: an extractive answer quotes notes, whose `[S1]` is their own text.
    const citable = new Set(answer.kind === "generated" ? answer.citations.map((c) => c.id) : []);
    linkCitations(els.body, citable, (id) => {
      const card = cards.get(id);
      const source = answer.sources.find((s) => s.id === id);
      card?.addClass("is-flashing");
      window.setTimeout(() => card?.removeClass("is-flashing"), 1200);
      if (source) void this.openSource(source);
    });
    this.scrollToEnd();
  }

  private openSource(card: SourceCard): Promise<void> {
    return this.host.openNote(card.path, { start: card.start_line, end: card.end_line });
  }
}

function askProblem(error: unknown): string {
  if (!(error instanceof QuireError)) return String(error);
  switch (error.code) {
    case "unreachable":
      return `${error.message}. It reconnects by itself; see the status bar.`;
    case "busy":
      return "quire is writing other answers; ask again when one has finished.";
    case "llm_error":
      return `The language model failed: ${error.message}`;
    default:
      return error.message;
  }
}
