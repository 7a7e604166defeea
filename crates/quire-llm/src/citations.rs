//! Finding the sources an answer cites. Prompts number their sources `S1`..`Sn` and ask for
//! `[S1]`; this module reads back what the model wrote, whole or while it streams.
//!
//! The syntax accepted, chosen from what models actually write:
//! - A citation is `[`, one or more ids separated by `,` or `;`, then `]`, with optional
//!   whitespace around ids: `[S1]`, `[S1, S3]`, `[S2;S4]`. Adjacent groups `[S1][S2]` are two
//!   citations.
//! - An id is `S` and 1 to 64 ASCII digits. A lowercase `s` is accepted, because models do write
//!   `[s1]` and it cannot mean anything else; ids are normalised to `S` plus the number without
//!   leading zeros, so `[s01]` cites `S1`. A number no source has (`[S100000000000000000000]`)
//!   is an invalid citation, reported and removed like `[S9]`, never left in the answer as prose.
//! - Anything else between the brackets means the brackets are prose, not a citation:
//!   `[S1-S3]`, `[S1 and S2]`, `[Sources]`, `[^1]`. Only ASCII brackets count.
//! - A `[` always starts a new candidate, so `[[S1]]` (a model writing a wikilink) and
//!   `[see [S2]]` cite `S1` and `S2`.
//!
//! Ids that are not among the known sources are reported as invalid: a caller drops them and
//! never turns them into paths. Pure: no I/O.

/// The most digits in an id; a longer run is prose. Far more than any source count, so that an
/// absurd id is still seen as a citation (and reported as invalid), within the 96 characters
/// the streaming rewriter holds back for one candidate.
const MAX_DIGITS: usize = 64;

/// The ids an answer cites, each once, in the order of first use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Citations {
    /// Ids among the known sources, spelled as normalised ids (`S3`).
    pub valid: Vec<String>,
    /// Well-formed ids that match no known source.
    pub invalid: Vec<String>,
}

/// One id in a citation, as it is found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    /// The normalised id (`S3` for `[s03]`).
    pub id: String,
    /// Whether the id is one of the known sources.
    pub known: bool,
}

/// The citations in `text`, checked against `known_ids`.
///
/// ```
/// use quire_llm::parse_citations;
/// let found = parse_citations("Rye needs warmth [S2][S1, S9]; see [S2].", &["S1", "S2"]);
/// assert_eq!(found.valid, ["S2", "S1"]);
/// assert_eq!(found.invalid, ["S9"]);
/// ```
pub fn parse_citations(text: &str, known_ids: &[&str]) -> Citations {
    let mut scanner = CitationScanner::new(known_ids);
    scanner.feed(text);
    scanner.finish()
}

/// Finds citations in a stream of text pieces, including citations split between pieces
/// (`[S` then `1]`). Feeding a text in any pieces finds exactly what [`parse_citations`] finds.
#[derive(Debug, Clone)]
pub struct CitationScanner {
    known: Vec<String>,
    state: State,
    group: Vec<String>,
    digits: String,
    found: Citations,
}

/// Where the scanner stands within a candidate citation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not inside brackets.
    Outside,
    /// After `[`, `,` or `;`: an id must come.
    BeforeId,
    /// After the `S` of an id.
    Letter,
    /// Inside an id's number.
    Digits,
    /// After an id and whitespace: `,`, `;` or `]` must come.
    AfterId,
}

impl CitationScanner {
    /// A scanner that checks ids against `known_ids` (normalised as ids are, so `s01` is `S1`).
    pub fn new(known_ids: &[&str]) -> CitationScanner {
        CitationScanner {
            known: known_ids
                .iter()
                .map(|id| normalise(id).unwrap_or_else(|| id.to_string()))
                .collect(),
            state: State::Outside,
            group: Vec::new(),
            digits: String::new(),
            found: Citations::default(),
        }
    }

    /// Reads the next piece of the text. Returns the ids of the citations this piece completes,
    /// in order, repeats included.
    pub fn feed(&mut self, piece: &str) -> Vec<Citation> {
        let mut completed = Vec::new();
        for c in piece.chars() {
            self.step(c, &mut completed);
        }
        completed
    }

    /// The citations found so far.
    pub fn citations(&self) -> &Citations {
        &self.found
    }

    /// The citations of the whole text. An unclosed `[S1` at the end is not a citation.
    pub fn finish(self) -> Citations {
        self.found
    }

    fn step(&mut self, c: char, completed: &mut Vec<Citation>) {
        use State::*;
        self.state = match (self.state, c) {
            (_, '[') => {
                self.group.clear();
                BeforeId
            }
            (Outside, _) => Outside,
            (BeforeId, c) if c.is_whitespace() => BeforeId,
            (BeforeId, 'S' | 's') => {
                self.digits.clear();
                Letter
            }
            (Letter | Digits, '0'..='9') if self.digits.len() < MAX_DIGITS => {
                self.digits.push(c);
                Digits
            }
            (Digits, c) if c.is_whitespace() => {
                self.end_id();
                AfterId
            }
            (AfterId, c) if c.is_whitespace() => AfterId,
            (Digits, ',' | ';') => {
                self.end_id();
                BeforeId
            }
            (AfterId, ',' | ';') => BeforeId,
            (Digits, ']') => {
                self.end_id();
                self.close(completed);
                Outside
            }
            (AfterId, ']') => {
                self.close(completed);
                Outside
            }
            _ => Outside,
        };
    }

    fn end_id(&mut self) {
        self.group.push(id_of_number(&self.digits));
    }

    /// A group closed with `]`: its ids are citations.
    fn close(&mut self, completed: &mut Vec<Citation>) {
        for id in self.group.drain(..) {
            let known = self.known.contains(&id);
            let list = if known {
                &mut self.found.valid
            } else {
                &mut self.found.invalid
            };
            if !list.contains(&id) {
                list.push(id.clone());
            }
            completed.push(Citation { id, known });
        }
    }
}

/// `S` and the number without leading zeros.
fn id_of_number(digits: &str) -> String {
    let number = digits.trim_start_matches('0');
    format!("S{}", if number.is_empty() { "0" } else { number })
}

/// The normal spelling of a well-formed id, or `None`.
fn normalise(id: &str) -> Option<String> {
    let digits = id.strip_prefix(['S', 's'])?;
    let well_formed = !digits.is_empty()
        && digits.len() <= MAX_DIGITS
        && digits.bytes().all(|b| b.is_ascii_digit());
    well_formed.then(|| id_of_number(digits))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const KNOWN: &[&str] = &["S1", "S2", "S3"];

    fn valid(text: &str) -> Vec<String> {
        parse_citations(text, KNOWN).valid
    }

    #[test]
    fn single_grouped_and_adjacent_citations() {
        assert_eq!(valid("a [S1] b"), ["S1"]);
        assert_eq!(valid("a [S3, S1] b"), ["S3", "S1"]);
        assert_eq!(valid("a [S2][S1]."), ["S2", "S1"]);
        assert_eq!(valid("[ S1 ;S2 ]"), ["S1", "S2"]);
    }

    #[test]
    fn ids_are_deduplicated_in_order_of_first_use() {
        let found = parse_citations("[S2] x [S1] y [S2, S2] [S7] [S7][S8]", KNOWN);
        assert_eq!(found.valid, ["S2", "S1"]);
        assert_eq!(found.invalid, ["S7", "S8"]);
    }

    #[test]
    fn lowercase_and_leading_zeros_are_normalised() {
        assert_eq!(valid("[s1] [S02] [s003]"), ["S1", "S2", "S3"]);
        assert_eq!(parse_citations("[S0]", KNOWN).invalid, ["S0"]);
    }

    #[test]
    fn prose_in_brackets_is_no_citation() {
        for text in [
            "[S1-S3]",
            "[S1 and S2]",
            "[Sources]",
            "[S]",
            "[^1]",
            "[1]",
            "[S1",
            "S1]",
            "(S1)",
            "【S1】",
            "[S12345678901234567890123456789012345678901234567890123456789012345]",
            "[S1,]",
            "[,S1]",
        ] {
            let found = parse_citations(text, KNOWN);
            assert_eq!(found, Citations::default(), "{text}");
        }
    }

    #[test]
    fn an_absurd_number_is_an_invalid_citation_not_prose() {
        let found = parse_citations("Yes [S100000000000000000000] and [S1234567].", KNOWN);
        assert_eq!(found.valid, Vec::<String>::new());
        assert_eq!(found.invalid, ["S100000000000000000000", "S1234567"]);
    }

    #[test]
    fn an_inner_bracket_starts_a_new_candidate() {
        assert_eq!(valid("[[S1]]"), ["S1"]);
        assert_eq!(valid("[see [S2]]"), ["S2"]);
        assert_eq!(valid("[S1 [S3]"), ["S3"]);
    }

    #[test]
    fn known_ids_are_normalised_too() {
        assert_eq!(parse_citations("[S1]", &["s01"]).valid, ["S1"]);
    }

    #[test]
    fn the_scanner_reports_citations_as_they_close() {
        let mut scanner = CitationScanner::new(KNOWN);
        assert_eq!(scanner.feed("Rye [S"), []);
        assert_eq!(
            scanner.feed("1, S9] and [S1"),
            [
                Citation {
                    id: "S1".into(),
                    known: true
                },
                Citation {
                    id: "S9".into(),
                    known: false
                },
            ]
        );
        assert_eq!(scanner.citations().valid, ["S1"]);
        assert_eq!(scanner.feed("]").len(), 1);
        let found = scanner.finish();
        assert_eq!(found.valid, ["S1"]);
        assert_eq!(found.invalid, ["S9"]);
    }

    /// Texts dense in citation syntax, near misses and multi-byte characters.
    fn citation_text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("[S1]".to_string()),
                Just("[s2, S9]".to_string()),
                Just("[S".to_string()),
                Just("]".to_string()),
                Just("[".to_string()),
                "[ ,;sS0-9\\]a-z é字]{0,12}".prop_map(String::from),
            ],
            0..16,
        )
        .prop_map(|parts| parts.concat())
    }

    /// Splits `text` at the given fractions of its length, moved back to character boundaries.
    fn split(text: &str, cuts: &[f64]) -> Vec<String> {
        let mut points: Vec<usize> = cuts
            .iter()
            .map(|f| {
                let mut i = (text.len() as f64 * f) as usize;
                while !text.is_char_boundary(i) {
                    i -= 1;
                }
                i
            })
            .collect();
        points.sort_unstable();
        let mut pieces = Vec::new();
        let mut start = 0;
        for point in points {
            pieces.push(text[start..point].to_string());
            start = point;
        }
        pieces.push(text[start..].to_string());
        pieces
    }

    proptest! {
        #[test]
        fn splitting_the_text_anywhere_finds_the_same_citations(
            text in citation_text(),
            cuts in proptest::collection::vec(0.0f64..1.0, 1..6),
        ) {
            let whole = parse_citations(&text, KNOWN);
            let mut one_scanner = CitationScanner::new(KNOWN);
            let expected = one_scanner.feed(&text);

            let mut scanner = CitationScanner::new(KNOWN);
            let mut streamed = Vec::new();
            for piece in split(&text, &cuts) {
                streamed.extend(scanner.feed(&piece));
            }
            prop_assert_eq!(streamed, expected);
            prop_assert_eq!(scanner.finish(), whole);
        }

        #[test]
        fn every_valid_id_is_known_and_no_id_is_listed_twice(text in citation_text()) {
            let found = parse_citations(&text, KNOWN);
            for id in &found.valid {
                prop_assert!(KNOWN.contains(&id.as_str()));
            }
            for list in [&found.valid, &found.invalid] {
                let mut sorted = list.clone();
                sorted.sort();
                sorted.dedup();
                prop_assert_eq!(sorted.len(), list.len());
            }
        }
    }
}
