/**
 * Search as you type: the results of `/api/search`, grouped by note, each note with its best
 * sections (heading path, lines, snippet with the matched words marked; a PDF's by its page).
 * Choosing a section opens its note at its lines (a PDF at its page); ↑/↓ move between
 * sections, Enter opens, Esc closes.
 */
import { Modal } from "obsidian";
import { QuireError, type NoteHit, type SearchResults, type Section } from "./api";
import { passageHeadings } from "./answer";
import type { QuireHost } from "./host";
import { openPdfPage } from "./open-note";

/** How long typing must pause before a search is sent. */
export const SEARCH_DELAY_MS = 200;

interface Choice {
  el: HTMLElement;
  note: NoteHit;
  section: Section | null;
}

/** A snippet with its matched words in `<mark>`; the highlights are byte ranges of the UTF-8 text. */
export function renderSnippet(parent: HTMLElement, snippet: string, highlights: readonly [number, number][]): HTMLElement {
  const el = parent.createDiv({ cls: "quire-snippet" });
  const bytes = new TextEncoder().encode(snippet);
  const decoder = new TextDecoder();
  // Newlines become spaces (one byte each, so the ranges still hold): a snippet is one paragraph here.
  const text = (a: number, b: number) => decoder.decode(bytes.subarray(a, b)).replace(/\s*\n\s*/g, " ");
  let at = 0;
  for (const [start, end] of [...highlights].sort((x, y) => x[0] - y[0])) {
    if (start < at || end > bytes.length || end <= start) continue;
    el.appendText(text(at, start));
    el.createEl("mark", { text: text(start, end) });
    at = end;
  }
  el.appendText(text(at, bytes.length));
  return el;
}

/** What to say when a search fails: the server's message, with what to do about it. */
export function searchProblem(error: unknown): string {
  if (!(error instanceof QuireError)) return String(error);
  switch (error.code) {
    case "unreachable":
      return `${error.message}. Start quire serve for this vault, or turn on "Start the server automatically" in the plugin's settings.`;
    case "no_index":
    case "not_ready":
      return `${error.message}. The server builds the index when it starts; try again in a moment.`;
    case "no_embeddings":
    case "embedding_space_mismatch":
      return `${error.message}. Choose "Words only (BM25)" as the search mode in the plugin's settings.`;
    default:
      return error.message;
  }
}

export class SearchModal extends Modal {
  private inputEl!: HTMLInputElement;
  private infoEl!: HTMLElement;
  private listEl!: HTMLElement;
  private choices: Choice[] = [];
  private selected = -1;
  private timer: number | null = null;
  /** Counts searches, so that an answer that arrives late is dropped. */
  private sequence = 0;

  constructor(private readonly host: QuireHost) {
    super(host.app);
  }

  override onOpen(): void {
    this.modalEl.addClass("quire-search-modal");
    this.setTitle("Search notes");
    const { contentEl } = this;
    contentEl.empty();
    this.inputEl = contentEl.createEl("input", {
      cls: "quire-search-input",
      type: "search",
      placeholder: "Search your notes…",
      attr: { "aria-label": "Search your notes", spellcheck: "false" },
    });
    this.infoEl = contentEl.createDiv({ cls: "quire-search-info" });
    this.listEl = contentEl.createEl("ul", { cls: "quire-results", attr: { role: "listbox" } });
    this.inputEl.addEventListener("input", () => this.schedule());
    this.inputEl.addEventListener("keydown", (event) => this.onKey(event));
    this.inputEl.focus();
  }

  override onClose(): void {
    if (this.timer !== null) window.clearTimeout(this.timer);
    this.timer = null;
    this.sequence++;
    this.contentEl.empty();
  }

  private schedule(): void {
    if (this.timer !== null) window.clearTimeout(this.timer);
    this.timer = window.setTimeout(() => {
      this.timer = null;
      void this.search();
    }, SEARCH_DELAY_MS);
  }

  private async search(): Promise<void> {
    const query = this.inputEl.value.trim();
    const sequence = ++this.sequence;
    if (!query) {
      this.show(null);
      this.infoEl.setText("");
      return;
    }
    this.infoEl.setText("Searching…");
    try {
      const { settings } = this.host;
      const results = await this.host.client().search(query, settings.searchLimit, settings.searchMode);
      if (sequence === this.sequence) this.show(results);
    } catch (error) {
      if (sequence !== this.sequence) return;
      this.show(null);
      this.infoEl.setText(searchProblem(error));
      this.infoEl.addClass("is-error");
    }
  }

  private show(results: SearchResults | null): void {
    this.listEl.empty();
    this.infoEl.removeClass("is-error");
    this.choices = [];
    this.selected = -1;
    if (!results) return;
    this.infoEl.setText(
      results.results.length
        ? `${results.results.length} ${results.results.length === 1 ? "note" : "notes"} · ${results.mode} · generation ${results.generation}`
        : "No note matched. Try other words, or another search mode.",
    );
    for (const note of results.results) {
      const item = this.listEl.createEl("li", { cls: "quire-result", attr: { "data-path": note.path } });
      const head = item.createDiv({ cls: "quire-result-head" });
      head.createSpan({ cls: "quire-result-title", text: note.title || note.path });
      head.createSpan({ cls: "quire-result-path", text: note.path });
      this.addChoice(head, note, null);
      const sections = item.createEl("ul", { cls: "quire-sections" });
      for (const section of note.sections) {
        const row = sections.createEl("li", { cls: "quire-section", attr: { role: "option" } });
        const where = row.createDiv({ cls: "quire-section-head" });
        const headings = passageHeadings(section.heading_path, section.page);
        if (headings !== null) where.createSpan({ cls: "quire-heading-path", text: headings });
        where.createSpan({ cls: "quire-lines", text: section.page ? `page ${section.page}` : `L${section.start_line}–${section.end_line}` });
        renderSnippet(row, section.snippet, section.highlights);
        this.addChoice(row, note, section);
      }
    }
    if (this.choices.length) this.select(this.choices.findIndex((c) => c.section !== null));
  }

  private addChoice(el: HTMLElement, note: NoteHit, section: Section | null): void {
    const index = this.choices.length;
    this.choices.push({ el, note, section });
    el.addClass("quire-choice");
    el.addEventListener("click", () => void this.choose(index));
    el.addEventListener("mousemove", () => this.select(index, false));
  }

  private select(index: number, scroll = true): void {
    if (!this.choices.length) return;
    const count = this.choices.length;
    this.selected = ((index % count) + count) % count;
    this.choices.forEach((choice, i) => choice.el.toggleClass("is-selected", i === this.selected));
    const chosen = this.choices[this.selected];
    if (scroll && chosen && typeof chosen.el.scrollIntoView === "function") chosen.el.scrollIntoView({ block: "nearest" });
  }

  private onKey(event: KeyboardEvent): void {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      this.select(this.selected + (event.key === "ArrowDown" ? 1 : -1));
    } else if (event.key === "Enter") {
      event.preventDefault();
      if (this.timer !== null) {
        // Enter before the pause: search now, and open the best section when it arrives.
        window.clearTimeout(this.timer);
        this.timer = null;
        void this.search().then(() => this.choose(this.selected));
      } else {
        void this.choose(this.selected);
      }
    }
  }

  private async choose(index: number): Promise<void> {
    const choice = this.choices[index];
    if (!choice) return;
    this.close();
    const { note, section } = choice;
    const target = section ?? note.sections[0];
    if (target?.page) await openPdfPage(this.app, note.path, target.page);
    else await this.host.openNote(note.path, target ? { start: target.start_line, end: target.end_line } : undefined);
  }
}
