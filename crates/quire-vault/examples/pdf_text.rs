//! Measures PDF text extraction as the index runs it: for each PDF given, its pages, the time,
//! pages per second, and why it gave no text if it did not; `--dump DIR` writes each PDF's text
//! (pages separated by form feeds) to compare with another extractor.
//!
//! ```sh
//! cargo run --release -p quire-vault --example pdf_text -- /usr/share/doc/*/*.pdf
//! ```

use std::time::Instant;

use quire_vault::pdf::{PdfLimits, extract_pdf, quietly};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let dump = args.iter().position(|a| a == "--dump").map(|i| {
        args.remove(i);
        std::path::PathBuf::from(args.remove(i))
    });
    let (mut pages_total, mut seconds_total) = (0usize, 0f64);
    for path in &args {
        let Ok(bytes) = std::fs::read(path) else {
            println!("{path}: cannot be read");
            continue;
        };
        let started = Instant::now();
        let result = quietly(|| extract_pdf(&bytes, &PdfLimits::default()));
        let seconds = started.elapsed().as_secs_f64();
        match result {
            Ok(text) => {
                let chars: usize = text.pages.iter().map(|p| p.chars().count()).sum();
                println!(
                    "{path}: {} pages, {chars} characters, {} pages failed, {seconds:.3} s, {:.0} pages/s",
                    text.pages.len(),
                    text.failed_pages.len(),
                    text.pages.len() as f64 / seconds
                );
                pages_total += text.pages.len();
                seconds_total += seconds;
                if let Some(dir) = &dump {
                    let name = std::path::Path::new(path).file_name().unwrap_or_default();
                    let out = dir.join(name).with_extension("txt");
                    if let Err(e) = std::fs::write(&out, text.pages.join("\n\u{c}\n")) {
                        println!("  cannot write {}: {e}", out.display());
                    }
                }
            }
            Err(error) => println!("{path}: {error} ({seconds:.3} s)"),
        }
    }
    if seconds_total > 0.0 {
        println!(
            "total: {pages_total} pages in {seconds_total:.2} s, {:.0} pages/s",
            pages_total as f64 / seconds_total
        );
    }
}
