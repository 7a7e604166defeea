//! How fast the in-process model reads a prompt and writes an answer, at 1 and at 2 threads.
//!
//! ```text
//! ./scripts/fetch-llm.sh smollm2
//! cargo bench -p quire-llm --features local-llm --bench local
//! ```
//!
//! The time is spent inside llama.cpp, which is compiled optimised (CMake `Release`) whatever the
//! cargo profile, so `--profile dev` gives the same figures and reuses the test build of
//! llama.cpp instead of compiling it a second time. `QUIRE_LLM_MODEL_PATH` benchmarks another
//! GGUF model; `QUIRE_LLM_BENCH_RUNS` sets the number of measured runs (5 by default).
//!
//! Each configuration runs once to warm up (page cache, CPU frequency), then the measured runs;
//! the medians are printed, with the ratio of 2 threads to 1 thread measured in the same
//! process, so the ratio means something even on a busy machine.

#![allow(clippy::unwrap_used)] // tests and benches stop at the first surprise

#[path = "../tests/corpus_note/mod.rs"]
mod corpus_note;

use quire_llm::{
    CancelToken, ChatRequest, LocalLlama, LocalOptions, LocalTimings, Message,
    default_local_model_path,
};

/// New tokens per run: enough for a stable rate, few enough for a quick bench.
const GENERATED: u32 = 96;

fn main() {
    let path = default_local_model_path();
    if !path.is_file() {
        eprintln!(
            "local bench: no model at {} (run `./scripts/fetch-llm.sh smollm2`, or set \
             QUIRE_LLM_MODEL_PATH)",
            path.display()
        );
        std::process::exit(1);
    }
    let runs: usize = std::env::var("QUIRE_LLM_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(5);
    let request = rag_request();

    println!(
        "model {} · {runs} runs per setting, medians",
        path.display()
    );
    println!(
        "{:>7}  {:>13}  {:>17}  {:>15}",
        "threads", "prompt tokens", "prompt tokens/s", "generation tok/s"
    );
    let mut medians = Vec::new();
    for threads in [1, 2] {
        let options = LocalOptions {
            threads,
            ..LocalOptions::default()
        };
        let model = match LocalLlama::load(&path, options) {
            Ok(model) => model,
            Err(error) => {
                eprintln!("local bench: {error}");
                std::process::exit(1);
            }
        };
        let timings: Vec<LocalTimings> = (0..=runs).map(|_| run(&model, &request)).collect();
        // The first run warms up and is not counted.
        let measured = &timings[1..];
        let prompt = median(measured.iter().map(LocalTimings::prompt_tokens_per_second));
        let generation = median(
            measured
                .iter()
                .map(LocalTimings::generation_tokens_per_second),
        );
        println!(
            "{threads:>7}  {:>13}  {prompt:>17.1}  {generation:>15.1}",
            measured[0].prompt_tokens
        );
        medians.push((prompt, generation));
    }
    if let [(p1, g1), (p2, g2)] = medians[..] {
        println!(
            "2 threads / 1 thread: prompt ×{:.2}, generation ×{:.2}",
            p2 / p1,
            g2 / g1
        );
    }
}

/// One generation; exits the bench on failure.
fn run(model: &LocalLlama, request: &ChatRequest) -> LocalTimings {
    match model.stream_with_timings(request, &CancelToken::new(), &mut |_| {}) {
        Ok((_, timings)) => timings,
        Err(error) => {
            eprintln!("local bench: {error}");
            std::process::exit(1);
        }
    }
}

/// What `quire ask` sends: a system rule, a real note as source `[S1]` and a question. The
/// question asks for a long answer so that most runs generate all of their tokens.
fn rag_request() -> ChatRequest {
    let text = corpus_note::evergreen_note_text();
    ChatRequest {
        max_tokens: Some(GENERATED),
        ..ChatRequest::new(vec![
            Message::system("Answer using only the sources. Cite them as [S1]."),
            Message::user(format!(
                "Sources:\n[S1] {}\n{text}\n\nQuestion: Explain in detail, with examples, how \
                 evergreen notes help someone think.",
                corpus_note::EVERGREEN_NOTE
            )),
        ])
    }
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}
