/**
 * "Vault health": the structural audit as a findings inbox (`GET /api/findings`). The findings
 * are grouped by kind, a section each with its count; a row says what is wrong, opens the note at
 * its line, and has Dismiss (for good) and Snooze (1, 7 or 30 days). The server keeps those
 * decisions outside the vault, drops a finding that no longer holds, and says what is new since
 * the last look, which the view shows above the list with a "new" marker on those rows.
 *
 * Each GET is a look the server records (what is new is new since the previous one), so the view
 * asks only when it opens and when Refresh is clicked, never on a timer; a dismissed or snoozed
 * row is taken out of the list here, without asking again.
 *
 * Under the findings: the vault's topics (with a map of content for each), the vault map, and
 * the deep audit with a language model (see `health-audit.ts`).
 */
import { ItemView, Notice, type WorkspaceLeaf } from "obsidian";
import { QuireError, type Finding, type FindingsInbox } from "./api";
import { countsLine, groupByKind, messagePieces, newSinceLine, placeLabel, sectionHeading, SNOOZE_DAYS, snoozeLabel } from "./findings";
import { AuditSections } from "./health-audit";
import type { QuireHost } from "./host";

export const HEALTH_VIEW = "quire-health";

/** How long a notice about a refused decision stays up. */
const PROBLEM_NOTICE_MS = 12_000;

export class HealthView extends ItemView {
  private newSinceEl!: HTMLElement;
  private countsEl!: HTMLElement;
  private sectionsEl!: HTMLElement;
  private refreshButton!: HTMLButtonElement;
  private audit: AuditSections | null = null;
  private sequence = 0;
  /** What the list holds now: the rows left, and the counts as decided here since the last look. */
  private shown = 0;
  private dismissed = 0;
  private snoozed = 0;
  /** The last look failed because quire was not reachable: it is made again once it is. */
  private unreachable = false;

  constructor(
    leaf: WorkspaceLeaf,
    private readonly host: QuireHost,
  ) {
    super(leaf);
  }

  override getViewType(): string {
    return HEALTH_VIEW;
  }

  override getDisplayText(): string {
    return "Vault health";
  }

  override getIcon(): string {
    return "heart-pulse";
  }

  override async onOpen(): Promise<void> {
    const root = this.contentEl;
    root.empty();
    root.addClass("quire-health-view");
    const header = root.createDiv({ cls: "quire-pane-header quire-health-header" });
    header.createSpan({ text: "Vault health" });
    this.refreshButton = header.createEl("button", { cls: "quire-health-refresh", text: "Refresh", attr: { type: "button" } });
    this.refreshButton.addEventListener("click", () => void this.refresh());
    this.newSinceEl = root.createDiv({ cls: "quire-pane-info quire-health-new-since" });
    this.countsEl = root.createDiv({ cls: "quire-pane-info quire-health-counts" });
    this.sectionsEl = root.createDiv({ cls: "quire-health-sections" });
    this.audit = new AuditSections(root.createDiv({ cls: "quire-health-audit" }), this.host);
    this.registerEvent(
      this.host.events.on("quire:state", () => {
        this.audit?.stateChanged();
        if (this.unreachable && this.host.connectionState().kind === "online") void this.refresh();
      }),
    );
    await this.refresh();
  }

  override async onClose(): Promise<void> {
    this.sequence++;
    this.audit?.close();
    this.audit = null;
    this.contentEl.empty();
  }

  /** Looks again: asks the server for the inbox (a run it records) and shows it, and for the topics. */
  async refresh(): Promise<void> {
    await Promise.all([this.look(), this.audit?.loadTopics()]);
  }

  private async look(): Promise<void> {
    const sequence = ++this.sequence;
    this.refreshButton.disabled = true;
    this.newSinceEl.removeClass("is-error");
    this.newSinceEl.setText("Looking at the vault…");
    let inbox: FindingsInbox;
    try {
      inbox = await this.host.client().findings();
    } catch (error) {
      if (sequence !== this.sequence) return;
      this.refreshButton.disabled = false;
      this.unreachable = error instanceof QuireError && error.code === "unreachable";
      this.newSinceEl.setText(problem(error));
      this.newSinceEl.addClass("is-error");
      return;
    }
    if (sequence !== this.sequence) return;
    this.refreshButton.disabled = false;
    this.unreachable = false;
    this.render(inbox);
  }

  private render(inbox: FindingsInbox): void {
    this.newSinceEl.setText(newSinceLine(inbox));
    this.shown = inbox.findings.length;
    this.dismissed = inbox.dismissed;
    this.snoozed = inbox.snoozed.length;
    this.renderCounts();
    this.sectionsEl.empty();
    if (inbox.cut_to_fit) this.sectionsEl.createDiv({ cls: "quire-pane-info", text: `Not every finding is listed: ${inbox.cut_to_fit}.` });
    for (const group of groupByKind(inbox.findings)) {
      const section = this.sectionsEl.createDiv({ cls: "quire-health-section", attr: { "data-kind": group.kind } });
      section.createDiv({ cls: "quire-health-section-title", text: sectionHeading(group.kind, group.findings.length) });
      const list = section.createEl("ul", { cls: "quire-health-rows" });
      for (const finding of group.findings) this.renderRow(list, finding);
    }
    this.renderEmpty();
  }

  private renderCounts(): void {
    this.countsEl.setText(countsLine(this.shown, this.dismissed, this.snoozed));
  }

  private renderEmpty(): void {
    if (this.shown > 0 || this.sectionsEl.querySelector(".quire-health-empty")) return;
    const text =
      this.dismissed + this.snoozed > 0
        ? "Nothing left to look at: the other findings are dismissed or snoozed."
        : "Nothing to fix: no unresolved links, orphans or other findings in this vault.";
    this.sectionsEl.createDiv({ cls: "quire-pane-info quire-health-empty", text });
  }

  private renderRow(list: HTMLElement, finding: Finding): void {
    const row = list.createEl("li", { cls: "quire-health-row", attr: { "data-id": finding.id } });
    row.toggleClass("is-new", finding.new);
    const message = row.createDiv({ cls: "quire-health-message" });
    if (finding.new) message.createSpan({ cls: "quire-tag quire-health-new", text: "new", attr: { title: "Not there at the last look" } });
    for (const piece of messagePieces(finding.message)) {
      if (piece.code) message.createEl("code", { text: piece.text });
      else message.appendText(piece.text);
    }
    const place = placeLabel(finding);
    const path = finding.path;
    if (place && path) {
      const link = row.createEl("a", { cls: "quire-health-place", text: place, href: "#", attr: { "data-path": path, title: path } });
      if (finding.line) link.setAttr("data-line", finding.line);
      link.addEventListener("click", (event) => {
        event.preventDefault();
        void this.host.openNote(path, finding.line ? { start: finding.line, end: finding.line } : undefined);
      });
    } else if (finding.subject) {
      row.createDiv({ cls: "quire-health-subject", text: finding.subject });
    }
    const actions = row.createDiv({ cls: "quire-health-actions" });
    const buttons: HTMLButtonElement[] = [];
    const dismiss = actions.createEl("button", { cls: "quire-health-dismiss", text: "Dismiss", attr: { type: "button", title: "Out of this list for good" } });
    buttons.push(dismiss);
    dismiss.addEventListener("click", () => void this.decide(row, finding, null, buttons));
    actions.createSpan({ cls: "quire-health-snooze-label", text: "Snooze:" });
    for (const days of SNOOZE_DAYS) {
      const snooze = actions.createEl("button", {
        cls: "quire-health-snooze",
        text: snoozeLabel(days),
        attr: { type: "button", "data-days": days, title: `Out of this list for ${snoozeLabel(days)}` },
      });
      buttons.push(snooze);
      snooze.addEventListener("click", () => void this.decide(row, finding, days, buttons));
    }
  }

  /** Dismisses the finding (`days` null) or snoozes it; its row leaves the list. */
  private async decide(row: HTMLElement, finding: Finding, days: number | null, buttons: HTMLButtonElement[]): Promise<void> {
    for (const button of buttons) button.disabled = true;
    try {
      if (days === null) await this.host.client().dismissFinding(finding.id);
      else await this.host.client().snoozeFinding(finding.id, days);
    } catch (error) {
      for (const button of buttons) button.disabled = false;
      new Notice(`${days === null ? "Not dismissed" : "Not snoozed"}: ${problem(error)}`, PROBLEM_NOTICE_MS);
      return;
    }
    // A look made meanwhile replaced this row: its counts already say so.
    if (!this.sectionsEl.contains(row)) return;
    if (days === null) this.dismissed++;
    else this.snoozed++;
    this.shown--;
    this.removeRow(row, finding.kind);
    this.renderCounts();
    this.renderEmpty();
  }

  private removeRow(row: HTMLElement, kind: string): void {
    const section = row.closest(".quire-health-section");
    row.detach();
    if (!(section instanceof HTMLElement)) return;
    const left = section.querySelectorAll(".quire-health-row").length;
    if (!left) {
      section.detach();
      return;
    }
    section.querySelector(".quire-health-section-title")?.setText(sectionHeading(kind, left));
  }
}

function problem(error: unknown): string {
  if (error instanceof QuireError) {
    if (error.code === "unreachable") return "quire is not reachable. It reconnects by itself (see the status bar), and the list is made then.";
    return error.message;
  }
  return String(error);
}
