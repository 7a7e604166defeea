/**
 * The notes related to one note, one row each: `/api/similar` lists a note once per relation
 * (similar in meaning, links here, linked from the note, a map of content that lists it); a note
 * can have several, and the pane shows it once with all of them.
 */
import type { Related } from "./api";

export type Relation = "similar" | "backlink" | "outgoing" | "moc";

export interface RelatedRow {
  path: string;
  title: string;
  /** Similarity, when the note is similar in meaning. */
  score?: number;
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

/**
 * One row per note, the note itself left out. Notes similar in meaning come first, most similar
 * first; then the others in the order the server gave them (backlinks, links out, maps).
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
  const order = [...rows.values()];
  for (const row of order) row.relations.sort((a, b) => RELATIONS.indexOf(a) - RELATIONS.indexOf(b));
  const similar = order.filter((row) => row.score !== undefined).sort((a, b) => (b.score ?? 0) - (a.score ?? 0));
  return [...similar, ...order.filter((row) => row.score === undefined)];
}
