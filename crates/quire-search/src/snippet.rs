//! Snippets: the part of a chunk around the first matched words, with the matches marked. Pure.

use quire_index::analyzer::{analyze, tokenize};

/// The analyzed terms of a query (stemmed, stop words dropped).
pub fn query_terms(query: &str) -> Vec<String> {
    analyze(query)
}

/// A window of about `max_chars` characters of `body` around the first word whose analyzed form
/// is one of `terms`, and the byte ranges of all such words inside the window.
pub fn snippet(body: &str, terms: &[String], max_chars: usize) -> (String, Vec<(usize, usize)>) {
    let matches: Vec<(usize, usize)> = tokenize(body)
        .into_iter()
        .filter(|t| analyze(&t.text).first().is_some_and(|a| terms.contains(a)))
        .map(|t| (t.offset_from, t.offset_to))
        .collect();
    let first = matches.first().map(|m| m.0).unwrap_or(0);
    // Start a little before the first match, on a char boundary.
    let mut start = body[..first]
        .char_indices()
        .rev()
        .nth(max_chars / 4)
        .map(|(i, _)| i)
        .unwrap_or(0);
    if start > 0
        && let Some(space) = body[start..first].find(char::is_whitespace)
    {
        start += space + 1;
    }
    let end = body[start..]
        .char_indices()
        .nth(max_chars)
        .map(|(i, _)| start + i)
        .unwrap_or(body.len());
    let window = &body[start..end];
    let lead = window.len() - window.trim_start().len();
    let text = window.trim();
    let offset = start + lead;
    let highlights = matches
        .into_iter()
        .filter(|&(a, b)| a >= offset && b <= offset + text.len())
        .map(|(a, b)| (a - offset, b - offset))
        .collect();
    (text.to_string(), highlights)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_stemmed_matches_inside_the_window() {
        let body = "Intro words. The starters were fed twice; feeding the starter matters.";
        let terms = query_terms("starter feeding");
        let (text, marks) = snippet(body, &terms, 200);
        let marked: Vec<&str> = marks.iter().map(|&(a, b)| &text[a..b]).collect();
        assert_eq!(marked, vec!["starters", "feeding", "starter"]);
        let (short, _) = snippet(
            &format!("{} needle {}", "word ".repeat(200), "tail ".repeat(200)),
            &query_terms("needle"),
            60,
        );
        assert!(
            short.contains("needle") && short.chars().count() <= 60,
            "{short}"
        );
    }
}
