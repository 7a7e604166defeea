/**
 * The notes related to one note, one row each: `/api/similar` lists a note once per relation
 * (similar in meaning, links here, linked from the note, a map of content that lists it); a note
 * can have several, and the pane shows it once with all of them.
 *
 * A similar note's cosine orders the list and nothing more: with the embedding models quire uses,
 * the notes of one vault all sit close to each other, good neighbours or not. What does tell a
 * reader something is a near copy (`near_copies`: close vectors and much of its own text in
 * common), which the pane marks and lists first.
 */
import type { Related } from "./api";

export type Relation = "similar" | "backlink" | "outgoing" | "moc";

export interface RelatedRow {
  path: string;
  title: string;
  /** Cosine similarity, when the note is similar in meaning: for ordering only. */
  score?: number;
  /** The share of own text in common (0 to 1), when the note looks like a copy of this one. */
  overlap?: number;
  /** In the order of RELATIONS. */
  relations: Relation[];
}

export const RELATIONS: Relation[] = ["similar", "backlink", "outgoing", "moc"];

export const RELATION_LABELS: Record<Relation, string> = {
  similar: "similar",
  backlink: "links here",
  outgoing: "linked",
  moc: "map of content",
};

/** The share of text in common as a whole percentage: 0.624 is 62. */
export function sharePercent(overlap: number): number {
  return Math.round(overlap * 100);
}

/** The badge of a near copy: "near copy · 62% shared". */
export function nearCopyLabel(overlap: number): string {
  return `near copy · ${sharePercent(overlap)}% shared`;
}

/** The tooltip of a similar note's badge: its cosine, said to be a rank and not a verdict. */
export function similarTooltip(score: number): string {
  return `Cosine ${score.toFixed(2)}. It only orders this list: the notes of one vault are all close in meaning, related or not.`;
}

/**
 * One row per note, the note itself left out. Near copies come first, the largest share of text
 * in common first; then the other notes similar in meaning, most similar first; then the others
 * in the order the server gave them (backlinks, links out, maps).
 */
export function mergeRelated(related: Related): RelatedRow[] {
  const rows = new Map<string, RelatedRow>();
  const lists: [Relation, Related["similar"]][] = [
    ["similar", related.similar],
    ["backlink", related.backlinks],
    ["outgoing", related.outgoing],
    ["moc", related.moc_parents],
  ];
  for (const [relation, notes] of lists) {
    for (const note of notes ?? []) {
      if (note.path === related.path) continue;
      let row = rows.get(note.path);
      if (!row) {
        row = { path: note.path, title: note.title || note.path, relations: [] };
        rows.set(note.path, row);
      }
      if (!row.relations.includes(relation)) row.relations.push(relation);
      if (relation === "similar" && note.score !== undefined) row.score = Math.max(row.score ?? -Infinity, note.score);
    }
  }
  for (const copy of related.near_copies ?? []) {
    if (copy.path === related.path) continue;
    // A near copy is one of the similar notes; should the server name one that is not, it is still similar.
    let row = rows.get(copy.path);
    if (!row) {
      row = { path: copy.path, title: copy.title || copy.path, relations: [] };
      rows.set(copy.path, row);
    }
    if (!row.relations.includes("similar")) row.relations.push("similar");
    row.score = Math.max(row.score ?? -Infinity, copy.score);
    row.overlap = Math.max(row.overlap ?? -Infinity, copy.overlap);
  }
  const order = [...rows.values()];
  for (const row of order) row.relations.sort((a, b) => RELATIONS.indexOf(a) - RELATIONS.indexOf(b));
  const copies = order.filter((row) => row.overlap !== undefined).sort((a, b) => (b.overlap ?? 0) - (a.overlap ?? 0) || (b.score ?? 0) - (a.score ?? 0));
  const similar = order.filter((row) => row.overlap === undefined && row.score !== undefined).sort((a, b) => (b.score ?? 0) - (a.score ?? 0));
  return [...copies, ...similar, ...order.filter((row) => row.score === undefined)];
}
