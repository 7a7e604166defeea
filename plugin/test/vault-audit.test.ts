// The words of the vault health view's topics, vault map and deep audit, and which applied
// proposal opens its file.
import { describe, expect, it } from "vitest";
import type { AuditMapOutcome } from "../src/api";
import { openAfterApply } from "../src/proposals";
import { clusterLabel, madeLine, outcomeLine, planLine, skipWords, topicsLine, topicsUnavailableLine } from "../src/vault-audit";

const MAP: AuditMapOutcome = { requests: 4, from_cache: 0, failed: [], repaired: 0, invented_links: 0, cancelled: false, budget_reached: false };

describe("the words of the topics and the deep audit", () => {
  it("says what the clustering covered and left out", () => {
    expect(topicsLine({ notes_clustered: 45, maps_left_out: ["Home.md", "Areas/Running MOC.md"], without_vectors: [] }, 6)).toBe(
      "45 notes grouped by meaning into 6 topics; 2 maps of content left out.",
    );
    expect(topicsLine({ notes_clustered: 1_200, maps_left_out: ["Home.md"], without_vectors: ["New.md"] }, 1)).toBe(
      "1,200 notes grouped by meaning into 1 topic; 1 map of content left out; 1 note left out (no vector in the index yet).",
    );
    expect(topicsUnavailableLine("topic clusters needs embeddings")).toBe("No topics: topic clusters needs embeddings.");
    expect(topicsUnavailableLine("no index: run it.")).toBe("No topics: no index: run it.");
    expect(clusterLabel({ terms: ["rust", "error", "ownership", "line"] })).toBe("rust, error, ownership");
  });

  it("says why no map of content was made, around the link it shows", () => {
    expect(skipWords({ cluster: 1, label: "x", notes: 14, reason: "already_mapped", mapped_by: "Home.md", linked: 13 })).toEqual({
      before: "Not made: ",
      after: " already maps this topic: it links to 13 of its 14 notes.",
    });
    expect(skipWords({ cluster: 2, label: "x", notes: 5, reason: "pending", proposal: "p" }).before).toBe("Not made: a map of content of these notes is already waiting for review. ");
    expect(skipWords({ cluster: 6, label: "x", notes: 2, reason: "too_small" }).before).toBe("Not made: a map of content needs 3 notes or more, and this topic has 2.");
    expect(skipWords({ cluster: 6, label: "x", notes: 2, reason: "new_reason" }).before).toBe("Not made (new_reason).");
    expect(madeLine({ path: "Tea MOC.md", notes: 1, sub_topics: [] })).toBe("Proposed Tea MOC.md: 1 note. It is open in the proposals pane; nothing is written until you apply it.");
  });

  it("says what a deep audit would send, and what it did", () => {
    expect(planLine({ notes: 47, cached: 0, to_send: 47, requests: 4, estimated_tokens: 21_167 }, "m")).toBe(
      "47 notes: 0 with a cached record, 47 to send to m in 4 requests (about 21,167 tokens).",
    );
    expect(planLine({ notes: 47, cached: 47, to_send: 0, requests: 0, estimated_tokens: 0 }, "m")).toBe(
      "47 notes: 47 with a cached record, nothing to send to m for them; a run only reviews the vault as a whole.",
    );
    expect(outcomeLine(MAP, 1, 0)).toBe("Sent 4 requests for the notes and 1 for the vault-wide review; 0 records from the cache.");
    expect(outcomeLine({ ...MAP, requests: 1, from_cache: 1, repaired: 1, invented_links: 2, budget_reached: true }, 0, 3)).toBe(
      "Sent 1 request for the notes and 0 for the vault-wide review; 1 record from the cache, 1 reply repaired, 2 suggested links to no note dropped, 3 paths that named no note dropped. Stopped at the token budget: run it again to go on.",
    );
  });

  it("opens the file of an applied proposal only when a canvas is its only change", () => {
    expect(openAfterApply([{ path: "Vault map.canvas" }], ["Vault map.canvas"])).toBe("Vault map.canvas");
    expect(openAfterApply([{ path: "Vault map.canvas" }], [])).toBeNull();
    expect(openAfterApply([{ path: "Note.md" }], ["Note.md"])).toBeNull();
    expect(openAfterApply([{ path: "a.canvas" }, { path: "b.md" }], ["a.canvas", "b.md"])).toBeNull();
    expect(openAfterApply([{ path: "old.canvas", new_path: "Maps/new.canvas" }], ["Maps/new.canvas"])).toBe("Maps/new.canvas");
  });
});
