/**
 * "Questions this note answers" (and "… this folder answers"): `GET /api/questions/{path}`. The
 * server groups the note's (or the folder's, at any depth) indexed paragraphs into topics by
 * their vectors and has its language model write one question per topic; the view shows one row
 * per topic: the question with an Ask button that asks it in the ask view, and the topic's most
 * central passage, which opens the note at its lines. Without a language model there are no
 * questions: each row quotes the first lines of the central passage instead, and the view says
 * why.
 *
 * With a model the request takes one model call per topic, and holds one of the server's answer
 * slots: the view asks only when a command runs or Refresh is clicked, and a new request cancels
 * the one still running (the server stops its model then; a request refused as busy meanwhile is
 * sent again for a moment, as the ask view does after a stop).
 */
import { ItemView, type WorkspaceLeaf } from "obsidian";
import { abortError, isAbort, QuireError, type QuestionTopic, type Questions } from "./api";
import type { QuireHost } from "./host";
import { EXTRACTIVE_NOTE, linesLabel, questionsProblem, quoteLines, scopeLabel, sourceLabel, summaryLine } from "./questions";

export const QUESTIONS_VIEW = "quire-questions";

/**
 * After a request is cancelled the server needs a moment to stop the model and free its slot;
 * until then the next request is refused as `busy`, and is sent again for this long.
 */
const CANCELLED_SETTLE_MS = 10_000;
const BUSY_RETRY_MS = 300;

export class QuestionsView extends ItemView {
  /** The note or folder (`Projects/`) shown; null before the first command. */
  private shown: string | null = null;
  private running: AbortController | null = null;
  /** When the view last cancelled a request still running (ms since the epoch). */
  private cancelledAt = 0;
  /** The last request failed because quire was not reachable: it is made again once it is. */
  private unreachable = false;
  private titleEl!: HTMLElement;
  private scopeEl!: HTMLElement;
  private refreshButton!: HTMLButtonElement;
  private infoEl!: HTMLElement;
  private noteEl!: HTMLElement;
  private listEl!: HTMLElement;
  /** Settles when the last request asked for is shown, failed or cancelled. */
  finished: Promise<void> = Promise.resolve();

  constructor(
    leaf: WorkspaceLeaf,
    private readonly host: QuireHost,
  ) {
    super(leaf);
  }

  override getViewType(): string {
    return QUESTIONS_VIEW;
  }

  override getDisplayText(): string {
    return "Questions this note answers";
  }

  override getIcon(): string {
    return "circle-help";
  }

  override async onOpen(): Promise<void> {
    const root = this.contentEl;
    root.empty();
    root.addClass("quire-questions-view");
    const header = root.createDiv({ cls: "quire-pane-header quire-questions-header" });
    this.titleEl = header.createSpan({ cls: "quire-questions-title", text: "Questions this note answers" });
    this.refreshButton = header.createEl("button", { cls: "quire-questions-refresh", text: "Refresh", attr: { type: "button" } });
    this.refreshButton.disabled = true;
    this.refreshButton.addEventListener("click", () => void this.refresh());
    this.scopeEl = root.createDiv({ cls: "quire-questions-scope" });
    this.infoEl = root.createDiv({ cls: "quire-pane-info quire-questions-info", text: "Run “Questions this note answers” or “Questions this folder answers” with a note open." });
    this.noteEl = root.createDiv({ cls: "quire-questions-note" });
    this.listEl = root.createEl("ol", { cls: "quire-questions-list" });
    this.registerEvent(
      this.host.events.on("quire:state", () => {
        if (this.unreachable && this.shown !== null && this.host.connectionState().kind === "online") void this.refresh();
      }),
    );
  }

  override async onClose(): Promise<void> {
    this.running?.abort();
    this.running = null;
    this.contentEl.empty();
  }

  /** Shows the questions of `scope`: a note's path, or a folder with its trailing slash. */
  show(scope: string): Promise<void> {
    this.shown = scope;
    this.finished = this.fetch(scope);
    return this.finished;
  }

  /** Asks again about the scope shown. */
  refresh(): Promise<void> {
    return this.shown === null ? Promise.resolve() : this.show(this.shown);
  }

  private async fetch(scope: string): Promise<void> {
    if (this.running) {
      this.cancelledAt = Date.now();
      this.running.abort();
    }
    const folder = scope === "" || scope.endsWith("/");
    this.titleEl.setText(folder ? "Questions this folder answers" : "Questions this note answers");
    this.scopeEl.setText(scope === "" ? "The top of the vault" : scopeLabel(scope));
    this.scopeEl.setAttr("title", scope);
    this.noteEl.empty();
    this.listEl.empty();
    this.infoEl.removeClass("is-error");
    if (scope === "") {
      this.running = null;
      this.refreshButton.disabled = true;
      this.contentEl.removeClass("is-loading");
      this.infoEl.setText("This note is at the top of the vault, which is not a folder quire can be asked about. Ask about the note itself, or about a note in a folder.");
      return;
    }
    const controller = new AbortController();
    this.running = controller;
    this.refreshButton.disabled = true;
    this.contentEl.addClass("is-loading");
    this.infoEl.setText(this.loadingText());
    try {
      const questions = await this.request(scope, controller.signal);
      if (this.running !== controller) return;
      this.unreachable = false;
      this.render(questions);
    } catch (error) {
      if (this.running !== controller || isAbort(error)) return;
      this.unreachable = error instanceof QuireError && error.code === "unreachable";
      this.showProblem(error);
    } finally {
      if (this.running === controller) {
        this.running = null;
        this.refreshButton.disabled = false;
        this.contentEl.removeClass("is-loading");
      }
    }
  }

  /** What the view says while it waits: a model takes a while, one call per topic. */
  private loadingText(): string {
    const state = this.host.connectionState();
    const llm = state.kind === "online" ? state.status.llm : undefined;
    if (llm) return `Grouping the paragraphs into topics, then ${llm} writes a question for each. This takes a few seconds per topic…`;
    return "Grouping the paragraphs into topics…";
  }

  /** One request; sent again while a request this view cancelled still holds the model. */
  private async request(scope: string, signal: AbortSignal): Promise<Questions> {
    for (;;) {
      try {
        return await this.host.client().questions(scope, signal);
      } catch (error) {
        const settling = Date.now() - this.cancelledAt < CANCELLED_SETTLE_MS;
        if (!(error instanceof QuireError && error.code === "busy" && settling)) throw error;
        await new Promise((resolve) => window.setTimeout(resolve, BUSY_RETRY_MS));
        if (signal.aborted) throw abortError();
      }
    }
  }

  private showProblem(error: unknown): void {
    this.infoEl.setText(questionsProblem(error));
    this.infoEl.addClass("is-error");
    if (error instanceof QuireError && error.code === "busy") {
      const again = this.noteEl.createEl("button", { cls: "mod-cta quire-questions-retry", text: "Try again", attr: { type: "button" } });
      again.addEventListener("click", () => void this.refresh());
    }
  }

  private render(questions: Questions): void {
    this.scopeEl.setText(scopeLabel(questions.scope));
    this.scopeEl.setAttr("title", questions.scope);
    this.infoEl.setText(summaryLine(questions));
    if (questions.kind === "extractive") this.noteEl.createDiv({ cls: "quire-questions-extractive", text: EXTRACTIVE_NOTE });
    for (const topic of questions.topics) this.renderTopic(topic, questions.kind === "generated");
  }

  private renderTopic(topic: QuestionTopic, generated: boolean): void {
    const row = this.listEl.createEl("li", { cls: "quire-questions-row", attr: { "data-number": topic.number } });
    const question = topic.question;
    if (question) {
      row.createDiv({ cls: "quire-questions-question", text: question });
    } else {
      if (generated) row.createDiv({ cls: "quire-hint", text: "The language model gave no usable question for this topic; its most central passage:" });
      row.createEl("blockquote", { cls: "quire-questions-quote", text: quoteLines(topic.central_text) });
    }
    const meta = row.createDiv({ cls: "quire-questions-meta" });
    const central = topic.central;
    const source = meta.createEl("a", {
      cls: "quire-questions-source",
      text: sourceLabel(central),
      href: "#",
      attr: { "data-path": central.path, "data-line": central.start_line, title: `${central.path}, ${linesLabel(central)}` },
    });
    source.addEventListener("click", (event) => {
      event.preventDefault();
      void this.host.openNote(central.path, { start: central.start_line, end: central.end_line });
    });
    meta.createSpan({ cls: "quire-lines", text: linesLabel(central) });
    const count = topic.passages.length;
    meta.createSpan({ cls: "quire-tag", text: `${count} ${count === 1 ? "paragraph" : "paragraphs"}`, attr: { title: "The paragraphs of this topic" } });
    if (question) {
      const ask = meta.createEl("button", { cls: "quire-questions-ask", text: "Ask", attr: { type: "button", title: "Ask this question in the ask view" } });
      ask.addEventListener("click", () => void this.host.askQuestion(question));
    }
  }
}
