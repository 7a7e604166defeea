// The words of the proposals review: ages, origins, files, and what to do after a refusal.
import { describe, expect, it } from "vitest";
import { changedFile, changeLabel, countLabel, filesLabel, originLabel, proposalAge, remakeAdvice, sourceCandidates } from "../src/proposals";

describe("the proposals' words", () => {
  it("says how old a proposal is", () => {
    const now = Date.parse("2026-12-07T12:00:00Z");
    expect(proposalAge("2026-12-07T11:59:30Z", now)).toBe("just now");
    expect(proposalAge("2026-12-07T11:55:00+00:00", now)).toBe("5 min ago");
    expect(proposalAge("2026-12-07T09:00:00Z", now)).toBe("3 h ago");
    expect(proposalAge("2026-12-06T10:00:00Z", now)).toBe("1 day ago");
    expect(proposalAge("2026-12-04T12:00:00Z", now)).toBe("3 days ago");
    expect(proposalAge("2026-10-01T12:00:00Z", now)).toBe("on 2026-10-01");
    expect(proposalAge("not a date", now)).toBe("not a date");
  });

  it("names who made it", () => {
    expect(originLabel("propose_note_change (an MCP client)")).toBe("an MCP client");
    expect(originLabel("propose_note_change (quire serve /api/proposals)")).toBe("the HTTP API (POST /api/proposals)");
    expect(originLabel('quire draft Plan.md "Budget"')).toBe('quire draft Plan.md "Budget"');
    expect(originLabel(" ")).toBe("an unknown command");
  });

  it("counts and lists files", () => {
    expect(countLabel(1)).toBe("1 proposal");
    expect(countLabel(4)).toBe("4 proposals");
    expect(filesLabel(["A.md", "B.md"])).toBe("A.md, B.md");
    expect(filesLabel(["A.md", "B.md", "C.md", "D.md", "E.md"])).toBe("A.md, B.md, C.md and 2 more");
  });

  it("finds the file a refusal names, and says how to make the proposal again", () => {
    expect(
      changedFile(
        "Areas/Writing Habits.md changed since proposal 20261207-132920-d1362132 was made from it (sha256 a5f163097661…, now 54e6756ab4fd): nothing was written; make the proposal again",
      ),
    ).toBe("Areas/Writing Habits.md");
    expect(changedFile("something else")).toBeNull();
    expect(remakeAdvice("propose_note_change (an MCP client)")).toContain("Ask the MCP client");
    expect(remakeAdvice('quire draft Plan.md "Budget"')).toBe('Make it again from the note as it is now by running: quire draft Plan.md "Budget"');
    expect(remakeAdvice("propose_note_change (quire serve /api/proposals)")).toBe(
      "Make it again where it came from (the HTTP API (POST /api/proposals)), from the note as it is now.",
    );
  });

  it("says what each change does, and where a source may be", () => {
    expect(changeLabel({ kind: "create" })).toBe("New note");
    expect(changeLabel({ kind: "append", heading: "Next steps" })).toBe("Added under “Next steps”");
    expect(changeLabel({ kind: "append", heading: "" })).toBe("Added at the end");
    expect(changeLabel({ kind: "rename" })).toBe("Renamed");
    expect(sourceCandidates("Areas/Sleep.md")).toEqual(["Areas/Sleep.md"]);
    expect(sourceCandidates("Areas/Sleep#What helps")).toEqual(["Areas/Sleep#What helps", "Areas/Sleep", "Areas/Sleep.md"]);
    expect(sourceCandidates("Areas/Sleep.md:3-9")).toEqual(["Areas/Sleep.md:3-9", "Areas/Sleep.md"]);
  });
});
