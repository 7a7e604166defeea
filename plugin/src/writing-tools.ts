/**
 * quire's writing tools on the note in the editor: split it into atomic notes, make flashcards,
 * transform the selection, complete at the cursor, a Dataview query from a question, and one
 * transform over every note of a folder or tag (batch). Each calls the server's route
 * (`POST /api/split`, `/api/flashcards`, `/api/transform`, `/api/complete`, `/api/dataview`,
 * `/api/batch`) and ends in a proposal, which opens in the proposals pane: nothing is written
 * until it is applied there.
 *
 * The server reads the note from disk, so the editor is saved first. The routes answer once
 * the work is done; while it runs a notice says so, with the seconds so far and a Cancel button.
 * Cancelling stops the plugin's wait (the request is dropped): the server may still finish the
 * work, and a proposal it makes then shows in the pane. A refusal (no language model, a busy
 * server, a note with nothing to split) is the server's message in a notice.
 */
import { type Editor, type MarkdownFileInfo, Notice } from "obsidian";
import { isAbort, QuireError, type BatchPlan, type Proposal, type TransformChoice } from "./api";
import { saveEditors } from "./editors";
import type { QuireHost } from "./host";
import { BatchModal, type BatchSelect, choiceLabel, ConfirmBatchModal, notesLabel, QuestionModal, TransformModal } from "./tool-modals";

/** How long a notice about a problem stays up. */
const PROBLEM_NOTICE_MS = 12_000;

export const CANCELLED =
  "quire: cancelled. The plugin stopped waiting; the server may still finish, and a proposal it makes then appears in Review proposals.";

/** The note a command runs on, saved so that the server reads what the editor holds; null (said) when there is none. */
async function noteOf(host: QuireHost, context: MarkdownFileInfo): Promise<string | null> {
  const file = context.file;
  if (!file) {
    new Notice("Open a note first.");
    return null;
  }
  await saveEditors(host.app, [file.path]);
  return file.path;
}

/** The selected lines as the server takes them (`A-B`, 1-based); null when nothing is selected. */
export function selectedLines(editor: Editor): string | null {
  const from = editor.getCursor("from");
  const to = editor.getCursor("to");
  if (from.line === to.line && from.ch === to.ch) return null;
  // A selection that ends at the start of a line does not take that line.
  const end = to.ch === 0 && to.line > from.line ? to.line - 1 : to.line;
  return `${from.line + 1}-${end + 1}`;
}

/** The line to continue after (1-based): the cursor's, or the last line of text when the cursor is on the empty line after it. */
export function completionLine(editor: Editor): number {
  let line = editor.getCursor().line;
  if (line === editor.lastLine() && line > 0 && editor.getLine(line) === "") line--;
  return line + 1;
}

/** What a refusal or a failure means for the user: the server's own words, mostly. */
export function toolProblem(error: unknown): string {
  if (!(error instanceof QuireError)) return `quire: ${String(error)}`;
  switch (error.code) {
    case "unreachable":
      return "quire is not reachable. It reconnects by itself; see the status bar.";
    case "busy":
      return "quire is busy writing other answers; try again when one has finished.";
    default:
      return `quire: ${error.message}`;
  }
}

/**
 * Runs one request of a tool with a notice that it runs (its seconds so far, and Cancel).
 * Resolves with its answer, or null when it failed or was cancelled (a notice says which).
 */
export async function runTool<T>(doing: string, call: (signal: AbortSignal) => Promise<T>): Promise<T | null> {
  const controller = new AbortController();
  const started = Date.now();
  const box = createDiv({ cls: "quire-tool-notice" });
  const textEl = box.createSpan({ cls: "quire-tool-running", text: `quire: ${doing}…` });
  const cancel = box.createEl("button", { cls: "quire-tool-cancel", text: "Cancel", attr: { type: "button" } });
  cancel.addEventListener("click", (event) => {
    event.stopPropagation();
    controller.abort();
  });
  // Up until the request ends.
  const notice = new Notice(createFragment((fragment) => fragment.appendChild(box)), 0);
  const timer = window.setInterval(() => textEl.setText(`quire: ${doing}… ${Math.round((Date.now() - started) / 1000)} s`), 1000);
  try {
    return await call(controller.signal);
  } catch (error) {
    new Notice(isAbort(error) ? CANCELLED : toolProblem(error), PROBLEM_NOTICE_MS);
    return null;
  } finally {
    window.clearInterval(timer);
    notice.hide();
  }
}

/** Opens the pane on a proposal just made. */
function review(host: QuireHost, proposal: Proposal): Promise<void> {
  return host.reviewNewProposals([proposal.id], proposal.id);
}

/** "Split into atomic notes": by topic with a model, else by headings. */
export async function splitNote(host: QuireHost, context: MarkdownFileInfo): Promise<void> {
  const note = await noteOf(host, context);
  if (!note) return;
  const result = await runTool(`splitting ${note}`, (signal) => host.client().split(note, signal));
  if (result) await review(host, result.proposal);
}

/** "Make flashcards": cards under `## Flashcards`; needs a model. */
export async function makeFlashcards(host: QuireHost, context: MarkdownFileInfo): Promise<void> {
  const note = await noteOf(host, context);
  if (!note) return;
  const result = await runTool(`making flashcards from ${note}`, (signal) => host.client().flashcards(note, signal));
  if (!result) return;
  if (result.proposal) {
    await review(host, result.proposal);
    return;
  }
  const { already_in_note: already, bad_lines: bad } = result.cards;
  new Notice(
    `quire: no new flashcards from ${note}${already ? `; ${already} the note already has` : ""}${bad ? `; ${bad} dropped because the note does not hold their answer` : ""}.`,
    PROBLEM_NOTICE_MS,
  );
}

/** "Transform the selection": asks what to do, then proposes the rewritten lines (the body without a selection). */
export function transformSelection(host: QuireHost, editor: Editor, context: MarkdownFileInfo): TransformModal | null {
  if (!context.file) {
    new Notice("Open a note first.");
    return null;
  }
  const lines = selectedLines(editor);
  const modal = new TransformModal(host.app, lines ? `lines ${lines}` : "the note's text", (choice) => void transformLines(host, context, lines, choice));
  modal.open();
  return modal;
}

async function transformLines(host: QuireHost, context: MarkdownFileInfo, lines: string | null, choice: TransformChoice): Promise<void> {
  const note = await noteOf(host, context);
  if (!note) return;
  const what = lines ? `lines ${lines} of ${note}` : note;
  const result = await runTool(`rewriting ${what} (${choiceLabel(choice)})`, (signal) => host.client().transform(note, lines, choice, signal));
  if (result) await review(host, result.proposal);
}

/** "Complete at the cursor": the note continued after the cursor's line. */
export async function completeAtCursor(host: QuireHost, editor: Editor, context: MarkdownFileInfo): Promise<void> {
  const at = completionLine(editor);
  const note = await noteOf(host, context);
  if (!note) return;
  const result = await runTool(`continuing ${note} after line ${at}`, (signal) => host.client().complete(note, at, signal));
  if (!result) return;
  if (result.proposal) await review(host, result.proposal);
  else new Notice("The language model wrote nothing to add.", PROBLEM_NOTICE_MS);
}

/** "Dataview query from a question": asks the question, then proposes the query at the end of the note. */
export function dataviewQuery(host: QuireHost, context: MarkdownFileInfo): QuestionModal | null {
  const file = context.file;
  if (!file) {
    new Notice("Open a note first: the query is added to it.");
    return null;
  }
  const modal = new QuestionModal(host.app, file.path, (question) => void queryInto(host, context, question));
  modal.open();
  return modal;
}

async function queryInto(host: QuireHost, context: MarkdownFileInfo, question: string): Promise<void> {
  const note = await noteOf(host, context);
  if (!note) return;
  const result = await runTool("writing a Dataview query", (signal) => host.client().dataview(question, note, signal));
  if (!result) return;
  if (result.proposal) await review(host, result.proposal);
  else new Notice(`quire: the query is\n${result.query}`, PROBLEM_NOTICE_MS);
}

/**
 * "Transform many notes": which notes and what to do; the server's dry run counts them and a
 * confirmation shows the count; then the batch runs, one proposal per note.
 */
export function batchTransform(host: QuireHost): BatchModal {
  const folder = host.app.workspace.getActiveFile()?.parent?.path ?? "";
  const modal = new BatchModal(host.app, folder === "/" ? "" : folder, (select, choice) => void planBatch(host, select, choice));
  modal.open();
  return modal;
}

async function planBatch(host: QuireHost, select: BatchSelect, choice: TransformChoice): Promise<void> {
  const where = "folder" in select ? `in ${select.folder}` : `tagged #${select.tag}`;
  const dry = await runTool(`finding the notes ${where}`, (signal) => host.client().batch(select, choice, true, signal));
  if (!dry) return;
  new ConfirmBatchModal(host.app, dry.plan, choiceLabel(choice), () => void runBatch(host, select, choice, dry.plan)).open();
}

async function runBatch(host: QuireHost, select: BatchSelect, choice: TransformChoice, plan: BatchPlan): Promise<void> {
  const count = plan.notes.length - plan.done.length;
  const result = await runTool(`transforming ${notesLabel(count)} (${choiceLabel(choice)})`, (signal) => host.client().batch(select, choice, false, signal));
  const outcome = result?.outcome;
  if (!outcome) return;
  const ids = outcome.proposals.map(([, id]) => id);
  const made = ids.length === 1 ? "1 proposal" : `${ids.length} proposals`;
  const failed = outcome.failed.length ? ` Not transformed: ${outcome.failed.map(([note, why]) => `${note} (${why})`).join("; ")}.` : "";
  new Notice(`quire: made ${made} to review.${failed}`, failed ? PROBLEM_NOTICE_MS : undefined);
  if (ids.length) await host.reviewNewProposals(ids, ids.length === 1 ? ids[0] : undefined);
}
