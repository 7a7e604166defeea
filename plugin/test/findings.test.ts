// The words of the vault health view: section titles, grouping, what is new, counts, places.
import { describe, expect, it } from "vitest";
import type { Finding } from "../src/api";
import { countsLine, groupByKind, kindTitle, messagePieces, newSinceLine, placeLabel, sectionHeading, snoozeLabel } from "../src/findings";

function finding(kind: string, id: string): Finding {
  return { id, kind, subject: id, path: null, line: null, message: id, new: false };
}

describe("the vault health view's words", () => {
  it("names each kind's section, with its count", () => {
    expect(sectionHeading("unresolved_link", 4)).toBe("Unresolved links (4)");
    expect(kindTitle("no_headings")).toBe("Notes without headings");
    expect(kindTitle("near_duplicate_tags")).toBe("Near-duplicate tags");
    expect(kindTitle("stale_note")).toBe("Stale note");
  });

  it("groups the findings by kind in the server's order", () => {
    const groups = groupByKind([finding("unresolved_link", "a"), finding("unresolved_link", "b"), finding("orphan", "c"), finding("island", "d")]);
    expect(groups.map((g) => [g.kind, g.findings.map((f) => f.id).join("")])).toEqual([
      ["unresolved_link", "ab"],
      ["orphan", "c"],
      ["island", "d"],
    ]);
  });

  it("says what is new since the last look", () => {
    expect(newSinceLine({ first_run: true, new_since_last: "" })).toMatch(/^First look at this vault/);
    expect(newSinceLine({ first_run: false, new_since_last: "2 new unresolved links, 1 new orphan note" })).toBe(
      "New since the last look: 2 new unresolved links, 1 new orphan note.",
    );
    expect(newSinceLine({ first_run: false, new_since_last: "" })).toBe("Nothing new since the last look.");
  });

  it("counts, places and quotes", () => {
    expect(countsLine(1, 0, 2)).toBe("1 finding · 0 dismissed · 2 snoozed");
    expect(countsLine(7, 1, 0)).toBe("7 findings · 1 dismissed · 0 snoozed");
    expect(placeLabel({ path: "Areas/Running MOC.md", line: 23 })).toBe("Areas/Running MOC, line 23");
    expect(placeLabel({ path: "Attachments/map.png", line: null })).toBe("Attachments/map.png");
    expect(placeLabel({ path: null, line: null })).toBeNull();
    expect(messagePieces("`Marathon Plan` finds no note")).toEqual([
      { text: "Marathon Plan", code: true },
      { text: " finds no note", code: false },
    ]);
    expect(messagePieces("an ` alone")).toEqual([{ text: "an ` alone", code: false }]);
    expect(snoozeLabel(1)).toBe("1 day");
    expect(snoozeLabel(30)).toBe("30 days");
  });
});
