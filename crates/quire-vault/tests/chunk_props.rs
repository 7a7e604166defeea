//! Property tests of the chunker: coverage, exact line ranges, size limits, and id stability.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::collections::BTreeMap;

use proptest::prelude::*;
use quire_vault::chunk::{ApproxTokenCounter, Chunk, ChunkOptions, TokenCounter, chunk_note};
use quire_vault::lines::LineIndex;
use quire_vault::{Note, ParseOptions, parse_note};

const WORDS: &[&str] = &[
    "note",
    "vault",
    "sourdough",
    "run",
    "tempo",
    "Rust",
    "borrow",
    "#tag",
    "[[Link]]",
    "`code`",
    "日本語の文章です。",
    "чтение",
    "long-word-with-hyphens",
    "end.",
    "why?",
    "%%c%%",
    "**bold**",
];

fn words(n: std::ops::Range<usize>) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), n).prop_map(|w| w.join(" "))
}

fn block() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::collection::vec(words(1..30), 1..4).prop_map(|lines| lines.join("\n")),
        2 => prop::collection::vec((words(1..12), prop::collection::vec(words(1..8), 0..3)), 1..5).prop_map(|items| {
            items
                .into_iter()
                .map(|(top, subs)| {
                    let mut s = format!("- {top}");
                    for sub in subs {
                        s.push_str(&format!("\n  - {sub}"));
                    }
                    s
                })
                .collect::<Vec<_>>()
                .join("\n")
        }),
        1 => words(1..10).prop_map(|w| format!("```\n# {w}\n{w}\n```")),
        1 => words(1..10).prop_map(|w| format!("> [!note] Title\n> {w}")),
        1 => words(1..10).prop_map(|w| format!("%%\n{}\n%%", w.replace("%%c%%", "c"))),
        1 => words(1..5).prop_map(|w| format!("| a | b |\n|---|---|\n| {w} | x |")),
        // One very long line: forces sentence/word splits.
        1 => words(300..700),
    ]
}

#[derive(Debug, Clone)]
struct Doc {
    frontmatter: bool,
    preamble: Vec<String>,
    sections: Vec<(usize, String, Vec<String>)>,
}

impl Doc {
    fn render(&self) -> String {
        let mut parts = Vec::new();
        if self.frontmatter {
            parts.push("---\ntags: [a]\ntitle: x\n---".to_string());
        }
        parts.extend(self.preamble.iter().cloned());
        for (level, heading, blocks) in &self.sections {
            parts.push(format!("{} {}", "#".repeat(*level), heading));
            parts.extend(blocks.iter().cloned());
        }
        parts.join("\n\n") + "\n"
    }
}

fn doc() -> impl Strategy<Value = Doc> {
    (
        any::<bool>(),
        prop::collection::vec(block(), 0..2),
        prop::collection::vec(
            (1usize..4, words(1..4), prop::collection::vec(block(), 0..4)),
            0..7,
        ),
    )
        .prop_map(|(frontmatter, preamble, sections)| Doc {
            frontmatter,
            preamble,
            sections: sections
                .into_iter()
                .map(|(l, h, b)| (l, h.replace(['#', '%', '`', '[', ']'], "x"), b))
                .collect(),
        })
}

/// The chunks of the note's body (its card, tested below, covers the frontmatter instead).
fn chunks_of(note: &Note, options: &ChunkOptions) -> Vec<Chunk> {
    chunk_note(note, options, &ApproxTokenCounter)
        .into_iter()
        .filter(|c| !c.is_card())
        .collect()
}

/// The body as the reader sees it: frontmatter and comments blanked, offsets kept.
fn visible(note: &Note) -> Vec<u8> {
    let index = LineIndex::new(&note.source);
    let mut bytes = note.source.as_bytes().to_vec();
    let body_start = index.line_start(note.body_start_line);
    for b in &mut bytes[..body_start] {
        *b = b' ';
    }
    for c in &note.comments {
        for b in &mut bytes[c.clone()] {
            *b = b' ';
        }
    }
    bytes
}

const SMALL: ChunkOptions = ChunkOptions {
    target_tokens: 60,
    max_tokens: 120,
};

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn chunks_cover_every_visible_byte_once_in_order(doc in doc()) {
        let text = doc.render();
        let note = parse_note("P/Doc.md", &text, &ParseOptions::default());
        for options in [SMALL, ChunkOptions::default()] {
            let chunks = chunks_of(&note, &options);
            let vis = visible(&note);
            let mut owner = vec![0usize; vis.len()];
            let mut last_end = 0;
            for c in &chunks {
                prop_assert!(c.byte_range.start >= last_end, "chunks out of order or overlapping");
                prop_assert!(c.byte_range.start < c.byte_range.end);
                last_end = c.byte_range.end;
                for o in &mut owner[c.byte_range.clone()] {
                    *o += 1;
                }
            }
            for (i, &b) in vis.iter().enumerate() {
                if !b.is_ascii_whitespace() {
                    prop_assert_eq!(owner[i], 1, "byte {} ({:?}) covered {} times\n{}", i, b as char, owner[i], text);
                }
            }
        }
    }

    #[test]
    fn line_ranges_match_byte_ranges_and_sizes_stay_under_the_maximum(doc in doc()) {
        let text = doc.render();
        let note = parse_note("P/Doc.md", &text, &ParseOptions::default());
        let index = LineIndex::new(&note.source);
        let vis = String::from_utf8(visible(&note)).unwrap();
        for c in chunks_of(&note, &SMALL) {
            prop_assert_eq!(c.start_line, index.line_of(c.byte_range.start));
            prop_assert_eq!(c.end_line, index.line_of(c.byte_range.end - 1));
            let span = index.span(&note.source, c.start_line, c.end_line).unwrap();
            prop_assert!(span.start <= c.byte_range.start && c.byte_range.end <= span.end);
            prop_assert!(ApproxTokenCounter.count_tokens(&vis[c.byte_range.clone()]) <= SMALL.max_tokens);
            prop_assert_eq!(&c.content_hash, &blake3::hash(c.text.as_bytes()).to_hex()[..32].to_string());
            prop_assert!(c.text.ends_with(&c.body));
        }
    }

    #[test]
    fn ids_are_stable_under_edits_of_other_sections(doc in doc(), pick in any::<prop::sample::Index>(), extra in words(5..60)) {
        let editable: Vec<usize> = doc.sections.iter().enumerate().filter(|(_, s)| !s.2.is_empty()).map(|(i, _)| i).collect();
        prop_assume!(!editable.is_empty());
        let target = editable[pick.index(editable.len())];
        let mut edited = doc.clone();
        edited.sections[target].2.push(extra.replace("%%c%%", "c"));
        let before = parse_note("P/Doc.md", &doc.render(), &ParseOptions::default());
        let after = parse_note("P/Doc.md", &edited.render(), &ParseOptions::default());
        prop_assume!(after.headings.len() == doc.sections.len() && before.headings.len() == doc.sections.len());
        // The heading paths of the chunks holding the edited heading, before and after the edit:
        // an empty parent heading joins its first child's chunk, so giving it text moves it out.
        let holder = |note: &Note| -> Vec<String> {
            let line = note.headings[target].line;
            chunks_of(note, &SMALL).into_iter().find(|c| c.end_line >= line).map(|c| c.heading_path).unwrap_or_default()
        };
        let edited_paths = [holder(&before), holder(&after)];
        let ids = |chunks: Vec<Chunk>| -> BTreeMap<String, Vec<String>> {
            let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for c in chunks.into_iter().filter(|c| !edited_paths.contains(&c.heading_path)) {
                map.entry(c.heading_path.join("/")).or_default().push(c.id);
            }
            map
        };
        prop_assert_eq!(ids(chunks_of(&before, &SMALL)), ids(chunks_of(&after, &SMALL)));
    }
}

#[test]
fn ids_are_unique_within_a_note_even_with_repeated_headings() {
    let text = "# T\n## Notes\na\n## Notes\nb\n# U\n## Notes\nc\n";
    let note = parse_note("x.md", text, &ParseOptions::default());
    let chunks = chunks_of(&note, &ChunkOptions::default());
    // "# T" and "# U" hold only subsections, so they join their first child's chunk.
    let paths: Vec<String> = chunks.iter().map(|c| c.heading_path.join("/")).collect();
    assert_eq!(paths, vec!["T/Notes", "T/Notes", "U/Notes"]);
    let mut ids: Vec<&str> = chunks.iter().map(|c| c.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3);
}

#[test]
fn a_renamed_note_keeps_its_chunk_ids_and_hashes() {
    let text = "# Trip\n\n## Budget\n- flights\n- hotel\n";
    let a = chunks_of(
        &parse_note("a.md", text, &ParseOptions::default()),
        &ChunkOptions::default(),
    );
    let b = chunks_of(
        &parse_note("Travel/Trip 2027.md", text, &ParseOptions::default()),
        &ChunkOptions::default(),
    );
    let key = |c: &Chunk| (c.id.clone(), c.content_hash.clone());
    assert_eq!(
        a.iter().map(key).collect::<Vec<_>>(),
        b.iter().map(key).collect::<Vec<_>>()
    );
}

#[test]
fn structure_decides_boundaries() {
    // Two top-level bullets and a paragraph merge under the target; a heading always starts a chunk
    // (a heading with only subsections joins its first subsection); the heading path and title are
    // carried into the text.
    let text = "---\nx: 1\n---\n# Garden\n\n## Beds\n- tomato\n  - water daily\n- basil\n\nCompost in spring.\n\n## Tools\nA spade.\n";
    let note = parse_note("Garden.md", text, &ParseOptions::default());
    let chunks = chunks_of(&note, &ChunkOptions::default());
    let summary: Vec<(Vec<String>, usize, usize)> = chunks
        .iter()
        .map(|c| (c.heading_path.clone(), c.start_line, c.end_line))
        .collect();
    assert_eq!(
        summary,
        vec![
            (vec!["Garden".to_string(), "Beds".to_string()], 4, 11),
            (vec!["Garden".to_string(), "Tools".to_string()], 13, 14),
        ]
    );
    assert_eq!(
        chunks[0].text,
        "Garden > Beds\n\n# Garden\n\n## Beds\n- tomato\n  - water daily\n- basil\n\nCompost in spring."
    );
    // Small limits split at block boundaries, never inside a bullet.
    let tiny = ChunkOptions {
        target_tokens: 3,
        max_tokens: 40,
    };
    let beds: Vec<(usize, usize)> = chunk_note(&note, &tiny, &ApproxTokenCounter)
        .into_iter()
        .filter(|c| c.heading_path.len() == 2 && c.heading_path[1] == "Beds")
        .map(|c| (c.start_line, c.end_line))
        .collect();
    assert_eq!(beds, vec![(4, 8), (9, 9), (11, 11)]);
}

/// Headings built to make section keys clash: repeated texts, texts that look like the
/// repeat suffix (`#2`), the separator characters themselves, and empty sections.
fn adversarial_note() -> impl Strategy<Value = String> {
    let heading_text = prop::sample::select(vec![
        "A",
        "a",
        "#2",
        "#3",
        "# 2",
        "A\u{1f}#2",
        "\u{1f}",
        "\u{1e}0",
        "A\u{1e}1",
        "",
        "B",
    ]);
    prop::collection::vec((1u8..=4, heading_text, prop::bool::ANY), 1..40).prop_map(|hs| {
        hs.into_iter()
            .map(|(level, text, body)| {
                let mut s = format!("{} {text}\n", "#".repeat(level as usize));
                if body {
                    s.push_str("\nsome words\n");
                }
                s
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn chunk_ids_are_unique_whatever_the_headings(text in adversarial_note()) {
        let note = parse_note("N.md", &text, &ParseOptions::default());
        let chunks = chunk_note(&note, &ChunkOptions::default(), &ApproxTokenCounter);
        let mut ids: Vec<&str> = chunks.iter().map(|c| c.id.as_str()).collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(ids.len(), n, "duplicate ids in {:?}", text);
    }
}

#[test]
fn the_reported_clash_gives_distinct_ids() {
    let text = "# A\n\nfirst\n\n# A\n\nsecond\n\n## #2\n\nthird\n";
    let note = parse_note("N.md", text, &ParseOptions::default());
    let chunks = chunk_note(&note, &ChunkOptions::default(), &ApproxTokenCounter);
    assert_eq!(chunks.len(), 3);
    assert_ne!(chunks[1].id, chunks[2].id);
    // Keys of notes without a clash are unchanged: the second `# A` keeps its `#2` key, so the
    // clashing child gets the next free one.
    assert_eq!(chunks[2].heading_path, ["A", "#2"]);
}

#[test]
fn a_note_past_the_chunk_cap_is_cut_and_says_so() {
    use quire_vault::chunk::{MAX_CHUNKS_PER_NOTE, chunk_note_bounded};
    let mut text = String::new();
    for i in 0..(MAX_CHUNKS_PER_NOTE + 500) {
        text.push_str(&format!("# H{i}\n\nline {i}\n\n"));
    }
    let note = parse_note("Big.md", &text, &ParseOptions::default());
    let (chunks, truncated) =
        chunk_note_bounded(&note, &ChunkOptions::default(), &ApproxTokenCounter);
    assert!(truncated);
    assert_eq!(chunks.len(), MAX_CHUNKS_PER_NOTE);
    assert_eq!(
        chunks.last().unwrap().heading_path,
        [format!("H{}", MAX_CHUNKS_PER_NOTE - 1)]
    );
    let small = parse_note("Small.md", "# S\n\ntext\n", &ParseOptions::default());
    assert!(!chunk_note_bounded(&small, &ChunkOptions::default(), &ApproxTokenCounter).1);
}

#[test]
fn a_note_of_properties_gets_a_card_with_link_targets_by_name() {
    let text = "---\ntype: shrine\nloc: \"[[Places/Kyoto|the city]]\"\ntags: [travel]\nrating: 5\naliases: [Inari]\n---\n";
    let note = parse_note("Places/Fushimi Inari.md", text, &ParseOptions::default());
    let chunks = chunk_note(&note, &ChunkOptions::default(), &ApproxTokenCounter);
    assert_eq!(chunks.len(), 1, "{chunks:#?}");
    let card = &chunks[0];
    assert!(card.is_card());
    assert_eq!(
        card.body,
        "aliases: Inari\nloc: Kyoto\nrating: 5\ntags: travel\ntype: shrine"
    );
    assert_eq!(card.text, format!("Fushimi Inari\n\n{}", card.body));
    assert_eq!((card.start_line, card.end_line), (1, 7));
    assert!(card.heading_path.is_empty());
    assert_eq!(
        &card.content_hash,
        &blake3::hash(card.text.as_bytes()).to_hex()[..32].to_string()
    );
}

#[test]
fn the_card_comes_first_keeps_its_id_and_leaves_body_chunks_alone() {
    let body = "# Catan\n\nA trading game for three or four.\n";
    let with = format!("---\nplayers: 3-4\n---\n{body}");
    let plain = parse_note("Games/Catan.md", body, &ParseOptions::default());
    let carded = parse_note("Games/Catan.md", &with, &ParseOptions::default());
    let plain_chunks = chunk_note(&plain, &ChunkOptions::default(), &ApproxTokenCounter);
    let carded_chunks = chunk_note(&carded, &ChunkOptions::default(), &ApproxTokenCounter);
    // No properties and a body: no card.
    assert!(plain_chunks.iter().all(|c| !c.is_card()));
    assert!(carded_chunks[0].is_card());
    assert_eq!(carded_chunks[0].body, "players: 3-4");
    // The body's chunk ids do not depend on the card.
    let ids = |chunks: &[Chunk]| -> Vec<String> {
        chunks
            .iter()
            .filter(|c| !c.is_card())
            .map(|c| c.id.clone())
            .collect()
    };
    assert_eq!(ids(&plain_chunks), ids(&carded_chunks));
    // A card's id is the same in every note and every version of it.
    let other = parse_note("X.md", "---\na: b\n---\n", &ParseOptions::default());
    let other = chunk_note(&other, &ChunkOptions::default(), &ApproxTokenCounter);
    assert_eq!(other[0].id, carded_chunks[0].id);
}

#[test]
fn an_empty_note_is_still_found_by_its_title() {
    let note = parse_note("Inbox/Someday.md", "", &ParseOptions::default());
    let chunks = chunk_note(&note, &ChunkOptions::default(), &ApproxTokenCounter);
    assert_eq!(chunks.len(), 1);
    assert!(chunks[0].is_card());
    assert_eq!(chunks[0].text, "Someday\n\nSomeday");
}
