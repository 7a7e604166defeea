/**
 * What the views, modals and commands need from the plugin, so that they do not depend on the
 * plugin class (and the plugin keeps no reference to them).
 */
import type { App, Events } from "obsidian";
import type { QuireClient } from "./api";
import type { ConnectionState } from "./connection";
import type { QuireSettings } from "./settings";

/** Lines of a note, 1-based and inclusive, as the server gives them. */
export interface LineRange {
  start: number;
  end: number;
}

export interface QuireHost {
  readonly app: App;
  readonly settings: QuireSettings;
  /**
   * `quire:index` (an `index` or `sync_failed` event: kind, data) and `quire:state` (the
   * connection changed).
   */
  readonly events: Events;
  client(): QuireClient;
  connectionState(): ConnectionState;
  /** Opens a note of the vault, scrolled to `lines` when given. */
  openNote(path: string, lines?: LineRange): Promise<void>;
}
