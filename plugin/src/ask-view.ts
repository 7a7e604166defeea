/**
 * "Ask your vault": a conversation with the notes. Each answer streams in as plain text while
 * the server writes it, then is rendered as Markdown, with its checked citations linked to
 * source cards that open the note at the cited lines (a PDF at the cited page). A stop button
 * cancels the request.
 *
 * The server keeps the conversation (`POST /api/ask` answers with a `conversation` id, sent back
 * with each follow-up): the model sees the earlier turns, and a passage keeps its id (`S2`) for
 * the whole conversation. A conversation the server no longer has (it keeps one for an hour
 * after its last turn, while it runs) is said to have ended, and the question starts a new one.
 *
 * "Save as a note" proposes a note of the conversation (each question, its answer, its sources
 * as wikilinks; see `conversation-note.ts`) and opens it in the proposals pane.
 *
 * A dropdown beside the question box chooses how the next questions find their passages (the
 * `retriever`: search, tree descent, auto). It starts on the setting at each new conversation
 * and keeps the choice for the conversation's next questions; the setting is not changed. Tree
 * descent and auto need a language model: when the server's status says it has none, they are
 * disabled, with a tooltip that says so. Under each answer a discreet line says what answered
 * (the `retrieval` report of the `done` event) and the report's notes (why auto did not descend,
 * why a descent fell back to search), which are then left out of the warnings above the answer.
 */
import { Component, ItemView, MarkdownRenderer, Notice, type WorkspaceLeaf } from "obsidian";
import { abortError, isAbort, QuireError, type Answer, type Retriever } from "./api";
import { answeredBy, answerWarnings, kindLabel, linkCitations, openInternalLinks, renderSourceCards, safeMarkdown } from "./answer";
import { conversationProposal, type Turn } from "./conversation-note";
import type { QuireHost } from "./host";
import { openSourceCard } from "./open-note";

export const ASK_VIEW = "quire-ask";

/**
 * After the user stops an answer, the server needs a moment to notice and let go of it; until
 * then the next question is refused as `busy`, and is sent again for this long.
 */
const STOPPED_SETTLE_MS = 10_000;
const BUSY_RETRY_MS = 300;

/** The retrievers of the dropdown: value, label, what it does (its tooltip). */
const RETRIEVERS: readonly (readonly [Retriever, string, string])[] = [
  ["hybrid", "Search", "Search finds the passages by their words (and meaning)"],
  ["tree", "Tree descent", "The language model walks down the vault's outline (folders, notes, headings) to the passages"],
  ["auto", "Auto", "Search, then tree descent when the evidence is weak or the question is about the vault's structure"],
];
const RETRIEVER_TITLE = "How the next question finds its passages (the setting is the default of each new conversation)";
const NEEDS_MODEL = "Needs a language model on the server, and it has none";

/** The elements of one answer, filled as it arrives. */
interface AnswerEls {
  meta: HTMLElement;
  warnings: HTMLElement;
  body: HTMLElement;
  /** What answered: search, tree descent or both. */
  answeredBy: HTMLElement;
  sources: HTMLElement;
}

export class AskView extends ItemView {
  private logEl!: HTMLElement;
  private inputEl!: HTMLTextAreaElement;
  private buttonEl!: HTMLButtonElement;
  private retrieverEl!: HTMLSelectElement;
  /** Whether the server has a language model, as its status last said; null before it said. */
  private hasModel: boolean | null = null;
  /** The dropdown was put on search because the server has no model for the setting (or the choice): a model's return puts the setting back. */
  private fellBack = false;
  private running: AbortController | null = null;
  /** Owns what the Markdown renderer made for this conversation. */
  private rendered = new Component();
  /** The server's id of this conversation, from its last answer; null before the first. */
  private conversation: string | null = null;
  /** Counts the conversations of this view, so that an answer that lands after "New conversation" is not taken as part of the new one. */
  private generation = 0;
  /** When the user last stopped an answer (ms since the epoch). */
  private stoppedAt = 0;
  /** The questions of this conversation with their complete answers, for "Save as a note". */
  private turns: Turn[] = [];
  private saving = false;

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
    const save = header.createEl("button", {
      cls: "quire-save-conversation",
      text: "Save as a note",
      attr: { type: "button", title: "Propose a note of this conversation: the questions, the answers and their sources" },
    });
    save.addEventListener("click", () => void this.save());
    this.logEl = root.createDiv({ cls: "quire-ask-log" });
    const form = root.createDiv({ cls: "quire-ask-form" });
    this.inputEl = form.createEl("textarea", {
      cls: "quire-ask-input",
      placeholder: "Ask a question about your notes…",
      attr: { rows: 3, "aria-label": "Question" },
    });
    const row = form.createDiv({ cls: "quire-ask-row" });
    row.createSpan({ cls: "quire-hint", text: "Enter asks; shift+enter starts a new line. A question follows on from the answers above." });
    this.retrieverEl = row.createEl("select", { cls: "dropdown quire-ask-retriever", attr: { "aria-label": "How the question finds passages", title: RETRIEVER_TITLE } });
    for (const [value, label, tooltip] of RETRIEVERS) this.retrieverEl.createEl("option", { text: label, value, attr: { title: tooltip } });
    this.retrieverEl.addEventListener("change", () => (this.fellBack = false));
    this.registerEvent(this.host.events.on("quire:state", () => this.serverChanged()));
    this.serverChanged();
    this.resetRetriever();
    this.buttonEl = row.createEl("button", { cls: "mod-cta quire-ask-button", text: "Ask", attr: { type: "button" } });
    this.buttonEl.addEventListener("click", () => {
      if (this.running) this.stop();
      else void this.ask(this.inputEl.value);
    });
    this.inputEl.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        if (!this.running) void this.ask(this.inputEl.value);
      }
    });
    this.addChild(this.rendered);
  }

  override async onClose(): Promise<void> {
    this.running?.abort();
    this.contentEl.empty();
  }

  /** Starts a new conversation: the answers so far are dropped, and the next question is asked on its own. */
  clear(): void {
    if (this.running) {
      this.stop();
      this.running = null;
      this.setButton(false);
    }
    this.generation++;
    this.conversation = null;
    this.turns = [];
    this.resetRetriever();
    this.removeChild(this.rendered);
    this.rendered = this.addChild(new Component());
    this.logEl.empty();
  }

  /** The dropdown back on the setting (search when the setting needs a model the server does not have). */
  private resetRetriever(): void {
    const setting = this.host.settings.retriever || "hybrid";
    this.fellBack = !this.offered(setting);
    this.retrieverEl.value = this.fellBack ? "hybrid" : setting;
  }

  /** Whether the dropdown offers `retriever` now: tree descent and auto only when the server may have a model. */
  private offered(retriever: Retriever): boolean {
    return retriever === "hybrid" || this.hasModel !== false;
  }

  /** The server's status changed: tree descent and auto follow whether it has a language model. */
  private serverChanged(): void {
    const state = this.host.connectionState();
    // Offline or connecting (or a status without the field), nothing is said: what was last said stands.
    if ((state.kind !== "online" && state.kind !== "indexing") || state.status.llm === undefined) return;
    const hasModel = Boolean(state.status.llm);
    if (hasModel === this.hasModel) return;
    this.hasModel = hasModel;
    for (const option of Array.from(this.retrieverEl.options)) {
      const entry = RETRIEVERS.find(([value]) => value === option.value);
      if (!entry) continue;
      const offered = this.offered(entry[0]);
      option.disabled = !offered;
      option.title = offered ? entry[2] : NEEDS_MODEL;
    }
    this.retrieverEl.title = hasModel ? RETRIEVER_TITLE : `${RETRIEVER_TITLE}. Tree descent and auto need a language model on the server, and it has none.`;
    if (hasModel && this.fellBack) this.resetRetriever();
    else if (!this.offered(this.retriever())) {
      this.retrieverEl.value = "hybrid";
      this.fellBack = true;
    }
  }

  /** The retriever the dropdown shows. */
  private retriever(): Retriever {
    const value = this.retrieverEl.value;
    return value === "tree" || value === "auto" ? value : "hybrid";
  }

  private stop(): void {
    this.stoppedAt = Date.now();
    this.running?.abort();
  }

  /**
   * Asks `question` from elsewhere (another view's Ask button): at once, as if it were typed, or,
   * while an answer is still being written, put in the box to ask when that answer is complete.
   */
  async askQuestion(question: string): Promise<void> {
    if (this.running) {
      this.inputEl.value = question.trim();
      this.inputEl.focus();
      new Notice("An answer is still being written: the question is in the box, to ask when it is complete.");
      return;
    }
    await this.ask(question);
  }

  /** Asks `question`, showing the answer as it arrives; resolves when it is complete or stopped. */
  async ask(question: string): Promise<void> {
    question = question.trim();
    if (!question || this.running) return;
    this.inputEl.value = "";
    const turnEl = this.logEl.createDiv({ cls: "quire-turn" });
    turnEl.createDiv({ cls: "quire-question", text: question });
    const answerEl = turnEl.createDiv({ cls: "quire-answer" });
    const retriever = this.retriever();
    const els: AnswerEls = {
      meta: answerEl.createDiv({ cls: "quire-answer-meta", text: retriever === "tree" ? "Descending the vault's outline…" : "Retrieving passages…" }),
      warnings: answerEl.createEl("ul", { cls: "quire-warnings" }),
      body: answerEl.createDiv({ cls: "quire-answer-body is-streaming" }),
      answeredBy: answerEl.createDiv({ cls: "quire-answered-by" }),
      sources: answerEl.createEl("ul", { cls: "quire-sources" }),
    };
    const controller = new AbortController();
    const generation = this.generation;
    this.running = controller;
    this.setButton(true);
    let text = "";
    const onText = (piece: string) => {
      if (!text) els.meta.setText("Writing…");
      text += piece;
      els.body.setText(text);
      this.scrollToEnd();
    };
    try {
      let answer: Answer;
      try {
        answer = await this.send(question, retriever, els, onText, controller.signal);
      } catch (error) {
        if (!this.conversation || !(error instanceof QuireError) || error.status !== 404 || error.code !== "not_found") throw error;
        // The server no longer has the conversation: say so above this question, and ask it anew.
        this.conversation = null;
        turnEl.before(
          createDiv({
            cls: "quire-conversation-ended",
            text: "The conversation above has ended on the server (quire keeps one for an hour after its last answer, while it runs). This question starts a new one.",
          }),
        );
        answer = await this.send(question, retriever, els, onText, controller.signal);
      }
      if (generation !== this.generation) return;
      if (answer.conversation) this.conversation = answer.conversation;
      this.turns.push({ question, answer });
      await this.showAnswer(els, answer);
    } catch (error) {
      els.body.removeClass("is-streaming");
      if (isAbort(error)) {
        // The server leaves a stopped turn out of the conversation.
        els.meta.setText(text ? "Stopped. The answer above is incomplete and is left out of the conversation." : "Stopped.");
      } else {
        els.meta.setText(askProblem(error));
        answerEl.addClass("is-error");
      }
    } finally {
      if (this.running === controller) {
        this.running = null;
        this.setButton(false);
      }
    }
  }

  /** One request for the answer, in this conversation; sent again while a stopped answer still holds the server. */
  private async send(question: string, retriever: Retriever, els: AnswerEls, onText: (text: string) => void, signal: AbortSignal): Promise<Answer> {
    for (;;) {
      try {
        const { searchMode: mode, expandQuestions: expand } = this.host.settings;
        return await this.host.client().ask(question, { mode, retriever, conversation: this.conversation, expand }, onText, signal);
      } catch (error) {
        const settling = Date.now() - this.stoppedAt < STOPPED_SETTLE_MS;
        const busy = error instanceof QuireError && (error.code === "busy" || error.code === "conversation_busy");
        if (!busy || !settling) throw error;
        els.meta.setText("Waiting for the stopped answer to end…");
        await new Promise((resolve) => window.setTimeout(resolve, BUSY_RETRY_MS));
        if (signal.aborted) throw abortError();
      }
    }
  }

  /**
   * Proposes a note of the conversation so far (a question still being answered is left out)
   * and opens it in the proposals pane; resolves when that is done or refused.
   */
  async save(): Promise<void> {
    if (this.saving) return;
    if (!this.turns.length) {
      new Notice("Ask a question first: there is nothing to save yet.");
      return;
    }
    this.saving = true;
    try {
      const { change, left } = conversationProposal(this.turns, this.host.settings.conversationFolder, new Date(), (path) => this.app.vault.getFileByPath(path) !== null);
      const proposal = await this.host.client().propose(change);
      if (left) new Notice(`The conversation is too long for one note: the first ${left === 1 ? "question is" : `${left} questions are`} left out.`);
      await this.host.reviewNewProposals([proposal.id], proposal.id);
    } catch (error) {
      new Notice(saveProblem(error), 12_000);
    } finally {
      this.saving = false;
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
    const by = answeredBy(answer.retrieval);
    if (by) {
      els.answeredBy.setText(by.text);
      if (by.steps) els.answeredBy.setAttr("title", by.steps);
    }
    // The server also lists the retrieval's notes among the warnings: the line under the answer says them.
    const said = new Set(by ? (answer.retrieval?.notes ?? []) : []);
    for (const warning of answerWarnings(answer.warnings.filter((w) => !said.has(w)), answer.invalid_citations)) {
      els.warnings.createEl("li", { cls: "quire-warning", text: warning });
    }
    const cards = renderSourceCards(els.sources, answer.sources, (card) => void openSourceCard(this.host, card));
    els.body.empty();
    els.body.removeClass("is-streaming");
    await MarkdownRenderer.render(this.app, safeMarkdown(answer.answer), els.body, "", this.rendered);
    openInternalLinks(els.body, (linktext) => void this.app.workspace.openLinkText(linktext, "", false));
    // Only a model's answer cites: an extractive answer quotes notes, whose `[S1]` is their own text.
    const citable = new Set(answer.kind === "generated" ? answer.citations.map((c) => c.id) : []);
    linkCitations(els.body, citable, (id) => {
      const card = cards.get(id);
      const source = answer.sources.find((s) => s.id === id);
      card?.addClass("is-flashing");
      window.setTimeout(() => card?.removeClass("is-flashing"), 1200);
      if (source) void openSourceCard(this.host, source);
    });
    this.scrollToEnd();
  }
}

function saveProblem(error: unknown): string {
  if (error instanceof QuireError && error.code === "unreachable") return "Not saved: quire is not reachable. It reconnects by itself; see the status bar.";
  return `Not saved: ${error instanceof Error ? error.message : String(error)}`;
}

function askProblem(error: unknown): string {
  if (!(error instanceof QuireError)) return String(error);
  switch (error.code) {
    case "unreachable":
      return `${error.message}. It reconnects by itself; see the status bar.`;
    case "conversation_busy":
      return "The previous question of this conversation is still being answered; ask again when it has finished.";
    case "conversation_full":
      return "This conversation has had as many turns as it may: start a new conversation.";
    case "busy":
      return "quire is writing other answers; ask again when one has finished.";
    case "llm_error":
      return `The language model failed: ${error.message}`;
    default:
      return error.message;
  }
}
