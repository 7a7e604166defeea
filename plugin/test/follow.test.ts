// The related-notes pane following the paragraph at the cursor, in the built plugin against a
// real `quire serve`: the switch is saved, a burst of edits makes one search once typing pauses,
// and the notes listed are the search's, without the note being written.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { QuireClient, SearchResults } from "../src/api";
import type { QuireHost } from "../src/host";
import { paragraphAt, paragraphQuery, paragraphRows, QUERY_LIMIT } from "../src/paragraph";
import { getJson, loadPlugin, makeVault, openNote, startQuire, waitFor, type Loaded, type QuireServer, type TestVault } from "./harness";
import type { MarkdownView, View } from "./obsidian-shim";
import { closeBrowser, screenshot } from "./screenshot";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the paragraph at the cursor", () => {
  const text = ["# Title", "", "First line of it,", "second line.", "", "Another one."];
  const at = (line: number) => paragraphAt((i) => text[i] ?? "", text.length, line);

  it("is the lines up to a blank line either side, none on a blank line", () => {
    expect(at(2)).toBe("First line of it,\nsecond line.");
    expect(at(3)).toBe("First line of it,\nsecond line.");
    expect(at(5)).toBe("Another one.");
    expect(at(1)).toBe("");
    expect(at(0)).toBe("# Title");
  });

  it("is a query on one line within the server's 1,000 characters, cut between words", () => {
    expect(paragraphQuery("  one\n two  ")).toBe("one two");
    const long = paragraphQuery("word ".repeat(400));
    expect(Array.from(long).length).toBeLessThanOrEqual(QUERY_LIMIT);
    expect(long.endsWith("word")).toBe(true);
    // Characters, not bytes: 1,000 Cyrillic letters fit.
    expect(paragraphQuery("ж".repeat(1000))).toHaveLength(1000);
    expect(paragraphQuery("ж".repeat(1001))).toHaveLength(1000);
  });

  it("lists the notes found without the note being written", () => {
    const results: SearchResults = {
      query: "q",
      mode: "bm25",
      generation: 1,
      results: [
        { path: "A.md", title: "A", score: 2, sections: [] },
        { path: "Me.md", title: "Me", score: 1.5, sections: [] },
        { path: "B.md", title: "", score: 1, sections: [] },
      ],
    };
    expect(paragraphRows(results, "Me.md")).toEqual([
      { path: "A.md", title: "A", score: 2 },
      { path: "B.md", title: "B.md", score: 1 },
    ]);
  });
});

describe("related notes that follow the writing", () => {
  let vault: TestVault;
  let server: QuireServer;
  let loaded: Loaded;
  const searches: string[] = [];
  let note: MarkdownView;

  beforeAll(async () => {
    vault = makeVault();
    server = await startQuire(vault);
    loaded = await loadPlugin(vault.vault, { serverUrl: server.url });
    // Every search the plugin sends, as its client sends it.
    const client: QuireClient = (loaded.plugin as unknown as QuireHost).client();
    const search = client.search.bind(client);
    client.search = (query, k, mode) => {
      searches.push(query);
      return search(query, k, mode);
    };
  });

  afterAll(async () => {
    loaded?.unload();
    await server?.stop();
    await closeBrowser();
    vault?.remove();
  });

  function rows(pane: View): { path: string; badges: string[]; tips: (string | null)[] }[] {
    return [...pane.containerEl.querySelectorAll(".quire-related-row")].map((row) => ({
      path: (row as HTMLElement).dataset.path ?? "",
      badges: [...row.querySelectorAll(".quire-tag")].map((b) => b.textContent ?? ""),
      tips: [...row.querySelectorAll(".quire-tag")].map((b) => b.getAttribute("title")),
    }));
  }

  it("searches the paragraph once typing pauses: one request for a burst of edits", async () => {
    const path = "Projects/Sourdough Experiment.md";
    note = await openNote(loaded.app, path);
    loaded.app.shimRunCommand("quire:open-related-notes");
    const leaf = await waitFor(() => loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-similar"), "the pane");
    const pane = leaf.shimView;
    await waitFor(() => rows(pane).some((r) => r.badges.includes("linked")), "the note's relations");

    const follow = pane.containerEl.querySelector(".quire-follow-paragraph input") as HTMLInputElement;
    expect(follow.checked).toBe(false);
    follow.checked = true;
    follow.dispatchEvent(new Event("change"));
    await waitFor(() => (loaded.app.shimData as { followParagraph?: boolean }).followParagraph === true, "the setting saved");
    await waitFor(() => rows(pane).length === 0, "the relations to go");

    // Five edits 150 ms apart, each as the editor reports it.
    const editor = note.shimEditor;
    const pieces = ["\n\nThe starter smells", " like yoghurt", " and apples", " after its feeding", " at the peak."];
    for (const piece of pieces) {
      const last = editor.lastLine();
      editor.replaceRange(piece, { line: last, ch: editor.getLine(last).length });
      editor.setCursor({ line: editor.lastLine(), ch: editor.getLine(editor.lastLine()).length });
      loaded.app.shimWorkspace.trigger("editor-change", note.editor, note);
      await sleep(150);
    }
    expect(searches).toEqual([]);
    await waitFor(() => searches.length > 0, "the search after the pause", 5000);
    await waitFor(() => rows(pane).length > 0, "the notes found");
    expect(searches).toEqual(["The starter smells like yoghurt and apples after its feeding at the peak."]);

    // The rows are the server's search for that paragraph, best first, without the note itself.
    const params = new URLSearchParams({ q: searches[0] ?? "", k: "8" });
    const direct = (await getJson(`${server.url}/api/search?${params.toString()}`)) as SearchResults;
    const expected = direct.results.filter((hit) => hit.path !== path);
    const listed = rows(pane);
    expect(listed.map((r) => r.path)).toEqual(expected.map((hit) => hit.path));
    expect(listed.map((r) => r.path)).not.toContain(path);
    expect(listed[0]?.path).toBe("Resources/Sourdough Starter.md");
    // The search's score only orders the rows: it is in the badge's tooltip, not in its text.
    expect(listed.map((r) => r.badges)).toEqual(expected.map(() => ["paragraph"]));
    expect(listed.map((r) => r.tips[0])).toEqual(expected.map((hit) => `Search score ${hit.score.toFixed(2)}. It only orders this list.`));
    await screenshot("related-follow", pane.containerEl);

    // No more requests without more edits; a cursor event on the same paragraph sends none either.
    loaded.app.shimWorkspace.trigger("editor-change", note.editor, note);
    await sleep(2000);
    expect(searches).toHaveLength(1);
  });

  it("goes back to the note's relations when switched off", async () => {
    const leaf = loaded.app.shimWorkspace.shimLeaves.find((l) => l.view.getViewType() === "quire-similar");
    const pane = leaf?.shimView as View;
    const follow = pane.containerEl.querySelector(".quire-follow-paragraph input") as HTMLInputElement;
    follow.checked = false;
    follow.dispatchEvent(new Event("change"));
    await waitFor(() => rows(pane).some((r) => r.badges.includes("linked")), "the relations again");
    expect((loaded.app.shimData as { followParagraph?: boolean }).followParagraph).toBe(false);
    note.shimEditor.replaceRange("\n\nMore about levain.", { line: note.shimEditor.lastLine(), ch: 0 });
    loaded.app.shimWorkspace.trigger("editor-change", note.editor, note);
    await sleep(1800);
    expect(searches).toHaveLength(1);
  });
});
