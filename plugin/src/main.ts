/**
 * quire for Obsidian: a thin client of `quire serve`. Search, related notes, questions, drafts
 * and reflections on a week come from the server (all the logic is in quire); the plugin shows
 * them in Obsidian and opens notes at the lines the server names. The changes quire proposes
 * are reviewed, applied or rejected in the proposals pane; the vault health view is the
 * structural audit as an inbox of findings; the questions view lists the questions a note or
 * its folder answers. It talks to the configured server and nothing else.
 */
import { Events, FileSystemAdapter, Notice, Plugin, type WorkspaceLeaf } from "obsidian";
import { QuireClient, type ProposalSummary, type UnreadableProposal } from "./api";
import { ASK_VIEW, AskView } from "./ask-view";
import { Connection, type ConnectionState } from "./connection";
import { askThisDocument } from "./document-modal";
import { draftSection } from "./draft";
import { HEALTH_VIEW, HealthView } from "./health-view";
import type { LineRange, QuireHost } from "./host";
import { openNoteAt } from "./open-note";
import { ProposalWatcher } from "./proposal-watch";
import { countLabel } from "./proposals";
import { PROPOSALS_VIEW, ProposalsView } from "./proposals-view";
import { folderOf } from "./questions";
import { QUESTIONS_VIEW, QuestionsView } from "./questions-view";
import { REFLECT_VIEW, ReflectView } from "./reflect-view";
import { SearchModal } from "./search-modal";
import { ServerProcess } from "./server";
import { loadSettings, QuireSettingTab, type QuireSettings, type SettingsHost } from "./settings";
import { SIMILAR_VIEW, SimilarView } from "./similar-view";
import { statusLine } from "./status";
import { shiftWeek, weekOf } from "./weeks";
import { batchTransform, completeAtCursor, dataviewQuery, makeFlashcards, splitNote, transformSelection } from "./writing-tools";

/** How long a notice about a problem stays up. */
const PROBLEM_NOTICE_MS = 12_000;
/** How long the notice of new proposals stays up (a click on it opens them). */
const PROPOSALS_NOTICE_MS = 10_000;
/** Settings typed in a text field apply once typing pauses this long. */
const SETTINGS_DELAY_MS = 800;
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

export default class QuirePlugin extends Plugin implements QuireHost, SettingsHost {
  override settings: QuireSettings = loadSettings(null);
  readonly events = new Events();
  private connection!: Connection;
  private server!: ServerProcess;
  private statusEl!: HTMLElement;
  private cached: { client: QuireClient; url: string; token: string } | null = null;
  private restartTimer: number | null = null;
  private watcher!: ProposalWatcher;
  private proposalsEl!: HTMLElement;
  private ribbonBadgeEl!: HTMLElement;
  /** The connection's state when it last changed, to see it come online. */
  private lastState: ConnectionState["kind"] | null = null;
  /**
   * How often the plugin asks the server for proposals made meanwhile (milliseconds); it also
   * asks when the connection comes up and after each index event. Tests shorten it.
   */
  proposalCheckMs = 25_000;

  override async onload(): Promise<void> {
    this.settings = loadSettings(await this.loadData());
    this.server = new ServerProcess((message) => new Notice(message, PROBLEM_NOTICE_MS));
    this.connection = new Connection({
      client: () => this.client(),
      startServer: () => this.startServer(),
      startHint: () => this.startHint(),
      vaultPath: () => this.vaultPath(),
      notify: (message) => new Notice(message, PROBLEM_NOTICE_MS),
      changed: () => this.connectionChanged(),
      indexEvent: (kind, data) => this.events.trigger("quire:index", kind, data),
    });

    this.watcher = new ProposalWatcher({
      client: () => this.client(),
      online: () => this.connection.state.kind === "online",
      changed: (pending) => this.proposalsChanged(pending),
      arrived: (fresh) => this.proposalsArrived(fresh),
    });

    this.addSettingTab(new QuireSettingTab(this.app, this));
    this.registerView(SIMILAR_VIEW, (leaf) => new SimilarView(leaf, this));
    this.registerView(ASK_VIEW, (leaf) => new AskView(leaf, this));
    this.registerView(REFLECT_VIEW, (leaf) => new ReflectView(leaf, this));
    this.registerView(PROPOSALS_VIEW, (leaf) => new ProposalsView(leaf, this));
    this.registerView(HEALTH_VIEW, (leaf) => new HealthView(leaf, this));
    this.registerView(QUESTIONS_VIEW, (leaf) => new QuestionsView(leaf, this));

    this.addRibbonIcon("search", "Search notes with quire", () => this.openSearch());
    const ribbon = this.addRibbonIcon("file-diff", "Review proposals", () => void this.reviewProposals());
    ribbon.addClass("quire-proposals-ribbon");
    this.ribbonBadgeEl = ribbon.createSpan({ cls: "quire-proposals-badge is-empty" });
    this.addRibbonIcon("heart-pulse", "Vault health", () => void this.vaultHealth());
    this.addCommand({ id: "search", name: "Search notes", callback: () => this.openSearch() });
    this.addCommand({ id: "open-related-notes", name: "Open related notes", callback: () => void this.activateView(SIMILAR_VIEW) });
    this.addCommand({ id: "ask", name: "Ask your vault", callback: () => void this.activateView(ASK_VIEW) });
    this.addCommand({ id: "ask-document", name: "Ask this document", callback: () => void askThisDocument(this) });
    this.addCommand({ id: "questions-note", name: "Questions this note answers", callback: () => void this.questionsOf("note") });
    this.addCommand({ id: "questions-folder", name: "Questions this folder answers", callback: () => void this.questionsOf("folder") });
    this.addCommand({ id: "reflect-this-week", name: "Reflect on this week", callback: () => void this.reflectOn(weekOf()) });
    this.addCommand({ id: "reflect-last-week", name: "Reflect on last week", callback: () => void this.reflectOn(shiftWeek(weekOf(), -1)) });
    this.addCommand({ id: "draft-section", name: "Draft this section", editorCallback: (editor, context) => void draftSection(this, editor, context) });
    this.addCommand({ id: "split-note", name: "Split this note into atomic notes", editorCallback: (_editor, context) => void splitNote(this, context) });
    this.addCommand({ id: "flashcards", name: "Make flashcards from this note", editorCallback: (_editor, context) => void makeFlashcards(this, context) });
    this.addCommand({ id: "transform", name: "Transform the selection", editorCallback: (editor, context) => void transformSelection(this, editor, context) });
    this.addCommand({ id: "complete", name: "Continue the note from here", editorCallback: (editor, context) => void completeAtCursor(this, editor, context) });
    this.addCommand({ id: "dataview", name: "Dataview query from a question", editorCallback: (_editor, context) => void dataviewQuery(this, context) });
    this.addCommand({ id: "batch-transform", name: "Transform many notes (a folder or a tag)", callback: () => void batchTransform(this) });
    this.addCommand({ id: "review-proposals", name: "Review proposals", callback: () => void this.reviewProposals() });
    this.addCommand({ id: "vault-health", name: "Vault health", callback: () => void this.vaultHealth() });
    this.addCommand({ id: "reconnect", name: "Reconnect to the server", callback: () => this.connection.restart() });

    this.registerEvent(
      this.app.workspace.on("editor-menu", (menu, editor, context) => {
        menu.addItem((item) =>
          item
            .setTitle("Draft this section")
            .setIcon("pen-line")
            .onClick(() => void draftSection(this, editor, context)),
        );
        const tools: [string, string, () => unknown][] = [
          ["Transform the selection", "wand-sparkles", () => transformSelection(this, editor, context)],
          ["Continue the note from here", "text-cursor-input", () => completeAtCursor(this, editor, context)],
          ["Split into atomic notes", "split", () => splitNote(this, context)],
          ["Make flashcards", "layers", () => makeFlashcards(this, context)],
          ["Dataview query from a question", "table", () => dataviewQuery(this, context)],
          ["Ask this document", "file-question", () => askThisDocument(this)],
        ];
        for (const [title, icon, run] of tools) menu.addItem((item) => item.setTitle(title).setIcon(icon).setSection("quire").onClick(() => void run()));
      }),
    );

    this.statusEl = this.addStatusBarItem();
    this.statusEl.addClass("quire-status", "mod-clickable");
    this.registerDomEvent(this.statusEl, "click", () => {
      if (this.connection.state.kind === "online") new Notice(statusLine(this.connection.state, this.connection.syncing).tooltip);
      else this.connection.restart();
    });
    this.proposalsEl = this.addStatusBarItem();
    this.proposalsEl.addClass("quire-proposals-status", "mod-clickable", "is-empty");
    this.proposalsEl.setAttr("aria-label", "Review proposals");
    this.registerDomEvent(this.proposalsEl, "click", () => void this.reviewProposals());
    this.connectionChanged();

    // A sync may come from a batch run or another device that made proposals too.
    this.registerEvent(this.events.on("quire:index", () => void this.watcher.check()));

    this.register(() => {
      if (this.restartTimer !== null) window.clearTimeout(this.restartTimer);
      this.watcher.stop();
      this.connection.stop();
      this.server.stop();
    });
    // Once the vault is loaded, as Obsidian asks of work that is not needed to show the app.
    this.app.workspace.onLayoutReady(() => {
      this.connection.start();
      this.registerInterval(window.setInterval(() => void this.watcher.check(), this.proposalCheckMs));
    });
  }

  client(): QuireClient {
    const { serverUrl: url, token } = this.settings;
    if (this.cached?.url !== url || this.cached.token !== token) this.cached = { client: new QuireClient(url, token), url, token };
    return this.cached.client;
  }

  connectionState(): ConnectionState {
    return this.connection.state;
  }

  proposals(): readonly ProposalSummary[] {
    return this.watcher.pending;
  }

  unreadableProposals(): readonly UnreadableProposal[] {
    return this.watcher.unreadable;
  }

  checkProposals(): Promise<void> {
    return this.watcher.check();
  }

  async reviewNewProposals(ids: readonly string[], id?: string): Promise<void> {
    this.watcher.markSeen(ids);
    await this.watcher.check();
    await this.reviewProposals(id);
  }

  openNote(path: string, lines?: LineRange): Promise<void> {
    return openNoteAt(this.app, path, lines);
  }

  async askQuestion(question: string): Promise<void> {
    // revealLeaf has loaded the view if it was deferred, so it is an AskView here.
    const leaf = await this.activateView(ASK_VIEW);
    if (leaf?.view instanceof AskView) await leaf.view.askQuestion(question);
  }

  async updateSettings(change: Partial<QuireSettings>): Promise<void> {
    const before = this.settings;
    this.settings = { ...before, ...change };
    await this.saveData(this.settings);
    const serverChanged = (["serverUrl", "token", "quireBinary", "autoStart"] as const).some((key) => before[key] !== this.settings[key]);
    if (!serverChanged) return;
    if (this.restartTimer !== null) window.clearTimeout(this.restartTimer);
    this.restartTimer = window.setTimeout(() => {
      this.restartTimer = null;
      // A server started with the old settings is stopped; the connection starts a new one if asked to.
      this.server.stop();
      this.connection.restart();
    }, SETTINGS_DELAY_MS);
  }

  private openSearch(): void {
    new SearchModal(this).open();
  }

  /** Shows the view of `type` in the right sidebar, opening it there if it is not open. */
  private async activateView(type: string): Promise<WorkspaceLeaf | null> {
    const { workspace } = this.app;
    let leaf: WorkspaceLeaf | null = workspace.getLeavesOfType(type)[0] ?? null;
    if (!leaf) {
      leaf = workspace.getRightLeaf(false);
      if (!leaf) return null;
      await leaf.setViewState({ type, active: true });
    }
    await workspace.revealLeaf(leaf);
    return leaf;
  }

  /** Opens the proposals pane, on the proposal `id` when given. */
  async reviewProposals(id?: string): Promise<void> {
    const leaf = await this.activateView(PROPOSALS_VIEW);
    if (leaf?.view instanceof ProposalsView) {
      if (id) await leaf.view.showProposal(id);
      else leaf.view.showList();
    }
  }

  /** Opens the vault health view, or looks again if it is open (each look is a run the server records). */
  private async vaultHealth(): Promise<void> {
    // A view not loaded yet (deferred, or not open) looks when it opens: once.
    const loaded = this.app.workspace.getLeavesOfType(HEALTH_VIEW)[0]?.view instanceof HealthView;
    const leaf = await this.activateView(HEALTH_VIEW);
    if (loaded && leaf?.view instanceof HealthView) await leaf.view.refresh();
  }

  private proposalsChanged(pending: readonly ProposalSummary[]): void {
    const count = pending.length;
    const text = count ? `${countLabel(count)} to review` : "";
    if (this.proposalsEl.textContent !== text) this.proposalsEl.setText(text);
    this.proposalsEl.toggleClass("is-empty", count === 0);
    this.ribbonBadgeEl.setText(count ? String(count) : "");
    this.ribbonBadgeEl.toggleClass("is-empty", count === 0);
    this.events.trigger("quire:proposals");
  }

  /** Says that proposals arrived; the notice opens them. */
  private proposalsArrived(fresh: readonly ProposalSummary[]): void {
    const [first] = fresh;
    const text =
      fresh.length === 1 && first
        ? `quire: 1 new proposal to review: ${first.title}`
        : `quire: ${fresh.length} new proposals to review`;
    const message = createFragment((fragment) => {
      const link = fragment.createSpan({ cls: "quire-proposals-notice mod-clickable", text, attr: { title: "Click to review" } });
      link.addEventListener("click", () => void this.reviewProposals(fresh.length === 1 ? first?.id : undefined));
    });
    new Notice(message, PROPOSALS_NOTICE_MS);
  }

  /** Opens the questions view on the active note, or on its folder (its notes at any depth). */
  private async questionsOf(what: "note" | "folder"): Promise<void> {
    const file = this.app.workspace.getActiveFile();
    if (!file || file.extension !== "md") {
      new Notice("Open a note first: quire lists the questions the note, or its folder, answers.");
      return;
    }
    const leaf = await this.activateView(QUESTIONS_VIEW);
    if (leaf?.view instanceof QuestionsView) await leaf.view.show(what === "note" ? file.path : folderOf(file.path));
  }

  private async reflectOn(week: string): Promise<void> {
    // revealLeaf has loaded the view if it was deferred (Obsidian 1.7.2+), so it is a ReflectView here.
    const leaf = await this.activateView(REFLECT_VIEW);
    if (leaf?.view instanceof ReflectView) await leaf.view.reflect(week);
  }

  private vaultPath(): string | null {
    const adapter = this.app.vault.adapter;
    return adapter instanceof FileSystemAdapter ? adapter.getBasePath() : null;
  }

  private serverPort(): number | null {
    try {
      const url = new URL(this.settings.serverUrl.trim());
      return url.protocol === "http:" && LOOPBACK.has(url.hostname) && url.port ? Number(url.port) : null;
    } catch {
      return null;
    }
  }

  private startHint(): string {
    const vault = this.vaultPath() ?? "<vault folder>";
    const port = this.serverPort() ?? 7878;
    return `Start it with: quire --vault "${vault}" serve --port ${port}, or turn on "Start the server automatically" in the plugin's settings.`;
  }

  /** Starts `quire serve` for this vault if the settings ask for it; null if they do not. */
  private startServer(): Promise<void> | null {
    if (!this.settings.autoStart) return null;
    const vault = this.vaultPath();
    const port = this.serverPort();
    if (!vault) return Promise.reject(new Error("This vault is not a folder on this computer."));
    if (port === null) {
      return Promise.reject(
        new Error(`The server URL must be http://127.0.0.1:PORT (with its port) for the plugin to start the server; it is "${this.settings.serverUrl}".`),
      );
    }
    return this.server.start({ binary: this.settings.quireBinary, vault, port, token: this.settings.token });
  }

  private connectionChanged(): void {
    const line = statusLine(this.connection.state, this.connection.syncing);
    // Only a changed line is written: the bar does not flicker on the repeated states a reconnection
    // or a status poll reports.
    if (this.statusEl.textContent !== line.text) this.statusEl.setText(line.text);
    this.statusEl.setAttr("aria-label", line.tooltip);
    this.statusEl.setAttr("data-tooltip-position", "top");
    for (const tone of ["ok", "busy", "down"] as const) this.statusEl.toggleClass(`is-${tone}`, line.tone === tone);
    const kind = this.connection.state.kind;
    // Connected (again): proposals may have been made while the plugin could not ask.
    if (kind === "online" && this.lastState !== "online") void this.watcher.check();
    this.lastState = kind;
    this.events.trigger("quire:state");
  }
}
