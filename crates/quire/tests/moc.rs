//! Topic clusters (`quire audit --clusters`) and maps of content (`quire moc`, `POST /api/moc`)
//! on a copy of the sample vault indexed with the local embedding model: the clusters partition
//! the notes, are the same on every run, are labelled by words of their own notes and group
//! notes of a folder together far more often than chance; the maps are proposals whose links
//! resolve to exactly their cluster's notes, the vault is unchanged until one is applied, and a
//! mapped cluster is not mapped twice. Without embeddings both say what to do.

#![allow(clippy::unwrap_used)] // tests stop at the first surprise

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use quire_testkit::{Server, copy_tree, file_hashes, json, ok, sample_vault};
use serde_json::Value;

struct Fixture {
    _dir: tempfile::TempDir,
    vault: PathBuf,
    index: PathBuf,
    model: Option<PathBuf>,
}

impl Fixture {
    fn new(model: Option<PathBuf>) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let vault = dir.path().join("vault");
        copy_tree(&sample_vault(), &vault);
        let index = dir.path().join("index");
        Fixture {
            _dir: dir,
            vault,
            index,
            model,
        }
    }

    fn quire(&self) -> Command {
        let mut c = quire_testkit::quire(env!("CARGO_BIN_EXE_quire"), &self.vault, &self.index);
        if let Some(model) = &self.model {
            c.env("QUIRE_MODEL", model);
        }
        c
    }

    fn run(&self, args: &[&str]) -> std::process::Output {
        self.quire().args(args).output().unwrap()
    }
}

/// The local model, or `None` (the test says it is skipped) when it has not been fetched.
fn local_model() -> Option<PathBuf> {
    let model = std::env::var_os("QUIRE_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(quire_embed::default_e5_path);
    if model.exists() {
        Some(model)
    } else {
        eprintln!(
            "skipped: no embedding model at {} (scripts/fetch-model.sh)",
            model.display()
        );
        None
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn top_folder(path: &str) -> &str {
    path.split_once('/').map_or("", |(folder, _)| folder)
}

/// Of the pairs of notes in the same top folder, the share that `clusters` puts together.
fn same_folder_share(assignment: &[(String, usize)]) -> f64 {
    let (mut pairs, mut together) = (0usize, 0usize);
    for (i, (a, ca)) in assignment.iter().enumerate() {
        for (b, cb) in &assignment[i + 1..] {
            if top_folder(a) == top_folder(b) {
                pairs += 1;
                together += usize::from(ca == cb);
            }
        }
    }
    together as f64 / pairs as f64
}

#[test]
fn clusters_and_maps_of_content_with_the_local_model() {
    let Some(model) = local_model() else {
        return;
    };
    let f = Fixture::new(Some(model));
    ok(&f.run(&["index"]));
    let before = file_hashes(&f.vault);

    // Deterministic: two runs give the same bytes.
    let first = ok(&f.run(&["--json", "audit", "--clusters"]));
    let second = ok(&f.run(&["--json", "audit", "--clusters"]));
    assert_eq!(first, second, "two runs clustered differently");
    let report: Value = serde_json::from_str(&first).unwrap();
    let topics = &report["topics"];
    let clusters = topics["clusters"].as_array().unwrap();
    assert!(clusters.len() >= 2, "{topics}");
    assert_eq!(
        topics["k"].as_u64().unwrap() as usize,
        clusters.len(),
        "a cluster came out empty"
    );

    // The structural report is the same with and without the flag, and has no topics without.
    let plain = json(&f.run(&["--json", "audit"]));
    assert!(plain.get("topics").is_none());
    let mut without = report.clone();
    without.as_object_mut().unwrap().remove("topics");
    assert_eq!(plain, without);

    // A partition: every note is in exactly one cluster, or left out as a map of content.
    let manifest = json(&f.run(&["--json", "manifest"]));
    let all: BTreeSet<String> = manifest["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(topics["without_vectors"], Value::Array(Vec::new()));
    let maps: BTreeSet<String> = strings(&topics["maps_left_out"]).into_iter().collect();
    assert!(maps.contains("Areas/Running MOC.md"), "{maps:?}");
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut assignment = Vec::new();
    for (i, cluster) in clusters.iter().enumerate() {
        assert_eq!(cluster["id"].as_u64().unwrap() as usize, i + 1);
        for note in strings(&cluster["notes"]) {
            *seen.entry(note.clone()).or_default() += 1;
            assignment.push((note, i));
        }
    }
    assert!(seen.values().all(|&n| n == 1), "a note in two clusters");
    let clustered: BTreeSet<String> = seen.keys().cloned().collect();
    assert!(clustered.is_disjoint(&maps));
    assert_eq!(
        clustered.union(&maps).cloned().collect::<BTreeSet<_>>(),
        all
    );
    assert_eq!(
        topics["notes_clustered"].as_u64().unwrap() as usize,
        clustered.len()
    );
    // Largest first.
    let sizes: Vec<usize> = clusters
        .iter()
        .map(|c| c["notes"].as_array().unwrap().len())
        .collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");

    // Labels: three terms, each a word of the cluster's own notes.
    for cluster in clusters {
        let label = cluster["label"].as_str().unwrap();
        let terms: Vec<&str> = label.split(", ").collect();
        assert_eq!(terms.len(), 3, "{label}");
        assert_eq!(strings(&cluster["terms"])[..3], terms[..]);
        let text: String = strings(&cluster["notes"])
            .iter()
            .map(|p| {
                std::fs::read_to_string(f.vault.join(p))
                    .unwrap()
                    .to_lowercase()
            })
            .collect();
        for term in terms {
            assert!(
                !term.is_empty() && text.contains(term),
                "{term} is not in the notes of {label}"
            );
        }
        let cohesion = cluster["cohesion"].as_f64().unwrap();
        assert!(cohesion > 0.0 && cohesion <= 1.0001, "{cohesion}");
    }

    // Better than chance: notes of one top folder share a cluster more often than when the same
    // cluster sizes are dealt at random — in at least 99% of 2,000 random deals.
    let observed = same_folder_share(&assignment);
    let mut labels: Vec<usize> = assignment.iter().map(|(_, c)| *c).collect();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    let mut shuffled = assignment.clone();
    let deals = 2_000;
    let mut at_least = 0;
    let mut mean = 0.0;
    for _ in 0..deals {
        for i in (1..labels.len()).rev() {
            labels.swap(i, next(i + 1));
        }
        for (slot, &label) in shuffled.iter_mut().zip(&labels) {
            slot.1 = label;
        }
        let share = same_folder_share(&shuffled);
        mean += share / deals as f64;
        at_least += usize::from(share >= observed);
    }
    eprintln!(
        "same-folder pairs in one cluster: {observed:.3}, random deals: {mean:.3} ({at_least} of {deals} as high)"
    );
    assert!(
        at_least * 100 <= deals,
        "not better than chance: {observed:.3} vs {mean:.3}"
    );
    assert!(observed > 1.3 * mean, "{observed:.3} vs {mean:.3}");

    // The Markdown report has the section.
    let markdown = ok(&f.run(&["audit", "--clusters"]));
    assert!(markdown.contains(&format!("## Topics ({})", clusters.len())));
    assert!(markdown.contains(clusters[0]["label"].as_str().unwrap()));

    // Maps of content: proposals only, the vault untouched.
    let outcome = json(&f.run(&["--json", "moc", "--all"]));
    assert_eq!(file_hashes(&f.vault), before, "moc wrote into the vault");
    let made = outcome["proposals"].as_array().unwrap();
    let skipped = outcome["skipped"].as_array().unwrap();
    assert_eq!(made.len() + skipped.len(), clusters.len());
    assert!(!made.is_empty(), "{outcome}");
    let vault = quire_vault::Vault::open(&f.vault, &quire_vault::OpenOptions::default()).unwrap();
    let cluster_notes = |id: u64| -> BTreeSet<String> {
        strings(&clusters[id as usize - 1]["notes"])
            .into_iter()
            .collect()
    };
    let link = regex_free_wikilinks;
    for proposal in made {
        let id = proposal["proposal"].as_str().unwrap();
        let shown = json(&f.run(&["--json", "proposals", "show", id]));
        assert_eq!(shown["status"], "pending");
        let change = &shown["changes"][0];
        let path = change["path"].as_str().unwrap();
        assert_eq!(path, proposal["path"].as_str().unwrap());
        assert!(path.ends_with(" MOC.md") && !f.vault.join(path).exists());
        let content = change["content"].as_str().unwrap();
        assert!(
            content.starts_with("---\ntags: [moc]\ncreated: "),
            "{content}"
        );
        assert!(content.contains(&format!("\n# {}\n", proposal["title"].as_str().unwrap())));
        // Every link resolves, as Obsidian resolves it from the map's folder, to a note of the
        // cluster, and every note of the cluster is linked once.
        let targets: Vec<String> = link(content)
            .iter()
            .map(|t| match vault.resolver.resolve(path, t) {
                Some(quire_vault::links::Resolution::Note(i)) => vault.notes[i].path.clone(),
                other => panic!("[[{t}]] in {path} resolves to {other:?}"),
            })
            .collect();
        let expected = cluster_notes(proposal["cluster"].as_u64().unwrap());
        assert_eq!(
            targets.len(),
            expected.len(),
            "a note linked twice in {path}"
        );
        assert_eq!(targets.into_iter().collect::<BTreeSet<_>>(), expected);
        let subs = strings(&proposal["sub_topics"]);
        if expected.len() >= 8 {
            assert!((2..=4).contains(&subs.len()), "{subs:?}");
        } else {
            assert!(subs.is_empty());
        }
        for heading in &subs {
            assert!(content.contains(&format!("\n## {heading}\n")));
        }
    }
    for skip in skipped {
        let n = skip["notes"].as_u64().unwrap() as usize;
        match skip["reason"].as_str().unwrap() {
            "too_small" => assert!(n < 3),
            "pending" => panic!("nothing was pending: {skip}"),
            "already_mapped" => {
                let by = vault.index_of(skip["mapped_by"].as_str().unwrap()).unwrap();
                let expected = cluster_notes(skip["cluster"].as_u64().unwrap());
                let linked = vault.graph.outgoing[by]
                    .iter()
                    .filter(|&&j| expected.contains(&vault.notes[j].path))
                    .count();
                assert_eq!(linked as u64, skip["linked"].as_u64().unwrap());
                assert!(linked * 5 >= n * 4, "{skip}");
            }
            other => panic!("unknown reason {other}"),
        }
    }

    // Asked again before anything is applied: the pending proposals are named, none is added.
    let pending = json(&f.run(&["--json", "proposals"]))
        .as_array()
        .unwrap()
        .len();
    let repeat = json(&f.run(&["--json", "moc", "--all"]));
    assert_eq!(repeat["proposals"], Value::Array(Vec::new()), "{repeat}");
    let named: BTreeSet<&str> = repeat["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["proposal"].as_str())
        .collect();
    let made_ids: BTreeSet<&str> = made
        .iter()
        .map(|p| p["proposal"].as_str().unwrap())
        .collect();
    assert_eq!(named, made_ids);
    assert_eq!(
        json(&f.run(&["--json", "proposals"]))
            .as_array()
            .unwrap()
            .len(),
        pending
    );

    // Apply one: it is written as proposed; asked again, its cluster is already mapped by it.
    let chosen = &made[0];
    let id = chosen["proposal"].as_str().unwrap();
    let path = chosen["path"].as_str().unwrap();
    let content = json(&f.run(&["--json", "proposals", "show", id]))["changes"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    ok(&f.run(&["proposals", "apply", id]));
    assert_eq!(
        std::fs::read_to_string(f.vault.join(path)).unwrap(),
        content
    );
    let mut after = file_hashes(&f.vault);
    assert!(after.remove(path).is_some());
    assert_eq!(after, before, "applying wrote more than the map");
    let cluster = chosen["cluster"].as_u64().unwrap().to_string();
    let pending = json(&f.run(&["--json", "proposals"]))
        .as_array()
        .unwrap()
        .len();
    let again = ok(&f.run(&["moc", &cluster]));
    let stem = path.trim_end_matches(".md");
    assert!(
        again.contains(&format!("already mapped by [[{stem}]]")),
        "{again}"
    );
    let again = json(&f.run(&["--json", "moc", &cluster]));
    assert_eq!(again["proposals"], Value::Array(Vec::new()));
    assert_eq!(again["skipped"][0]["mapped_by"], path);
    assert_eq!(
        json(&f.run(&["--json", "proposals"]))
            .as_array()
            .unwrap()
            .len(),
        pending,
        "a second proposal was made"
    );

    // Indexed again, the map is a map of content: left out, and the clusters are the same.
    ok(&f.run(&["index"]));
    let reindexed = json(&f.run(&["--json", "audit", "--clusters"]));
    assert_eq!(reindexed["topics"]["clusters"], topics["clusters"]);
    assert!(
        strings(&reindexed["topics"]["maps_left_out"]).contains(&path.to_string()),
        "{}",
        reindexed["topics"]
    );

    // Over HTTP: a JSON body, the same answer for the mapped cluster.
    let before_http = file_hashes(&f.vault);
    let mut command = f.quire();
    command.args(["serve", "--port", "0", "--no-watch"]);
    let server = Server::start(&mut command, Duration::from_secs(60));
    let agent = ureq::Agent::new_with_config(
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build(),
    );
    let post = |body: &str, content_type: &str| {
        let mut response = agent
            .post(&format!("{}/api/moc", server.url))
            .header("Content-Type", content_type)
            .send(body)
            .unwrap();
        let status = response.status().as_u16();
        (status, response.body_mut().read_to_string().unwrap())
    };
    let (status, body) = post(&format!("{{\"cluster\": {cluster}}}"), "application/json");
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["proposals"], Value::Array(Vec::new()));
    assert_eq!(answer["skipped"][0]["mapped_by"], path);
    let (status, body) = post("{\"cluster\": 1, \"all\": true}", "application/json");
    assert_eq!(status, 400, "{body}");
    let (status, body) = post("{\"all\": true}", "text/plain");
    assert_eq!(status, 415, "{body}");
    let (status, body) = post("{\"cluster\": 999}", "application/json");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("no cluster 999"), "{body}");
    assert_eq!(file_hashes(&f.vault), before_http);
}

/// The targets of the `[[wikilinks]]` of `text` (before any `|` or `#`).
fn regex_free_wikilinks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("[[") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("]]") else { break };
        let inner = &after[..end];
        let target = inner.split(['|', '#']).next().unwrap_or(inner);
        out.push(target.to_string());
        rest = &after[end + 2..];
    }
    out
}

#[test]
fn without_embeddings_clusters_and_maps_say_to_index_with_the_model() {
    let f = Fixture::new(None);
    ok(&f.run(&["index"]));
    let before = file_hashes(&f.vault);
    for args in [
        &["audit", "--clusters"][..],
        &["moc", "--all"][..],
        &["moc", "1"][..],
    ] {
        let out = f.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("needs embeddings") && stderr.contains("quire index"),
            "{args:?}: {stderr}"
        );
    }
    // Usage: a cluster or --all, not both, not neither.
    assert_eq!(f.run(&["moc"]).status.code(), Some(1));
    assert_eq!(f.run(&["moc", "2", "--all"]).status.code(), Some(2));
    // The structural audit still works without the flag.
    assert!(ok(&f.run(&["audit"])).contains("# Vault audit"));
    assert_eq!(file_hashes(&f.vault), before);
}
