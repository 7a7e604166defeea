//! Rewriting the citations in what a model writes, while it streams.
//!
//! A model cites sources as `[S1]`; quire checks every id against the sources it gave and never
//! shows a citation it cannot back. [`CitationRewriter`] sits between the stream and the screen:
//! text passes through at once, except from a `[` that may start a citation until the bracket
//! closes (or turns out to be prose). A complete citation is then written again by a `render`
//! function from its known ids only (`[S1, S3]` for answers, `[[Note]]` wikilinks for drafts);
//! unknown ids are removed, and a citation with no known id disappears with the space before it.
//! What counts as a citation is decided by [`quire_llm::parse_citations`], so a citation split
//! across pieces (`[S` + `1]`) is rewritten like a whole one.

use quire_llm::{CancelToken, ChatModel, ChatRequest, Citations, LlmError, Usage, parse_citations};

use crate::context::Source;

/// The most characters held back for one candidate citation before it is taken as prose.
const MAX_HELD: usize = 96;

/// How one citation's known ids are written.
type Render = Box<dyn Fn(&[String]) -> String + Send>;

/// Rewrites citations in a text fed in pieces. Feeding a text in any pieces gives the same
/// output as [`rewrite_citations`] on the whole text.
pub struct CitationRewriter {
    known: Vec<String>,
    render: Render,
    /// Spaces seen just before a possible citation: dropped with a citation that vanishes.
    space: String,
    /// The candidate citation being read, spaces first.
    held: String,
    /// Where the `[` is in `held`.
    bracket: usize,
}

impl CitationRewriter {
    /// `render` receives the known ids of one citation, in order, and returns its new text; it
    /// is not called when no id is known (the citation is removed).
    pub fn new(
        known: &[&str],
        render: impl Fn(&[String]) -> String + Send + 'static,
    ) -> CitationRewriter {
        CitationRewriter {
            known: known.iter().map(|id| id.to_string()).collect(),
            render: Box::new(render),
            space: String::new(),
            held: String::new(),
            bracket: 0,
        }
    }

    /// Keeps citations as ids, `[S1, S3]`, without the unknown ones.
    pub fn keeping_ids(known: &[&str]) -> CitationRewriter {
        CitationRewriter::new(known, |ids| format!("[{}]", ids.join(", ")))
    }

    /// Reads the next piece; returns the text that is ready to show.
    pub fn feed(&mut self, piece: &str) -> String {
        let mut out = String::new();
        for c in piece.chars() {
            self.step(c, &mut out);
        }
        out
    }

    /// The text still held back (an unclosed `[S1` at the end is prose).
    pub fn finish(mut self) -> String {
        let mut out = std::mem::take(&mut self.space);
        out.push_str(&self.held);
        out
    }

    fn step(&mut self, c: char, out: &mut String) {
        if self.held.is_empty() {
            match c {
                ' ' | '\t' => self.space.push(c),
                '[' => {
                    self.held = std::mem::take(&mut self.space);
                    self.bracket = self.held.len();
                    self.held.push('[');
                }
                _ => {
                    out.push_str(&std::mem::take(&mut self.space));
                    out.push(c);
                }
            }
            return;
        }
        match c {
            '[' => {
                // A `[` always starts a new candidate; what was held is prose.
                out.push_str(&std::mem::take(&mut self.held));
                self.held.push('[');
                self.bracket = 0;
            }
            ']' => {
                self.held.push(']');
                let held = std::mem::take(&mut self.held);
                out.push_str(&self.close(held));
            }
            c if c.is_whitespace() || c.is_ascii_digit() || matches!(c, 'S' | 's' | ',' | ';') => {
                self.held.push(c);
                if self.held.len() > MAX_HELD {
                    out.push_str(&std::mem::take(&mut self.held));
                }
            }
            _ => {
                out.push_str(&std::mem::take(&mut self.held));
                out.push(c);
            }
        }
    }

    /// The text of a closed bracket group: rewritten if it is a citation, else as written.
    fn close(&self, held: String) -> String {
        let (space, span) = held.split_at(self.bracket);
        let known: Vec<&str> = self.known.iter().map(String::as_str).collect();
        let found = parse_citations(span, &known);
        if found.valid.is_empty() && found.invalid.is_empty() {
            return held;
        }
        if found.valid.is_empty() {
            return String::new();
        }
        format!("{space}{}", (self.render)(&found.valid))
    }
}

/// [`CitationRewriter`] over a whole text.
pub fn rewrite_citations(
    text: &str,
    known: &[&str],
    render: impl Fn(&[String]) -> String + Send + 'static,
) -> String {
    let mut rewriter = CitationRewriter::new(known, render);
    let mut out = rewriter.feed(text);
    out.push_str(&rewriter.finish());
    out
}

/// A model's answer, streamed through a [`CitationRewriter`].
#[derive(Debug, Clone)]
pub struct CitedText {
    /// What the model wrote.
    pub raw: String,
    /// What was shown: `raw` with its citations rewritten.
    pub text: String,
    /// The citations of `raw`, known and unknown.
    pub citations: Citations,
    /// Token counts, when the model's server reported them.
    pub usage: Option<Usage>,
}

/// Streams `request`, passing the rewritten text to `on_text` as it becomes ready. On an error
/// (a cancel included) the text held back is shown first, so what was shown stays readable.
pub fn stream_cited(
    model: &dyn ChatModel,
    request: &ChatRequest,
    known: &[&str],
    render: impl Fn(&[String]) -> String + Send + 'static,
    cancel: &CancelToken,
    on_text: &mut dyn FnMut(&str),
) -> Result<CitedText, LlmError> {
    let mut rewriter = CitationRewriter::new(known, render);
    let mut text = String::new();
    let result = model.stream(request, cancel, &mut |piece| {
        let shown = rewriter.feed(piece);
        if !shown.is_empty() {
            on_text(&shown);
            text.push_str(&shown);
        }
    });
    let tail = rewriter.finish();
    if !tail.is_empty() {
        on_text(&tail);
        text.push_str(&tail);
    }
    let completion = result?;
    Ok(CitedText {
        citations: parse_citations(&completion.text, known),
        raw: completion.text,
        text,
        usage: completion.usage,
    })
}

/// Streams a request whose citations are shown as wikilinks to the sources' notes
/// (`[S1, S2]` → `[[Note A]] [[Note B]]`), as `draft` and `reflect` write them.
pub fn stream_wikilinked(
    model: &dyn ChatModel,
    request: &ChatRequest,
    sources: &[Source],
    cancel: &CancelToken,
    on_text: &mut dyn FnMut(&str),
) -> Result<CitedText, LlmError> {
    let known: Vec<&str> = sources.iter().map(|s| s.id.as_str()).collect();
    let links: Vec<(String, String)> = sources
        .iter()
        .map(|s| (s.id.clone(), s.passage.place_link()))
        .collect();
    let render = move |ids: &[String]| {
        let mut targets: Vec<&str> = Vec::new();
        for id in ids {
            if let Some((_, link)) = links.iter().find(|(known, _)| known == id)
                && !targets.contains(&link.as_str())
            {
                targets.push(link);
            }
        }
        let links: Vec<String> = targets.iter().map(|t| format!("[[{t}]]")).collect();
        links.join(" ")
    };
    stream_cited(model, request, &known, render, cancel, on_text)
}

/// The warning about removed citations of `what` (sources, days) that do not exist.
pub fn removed_warning(what: &str, invalid: &[String]) -> Option<String> {
    (!invalid.is_empty()).then(|| {
        format!(
            "removed citations of {what} that do not exist: {}",
            invalid.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(text: &str) -> String {
        rewrite_citations(text, &["S1", "S2"], |ids| format!("[{}]", ids.join(", ")))
    }

    #[test]
    fn unknown_ids_are_removed_and_known_ones_kept() {
        assert_eq!(ids("Feed daily [S1][S99]."), "Feed daily [S1].");
        assert_eq!(
            ids("Feed daily [S99]. Then [s02, S7; S1]"),
            "Feed daily. Then [S2, S1]"
        );
        assert_eq!(ids("Rye [S99] flour"), "Rye flour");
    }

    #[test]
    fn prose_in_brackets_is_left_alone() {
        for text in [
            "[Sources] [S1-S3] [x] [[Wiki link]] [] a[b",
            "unclosed [S1",
            "  indented [ and spaces  ",
        ] {
            assert_eq!(ids(text), text);
        }
        assert_eq!(ids("[[S1]]"), "[[S1]]");
    }

    #[test]
    fn pieces_give_the_same_text_as_the_whole() {
        let whole = "Feed it [S1] daily [S1, S99] and [S99] [Note] [S2]. End [S";
        let expected = ids(whole);
        for size in 1..6 {
            let mut rewriter = CitationRewriter::keeping_ids(&["S1", "S2"]);
            let chars: Vec<char> = whole.chars().collect();
            let mut out = String::new();
            for piece in chars.chunks(size) {
                out.push_str(&rewriter.feed(&piece.iter().collect::<String>()));
            }
            out.push_str(&rewriter.finish());
            assert_eq!(out, expected, "pieces of {size}");
        }
        assert_eq!(expected, "Feed it [S1] daily [S1] and [Note] [S2]. End [S");
    }

    #[test]
    fn citations_can_become_wikilinks() {
        let text = rewrite_citations("Bubbles eats rye [S1, S2].", &["S1", "S2"], |ids| {
            ids.iter()
                .map(|id| format!("[[Note {id}]]"))
                .collect::<Vec<_>>()
                .join(" ")
        });
        assert_eq!(text, "Bubbles eats rye [[Note S1]] [[Note S2]].");
    }
}
