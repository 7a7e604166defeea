/**
 * The related-notes pane: for the note in the editor, the notes similar in meaning, the notes
 * that link to it and those it links to, each listed once with all its relations. It follows the
 * active note and refreshes when the index changes.
 */
import { ItemView, type TFile, type WorkspaceLeaf } from "obsidian";
import { QuireError, type Related } from "./api";
import type { QuireHost } from "./host";
import { mergeRelated, RELATION_LABELS, type RelatedRow } from "./related";

export const SIMILAR_VIEW = "quire-similar";

/** How many notes similar in meaning the pane asks for. */
const SIMILAR_K = 10;

export class SimilarView extends ItemView {
  private path: string | null = null;
  private sequence = 0;
  /** The last load failed (the server was down, say): load again when it is back. */
  private failed = false;
  private headerEl!: HTMLElement;
  private infoEl!: HTMLElement;
  private listEl!: HTMLElement;

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
    this.infoEl = root.createDiv({ cls: "quire-pane-info" });
    this.listEl = root.createEl("ul", { cls: "quire-related" });
    this.registerEvent(this.app.workspace.on("file-open", (file) => void this.show(file)));
    this.registerEvent(
      // The server has read the vault's links again when it reports a sync: one request sees them.
      this.host.events.on("quire:index", () => {
        if (this.path) void this.fetchRelated(this.path, true);
      }),
    );
    this.registerEvent(
      this.host.events.on("quire:state", () => {
        if (this.failed && this.path && this.host.connectionState().kind === "online") void this.fetchRelated(this.path, true);
      }),
    );
    await this.show(this.app.workspace.getActiveFile());
  }

  override async onClose(): Promise<void> {
    this.sequence++;
    this.contentEl.empty();
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
      const item = this.listEl.createEl("li", { cls: "quire-related-row", attr: { "data-path": row.path } });
      const title = item.createEl("a", { cls: "quire-related-title", text: row.title, href: "#", attr: { title: row.path } });
      title.addEventListener("click", (event) => {
        event.preventDefault();
        void this.host.openNote(row.path);
      });
      const badges = item.createDiv({ cls: "quire-badges" });
      for (const relation of row.relations) {
        const label = relation === "similar" && row.score !== undefined ? `${RELATION_LABELS.similar} ${row.score.toFixed(2)}` : RELATION_LABELS[relation];
        badges.createSpan({ cls: `quire-tag quire-rel-${relation}`, text: label });
      }
    }
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
