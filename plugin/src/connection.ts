/**
 * The link to `quire serve`: it checks `/api/status`, follows `/api/events` while the server is
 * up, and when it is not, says so once (with what to do) and tries again by itself, waiting
 * longer each time (1 s, 2 s, 4 s … up to 30 s). When the settings ask for it, it starts the
 * server first.
 *
 * Whether a sync is running is the server's word: `syncing` in `/api/status` and in the `hello`
 * event, then `sync_started` until its `index` or `sync_failed` (a `sync_failed` that says
 * `running` reports a sync that is slow to finish, not its end).
 */
import { QuireError, type QuireClient, type ServerStatus, type StreamHandle } from "./api";
import type { SseEvent } from "./sse";

export type ConnectionState =
  | { kind: "connecting" }
  | { kind: "online"; status: ServerStatus }
  /** The server runs but has no index yet. */
  | { kind: "indexing"; status: ServerStatus }
  | { kind: "offline"; message: string }
  /** The server refused us: a missing or wrong token, or a forbidden host. */
  | { kind: "refused"; message: string };

/** The data of an `index` or `sync_failed` event. */
export interface IndexEvent {
  generation?: number;
  at?: string;
  upserts?: string[];
  deletes?: string[];
  message?: string;
  /** Of `sync_failed`: the attempt is still running (it is slow, it has not failed yet). */
  running?: boolean;
}

export interface ConnectionHost {
  client(): QuireClient;
  /** Starts the server if the settings say so (null if they don't); settles when it listens. */
  startServer(): Promise<void> | null;
  /** How to start the server by hand, for the notice that says it is down. */
  startHint(): string;
  /** The vault's folder, to check that the server serves this vault. */
  vaultPath(): string | null;
  notify(message: string): void;
  changed(): void;
  indexEvent(kind: "index" | "sync_failed", data: IndexEvent): void;
}

export interface Backoff {
  firstMs: number;
  maxMs: number;
}

export class Connection {
  state: ConnectionState = { kind: "connecting" };
  /** The server is syncing the index with the vault. */
  syncing = false;
  private stopped = true;
  private timer: number | null = null;
  private delay: number;
  private events: StreamHandle | null = null;
  /** The trouble last told to the user, so that each is told once until it is over. */
  private told: string | null = null;
  private wasDown = false;
  private checkedRoot: string | null = null;
  private attempting = false;

  constructor(
    private readonly host: ConnectionHost,
    private readonly backoff: Backoff = { firstMs: 1_000, maxMs: 30_000 },
  ) {
    this.delay = backoff.firstMs;
  }

  start(): void {
    this.stopped = false;
    void this.attempt();
  }

  stop(): void {
    this.stopped = true;
    this.clearTimer();
    this.events?.close();
    this.events = null;
  }

  /** Starts over at once: after the settings change, or when the user asks. */
  restart(): void {
    this.stop();
    this.state = { kind: "connecting" };
    this.delay = this.backoff.firstMs;
    this.told = null;
    this.checkedRoot = null;
    this.host.changed();
    this.start();
  }

  private setSyncing(syncing: boolean): void {
    if (this.syncing === syncing) return;
    this.syncing = syncing;
    this.host.changed();
  }

  private clearTimer(): void {
    if (this.timer !== null) window.clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(maxMs = this.backoff.maxMs): void {
    this.clearTimer();
    if (this.stopped) return;
    const wait = Math.min(this.delay, maxMs);
    this.delay = Math.min(this.delay * 2, this.backoff.maxMs);
    this.timer = window.setTimeout(() => {
      this.timer = null;
      void this.attempt();
    }, wait);
  }

  private set(state: ConnectionState): void {
    this.state = state;
    this.host.changed();
  }

  /** Says `message` unless the same trouble was already told. */
  private tell(trouble: string, message: string): void {
    if (this.told === trouble) return;
    this.told = trouble;
    this.host.notify(message);
  }

  private down(state: { kind: "offline" | "refused"; message: string }): void {
    this.wasDown = true;
    this.syncing = false;
    this.events?.close();
    this.events = null;
    this.set(state);
    this.tell(state.kind + state.message, state.message);
  }

  private async attempt(allowStart = true): Promise<void> {
    if (this.stopped || this.attempting) return;
    this.attempting = true;
    try {
      await this.check(allowStart);
    } finally {
      this.attempting = false;
    }
  }

  private async check(allowStart: boolean): Promise<void> {
    this.clearTimer();
    const client = this.host.client();
    let status: ServerStatus;
    try {
      status = await client.status();
    } catch (error) {
      if (this.stopped) return;
      const problem = error instanceof QuireError ? error : new QuireError("error", String(error));
      if (problem.code === "unreachable") {
        const starting = allowStart ? this.host.startServer() : null;
        if (starting) {
          try {
            await starting;
          } catch (startError) {
            if (this.stopped) return;
            this.down({ kind: "offline", message: `quire serve could not start. ${startError instanceof Error ? startError.message : String(startError)}` });
            this.schedule();
            return;
          }
          // It listens now: look again at once (without starting it twice).
          this.attempting = false;
          await this.attempt(false);
          return;
        }
        this.down({ kind: "offline", message: `Cannot reach quire at ${client.baseUrl}. ${this.host.startHint()} Retrying in the background.` });
      } else if (problem.status === 401) {
        this.down({ kind: "refused", message: `quire at ${client.baseUrl} needs a token: set the server's token in the plugin's settings. (${problem.message})` });
      } else if (problem.status === 403) {
        this.down({ kind: "refused", message: `quire at ${client.baseUrl} refused the plugin: ${problem.message}` });
      } else {
        this.down({ kind: "offline", message: `quire at ${client.baseUrl} answered with an error: ${problem.message}` });
      }
      this.schedule();
      return;
    }
    if (this.stopped) return;
    this.checkRoot(status, client.baseUrl);
    if (!status.ready) {
      this.set({ kind: "indexing", status });
      this.tell(
        "indexing",
        status.watching === false
          ? `quire has no index of this vault yet, and this server does not build one (it runs with --no-watch). Run quire index for this vault, then it connects by itself.`
          : `quire is building the index of this vault; search works as soon as it is done.`,
      );
      this.follow();
      this.schedule(5_000);
      return;
    }
    const recovered = this.wasDown || this.told === "indexing";
    this.wasDown = false;
    this.told = null;
    this.delay = this.backoff.firstMs;
    this.syncing = status.syncing === true;
    this.set({ kind: "online", status });
    if (recovered) this.host.notify(`Connected to quire: ${status.notes_indexed ?? 0} notes indexed.`);
    this.follow();
  }

  private checkRoot(status: ServerStatus, url: string): void {
    const vault = this.host.vaultPath();
    const root = status.vault_root;
    if (!vault || !root || this.checkedRoot === root) return;
    this.checkedRoot = root;
    const same = (a: string) => a.replace(/[\\/]+$/, "");
    if (same(root) !== same(vault)) {
      this.host.notify(`The quire server at ${url} serves ${root}, not this vault (${vault}): its results may name notes that are not here.`);
    }
  }

  /**
   * Reads /api/status again (after an index event), quietly. `withSyncing` takes the server's
   * `syncing` too: after events were missed; otherwise the events say it, and a status read
   * before the last of them would say it wrong.
   */
  private async refresh(withSyncing = false): Promise<void> {
    if (this.stopped || this.state.kind !== "online") return;
    try {
      const status = await this.host.client().status();
      if (this.stopped || !status.ready) return;
      if (withSyncing) this.syncing = status.syncing === true;
      this.set({ kind: "online", status });
    } catch {
      // The events stream ends too when the server goes away; that path says so.
    }
  }

  /** Follows /api/events while the server is up; when the stream ends, checks the server again. */
  private follow(): void {
    if (this.events || this.stopped) return;
    const handle = this.host.client().stream("/api/events", undefined, (event) => this.onEvent(event));
    this.events = handle;
    const ended = () => {
      if (this.events !== handle) return;
      this.events = null;
      if (this.stopped) return;
      // The server went away, or a proxy cut the stream: look again shortly.
      this.schedule();
    };
    handle.done.then(ended, ended);
  }

  private onEvent(event: SseEvent): void {
    switch (event.name) {
      case "hello":
        this.setSyncing((JSON.parse(event.data) as { syncing?: boolean }).syncing === true);
        break;
      case "sync_started":
        this.setSyncing(true);
        break;
      case "index": {
        const data = JSON.parse(event.data) as IndexEvent;
        this.setSyncing(false);
        if (this.state.kind === "indexing") void this.attempt();
        else void this.refresh();
        this.host.indexEvent("index", data);
        break;
      }
      case "sync_failed": {
        const data = JSON.parse(event.data) as IndexEvent;
        // A sync that hangs is reported every while, as still running, until it ends.
        this.setSyncing(data.running === true);
        void this.refresh();
        this.host.indexEvent("sync_failed", data);
        break;
      }
      case "lagged":
        void this.refresh(true);
        break;
    }
  }
}
