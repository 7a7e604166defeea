/**
 * The vault health view's sections under the findings: the vault's topics, its map, and the
 * deep audit.
 *
 * - **Topics**: the notes grouped by meaning (`POST /api/audit/deep` with `dry_run`, which sends
 *   nothing to any model), a row per cluster with its notes as links and **Make a map of
 *   content** (`POST /api/moc`): the map is a proposal, opened in the proposals pane; a cluster
 *   that gets none says why (a note already maps it, a map of it waits for review, too few notes).
 * - **Vault map**: the vault as a JSON Canvas (`POST /api/audit/canvas`), grouped by folder or by
 *   linked notes, made as a proposal; the proposals pane opens the canvas once it is applied.
 * - **Deep audit**, when the server has a language model: the dry run's plan (notes, cached
 *   records, requests, tokens), then Run: the model reviews every note and the vault as a whole
 *   (one request that answers when done), and the view shows the weak notes, recommendations and
 *   the action plan. The server caches each note's record, so a second run sends only the notes
 *   that changed. While it runs, Run becomes Stop: it cancels the request (the server then
 *   cancels the model's work; the notes reviewed so far keep their records, so the next run
 *   sends only the rest), the status line says so, and the plan's Run can be clicked again.
 *   Without a model a line says that one enables it.
 *
 * The topics are asked for when the view opens and at each Refresh; the deep audit only when
 * asked. The dry run and the run each take one of the server's two generation slots (429 `busy`
 * when both are taken).
 */
import { type App } from "obsidian";
import { isAbort, QuireError, type CanvasGrouping, type DeepAuditReport, type NamedCluster, type MocSkipped } from "./api";
import type { QuireHost } from "./host";
import {
  clusterLabel,
  failedLine,
  madeLine,
  noteName,
  notesLabel,
  NOTES_SHOWN,
  outcomeLine,
  planLine,
  reduceErrorLine,
  scoreLabel,
  skipWords,
  TOPICS_CHANGED,
  topicsHeading,
  topicsLine,
  topicsUnavailableLine,
  weakHeading,
} from "./vault-audit";

const GROUPINGS: [CanvasGrouping, string][] = [
  ["folder", "Grouped by folder"],
  ["component", "Grouped by linked notes"],
];

export class AuditSections {
  private readonly topicsTitleEl: HTMLElement;
  private readonly topicsInfoEl: HTMLElement;
  private readonly topicsListEl: HTMLElement;
  private readonly groupEl: HTMLSelectElement;
  private readonly mapButton: HTMLButtonElement;
  private readonly mapMessageEl: HTMLElement;
  private readonly deepIntroEl: HTMLElement;
  private readonly deepPlanEl: HTMLElement;
  private readonly deepResultEl: HTMLElement;
  private planButton: HTMLButtonElement | null = null;
  private topicsSequence = 0;
  private deepSequence = 0;
  /** A deep audit runs: the plan button waits for it, and Refresh leaves the topics as they are. */
  private running = false;
  /** The model the deep audit section was drawn for (undefined: not drawn yet). */
  private model: string | null | undefined = undefined;
  /** Aborted when the view closes: its requests are no longer waited for. */
  private readonly controller = new AbortController();
  /** The running deep audit's request: aborted by Stop, and when the view closes. */
  private runController: AbortController | null = null;
  private timer: number | null = null;
  /** The names the model gave the clusters in the last run, by id, with the notes they named: a dry run has none. */
  private readonly modelNames = new Map<number, { name: string; notes: string }>();

  constructor(
    parent: HTMLElement,
    private readonly host: QuireHost,
  ) {
    const topics = parent.createDiv({ cls: "quire-audit-section quire-audit-topics" });
    this.topicsTitleEl = topics.createDiv({ cls: "quire-health-section-title", text: topicsHeading(null) });
    this.topicsInfoEl = topics.createDiv({ cls: "quire-pane-info quire-topics-info" });
    this.topicsListEl = topics.createEl("ul", { cls: "quire-topics" });

    const map = parent.createDiv({ cls: "quire-audit-section quire-audit-map" });
    map.createDiv({ cls: "quire-health-section-title", text: "Vault map" });
    map.createDiv({
      cls: "quire-pane-info",
      text: "A canvas of every note and its links. It is made as a proposal to review, and opens once you apply it.",
    });
    const controls = map.createDiv({ cls: "quire-audit-controls" });
    this.groupEl = controls.createEl("select", { cls: "dropdown quire-map-group", attr: { "aria-label": "How the map groups the notes" } });
    for (const [value, label] of GROUPINGS) this.groupEl.createEl("option", { text: label, value });
    this.mapButton = controls.createEl("button", { cls: "quire-map-make", text: "Make the vault map", attr: { type: "button" } });
    this.mapButton.addEventListener("click", () => void this.makeMap());
    this.mapMessageEl = map.createDiv({ cls: "quire-audit-message quire-map-message" });

    const deep = parent.createDiv({ cls: "quire-audit-section quire-audit-deep" });
    deep.createDiv({ cls: "quire-health-section-title", text: "Deep audit" });
    this.deepIntroEl = deep.createDiv({ cls: "quire-deep-intro" });
    this.deepPlanEl = deep.createDiv({ cls: "quire-deep-plan" });
    this.deepResultEl = deep.createDiv({ cls: "quire-deep-result" });
    this.stateChanged();
  }

  private get app(): App {
    return this.host.app;
  }

  /** The view closed: nothing more is shown, and no request is waited for. */
  close(): void {
    this.topicsSequence++;
    this.deepSequence++;
    this.controller.abort();
    this.runController?.abort();
    this.stopTimer();
  }

  /** The connection changed: the deep audit section follows whether the server has a language model. */
  stateChanged(): void {
    const state = this.host.connectionState();
    if (state.kind !== "online" || this.running) return;
    const model = state.status.llm ?? null;
    if (model === this.model) return;
    this.model = model;
    this.deepPlanEl.empty();
    this.deepResultEl.empty();
    this.deepIntroEl.empty();
    if (!model) {
      this.planButton = null;
      this.deepIntroEl.createDiv({ cls: "quire-pane-info quire-deep-none", text: "A language model enables the deep audit: a review of every note, recommendations and an action plan." });
      return;
    }
    this.deepIntroEl.createDiv({
      cls: "quire-pane-info",
      text: `${model} reviews every note, then the vault as a whole: weak notes, recommendations and an action plan. The server keeps each note's review, so a second run sends only the notes that changed.`,
    });
    this.planButton = this.deepIntroEl.createEl("button", { cls: "quire-deep-start", text: "Deep audit", attr: { type: "button" } });
    this.planButton.addEventListener("click", () => void this.plan());
  }

  // ---- topics ----------------------------------------------------------------------------------

  /** Asks for the topics again (a dry run: nothing is sent to a model). Not while a deep audit runs. */
  async loadTopics(): Promise<void> {
    if (this.running) return;
    const sequence = ++this.topicsSequence;
    this.topicsInfoEl.removeClass("is-error");
    this.topicsInfoEl.setText("Grouping the notes by meaning…");
    let report: DeepAuditReport;
    try {
      report = await this.host.client().deepAudit(true, this.controller.signal);
    } catch (error) {
      if (sequence !== this.topicsSequence || isAbort(error)) return;
      const shown = this.topicsListEl.childElementCount > 0;
      this.topicsInfoEl.setText(`${shown ? "The topics were not updated" : "No topics"}: ${problem(error)}`);
      this.topicsInfoEl.addClass("is-error");
      return;
    }
    if (sequence !== this.topicsSequence) return;
    this.renderTopics(report);
  }

  private renderTopics(report: DeepAuditReport): void {
    this.topicsSequence++;
    this.topicsListEl.empty();
    this.topicsInfoEl.removeClass("is-error");
    if (report.topics_unavailable) {
      this.topicsTitleEl.setText(topicsHeading(null));
      this.topicsInfoEl.setText(topicsUnavailableLine(report.topics_unavailable));
      return;
    }
    this.topicsTitleEl.setText(topicsHeading(report.clusters.length));
    this.topicsInfoEl.setText(topicsLine(report.topics, report.clusters.length));
    for (const cluster of report.clusters) this.renderCluster(this.named(cluster));
  }

  /** The cluster with the name the model gave it in the last run, if it still has the same notes. */
  private named(cluster: NamedCluster): NamedCluster {
    if (cluster.named_by_model) return cluster;
    const known = this.modelNames.get(cluster.id);
    return known && known.notes === cluster.notes.join("\n") ? { ...cluster, name: known.name, named_by_model: true } : cluster;
  }

  private renderCluster(cluster: NamedCluster): void {
    const row = this.topicsListEl.createEl("li", { cls: "quire-topic-row", attr: { "data-cluster": cluster.id } });
    const head = row.createDiv({ cls: "quire-topic-head" });
    head.createSpan({ cls: "quire-topic-name", text: cluster.name, attr: { title: `Distinctive terms: ${cluster.terms.join(", ")}` } });
    head.createSpan({ cls: "quire-tag quire-topic-count", text: notesLabel(cluster.notes.length) });
    if (cluster.named_by_model) row.createDiv({ cls: "quire-topic-terms", text: `Terms: ${clusterLabel(cluster)}` });
    const notes = row.createEl("ul", { cls: "quire-topic-notes" });
    cluster.notes.forEach((path, i) => {
      const item = notes.createEl("li", { cls: "quire-topic-note-item" });
      if (i >= NOTES_SHOWN) item.addClass("is-folded");
      this.noteLink(item, path, "quire-topic-note");
    });
    const folded = cluster.notes.length - NOTES_SHOWN;
    if (folded > 0) {
      const more = row.createEl("button", { cls: "quire-topic-more", text: `Show ${folded} more`, attr: { type: "button" } });
      more.addEventListener("click", () => {
        for (const item of Array.from(notes.querySelectorAll(".is-folded"))) item.removeClass("is-folded");
        more.detach();
      });
    }
    const actions = row.createDiv({ cls: "quire-audit-controls" });
    const make = actions.createEl("button", {
      cls: "quire-topic-moc",
      text: "Make a map of content",
      attr: { type: "button", title: "A note that lists this topic's notes, grouped by sub-topic, proposed for review" },
    });
    const message = row.createDiv({ cls: "quire-audit-message quire-topic-message" });
    make.addEventListener("click", () => void this.makeMoc(cluster, make, message));
  }

  /** A link that opens a note of the vault. */
  private noteLink(parent: HTMLElement, path: string, cls: string): HTMLElement {
    const link = parent.createEl("a", { cls, text: noteName(path), href: "#", attr: { "data-path": path, title: path } });
    link.addEventListener("click", (event) => {
      event.preventDefault();
      void this.host.openNote(path);
    });
    return link;
  }

  /** Notes as links, comma-separated. */
  private noteLinks(parent: HTMLElement, paths: readonly string[], cls: string): void {
    paths.forEach((path, i) => {
      if (i > 0) parent.appendText(", ");
      this.noteLink(parent, path, cls);
    });
  }

  private async makeMoc(cluster: NamedCluster, button: HTMLButtonElement, message: HTMLElement): Promise<void> {
    button.disabled = true;
    message.removeClass("is-error");
    message.setText("Making a map of content…");
    try {
      const result = await this.host.client().moc(cluster.id);
      const made = result.proposals[0];
      const skipped = result.skipped[0];
      if (made) {
        message.setText(madeLine(made) + (made.label === clusterLabel(cluster) ? "" : TOPICS_CHANGED));
        await this.host.reviewNewProposals([made.proposal], made.proposal);
      } else if (skipped) {
        this.renderSkipped(message, skipped);
      } else {
        message.setText("The server made no map of content for this topic.");
      }
    } catch (error) {
      message.setText(`No map of content: ${problem(error)}`);
      message.addClass("is-error");
    } finally {
      button.disabled = false;
    }
  }

  private renderSkipped(message: HTMLElement, skipped: MocSkipped): void {
    const { before, after } = skipWords(skipped);
    message.empty();
    message.appendText(before);
    const proposal = skipped.proposal;
    if (skipped.reason === "already_mapped" && skipped.mapped_by) {
      this.noteLink(message, skipped.mapped_by, "quire-topic-mapped-by");
    } else if (skipped.reason === "pending" && proposal) {
      const review = message.createEl("a", { cls: "quire-topic-review", text: "Review it", href: "#", attr: { "data-id": proposal } });
      review.addEventListener("click", (event) => {
        event.preventDefault();
        void this.host.reviewNewProposals([proposal], proposal);
      });
    }
    message.appendText(after);
  }

  // ---- the vault map ---------------------------------------------------------------------------

  private async makeMap(): Promise<void> {
    const group = this.groupEl.value === "component" ? "component" : "folder";
    this.mapButton.disabled = true;
    this.mapMessageEl.removeClass("is-error");
    this.mapMessageEl.setText("Making the vault map…");
    try {
      const proposal = await this.host.client().canvasMap(group);
      const files = proposal.changes.map((change) => change.new_path ?? change.path).join(", ");
      this.mapMessageEl.setText(`Proposed ${files}: it is open in the proposals pane, and opens once you apply it.`);
      await this.host.reviewNewProposals([proposal.id], proposal.id);
    } catch (error) {
      this.mapMessageEl.setText(`No map: ${problem(error)}`);
      this.mapMessageEl.addClass("is-error");
    } finally {
      this.mapButton.disabled = false;
    }
  }

  // ---- the deep audit --------------------------------------------------------------------------

  /** The dry run: what a deep audit would send, and Run. */
  private async plan(): Promise<void> {
    if (this.running) return;
    const sequence = ++this.deepSequence;
    const start = this.planButton;
    if (start) start.disabled = true;
    this.deepPlanEl.empty();
    const info = this.deepPlanEl.createDiv({ cls: "quire-pane-info quire-deep-plan-line", text: "Counting what the deep audit would send…" });
    let report: DeepAuditReport;
    try {
      report = await this.host.client().deepAudit(true, this.controller.signal);
    } catch (error) {
      if (sequence !== this.deepSequence || isAbort(error)) return;
      if (start) start.disabled = false;
      info.setText(problem(error));
      info.addClass("is-error");
      return;
    }
    if (sequence !== this.deepSequence) return;
    if (start) start.disabled = false;
    this.renderTopics(report);
    const plan = report.plan;
    if (!plan || !report.model) {
      info.setText(`The server has no language model now: ${report.needs_model.join("; ") || "the deep audit needs one"}.`);
      return;
    }
    info.setText(planLine(plan, report.model));
    info.setAttr("data-cached", plan.cached);
    info.setAttr("data-to-send", plan.to_send);
    const run = this.deepPlanEl.createEl("button", { cls: "mod-cta quire-deep-run", text: "Run", attr: { type: "button" } });
    run.addEventListener("click", () => {
      if (this.runController) this.runController.abort();
      else void this.run(run);
    });
  }

  /**
   * The deep audit itself: one request that answers once the model has reviewed every note, or
   * that Stop (the same button) cancels.
   */
  private async run(button: HTMLButtonElement): Promise<void> {
    if (this.running) return;
    this.running = true;
    const sequence = ++this.deepSequence;
    const controller = new AbortController();
    this.runController = controller;
    const start = this.planButton;
    if (start) start.disabled = true;
    setRunButton(button, true);
    this.deepResultEl.empty();
    this.deepPlanEl.querySelector(".quire-deep-status")?.detach();
    const status = this.deepPlanEl.createDiv({ cls: "quire-pane-info quire-deep-status", text: "The language model is reviewing the notes…" });
    const started = Date.now();
    this.stopTimer();
    this.timer = window.setInterval(() => status.setText(`The language model is reviewing the notes… ${Math.round((Date.now() - started) / 1000)} s`), 1000);
    let report: DeepAuditReport | null = null;
    try {
      report = await this.host.client().deepAudit(false, controller.signal);
    } catch (error) {
      // An abort here is Stop, or the view closing (which left the sequence behind).
      if (sequence === this.deepSequence) {
        if (isAbort(error)) {
          status.setText(stoppedLine(Math.round((Date.now() - started) / 1000)));
        } else {
          status.setText(deepProblem(error));
          status.addClass("is-error");
        }
      }
    } finally {
      this.running = false;
      if (this.runController === controller) this.runController = null;
      this.stopTimer();
    }
    if (sequence !== this.deepSequence) return;
    if (start) start.disabled = false;
    if (!report) {
      setRunButton(button, false);
      return;
    }
    // The plan is spent: the next one (Deep audit again) counts the records kept by this run.
    this.deepPlanEl.empty();
    if (!report.reduce_error) this.modelNames.clear();
    for (const cluster of report.clusters) {
      if (cluster.named_by_model) this.modelNames.set(cluster.id, { name: cluster.name, notes: cluster.notes.join("\n") });
    }
    this.renderTopics(report);
    this.renderResult(report, Math.round((Date.now() - started) / 1000));
  }

  private renderResult(report: DeepAuditReport, seconds: number): void {
    const el = this.deepResultEl;
    el.empty();
    if (report.map) {
      el.createDiv({ cls: "quire-pane-info quire-deep-summary", text: `Done in ${seconds} s. ${outcomeLine(report.map, report.reduce_requests, report.dropped_paths)}` });
      for (const failed of report.map.failed) {
        const line = el.createDiv({ cls: "quire-audit-message is-error quire-deep-failed" });
        line.appendText(failedLine(failed.reason));
        this.noteLinks(line, failed.paths, "quire-deep-note");
      }
    }
    if (report.reduce_error) el.createDiv({ cls: "quire-audit-message is-error quire-deep-reduce-error", text: reduceErrorLine(report.reduce_error) });
    if (report.needs_model.length) {
      el.createDiv({ cls: "quire-deep-heading", text: "Needs a language model" });
      const list = el.createEl("ul", { cls: "quire-deep-needs" });
      for (const need of report.needs_model) list.createEl("li", { text: need });
    }

    el.createDiv({ cls: "quire-deep-heading", text: weakHeading(report.quality_findings.length) });
    if (!report.quality_findings.length) el.createDiv({ cls: "quire-pane-info", text: "The model found no weak note." });
    const weak = el.createEl("ul", { cls: "quire-deep-quality" });
    for (const finding of report.quality_findings) {
      const item = weak.createEl("li", { cls: "quire-deep-quality-row", attr: { "data-path": finding.path } });
      this.noteLink(item, finding.path, "quire-deep-note");
      item.createSpan({ cls: "quire-tag quire-deep-score", text: scoreLabel(finding.score), attr: { title: "The model's score, from 1 (poor) to 5 (clear, complete, well linked)" } });
      if (finding.issues.length) item.createDiv({ cls: "quire-deep-issues", text: finding.issues.join("; ") });
    }

    for (const [title, cls, items] of [
      ["Recommendations", "quire-deep-recommendations", report.recommendations],
      ["Action plan", "quire-deep-actions", report.action_plan],
    ] as const) {
      if (!items.length) continue;
      el.createDiv({ cls: "quire-deep-heading", text: title });
      const list = el.createEl("ol", { cls: `quire-deep-items ${cls}` });
      for (const item of items) {
        const row = list.createEl("li", { cls: "quire-deep-item" });
        row.createSpan({ cls: "quire-deep-item-text", text: item.text });
        if (!item.notes.length) continue;
        const notes = row.createDiv({ cls: "quire-deep-item-notes" });
        this.noteLinks(notes, item.notes, "quire-deep-note");
      }
    }
  }

  private stopTimer(): void {
    if (this.timer !== null) window.clearInterval(this.timer);
    this.timer = null;
  }
}

/** The plan's button: Run, or Stop while the deep audit runs. */
function setRunButton(button: HTMLButtonElement, running: boolean): void {
  button.disabled = false;
  button.setText(running ? "Stop" : "Run");
  button.toggleClass("mod-cta", !running);
  button.toggleClass("mod-warning", running);
}

/** What the status line says once Stop cancelled the deep audit. */
function stoppedLine(seconds: number): string {
  return `Stopped after ${seconds} s. The notes reviewed so far keep their records, so the next run sends only the rest; Deep audit counts what is left.`;
}

function problem(error: unknown): string {
  if (error instanceof QuireError) {
    if (error.code === "unreachable") return "quire is not reachable. It reconnects by itself; see the status bar.";
    if (error.code === "busy") return "quire is busy writing other answers; try again when one has finished.";
    return error.message;
  }
  return String(error);
}

function deepProblem(error: unknown): string {
  if (error instanceof QuireError && error.code === "busy") {
    return "Not run: the language model is busy with other requests (the server writes two at a time). Try again when one has finished.";
  }
  return `The deep audit failed: ${problem(error)}`;
}
