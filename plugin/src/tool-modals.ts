/**
 * The small dialogs of the writing tools: what to do to the text (a preset or an instruction),
 * a question for a Dataview query, which notes a batch transforms, and the batch's confirmation
 * with the count the server's dry run gave. Each hands its answer to a callback and closes; none
 * talks to the server.
 */
import { type App, Modal } from "obsidian";
import type { BatchPlan, TransformChoice } from "./api";

/** The presets of `POST /api/transform` (and `/api/batch`), as the buttons name them. */
export const PRESETS: readonly { preset: string; label: string }[] = [
  { preset: "improve", label: "Improve" },
  { preset: "shorten", label: "Shorten" },
  { preset: "grammar", label: "Fix grammar" },
  { preset: "examples", label: "Add examples" },
];

/** The server's limit on an instruction. */
const MAX_INSTRUCTION_CHARS = 2_000;
/** How many of a batch's notes the confirmation lists by name. */
const LISTED_NOTES = 12;

/** How a choice is said in notices and the confirmation. */
export function choiceLabel(choice: TransformChoice): string {
  if ("instruction" in choice) return "your instruction";
  if (choice.preset.startsWith("translate:")) return `translate into ${choice.preset.slice("translate:".length)}`;
  return PRESETS.find((p) => p.preset === choice.preset)?.label.toLowerCase() ?? choice.preset;
}

/**
 * The controls that choose what to do: a button per preset, "Translate into" a language, and a
 * free instruction. `choose` gets the choice (nothing when an instruction or language is empty).
 */
function renderChoice(el: HTMLElement, choose: (choice: TransformChoice) => void): void {
  const presets = el.createDiv({ cls: "quire-tool-presets" });
  for (const { preset, label } of PRESETS) {
    const button = presets.createEl("button", { cls: "quire-tool-preset", text: label, attr: { type: "button", "data-preset": preset } });
    button.addEventListener("click", () => choose({ preset }));
  }
  const translate = el.createDiv({ cls: "quire-tool-row" });
  const language = translate.createEl("input", { cls: "quire-tool-language", attr: { type: "text", placeholder: "Language, e.g. French", "aria-label": "Language" } });
  const translateButton = translate.createEl("button", { cls: "quire-tool-translate", text: "Translate", attr: { type: "button" } });
  translateButton.addEventListener("click", () => {
    const name = language.value.trim();
    if (name) choose({ preset: `translate:${name}` });
    else language.focus();
  });
  el.createDiv({ cls: "quire-hint", text: "Or say what to do:" });
  const instruction = el.createEl("textarea", {
    cls: "quire-tool-instruction",
    attr: { rows: 3, maxlength: MAX_INSTRUCTION_CHARS, placeholder: "For example: turn this into a bulleted list", "aria-label": "Instruction" },
  });
  const row = el.createDiv({ cls: "quire-tool-row" });
  const go = row.createEl("button", { cls: "mod-cta quire-tool-go", text: "Use this instruction", attr: { type: "button" } });
  go.addEventListener("click", () => {
    const text = instruction.value.trim();
    if (text) choose({ instruction: text });
    else instruction.focus();
  });
}

/** What to do to the selection (or the note's body). */
export class TransformModal extends Modal {
  constructor(
    app: App,
    private readonly what: string,
    private readonly choose: (choice: TransformChoice) => void,
  ) {
    super(app);
  }

  override onOpen(): void {
    this.setTitle(`Transform ${this.what}`);
    this.contentEl.addClass("quire-tool-modal");
    this.contentEl.createDiv({ cls: "quire-hint", text: "quire proposes the rewritten text; you see the change before anything is written." });
    renderChoice(this.contentEl, (choice) => {
      this.close();
      this.choose(choice);
    });
  }

  override onClose(): void {
    this.contentEl.empty();
  }
}

/** The question a Dataview query answers. */
export class QuestionModal extends Modal {
  constructor(
    app: App,
    private readonly note: string,
    private readonly ask: (question: string) => void,
  ) {
    super(app);
  }

  override onOpen(): void {
    this.setTitle("Dataview query from a question");
    this.contentEl.addClass("quire-tool-modal");
    this.contentEl.createDiv({ cls: "quire-hint", text: `The query is proposed at the end of ${this.note}, built from your vault's folders, tags and properties.` });
    const input = this.contentEl.createEl("textarea", {
      cls: "quire-tool-question",
      attr: { rows: 2, maxlength: MAX_INSTRUCTION_CHARS, placeholder: "For example: books rated 5, newest first", "aria-label": "Question" },
    });
    const row = this.contentEl.createDiv({ cls: "quire-tool-row" });
    const go = row.createEl("button", { cls: "mod-cta quire-tool-go", text: "Make the query", attr: { type: "button" } });
    const submit = () => {
      const question = input.value.trim();
      if (!question) return;
      this.close();
      this.ask(question);
    };
    go.addEventListener("click", submit);
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        submit();
      }
    });
  }

  override onClose(): void {
    this.contentEl.empty();
  }
}

/** Which notes a batch selects. */
export type BatchSelect = { folder: string } | { tag: string };

/** Which notes to transform (a folder or a tag), and what to do to them. */
export class BatchModal extends Modal {
  constructor(
    app: App,
    private readonly folder: string,
    private readonly run: (select: BatchSelect, choice: TransformChoice) => void,
  ) {
    super(app);
  }

  override onOpen(): void {
    this.setTitle("Transform many notes");
    const el = this.contentEl;
    el.addClass("quire-tool-modal");
    el.createDiv({ cls: "quire-hint", text: "Every note in a folder, or with a tag, rewritten the same way: one proposal per note. You see how many notes first." });
    const row = el.createDiv({ cls: "quire-tool-row" });
    const kind = row.createEl("select", { cls: "dropdown quire-tool-kind", attr: { "aria-label": "Select notes by" } });
    kind.createEl("option", { text: "Folder", value: "folder" });
    kind.createEl("option", { text: "Tag", value: "tag" });
    const value = row.createEl("input", { cls: "quire-tool-select", attr: { type: "text", placeholder: "Folder path", "aria-label": "Folder or tag" } });
    value.value = this.folder;
    kind.addEventListener("change", () => value.setAttr("placeholder", kind.value === "tag" ? "Tag" : "Folder path"));
    const problem = el.createDiv({ cls: "quire-tool-problem" });
    renderChoice(el, (choice) => {
      const text = value.value.trim();
      if (!text) {
        problem.setText(kind.value === "tag" ? "Say which tag." : "Say which folder.");
        value.focus();
        return;
      }
      this.close();
      this.run(kind.value === "tag" ? { tag: text.replace(/^#/, "") } : { folder: text.replace(/^\/+|\/+$/g, "") }, choice);
    });
  }

  override onClose(): void {
    this.contentEl.empty();
  }
}

/** The notes a batch will transform, from its dry run: run it, or cancel. */
export class ConfirmBatchModal extends Modal {
  constructor(
    app: App,
    private readonly plan: BatchPlan,
    private readonly doing: string,
    private readonly confirm: () => void,
  ) {
    super(app);
  }

  /** The notes still to do (those an earlier run did are skipped). */
  private todo(): string[] {
    const done = new Set(this.plan.done);
    return this.plan.notes.filter((note) => !done.has(note));
  }

  override onOpen(): void {
    this.setTitle("Transform these notes?");
    const el = this.contentEl;
    el.addClass("quire-tool-modal", "quire-batch-confirm");
    const todo = this.todo();
    const done = this.plan.done.length;
    const count = el.createDiv({ cls: "quire-batch-count" });
    count.setText(
      todo.length
        ? `${notesLabel(todo.length)} to ${this.doing}${done ? ` (${done} done by an earlier run, skipped)` : ""}: about ${this.plan.estimated_tokens} tokens to send to the language model, and about as many back.`
        : this.plan.notes.length
          ? `Nothing to do: an earlier run already made a proposal for each of the ${notesLabel(this.plan.notes.length)}.`
          : "No note matches.",
    );
    const list = el.createEl("ul", { cls: "quire-batch-notes" });
    for (const note of todo.slice(0, LISTED_NOTES)) list.createEl("li", { text: note });
    if (todo.length > LISTED_NOTES) list.createEl("li", { cls: "quire-hint", text: `and ${todo.length - LISTED_NOTES} more` });
    el.createDiv({ cls: "quire-hint", text: "Nothing is written: each note gets a proposal to review." });
    const row = el.createDiv({ cls: "quire-tool-row" });
    if (todo.length) {
      const go = row.createEl("button", { cls: "mod-cta quire-batch-run", text: `Transform ${notesLabel(todo.length)}`, attr: { type: "button" } });
      go.addEventListener("click", () => {
        this.close();
        this.confirm();
      });
    }
    const cancel = row.createEl("button", { cls: "quire-batch-cancel", text: todo.length ? "Cancel" : "Close", attr: { type: "button" } });
    cancel.addEventListener("click", () => this.close());
  }

  override onClose(): void {
    this.contentEl.empty();
  }
}

export function notesLabel(count: number): string {
  return count === 1 ? "1 note" : `${count} notes`;
}
