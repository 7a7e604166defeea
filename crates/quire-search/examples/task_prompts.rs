//! Do EmbeddingGemma's task prompts help where quire compares notes? The model card gives a
//! prompt per task; quire embeds every chunk once, as a document (`title: {title} | text: `),
//! and compares notes with those vectors (similar notes, near copies, topic clusters). This
//! measures, on the four shared vaults, what the card's similarity and clustering prompts
//! (`task: sentence similarity | query: `, `task: clustering | query: `) would change:
//!
//! - related notes: for each note that links to (or is linked from) other notes, maps of content
//!   left out, the share of its 5 most similar notes (cosine of the notes' mean chunk vectors,
//!   as `quire similar` ranks) that it is linked with;
//! - near copies: 20 notes per vault copied with one sentence dropped and a few words changed;
//!   how often a copy's most similar note is its original, and the gap between the copies'
//!   cosine with their original and the closest other pair's (what the duplicates threshold has
//!   to fall in).
//!
//! ```text
//! cargo run -p quire-search --example task_prompts
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)] // a measuring program stops at the first surprise

use std::collections::HashSet;

use quire_embed::{GemmaModel, default_gemma_path, dot};
use quire_vault::{OpenOptions, Vault};

const PROMPTS: [(&str, &str); 3] = [
    ("document (quire's)", "title: {title} | text: "),
    ("sentence similarity", "task: sentence similarity | query: "),
    ("clustering", "task: clustering | query: "),
];

fn normalise(mut v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= n);
    v
}

/// One vector per note: the mean of its chunks' vectors under `prompt`, normalised.
fn note_vectors(
    model: &GemmaModel,
    notes: &[(String, Vec<String>)],
    prompt: &str,
) -> Vec<Vec<f32>> {
    notes
        .iter()
        .map(|(title, chunks)| {
            let inputs: Vec<String> = chunks
                .iter()
                .map(|c| format!("{}{c}", prompt.replace("{title}", title)))
                .collect();
            let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
            let vectors = model.embed_inputs(&refs).expect("embedding");
            let mut sum = vec![0.0f32; vectors[0].len()];
            for v in &vectors {
                sum.iter_mut().zip(v).for_each(|(s, x)| *s += x);
            }
            normalise(sum)
        })
        .collect()
}

/// A copy of `text` edited lightly: its longest sentence dropped and every seventh word changed.
fn edited(text: &str) -> String {
    let sentences: Vec<&str> = text.split_inclusive(['.', '\n']).collect();
    let longest = (0..sentences.len())
        .max_by_key(|&i| sentences[i].len())
        .unwrap_or(0);
    let kept: String = sentences
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != longest || sentences.len() < 3)
        .map(|(_, s)| *s)
        .collect();
    kept.split(' ')
        .enumerate()
        .map(|(i, w)| if i % 7 == 6 { "really" } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

fn main() {
    let model = GemmaModel::load(&default_gemma_path())
        .expect("EmbeddingGemma (scripts/fetch-model.sh gemma)");
    let corpora = quire_testkit::corpora().join("vaults");
    println!(
        "prompt | related notes P@5 | copy found first | copy cosine (mean, min) | closest other pair | gap"
    );
    for name in [
        "kepano-obsidian",
        "obsidian-starter-vault",
        "obsidian-tasks-demo",
        "obsidian-tasks-docs",
    ] {
        let vault =
            Vault::open(&corpora.join(name).join("vault"), &OpenOptions::default()).unwrap();
        let mut notes: Vec<(String, Vec<String>)> = Vec::new();
        for (i, note) in vault.notes.iter().enumerate() {
            let chunks: Vec<String> = vault.chunks(i).into_iter().map(|c| c.text).collect();
            notes.push((
                note.title.clone(),
                if chunks.is_empty() {
                    vec![note.title.clone()]
                } else {
                    chunks
                },
            ));
        }
        let real = notes.len();
        // The copies: the 20 notes with the most text (a copy of a stub says little).
        let mut by_size: Vec<usize> = (0..real).collect();
        by_size
            .sort_by_key(|&i| std::cmp::Reverse(notes[i].1.iter().map(String::len).sum::<usize>()));
        let originals: Vec<usize> = by_size.into_iter().take(20).collect();
        for &i in &originals {
            let (title, chunks) = notes[i].clone();
            notes.push((title, chunks.iter().map(|c| edited(c)).collect()));
        }
        for (label, prompt) in PROMPTS {
            let vectors = note_vectors(&model, &notes, prompt);
            // Related notes, by links.
            let (mut hits, mut asked) = (0usize, 0usize);
            for i in 0..real {
                if vault.graph.is_moc[i] {
                    continue;
                }
                let linked: HashSet<usize> = vault.graph.outgoing[i]
                    .iter()
                    .chain(&vault.graph.backlinks[i])
                    .copied()
                    .filter(|&j| !vault.graph.is_moc[j])
                    .collect();
                if linked.is_empty() {
                    continue;
                }
                let mut ranked: Vec<(usize, f32)> = (0..real)
                    .filter(|&j| j != i)
                    .map(|j| (j, dot(&vectors[i], &vectors[j])))
                    .collect();
                ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
                let top: Vec<usize> = ranked.iter().take(5).map(|(j, _)| *j).collect();
                hits += top.iter().filter(|j| linked.contains(j)).count();
                asked += 5.min(linked.len());
            }
            // Near copies.
            let mut first = 0;
            let mut copy_cos = Vec::new();
            for (k, &i) in originals.iter().enumerate() {
                let copy = real + k;
                let best = (0..real)
                    .map(|j| (j, dot(&vectors[copy], &vectors[j])))
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .unwrap();
                first += usize::from(best.0 == i);
                copy_cos.push(dot(&vectors[copy], &vectors[i]));
            }
            let mut other = f32::MIN;
            for i in 0..real {
                for j in (i + 1)..real {
                    other = other.max(dot(&vectors[i], &vectors[j]));
                }
            }
            let mean = copy_cos.iter().sum::<f32>() / copy_cos.len() as f32;
            let min = copy_cos.iter().copied().fold(f32::MAX, f32::min);
            let line = format!(
                "{name} | {label} | {:.3} ({hits}/{asked}) | {first}/20 | {mean:.3}, {min:.3} | {other:.3} | {:.3}",
                hits as f32 / asked.max(1) as f32,
                min - other
            );
            println!("{line}");
        }
    }
}
