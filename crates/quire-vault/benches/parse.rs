//! Parse-and-chunk throughput, printed as medians and as a ratio to a baseline measured in the same
//! process: comrak parsing the same text with no Obsidian work on top (what a plain CommonMark pass
//! costs on this machine right now).
//!
//! Run: `cargo bench -p quire-vault --bench parse` (single-threaded; targets: ≥ 20 MB/s for
//! parse + chunk, the four real vaults opened in < 1 s together).

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::path::PathBuf;
use std::time::{Duration, Instant};

use quire_vault::chunk::{ApproxTokenCounter, ChunkOptions, chunk_note};
use quire_vault::{OpenOptions, ParseOptions, Vault, parse_note};

mod common;
use common::{NOTES, generated_note, write_vault};

const RUNS: usize = 5;

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn time<F: FnMut()>(mut f: F) -> Duration {
    median(
        (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .collect(),
    )
}

fn mbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64()
}

fn corpora() -> Option<PathBuf> {
    let dir = std::env::var_os("QUIRE_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpora")
        });
    dir.join("vaults").is_dir().then_some(dir)
}

fn main() {
    let notes: Vec<(String, String)> = (0..NOTES).map(generated_note).collect();
    let bytes: usize = notes.iter().map(|(_, t)| t.len()).sum();
    println!(
        "generated vault: {NOTES} notes, {:.1} MB; median of {RUNS} runs, one thread",
        bytes as f64 / 1e6
    );

    let options = quire_vault::parse::markdown_options();
    let baseline = time(|| {
        for (_, text) in &notes {
            let arena = comrak::Arena::new();
            std::hint::black_box(comrak::parse_document(&arena, text, &options));
        }
    });
    let parse_options = ParseOptions::default();
    let parse = time(|| {
        for (path, text) in &notes {
            std::hint::black_box(parse_note(path, text, &parse_options));
        }
    });
    let chunk_options = ChunkOptions::default();
    let mut chunks = 0;
    let parse_chunk = time(|| {
        chunks = 0;
        for (path, text) in &notes {
            let note = parse_note(path, text, &parse_options);
            chunks += chunk_note(&note, &chunk_options, &ApproxTokenCounter).len();
        }
    });
    let report = |name: &str, d: Duration| {
        println!(
            "{name:<28} {:>8.1} ms  {:>9.0} notes/s  {:>6.1} MB/s  {:>5.2}x baseline time",
            d.as_secs_f64() * 1e3,
            NOTES as f64 / d.as_secs_f64(),
            mbps(bytes, d),
            d.as_secs_f64() / baseline.as_secs_f64()
        );
    };
    report("baseline: comrak parse", baseline);
    report("parse_note", parse);
    report("parse_note + chunk_note", parse_chunk);
    println!("chunks: {chunks}");

    let dir = tempfile::tempdir().unwrap();
    write_vault(dir.path(), &notes);
    let open = time(|| {
        std::hint::black_box(Vault::open(dir.path(), &OpenOptions::default()).unwrap());
    });
    report("Vault::open (scan+read+link)", open);

    if let Some(corpora) = corpora() {
        let mut total = Duration::ZERO;
        for name in [
            "kepano-obsidian",
            "obsidian-tasks-docs",
            "obsidian-tasks-demo",
            "obsidian-starter-vault",
        ] {
            let root = corpora.join("vaults").join(name).join("vault");
            let mut n = 0;
            let d = time(|| {
                let vault = Vault::open(&root, &OpenOptions::default()).unwrap();
                n = 0;
                for i in 0..vault.notes.len() {
                    n += vault.chunks(i).len();
                }
            });
            total += d;
            println!(
                "real vault {name:<24} {:>7.1} ms (open + chunk, {n} chunks)",
                d.as_secs_f64() * 1e3
            );
        }
        println!(
            "four real vaults together     {:>7.1} ms (target < 1000 ms)",
            total.as_secs_f64() * 1e3
        );
    } else {
        println!("(shared corpora not found: real-vault timings skipped)");
    }
}
