/**
 * "Reflect on a week": the server reads the daily notes of an ISO week and writes what happened,
 * the themes that recur, the open loops and a plan (`POST /api/reflect`). The reflection streams
 * in as plain text, then is rendered as Markdown; its `[[wikilinks]]` and the day cards open the
 * daily notes. Without a language model the server assembles it from the notes' own points, and
 * says so.
 */
import { Component, ItemView, MarkdownRenderer, setIcon, type WorkspaceLeaf } from "obsidian";
import { isAbort, QuireError, type AnswerKind, type ReflectedDay, type Reflection } from "./api";
import { answerWarnings, openInternalLinks, safeMarkdown } from "./answer";
import type { QuireHost } from "./host";
import { isWeek, shiftWeek, weekDays, weekdayOf, weekOf } from "./weeks";

export const REFLECT_VIEW = "quire-reflect";

/** The elements of one reflection, filled as it arrives. */
interface ReflectionEls {
  meta: HTMLElement;
  warnings: HTMLElement;
  body: HTMLElement;
  days: HTMLElement;
}

/** What kind of reflection it is, in words. */
export function reflectionLabel(kind: AnswerKind, model: string | null | undefined): string {
  switch (kind) {
    case "generated":
      return `Written by ${model ?? "the language model"} from your daily notes`;
    case "extractive":
      return "Extractive: your daily notes' own points (no language model is configured)";
    case "nothing_found":
      return "No daily notes in these days";
  }
}

/** The line under the week: its days, and how many daily notes the reflection read. */
function rangeLine(range: { from: string; to: string }, days?: number): string {
  const span = `${range.from} – ${range.to}`;
  if (days === undefined) return span;
  return `${span} · ${days} ${days === 1 ? "daily note" : "daily notes"}`;
}

export class ReflectView extends ItemView {
  private week = weekOf();
  private running: AbortController | null = null;
  /** Owns what the Markdown renderer made for the reflection shown. */
  private rendered = new Component();
  private weekEl!: HTMLInputElement;
  private buttonEl!: HTMLButtonElement;
  private rangeEl!: HTMLElement;
  private resultEl!: HTMLElement;
  /** Settles when the last reflection asked for is complete, stopped or failed. */
  finished: Promise<void> = Promise.resolve();

  constructor(
    leaf: WorkspaceLeaf,
    private readonly host: QuireHost,
  ) {
    super(leaf);
  }

  override getViewType(): string {
    return REFLECT_VIEW;
  }

  override getDisplayText(): string {
    return "Reflect on a week";
  }

  override getIcon(): string {
    return "calendar-range";
  }

  override async onOpen(): Promise<void> {
    const root = this.contentEl;
    root.empty();
    root.addClass("quire-reflect-view");
    root.createDiv({ cls: "quire-pane-header", text: "Reflect on a week" });
    const picker = root.createDiv({ cls: "quire-week-picker" });
    const previous = picker.createEl("button", { cls: "clickable-icon quire-week-previous", attr: { type: "button", "aria-label": "Previous week" } });
    setIcon(previous, "chevron-left");
    this.weekEl = picker.createEl("input", { type: "week", cls: "quire-week-input", attr: { "aria-label": "Week" } });
    const next = picker.createEl("button", { cls: "clickable-icon quire-week-next", attr: { type: "button", "aria-label": "Next week" } });
    setIcon(next, "chevron-right");
    this.buttonEl = picker.createEl("button", { cls: "mod-cta quire-reflect-button", text: "Reflect", attr: { type: "button" } });
    this.rangeEl = root.createDiv({ cls: "quire-pane-info quire-week-range" });
    this.resultEl = root.createDiv({ cls: "quire-reflection" });

    previous.addEventListener("click", () => this.choose(shiftWeek(this.week, -1)));
    next.addEventListener("click", () => this.choose(shiftWeek(this.week, 1)));
    this.weekEl.addEventListener("change", () => {
      if (isWeek(this.weekEl.value)) this.choose(this.weekEl.value);
    });
    this.buttonEl.addEventListener("click", () => {
      if (this.running) this.running.abort();
      else void this.reflect(this.week);
    });
    this.addChild(this.rendered);
    this.choose(this.week);
  }

  override async onClose(): Promise<void> {
    this.running?.abort();
    this.contentEl.empty();
  }

  /** Picks a week without reflecting on it yet. */
  private choose(week: string): void {
    this.running?.abort();
    this.week = week;
    this.weekEl.value = week;
    this.rangeEl.setText(rangeLine(weekDays(week)));
    this.clearResult();
    this.resultEl.createDiv({ cls: "quire-hint", text: "Reflect reads the daily notes of this week and writes what happened, recurring themes, open loops and a plan." });
  }

  private clearResult(): void {
    this.removeChild(this.rendered);
    this.rendered = this.addChild(new Component());
    this.resultEl.empty();
  }

  /** Reflects on `week` (`2026-W48`), stopping a reflection still running; resolves when it ends. */
  reflect(week: string): Promise<void> {
    this.choose(week);
    this.finished = this.run(week);
    return this.finished;
  }

  private async run(week: string): Promise<void> {
    this.clearResult();
    const els: ReflectionEls = {
      meta: this.resultEl.createDiv({ cls: "quire-answer-meta", text: "Reading the daily notes…" }),
      warnings: this.resultEl.createEl("ul", { cls: "quire-warnings" }),
      body: this.resultEl.createDiv({ cls: "quire-answer-body quire-reflection-body is-streaming" }),
      days: this.resultEl.createDiv({ cls: "quire-days" }),
    };
    const controller = new AbortController();
    this.running = controller;
    this.setButton(true);
    let text = "";
    try {
      const reflection = await this.host.client().reflect(
        { week },
        (piece) => {
          if (!text) els.meta.setText("Writing…");
          text += piece;
          els.body.setText(text);
        },
        controller.signal,
      );
      await this.show(els, reflection);
    } catch (error) {
      els.body.removeClass("is-streaming");
      if (isAbort(error)) {
        els.meta.setText(text ? "Stopped. The reflection above is incomplete." : "Stopped.");
      } else {
        els.meta.setText(reflectProblem(error));
        els.meta.addClass("is-error");
      }
    } finally {
      if (this.running === controller) {
        this.running = null;
        this.setButton(false);
      }
    }
  }

  private setButton(running: boolean): void {
    this.buttonEl.setText(running ? "Stop" : "Reflect");
    this.buttonEl.toggleClass("mod-cta", !running);
    this.buttonEl.toggleClass("mod-warning", running);
  }

  private async show(els: ReflectionEls, reflection: Reflection): Promise<void> {
    this.rangeEl.setText(rangeLine(reflection.range, reflection.days.length));
    els.meta.setText(reflectionLabel(reflection.kind, reflection.model));
    for (const warning of answerWarnings(reflection.warnings, reflection.invalid_citations)) {
      els.warnings.createEl("li", { cls: "quire-warning", text: warning });
    }
    els.body.empty();
    els.body.removeClass("is-streaming");
    await MarkdownRenderer.render(this.app, safeMarkdown(reflection.reflection), els.body, "", this.rendered);
    openInternalLinks(els.body, (linktext) => void this.app.workspace.openLinkText(linktext, "", false));
    if (reflection.days.length) {
      els.days.createDiv({ cls: "quire-days-title", text: "Daily notes" });
      renderDayCards(els.days.createEl("ul", { cls: "quire-sources" }), reflection.days, reflection.kind === "generated", (day) => void this.host.openNote(day.path));
    }
  }
}

/**
 * A card for each day; a card opens its daily note. In a written reflection the days it cites
 * are marked, and the others are shown fainter (an extractive one quotes every day).
 */
export function renderDayCards(list: HTMLElement, days: readonly ReflectedDay[], markCited: boolean, open: (day: ReflectedDay) => void): void {
  list.empty();
  for (const day of days) {
    const cls = ["quire-source", "quire-day"];
    if (markCited) cls.push(day.cited ? "is-cited" : "is-uncited");
    const button = list.createEl("li", { cls }).createEl("button", { cls: "quire-source-card quire-day-card", attr: { type: "button", "data-path": day.path } });
    const head = button.createDiv({ cls: "quire-source-head" });
    head.createSpan({ cls: "quire-source-title", text: `${weekdayOf(day.date)} ${day.date}` });
    if (markCited && day.cited) head.createSpan({ cls: "quire-tag", text: "cited" });
    const where = button.createDiv({ cls: "quire-lines" });
    setIcon(where.createSpan({ cls: "quire-icon" }), "calendar");
    where.appendText(day.path);
    button.addEventListener("click", () => open(day));
  }
}

function reflectProblem(error: unknown): string {
  if (!(error instanceof QuireError)) return String(error);
  switch (error.code) {
    case "unreachable":
      return `${error.message}. It reconnects by itself; see the status bar.`;
    case "busy":
      return "quire is writing other answers; reflect again when one has finished.";
    case "llm_error":
      return `The language model failed: ${error.message}`;
    default:
      return error.message;
  }
}
