//! Full-text documents and queries for PostgreSQL, built from quire's own analyzer.
//!
//! Postgres' text search configurations stem one language and cannot cut Chinese or Japanese
//! into words; quire's analyzer (`quire_index::analyzer`: stemming by each word's script, English
//! stop words, CJK bigrams) already decides what a term is for the local index. So the terms are made here and
//! handed to Postgres as `tsvector` and `tsquery` literals, which it takes as given: both
//! backends match the same words. Pure functions, no I/O.

use quire_index::analyzer::{analyze, strip_html};

/// The version of what this module makes of a text (and of quire's analyzer under it): part
/// of every note's fingerprint, so a change here rewrites the published terms.
pub const TERMS_VERSION: &str = "3";

/// Postgres' largest position in a `tsvector` (larger ones are stored as it).
const MAX_POSITION: usize = 16_383;
/// Postgres keeps at most 256 positions per lexeme.
const MAX_POSITIONS_PER_TERM: usize = 255;
/// Postgres refuses a lexeme of 2 KiB or more; the analyzer's terms are far shorter.
const MAX_TERM_BYTES: usize = 2_000;

/// A term quoted for a `tsvector`/`tsquery` literal: in quotes, quotes and backslashes doubled.
fn quote(term: &str) -> String {
    let mut out = String::with_capacity(term.len() + 2);
    out.push('\'');
    for c in term.chars() {
        if c == '\'' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// The `tsvector` literal of a chunk: its note's title weighted A, its heading path B, its
/// body C, each term with its positions (HTML stripped first, as the local index does); and the
/// three fields' lengths in terms, which BM25 needs.
pub fn tsvector(title: &str, headings: &str, body: &str) -> (String, [u32; 3]) {
    let mut positions: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut position = 0usize;
    let mut lengths = [0u32; 3];
    for (field, (text, weight)) in [(title, 'A'), (headings, 'B'), (body, 'C')]
        .into_iter()
        .enumerate()
    {
        for term in analyze(&strip_html(text)) {
            lengths[field] += 1;
            position = (position + 1).min(MAX_POSITION);
            if term.len() >= MAX_TERM_BYTES {
                continue;
            }
            let list = positions.entry(term).or_default();
            if list.len() < MAX_POSITIONS_PER_TERM {
                list.push(format!("{position}{weight}"));
            }
        }
    }
    let literal = positions
        .into_iter()
        .map(|(term, at)| format!("{}:{}", quote(&term), at.join(",")))
        .collect::<Vec<_>>()
        .join(" ");
    (literal, lengths)
}

/// The weight letter of each field in a chunk's `tsvector`: title, heading path, body.
pub const FIELD_WEIGHTS: [char; 3] = ['A', 'B', 'C'];

/// The `tsquery` literal that matches chunks holding `term` in the field of `weight`.
pub fn field_tsquery(term: &str, weight: char) -> String {
    format!("{}:{weight}", quote(term))
}

/// A query's terms as the local index searches them: analyzed, in order, a repeated term
/// repeated (each occurrence scores, as each is a clause there).
pub fn query_terms(query: &str) -> Vec<String> {
    let mut terms = analyze(query);
    terms.retain(|t| t.len() < MAX_TERM_BYTES);
    terms
}

/// The `tsquery` literal of a query: any of its terms (as BM25's `should`); `None` when the
/// query has no term.
pub fn tsquery(query: &str) -> Option<String> {
    term_queries(query).map(|terms| terms.join(" | "))
}

/// Each distinct term of `text` as a tsquery of its own, `None` when `text` has none.
pub fn term_queries(text: &str) -> Option<Vec<String>> {
    let mut terms = analyze(text);
    terms.retain(|t| t.len() < MAX_TERM_BYTES);
    terms.sort();
    terms.dedup();
    (!terms.is_empty()).then(|| terms.iter().map(|t| quote(t)).collect())
}

/// The ancestor folders of a vault-relative path, outermost first (`a/b/n.md` → `a`, `a/b`):
/// a folder filter matches notes at any depth below it, as in the local index.
pub fn folders(path: &str) -> Vec<String> {
    let parts: Vec<&str> = path.split('/').collect();
    (1..parts.len()).map(|n| parts[..n].join("/")).collect()
}

/// A note's tags as a filter sees them: lowercased, each with its parents (`a/b` adds `a`).
pub fn tag_terms(tags: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for tag in tags {
        let tag = tag.trim_start_matches('#').to_lowercase();
        let parts: Vec<&str> = tag.split('/').collect();
        for n in 1..=parts.len() {
            out.push(parts[..n].join("/"));
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tsvector_weights_title_headings_and_body_and_escapes_quotes() {
        let (v, lengths) = tsvector(
            "Baking",
            "Starter",
            "Bake the starter's bread at 'home' \\ now",
        );
        // Terms per field, stop words not counted (as the local index counts a field's length).
        assert_eq!(lengths, [1, 1, 5]);
        // Stemmed: baking → bake, counted in the title (A) and in the body (C).
        assert!(v.contains("'bake':1A,"), "{v}");
        assert!(v.contains("'starter':2B,"), "{v}");
        assert!(v.contains("'home'"), "{v}");
        assert!(!v.contains("'the'"), "stop words are dropped: {v}");
    }

    #[test]
    fn a_tsquery_is_any_of_the_terms_and_none_without_terms() {
        assert_eq!(
            tsquery("Sourdough starters and sourdough").as_deref(),
            Some("'sourdough' | 'starter'")
        );
        assert_eq!(tsquery("the and of"), None);
        assert_eq!(tsquery("it's").as_deref(), None);
        assert_eq!(quote("o'k\\"), "'o''k\\\\'");
    }

    #[test]
    fn cjk_text_becomes_bigrams_as_in_the_local_index() {
        let q = tsquery("東京都").unwrap_or_default();
        assert_eq!(q, "'京都' | '東京'");
    }

    #[test]
    fn folders_and_tags_include_their_ancestors() {
        assert_eq!(folders("a/b/n.md"), vec!["a", "a/b"]);
        assert!(folders("n.md").is_empty());
        assert_eq!(
            tag_terms(&["Project/Alpha".into(), "#x".into()]),
            vec!["project", "project/alpha", "x"]
        );
    }
}
