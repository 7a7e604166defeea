/**
 * The words of the vault health view's topics, vault map and deep audit: what the clustering
 * covered, what a deep audit would send and what it did, why a map of content was not made.
 * Pure: no DOM, no requests.
 */
import type { AuditMapOutcome, AuditPlan, MocMade, MocSkipped, NamedCluster, TopicReport } from "./api";

/** The terms a cluster's label is made of (the server's `LABEL_TERMS`). */
const LABEL_TERMS = 3;

/** The notes of a cluster shown before "Show N more". */
export const NOTES_SHOWN = 8;

/** `1 note`, `14 notes`. */
export function notesLabel(count: number): string {
  return plural(count, "note", "notes");
}

function plural(count: number, one: string, many: string): string {
  return `${count.toLocaleString("en-US")} ${count === 1 ? one : many}`;
}

/** A note's path as a link says it: without `.md`. */
export function noteName(path: string): string {
  return path.replace(/\.md$/i, "");
}

/** The label the server gives a cluster from its terms (`rust, error, ownership`), whatever the model named it. */
export function clusterLabel(cluster: Pick<NamedCluster, "terms">): string {
  return cluster.terms.slice(0, LABEL_TERMS).join(", ");
}

/** The section title: `Topics (6)`. */
export function topicsHeading(count: number | null): string {
  return count === null ? "Topics" : `Topics (${count})`;
}

/** What the clustering covered: `45 notes grouped by meaning into 6 topics; 2 maps of content left out.` */
export function topicsLine(topics: Pick<TopicReport, "notes_clustered" | "maps_left_out" | "without_vectors"> | null, clusters: number): string {
  if (!topics) return `${plural(clusters, "topic", "topics")}.`;
  const parts = [`${notesLabel(topics.notes_clustered)} grouped by meaning into ${plural(clusters, "topic", "topics")}`];
  if (topics.maps_left_out.length) parts.push(`${plural(topics.maps_left_out.length, "map", "maps")} of content left out`);
  if (topics.without_vectors.length) parts.push(`${notesLabel(topics.without_vectors.length)} left out (no vector in the index yet)`);
  return `${parts.join("; ")}.`;
}

/** Why there are no topics, in the server's words. */
export function topicsUnavailableLine(why: string): string {
  return `No topics: ${why}.`.replace(/\.\.$/, ".");
}

/** A made map of content: `Proposed Easy, Run and Pace MOC.md: 8 notes under 2 headings. It is open in the proposals pane.` */
export function madeLine(made: Pick<MocMade, "path" | "notes" | "sub_topics">): string {
  const headings = made.sub_topics.length ? ` under ${plural(made.sub_topics.length, "heading", "headings")}` : "";
  return `Proposed ${made.path}: ${notesLabel(made.notes)}${headings}. It is open in the proposals pane; nothing is written until you apply it.`;
}

/** Said after a made map when the server's topic is not the one the row showed (the index changed since the list was made). */
export const TOPICS_CHANGED = " The topics changed since this list was made: refresh to see them as they are now.";

/**
 * Why no map of content was made, as the words around what the view links: `before`, then the
 * link (the map that covers it, or the proposal waiting for review) when there is one, then `after`.
 */
export function skipWords(skipped: MocSkipped): { before: string; after: string } {
  switch (skipped.reason) {
    case "already_mapped":
      return {
        before: "Not made: ",
        after: ` already maps this topic${skipped.linked !== undefined ? `: it links to ${skipped.linked} of its ${notesLabel(skipped.notes)}` : ""}.`,
      };
    case "pending":
      return { before: "Not made: a map of content of these notes is already waiting for review. ", after: "" };
    case "too_small":
      return { before: `Not made: a map of content needs 3 notes or more, and this topic has ${skipped.notes}.`, after: "" };
    default:
      return { before: `Not made (${skipped.reason}).`, after: "" };
  }
}

/** What a deep audit would send: `47 notes: 0 with a cached record, 47 to send to M in 4 requests (about 21,167 tokens).` */
export function planLine(plan: AuditPlan, model: string): string {
  const cached = `${plan.cached.toLocaleString("en-US")} with a cached record`;
  if (plan.to_send === 0) return `${notesLabel(plan.notes)}: ${cached}, nothing to send to ${model} for them; a run only reviews the vault as a whole.`;
  return `${notesLabel(plan.notes)}: ${cached}, ${plan.to_send.toLocaleString("en-US")} to send to ${model} in ${plural(plan.requests, "request", "requests")} (about ${plural(plan.estimated_tokens, "token", "tokens")}).`;
}

/** What a run did: `Sent 4 requests for the notes and 1 for the vault-wide review; 0 records from the cache.` */
export function outcomeLine(map: AuditMapOutcome, reduceRequests: number, droppedPaths: number): string {
  let line = `Sent ${plural(map.requests, "request", "requests")} for the notes and ${reduceRequests} for the vault-wide review; ${plural(map.from_cache, "record", "records")} from the cache`;
  if (map.repaired) line += `, ${plural(map.repaired, "reply", "replies")} repaired`;
  if (map.invented_links) line += `, ${plural(map.invented_links, "suggested link", "suggested links")} to no note dropped`;
  if (droppedPaths) line += `, ${plural(droppedPaths, "path", "paths")} that named no note dropped`;
  line += ".";
  if (map.budget_reached) line += " Stopped at the token budget: run it again to go on.";
  if (map.cancelled) line += " Stopped before the end: the records made so far are kept.";
  return line;
}

/** A failed batch: `Not reviewed (the reply never validated: …): ` before its notes' links. */
export function failedLine(reason: string): string {
  return `Not reviewed (the reply never validated: ${reason}): `;
}

/** The vault-wide review's failure. */
export function reduceErrorLine(error: string): string {
  return `The vault-wide review failed: ${error}. The records of the notes are kept, so a second run sends only what is missing.`;
}

/** `Weak notes (3)`. */
export function weakHeading(count: number): string {
  return `Weak notes (${count})`;
}

/** A note's quality score: `2/5`. */
export function scoreLabel(score: number): string {
  return `${score}/5`;
}
