/**
 * "Review proposals": every write quire makes is a proposal, and this pane is where the user
 * decides. It lists the pending proposals (title, who made it, how old, the files, lines added
 * and removed); one opens onto its diff, file by file (added and removed lines coloured, long
 * unchanged runs folded, a new note shown whole, a rename said as one), with the notes it was
 * made from as links, and Apply and Reject.
 *
 * Apply is the server's (`POST /api/proposals/{id}/apply`, the only request that writes into the
 * vault). Open editors of the files are saved first and show the new text after (see
 * `editors.ts`); a note that changed since the proposal was made is refused by name, and
 * nothing is written. A proposal whose only change is a canvas (the vault map) opens it once
 * applied.
 */
import { ItemView, Notice, type WorkspaceLeaf } from "obsidian";
import { QuireError, type FileChange, type Proposal, type ProposalSummary } from "./api";
import { type DiffRow, fileRows, foldUnchanged, parseUnifiedDiff } from "./diff-view";
import { saveEditors, showTextOnDisk } from "./editors";
import type { ConnectionState } from "./connection";
import type { QuireHost } from "./host";
import { openWrittenFile } from "./open-note";
import { changedFile, changeLabel, countLabel, filesLabel, openAfterApply, originLabel, proposalAge, remakeAdvice, sourceCandidates } from "./proposals";

export const PROPOSALS_VIEW = "quire-proposals";

/** How long a notice about a refused apply stays up. */
const PROBLEM_NOTICE_MS = 12_000;

export class ProposalsView extends ItemView {
  private headerEl!: HTMLElement;
  private infoEl!: HTMLElement;
  private unreadableEl!: HTMLElement;
  private listEl!: HTMLElement;
  private detailEl!: HTMLElement;
  private sequence = 0;
  private deciding = false;

  constructor(
    leaf: WorkspaceLeaf,
    private readonly host: QuireHost,
  ) {
    super(leaf);
  }

  override getViewType(): string {
    return PROPOSALS_VIEW;
  }

  override getDisplayText(): string {
    return "Proposals";
  }

  override getIcon(): string {
    return "file-diff";
  }

  override async onOpen(): Promise<void> {
    const root = this.contentEl;
    root.empty();
    root.addClass("quire-proposals-view");
    this.headerEl = root.createDiv({ cls: "quire-pane-header" });
    this.infoEl = root.createDiv({ cls: "quire-pane-info" });
    this.unreadableEl = root.createDiv({ cls: "quire-pane-info quire-proposals-unreadable is-error" });
    this.listEl = root.createEl("ul", { cls: "quire-proposals" });
    this.detailEl = root.createDiv({ cls: "quire-proposal-detail" });
    this.registerEvent(this.host.events.on("quire:proposals", () => this.renderList()));
    this.registerEvent(this.host.events.on("quire:state", () => this.renderList()));
    this.renderList();
    await this.host.checkProposals();
  }

  override async onClose(): Promise<void> {
    this.sequence++;
    this.contentEl.empty();
  }

  /** Shows the list of pending proposals (and closes the proposal shown). */
  showList(): void {
    this.sequence++;
    this.detailEl.empty();
    this.detailEl.removeAttribute("data-id");
    this.contentEl.removeClass("is-showing-proposal");
    this.renderList();
  }

  private renderList(): void {
    const pending = this.host.proposals();
    this.headerEl.setText(pending.length ? `${countLabel(pending.length)} to review` : "Proposals to review");
    this.infoEl.setText(listInfo(pending.length, this.host.connectionState().kind));
    this.listEl.empty();
    const now = Date.now();
    for (const proposal of pending) this.renderRow(proposal, now);
    // Stored proposals that no longer read back are left out of the list: say which, and why.
    const unreadable = this.host.unreadableProposals();
    this.unreadableEl.hidden = unreadable.length === 0;
    this.unreadableEl.setText(
      unreadable.length
        ? `${unreadable.length === 1 ? "1 stored proposal could not be read and is" : `${unreadable.length} stored proposals could not be read and are`} left out: ` +
            unreadable.map((u) => `${u.id} (${u.reason})`).join("; ")
        : "",
    );
  }

  private renderRow(proposal: ProposalSummary, now: number): void {
    const item = this.listEl.createEl("li", { cls: "quire-proposal-row", attr: { "data-id": proposal.id } });
    const title = item.createEl("a", { cls: "quire-proposal-title", text: proposal.title || proposal.id, href: "#" });
    title.addEventListener("click", (event) => {
      event.preventDefault();
      void this.showProposal(proposal.id);
    });
    const meta = item.createDiv({ cls: "quire-proposal-meta" });
    meta.createSpan({ cls: "quire-proposal-origin", text: originLabel(proposal.command), attr: { title: proposal.command } });
    meta.createSpan({ cls: "quire-proposal-age", text: proposalAge(proposal.created, now), attr: { title: proposal.created } });
    const stat = meta.createSpan({ cls: "quire-diff-stat" });
    stat.createSpan({ cls: "quire-diff-stat-added", text: `+${proposal.lines_added}` });
    stat.createSpan({ cls: "quire-diff-stat-removed", text: `−${proposal.lines_removed}` });
    item.createDiv({ cls: "quire-proposal-files", text: filesLabel(proposal.files), attr: { title: proposal.files.join("\n") } });
  }

  /** Opens one proposal: its diff, its sources, Apply and Reject. */
  async showProposal(id: string): Promise<void> {
    const sequence = ++this.sequence;
    this.contentEl.addClass("is-showing-proposal");
    this.detailEl.empty();
    this.backButton();
    const loading = this.detailEl.createDiv({ cls: "quire-pane-info", text: "Loading the proposal…" });
    let proposal: Proposal;
    try {
      proposal = await this.host.client().proposal(id);
    } catch (error) {
      if (sequence !== this.sequence) return;
      loading.setText(problem(error));
      loading.addClass("is-error");
      return;
    }
    if (sequence !== this.sequence) return;
    this.renderProposal(proposal);
  }

  private backButton(): void {
    const back = this.detailEl.createEl("button", { cls: "quire-proposal-back", text: "Back to all proposals", attr: { type: "button" } });
    back.addEventListener("click", () => this.showList());
  }

  private renderProposal(proposal: Proposal): void {
    const el = this.detailEl;
    el.empty();
    this.backButton();
    el.setAttr("data-id", proposal.id);
    el.createDiv({ cls: "quire-pane-header quire-proposal-heading", text: proposal.title || proposal.id });
    const meta = el.createDiv({ cls: "quire-proposal-meta" });
    meta.createSpan({ cls: "quire-proposal-origin", text: `Made by ${originLabel(proposal.command)}`, attr: { title: proposal.command } });
    meta.createSpan({ cls: "quire-proposal-age", text: proposalAge(proposal.created), attr: { title: proposal.created } });
    if (proposal.status !== "pending") meta.createSpan({ cls: "quire-tag", text: proposal.status });
    this.renderSources(el, proposal.sources);
    const message = el.createDiv({ cls: "quire-proposal-message" });
    const actions = el.createDiv({ cls: "quire-proposal-actions" });
    const apply = actions.createEl("button", { cls: "mod-cta", text: "Apply", attr: { type: "button" } });
    const reject = actions.createEl("button", { text: "Reject", attr: { type: "button" } });
    const pending = proposal.status === "pending";
    apply.disabled = reject.disabled = !pending;
    if (!pending) message.setText(`This proposal was ${proposal.status}${proposal.decided ? ` ${proposalAge(proposal.decided)}` : ""}.`);
    const buttons = [apply, reject];
    apply.addEventListener("click", () => void this.decide(proposal, "apply", buttons, message));
    reject.addEventListener("click", () => void this.decide(proposal, "reject", buttons, message));
    for (const change of proposal.changes) renderChange(el, change);
  }

  private renderSources(el: HTMLElement, sources: readonly string[]): void {
    if (!sources.length) return;
    const box = el.createDiv({ cls: "quire-proposal-sources" });
    box.createSpan({ cls: "quire-proposal-sources-label", text: "Made from: " });
    sources.forEach((source, i) => {
      if (i > 0) box.appendText(", ");
      const path = sourceCandidates(source).find((candidate) => this.app.vault.getFileByPath(candidate));
      if (!path) {
        box.createSpan({ cls: "quire-proposal-source", text: source });
        return;
      }
      const link = box.createEl("a", { cls: "quire-proposal-source", text: path.replace(/\.md$/i, ""), href: "#", attr: { "data-path": path, title: path } });
      link.addEventListener("click", (event) => {
        event.preventDefault();
        void this.host.openNote(path);
      });
    });
  }

  /** Applies or rejects the proposal shown; says what happened, there and in a notice. */
  private async decide(proposal: Proposal, action: "apply" | "reject", buttons: HTMLButtonElement[], message: HTMLElement): Promise<void> {
    if (this.deciding) return;
    this.deciding = true;
    for (const button of buttons) button.disabled = true;
    message.removeClass("is-error");
    message.setText(action === "apply" ? "Applying…" : "Rejecting…");
    const sequence = this.sequence;
    let done = false;
    try {
      if (action === "apply") await this.apply(proposal);
      else await this.reject(proposal);
      done = true;
    } catch (error) {
      const text = decisionProblem(error, proposal, action);
      message.setText(text);
      message.addClass("is-error");
      new Notice(text, PROBLEM_NOTICE_MS);
      // Decided elsewhere, or gone: nothing more to do with it here.
      const gone = error instanceof QuireError && (error.code === "proposal_not_pending" || error.code === "proposal_not_found");
      if (!gone) for (const button of buttons) button.disabled = false;
    } finally {
      this.deciding = false;
    }
    await this.host.checkProposals();
    if (done && sequence === this.sequence) this.showList();
  }

  private async apply(proposal: Proposal): Promise<void> {
    const paths = proposal.changes.map((change) => change.path);
    // What the user typed goes to disk first: if it changed a note, the server refuses the apply.
    await saveEditors(this.app, paths);
    const applied = await this.host.client().applyProposal(proposal.id);
    await showTextOnDisk(this.app, applied.written);
    const written = applied.written.length ? applied.written.join(", ") : "no file";
    new Notice(`Applied “${proposal.title}”: wrote ${written}.`);
    const failed = applied.not_written ?? [];
    if (failed.length) {
      new Notice(
        `Not written: ${failed.map((f) => `${f.path} (${f.reason})`).join("; ")}. Their new content is kept in ${applied.backup_dir}.`,
        PROBLEM_NOTICE_MS,
      );
    }
    // A canvas (the vault map) is there to be looked at: it opens once written.
    const canvas = openAfterApply(proposal.changes, applied.written);
    if (canvas) await openWrittenFile(this.app, canvas);
  }

  private async reject(proposal: Proposal): Promise<void> {
    await this.host.client().rejectProposal(proposal.id);
    new Notice(`Rejected “${proposal.title}”: nothing was written.`);
  }
}

/** One file's change: what it does, and its lines. */
export function renderChange(parent: HTMLElement, change: FileChange): void {
  const file = parent.createDiv({ cls: `quire-diff-file is-${change.kind}`, attr: { "data-path": change.new_path ?? change.path } });
  const head = file.createDiv({ cls: "quire-diff-file-head" });
  head.createSpan({ cls: "quire-tag", text: changeLabel(change) });
  head.createSpan({ cls: "quire-diff-path", text: change.new_path ?? change.path });
  const diff = parseUnifiedDiff(change.diff);
  const renamed = diff.renamed ?? (change.kind === "rename" && change.new_path ? { from: change.path, to: change.new_path } : null);
  if (renamed) file.createDiv({ cls: "quire-diff-rename", text: `renamed ${renamed.from} → ${renamed.to}` });
  if (!diff.hunks.length) {
    if (!renamed) file.createDiv({ cls: "quire-pane-info", text: "No change to the text." });
    return;
  }
  const body = file.createDiv({ cls: "quire-diff" });
  const rows = fileRows(diff, change.content);
  // A new note is shown whole; elsewhere the long unchanged runs are folded.
  const pieces = change.kind === "create" || diff.created ? [{ kind: "rows" as const, rows }] : foldUnchanged(rows);
  for (const piece of pieces) {
    if (piece.kind === "rows") for (const row of piece.rows) renderRow(body, row);
    else renderFold(body, piece.rows);
  }
}

const MARKS: Record<DiffRow["kind"], string> = { added: "+", removed: "−", same: " ", note: " " };

function renderRow(parent: HTMLElement, row: DiffRow, before?: HTMLElement): HTMLElement {
  const line = createDiv({ cls: `quire-diff-line is-${row.kind}` });
  line.createSpan({ cls: "quire-diff-num", text: String(row.new ?? row.old ?? "") });
  line.createSpan({ cls: "quire-diff-mark", text: MARKS[row.kind] });
  line.createSpan({ cls: "quire-diff-text", text: row.text });
  if (before) parent.insertBefore(line, before);
  else parent.appendChild(line);
  return line;
}

/** A folded run of unchanged lines: one row that opens onto them. */
function renderFold(parent: HTMLElement, rows: readonly DiffRow[]): void {
  const fold = parent.createDiv({
    cls: "quire-diff-fold",
    text: `… ${rows.length} unchanged ${rows.length === 1 ? "line" : "lines"}`,
    attr: { role: "button", tabindex: 0, "aria-label": "Show these unchanged lines" },
  });
  const open = () => {
    for (const row of rows) renderRow(parent, row, fold);
    fold.detach();
  };
  fold.addEventListener("click", open);
  fold.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      open();
    }
  });
}

/** The line under the list's header: what the list is, or why it may be out of date. */
function listInfo(count: number, state: ConnectionState["kind"]): string {
  switch (state) {
    case "offline":
    case "refused":
      return count
        ? "quire is not reachable: this list may be out of date. It reconnects by itself; see the status bar."
        : "quire is not reachable, so proposals cannot be listed. It reconnects by itself; see the status bar.";
    case "indexing":
      return "quire is building the index of this vault; proposals are listed once it is done.";
    case "connecting":
    case "online":
      return count
        ? "Nothing is written into your notes until you apply a proposal."
        : "Nothing to review. Changes that quire's commands, tools and MCP clients propose for your notes appear here, and nothing is written until you apply them.";
  }
}

function problem(error: unknown): string {
  if (error instanceof QuireError) {
    if (error.code === "unreachable") return "quire is not reachable. It reconnects by itself; see the status bar.";
    if (error.code === "proposal_not_found") return "This proposal no longer exists on the server.";
    return error.message;
  }
  return String(error);
}

/** What a refused apply or reject means for the user, and what to do. */
function decisionProblem(error: unknown, proposal: Proposal, action: "apply" | "reject"): string {
  const verb = action === "apply" ? "applied" : "rejected";
  if (!(error instanceof QuireError)) return `Not ${verb}: ${String(error)}`;
  switch (error.code) {
    case "note_changed": {
      const file = changedFile(error.message) ?? "A note it changes";
      return `Not applied: ${file} changed since this proposal was made, so nothing was written. ${remakeAdvice(proposal.command)}`;
    }
    case "proposal_not_pending":
      return `Not ${verb}: this proposal was already applied or rejected (${error.message}).`;
    case "proposal_not_found":
      return `Not ${verb}: this proposal no longer exists on the server.`;
    case "apply_busy":
      return "Not applied: the server is applying another proposal. Try again in a moment.";
    case "file_exists":
      return `Not applied: ${error.message}.`;
    case "unreachable":
      return `Not ${verb}: quire is not reachable. It reconnects by itself; see the status bar.`;
    default:
      return `Not ${verb}: ${error.message}`;
  }
}
