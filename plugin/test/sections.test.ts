// Headings, the section at the cursor, and where a draft of it goes.
import { describe, expect, it } from "vitest";
import { draftInsertion, findHeading, headingAt, headings } from "../src/sections";

const NOTE = [
  "---", // 0
  "title: Plan",
  "# not a heading in front matter",
  "---",
  "# Plan", // 4
  "",
  "Intro.",
  "",
  "## Budget", // 8
  "",
  "- rent",
  "```",
  "## not a heading in code",
  "```",
  "", // 14
  "### Details", // 15
  "Numbers.",
  "",
  "## Next #", // 18
  "- call",
];

describe("headings", () => {
  it("finds ATX headings, not in front matter or fenced code", () => {
    expect(headings(NOTE).map((h) => [h.line, h.level, h.text, h.raw])).toEqual([
      [4, 1, "Plan", "# Plan"],
      [8, 2, "Budget", "## Budget"],
      [15, 3, "Details", "### Details"],
      [18, 2, "Next", "## Next #"],
    ]);
  });

  it("is the nearest heading at or above the cursor", () => {
    expect(headingAt(NOTE, 2)).toBeNull();
    expect(headingAt(NOTE, 4)?.text).toBe("Plan");
    expect(headingAt(NOTE, 12)?.text).toBe("Budget");
    expect(headingAt(NOTE, 16)?.text).toBe("Details");
    expect(headingAt(NOTE, 19)?.text).toBe("Next");
  });

  it("finds the same heading after lines moved", () => {
    const budget = headingAt(NOTE, 10);
    if (!budget) throw new Error("no heading");
    const moved = ["New first line", ...NOTE];
    expect(findHeading(moved, budget)?.line).toBe(9);
    expect(findHeading(NOTE.filter((l) => l !== "## Budget"), budget)).toBeNull();
  });
});

describe("draftInsertion", () => {
  it("goes after the section's text, subsections included, before the next heading of its level", () => {
    const budget = headingAt(NOTE, 8);
    if (!budget) throw new Error("no heading");
    // The section ends before "## Next"; its last text is "Numbers." (line 16), then a blank line.
    expect(draftInsertion(NOTE, budget, "  Draft.\n")).toEqual({ line: 16, ch: "Numbers.".length, text: "\n\nDraft." });
  });

  it("keeps a blank line before the next heading when the section has none", () => {
    const lines = ["## A", "text", "## B"];
    const a = headingAt(lines, 0);
    if (!a) throw new Error("no heading");
    expect(draftInsertion(lines, a, "Draft.")).toEqual({ line: 1, ch: 4, text: "\n\nDraft.\n" });
  });

  it("goes after the heading when the section is empty, and at the end of the note for the last section", () => {
    const lines = ["## A", "", "## B", "last"];
    const [a, b] = headings(lines);
    if (!a || !b) throw new Error("no heading");
    expect(draftInsertion(lines, a, "X")).toEqual({ line: 0, ch: 4, text: "\n\nX" });
    expect(draftInsertion(lines, b, "Y")).toEqual({ line: 3, ch: 4, text: "\n\nY" });
  });
});
