//! PDF extraction over PDFs with known text (written by quire-testkit), hostile PDFs, a real
//! scanned PDF of the shared corpora, and mutations of real PDFs (randomised, in the normal suite).

use std::time::{Duration, Instant};

use proptest::prelude::*;
use quire_testkit::pdf::{encrypted_pdf, pdf_from_pages, self_drawing_form_pdf, two_column_pdf};
use quire_vault::pdf::{PdfError, PdfLimits, extract_pdf, extract_pdf_bounded, pdf_note, quietly};

const PAGES: [&str; 3] = [
    "Photosynthesis in kelp forests\nCarbon is fixed near the surface.",
    "Grazing by sea urchins\nUrchin barrens follow the loss of otters.",
    "Recovery after marine heatwaves\nKelp returns within four years.",
];

#[test]
fn each_page_has_its_own_text_and_number() {
    let text = extract_pdf(&pdf_from_pages(&PAGES), &PdfLimits::default()).expect("text");
    assert_eq!(text.page_count, 3);
    assert_eq!(text.pages.len(), 3);
    for (page, expected) in text.pages.iter().zip(PAGES) {
        for line in expected.lines() {
            assert!(page.contains(line), "{line:?} not in {page:?}");
        }
    }
    assert!(!text.pages[0].contains("urchin"), "{:?}", text.pages[0]);
    let note = pdf_note("Papers/Kelp.pdf", &text, "hash".into());
    let (first, last) = quire_vault::pdf::page_lines(&note, 2).expect("page 2");
    let page_two = note.lines(first, last).expect("its lines");
    assert!(page_two.starts_with("# Page 2\n") && page_two.contains("Urchin barrens"));
}

/// Two columns come out in the order the page draws them: a column at a time reads right; a page
/// drawn line by line across the columns interleaves them (there is no column detection).
#[test]
fn two_columns_follow_the_order_they_are_drawn_in() {
    let left = ["Kelp forests grow", "along cold coasts"];
    let right = ["Otters keep urchins", "from eating them"];
    let read = |across| {
        let text = extract_pdf(
            &two_column_pdf(&left, &right, across),
            &PdfLimits::default(),
        )
        .expect("text");
        text.pages[0]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        read(false),
        "Kelp forests grow along cold coasts Otters keep urchins from eating them"
    );
    let across = read(true);
    assert!(
        across.starts_with("Kelp forests grow Otters keep urchins"),
        "{across}"
    );
}

#[test]
fn only_the_first_pages_are_read_past_the_page_cap() {
    let limits = PdfLimits {
        max_pages: 2,
        ..Default::default()
    };
    let text = extract_pdf(&pdf_from_pages(&PAGES), &limits).expect("text");
    assert_eq!((text.pages.len(), text.page_count), (2, 3));
}

#[test]
fn an_encrypted_pdf_is_reported_as_such() {
    let result = extract_pdf(&encrypted_pdf(&PAGES), &PdfLimits::default());
    assert_eq!(result, Err(PdfError::Encrypted));
}

#[test]
fn a_form_that_draws_itself_is_refused_not_a_stack_overflow() {
    let result = extract_pdf_bounded(self_drawing_form_pdf(), &PdfLimits::default());
    assert!(
        matches!(&result, Err(PdfError::Malformed(m)) if m.contains("draws itself")),
        "{result:?}"
    );
}

#[test]
fn deeply_nested_arrays_are_malformed() {
    let mut pdf = b"%PDF-1.4\n1 0 obj\n".to_vec();
    pdf.extend(std::iter::repeat_n(b'[', 200_000));
    pdf.extend(std::iter::repeat_n(b']', 200_000));
    pdf.extend_from_slice(b"\nendobj\ntrailer << /Root 1 0 R >>\n%%EOF\n");
    let result = quietly(|| extract_pdf(&pdf, &PdfLimits::default()));
    assert!(matches!(result, Err(PdfError::Malformed(_))), "{result:?}");
}

#[test]
fn a_scan_without_text_has_no_text_layer() {
    // A real one-page PDF of the tasks demo vault: an image, no text.
    let path = quire_testkit::corpora()
        .join("vaults/obsidian-tasks-demo/vault/Test Attachments/a_pdf_file.pdf");
    let bytes = std::fs::read(&path).expect("the shared corpora");
    let result = extract_pdf(&bytes, &PdfLimits::default());
    assert_eq!(result, Err(PdfError::NoTextLayer { pages: 1 }));
}

#[test]
fn a_slow_extraction_is_given_up() {
    let limits = PdfLimits {
        timeout: Duration::ZERO,
        ..Default::default()
    };
    let pages: Vec<String> = (0..200)
        .map(|i| format!("page {i}\n{}", "word ".repeat(80)))
        .collect();
    let pages: Vec<&str> = pages.iter().map(String::as_str).collect();
    let result = extract_pdf_bounded(pdf_from_pages(&pages), &limits);
    assert_eq!(result, Err(PdfError::TimedOut { seconds: 0 }));
}

/// Seeds for mutation: the generated PDF (compressed streams) and the PDF of the shared corpora.
fn seeds() -> Vec<Vec<u8>> {
    let corpus = quire_testkit::corpora()
        .join("vaults/obsidian-tasks-demo/vault/Test Attachments/a_pdf_file.pdf");
    vec![
        pdf_from_pages(&PAGES),
        std::fs::read(corpus).expect("the shared corpora"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Flipped, cut and inserted bytes never panic, hang or overflow the stack: every mutant gives
    /// text or a reason within the time limit.
    #[test]
    fn mutated_pdfs_give_text_or_a_reason(
        seed in 0usize..2,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..4), 1..12),
    ) {
        let mut bytes = seeds().swap_remove(seed);
        for (at, byte, op) in edits {
            if bytes.is_empty() {
                break;
            }
            let i = at.index(bytes.len());
            match op {
                0 => bytes[i] = byte,
                1 => bytes.truncate(i),
                2 => bytes.insert(i, byte),
                _ => { bytes.remove(i); }
            }
        }
        let limits = PdfLimits { timeout: Duration::from_secs(20), ..Default::default() };
        let started = Instant::now();
        let result = extract_pdf_bounded(bytes, &limits);
        prop_assert!(started.elapsed() < Duration::from_secs(21));
        if let Ok(text) = result {
            prop_assert!(!text.pages.is_empty());
            prop_assert!(text.pages.len() <= text.page_count);
        }
    }
}
