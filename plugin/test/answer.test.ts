// Showing answers: safe Markdown, checked citations as links, warnings, source cards, snippets.
import { describe, expect, it, vi } from "vitest";
import { answeredBy, answerWarnings, kindLabel, linkCitations, passageHeadings, renderSourceCards, safeMarkdown } from "../src/answer";
import type { DescentTrace } from "../src/api";
import { renderSnippet } from "../src/search-modal";

describe("safeMarkdown", () => {
  it("shows raw HTML as text and turns remote images into links", () => {
    expect(safeMarkdown('Hi <img src="http://x/t.png"> ![pic](https://x/p.png) ![[local.png]] ![ref][r]')).toBe(
      'Hi \\<img src="http://x/t.png"> [pic](https://x/p.png) ![[local.png]] [ref][r]',
    );
  });

  it("leaves code spans and fenced code as written", () => {
    const text = "Use `<b>` and ![x](http://y)\n```html\n<b>bold</b> ![x](http://y)\n```\nafter <i>";
    expect(safeMarkdown(text)).toBe("Use `<b>` and [x](http://y)\n```html\n<b>bold</b> ![x](http://y)\n```\nafter \\<i>");
  });
});

describe("linkCitations", () => {
  function rendered(html: string[]): HTMLElement {
    const root = createDiv();
    for (const text of html) root.createEl("p", { text });
    return root;
  }

  it("links the checked citations only, and leaves code and other brackets alone", () => {
    const root = rendered(["Feed daily [S1]. Twice [S2, S7].", "Quoted [S3] and [Sources]."]);
    const quoted = "[S1]";
    root.createEl("code", { text: quoted });
    const onCite = vi.fn();
    expect(linkCitations(root, new Set(["S1", "S2"]), onCite)).toBe(2);
    const links = [...root.querySelectorAll("a.quire-cite")];
    expect(links.map((a) => a.textContent)).toEqual(["S1", "S2"]);
    expect(root.textContent).toBe("Feed daily S1. Twice S2 [S7].Quoted [S3] and [Sources].[S1]");
    (links[1] as HTMLElement).click();
    expect(onCite).toHaveBeenCalledWith("S2");
  });

  it("links nothing when nothing is citable (an extractive answer)", () => {
    const root = rendered(["[S1] Resources/Note.md"]);
    expect(linkCitations(root, new Set(), () => undefined)).toBe(0);
    expect(root.textContent).toBe("[S1] Resources/Note.md");
  });
});

describe("answerWarnings and kindLabel", () => {
  it("adds the removed citations unless the server already named them", () => {
    expect(answerWarnings([], ["S9"])).toEqual(["Removed a citation that matches no source: S9."]);
    expect(answerWarnings([], ["S9", "S12"])).toEqual(["Removed 2 citations that match no source: S9, S12."]);
    expect(answerWarnings(["removed citations of sources that do not exist: S9"], ["S9"])).toEqual(["removed citations of sources that do not exist: S9"]);
  });

  it("says what kind of answer it is", () => {
    expect(kindLabel("generated", "llama3.2")).toBe("Written by llama3.2 from your notes");
    expect(kindLabel("extractive", null)).toMatch(/^Extractive/);
    expect(kindLabel("nothing_found", null)).toBe("Nothing in your notes matched");
  });
});

describe("answeredBy", () => {
  const section = (path: string) => ({ path, heading_path: [], start_line: 1, end_line: 9 });
  const descent = (over: Partial<DescentTrace> = {}): DescentTrace => ({
    steps: [{ kind: "notes", shown: "47 notes", chose: ["D3 A.md"], invalid: [], why: "about bread" }],
    sections: [section("A.md")],
    stale: [],
    requests: 1,
    stopped: null,
    ...over,
  });

  it("says nothing without a report (an older server)", () => {
    expect(answeredBy(undefined)).toBeNull();
    expect(answeredBy({})).toBeNull();
  });

  it("names what answered: search, tree descent, or both", () => {
    expect(answeredBy({ retriever: "hybrid" })).toEqual({ text: "Answered by search.", steps: "" });
    expect(answeredBy({ retriever: "tree", descent: descent() })).toEqual({ text: "Answered by tree descent.", steps: "Shown 47 notes, chose D3 A.md: about bread" });
    expect(answeredBy({ retriever: "auto", descent: descent() })?.text).toBe("Answered by tree descent and search (auto).");
  });

  it("says the report's notes, and when the descent fell back to search", () => {
    // A note it chose had changed since it was indexed: search filled in for it.
    expect(answeredBy({ retriever: "tree", descent: descent({ stale: ["B.md"] }), notes: ["changed since indexed, so searched instead of descended: B.md"] })?.text).toBe(
      "Answered by tree descent and search. Changed since indexed, so searched instead of descended: B.md.",
    );
    // The descent read nothing: search answered; why it stopped is said too.
    expect(
      answeredBy({ retriever: "tree", descent: descent({ sections: [], stopped: "the model's choice never validated: not JSON" }), notes: ["the descent found nothing: search answered"] })?.text,
    ).toBe("Answered by search. The descent found nothing: search answered. The descent stopped early: the model's choice never validated: not JSON.");
    // Auto's own notes lose their `auto: `; others keep what they say.
    expect(answeredBy({ retriever: "auto", notes: ["auto: no language model to descend with, so search alone answered", "expand: the model wrote no passage."] })?.text).toBe(
      "Answered by search (auto). No language model to descend with, so search alone answered. Expand: the model wrote no passage.",
    );
  });
});

describe("renderSourceCards", () => {
  it("lists the cited cards and folds the others; a card opens its lines", () => {
    const list = createEl("ul");
    const card = (id: string, cited: boolean) => ({ id, path: `N${id}.md`, title: `<b>${id}</b>`, heading_path: ["A", "B"], start_line: 3, end_line: 5, cited });
    const open = vi.fn();
    const cards = renderSourceCards(list, [card("S1", false), card("S2", true), card("S3", false)], open);
    expect([...list.children].map((li) => li.className)).toEqual(["quire-source is-cited", "quire-more-sources"]);
    expect(list.querySelector("summary")?.textContent).toBe("2 more passages it was given");
    expect(cards.get("S2")?.textContent).toBe("S2<b>S2</b>citedA › BNS2.md:3–5");
    expect(list.querySelector("b")).toBeNull();
    cards.get("S3")?.click();
    expect(open).toHaveBeenCalledWith(expect.objectContaining({ id: "S3" }));
  });
  it("says a PDF's page once, instead of the lines of its extracted text, and gives its card to open", () => {
    const list = createEl("ul");
    const page = { id: "S1", path: "Papers/Kelp.pdf", title: "Kelp", heading_path: ["Page 2"], start_line: 6, end_line: 9, page: 2, link: "[[Kelp.pdf#page=2]]", cited: true };
    const open = vi.fn();
    const cards = renderSourceCards(list, [page], open);
    const card = cards.get("S1");
    expect(card?.querySelector(".quire-lines")?.textContent).toBe("Papers/Kelp.pdf, page 2");
    // The page's own heading ("Page 2") is not said again above it.
    expect(card?.querySelector(".quire-heading-path")).toBeNull();
    expect(card?.textContent).toBe("S1KelpcitedPapers/Kelp.pdf, page 2");
    card?.click();
    expect(open).toHaveBeenCalledWith(page);
  });

  it("leaves out only a PDF's page heading, and keeps a note's heading that looks like one", () => {
    expect(passageHeadings(["Page 2"], 2)).toBeNull();
    expect(passageHeadings(["Page 2", "Methods"], 2)).toBe("Methods");
    expect(passageHeadings(["Page 3"], 2)).toBe("Page 3");
    expect(passageHeadings(["Page 2"], undefined)).toBe("Page 2");
    expect(passageHeadings(["A", "B"], undefined)).toBe("A › B");
    expect(passageHeadings([], undefined)).toBe("(top of the note)");
    const list = createEl("ul");
    const note = { id: "S1", path: "Journal/Pages.md", title: "Pages", heading_path: ["Page 2"], start_line: 4, end_line: 7, cited: true };
    expect(renderSourceCards(list, [note], vi.fn()).get("S1")?.textContent).toBe("S1PagescitedPage 2Journal/Pages.md:4–7");
  });
});

describe("renderSnippet", () => {
  it("marks the byte ranges of matched words in UTF-8 text", () => {
    const snippet = "Thé starter — ready.\nFeed it.";
    const bytes = new TextEncoder().encode(snippet);
    const start = new TextEncoder().encode("Thé ").length;
    const feed = new TextEncoder().encode("Thé starter — ready.\n").length;
    const el = renderSnippet(createDiv(), snippet, [
      [feed, feed + 4],
      [start, start + 7],
      [bytes.length, bytes.length + 3],
    ]);
    expect([...el.querySelectorAll("mark")].map((m) => m.textContent)).toEqual(["starter", "Feed"]);
    expect(el.textContent).toBe("Thé starter — ready. Feed it.");
  });
});
