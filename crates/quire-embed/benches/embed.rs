//! Embedding throughput of a local model: passages/s at batch 1, 16 and 32 (median of runs), on
//! passages of about 200 tokens. The model is `QUIRE_BENCH_MODEL` (an E5S1 file or a Hugging
//! Face folder), else the default e5 file. For an E5S1 file the baseline is the same model with
//! f32 weights and activations ([`Precision::F32`]) in the same run, and the lowest cosine
//! between the two paths' vectors is printed. For a folder, when `QUIRE_BASELINE_PYTHON` names a
//! Python with `sentence-transformers` (and torch), the same texts are embedded by PyTorch in the
//! same run (`scripts/bench/st_baseline.py`) and the ratio is printed. On a CPU with AMX the
//! default path (dense layers on tiles) is also compared with the VNNI path in the same run:
//!
//! ```sh
//! ./scripts/fetch-model.sh minilm
//! QUIRE_BENCH_MODEL=~/.local/share/quire/models/all-MiniLM-L6-v2 \
//!   QUIRE_BASELINE_PYTHON=/path/to/venv/bin/python cargo bench -p quire-embed --bench embed
//! ```

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use quire_embed::{E5Model, Embedder, Precision, default_model_path, dot, load_local};

fn passage(i: usize) -> String {
    let words = [
        "sourdough",
        "starter",
        "flour",
        "water",
        "temperature",
        "running",
        "tempo",
        "interval",
        "recovery",
        "notes",
        "vault",
        "search",
        "embedding",
        "tea",
        "oolong",
        "kyoto",
        "temple",
        "garden",
        "review",
    ];
    (0..150)
        .map(|j| words[(i * 7 + j * 3) % words.len()])
        .collect::<Vec<_>>()
        .join(" ")
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

const BATCHES: [usize; 3] = [1, 16, 32];
const RUNS: usize = 3;

/// passages/s per batch size from sentence-transformers, or why there is no baseline.
fn python_baseline(model: &Path, texts: &[String]) -> Result<Vec<f64>, String> {
    let python = std::env::var_os("QUIRE_BASELINE_PYTHON")
        .ok_or("set QUIRE_BASELINE_PYTHON to a Python with sentence-transformers")?;
    if !model.is_dir() {
        return Err("sentence-transformers needs a model folder".into());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/bench/st_baseline.py");
    let mut child = Command::new(python)
        .arg(script)
        .env("HF_HUB_OFFLINE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let job =
        serde_json::json!({"model_dir": model, "texts": texts, "batches": BATCHES, "runs": RUNS});
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(job.to_string().as_bytes())
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("the baseline script failed ({})", out.status));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    println!(
        "baseline: sentence-transformers, torch threads {}",
        v["torch_threads"]
    );
    BATCHES
        .iter()
        .map(|b| {
            v["passages_per_second"][b.to_string()]
                .as_f64()
                .ok_or_else(|| format!("no figure for batch {b}"))
        })
        .collect()
}

fn main() {
    let path = std::env::var_os("QUIRE_BENCH_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(default_model_path);
    let load = Instant::now();
    let model =
        load_local(&path).expect("run scripts/fetch-model.sh first (or set QUIRE_BENCH_MODEL)");
    println!(
        "model load: {:.2}s ({}, {})",
        load.elapsed().as_secs_f64(),
        path.display(),
        model.space().model
    );
    let texts: Vec<String> = (0..64).map(passage).collect();
    println!(
        "64 passages of {} words (about 200 tokens); embedding threads {}",
        texts[0].split_whitespace().count(),
        quire_embed::embed_threads()
    );
    let ours = throughput(model.as_ref(), &texts);
    if quire_embed::amx_active() {
        // The same model with its dense layers on the AVX-512 VNNI kernel instead of AMX tiles.
        quire_embed::set_amx(false);
        let vnni = throughput(model.as_ref(), &texts);
        quire_embed::set_amx(true);
        for (i, batch) in BATCHES.iter().enumerate() {
            println!(
                "batch {batch:>2}: AMX tiles {:>7.1} passages/s   VNNI path {:>7.1} passages/s   ratio {:.2}x",
                ours[i],
                vnni[i],
                ours[i] / vnni[i]
            );
        }
    }
    let baseline = if std::env::var_os("QUIRE_BENCH_NO_BASELINE").is_some() {
        Err("QUIRE_BENCH_NO_BASELINE is set".to_string())
    } else if path.is_dir() {
        python_baseline(&path, &texts)
    } else {
        f32_baseline(&path, model.as_ref(), &texts)
    };
    if let Err(why) = &baseline {
        println!("no baseline: {why}");
    }
    for (i, batch) in BATCHES.iter().enumerate() {
        match &baseline {
            Ok(base) => println!(
                "batch {batch:>2}: quire {:>7.1} passages/s   baseline {:>7.1} passages/s   ratio {:.2}x",
                ours[i],
                base[i],
                ours[i] / base[i]
            ),
            Err(_) => println!("batch {batch:>2}: quire {:>7.1} passages/s", ours[i]),
        }
    }
}

/// The f32 path of the same E5S1 file: its passages/s, after printing how far its vectors are
/// from the default path's.
fn f32_baseline(path: &Path, model: &dyn Embedder, texts: &[String]) -> Result<Vec<f64>, String> {
    let f32_model = E5Model::load_with(path, Precision::F32).map_err(|e| e.to_string())?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let a = model.embed_passages(&refs).map_err(|e| e.to_string())?;
    let b = f32_model.embed_passages(&refs).map_err(|e| e.to_string())?;
    let lowest = a
        .iter()
        .zip(&b)
        .map(|(x, y)| dot(x, y))
        .fold(f32::INFINITY, f32::min);
    println!("baseline: the f32 encoder (Precision::F32); lowest cosine to it {lowest:.5}");
    Ok(throughput(&f32_model, texts))
}

/// passages/s at each batch size, median of [`RUNS`].
fn throughput(model: &dyn Embedder, texts: &[String]) -> Vec<f64> {
    let mut ours = Vec::new();
    for batch in BATCHES {
        let n = if batch == 1 { 8 } else { 64 };
        let runs: Vec<Duration> = (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                for group in texts[..n].chunks(batch) {
                    let refs: Vec<&str> = group.iter().map(String::as_str).collect();
                    std::hint::black_box(model.embed_passages(&refs).unwrap());
                }
                start.elapsed()
            })
            .collect();
        ours.push(n as f64 / median(runs).as_secs_f64());
    }
    ours
}
