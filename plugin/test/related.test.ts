// One row per related note, with all its relations.
import { describe, expect, it } from "vitest";
import { mergeRelated } from "../src/related";

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

  it("works with links only", () => {
    expect(mergeRelated({ path: "X.md", title: "X", similar_unavailable: "no model", outgoing: [{ path: "Y.md", title: "Y" }] })).toEqual([
      { path: "Y.md", title: "Y", relations: ["outgoing"] },
    ]);
  });
});
