/**
 * Noticing proposals made while Obsidian is open (by an MCP client, a batch run, a second
 * device): the server sends no event for them, so the plugin asks `GET /api/proposals` now and
 * then — every while, when the connection comes up, and after each index event — never per
 * keystroke. The first list of a server is the baseline; an id not seen before after it is new.
 */
import type { ProposalSummary, QuireClient, UnreadableProposal } from "./api";

export interface WatchHost {
  client(): QuireClient;
  /** Whether the server is up (no request is sent when it is not). */
  online(): boolean;
  /** The pending proposals, after each check that read them. */
  changed(pending: readonly ProposalSummary[]): void;
  /** Proposals not seen before, newest first. */
  arrived(fresh: readonly ProposalSummary[]): void;
}

export class ProposalWatcher {
  /** The pending proposals as last read, newest first. */
  pending: readonly ProposalSummary[] = [];
  /** Stored proposals the server could not read, as last read. */
  unreadable: readonly UnreadableProposal[] = [];
  /** The ids seen from the server at `source`; null until its first list. */
  private seen: Set<string> | null = null;
  private source: string | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(private readonly host: WatchHost) {}

  stop(): void {
    this.stopped = true;
  }

  /** Proposals the user just asked for (a writing tool's): not news when the next check reads them. */
  markSeen(ids: readonly string[]): void {
    if (this.seen) for (const id of ids) this.seen.add(id);
  }

  /**
   * Reads the pending proposals. A check asked for while one runs runs once more after it (so a
   * proposal made meanwhile is seen), and both callers wait for that.
   */
  check(): Promise<void> {
    if (this.stopped || !this.host.online()) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = async () => {
      do {
        this.again = false;
        await this.read();
      } while (this.again && !this.stopped);
    };
    this.running = run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async read(): Promise<void> {
    const client = this.host.client();
    let list: ProposalSummary[];
    let unreadable: UnreadableProposal[];
    try {
      const listing = await client.proposalListing();
      // Newest first: the ids sort by the second they were made in, `created` within it.
      list = listing.proposals.sort((a, b) => (Date.parse(b.created) || 0) - (Date.parse(a.created) || 0));
      unreadable = listing.unreadable;
    } catch {
      // The server went away or refused: the connection says so; the next check tries again.
      return;
    }
    if (this.stopped) return;
    if (this.source !== client.baseUrl) {
      // Another server (the settings changed): its proposals are its baseline, not news.
      this.source = client.baseUrl;
      this.seen = null;
    }
    const seen = this.seen;
    const fresh = seen ? list.filter((proposal) => !seen.has(proposal.id)) : [];
    this.seen = new Set([...(seen ?? []), ...list.map((proposal) => proposal.id)]);
    this.pending = list;
    this.unreadable = unreadable;
    this.host.changed(list);
    if (fresh.length) this.host.arrived(fresh);
  }
}
