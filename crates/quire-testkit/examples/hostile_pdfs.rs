//! Writes the hostile PDFs of the reliability figures into a folder (`scripts/bench/trust.sh`):
//! a double-Flate bomb, a stream referenced 10,000 times, and a slow PDF.

use quire_testkit::pdf::{double_flate_pdf, repeated_contents_pdf, slow_pdf};

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: hostile_pdfs FOLDER");
        std::process::exit(2);
    };
    let dir = std::path::Path::new(&dir);
    let pdfs = [
        ("double-flate.pdf", double_flate_pdf(1 << 30)),
        ("repeated.pdf", repeated_contents_pdf(10_000, 256 * 1024)),
        ("slow.pdf", slow_pdf(2_000, 200_000)),
    ];
    for (name, bytes) in pdfs {
        let path = dir.join(name);
        if let Err(e) = std::fs::write(&path, &bytes) {
            eprintln!("{}: {e}", path.display());
            std::process::exit(1);
        }
        println!("{} {} bytes", path.display(), bytes.len());
    }
}
