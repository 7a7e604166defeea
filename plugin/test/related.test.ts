// One row per related note, with all its relations.
import { describe, expect, it } from "vitest";
import { mergeRelated, nearCopyLabel, sharePercent, similarTooltip } from "../src/related";

describe("mergeRelated", () => {
  it("lists each note once with every relation, the most similar first", () => {
    const rows = mergeRelated({
      path: "Home.md",
      title: "Home",
      similar: [
        { path: "B.md", title: "B", score: 0.81 },
        { path: "A.md", title: "A", score: 0.93 },
        { path: "Home.md", title: "Home", score: 1 },
      ],
      backlinks: [
        { path: "C.md", title: "C" },
        { path: "A.md", title: "A" },
      ],
      outgoing: [
        { path: "C.md", title: "C" },
        { path: "D.md", title: "" },
      ],
      moc_parents: [{ path: "C.md", title: "C" }],
    });
    expect(rows).toEqual([
      { path: "A.md", title: "A", score: 0.93, relations: ["similar", "backlink"] },
      { path: "B.md", title: "B", score: 0.81, relations: ["similar"] },
      { path: "C.md", title: "C", relations: ["backlink", "outgoing", "moc"] },
      { path: "D.md", title: "D.md", relations: ["outgoing"] },
    ]);
  });

  it("lists the near copies first, the largest share of text in common first, whatever their cosine", () => {
    const rows = mergeRelated({
      path: "Home.md",
      title: "Home",
      similar: [
        { path: "A.md", title: "A", score: 0.95 },
        { path: "Copy 1.md", title: "Home", score: 0.9 },
        { path: "Copy 2.md", title: "Home", score: 0.94 },
      ],
      near_copies: [
        { path: "Copy 1.md", title: "Home", score: 0.9, overlap: 0.81 },
        { path: "Copy 2.md", title: "Home", score: 0.94, overlap: 0.624 },
        { path: "Home.md", title: "Home", score: 1, overlap: 1 },
      ],
      outgoing: [{ path: "Copy 2.md", title: "Home" }],
    });
    expect(rows).toEqual([
      { path: "Copy 1.md", title: "Home", score: 0.9, overlap: 0.81, relations: ["similar"] },
      { path: "Copy 2.md", title: "Home", score: 0.94, overlap: 0.624, relations: ["similar", "outgoing"] },
      { path: "A.md", title: "A", score: 0.95, relations: ["similar"] },
    ]);
    expect(rows[2]).not.toHaveProperty("overlap");
  });

  it("says the share of text in common as a whole percentage, and the cosine only in words that rank", () => {
    expect(sharePercent(0.624)).toBe(62);
    expect(sharePercent(0.996)).toBe(100);
    expect(sharePercent(0.4049)).toBe(40);
    expect(nearCopyLabel(0.624)).toBe("near copy · 62% shared");
    expect(similarTooltip(0.9271)).toBe("Cosine 0.93. It only orders this list: the notes of one vault are all close in meaning, related or not.");
  });

  it("works with links only", () => {
    expect(mergeRelated({ path: "X.md", title: "X", similar_unavailable: "no model", outgoing: [{ path: "Y.md", title: "Y" }] })).toEqual([
      { path: "Y.md", title: "Y", relations: ["outgoing"] },
    ]);
  });
});
