// quire's web page: search as you type, a read view with related notes, ask with a streamed
// answer and source cards, and the index status. Plain JavaScript, no dependencies.
//
// Note text is untrusted: it is written with textContent, and the Markdown renderer escapes
// every character before it adds its own tags (see renderMarkdown).
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const state = {
    vault: "",
    results: [],
    selected: -1,
    searchSeq: 0,
    timer: null,
    asking: null,
    askingArticle: null,
    openPath: null,
    proposal: null,
  };

  // The token, if the page was opened as /?token=…, now lives in a cookie; keep it out of the
  // address bar and the history.
  if (new URLSearchParams(location.search).has("token")) {
    history.replaceState(null, "", location.pathname);
  }

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child != null) node.append(child);
    }
    return node;
  }

  async function api(path, options = {}) {
    const response = await fetch(path, { credentials: "same-origin", ...options });
    if (!response.ok) {
      let message = `${response.status} ${response.statusText}`;
      try {
        const body = await response.json();
        if (body && body.error) message = body.error.message;
      } catch (_) { /* not JSON */ }
      throw new Error(message);
    }
    return response.json();
  }

  const encodePath = (path) => path.split("/").map(encodeURIComponent).join("/");

  function obsidianUrl(path) {
    const file = path.replace(/\.md$/i, "");
    return `obsidian://open?vault=${encodeURIComponent(state.vault)}&file=${encodeURIComponent(file)}`;
  }

  // ---- status -------------------------------------------------------------------------------

  function timeAgo(iso) {
    if (!iso) return "never";
    const seconds = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
    if (seconds < 60) return `${Math.round(seconds)} s ago`;
    if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
    return new Date(iso).toLocaleString();
  }

  async function refreshStatus() {
    let status;
    try {
      status = await api("/api/status");
    } catch (error) {
      $("status-summary").textContent = `status unavailable: ${error.message}`;
      return;
    }
    state.vault = status.vault || "";
    $("vault-name").textContent = state.vault;
    document.title = state.vault ? `quire · ${state.vault}` : "quire";
    const facts = $("status-facts");
    facts.replaceChildren();
    const fact = (name, value) => facts.append(el("dt", { text: name }), el("dd", { text: String(value) }));
    if (!status.ready) {
      $("status-summary").textContent = "no index yet";
      fact("index", status.message || "not ready");
    } else {
      $("status-summary").textContent =
        `${status.notes_indexed} notes · ${status.chunks} chunks · gen ${status.generation}`;
      fact("notes", status.notes_indexed);
      fact("chunks", status.chunks);
      fact("embeddings", status.embeddings);
      fact("embedding model", status.embedding_space ? status.embedding_space.model : "none (words only)");
      fact("search mode", status.default_mode);
      fact("generation", status.generation);
    }
    const last = status.last_sync;
    fact("watching", status.watching ? "yes" : "no");
    fact("last sync", last ? `${timeAgo(last.data.at)}${last.kind === "sync_failed" ? " (failed: " + last.data.message + ")" : ""}` : "none since start");
    fact("language model", status.llm || "none (extractive answers)");
    fact("index directory", status.index_dir);
    const skipped = $("status-skipped");
    skipped.replaceChildren();
    const list = status.skipped || [];
    if (list.length) {
      skipped.append(el("h3", { text: `Skipped files (${status.skipped_total})` }));
      const ul = el("ul", { class: "skipped" });
      for (const s of list) ul.append(el("li", {}, el("code", { text: s.path }), ` — ${s.reason}`));
      skipped.append(ul);
    } else if (status.ready) {
      skipped.append(el("p", { class: "info", text: "No file was skipped." }));
    }
  }

  $("status-pill").addEventListener("click", () => {
    const panel = $("status");
    panel.hidden = !panel.hidden;
    $("status-pill").setAttribute("aria-expanded", String(!panel.hidden));
  });

  function listen() {
    const events = new EventSource("/api/events");
    events.addEventListener("hello", () => $("live-dot").classList.add("on"));
    events.addEventListener("index", () => {
      refreshStatus();
      refreshProposals();
      if ($("q").value.trim()) search(true);
    });
    events.addEventListener("sync_failed", refreshStatus);
    events.onerror = () => $("live-dot").classList.remove("on");
  }

  // ---- search -------------------------------------------------------------------------------

  // A snippet with its matched words marked; highlights are byte ranges of the UTF-8 text.
  function snippetNode(snippet, highlights) {
    const node = el("p", { class: "snippet" });
    const bytes = new TextEncoder().encode(snippet);
    const decode = (a, b) => new TextDecoder().decode(bytes.subarray(a, b));
    let at = 0;
    for (const [start, end] of [...(highlights || [])].sort((x, y) => x[0] - y[0])) {
      if (start < at || end > bytes.length) continue;
      node.append(decode(at, start), el("mark", { text: decode(start, end) }));
      at = end;
    }
    node.append(decode(at, bytes.length));
    return node;
  }

  function renderResults(data) {
    const list = $("results");
    list.replaceChildren();
    state.results = data.results;
    state.selected = -1;
    $("search-info").textContent = data.results.length
      ? `${data.results.length} notes · ${data.mode} · generation ${data.generation}`
      : "No note matched. Try other words, or another mode.";
    data.results.forEach((note, i) => {
      const open = el("button", { class: "note-title", type: "button", onclick: () => openNote(note.path) },
        note.title || note.path);
      const sections = el("ul", { class: "sections" });
      for (const s of note.sections) {
        const where = `${s.heading_path.length ? s.heading_path.join(" › ") : "(top)"}`;
        sections.append(el("li", {},
          el("button", {
            class: "section", type: "button",
            onclick: () => openNote(note.path, [s.start_line, s.end_line]),
            "aria-label": `${note.title}: ${where}, lines ${s.start_line} to ${s.end_line}`,
          },
          el("span", { class: "heading-path", text: where }),
          el("span", { class: "lines", text: `L${s.start_line}–${s.end_line}` })),
          snippetNode(s.snippet, s.highlights)));
      }
      list.append(el("li", { class: "result", id: `result-${i}`, "data-path": note.path },
        el("div", { class: "result-head" }, open,
          el("a", { class: "obsidian", href: obsidianUrl(note.path), title: "Open in Obsidian", text: "Obsidian ↗" })),
        el("p", { class: "path", text: note.path }),
        sections));
    });
  }

  async function search(quiet) {
    const q = $("q").value.trim();
    const seq = ++state.searchSeq;
    if (!q) {
      $("results").replaceChildren();
      $("search-info").textContent = "";
      return;
    }
    const params = new URLSearchParams({ q, k: "12" });
    if ($("mode").value) params.set("mode", $("mode").value);
    if (!quiet) $("search-info").textContent = "Searching…";
    try {
      const data = await api(`/api/search?${params}`);
      if (seq === state.searchSeq) renderResults(data);
    } catch (error) {
      if (seq === state.searchSeq) $("search-info").textContent = error.message;
    }
  }

  function select(i) {
    const items = [...$("results").children];
    if (!items.length) return;
    state.selected = (i + items.length) % items.length;
    items.forEach((item, j) => item.classList.toggle("selected", j === state.selected));
    items[state.selected].scrollIntoView({ block: "nearest" });
  }

  $("q").addEventListener("input", () => {
    clearTimeout(state.timer);
    state.timer = setTimeout(() => search(false), 180);
  });
  $("mode").addEventListener("change", () => search(false));
  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (state.selected >= 0) openNote(state.results[state.selected].path);
    else search(false);
  });
  $("q").addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown") { event.preventDefault(); select(state.selected + 1); }
    else if (event.key === "ArrowUp") { event.preventDefault(); select(state.selected - 1); }
    else if (event.key === "Enter" && state.selected < 0 && state.results.length) {
      event.preventDefault();
      clearTimeout(state.timer);
      openNote(state.results[0].path);
    }
  });

  // ---- the read view and related notes ------------------------------------------------------

  async function openNote(path, lines) {
    const reader = $("reader");
    state.openPath = path;
    reader.hidden = false;
    $("reader-title").textContent = path;
    $("reader-path").textContent = path;
    $("reader-obsidian").href = obsidianUrl(path);
    const text = $("reader-text");
    text.textContent = "Loading…";
    let note;
    try {
      note = await api(`/api/notes/${encodePath(path)}`);
    } catch (error) {
      text.textContent = error.message;
      return;
    }
    if (state.openPath !== path) return;
    $("reader-title").textContent = note.title;
    $("reader-path").textContent = `${note.path} · ${note.line_count} lines${note.truncated ? " (cut: long note)" : ""}`;
    text.replaceChildren();
    let target = null;
    note.text.split(/\r\n|\r|\n/).forEach((line, i) => {
      const number = note.start_line + i;
      const inRange = lines && number >= lines[0] && number <= lines[1];
      const row = el("span", { class: inRange ? "line hit" : "line", "data-line": String(number) },
        el("span", { class: "ln", "aria-hidden": "true", text: String(number) }), line + "\n");
      if (inRange && !target) target = row;
      text.append(row);
    });
    (target || text).scrollIntoView({ block: target ? "center" : "start" });
    text.focus({ preventScroll: true });
    loadRelated(path);
  }

  async function loadRelated(path) {
    const list = $("similar-list");
    const info = $("similar-info");
    list.replaceChildren();
    info.textContent = "Loading…";
    let related;
    try {
      related = await api(`/api/similar/${encodePath(path)}?k=8`);
    } catch (error) {
      info.textContent = error.message;
      return;
    }
    if (state.openPath !== path) return;
    const item = (note, label, hint, kind) => {
      const tag = el("span", { class: kind ? `tag ${kind}` : "tag", text: label });
      if (hint) tag.title = hint;
      return el("li", {},
        el("button", { class: "link", type: "button", onclick: () => openNote(note.path) }, note.title || note.path), tag);
    };
    // Notes that look like copies of this one come first, with the share of their own text in
    // common; other similar notes show no number: within one vault every note is close in
    // meaning to its neighbours, so the cosine only orders the list (it is in the tooltip).
    const copies = related.near_copies || [];
    for (const copy of copies) {
      list.append(item(copy, `near copy · ${Math.round(copy.overlap * 100)}% shared`,
        `${copy.path}: cosine ${copy.score.toFixed(2)}`, "near-copy"));
    }
    for (const note of related.similar || []) {
      if (copies.some((c) => c.path === note.path)) continue;
      list.append(item(note, "similar", `cosine ${note.score.toFixed(2)}: it only orders this list`));
    }
    for (const note of related.backlinks || []) list.append(item(note, "links here"));
    for (const note of related.outgoing || []) list.append(item(note, "linked"));
    info.textContent = related.similar_unavailable
      ? "Notes similar in meaning need the embedding model; links are shown."
      : list.children.length ? "" : "No related note.";
    if (related.similar_unavailable) info.title = related.similar_unavailable;
  }

  $("reader-close").addEventListener("click", closeNote);
  function closeNote() {
    $("reader").hidden = true;
    state.openPath = null;
    $("q").focus();
  }

  // ---- ask ----------------------------------------------------------------------------------

  function escapeHtml(text) {
    return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }

  // Inline Markdown over text that is ALREADY escaped: only our own tags are added. `[S1]` becomes
  // a link only when S1 is in `citable`: the ids the server checked as the model's citations.
  // Anything else that looks like one (quoted note text, an id the server did not report) stays
  // text, so a note cannot make a link to another source.
  function inline(escaped, citable) {
    return escaped
      .replace(/`([^`]+)`/g, "<code>$1</code>")
      .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
      .replace(/(^|[^*])\*([^*\s][^*]*)\*/g, "$1<em>$2</em>")
      .replace(/\[\[([^\]|]+)(?:\|([^\]]+))?\]\]/g, (_, target, alias) => `<span class="wikilink">${alias || target}</span>`)
      .replace(/\[(S\d+(?:\s*[,;]\s*S\d+)*)\]/g, (whole, ids) => {
        const list = ids.split(/\s*[,;]\s*/);
        if (!list.some((id) => citable.has(id))) return whole;
        return list.map((id) => citable.has(id)
          ? `<a class="cite" href="#source-${id}" data-source="${id}">${id}</a>`
          : `[${id}]`).join("");
      })
      .replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g, '<a href="$2" rel="noopener noreferrer" target="_blank">$1</a>');
  }

  // A small Markdown renderer: headings, lists, quotes, code fences, paragraphs. It escapes the
  // whole text first, so note text and model output can never become markup of their own.
  // `citable`: the citation ids that may become links (see inline).
  function renderMarkdown(markdown, citable = new Set()) {
    const lines = escapeHtml(markdown).split(/\r\n|\r|\n/);
    const out = [];
    let paragraph = [];
    let list = null;
    let code = null;
    const flush = () => {
      if (paragraph.length) out.push(`<p>${inline(paragraph.join(" "), citable)}</p>`);
      paragraph = [];
      if (list) out.push(`<${list.tag}>${list.items.map((i) => `<li>${inline(i, citable)}</li>`).join("")}</${list.tag}>`);
      list = null;
    };
    for (const line of lines) {
      if (code !== null) {
        if (/^```/.test(line)) { out.push(`<pre><code>${code.join("\n")}</code></pre>`); code = null; }
        else code.push(line);
        continue;
      }
      let m;
      if (/^```/.test(line)) { flush(); code = []; }
      else if ((m = line.match(/^(#{1,6})\s+(.*)$/))) { flush(); const level = Math.min(6, m[1].length + 2); out.push(`<h${level}>${inline(m[2], citable)}</h${level}>`); }
      else if ((m = line.match(/^\s*[-*+]\s+(.*)$/))) { if (paragraph.length || (list && list.tag !== "ul")) flush(); list = list || { tag: "ul", items: [] }; list.items.push(m[1]); }
      else if ((m = line.match(/^\s*\d+[.)]\s+(.*)$/))) { if (paragraph.length || (list && list.tag !== "ol")) flush(); list = list || { tag: "ol", items: [] }; list.items.push(m[1]); }
      else if ((m = line.match(/^&gt;\s?(.*)$/))) { flush(); out.push(`<blockquote>${inline(m[1], citable)}</blockquote>`); }
      else if (!line.trim()) flush();
      else { if (list) flush(); paragraph.push(line.trim()); }
    }
    if (code !== null) out.push(`<pre><code>${code.join("\n")}</code></pre>`);
    flush();
    return out.join("\n");
  }

  // What the citation check found per source: the model's citations by status, the sources
  // that fit better than a misattributed one, and the sentences quire attributed itself.
  function supportBySource(sentences) {
    const by = new Map();
    const entry = (id) => { if (!by.has(id)) by.set(id, { supported: 0, misattributed: 0, unsupported: 0, added: 0, better: [] }); return by.get(id); };
    for (const sentence of sentences || []) {
      for (const c of sentence.citations) {
        if (c.added_by_quire) { entry(c.id).added += 1; continue; }
        entry(c.id)[c.status] += 1;
        if (c.better) entry(c.id).better.push(c.better);
      }
    }
    return by;
  }

  // The marks of one card: one tag per status found, text only.
  function supportTags(check) {
    if (!check) return [];
    const tags = [];
    if (check.supported) tags.push(el("span", { class: "tag support-supported", text: `✓ ${check.supported} supported` }));
    if (check.misattributed) tags.push(el("span", { class: "tag support-misattributed", text: `⚠ ${check.misattributed} misattributed (${[...new Set(check.better)].join(", ")} fits better)` }));
    if (check.unsupported) tags.push(el("span", { class: "tag support-unsupported", text: `✗ ${check.unsupported} unsupported` }));
    if (check.added) tags.push(el("span", { class: "tag support-added", text: `+ ${check.added} attributed by quire` }));
    return tags;
  }

  // The one-line summary of the check for the answer's meta line.
  function supportSummary(support) {
    if (!support || support.method === "by_construction") return [];
    const parts = [];
    if (support.cited) parts.push(`${support.supported} of ${support.cited} cited sentences supported`);
    if (support.misattributed) parts.push(`${support.misattributed} misattributed`);
    if (support.unsupported) parts.push(`${support.unsupported} unsupported`);
    if (support.added_by_quire) parts.push(`${support.added_by_quire} attributed by quire, not by the model`);
    if (support.method === "words_only") parts.push("checked by words only");
    return parts.length ? [`citations: ${parts.join(", ")}`] : [];
  }

  function renderSources(sources, checks = new Map()) {
    const list = $("sources");
    list.replaceChildren();
    for (const card of sources) {
      const where = card.heading_path.length ? card.heading_path.join(" › ") : "(top)";
      list.append(el("li", { class: card.cited ? "source cited" : "source", id: `source-${card.id}` },
        el("button", {
          class: "source-card", type: "button",
          onclick: () => openNote(card.path, [card.start_line, card.end_line]),
        },
        el("span", { class: "source-id", text: card.id }),
        el("span", { class: "source-title", text: card.title || card.path }),
        el("span", { class: "heading-path", text: where }),
        el("span", { class: "lines", text: `${card.path}:${card.start_line}-${card.end_line}` }),
        card.cited ? el("span", { class: "tag", text: "cited" }) : null,
        ...supportTags(checks.get(card.id)))));
    }
  }

  // POST, then read the server-sent events from the response body as they arrive.
  async function streamEvents(path, body, onEvent, signal) {
    const response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      credentials: "same-origin",
      signal,
    });
    if (!response.ok) {
      let message = `${response.status} ${response.statusText}`;
      try { message = (await response.json()).error.message; } catch (_) { /* not JSON */ }
      throw new Error(message);
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
        let name = "message";
        const data = [];
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith("event:")) name = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length) onEvent(name, JSON.parse(data.join("\n")));
      }
    }
  }

  async function ask(question) {
    if (state.asking) state.asking.abort();
    const controller = new AbortController();
    state.asking = controller;
    const answer = $("answer");
    answer.className = "answer streaming";
    answer.textContent = "";
    $("answer-meta").textContent = "Retrieving passages…";
    $("sources").replaceChildren();
    $("descent").hidden = true;
    $("ask-button").disabled = true;
    let text = "";
    try {
      await streamEvents("/api/ask", { question, retriever: $("retriever").value, expand: $("expand").checked }, (name, data) => {
        if (name === "token") {
          if (!text) $("answer-meta").textContent = "Writing…";
          text += data.text;
          answer.textContent = text;
        } else if (name === "done") {
          answer.className = "answer done";
          // Only a model's answer cites: an extractive answer is quoted note text, and its
          // `[Sn]` (quire's source headers or a note's own text) never become links.
          const citable = new Set(data.kind === "generated" ? (data.citations || []).map((c) => c.id) : []);
          answer.innerHTML = renderMarkdown(data.answer, citable);
          renderSources(data.sources, supportBySource(data.sentences));
          renderDescent(data.retrieval && data.retrieval.descent);
          const kind = { generated: `written by ${data.model || "the model"}`, extractive: "extractive: quoted from your notes", nothing_found: "nothing found" }[data.kind] || data.kind;
          $("answer-meta").textContent = [kind, ...supportSummary(data.support), ...data.warnings].join(" · ");
        } else if (name === "error") {
          throw new Error(data.error.message);
        }
      }, controller.signal);
    } catch (error) {
      if (error.name !== "AbortError") {
        answer.className = "answer failed";
        $("answer-meta").textContent = error.message;
      }
    } finally {
      if (state.asking === controller) state.asking = null;
      $("ask-button").disabled = false;
    }
  }

  // The descent's trace: what the model was shown, what it opened and why. Text only (the
  // model's reasons and the note names are data, never markup).
  function renderDescent(descent) {
    const box = $("descent");
    const list = $("descent-steps");
    list.replaceChildren();
    if (!descent) { box.hidden = true; return; }
    for (const step of descent.steps || []) {
      const item = document.createElement("li");
      let line = `${step.shown}: ${step.chose.length ? step.chose.join(", ") : "nothing chosen"}`;
      if (step.invalid.length) line += ` (unknown ids dropped: ${step.invalid.join(", ")})`;
      if (step.why) line += ` — ${step.why}`;
      item.textContent = line;
      list.append(item);
    }
    const notes = [];
    if (descent.stale && descent.stale.length) notes.push(`changed since indexed, searched instead: ${descent.stale.join(", ")}`);
    if (descent.stopped) notes.push(`stopped: ${descent.stopped}`);
    for (const note of notes) {
      const item = document.createElement("li");
      item.textContent = note;
      list.append(item);
    }
    box.hidden = false;
  }

  $("ask-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const question = $("question").value.trim();
    if (question) ask(question);
  });
  $("question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      $("ask-form").requestSubmit();
    }
  });
  $("answer").addEventListener("click", (event) => {
    const cite = event.target.closest("a.cite");
    if (!cite) return;
    event.preventDefault();
    const card = document.querySelector(`#source-${cite.dataset.source} button`);
    if (card) { card.focus(); card.click(); }
  });

  // ---- ask an article -----------------------------------------------------------------------

  // The server's body limit (quire_app::limits::MAX_BODY_BYTES); the JSON around the text counts.
  const MAX_BODY_BYTES = 64 * 1024;

  // The article's source cards: its name and lines; opening one shows those lines of the pasted
  // text (as text) under the card. An article is not a note, so nothing opens in the reader.
  function renderArticleSources(sources, text) {
    const list = $("article-sources");
    list.replaceChildren();
    const lines = text.split(/\r\n|\r|\n/);
    for (const card of sources) {
      const where = card.heading_path.length ? card.heading_path.join(" › ") : "(top)";
      const quote = el("pre", { class: "note-text article-lines", hidden: "" });
      quote.textContent = lines.slice(card.start_line - 1, card.end_line).join("\n");
      const button = el("button", {
        class: "source-card", type: "button", "aria-expanded": "false",
        onclick: () => {
          quote.hidden = !quote.hidden;
          button.setAttribute("aria-expanded", String(!quote.hidden));
        },
      },
      el("span", { class: "source-id", text: card.id }),
      el("span", { class: "heading-path", text: where }),
      el("span", { class: "lines", text: card.link || `${card.path}:${card.start_line}-${card.end_line}` }),
      card.cited ? el("span", { class: "tag", text: "cited" }) : null);
      list.append(el("li", { class: card.cited ? "source cited" : "source", "data-source": card.id }, button, quote));
    }
  }

  async function askArticle(text, name, question) {
    if (state.askingArticle) state.askingArticle.abort();
    const answer = $("article-answer");
    const body = { text, question };
    if (name) body.name = name;
    if (new Blob([JSON.stringify(body)]).size > MAX_BODY_BYTES) {
      answer.className = "answer failed";
      answer.textContent = "";
      $("article-sources").replaceChildren();
      $("article-meta").textContent = "The article is longer than the server takes (64 KiB with the question): paste a part of it, or use `quire ask --file` (up to 5 MiB).";
      return;
    }
    const controller = new AbortController();
    state.askingArticle = controller;
    answer.className = "answer streaming";
    answer.textContent = "";
    $("article-meta").textContent = "Reading the article…";
    $("article-sources").replaceChildren();
    $("article-button").disabled = true;
    let written = "";
    try {
      await streamEvents("/api/article/ask", body, (event, data) => {
        if (event === "token") {
          if (!written) $("article-meta").textContent = "Writing…";
          written += data.text;
          answer.textContent = written;
        } else if (event === "done") {
          answer.className = "answer done";
          const citable = new Set(data.kind === "generated" ? (data.citations || []).map((c) => c.id) : []);
          answer.innerHTML = renderMarkdown(data.answer, citable);
          renderArticleSources(data.sources, text);
          const kind = { generated: `written by ${data.model || "the model"}`, extractive: "extractive: quoted from the article", nothing_found: "nothing found" }[data.kind] || data.kind;
          const a = data.article || {};
          const vectors = a.cache_dir ? `${a.embedded} chunks embedded, ${a.cached} from the cache` : "no embedding model";
          $("article-meta").textContent = [kind, `${a.name}: ${a.chunks} chunks, ${vectors}`, ...data.warnings].join(" · ");
        } else if (event === "error") {
          throw new Error(data.error.message);
        }
      }, controller.signal);
    } catch (error) {
      if (error.name !== "AbortError") {
        answer.className = "answer failed";
        $("article-meta").textContent = error.message;
      }
    } finally {
      if (state.askingArticle === controller) state.askingArticle = null;
      $("article-button").disabled = false;
    }
  }

  $("article-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("article-text").value;
    const question = $("article-question").value.trim();
    if (!text.trim()) { $("article-meta").textContent = "Paste an article first."; return; }
    if (question) askArticle(text, $("article-name").value.trim(), question);
  });
  $("article-question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      $("article-form").requestSubmit();
    }
  });
  $("article-answer").addEventListener("click", (event) => {
    const cite = event.target.closest("a.cite");
    if (!cite) return;
    event.preventDefault();
    const card = document.querySelector(`#article-sources li[data-source="${cite.dataset.source}"] button`);
    if (card) { card.focus(); card.click(); }
  });

  // ---- keyboard -----------------------------------------------------------------------------

  document.addEventListener("keydown", (event) => {
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
    if (event.key === "/" && !typing) {
      event.preventDefault();
      $("q").focus();
      $("q").select();
    } else if (event.key === "Escape") {
      if (!$("reader").hidden) closeNote();
      else if (typing) document.activeElement.blur();
    }
  });

  // ---- proposals ----------------------------------------------------------------------------

  // Unchanged lines of a diff beyond this many in a row are folded behind a button.
  const FOLD_AFTER = 6;

  // One file's change as rows: its unified diff's added, removed and context lines, and the
  // unchanged lines between and around the hunks taken from the new content (they are the same
  // before and after), shown when few and folded behind a button when more than FOLD_AFTER. The
  // text is the note's (untrusted): written with textContent only.
  function diffNode(change) {
    const box = el("section", { class: "diff-file" });
    const title = change.kind === "rename"
      ? `renamed ${change.path} → ${change.new_path}`
      : `${change.kind === "create" ? "new note" : change.kind === "append" ? "added to" : "changed"} ${change.path}`;
    box.append(el("h4", { text: title }));
    const content = change.content.split("\n");
    if (content.length && content[content.length - 1] === "") content.pop();
    const rows = el("div", { class: "diff-lines" });
    const same = (line) => el("div", { class: "diff-line same", text: ` ${line}` });
    // Lines `from`..`to` (1-based, inclusive) of the new content, folded when many.
    const unchanged = (from, to) => {
      const lines = content.slice(from - 1, to);
      if (lines.length > FOLD_AFTER) {
        const fold = el("button", {
          class: "diff-fold", type: "button",
          onclick: () => fold.replaceWith(...lines.map(same)),
        }, `… ${lines.length} unchanged lines`);
        rows.append(fold);
      } else {
        rows.append(...lines.map(same));
      }
    };
    let next = 1; // the next line of the new content not yet shown
    let sawHunk = false;
    for (const line of change.diff.split("\n")) {
      const hunk = line.match(/^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/);
      if (hunk) {
        const start = Number(hunk[1]) || 1;
        if (start > next) unchanged(next, start - 1);
        next = Math.max(next, start);
        sawHunk = true;
      } else if (!sawHunk || line.startsWith("\\")) {
        continue; // the file header (---, +++, rename) or "\ No newline at end of file"
      } else if (line.startsWith("+")) {
        rows.append(el("div", { class: "diff-line added", text: line }));
        next += 1;
      } else if (line.startsWith("-")) {
        rows.append(el("div", { class: "diff-line removed", text: line }));
      } else if (line.startsWith(" ")) {
        rows.append(el("div", { class: "diff-line same", text: line }));
        next += 1;
      }
    }
    if (sawHunk && next <= content.length) unchanged(next, content.length);
    if (!sawHunk && change.kind === "rename") {
      rows.append(el("div", { class: "diff-line same", text: "(content unchanged)" }));
    }
    box.append(rows);
    return box;
  }

  async function openProposal(id) {
    const detail = $("proposal-detail");
    $("proposal-outcome").textContent = "";
    let proposal;
    try {
      proposal = await api(`/api/proposals/${encodeURIComponent(id)}`);
    } catch (error) {
      $("proposals-info").textContent = error.message;
      return;
    }
    state.proposal = proposal.id;
    $("proposal-title").textContent = proposal.title;
    $("proposal-meta").textContent = `made by ${proposal.command} · ${timeAgo(proposal.created)} · ${proposal.id}`;
    const sources = $("proposal-sources");
    sources.replaceChildren();
    for (const source of proposal.sources || []) {
      const note = source.split(/[#:]/)[0];
      sources.append(el("li", {}, /\.md$/i.test(note)
        ? el("button", { class: "link", type: "button", onclick: () => openNote(note), text: source })
        : el("span", { text: source })));
    }
    $("proposal-diff").replaceChildren(...proposal.changes.map(diffNode));
    const pending = proposal.status === "pending";
    $("proposal-apply").disabled = !pending;
    $("proposal-reject").disabled = !pending;
    detail.hidden = false;
  }

  async function refreshProposals() {
    let list;
    let unreadable;
    try {
      const body = await api("/api/proposals");
      list = body.proposals;
      unreadable = body.unreadable ?? [];
    } catch (error) {
      $("proposals-info").textContent = `proposals unavailable: ${error.message}`;
      return;
    }
    const count = list.length;
    $("proposals-pill").hidden = count === 0 && $("proposals").hidden;
    $("proposals-count").textContent = `${count} proposal${count === 1 ? "" : "s"}`;
    $("proposals-pill").classList.toggle("attention", count > 0);
    // A stored proposal that no longer reads back is left out of the list; say which, and why.
    const skipped = unreadable.length
      ? `${unreadable.length} stored proposal${unreadable.length === 1 ? " could not be read and is" : "s could not be read and are"} left out: ` +
        unreadable.map((u) => `${u.id} (${u.reason})`).join("; ")
      : "";
    $("proposals-info").textContent = [count ? "" : "No change is waiting for you.", skipped].filter(Boolean).join(" ");
    const ol = $("proposal-list");
    ol.replaceChildren();
    for (const p of list) {
      ol.append(el("li", { class: "proposal", "data-id": p.id },
        el("button", { class: "note-title", type: "button", onclick: () => openProposal(p.id), text: p.title }),
        el("p", { class: "path", text: `${p.command} · ${timeAgo(p.created)} · ${p.files.join(", ")}` }),
        el("p", { class: "counts" },
          el("span", { class: "added", text: `+${p.lines_added}` }), " ",
          el("span", { class: "removed", text: `−${p.lines_removed}` }))));
    }
    if (state.proposal && !list.some((p) => p.id === state.proposal) && $("proposal-outcome").textContent === "") {
      $("proposal-detail").hidden = true;
      state.proposal = null;
    }
  }

  async function decide(action) {
    const id = state.proposal;
    if (!id) return;
    const outcome = $("proposal-outcome");
    outcome.textContent = action === "apply" ? "Applying…" : "Rejecting…";
    try {
      const result = await api(`/api/proposals/${encodeURIComponent(id)}/${action}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: "{}",
      });
      if (action === "apply") {
        const failed = (result.not_written || []).map((n) => `${n.path} (${n.reason})`);
        outcome.textContent = `Applied: wrote ${result.written.join(", ")}.` +
          (failed.length ? ` Not written: ${failed.join("; ")}.` : "") +
          ` The files as they were are kept in ${result.backup_dir}.`;
      } else {
        outcome.textContent = "Rejected: nothing was written.";
      }
      $("proposal-apply").disabled = true;
      $("proposal-reject").disabled = true;
    } catch (error) {
      // A refused apply names the file that changed; the change has to be made again.
      outcome.textContent = `${error.message}`;
    }
    refreshProposals();
  }

  $("proposal-apply").addEventListener("click", () => decide("apply"));
  $("proposal-reject").addEventListener("click", () => decide("reject"));
  $("proposals-pill").addEventListener("click", () => {
    const panel = $("proposals");
    panel.hidden = !panel.hidden;
    $("proposals-pill").setAttribute("aria-expanded", String(!panel.hidden));
    if (!panel.hidden) refreshProposals();
  });

  // ---- vault health: the findings inbox -------------------------------------------------------

  async function refreshFindings() {
    const info = $("health-info");
    let inbox;
    try {
      inbox = await api("/api/findings");
    } catch (error) {
      info.textContent = `findings unavailable: ${error.message}`;
      return;
    }
    const parts = [`${inbox.findings.length} finding${inbox.findings.length === 1 ? "" : "s"}`];
    if (inbox.new_since_last) parts.push(`since the last look: ${inbox.new_since_last}`);
    if (inbox.dismissed || inbox.snoozed.length) parts.push(`${inbox.dismissed} dismissed, ${inbox.snoozed.length} snoozed`);
    info.textContent = parts.join(" · ");
    const ol = $("finding-list");
    ol.replaceChildren();
    for (const f of inbox.findings) {
      const where = f.path ? `${f.path}${f.line ? `:${f.line}` : ""}` : "";
      const decide = async (action, body) => {
        try {
          await api(`/api/findings/${encodeURIComponent(f.id)}/${action}`, {
            method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
          });
          refreshFindings();
        } catch (error) {
          info.textContent = error.message;
        }
      };
      ol.append(el("li", { class: `finding${f.new ? " new" : ""}`, "data-id": f.id, "data-kind": f.kind },
        el("p", {},
          f.new ? el("span", { class: "badge", text: "new" }) : null,
          el("span", { class: "kind", text: f.kind.replaceAll("_", " ") }), " ",
          f.path && /\.md$/i.test(f.path)
            ? el("button", { class: "link", type: "button", text: where,
              onclick: () => openNote(f.path, f.line ? [f.line, f.line] : undefined) })
            : el("span", { class: "path", text: where })),
        el("p", { class: "message", text: f.message }),
        el("div", { class: "actions" },
          el("button", { class: "button ghost dismiss", type: "button", text: "Dismiss", onclick: () => decide("dismiss", {}) }),
          el("button", { class: "button ghost snooze", type: "button", text: "Snooze a week", onclick: () => decide("snooze", { days: 7 }) }))));
    }
  }

  $("health-pill").addEventListener("click", () => {
    const panel = $("health");
    panel.hidden = !panel.hidden;
    $("health-pill").setAttribute("aria-expanded", String(!panel.hidden));
    if (!panel.hidden) refreshFindings();
  });

  refreshStatus();
  refreshProposals();
  listen();
  setInterval(refreshStatus, 60000);
  setInterval(refreshProposals, 15000);
})();
