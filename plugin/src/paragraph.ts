/**
 * The related-notes pane when it follows the writing: the paragraph at the cursor (the lines
 * around it up to a blank line), made into a search query within the server's 1,000-character
 * limit, and the notes that search finds, the note being written left out.
 */
import type { SearchResults } from "./api";

/** The server's limit on a query, in characters (Unicode scalar values, as Rust counts them). */
export const QUERY_LIMIT = 1000;

/** The paragraph around line `line` (0-based) of a text of `count` lines read with `lineAt`: the lines up to a blank line either side. */
export function paragraphAt(lineAt: (line: number) => string, count: number, line: number): string {
  if (line < 0 || line >= count || !lineAt(line).trim()) return "";
  let start = line;
  while (start > 0 && lineAt(start - 1).trim()) start--;
  let end = line;
  while (end < count - 1 && lineAt(end + 1).trim()) end++;
  const lines: string[] = [];
  for (let i = start; i <= end; i++) lines.push(lineAt(i));
  return lines.join("\n");
}

/** The paragraph as a query: its words on one line, cut to the server's limit (whole words where it can). */
export function paragraphQuery(paragraph: string): string {
  const words = paragraph.replace(/\s+/g, " ").trim();
  const chars = Array.from(words);
  if (chars.length <= QUERY_LIMIT) return words;
  const cut = chars.slice(0, QUERY_LIMIT).join("");
  const space = cut.lastIndexOf(" ");
  return space > QUERY_LIMIT / 2 ? cut.slice(0, space) : cut;
}

export interface ParagraphRow {
  path: string;
  title: string;
  score: number;
}

/** The notes the search found, best first, without the note being written. */
export function paragraphRows(results: SearchResults, current: string | null): ParagraphRow[] {
  return results.results.filter((hit) => hit.path !== current).map((hit) => ({ path: hit.path, title: hit.title || hit.path, score: hit.score }));
}
