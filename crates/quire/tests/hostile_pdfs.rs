//! Hostile PDFs on the real binary: decompression bombs that a budget on raw streams misses (a
//! filter chain, one stream referenced ten thousand times) and a PDF that is slow to interpret.
//! Each is skipped with its reason while the rest of the vault is indexed; the slow one is not
//! read again while its bytes are the same, and no extraction outlives the command.

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use quire_testkit::pdf::{double_flate_pdf, pdf_from_pages, repeated_contents_pdf, slow_pdf};
use quire_testkit::{json, quire, skipped_list, write_file};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_quire");

/// The reason given for each skipped path of a sync report.
fn reasons(stats: &Value) -> std::collections::BTreeMap<String, String> {
    skipped_list(stats, "notes_skipped").into_iter().collect()
}

/// Processes of this machine running as a PDF worker.
fn workers() -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
        .filter(|cmdline| {
            cmdline
                .split(|&b| b == 0)
                .any(|arg| arg == b"__quire-pdf-worker")
        })
        .count()
}

#[test]
fn bombs_and_slow_pdfs_are_skipped_by_reason_and_a_slow_one_is_not_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    write_file(
        &vault,
        "Notes/Kelp.md",
        b"# Kelp\n\nKelp forests fix carbon.\n",
    );
    write_file(
        &vault,
        "Papers/Fine.pdf",
        &pdf_from_pages(&["Urchin barrens follow the loss of otters."]),
    );
    // 1 GiB of spaces behind two Flate layers; 2.5 GiB through ten thousand references.
    write_file(&vault, "Papers/Double.pdf", &double_flate_pdf(1 << 30));
    write_file(
        &vault,
        "Papers/Repeated.pdf",
        &repeated_contents_pdf(10_000, 256 * 1024),
    );
    write_file(&vault, "Papers/Slow.pdf", &slow_pdf(2_000, 200_000));
    let index = |args: &[&str]| -> Value {
        let output = quire(BIN, &vault, &dir.path().join("index"))
            .env("QUIRE_PDF_TIMEOUT_SECS", "3")
            .arg("--json")
            .args(args)
            .output()
            .unwrap();
        json(&output)
    };

    // The first run under Python's getrusage: the peak resident memory of `quire index` and of
    // every process it waited for (its PDF workers).
    let measured = std::process::Command::new("python3")
        .args([
            "-c",
            "import resource, subprocess, sys\n\
             r = subprocess.run(sys.argv[1:], capture_output=True)\n\
             sys.stdout.buffer.write(r.stdout)\n\
             print('\\nPEAK_KB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
        ])
        .arg(BIN)
        .args(["--vault", vault.to_str().unwrap()])
        .args(["--json", "index"])
        .env("QUIRE_INDEX_DIR", dir.path().join("index"))
        .env("QUIRE_MODEL", "/nonexistent/quire-model.bin")
        .env("QUIRE_PDF_TIMEOUT_SECS", "3")
        .output()
        .unwrap();
    let text = String::from_utf8(measured.stdout).unwrap();
    let (report, peak) = text.rsplit_once("\nPEAK_KB ").unwrap();
    let peak_mb = peak.trim().parse::<f64>().unwrap() / 1024.0;
    eprintln!("peak resident memory of `quire index` and its workers: {peak_mb:.0} MB");
    assert!(peak_mb <= 600.0, "peak {peak_mb:.0} MB");
    let first: Value = serde_json::from_str(report).unwrap_or_else(|e| {
        panic!(
            "{e}: {report}\n{}",
            String::from_utf8_lossy(&measured.stderr)
        )
    });
    let skipped = reasons(&first);
    for bomb in ["Papers/Double.pdf", "Papers/Repeated.pdf"] {
        assert!(skipped.contains_key(bomb), "{bomb}: {skipped:?}");
    }
    assert!(
        skipped["Papers/Repeated.pdf"].contains("MiB of memory"),
        "{skipped:?}"
    );
    assert!(
        skipped["Papers/Slow.pdf"].contains("took longer than 3 s"),
        "{skipped:?}"
    );
    assert_eq!(first["notes_indexed"], 2, "{first}");
    assert_eq!(workers(), 0, "an extraction outlived `quire index`");

    // Nothing changed: every failed PDF is reported again, none is read again.
    let second = index(&["index"]);
    let again = reasons(&second);
    for pdf in [
        "Papers/Double.pdf",
        "Papers/Repeated.pdf",
        "Papers/Slow.pdf",
    ] {
        assert_eq!(again[pdf], skipped[pdf], "{pdf}");
    }
    assert_eq!(second["documents_not_retried"], 3, "{second}");
    assert_eq!(second["notes_unchanged"], 2, "{second}");

    // New bytes are read again.
    write_file(
        &vault,
        "Papers/Slow.pdf",
        &pdf_from_pages(&["Now a quick read about sea otters."]),
    );
    let third = index(&["index"]);
    assert!(!reasons(&third).contains_key("Papers/Slow.pdf"), "{third}");
    assert_eq!(third["documents_not_retried"], 2, "{third}");
    assert_eq!(third["notes_indexed"], 1, "{third}");
}
