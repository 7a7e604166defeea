/**
 * Showing an answer, a draft or a reflection: its Markdown made safe to render, its checked
 * citations as links to their source cards, its wikilinks as links that open their notes, the
 * cards themselves (a note's passage by its lines, a PDF's by its page), and the line that says
 * what kind of answer it is.
 *
 * Answers are untrusted text (a model's output, or quoted notes): they are rendered by Obsidian's
 * own Markdown renderer after `safeMarkdown`, and every other piece is set as text.
 */
import { setIcon } from "obsidian";
import type { AnswerKind, DescentTrace, RetrievalReport, SourceCard } from "./api";

const REMOTE_IMAGE = /!(\[[^\]]*\]\(\s*<?(?:[a-z][a-z0-9+.-]*:|\/\/))/gi;
const REFERENCE_IMAGE = /!(\[[^\]]*\]\[[^\]]*\])/g;

function safeText(text: string): string {
  return text.replace(/</g, "\\<").replace(REMOTE_IMAGE, "$1").replace(REFERENCE_IMAGE, "$1");
}

/**
 * The answer's Markdown with nothing that reaches outside the vault or becomes markup of its
 * own: raw HTML is shown as text, and images with a URL become links (an image would be fetched
 * as soon as it is rendered). Code spans and fenced code are left as they are.
 */
export function safeMarkdown(markdown: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split("\n")) {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== null) {
      if (opening && opening[0] === fence[0] && opening.length >= fence.length) fence = null;
      out.push(line);
      continue;
    }
    if (opening) {
      fence = opening;
      out.push(line);
      continue;
    }
    // Outside code spans only: split on backtick runs and keep the spans as written.
    const parts = line.split(/(`+[^`]*?`+)/);
    out.push(parts.map((part, i) => (i % 2 === 1 ? part : safeText(part))).join(""));
  }
  return out.join("\n");
}

const CITATION = /\[(S\d+(?:\s*[,;]\s*S\d+)*)\]/g;

/**
 * Makes the checked citations in rendered text (`[S1]`, `[S1, S3]`) links to their cards. Only
 * ids in `citable` become links: text that merely looks like a citation (quoted from a note, or
 * an id the server removed) stays text. Code and existing links are left alone.
 */
export function linkCitations(root: HTMLElement, citable: ReadonlySet<string>, onCite: (id: string) => void): number {
  if (!citable.size) return 0;
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement?.closest("code, pre, a")) continue;
    if (node.nodeValue && CITATION.test(node.nodeValue)) texts.push(node as Text);
    CITATION.lastIndex = 0;
  }
  let linked = 0;
  for (const text of texts) {
    const value = text.nodeValue ?? "";
    const fragment = createFragment();
    let at = 0;
    for (const match of value.matchAll(CITATION)) {
      const start = match.index ?? 0;
      const ids = (match[1] ?? "").split(/\s*[,;]\s*/);
      fragment.appendText(value.slice(at, start));
      if (ids.some((id) => citable.has(id))) {
        ids.forEach((id, i) => {
          if (citable.has(id)) {
            const link = fragment.createEl("a", { cls: "quire-cite", text: id, href: "#", attr: { "data-source": id } });
            link.addEventListener("click", (event) => {
              event.preventDefault();
              onCite(id);
            });
            linked++;
          } else {
            fragment.appendText(`[${id}]`);
          }
          if (i < ids.length - 1) fragment.appendText(" ");
        });
      } else {
        fragment.appendText(match[0]);
      }
      at = start + match[0].length;
    }
    fragment.appendText(value.slice(at));
    text.replaceWith(fragment);
  }
  return linked;
}

/**
 * Makes the wikilinks of rendered Markdown open their notes through `open` (given the link's
 * target, `Note#Heading`). Obsidian's renderer writes `[[Note#Heading|text]]` as
 * `<a class="internal-link" data-href="Note#Heading">`, and in a plugin's own view nothing opens
 * it unless the view does. Returns how many links there are.
 */
export function openInternalLinks(root: HTMLElement, open: (linktext: string) => void): number {
  const links = Array.from(root.querySelectorAll("a.internal-link"));
  for (const link of links) {
    const target = link.getAttribute("data-href") ?? link.getAttribute("href");
    if (!target) continue;
    link.addEventListener("click", (event) => {
      event.preventDefault();
      open(target);
    });
  }
  return links.length;
}

/** What kind of answer it is, in words. */
export function kindLabel(kind: AnswerKind, model: string | null | undefined): string {
  switch (kind) {
    case "generated":
      return `Written by ${model ?? "the language model"} from your notes`;
    case "extractive":
      return "Extractive: quoted from your notes (no language model is configured)";
    case "nothing_found":
      return "Nothing in your notes matched";
  }
}

/** `text` as a sentence: its first letter capitalised, a full stop at its end. */
function asSentence(text: string): string {
  const trimmed = text.trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?…]$/.test(capital) ? capital : `${capital}.`;
}

/** How a question found its passages, said under its answer. */
export interface AnsweredBy {
  /** `Answered by search.`, `Answered by tree descent.`, `Answered by tree descent and search (auto).`, then the server's notes. */
  text: string;
  /** The descent's steps, one a line (empty without a descent), for the line's tooltip. */
  steps: string;
}

/**
 * What answered, from the `retrieval` report of the answer: search, tree descent, or both (auto
 * merges the descent's passages with search's; so does a tree descent when a note it chose had
 * changed since it was indexed); a descent that read nothing left the answer to search. The
 * report's notes follow (why auto did not descend, or why the descent fell back), `auto: ` left
 * out when the line already says auto. Null when the answer has no report (an older server).
 */
export function answeredBy(report: RetrievalReport | null | undefined): AnsweredBy | null {
  if (!report?.retriever) return null;
  const descent = report.descent ?? null;
  const descended = descent !== null && descent.sections.length > 0;
  const searched = !descended || report.retriever === "auto" || descent.stale.length > 0;
  const by = descended ? (searched ? "tree descent and search" : "tree descent") : "search";
  const auto = report.retriever === "auto";
  const sentences = [`Answered by ${by}${auto ? " (auto)" : ""}.`];
  for (const note of report.notes ?? []) sentences.push(asSentence(auto ? note.replace(/^auto:\s*/, "") : note));
  if (descent?.stopped) sentences.push(asSentence(`the descent stopped early: ${descent.stopped}`));
  return { text: sentences.join(" "), steps: descentSteps(descent) };
}

/** The descent's steps, one a line: what the model was shown, what it chose, and why. */
function descentSteps(descent: DescentTrace | null): string {
  if (!descent) return "";
  return descent.steps.map((step) => `Shown ${step.shown}, chose ${step.chose.join(", ") || "none"}${step.why ? `: ${step.why}` : ""}`).join("\n");
}

/**
 * The warnings to show: the server's, and the citations it removed because they match no source
 * (said here too unless one of the server's warnings already names them).
 */
export function answerWarnings(warnings: readonly string[], invalid: readonly string[]): string[] {
  const all = [...warnings];
  if (invalid.length && !warnings.some((w) => invalid.every((id) => w.includes(id)))) {
    all.push(
      invalid.length === 1
        ? `Removed a citation that matches no source: ${invalid[0] ?? ""}.`
        : `Removed ${invalid.length} citations that match no source: ${invalid.join(", ")}.`,
    );
  }
  return all;
}

/** A passage's headings, outermost first, as one line. */
function headingPath(path: readonly string[]): string {
  return path.length ? path.join(" › ") : "(top of the note)";
}

/** Where a card's passage is: `Papers/Kelp.pdf, page 2` for a PDF's page, else `path:start–end`. */
function sourcePlace(card: SourceCard): string {
  return card.page ? `${card.path}, page ${card.page}` : `${card.path}:${card.start_line}–${card.end_line}`;
}

/**
 * The headings above a passage, as its card (or search result) shows them; null when there are
 * none to show. A PDF's passage is under its page's heading (`Page 2`), which the card already
 * says by its place (`Papers/Kelp.pdf, page 2`): that heading is left out, and a PDF's passage
 * without other headings shows none.
 */
export function passageHeadings(headings: readonly string[], page: number | undefined): string | null {
  if (!page) return headingPath(headings);
  const rest = headings[0] === `Page ${page}` ? headings.slice(1) : headings;
  return rest.length ? headingPath(rest) : null;
}

function sourceCard(list: HTMLElement, card: SourceCard, open: (card: SourceCard) => void): HTMLElement {
  const item = list.createEl("li", { cls: card.cited ? "quire-source is-cited" : "quire-source" });
  const button = item.createEl("button", { cls: "quire-source-card", attr: { type: "button", "data-source": card.id } });
  const head = button.createDiv({ cls: "quire-source-head" });
  head.createSpan({ cls: "quire-source-id", text: card.id });
  head.createSpan({ cls: "quire-source-title", text: card.title || card.path });
  if (card.cited) head.createSpan({ cls: "quire-tag", text: "cited" });
  const headings = passageHeadings(card.heading_path, card.page);
  if (headings !== null) button.createDiv({ cls: "quire-heading-path", text: headings });
  const where = button.createDiv({ cls: "quire-lines" });
  setIcon(where.createSpan({ cls: "quire-icon" }), "file-text");
  where.appendText(sourcePlace(card));
  button.addEventListener("click", () => open(card));
  return button;
}

/**
 * The source cards; a card opens its note at its lines (a PDF at its page). The cited ones are
 * listed, and the passages the answer did not cite are folded below them. Returns each card's
 * button by id.
 */
export function renderSourceCards(list: HTMLElement, sources: readonly SourceCard[], open: (card: SourceCard) => void): Map<string, HTMLElement> {
  list.empty();
  const cards = new Map<string, HTMLElement>();
  const cited = sources.filter((card) => card.cited);
  const others = sources.filter((card) => !card.cited);
  for (const card of cited) cards.set(card.id, sourceCard(list, card, open));
  if (others.length) {
    const details = list.createEl("li", { cls: "quire-more-sources" }).createEl("details");
    const noun = others.length === 1 ? "passage" : "passages";
    details.createEl("summary", { text: cited.length ? `${others.length} more ${noun} it was given` : `${others.length} ${noun} it was given` });
    const more = details.createEl("ul", { cls: "quire-sources" });
    for (const card of others) cards.set(card.id, sourceCard(more, card, open));
  }
  return cards;
}
