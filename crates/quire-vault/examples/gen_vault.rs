//! Writes the generated benchmark vault: `cargo run --release -p quire-vault --example gen_vault -- DIR [N]`
//! (N notes, default 10,000; the same notes the parse bench uses).

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

#[path = "../benches/common/mod.rs"]
mod common;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: gen_vault DIR [N]");
        std::process::exit(2);
    };
    let n: usize = match args.next().map(|a| a.parse()) {
        None => common::NOTES,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("gen_vault: N: {e}");
            std::process::exit(2);
        }
    };
    let notes: Vec<(String, String)> = (0..n).map(common::generated_note).collect();
    common::write_vault(std::path::Path::new(&dir), &notes);
    println!("{n} notes in {dir}");
}
