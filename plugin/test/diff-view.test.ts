// The review pane's reading of a unified diff: the hunks and their line numbers, the whole file
// rebuilt around them from the new content, and the long unchanged runs folded.
import { describe, expect, it } from "vitest";
import type { FileChange } from "../src/api";
import { type DiffRow, fileRows, foldUnchanged, parseUnifiedDiff, splitLines } from "../src/diff-view";
import { renderChange } from "../src/proposals-view";

/** A note of 20 lines: `line 1` … `line 20`. */
const OLD = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);

describe("parseUnifiedDiff", () => {
  it("reads the hunks with their line numbers, a removed line that looks like a header, and the no-newline note", () => {
    const diff = [
      "--- a/N.md",
      "+++ b/N.md",
      "@@ -1,4 +1,4 @@",
      " a",
      "--- a rule",
      "+b",
      " ",
      " c",
      "@@ -9 +9,2 @@",
      " z",
      "+end",
      "\\ No newline at end of file",
      "",
    ].join("\n");
    const parsed = parseUnifiedDiff(diff);
    expect(parsed.created).toBe(false);
    expect(parsed.renamed).toBeNull();
    expect(parsed.hunks).toHaveLength(2);
    expect(parsed.hunks[0]?.rows).toEqual([
      { kind: "same", text: "a", old: 1, new: 1 },
      { kind: "removed", text: "-- a rule", old: 2 },
      { kind: "added", text: "b", new: 2 },
      { kind: "same", text: "", old: 3, new: 3 },
      { kind: "same", text: "c", old: 4, new: 4 },
    ]);
    expect(parsed.hunks[1]).toMatchObject({ oldStart: 9, oldCount: 1, newStart: 9, newCount: 2 });
    expect(parsed.hunks[1]?.rows).toEqual([
      { kind: "same", text: "z", old: 9, new: 9 },
      { kind: "added", text: "end", new: 10 },
      { kind: "note", text: "No newline at end of file" },
    ]);
  });

  it("knows a new file and a rename", () => {
    const created = parseUnifiedDiff("--- /dev/null\n+++ b/New.md\n@@ -0,0 +1,2 @@\n+# New\n+text\n");
    expect(created.created).toBe(true);
    expect(created.hunks[0]?.rows.map((r) => [r.kind, r.text, r.new])).toEqual([
      ["added", "# New", 1],
      ["added", "text", 2],
    ]);
    const renamed = parseUnifiedDiff("rename from A/Old name.md\nrename to B/New name.md\n");
    expect(renamed.renamed).toEqual({ from: "A/Old name.md", to: "B/New name.md" });
    expect(renamed.hunks).toEqual([]);
  });
});

describe("fileRows", () => {
  it("rebuilds the whole new file around the hunks, numbering both sides", () => {
    const content = [...OLD.slice(0, 9), "line ten", ...OLD.slice(10)].join("\n") + "\n";
    const diff = parseUnifiedDiff(
      ["--- a/N.md", "+++ b/N.md", "@@ -7,7 +7,7 @@", " line 7", " line 8", " line 9", "-line 10", "+line ten", " line 11", " line 12", " line 13", ""].join("\n"),
    );
    const rows = fileRows(diff, content);
    expect(rows).toHaveLength(21);
    expect(rows[0]).toEqual({ kind: "same", text: "line 1", old: 1, new: 1 });
    expect(rows[9]).toEqual({ kind: "removed", text: "line 10", old: 10 });
    expect(rows[10]).toEqual({ kind: "added", text: "line ten", new: 10 });
    expect(rows[20]).toEqual({ kind: "same", text: "line 20", old: 20, new: 20 });
  });

  it("keeps the old numbers right after lines were added above", () => {
    const content = ["x", "y", ...OLD].join("\n") + "\n";
    const diff = parseUnifiedDiff(["--- a/N.md", "+++ b/N.md", "@@ -1,3 +1,5 @@", "+x", "+y", " line 1", " line 2", " line 3", ""].join("\n"));
    const last = fileRows(diff, content).at(-1);
    expect(last).toEqual({ kind: "same", text: "line 20", old: 20, new: 22 });
  });

  it("falls back to the hunks alone when the content does not hold their lines", () => {
    const diff = parseUnifiedDiff("--- a/N.md\n+++ b/N.md\n@@ -40,1 +40,1 @@\n-a\n+b\n");
    expect(fileRows(diff, "short\n").map((r) => r.kind)).toEqual(["removed", "added"]);
  });
});

describe("foldUnchanged", () => {
  const same = (n: number, from = 1): DiffRow[] => Array.from({ length: n }, (_, i) => ({ kind: "same", text: `s${from + i}`, old: from + i, new: from + i }));
  const added: DiffRow = { kind: "added", text: "new", new: 1 };

  it("folds a long run between changes, keeping 3 lines on each side", () => {
    const pieces = foldUnchanged([added, ...same(12), added]);
    expect(pieces.map((p) => [p.kind, p.rows.length])).toEqual([
      ["rows", 4],
      ["fold", 6],
      ["rows", 4],
    ]);
    expect(pieces[1]?.rows[0]?.text).toBe("s4");
  });

  it("folds a run at the top or the end once it is longer than 6 lines, and leaves short ones", () => {
    expect(foldUnchanged([...same(7), added]).map((p) => [p.kind, p.rows.length])).toEqual([
      ["fold", 4],
      ["rows", 4],
    ]);
    expect(foldUnchanged([...same(6), added]).map((p) => [p.kind, p.rows.length])).toEqual([["rows", 7]]);
    expect(foldUnchanged([added, ...same(9)]).map((p) => [p.kind, p.rows.length])).toEqual([
      ["rows", 4],
      ["fold", 6],
    ]);
    // Between two changes a run of 9 would hide only 3 lines: shown whole.
    expect(foldUnchanged([added, ...same(9), added])).toHaveLength(1);
  });

  it("splits lines as the file has them", () => {
    expect(splitLines("a\nb\n")).toEqual(["a", "b"]);
    expect(splitLines("a\nb")).toEqual(["a", "b"]);
    expect(splitLines("")).toEqual([]);
  });
});

describe("renderChange", () => {
  const change = (fields: Partial<FileChange>): FileChange => ({ kind: "replace", path: "N.md", base_sha256: "0", new_sha256: "1", content: "", diff: "", ...fields });

  it("says a rename as one, with no lines", () => {
    const el = createDiv();
    renderChange(el, change({ kind: "rename", path: "Inbox/Idea.md", new_path: "Projects/Idea.md", content: "same\n", diff: "rename from Inbox/Idea.md\nrename to Projects/Idea.md\n" }));
    expect(el.querySelector(".quire-diff-file")?.getAttribute("data-path")).toBe("Projects/Idea.md");
    expect(el.querySelector(".quire-tag")?.textContent).toBe("Renamed");
    expect(el.querySelector(".quire-diff-rename")?.textContent).toBe("renamed Inbox/Idea.md → Projects/Idea.md");
    expect(el.querySelectorAll(".quire-diff-line")).toHaveLength(0);
  });

  it("opens a fold onto its lines, in place", () => {
    const content = [...OLD.slice(0, 17), "line eighteen", ...OLD.slice(18)].join("\n") + "\n";
    const diff = ["--- a/N.md", "+++ b/N.md", "@@ -15,6 +15,6 @@", " line 15", " line 16", " line 17", "-line 18", "+line eighteen", " line 19", " line 20", ""].join("\n");
    const el = createDiv();
    renderChange(el, change({ content, diff }));
    const fold = el.querySelector(".quire-diff-fold") as HTMLElement;
    expect(fold.textContent).toBe("… 14 unchanged lines");
    expect([...el.querySelectorAll(".quire-diff-line")].map((l) => l.className)).toEqual([
      "quire-diff-line is-same",
      "quire-diff-line is-same",
      "quire-diff-line is-same",
      "quire-diff-line is-removed",
      "quire-diff-line is-added",
      "quire-diff-line is-same",
      "quire-diff-line is-same",
    ]);
    fold.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    expect(el.querySelector(".quire-diff-fold")).toBeNull();
    const texts = [...el.querySelectorAll(".quire-diff-text")].map((t) => t.textContent);
    expect(texts.slice(0, 18)).toEqual([...OLD.slice(0, 17), "line 18"]);
    expect(texts).toHaveLength(21);
  });
});
