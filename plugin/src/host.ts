/**
 * What the views, modals and commands need from the plugin, so that they do not depend on the
 * plugin class (and the plugin keeps no reference to them).
 */
import type { App, Events } from "obsidian";
import type { ProposalSummary, QuireClient, UnreadableProposal } from "./api";
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
   * `quire:index` (an `index` or `sync_failed` event: kind, data), `quire:state` (the
   * connection changed) and `quire:proposals` (the pending proposals were read again).
   */
  readonly events: Events;
  client(): QuireClient;
  connectionState(): ConnectionState;
  /** The pending proposals as last read from the server, newest first. */
  proposals(): readonly ProposalSummary[];
  /** Stored proposals the server could not read (left out of `proposals()`), as last read. */
  unreadableProposals(): readonly UnreadableProposal[];
  /** Reads the pending proposals again (a notice says when new ones arrived). */
  checkProposals(): Promise<void>;
  /**
   * Shows proposals the user just made (a writing tool's, a saved conversation): the list is
   * read again without a notice of them, and the proposals pane opens, on `id` when given.
   */
  reviewNewProposals(ids: readonly string[], id?: string): Promise<void>;
  /** Opens a note of the vault, scrolled to `lines` when given. */
  openNote(path: string, lines?: LineRange): Promise<void>;
  /** Opens the ask view and asks `question` there (in its conversation). */
  askQuestion(question: string): Promise<void>;
  /** Changes settings and saves them. */
  updateSettings(change: Partial<QuireSettings>): Promise<void>;
}
