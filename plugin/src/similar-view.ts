/**
 * The related-notes pane: for the note in the editor, the notes similar in meaning, the notes
 * that link to it and those it links to, each listed once with all its relations. It follows the
 * active note and refreshes when the index changes.
 *
 * Similar notes are listed most similar first, without their cosine (in the tooltip of their
 * "similar" badge): the notes of one vault are all close, so the number says nothing by itself. A
 * note that looks like a copy of this one is listed first, marked "near copy" with the share of
 * text the two have in common, and offers to compare them: it opens to the right of the note, as
 * Obsidian's "Open to the right" does.
 *
 * With "Follow the paragraph" on (a switch in the pane, saved in the settings), it shows instead
 * the notes a search finds for the paragraph at the cursor: once typing has paused for
 * FOLLOW_DELAY_MS (one request per pause, never one per keystroke), the note itself left out.
 */
import { type Editor, ItemView, MarkdownView, Notice, type TFile, type WorkspaceLeaf } from "obsidian";
import { QuireError, type Related } from "./api";
import type { QuireHost } from "./host";
import { paragraphAt, paragraphQuery, paragraphRows, type ParagraphRow } from "./paragraph";
import { mergeRelated, nearCopyLabel, RELATION_LABELS, sharePercent, similarTooltip, type RelatedRow } from "./related";

export const SIMILAR_VIEW = "quire-similar";

/** How many notes similar in meaning the pane asks for. */
const SIMILAR_K = 10;
/** How many notes a paragraph's search asks for. */
const PARAGRAPH_K = 8;
/** How long typing pauses before the paragraph at the cursor is searched. */
export const FOLLOW_DELAY_MS = 1500;

export class SimilarView extends ItemView {
  private path: string | null = null;
  private sequence = 0;
  /** The last load failed (the server was down, say): load again when it is back. */
  private failed = false;
  private headerEl!: HTMLElement;
  private infoEl!: HTMLElement;
  private listEl!: HTMLElement;
  private followEl!: HTMLInputElement;
  /** The pending search of the paragraph at the cursor, waiting for typing to pause. */
  private followTimer: number | null = null;
  /** The last paragraph query sent: the same paragraph is not searched again. */
  private lastQuery: string | null = null;

  constructor(
    leaf: WorkspaceLeaf,
    private readonly host: QuireHost,
  ) {
    super(leaf);
  }

  override getViewType(): string {
    return SIMILAR_VIEW;
  }

  override getDisplayText(): string {
    return "Related notes";
  }

  override getIcon(): string {
    return "network";
  }

  override async onOpen(): Promise<void> {
    const root = this.contentEl;
    root.empty();
    root.addClass("quire-similar-view");
    this.headerEl = root.createDiv({ cls: "quire-pane-header" });
    const follow = root.createEl("label", { cls: "quire-follow-paragraph" });
    this.followEl = follow.createEl("input", { attr: { type: "checkbox" } });
    this.followEl.checked = this.host.settings.followParagraph;
    follow.appendText(" Follow the paragraph at the cursor");
    this.followEl.addEventListener("change", () => void this.setFollowing(this.followEl.checked));
    this.infoEl = root.createDiv({ cls: "quire-pane-info" });
    this.listEl = root.createEl("ul", { cls: "quire-related" });
    this.registerEvent(this.app.workspace.on("file-open", (file) => void this.show(file)));
    this.registerEvent(
      this.app.workspace.on("editor-change", (editor, info) => {
        if (this.host.settings.followParagraph && info.file?.extension === "md") this.followSoon(editor, info.file.path);
      }),
    );
    this.registerEvent(
      // The server has read the vault's links again when it reports a sync: one request sees them.
      this.host.events.on("quire:index", () => {
        if (this.path && !this.host.settings.followParagraph) void this.fetchRelated(this.path, true);
      }),
    );
    this.registerEvent(
      this.host.events.on("quire:state", () => {
        if (this.failed && this.path && !this.host.settings.followParagraph && this.host.connectionState().kind === "online") void this.fetchRelated(this.path, true);
      }),
    );
    await this.show(this.app.workspace.getActiveFile());
  }

  override async onClose(): Promise<void> {
    this.sequence++;
    this.cancelFollow();
    this.contentEl.empty();
  }

  /** Turns following the paragraph on or off, saves it, and shows what the pane shows then. */
  private async setFollowing(on: boolean): Promise<void> {
    await this.host.updateSettings({ followParagraph: on });
    this.cancelFollow();
    this.lastQuery = null;
    this.sequence++;
    if (!this.path) return;
    if (!on) {
      await this.fetchRelated(this.path, false);
      return;
    }
    this.listEl.empty();
    this.infoEl.setText("When typing pauses, the notes about the paragraph you are writing appear here.");
    const editor = this.editorOf(this.path);
    if (editor) this.followSoon(editor, this.path);
  }

  /** The editor of the note at `path`, if it is open. */
  private editorOf(path: string): Editor | null {
    const view = this.leafOf(path)?.view;
    return view instanceof MarkdownView ? view.editor : null;
  }

  /** The leaf where the note at `path` is open, if it is. */
  private leafOf(path: string): WorkspaceLeaf | null {
    for (const leaf of this.app.workspace.getLeavesOfType("markdown")) {
      if (leaf.view instanceof MarkdownView && leaf.view.file?.path === path) return leaf;
    }
    return null;
  }

  /** Searches the paragraph at the cursor once typing pauses: each edit starts the wait again. */
  private followSoon(editor: Editor, path: string): void {
    this.cancelFollow();
    this.followTimer = window.setTimeout(() => {
      this.followTimer = null;
      void this.followParagraph(editor, path);
    }, FOLLOW_DELAY_MS);
  }

  private cancelFollow(): void {
    if (this.followTimer !== null) window.clearTimeout(this.followTimer);
    this.followTimer = null;
  }

  private async followParagraph(editor: Editor, path: string): Promise<void> {
    const query = paragraphQuery(paragraphAt((line) => editor.getLine(line), editor.lineCount(), editor.getCursor().line));
    if (path === this.path && query === this.lastQuery) return;
    this.path = path;
    this.headerEl.setText(path.replace(/\.md$/i, ""));
    const sequence = ++this.sequence;
    if (!query) {
      this.lastQuery = null;
      this.listEl.empty();
      this.infoEl.setText("Write a paragraph to see the notes about it.");
      return;
    }
    this.lastQuery = query;
    let rows: ParagraphRow[];
    try {
      rows = paragraphRows(await this.host.client().search(query, PARAGRAPH_K, this.host.settings.searchMode), path);
    } catch (error) {
      if (sequence !== this.sequence) return;
      this.lastQuery = null;
      this.listEl.empty();
      this.infoEl.setText(problem(error));
      return;
    }
    if (sequence !== this.sequence) return;
    this.listEl.empty();
    this.infoEl.setText(rows.length ? "About the paragraph at the cursor:" : "No note about the paragraph at the cursor.");
    for (const row of rows) {
      const item = this.rowEl(row.path, row.title);
      // The search's score orders the rows; shown, it would read as a measure it is not.
      item.createDiv({ cls: "quire-badges" }).createSpan({
        cls: "quire-tag quire-rel-paragraph",
        text: "paragraph",
        attr: { title: `Search score ${row.score.toFixed(2)}. It only orders this list.` },
      });
    }
  }

  /** A row of the list: the note's title, which opens it. */
  private rowEl(path: string, title: string): HTMLElement {
    const item = this.listEl.createEl("li", { cls: "quire-related-row", attr: { "data-path": path } });
    const link = item.createEl("a", { cls: "quire-related-title", text: title, href: "#", attr: { title: path } });
    link.addEventListener("click", (event) => {
      event.preventDefault();
      void this.host.openNote(path);
    });
    return item;
  }

  private async show(file: TFile | null): Promise<void> {
    // Another kind of file (a canvas, a PDF) or none: keep showing the last note.
    if (!file || file.extension !== "md") {
      if (!this.path) {
        this.headerEl.setText("No note open");
        this.infoEl.setText("Open a note to see the notes related to it.");
      }
      return;
    }
    if (file.path === this.path) return;
    if (this.host.settings.followParagraph) {
      this.cancelFollow();
      this.sequence++;
      this.path = file.path;
      this.lastQuery = null;
      this.headerEl.setText(file.basename);
      this.listEl.empty();
      this.infoEl.setText("When typing pauses, the notes about the paragraph you are writing appear here.");
      return;
    }
    await this.fetchRelated(file.path, false);
  }

  private async fetchRelated(path: string, quiet: boolean): Promise<void> {
    this.path = path;
    const sequence = ++this.sequence;
    this.headerEl.setText(path.replace(/\.md$/i, ""));
    if (!quiet) {
      this.infoEl.setText("Loading…");
      this.listEl.empty();
    }
    let related: Related;
    try {
      related = await this.host.client().similar(path, SIMILAR_K);
    } catch (error) {
      if (sequence !== this.sequence) return;
      this.failed = true;
      this.listEl.empty();
      this.infoEl.setText(problem(error));
      return;
    }
    if (sequence !== this.sequence) return;
    this.failed = false;
    this.headerEl.setText(related.title || path);
    this.render(mergeRelated(related), related.similar_unavailable);
  }

  private render(rows: RelatedRow[], unavailable: string | undefined): void {
    this.listEl.empty();
    const info: string[] = [];
    if (unavailable) info.push("Notes similar in meaning need the embedding model on the server; links are shown.");
    if (!rows.length) info.push("No related note.");
    this.infoEl.setText(info.join(" "));
    if (unavailable) this.infoEl.setAttr("title", unavailable);
    else this.infoEl.removeAttribute("title");
    for (const row of rows) {
      const item = this.rowEl(row.path, row.title);
      const badges = item.createDiv({ cls: "quire-badges" });
      if (row.overlap !== undefined) {
        item.addClass("quire-near-copy");
        // A copy often has the note's title: its path tells the two apart.
        item.createDiv({ cls: "quire-related-path", text: row.path.replace(/\.md$/i, "") });
        badges.createSpan({
          cls: "quire-tag quire-rel-near-copy",
          text: nearCopyLabel(row.overlap),
          attr: { title: `The two notes have ${sharePercent(row.overlap)}% of their own text in common (template lines left out).` },
        });
      }
      for (const relation of row.relations) {
        const badge = badges.createSpan({ cls: `quire-tag quire-rel-${relation}`, text: RELATION_LABELS[relation] });
        if (relation === "similar" && row.score !== undefined) badge.setAttr("title", similarTooltip(row.score));
      }
      if (row.overlap !== undefined) {
        const original = this.path;
        const compare = badges.createEl("button", {
          cls: "quire-compare",
          text: "Compare",
          attr: { title: "Open it to the right of this note, to compare the two side by side" },
        });
        compare.addEventListener("click", () => {
          if (original) void this.compare(original, row.path);
        });
      }
    }
  }

  /**
   * Shows a near copy beside the note it copies: the note in its leaf (opened if it is not), the
   * copy in a new leaf split off to its right, as "Open to the right" does. A copy already open
   * is brought forward instead of opened twice.
   */
  private async compare(originalPath: string, copyPath: string): Promise<void> {
    const original = this.app.vault.getFileByPath(originalPath);
    const copy = this.app.vault.getFileByPath(copyPath);
    if (!original || !copy) {
      new Notice(`${original ? copyPath : originalPath} is not in this vault. The note was moved or deleted since the last sync.`);
      return;
    }
    const workspace = this.app.workspace;
    const open = this.leafOf(copyPath);
    if (open) {
      await workspace.revealLeaf(open);
      return;
    }
    let left = this.leafOf(originalPath);
    if (!left) {
      left = workspace.getLeaf(false);
      await left.openFile(original);
    }
    await workspace.createLeafBySplit(left, "vertical").openFile(copy, { active: true });
  }
}

function problem(error: unknown): string {
  if (error instanceof QuireError) {
    if (error.code === "unreachable") return "quire is not reachable. It reconnects by itself; see the status bar.";
    if (error.code === "note_not_found" || error.code === "note_not_indexed") {
      return `${error.message}. A new note is indexed a moment after it is saved.`;
    }
    return error.message;
  }
  return String(error);
}
