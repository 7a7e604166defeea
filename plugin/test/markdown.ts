/**
 * A small Markdown renderer for the shim's MarkdownRenderer.render: paragraphs, headings, lists,
 * quotes, fenced code, `code`, **strong**, *emphasis*, [[wikilinks]], [links](url) and backslash
 * escapes, built with DOM calls (no HTML parsing). It stands in for Obsidian's renderer so that
 * tests and screenshots see structure; it is not Obsidian's renderer.
 */

const INLINE = /\\([\\`*_{}[\]()#+\-.!<>])|`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|\[\[([^\]|]+)(?:\|([^\]]+))?\]\]|\[([^\]]+)\]\(([^)\s]+)\)/g;

function inline(parent: HTMLElement, text: string): void {
  let at = 0;
  for (const m of text.matchAll(INLINE)) {
    const start = m.index ?? 0;
    parent.appendText(text.slice(at, start));
    if (m[1] !== undefined) parent.appendText(m[1]);
    else if (m[2] !== undefined) parent.createEl("code", { text: m[2] });
    else if (m[3] !== undefined) inline(parent.createEl("strong"), m[3]);
    else if (m[4] !== undefined) inline(parent.createEl("em"), m[4]);
    else if (m[5] !== undefined) parent.createEl("a", { cls: "internal-link", text: m[6] ?? m[5], attr: { "data-href": m[5] } });
    else if (m[7] !== undefined) inline(parent.createEl("a", { cls: "external-link", attr: { href: m[8] ?? "" } }), m[7]);
    at = start + m[0].length;
  }
  parent.appendText(text.slice(at));
}

export function renderMarkdown(markdown: string, el: HTMLElement): void {
  let paragraph: string[] = [];
  let list: { el: HTMLElement; ordered: boolean } | null = null;
  let code: string[] | null = null;
  const flush = () => {
    if (paragraph.length) inline(el.createEl("p"), paragraph.join(" "));
    paragraph = [];
    list = null;
  };
  for (const line of markdown.split(/\r?\n/)) {
    if (code !== null) {
      if (/^\s*(```|~~~)/.test(line)) {
        el.createEl("pre").createEl("code", { text: code.join("\n") });
        code = null;
      } else code.push(line);
      continue;
    }
    let m: RegExpMatchArray | null;
    if (/^\s*(```|~~~)/.test(line)) {
      flush();
      code = [];
    } else if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
      flush();
      inline(el.createEl(`h${m[1]?.length ?? 1}` as "h1"), m[2] ?? "");
    } else if ((m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(line))) {
      const ordered = /\d/.test(m[1] ?? "");
      if (paragraph.length) flush();
      if (!list || list.ordered !== ordered) list = { el: el.createEl(ordered ? "ol" : "ul"), ordered };
      inline(list.el.createEl("li"), m[2] ?? "");
    } else if ((m = /^>\s?(.*)$/.exec(line))) {
      flush();
      inline(el.createEl("blockquote"), m[1] ?? "");
    } else if (!line.trim()) {
      flush();
    } else {
      list = null;
      paragraph.push(line.trim());
    }
  }
  if (code !== null) el.createEl("pre").createEl("code", { text: code.join("\n") });
  flush();
}
