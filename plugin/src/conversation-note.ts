/**
 * A conversation of the ask view as a note: each question, its answer and its sources as
 * `[[note#heading]]` wikilinks (a PDF's as `[[file.pdf#page=N]]`), made as a proposal
 * (`POST /api/proposals`, `change: "create"`) named `Conversation YYYY-MM-DD HHmm.md` in the
 * configured folder. The server takes at most 48,000 characters of text (and a 64 KiB body): a
 * longer conversation keeps its latest turns and says how many earlier ones were left out.
 */
import type { Answer, NewProposal, SourceCard } from "./api";

/** One question and its answer. */
export interface Turn {
  question: string;
  answer: Answer;
}

/** The server's limit on a proposal's text. */
export const MAX_TEXT_CHARS = 48_000;
/** The server's limit on a request body, less room for the JSON around the text. */
const MAX_BODY_BYTES = 60_000;
/** The server's limit on a title. */
const MAX_TITLE_CHARS = 500;

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** `YYYY-MM-DD HHmm`, local time. */
export function stamp(now: Date): string {
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())} ${pad(now.getHours())}${pad(now.getMinutes())}`;
}

/** The note's path: `<folder>/Conversation YYYY-MM-DD HHmm.md`, with ` 2`, ` 3`… when `taken`. */
export function conversationPath(folder: string, now: Date, taken: (path: string) => boolean): string {
  const dir = folder.trim().replace(/^\/+|\/+$/g, "");
  const base = `${dir ? `${dir}/` : ""}Conversation ${stamp(now)}`;
  let path = `${base}.md`;
  for (let n = 2; taken(path); n++) path = `${base} ${n}.md`;
  return path;
}

/**
 * A source as a wikilink to its note's heading (`[[Areas/Sleep#Habits]]`), or to the note; a
 * PDF's passage as a link that opens the PDF at its page (`[[Papers/Kelp.pdf#page=2]]`).
 */
export function sourceLink(card: SourceCard): string {
  if (card.page) return `[[${card.path}#page=${card.page}]]`;
  const note = card.path.replace(/\.md$/i, "");
  // These characters end a link's heading part, or the link itself.
  const heading = (card.heading_path[card.heading_path.length - 1] ?? "").replace(/[[\]|#^]/g, " ").trim();
  return heading ? `[[${note}#${heading}]]` : `[[${note}]]`;
}

/** One turn in Markdown: the question as a heading, the answer, its sources. */
function turnText(turn: Turn): string {
  const question = turn.question.replace(/\s+/g, " ").trim();
  const parts = [`## ${question}`, "", turn.answer.answer.trim() || "(no answer)"];
  if (turn.answer.sources.length) {
    parts.push("", "Sources:");
    for (const card of turn.answer.sources) parts.push(`- ${card.id}: ${sourceLink(card)}${card.cited ? "" : " (not cited)"}`);
  }
  return parts.join("\n");
}

/** The note's text: its heading, then the latest turns that fit the server's limits. */
export function conversationText(turns: readonly Turn[], heading: string): { text: string; left: number } {
  const top = `# ${heading}\n`;
  const pieces = turns.map(turnText);
  for (let first = 0; first < pieces.length; first++) {
    const note = first ? `\n_The first ${first === 1 ? "question is" : `${first} questions are`} left out: the whole conversation is too long for one note._\n` : "";
    const text = `${top}${note}\n${pieces.slice(first).join("\n\n")}\n`;
    if (text.length <= MAX_TEXT_CHARS && new TextEncoder().encode(JSON.stringify(text)).length <= MAX_BODY_BYTES) return { text, left: first };
  }
  // Even the last turn alone is too long: its answer is cut.
  const last = pieces[pieces.length - 1] ?? "";
  const cut = "\n\n_The answer is cut here: it is too long for one note._\n";
  let text = `${top}\n${last}`;
  while (text.length + cut.length > MAX_TEXT_CHARS || new TextEncoder().encode(JSON.stringify(text + cut)).length > MAX_BODY_BYTES) {
    text = text.slice(0, Math.floor(text.length * 0.9));
  }
  return { text: text + cut, left: pieces.length - 1 };
}

/** The proposal that creates the note of `turns`. */
export function conversationProposal(turns: readonly Turn[], folder: string, now: Date, taken: (path: string) => boolean): { change: NewProposal; left: number } {
  const path = conversationPath(folder, now, taken);
  const heading = `Conversation ${stamp(now)}`;
  const { text, left } = conversationText(turns, heading);
  const first = (turns[0]?.question ?? "").replace(/\s+/g, " ").trim();
  const title = `Save the conversation “${first.length > 120 ? `${first.slice(0, 119)}…` : first}”`.slice(0, MAX_TITLE_CHARS);
  return { change: { path, change: "create", text, title }, left };
}
