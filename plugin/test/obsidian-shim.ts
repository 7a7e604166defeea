/**
 * The `obsidian` module in tests: exactly the part of Obsidian's API the plugin uses, working
 * enough for the plugin to run in a DOM without the app. vitest aliases `obsidian` to this file,
 * and the integration tests load the built main.js with `require("obsidian")` answered by it.
 *
 * It cannot drift from Obsidian's API unnoticed: every class `implements Pick<` the real class `,
 * members used>`, declared with the real types (from the `obsidian` package), and the
 * constructors and functions are checked against the real ones at the end of this file. A
 * member renamed or retyped in Obsidian breaks `npm run typecheck`.
 *
 * Shim objects stand in for real ones (`real<T>`) where the API hands them to the plugin. What
 * tests read or drive is named `shim…` (never part of Obsidian's API).
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import { basename, extname, join, relative, sep } from "node:path";
import type * as O from "obsidian";
import { sendRequestUrl } from "./contract";
import { installDomHelpers } from "./dom";
import { renderMarkdown } from "./markdown";

installDomHelpers();

/** A shim object as the real type the plugin expects. */
function real<T>(value: object): T {
  return value as unknown as T;
}

/** The shim object behind a value the plugin passes back. */
function shim<T>(value: unknown): T {
  return value as T;
}

type Callback = (...data: unknown[]) => unknown;

// ---- Events ----------------------------------------------------------------------------------

interface Ref {
  events: Events;
  name: string;
  callback: Callback;
}

export class Events implements Pick<O.Events, "on" | "off" | "offref" | "trigger" | "tryTrigger"> {
  readonly #handlers = new Map<string, Ref[]>();

  on(name: string, callback: (...data: never[]) => unknown): O.EventRef {
    const ref: Ref = { events: this, name, callback: callback as Callback };
    this.#handlers.set(name, [...(this.#handlers.get(name) ?? []), ref]);
    return ref;
  }

  off(name: string, callback: (...data: never[]) => unknown): void {
    this.#handlers.set(
      name,
      (this.#handlers.get(name) ?? []).filter((ref) => ref.callback !== callback),
    );
  }

  offref(ref: O.EventRef): void {
    const { name } = shim<Ref>(ref);
    this.#handlers.set(
      name,
      (this.#handlers.get(name) ?? []).filter((r) => r !== ref),
    );
  }

  trigger(name: string, ...data: unknown[]): void {
    for (const ref of this.#handlers.get(name) ?? []) ref.callback(...data);
  }

  tryTrigger(evt: O.EventRef, args: unknown[]): void {
    shim<Ref>(evt).callback(...args);
  }

  /** How many handlers listen to `name` (tests check that unloading removes them). */
  shimListeners(name: string): number {
    return this.#handlers.get(name)?.length ?? 0;
  }
}

// ---- Component ---------------------------------------------------------------------------------

export class Component
  implements
    Pick<
      O.Component,
      "load" | "onload" | "unload" | "onunload" | "addChild" | "removeChild" | "register" | "registerEvent" | "registerDomEvent" | "registerInterval"
    >
{
  #loaded = false;
  #children: Component[] = [];
  #cleanups: (() => unknown)[] = [];
  /** What `onload` returned (a plugin's is a promise). */
  shimLoading: Promise<unknown> = Promise.resolve();

  load(): void {
    if (this.#loaded) return;
    this.#loaded = true;
    this.shimLoading = Promise.resolve(this.onload() as unknown);
    for (const child of this.#children) child.load();
  }

  onload(): void {}

  unload(): void {
    if (!this.#loaded) return;
    this.#loaded = false;
    for (const child of [...this.#children].reverse()) child.unload();
    this.#children = [];
    for (const cleanup of this.#cleanups.splice(0).reverse()) cleanup();
    this.onunload();
  }

  onunload(): void {}

  addChild<T extends O.Component>(component: T): T {
    const child = shim<Component>(component);
    this.#children.push(child);
    if (this.#loaded) child.load();
    return component;
  }

  removeChild<T extends O.Component>(component: T): T {
    const child = shim<Component>(component);
    const at = this.#children.indexOf(child);
    if (at >= 0) {
      this.#children.splice(at, 1);
      child.unload();
    }
    return component;
  }

  register(cb: () => unknown): void {
    this.#cleanups.push(cb);
  }

  registerEvent(eventRef: O.EventRef): void {
    this.register(() => shim<Ref>(eventRef).events.offref(eventRef));
  }

  registerDomEvent(
    el: Window | Document | HTMLElement,
    type: string,
    callback: (this: HTMLElement, ev: never) => unknown,
    options?: boolean | AddEventListenerOptions,
  ): void {
    const listener = callback as unknown as EventListener;
    el.addEventListener(type, listener, options);
    this.register(() => el.removeEventListener(type, listener, options));
  }

  registerInterval(id: number): number {
    this.register(() => window.clearInterval(id));
    return id;
  }

  get shimLoaded(): boolean {
    return this.#loaded;
  }
}

// ---- Files and the vault ----------------------------------------------------------------------

export abstract class TAbstractFile implements Pick<O.TAbstractFile, "path" | "name"> {
  constructor(
    public path: string,
    public name: string,
  ) {}
}

export class TFile extends TAbstractFile implements Pick<O.TFile, "path" | "name" | "basename" | "extension"> {
  basename: string;
  extension: string;

  constructor(path: string) {
    super(path, basename(path));
    this.extension = extname(path).slice(1);
    this.basename = basename(path, extname(path));
  }
}

export class FileSystemAdapter implements Pick<O.FileSystemAdapter, "getBasePath" | "getName"> {
  constructor(private readonly root: string) {}

  getBasePath(): string {
    return this.root;
  }

  getName(): string {
    return basename(this.root);
  }
}

export class Vault extends Events implements Pick<O.Vault, "adapter" | "getName" | "getFileByPath" | "read"> {
  adapter: O.DataAdapter;
  readonly #files = new Map<string, TFile>();

  constructor(readonly shimRoot: string) {
    super();
    this.adapter = real<O.DataAdapter>(new FileSystemAdapter(shimRoot));
  }

  getName(): string {
    return basename(this.shimRoot);
  }

  getFileByPath(path: string): O.TFile | null {
    const full = join(this.shimRoot, path);
    if (relative(this.shimRoot, full).startsWith("..") || !existsSync(full) || !statSync(full).isFile()) return null;
    let file = this.#files.get(path);
    if (!file) {
      file = new TFile(path.split(sep).join("/"));
      this.#files.set(path, file);
    }
    return real<O.TFile>(file);
  }

  read(file: O.TFile): Promise<string> {
    return Promise.resolve(readFileSync(join(this.shimRoot, file.path), "utf8"));
  }
}

/** The vault-relative paths of the files under `root`, notes and attachments (dot folders left out, as Obsidian does). */
function filePaths(root: string, folder = ""): string[] {
  const paths: string[] = [];
  for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
    if (entry.name.startsWith(".")) continue;
    const path = folder ? `${folder}/${entry.name}` : entry.name;
    if (entry.isDirectory()) paths.push(...filePaths(root, path));
    else paths.push(path);
  }
  return paths;
}

/** The name a link gives a file: a note's without `.md`, an attachment's with its extension (`Kelp.pdf`). */
function linkName(path: string): string {
  return path.endsWith(".md") ? basename(path, ".md") : basename(path);
}

// ---- The editor --------------------------------------------------------------------------------

/** One change as the editor recorded it: a transaction or a replaceRange. */
export interface EditorRecord {
  kind: "transaction" | "replaceRange";
  changes: O.EditorChange[];
  origin?: string;
}

export class Editor
  implements
    Pick<
      O.Editor,
      | "getValue"
      | "setValue"
      | "getLine"
      | "lineCount"
      | "lastLine"
      | "getRange"
      | "getCursor"
      | "setCursor"
      | "setSelection"
      | "replaceRange"
      | "transaction"
      | "scrollIntoView"
      | "undo"
      | "focus"
    >
{
  #text: string;
  #anchor: O.EditorPosition = { line: 0, ch: 0 };
  #head: O.EditorPosition = { line: 0, ch: 0 };
  /** The text before each change, for undo. */
  readonly #undo: string[] = [];
  /** Every change made through the editor, in order. */
  readonly shimRecords: EditorRecord[] = [];
  /** The last range scrolled into view. */
  shimScrolledTo: { range: O.EditorRange; center: boolean } | null = null;

  constructor(text: string) {
    this.#text = text;
  }

  #lines(): string[] {
    return this.#text.split("\n");
  }

  #offset(pos: O.EditorPosition): number {
    const lines = this.#lines();
    const line = Math.max(0, Math.min(pos.line, lines.length - 1));
    let offset = 0;
    for (let i = 0; i < line; i++) offset += (lines[i] ?? "").length + 1;
    return offset + Math.max(0, Math.min(pos.ch, (lines[line] ?? "").length));
  }

  getValue(): string {
    return this.#text;
  }

  setValue(content: string): void {
    this.#text = content;
  }

  getLine(line: number): string {
    return this.#lines()[line] ?? "";
  }

  lineCount(): number {
    return this.#lines().length;
  }

  lastLine(): number {
    return this.lineCount() - 1;
  }

  getRange(from: O.EditorPosition, to: O.EditorPosition): string {
    return this.#text.slice(this.#offset(from), this.#offset(to));
  }

  getCursor(side?: "from" | "to" | "head" | "anchor"): O.EditorPosition {
    const [from, to] = this.#offset(this.#anchor) <= this.#offset(this.#head) ? [this.#anchor, this.#head] : [this.#head, this.#anchor];
    const pos = side === "anchor" ? this.#anchor : side === "from" ? from : side === "to" ? to : this.#head;
    return { ...pos };
  }

  setCursor(pos: O.EditorPosition | number, ch?: number): void {
    const at = typeof pos === "number" ? { line: pos, ch: ch ?? 0 } : pos;
    this.#anchor = { ...at };
    this.#head = { ...at };
  }

  setSelection(anchor: O.EditorPosition, head?: O.EditorPosition): void {
    this.#anchor = { ...anchor };
    this.#head = { ...(head ?? anchor) };
  }

  /** Applies changes whose positions refer to the text before all of them, as CodeMirror does. */
  #apply(changes: readonly O.EditorChange[]): void {
    const ranges = changes
      .map((change) => ({ from: this.#offset(change.from), to: this.#offset(change.to ?? change.from), text: change.text }))
      .sort((a, b) => b.from - a.from);
    let text = this.#text;
    for (const range of ranges) text = text.slice(0, range.from) + range.text + text.slice(range.to);
    this.#undo.push(this.#text);
    this.#text = text;
  }

  replaceRange(replacement: string, from: O.EditorPosition, to?: O.EditorPosition, origin?: string): void {
    const change: O.EditorChange = to ? { from, to, text: replacement } : { from, text: replacement };
    this.#apply([change]);
    this.shimRecords.push({ kind: "replaceRange", changes: [change], origin });
  }

  transaction(tx: O.EditorTransaction, origin?: string): void {
    const changes = tx.changes ?? [];
    this.#apply(changes);
    this.shimRecords.push({ kind: "transaction", changes, origin });
    if (tx.selection) this.setSelection(tx.selection.from, tx.selection.to);
  }

  scrollIntoView(range: O.EditorRange, center?: boolean): void {
    this.shimScrolledTo = { range, center: center ?? false };
  }

  /** Takes back the last change: one transaction is one step, as in Obsidian. */
  undo(): void {
    const before = this.#undo.pop();
    if (before !== undefined) this.#text = before;
  }

  focus(): void {}
}

// ---- Views and leaves --------------------------------------------------------------------------

export abstract class View
  extends Component
  implements Pick<O.View, "app" | "leaf" | "containerEl" | "icon" | "navigation" | "getViewType" | "getDisplayText" | "getIcon">
{
  app: O.App;
  leaf: O.WorkspaceLeaf;
  containerEl: HTMLElement;
  icon = "";
  navigation = false;

  constructor(leaf: O.WorkspaceLeaf) {
    super();
    this.leaf = leaf;
    this.app = shim<WorkspaceLeaf>(leaf).shimApp;
    this.containerEl = createDiv({ cls: "workspace-leaf-content" });
  }

  protected async onOpen(): Promise<void> {}

  protected async onClose(): Promise<void> {}

  abstract getViewType(): string;

  abstract getDisplayText(): string;

  getIcon(): O.IconName {
    return this.icon;
  }

  /** Opens the view as a leaf does: loads it, then `onOpen`. */
  async shimOpen(): Promise<void> {
    this.containerEl.querySelector(".view-header")?.setText(this.getDisplayText());
    this.load();
    await this.onOpen();
  }

  async shimClose(): Promise<void> {
    await this.onClose();
    this.unload();
  }
}

export abstract class ItemView extends View implements Pick<O.ItemView, "contentEl"> {
  contentEl: HTMLElement;

  constructor(leaf: O.WorkspaceLeaf) {
    super(leaf);
    this.containerEl.createDiv({ cls: "view-header" });
    this.contentEl = this.containerEl.createDiv({ cls: "view-content" });
  }
}

class EmptyView extends ItemView {
  getViewType(): string {
    return "empty";
  }

  getDisplayText(): string {
    return "New tab";
  }
}

export class MarkdownView
  extends View
  implements Pick<O.MarkdownView, "editor" | "file" | "getViewType" | "getDisplayText" | "getViewData" | "setViewData" | "save">
{
  editor: O.Editor;
  file: O.TFile | null = null;
  readonly shimEditor: Editor;
  /** The text last loaded from or saved to the file: the editor holds unsaved changes when it differs. */
  #saved: string;
  /** How many times `save` wrote the file. */
  shimWrites = 0;

  constructor(leaf: O.WorkspaceLeaf, text = "") {
    super(leaf);
    this.shimEditor = new Editor(text);
    this.editor = real<O.Editor>(this.shimEditor);
    this.#saved = text;
  }

  getViewData(): string {
    return this.shimEditor.getValue();
  }

  /** Loads `data` into the editor as the file's content (nothing unsaved after it). */
  setViewData(data: string, clear: boolean): void {
    this.shimEditor.setValue(data);
    this.#saved = data;
  }

  /** Writes what the editor holds to the file when it holds unsaved changes, as Obsidian's save does. */
  save(clear?: boolean): Promise<void> {
    const text = this.getViewData();
    if (this.file && text !== this.#saved) {
      writeFileSync(join(shim<App>(this.app).shimVault.shimRoot, this.file.path), text);
      this.#saved = text;
      this.shimWrites++;
    }
    return Promise.resolve();
  }

  getViewType(): string {
    return "markdown";
  }

  getDisplayText(): string {
    return this.file?.basename ?? "";
  }
}

/**
 * A PDF open in a leaf, as Obsidian's PDF viewer shows it (a file view of type `pdf`): the shim
 * reads nothing of it. The page it was opened at is its leaf's `shimEState.subpath` (`#page=2`).
 */
export class PdfView extends View implements Pick<O.FileView, "file" | "getViewType" | "getDisplayText"> {
  file: O.TFile | null = null;

  getViewType(): string {
    return "pdf";
  }

  getDisplayText(): string {
    return this.file?.basename ?? "";
  }
}

export class WorkspaceLeaf extends Events implements Pick<O.WorkspaceLeaf, "view" | "openFile" | "setViewState" | "getViewState" | "detach"> {
  view: O.View;
  /** The ephemeral state the leaf was last opened with (`{line}` to scroll to a line). */
  shimEState: Record<string, unknown> | undefined;
  /** The leaf this one was split off from by createLeafBySplit, and how (`vertical`: to its right). */
  shimSplit: { from: WorkspaceLeaf; direction: O.SplitDirection; before: boolean } | undefined;

  constructor(
    readonly shimApp: O.App,
    readonly shimSide: "main" | "right",
  ) {
    super();
    this.view = real<O.View>(new EmptyView(real<O.WorkspaceLeaf>(this)));
  }

  get shimView(): View {
    return shim<View>(this.view);
  }

  async #replaceView(view: View): Promise<void> {
    await this.shimView.shimClose();
    this.view = real<O.View>(view);
    await view.shimOpen();
  }

  /** Opens a file: a PDF in a PDF view, anything else as text in a Markdown view. */
  async openFile(file: O.TFile, openState?: O.OpenViewState): Promise<void> {
    const app = shim<App>(this.shimApp);
    const leaf = real<O.WorkspaceLeaf>(this);
    const view = file.extension === "pdf" ? new PdfView(leaf) : new MarkdownView(leaf, readFileSync(join(app.shimVault.shimRoot, file.path), "utf8"));
    view.file = file;
    await this.#replaceView(view);
    this.shimEState = openState?.eState;
    if (view instanceof MarkdownView && typeof openState?.eState?.line === "number") view.shimEditor.setCursor({ line: openState.eState.line, ch: 0 });
    app.shimWorkspace.shimSetActive(this);
    app.shimWorkspace.trigger("file-open", file);
  }

  async setViewState(viewState: O.ViewState): Promise<void> {
    const app = shim<App>(this.shimApp);
    const create = app.shimViewCreators.get(viewState.type);
    if (!create) throw new Error(`no view of type ${viewState.type} is registered`);
    await this.#replaceView(shim<View>(create(real<O.WorkspaceLeaf>(this))));
    if (viewState.active) app.shimWorkspace.shimSetActive(this);
  }

  getViewState(): O.ViewState {
    return { type: this.view.getViewType() };
  }

  detach(): void {
    void this.shimView.shimClose();
    shim<App>(this.shimApp).shimWorkspace.shimRemove(this);
  }
}

export class Workspace
  extends Events
  implements
    Pick<
      O.Workspace,
      "getActiveFile" | "getActiveViewOfType" | "getLeaf" | "getLeavesOfType" | "getRightLeaf" | "createLeafBySplit" | "revealLeaf" | "onLayoutReady" | "openLinkText"
    >
{
  readonly #app: O.App;
  #leaves: WorkspaceLeaf[] = [];
  #active: WorkspaceLeaf | null = null;
  /** The last leaf of the main area that was active. */
  #lastMain: WorkspaceLeaf | null = null;
  #ready = false;
  #readyCallbacks: (() => unknown)[] = [];
  /** The leaves revealed, in order. */
  readonly shimRevealed: WorkspaceLeaf[] = [];
  /** The link texts opened with openLinkText, in order. */
  readonly shimLinksOpened: string[] = [];

  constructor(app: O.App) {
    super();
    this.#app = app;
  }

  getActiveFile(): O.TFile | null {
    const view = this.#lastMain?.view;
    return view instanceof MarkdownView || view instanceof PdfView ? view.file : null;
  }

  getActiveViewOfType<T extends O.View>(type: O.Constructor<T>): T | null {
    const view = this.#active?.view;
    return view instanceof type ? view : null;
  }

  getLeaf(newLeaf?: O.PaneType | boolean): O.WorkspaceLeaf {
    if (!newLeaf && this.#lastMain) return real<O.WorkspaceLeaf>(this.#lastMain);
    return real<O.WorkspaceLeaf>(this.#add("main"));
  }

  getLeavesOfType(viewType: string): O.WorkspaceLeaf[] {
    return this.#leaves.filter((leaf) => leaf.view.getViewType() === viewType).map((leaf) => real<O.WorkspaceLeaf>(leaf));
  }

  getRightLeaf(split: boolean): O.WorkspaceLeaf | null {
    return real<O.WorkspaceLeaf>(this.#add("right"));
  }

  /** A new leaf beside `leaf`, on the same side (Obsidian's default direction is vertical: to its right). */
  createLeafBySplit(leaf: O.WorkspaceLeaf, direction?: O.SplitDirection, before?: boolean): O.WorkspaceLeaf {
    const from = shim<WorkspaceLeaf>(leaf);
    const created = this.#add(from.shimSide);
    created.shimSplit = { from, direction: direction ?? "vertical", before: before ?? false };
    return real<O.WorkspaceLeaf>(created);
  }

  revealLeaf(leaf: O.WorkspaceLeaf): Promise<void> {
    this.shimRevealed.push(shim<WorkspaceLeaf>(leaf));
    return Promise.resolve();
  }

  onLayoutReady(callback: () => unknown): void {
    if (this.#ready) callback();
    else this.#readyCallbacks.push(callback);
  }

  /**
   * Opens the file a wikilink names (`Note`, `Folder/Note`, `Note#Heading`, `Papers/Kelp.pdf#page=2`),
   * resolved as Obsidian resolves links: the exact path, else the file of that name (a note's
   * without `.md`) with the shortest path. The part after `#` is passed on as the ephemeral state's
   * `subpath`, as Obsidian does (a PDF opens at `#page=N`). Obsidian creates a note for a link to
   * none; the shim never writes the vault, so it throws.
   */
  async openLinkText(linktext: string, sourcePath: string, newLeaf?: O.PaneType | boolean, openViewState?: O.OpenViewState): Promise<void> {
    const [linkpath = "", ...rest] = linktext.split("#");
    const vault = shim<App>(this.#app).shimVault;
    const files = filePaths(vault.shimRoot);
    const wanted = linkpath.toLowerCase();
    const path =
      files.find((p) => p === linkpath || p === `${linkpath}.md`) ??
      files
        .filter((p) => linkName(p).toLowerCase() === wanted)
        .sort((a, b) => a.length - b.length)[0];
    const file = path ? vault.getFileByPath(path) : null;
    if (!file) throw new Error(`the shim does not create notes: no note for [[${linktext}]]`);
    this.shimLinksOpened.push(linktext);
    const subpath = rest.length ? `#${rest.join("#")}` : undefined;
    const state = subpath ? { ...openViewState, eState: { ...openViewState?.eState, subpath } } : openViewState;
    await this.getLeaf(newLeaf).openFile(file, state);
  }

  #add(side: "main" | "right"): WorkspaceLeaf {
    const leaf = new WorkspaceLeaf(this.#app, side);
    this.#leaves.push(leaf);
    return leaf;
  }

  shimSetActive(leaf: WorkspaceLeaf): void {
    this.#active = leaf;
    if (leaf.shimSide === "main") this.#lastMain = leaf;
    this.trigger("active-leaf-change", leaf);
  }

  shimRemove(leaf: WorkspaceLeaf): void {
    this.#leaves = this.#leaves.filter((l) => l !== leaf);
    if (this.#active === leaf) this.#active = null;
    if (this.#lastMain === leaf) this.#lastMain = null;
  }

  /** The layout is ready: runs what waited for it, as Obsidian does once the vault is loaded. */
  shimLayoutReady(): void {
    this.#ready = true;
    for (const callback of this.#readyCallbacks.splice(0)) callback();
  }

  get shimLeaves(): WorkspaceLeaf[] {
    return [...this.#leaves];
  }

  get shimActiveLeaf(): WorkspaceLeaf | null {
    return this.#active;
  }
}

// ---- The app and the plugin ---------------------------------------------------------------------

export class App implements Pick<O.App, "workspace" | "vault"> {
  workspace: O.Workspace;
  vault: O.Vault;
  readonly shimWorkspace: Workspace;
  readonly shimVault: Vault;
  readonly shimCommands = new Map<string, O.Command>();
  readonly shimViewCreators = new Map<string, O.ViewCreator>();
  readonly shimSettingTabs: PluginSettingTab[] = [];
  readonly shimStatusBarEl: HTMLElement;
  readonly shimRibbonEl: HTMLElement;
  /** What the plugin's loadData returns, and saveData stored. */
  shimData: unknown = null;

  constructor(vaultRoot: string) {
    this.shimVault = new Vault(vaultRoot);
    this.vault = real<O.Vault>(this.shimVault);
    this.shimWorkspace = new Workspace(real<O.App>(this));
    this.workspace = real<O.Workspace>(this.shimWorkspace);
    this.shimStatusBarEl = document.body.createDiv({ cls: "status-bar" });
    this.shimRibbonEl = document.body.createDiv({ cls: "side-dock-ribbon" });
  }

  /** Runs a command as the palette does; an editor command runs in the active Markdown view. */
  shimRunCommand(id: string): unknown {
    const command = this.shimCommands.get(id);
    if (!command) throw new Error(`no command ${id}`);
    if (command.editorCallback) {
      const view = this.shimWorkspace.getActiveViewOfType(real<O.Constructor<O.MarkdownView>>(MarkdownView));
      if (!view) throw new Error(`${id} needs an active Markdown view`);
      return command.editorCallback(view.editor, view);
    }
    return command.callback?.();
  }
}

export class Plugin
  extends Component
  implements
    Pick<O.Plugin, "app" | "manifest" | "loadData" | "saveData" | "addCommand" | "addRibbonIcon" | "addStatusBarItem" | "addSettingTab" | "registerView">
{
  app: O.App;
  manifest: O.PluginManifest;

  constructor(app: O.App, manifest: O.PluginManifest) {
    super();
    this.app = app;
    this.manifest = manifest;
  }

  get #shimApp(): App {
    return shim<App>(this.app);
  }

  loadData(): Promise<unknown> {
    return Promise.resolve(structuredClone(this.#shimApp.shimData));
  }

  saveData(data: unknown): Promise<void> {
    this.#shimApp.shimData = structuredClone(data);
    return Promise.resolve();
  }

  addCommand(command: O.Command): O.Command {
    const full = { ...command, id: `${this.manifest.id}:${command.id}` };
    this.#shimApp.shimCommands.set(full.id, full);
    this.register(() => this.#shimApp.shimCommands.delete(full.id));
    return full;
  }

  addRibbonIcon(icon: O.IconName, title: string, callback: (evt: MouseEvent) => unknown): HTMLElement {
    const el = this.#shimApp.shimRibbonEl.createDiv({ cls: "side-dock-ribbon-action", attr: { "aria-label": title } });
    setIcon(el, icon);
    el.addEventListener("click", (event) => void callback(event));
    this.register(() => el.detach());
    return el;
  }

  addStatusBarItem(): HTMLElement {
    const el = this.#shimApp.shimStatusBarEl.createDiv({ cls: "status-bar-item" });
    this.register(() => el.detach());
    return el;
  }

  addSettingTab(settingTab: O.PluginSettingTab): void {
    this.#shimApp.shimSettingTabs.push(shim<PluginSettingTab>(settingTab));
  }

  registerView(type: string, viewCreator: O.ViewCreator): void {
    this.#shimApp.shimViewCreators.set(type, viewCreator);
    this.register(() => this.#shimApp.shimViewCreators.delete(type));
  }
}

// ---- Modals and notices -------------------------------------------------------------------------

export class Modal implements Pick<O.Modal, "app" | "containerEl" | "modalEl" | "titleEl" | "contentEl" | "open" | "close" | "onOpen" | "onClose" | "setTitle"> {
  app: O.App;
  containerEl: HTMLElement;
  modalEl: HTMLElement;
  titleEl: HTMLElement;
  contentEl: HTMLElement;
  /** The modals open now, oldest first. */
  static readonly shimOpen: Modal[] = [];

  constructor(app: O.App) {
    this.app = app;
    this.containerEl = createDiv({ cls: "modal-container" });
    this.containerEl.createDiv({ cls: "modal-bg" });
    this.modalEl = this.containerEl.createDiv({ cls: "modal" });
    this.modalEl.createDiv({ cls: "modal-close-button" }).addEventListener("click", () => this.close());
    this.titleEl = this.modalEl.createDiv({ cls: "modal-header" }).createDiv({ cls: "modal-title" });
    this.contentEl = this.modalEl.createDiv({ cls: "modal-content" });
  }

  open(): void {
    document.body.appendChild(this.containerEl);
    Modal.shimOpen.push(this);
    void this.onOpen();
  }

  close(): void {
    const at = Modal.shimOpen.indexOf(this);
    if (at < 0) return;
    Modal.shimOpen.splice(at, 1);
    this.containerEl.detach();
    this.onClose();
  }

  onOpen(): Promise<void> | void {}

  onClose(): void {}

  setTitle(title: string): O.Modal {
    this.titleEl.setText(title);
    return real<O.Modal>(this);
  }
}

export class Notice implements Pick<O.Notice, "containerEl" | "messageEl" | "setMessage" | "hide"> {
  containerEl: HTMLElement;
  messageEl: HTMLElement;
  /** Every notice shown, oldest first. */
  static readonly shimShown: Notice[] = [];

  constructor(
    message: string | DocumentFragment,
    readonly shimDuration?: number,
  ) {
    this.containerEl = document.body.createDiv({ cls: "notice-container" });
    this.messageEl = this.containerEl.createDiv({ cls: "notice" }).createDiv({ cls: "notice-message" });
    this.setMessage(message);
    Notice.shimShown.push(this);
  }

  setMessage(message: string | DocumentFragment): O.Notice {
    this.messageEl.setText(message);
    return real<O.Notice>(this);
  }

  hide(): void {
    this.containerEl.detach();
  }

  get shimText(): string {
    return this.messageEl.textContent ?? "";
  }
}

// ---- Menus ----------------------------------------------------------------------------------

export class MenuItem implements Pick<O.MenuItem, "setTitle" | "setIcon" | "onClick" | "setSection"> {
  shimTitle = "";
  shimIcon: string | null = null;
  shimCallback: ((evt: MouseEvent | KeyboardEvent) => unknown) | null = null;

  setTitle(title: string | DocumentFragment): O.MenuItem {
    this.shimTitle = typeof title === "string" ? title : (title.textContent ?? "");
    return real<O.MenuItem>(this);
  }

  setIcon(icon: O.IconName | null): O.MenuItem {
    this.shimIcon = icon;
    return real<O.MenuItem>(this);
  }

  onClick(callback: (evt: MouseEvent | KeyboardEvent) => unknown): O.MenuItem {
    this.shimCallback = callback;
    return real<O.MenuItem>(this);
  }

  setSection(section: string): O.MenuItem {
    return real<O.MenuItem>(this);
  }

  /** Clicks the item. */
  shimClick(): unknown {
    return this.shimCallback?.(new MouseEvent("click"));
  }
}

export class Menu extends Component implements Pick<O.Menu, "addItem"> {
  readonly shimItems: MenuItem[] = [];

  addItem(cb: (item: O.MenuItem) => unknown): O.Menu {
    const item = new MenuItem();
    this.shimItems.push(item);
    cb(real<O.MenuItem>(item));
    return real<O.Menu>(this);
  }
}

// ---- Settings ---------------------------------------------------------------------------------

export class TextComponent implements Pick<O.TextComponent, "inputEl" | "getValue" | "setValue" | "setPlaceholder" | "onChange"> {
  inputEl: HTMLInputElement;

  constructor(containerEl: HTMLElement) {
    this.inputEl = containerEl.createEl("input", { type: "text" });
  }

  getValue(): string {
    return this.inputEl.value;
  }

  setValue(value: string): O.TextComponent {
    this.inputEl.value = value;
    return real<O.TextComponent>(this);
  }

  setPlaceholder(placeholder: string): O.TextComponent {
    this.inputEl.placeholder = placeholder;
    return real<O.TextComponent>(this);
  }

  onChange(callback: (value: string) => unknown): O.TextComponent {
    this.inputEl.addEventListener("input", () => void callback(this.inputEl.value));
    return real<O.TextComponent>(this);
  }
}

export class ToggleComponent implements Pick<O.ToggleComponent, "toggleEl" | "getValue" | "setValue" | "onChange"> {
  toggleEl: HTMLElement;
  #on = false;
  #callbacks: ((value: boolean) => unknown)[] = [];

  constructor(containerEl: HTMLElement) {
    this.toggleEl = containerEl.createDiv({ cls: "checkbox-container" });
    this.toggleEl.addEventListener("click", () => {
      this.setValue(!this.#on);
      for (const callback of this.#callbacks) void callback(this.#on);
    });
  }

  getValue(): boolean {
    return this.#on;
  }

  setValue(on: boolean): O.ToggleComponent {
    this.#on = on;
    this.toggleEl.toggleClass("is-enabled", on);
    return real<O.ToggleComponent>(this);
  }

  onChange(callback: (value: boolean) => unknown): O.ToggleComponent {
    this.#callbacks.push(callback);
    return real<O.ToggleComponent>(this);
  }
}

export class DropdownComponent implements Pick<O.DropdownComponent, "selectEl" | "addOption" | "addOptions" | "getValue" | "setValue" | "onChange"> {
  selectEl: HTMLSelectElement;

  constructor(containerEl: HTMLElement) {
    this.selectEl = containerEl.createEl("select", { cls: "dropdown" });
  }

  addOption(value: string, display: string): O.DropdownComponent {
    this.selectEl.createEl("option", { text: display, value });
    return real<O.DropdownComponent>(this);
  }

  addOptions(options: Record<string, string>): O.DropdownComponent {
    for (const [value, display] of Object.entries(options)) this.addOption(value, display);
    return real<O.DropdownComponent>(this);
  }

  getValue(): string {
    return this.selectEl.value;
  }

  setValue(value: string): O.DropdownComponent {
    this.selectEl.value = value;
    return real<O.DropdownComponent>(this);
  }

  onChange(callback: (value: string) => unknown): O.DropdownComponent {
    this.selectEl.addEventListener("change", () => void callback(this.selectEl.value));
    return real<O.DropdownComponent>(this);
  }
}

export class Setting implements Pick<O.Setting, "settingEl" | "infoEl" | "nameEl" | "descEl" | "controlEl" | "setName" | "setDesc" | "addText" | "addToggle" | "addDropdown"> {
  settingEl: HTMLElement;
  infoEl: HTMLElement;
  nameEl: HTMLElement;
  descEl: HTMLElement;
  controlEl: HTMLElement;

  constructor(containerEl: HTMLElement) {
    this.settingEl = containerEl.createDiv({ cls: "setting-item" });
    this.infoEl = this.settingEl.createDiv({ cls: "setting-item-info" });
    this.nameEl = this.infoEl.createDiv({ cls: "setting-item-name" });
    this.descEl = this.infoEl.createDiv({ cls: "setting-item-description" });
    this.controlEl = this.settingEl.createDiv({ cls: "setting-item-control" });
  }

  setName(name: string | DocumentFragment): O.Setting {
    this.nameEl.setText(name);
    return real<O.Setting>(this);
  }

  setDesc(desc: string | DocumentFragment): O.Setting {
    this.descEl.setText(desc);
    return real<O.Setting>(this);
  }

  addText(cb: (component: O.TextComponent) => unknown): O.Setting {
    cb(real<O.TextComponent>(new TextComponent(this.controlEl)));
    return real<O.Setting>(this);
  }

  addToggle(cb: (component: O.ToggleComponent) => unknown): O.Setting {
    cb(real<O.ToggleComponent>(new ToggleComponent(this.controlEl)));
    return real<O.Setting>(this);
  }

  addDropdown(cb: (component: O.DropdownComponent) => unknown): O.Setting {
    cb(real<O.DropdownComponent>(new DropdownComponent(this.controlEl)));
    return real<O.Setting>(this);
  }
}

export abstract class PluginSettingTab
  implements Pick<O.PluginSettingTab, "app" | "containerEl" | "getSettingDefinitions" | "getControlValue" | "setControlValue" | "hide">
{
  app: O.App;
  containerEl: HTMLElement;

  constructor(
    app: O.App,
    readonly shimPlugin: O.Plugin,
  ) {
    this.app = app;
    this.containerEl = createDiv({ cls: "vertical-tab-content" });
  }

  getSettingDefinitions(): O.SettingDefinitionItem[] {
    return [];
  }

  // Obsidian's defaults read and write the plugin's `settings`; the plugin overrides both.
  getControlValue(key: string): unknown {
    throw new Error(`the plugin's tab reads ${key} itself`);
  }

  setControlValue(key: string, value: unknown): void | Promise<void> {
    throw new Error(`the plugin's tab saves ${key} itself`);
  }

  /** Draws the tab imperatively: what Obsidian before 1.13 calls. */
  display(): void {}

  /** Opens the tab as Obsidian before 1.13 does: by calling `display()`. */
  shimOpenBefore113(): void {
    this.containerEl.empty();
    this.display();
  }

  hide(): void {
    this.containerEl.empty();
  }
}

// ---- Functions -----------------------------------------------------------------------------------

export class MarkdownRenderer {
  /** Renders with test/markdown.ts, a small stand-in for Obsidian's renderer. */
  static render(app: O.App, markdown: string, el: HTMLElement, sourcePath: string, component: O.Component): Promise<void> {
    renderMarkdown(markdown, el);
    return Promise.resolve();
  }
}

/** Marks the element with the icon's name (the app draws a Lucide icon). */
export const setIcon: typeof O.setIcon = (parent, iconId) => {
  parent.empty();
  parent.addClass("svg-icon-host");
  parent.setAttr("data-icon", iconId);
};

function headerRecord(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

function request(param: O.RequestUrlParam): Promise<O.RequestUrlResponse> {
  return new Promise((resolve, reject) => {
    const url = new URL(param.url);
    const transport = url.protocol === "https:" ? https : http;
    const headers: Record<string, string> = { ...param.headers };
    if (param.contentType) headers["Content-Type"] = param.contentType;
    const body = typeof param.body === "string" ? param.body : param.body ? Buffer.from(param.body) : undefined;
    const req = transport.request(url, { method: param.method ?? "GET", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () => {
        const data = Buffer.concat(chunks);
        const status = res.statusCode ?? 0;
        const text = data.toString("utf8");
        const response: O.RequestUrlResponse = {
          status,
          headers: headerRecord(res.headers),
          arrayBuffer: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength),
          get json(): unknown {
            return JSON.parse(text) as unknown;
          },
          text,
        };
        // Like Obsidian: a status of 400 or more is an error unless `throw: false`.
        if (status >= 400 && param.throw !== false) reject(new Error(`Request failed, status ${status}`));
        else resolve(response);
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

export const requestUrl: typeof O.requestUrl = (param) => {
  const asked = typeof param === "string" ? { url: param } : param;
  // Sent through the check against quire's OpenAPI document (contract.ts).
  const promise = sendRequestUrl(asked, () => request(asked));
  return Object.defineProperties(promise, {
    json: { get: () => promise.then((r) => r.json as unknown) },
    text: { get: () => promise.then((r) => r.text) },
    arrayBuffer: { get: () => promise.then((r) => r.arrayBuffer) },
  }) as O.RequestUrlResponsePromise;
};

// ---- The checks that keep the shim true to Obsidian's API -------------------------------------

/** True when A and B are the same type. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Ctor = abstract new (...args: never[]) => unknown;
type SameConstructor<Real extends Ctor, Shim extends Ctor> = Same<ConstructorParameters<Real>, ConstructorParameters<Shim>>;

/** Each constructor takes what Obsidian's takes. */
export const constructorsMatch: [
  SameConstructor<typeof O.Component, typeof Component>,
  SameConstructor<typeof O.Plugin, typeof Plugin>,
  SameConstructor<typeof O.View, typeof View>,
  SameConstructor<typeof O.ItemView, typeof ItemView>,
  SameConstructor<typeof O.Modal, typeof Modal>,
  SameConstructor<typeof O.Notice, typeof Notice>,
  SameConstructor<typeof O.Setting, typeof Setting>,
  SameConstructor<typeof O.PluginSettingTab, typeof PluginSettingTab>,
  SameConstructor<typeof O.TextComponent, typeof TextComponent>,
  SameConstructor<typeof O.ToggleComponent, typeof ToggleComponent>,
  SameConstructor<typeof O.DropdownComponent, typeof DropdownComponent>,
  SameConstructor<typeof O.Events, typeof Events>,
] = [true, true, true, true, true, true, true, true, true, true, true, true];

/**
 * The static and free functions have Obsidian's types; so does `display` (deprecated since 1.13,
 * so it is checked here rather than through `implements`, which would pass the deprecation on).
 */
export const functionsMatch: [
  Same<typeof MarkdownRenderer.render, typeof O.MarkdownRenderer.render>,
  Same<PluginSettingTab["display"], O.PluginSettingTab["display"]>,
] = [true, true];
