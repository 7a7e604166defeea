/**
 * The HTTP API of `quire serve` (its OpenAPI document is served at `/api/openapi.json`): the
 * shapes the plugin reads, and a client for them. JSON requests go through Obsidian's
 * `requestUrl`; the streamed answers and the index events need a body that arrives in pieces,
 * which `requestUrl` does not give, so they use Node's `http` (the plugin is desktop-only).
 */
import * as http from "http";
import * as https from "https";
import { requestUrl } from "obsidian";
import { SseParser, type SseEvent } from "./sse";

export type SearchMode = "hybrid" | "bm25" | "vector";

export interface Section {
  chunk_id: string;
  heading_path: string[];
  start_line: number;
  end_line: number;
  snippet: string;
  /** Byte ranges `[start, end)` of the matched words in the UTF-8 snippet. */
  highlights: [number, number][];
  score: number;
  /** For a PDF, the page the section is on (1-based); its lines are then lines of the extracted text. */
  page?: number;
}

export interface NoteHit {
  path: string;
  title: string;
  score: number;
  sections: Section[];
}

export interface SearchResults {
  query: string;
  mode: SearchMode;
  generation: number;
  results: NoteHit[];
}

export interface NoteRef {
  path: string;
  title: string;
  /** Similarity, for notes similar in meaning. */
  score?: number;
}

/** A similar note that looks like a copy of the note: close vectors and own text shared. */
export interface NearCopy {
  path: string;
  title: string;
  /** Cosine of the two notes' vectors. */
  score: number;
  /** The share of their own text (template lines left out) the two notes have in common, 0 to 1. */
  overlap: number;
}

/** `GET /api/similar/{path}`. */
export interface Related {
  path: string;
  title: string;
  similar?: NoteRef[];
  /** Why there are no notes similar in meaning (no embedding model, no embeddings). */
  similar_unavailable?: string;
  /** The similar notes that look like copies of this one, the largest overlap first (absent over a team database). */
  near_copies?: NearCopy[];
  /** Why near copies could not be told apart (the similar notes are still given). */
  near_copies_unavailable?: string;
  backlinks?: NoteRef[];
  outgoing?: NoteRef[];
  moc_parents?: NoteRef[];
}

export interface LastSync {
  kind: "index" | "sync_failed";
  /** `running`: a failure that reports a sync still running after a long time (a stall). */
  data: { at?: string; message?: string; generation?: number; running?: boolean };
}

/** `GET /api/status`. The counts are there when `ready` is. */
export interface ServerStatus {
  ready: boolean;
  message?: string;
  version?: string;
  vault?: string;
  vault_root?: string;
  watching?: boolean;
  /** A sync attempt is running now. */
  syncing?: boolean;
  generation?: number;
  notes_indexed?: number;
  chunks?: number;
  embeddings?: number;
  default_mode?: SearchMode;
  llm?: string | null;
  last_sync?: LastSync | null;
  skipped_total?: number;
}

/** Where a passage of a note is: its note, the headings above it, its lines (1-based, inclusive). */
export interface PassageRef {
  path: string;
  heading_path: string[];
  start_line: number;
  end_line: number;
}

/** One topic of `GET /api/questions/{path}`: a group of paragraphs close in meaning. */
export interface QuestionTopic {
  /** Its place among the topics, from 1. */
  number: number;
  /** The model's question; null without a model (`extractive`) or when the model gave nothing usable. */
  question: string | null;
  /** The passage closest to the topic's centre. */
  central: PassageRef;
  /** The central passage's text, at most 600 characters (`…` marks a cut). */
  central_text: string;
  /** Every passage of the topic, closest to its centre first. */
  passages: PassageRef[];
}

/** `GET /api/questions/{path}`: the questions a note or a folder answers. */
export interface Questions {
  /** The note's path, or the folder with a trailing `/`. */
  scope: string;
  /** `generated`: a language model wrote the questions; `extractive`: no model, central passages. */
  kind: "generated" | "extractive";
  /** How many paragraphs were grouped. */
  paragraphs: number;
  /** How many topics they made. */
  k: number;
  topics: QuestionTopic[];
  /** Indexed chunks that no longer match their files, left out. */
  dropped: unknown[];
}

/** A source card: a passage the answer could cite, from quire's records. */
export interface SourceCard {
  id: string;
  path: string;
  title: string;
  heading_path: string[];
  start_line: number;
  end_line: number;
  /** The page of a PDF's passage (1-based); `start_line`/`end_line` are then lines of its extracted text. */
  page?: number;
  link?: string;
  cited: boolean;
}

export type AnswerKind = "generated" | "extractive" | "nothing_found";

/** The `done` event of `POST /api/ask`. */
export interface Answer {
  kind: AnswerKind;
  answer: string;
  citations: { id: string; path: string; start_line: number; end_line: number; page?: number }[];
  invalid_citations: string[];
  sources: SourceCard[];
  warnings: string[];
  model?: string | null;
  /** The conversation this answer belongs to: sent back with a follow-up question. */
  conversation?: string;
  /** How the passages were found (the parts the plugin shows). */
  retrieval?: RetrievalReport;
}

/** One step of a tree descent: what the model was shown, what it chose and why. */
export interface DescentStep {
  /** `folders`, `notes` or `sections`. */
  kind: string;
  /** What the model was shown, in a few words (`47 notes`). */
  shown: string;
  /** The valid ids it chose, each with what it names (`D12 Resources/Sourdough Starter.md`). */
  chose: string[];
  /** Ids it wrote that name nothing shown. */
  invalid: string[];
  why: string;
}

/** What a tree descent did (`retrieval.descent`, when it ran). */
export interface DescentTrace {
  steps: DescentStep[];
  /** The sections read; empty when the descent found nothing. */
  sections: { path: string; heading_path: string[]; start_line: number; end_line: number }[];
  /** Chosen notes that changed since they were indexed (searched instead). */
  stale: string[];
  requests: number;
  /** Why the descent stopped early, if it did. */
  stopped?: string | null;
}

/** The `retrieval` object of the `done` event of `POST /api/ask`, the parts the plugin reads. */
export interface RetrievalReport {
  /** The retriever asked for (`hybrid` when none was). */
  retriever?: Retriever;
  /** What the user should know about how the passages were chosen (`auto: search found good evidence, …`). */
  notes?: string[];
  descent?: DescentTrace | null;
}

/** The `done` event of `POST /api/article/ask`: an answer whose sources are the article's lines (`path` is its name). */
export interface ArticleAnswer extends Answer {
  /** How the article was read: its passages, how many were embedded now and how many came from the cache. */
  article?: { chunks?: number; embedded?: number; cached?: number };
}

/** How `POST /api/ask` finds passages: by search, by walking the notes' headings, or either as fits. */
export type Retriever = "hybrid" | "tree" | "auto";

/** What `POST /api/ask` is asked with, besides the question. */
export interface AskOptions {
  /** The search mode; empty for the server's default. */
  mode?: SearchMode | "";
  /** The retriever; empty for the server's default (hybrid). */
  retriever?: Retriever | "";
  /** Continue this conversation (the `conversation` of an earlier answer). */
  conversation?: string | null;
  /** Have the model write a passage for the question first, and search with it too. */
  expand?: boolean;
  /** Ask this one indexed note or PDF alone (its vault-relative path): only its passages, found through the index. */
  note?: string;
}

/** The days `POST /api/reflect` covers: an ISO week (`2026-W48`), or a first and last day. */
export type ReflectRange = { week: string } | { from: string; to: string };

/** A daily note the reflection was written from. */
export interface ReflectedDay {
  id: string;
  /** `YYYY-MM-DD`. */
  date: string;
  path: string;
  /** Its wikilink target, as the reflection writes it (`[[2026-11-24]]`). */
  link: string;
  cited: boolean;
}

/** The `done` event of `POST /api/reflect`. */
export interface Reflection {
  kind: AnswerKind;
  range: { from: string; to: string };
  /** Markdown; each point cites its day as a `[[wikilink]]`. */
  reflection: string;
  days: ReflectedDay[];
  invalid_citations: string[];
  warnings: string[];
  model?: string | null;
}

/** The `done` event of `POST /api/draft`. */
export interface Draft {
  kind: AnswerKind;
  draft: string;
  note: string;
  heading: string;
  /** The ids of the sources the draft cites. */
  citations: string[];
  invalid_citations: string[];
  sources: SourceCard[];
  warnings: string[];
  model?: string | null;
}

/** Where a pending proposal is in its life. */
export type ProposalStatus = "pending" | "applied" | "rejected";

/**
 * One finding of the findings inbox (`GET /api/findings`): a thing of the vault's structure a
 * person might fix, with an id that stays the same while it holds.
 */
export interface Finding {
  id: string;
  /** `unresolved_link`, `orphan`, `dead_end`, `near_duplicate_tags`, `duplicate_title`, `empty_note`, `oversized_note`, `no_headings`, `unlinked_attachment`, `island`. */
  kind: string;
  subject: string;
  /** The note (or attachment) to open, when there is one. */
  path: string | null;
  /** The line to open it at (1-based), when there is one. */
  line: number | null;
  message: string;
  /** Not there at the last run. */
  new: boolean;
}

/** `GET /api/findings`: the inbox after a run (each GET is a run). */
export interface FindingsInbox {
  findings: Finding[];
  /** New since the last run in words ("2 new unresolved links, 1 new orphan note"); empty on the first run or when nothing is new. */
  new_since_last: string;
  first_run: boolean;
  /** How many findings that hold were dismissed. */
  dismissed: number;
  /** The snoozed findings that hold, and the day each comes back (`YYYY-MM-DD`). */
  snoozed: [string, string][];
  /** Said when the list was too long for one answer. */
  cut_to_fit?: string;
}

/** A proposal in `GET /api/proposals`: no contents. */
export interface ProposalSummary {
  /** `YYYYMMDD-HHMMSS-…`: sorts by creation. */
  id: string;
  title: string;
  /** The command, tool or client that made it, e.g. `propose_note_change (an MCP client)`. */
  command: string;
  /** When it was made (RFC 3339). */
  created: string;
  status: ProposalStatus;
  /** The files it writes. */
  files: string[];
  lines_added: number;
  lines_removed: number;
}

/** A stored proposal that no longer reads back as quire wrote it, left out of the list. */
export interface UnreadableProposal {
  id: string;
  /** Why it cannot be read. */
  reason: string;
}

/** `GET /api/proposals`. */
export interface ProposalListing {
  proposals: ProposalSummary[];
  /** Stored proposals that cannot be read (a file edited or cut short by hand). */
  unreadable: UnreadableProposal[];
}

/** One file's change in a proposal. */
export interface FileChange {
  kind: "create" | "replace" | "append" | "rename";
  /** The file the change reads (the file created, for `create`). */
  path: string;
  /** Where a rename moves the file. */
  new_path?: string;
  /** The heading an append goes under. */
  heading?: string;
  /** sha256 of the bytes the change was made from; null for a new file. */
  base_sha256: string | null;
  new_sha256: string;
  /** The file's whole content after the change. */
  content: string;
  /** The unified diff from the base to `content`. */
  diff: string;
}

/** `GET /api/proposals/{id}`. */
export interface Proposal {
  id: string;
  title: string;
  command: string;
  /** What it was made from: note paths, mostly. */
  sources: string[];
  created: string;
  status: ProposalStatus;
  decided?: string;
  changes: FileChange[];
  /** The whole diff of every change. */
  diff?: string;
}

/** `POST /api/proposals/{id}/apply`. */
export interface AppliedProposal {
  proposal: Proposal;
  /** The vault-relative paths written. */
  written: string[];
  backup_dir: string;
  /** Files that could not be written (the others were). */
  not_written?: { path: string; reason: string }[];
}

/** `POST /api/split`: the new notes and the map, and the proposal that makes them. */
export interface SplitResult {
  proposal: Proposal;
}

/** `POST /api/flashcards`: the cards, and the proposal that adds them (none when no card is new). */
export interface FlashcardsResult {
  cards: { cards: unknown[]; already_in_note: number; bad_lines: number; relocated: number };
  proposal?: Proposal | null;
}

/** `POST /api/transform`. */
export interface TransformResult {
  proposal: Proposal;
}

/** `POST /api/complete`. */
export interface CompleteResult {
  proposal?: Proposal | null;
}

/** `POST /api/dataview`: the checked query, and the proposal that adds it to a note (with `into`). */
export interface DataviewResult {
  query: string;
  repaired: boolean;
  proposal?: Proposal | null;
}

/** A batch before it runs. */
export interface BatchPlan {
  /** The notes selected, in order. */
  notes: string[];
  /** Notes an earlier run of the same batch already made a proposal for (skipped). */
  done: string[];
  /** About how many tokens the remaining notes send (and as many come back). */
  estimated_tokens: number;
}

/** `POST /api/batch`: the plan, and unless `dry_run` what the run did. */
export interface BatchResult {
  plan: BatchPlan;
  outcome?: {
    /** (note, proposal id) for each proposal made. */
    proposals: [string, string][];
    /** (note, why) for each note that failed. */
    failed: [string, string][];
    cancelled: boolean;
  };
}

/** What `POST /api/transform` and `/api/batch` do to the text: a preset or an instruction. */
export type TransformChoice = { preset: string } | { instruction: string };

/** A topic cluster of `POST /api/audit/deep`: notes close in meaning, and the words that set them apart. */
export interface NamedCluster {
  /** 1-based, largest cluster first; `POST /api/moc` takes it. */
  id: number;
  /** The language model's name for it, else its first distinctive terms (`rust, error, ownership`). */
  name: string;
  named_by_model: boolean;
  /** Its most distinctive terms, heaviest first. */
  terms: string[];
  /** Its notes, closest to its centre first. */
  notes: string[];
}

/** The clustering behind the clusters (`topics` of `POST /api/audit/deep`). */
export interface TopicReport {
  k: number;
  notes_clustered: number;
  /** Notes the index has no vector for. */
  without_vectors: string[];
  /** Maps of content, left out on purpose (they are about every topic they list). */
  maps_left_out: string[];
}

/** What the deep audit's map sends (or would send). */
export interface AuditPlan {
  notes: number;
  /** Notes whose record the server has cached: nothing is sent for them. */
  cached: number;
  to_send: number;
  requests: number;
  estimated_tokens: number;
}

/** What the deep audit's map did. */
export interface AuditMapOutcome {
  requests: number;
  from_cache: number;
  /** Batches whose reply never validated: their notes, and why. */
  failed: { paths: string[]; reason: string }[];
  repaired: number;
  invented_links: number;
  cancelled: boolean;
  budget_reached: boolean;
}

/** A note the language model found weak. */
export interface QualityFinding {
  path: string;
  /** 1 to 5. */
  score: number;
  issues: string[];
}

/** A recommendation or a step of the action plan, with the notes it is about. */
export interface AuditItem {
  text: string;
  notes: string[];
}

/** `POST /api/audit/deep` (the fields the plugin reads; `structural` is the audit the findings inbox shows). */
export interface DeepAuditReport {
  /** The language model, when the server has one. */
  model: string | null;
  /** With a model: what the map sends (or would send). */
  plan: AuditPlan | null;
  dry_run: boolean;
  topics: TopicReport | null;
  /** Why there are no clusters (no embeddings). */
  topics_unavailable: string | null;
  clusters: NamedCluster[];
  map: AuditMapOutcome | null;
  quality_findings: QualityFinding[];
  recommendations: AuditItem[];
  action_plan: AuditItem[];
  reduce_requests: number;
  /** Why the vault-wide review gave nothing. */
  reduce_error: string | null;
  dropped_paths: number;
  /** What this run could not do without a model. */
  needs_model: string[];
}

/** A map of content `POST /api/moc` proposed. */
export interface MocMade {
  cluster: number;
  label: string;
  title: string;
  /** The note it creates. */
  path: string;
  notes: number;
  sub_topics: string[];
  /** The pending proposal's id. */
  proposal: string;
}

/** A cluster `POST /api/moc` made no map for, and why. */
export interface MocSkipped {
  cluster: number;
  label: string;
  notes: number;
  /** `already_mapped`, `pending` or `too_small`. */
  reason: string;
  /** With `already_mapped`: the note that maps it, and how many of the cluster's notes it links to. */
  mapped_by?: string;
  link?: string;
  linked?: number;
  /** With `pending`: the proposal that maps the same notes. */
  proposal?: string;
}

/** `POST /api/moc`. */
export interface MocResult {
  proposals: MocMade[];
  skipped: MocSkipped[];
}

/** How `POST /api/audit/canvas` groups the notes: by folder, or by the link graph's components. */
export type CanvasGrouping = "folder" | "component";

/** `POST /api/proposals`: the arguments of `propose_note_change`. */
export interface NewProposal {
  path: string;
  change: "create" | "append" | "replace";
  text: string;
  heading?: string;
  title?: string;
}

/** An error of the server (`{"error": {"code", "message"}}`), or `unreachable`. */
export class QuireError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 0,
  ) {
    super(message);
    this.name = "QuireError";
  }
}

/** True for the error a stream ends with when its AbortSignal fired. */
export function isAbort(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

/** The error a cancelled request ends with (what `isAbort` recognizes). */
export function abortError(): Error {
  const error = new Error("The request was cancelled.");
  error.name = "AbortError";
  return error;
}

/** The error a failed response carries, from its JSON body when it has one. */
function responseError(status: number, text: string): QuireError {
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (body.error?.message) return new QuireError(body.error.code ?? "error", body.error.message, status);
  } catch {
    // Not JSON: a proxy's page, or a body cut short.
  }
  return new QuireError("http_error", `quire answered ${status}${text ? `: ${text.slice(0, 200)}` : ""}`, status);
}

/** A vault-relative note path as a URL path: each segment encoded, the slashes kept. */
export function encodeNotePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}

export interface StreamHandle {
  /** Settles when the stream ends: resolves at its end, rejects on an error or an abort. */
  done: Promise<void>;
  close(): void;
}

export class QuireClient {
  readonly baseUrl: string;

  constructor(
    baseUrl: string,
    private readonly token: string,
  ) {
    this.baseUrl = baseUrl.trim().replace(/\/+$/, "");
  }

  private headers(): Record<string, string> {
    const token = this.token.trim();
    return token ? { Authorization: `Bearer ${token}` } : {};
  }

  /** GET a JSON route. */
  async get<T>(path: string): Promise<T> {
    let response;
    try {
      response = await requestUrl({ url: this.baseUrl + path, method: "GET", headers: this.headers(), throw: false });
    } catch (error) {
      throw new QuireError("unreachable", `cannot reach quire at ${this.baseUrl} (${String(error)})`);
    }
    if (response.status !== 200) throw responseError(response.status, response.text);
    return JSON.parse(response.text) as T;
  }

  /** POST a JSON body to a JSON route. */
  async post<T>(path: string, body: object): Promise<T> {
    let response;
    try {
      response = await requestUrl({
        url: this.baseUrl + path,
        method: "POST",
        headers: this.headers(),
        contentType: "application/json",
        body: JSON.stringify(body),
        throw: false,
      });
    } catch (error) {
      throw new QuireError("unreachable", `cannot reach quire at ${this.baseUrl} (${String(error)})`);
    }
    if (response.status !== 200) throw responseError(response.status, response.text);
    return JSON.parse(response.text) as T;
  }

  /**
   * POST a JSON body to a JSON route, through Node's `http` so that `signal` can cancel it (the
   * writing tools take a while; `requestUrl` cannot be cancelled). Cancelling stops the wait:
   * the server may still finish the work.
   */
  postCancellable<T>(path: string, body: object, signal: AbortSignal): Promise<T> {
    return this.cancellable<T>("POST", path, JSON.stringify(body), signal);
  }

  /**
   * GET a JSON route through Node's `http`, so that `signal` can cancel it: the connection is
   * closed, which a route that holds the language model takes as the end of the request.
   */
  getCancellable<T>(path: string, signal: AbortSignal): Promise<T> {
    return this.cancellable<T>("GET", path, undefined, signal);
  }

  private cancellable<T>(method: "GET" | "POST", path: string, payload: string | undefined, signal: AbortSignal): Promise<T> {
    const url = new URL(this.baseUrl + path);
    const transport = url.protocol === "https:" ? https : http;
    const headers: Record<string, string> = { Accept: "application/json", ...this.headers() };
    if (payload !== undefined) {
      headers["Content-Type"] = "application/json";
      headers["Content-Length"] = String(new TextEncoder().encode(payload).length);
    }
    return new Promise<T>((resolve, reject) => {
      if (signal.aborted) {
        reject(abortError());
        return;
      }
      let cancelled = false;
      const onAbort = () => {
        cancelled = true;
        request.destroy();
        reject(abortError());
      };
      const request = transport.request(url, { method, headers }, (response) => {
        response.setEncoding("utf8");
        let text = "";
        response.on("data", (piece: string) => (text += piece));
        response.on("end", () => {
          signal.removeEventListener("abort", onAbort);
          const status = response.statusCode ?? 0;
          if (status !== 200) {
            reject(responseError(status, text));
            return;
          }
          try {
            resolve(JSON.parse(text) as T);
          } catch {
            reject(new QuireError("http_error", "quire's answer was cut short"));
          }
        });
        response.on("error", (error) => reject(cancelled ? abortError() : new QuireError("unreachable", `the connection to quire at ${this.baseUrl} was lost (${error.message})`)));
      });
      signal.addEventListener("abort", onAbort, { once: true });
      request.on("error", (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(cancelled ? abortError() : new QuireError("unreachable", `cannot reach quire at ${this.baseUrl} (${error.message})`));
      });
      request.end(payload);
    });
  }

  status(): Promise<ServerStatus> {
    return this.get<ServerStatus>("/api/status");
  }

  search(query: string, k: number, mode: SearchMode | ""): Promise<SearchResults> {
    const params = new URLSearchParams({ q: query, k: String(k) });
    if (mode) params.set("mode", mode);
    return this.get<SearchResults>(`/api/search?${params.toString()}`);
  }

  similar(path: string, k: number): Promise<Related> {
    return this.get<Related>(`/api/similar/${encodeNotePath(path)}?k=${k}`);
  }

  /**
   * The questions a note (`Resources/Starter.md`) or a folder (`Projects/`, its notes at any
   * depth) answers, one per topic of its paragraphs. With a language model on the server this
   * takes one model call per topic; `signal` cancels it (the server stops the model then).
   */
  questions(scope: string, signal?: AbortSignal): Promise<Questions> {
    const path = `/api/questions/${encodeNotePath(scope)}`;
    return signal ? this.getCancellable<Questions>(path, signal) : this.get<Questions>(path);
  }

  /** The pending proposals, newest first, and the stored ones that cannot be read. */
  async proposalListing(): Promise<ProposalListing> {
    const listing = await this.get<Partial<ProposalListing>>("/api/proposals");
    return { proposals: listing.proposals ?? [], unreadable: listing.unreadable ?? [] };
  }

  proposal(id: string): Promise<Proposal> {
    return this.get<Proposal>(`/api/proposals/${encodeURIComponent(id)}`);
  }

  /** Writes the proposal into the vault (the only request that does). */
  applyProposal(id: string): Promise<AppliedProposal> {
    return this.post<AppliedProposal>(`/api/proposals/${encodeURIComponent(id)}/apply`, {});
  }

  rejectProposal(id: string): Promise<Proposal> {
    return this.post<Proposal>(`/api/proposals/${encodeURIComponent(id)}/reject`, {});
  }

  /** Makes a pending proposal (nothing is written). */
  propose(change: NewProposal): Promise<Proposal> {
    return this.post<Proposal>("/api/proposals", change);
  }

  /** The findings inbox. Each call records a run (what is new is new since the last call). */
  findings(): Promise<FindingsInbox> {
    return this.get<FindingsInbox>("/api/findings");
  }

  /** Takes a finding out of the inbox for good. */
  dismissFinding(id: string): Promise<{ id: string; dismissed: boolean }> {
    return this.post<{ id: string; dismissed: boolean }>(`/api/findings/${encodeURIComponent(id)}/dismiss`, {});
  }

  /** Takes a finding out of the inbox for `days` days (1 to 365); resolves with the day it comes back. */
  snoozeFinding(id: string, days: number): Promise<{ id: string; until: string }> {
    return this.post<{ id: string; until: string }>(`/api/findings/${encodeURIComponent(id)}/snooze`, { days });
  }

  /**
   * `POST /api/audit/deep`. A dry run sends nothing to a model: the topic clusters, and with a
   * model the plan. A run (`dryRun` false) reviews every note with the model and answers when it
   * is done (minutes on a large vault); `signal` stops the wait, not the server's work.
   */
  deepAudit(dryRun: boolean, signal: AbortSignal): Promise<DeepAuditReport> {
    return this.postCancellable<DeepAuditReport>("/api/audit/deep", dryRun ? { dry_run: true } : {}, signal);
  }

  /** A map of content for the topic cluster `cluster`, made as a pending proposal (or skipped, with the reason). */
  moc(cluster: number): Promise<MocResult> {
    return this.post<MocResult>("/api/moc", { cluster });
  }

  /** The vault's JSON Canvas map (`Vault map.canvas`), made as a pending proposal. */
  async canvasMap(group: CanvasGrouping): Promise<Proposal> {
    return (await this.post<{ proposal: Proposal }>("/api/audit/canvas", { group })).proposal;
  }

  split(note: string, signal: AbortSignal): Promise<SplitResult> {
    return this.postCancellable<SplitResult>("/api/split", { note }, signal);
  }

  flashcards(note: string, signal: AbortSignal): Promise<FlashcardsResult> {
    return this.postCancellable<FlashcardsResult>("/api/flashcards", { note }, signal);
  }

  /** Rewrites lines `A-B` of the note (its body when `lines` is null). */
  transform(note: string, lines: string | null, choice: TransformChoice, signal: AbortSignal): Promise<TransformResult> {
    return this.postCancellable<TransformResult>("/api/transform", { note, ...(lines ? { lines } : {}), ...choice }, signal);
  }

  /** Continues the note after line `at` (1-based). */
  complete(note: string, at: number, signal: AbortSignal): Promise<CompleteResult> {
    return this.postCancellable<CompleteResult>("/api/complete", { note, at }, signal);
  }

  /** A Dataview query for `question`, added to the end of `into`. */
  dataview(question: string, into: string, signal: AbortSignal): Promise<DataviewResult> {
    return this.postCancellable<DataviewResult>("/api/dataview", { question, into }, signal);
  }

  batch(select: { folder: string } | { tag: string }, choice: TransformChoice, dryRun: boolean, signal: AbortSignal): Promise<BatchResult> {
    return this.postCancellable<BatchResult>("/api/batch", { ...select, ...choice, dry_run: dryRun }, signal);
  }

  /**
   * Opens an event stream: `GET` without a body, `POST` with a JSON one. `onEvent` gets each
   * event as it completes.
   */
  stream(path: string, body: unknown, onEvent: (event: SseEvent) => void, signal?: AbortSignal): StreamHandle {
    const url = new URL(this.baseUrl + path);
    const transport = url.protocol === "https:" ? https : http;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { Accept: "text/event-stream", ...this.headers() };
    if (payload !== undefined) {
      headers["Content-Type"] = "application/json";
      headers["Content-Length"] = String(new TextEncoder().encode(payload).length);
    }
    let request: http.ClientRequest | null = null;
    let closed = false;
    const done = new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortError());
        return;
      }
      const onAbort = () => {
        closed = true;
        request?.destroy();
        reject(abortError());
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const settle = (error?: Error) => {
        signal?.removeEventListener("abort", onAbort);
        if (error) reject(error);
        else resolve();
      };
      request = transport.request(url, { method: payload === undefined ? "GET" : "POST", headers }, (response) => {
        response.setEncoding("utf8");
        const status = response.statusCode ?? 0;
        if (status !== 200) {
          let text = "";
          response.on("data", (piece: string) => (text += piece));
          response.on("end", () => settle(responseError(status, text)));
          response.on("error", (error) => settle(error));
          return;
        }
        const parser = new SseParser();
        response.on("data", (piece: string) => {
          try {
            for (const event of parser.push(piece)) onEvent(event);
          } catch (error) {
            request?.destroy();
            settle(error instanceof Error ? error : new Error(String(error)));
          }
        });
        const lost = (error?: Error) =>
          closed ? abortError() : new QuireError("unreachable", `the connection to quire at ${this.baseUrl} was lost${error ? ` (${error.message})` : ""}`);
        response.on("end", () => settle());
        response.on("error", (error) => settle(lost(error)));
        // A close without an end: the server went away in the middle of the stream.
        response.on("close", () => settle(response.complete ? undefined : lost()));
      });
      request.on("error", (error) => {
        if (closed) settle(abortError());
        else settle(new QuireError("unreachable", `cannot reach quire at ${this.baseUrl} (${error.message})`));
      });
      request.end(payload);
    });
    return {
      done,
      close: () => {
        closed = true;
        request?.destroy();
      },
    };
  }

  /**
   * `POST /api/ask`, `/api/article/ask`, `/api/draft` or `/api/reflect`: `onText` gets the text as it is written;
   * resolves with the `done` event's object.
   */
  async generate<T>(path: "/api/ask" | "/api/article/ask" | "/api/draft" | "/api/reflect", body: object, onText: (text: string) => void, signal?: AbortSignal): Promise<T> {
    let result: T | undefined;
    let failure: QuireError | undefined;
    const handle = this.stream(
      path,
      body,
      (event) => {
        if (event.name === "token") onText((JSON.parse(event.data) as { text: string }).text);
        else if (event.name === "done") result = JSON.parse(event.data) as T;
        else if (event.name === "error") {
          const error = (JSON.parse(event.data) as { error: { code: string; message: string } }).error;
          failure = new QuireError(error.code, error.message);
        }
      },
      signal,
    );
    await handle.done;
    if (failure) throw failure;
    if (result === undefined) throw new QuireError("incomplete", "the answer stopped before it was complete");
    return result;
  }

  /** `POST /api/ask`: `question` answered from the vault's index (from one note or PDF alone with `options.note`). */
  ask(question: string, options: AskOptions, onText: (text: string) => void, signal?: AbortSignal): Promise<Answer> {
    const body: { question: string; mode?: SearchMode; retriever?: Retriever; conversation?: string; expand?: boolean; note?: string } = { question };
    if (options.mode) body.mode = options.mode;
    if (options.retriever) body.retriever = options.retriever;
    if (options.conversation) body.conversation = options.conversation;
    if (options.expand) body.expand = true;
    if (options.note) body.note = options.note;
    return this.generate<Answer>("/api/ask", body, onText, signal);
  }

  /** `POST /api/article/ask`: `question` answered from `text` alone (not the vault); its passages are named `name:a-b`. */
  askArticle(text: string, name: string, question: string, onText: (text: string) => void, signal?: AbortSignal): Promise<ArticleAnswer> {
    return this.generate<ArticleAnswer>("/api/article/ask", { text, name, question }, onText, signal);
  }

  reflect(range: ReflectRange, onText: (text: string) => void, signal?: AbortSignal): Promise<Reflection> {
    return this.generate<Reflection>("/api/reflect", range, onText, signal);
  }

  draft(note: string, heading: string, onText: (text: string) => void, signal?: AbortSignal): Promise<Draft> {
    return this.generate<Draft>("/api/draft", { note, heading }, onText, signal);
  }
}
