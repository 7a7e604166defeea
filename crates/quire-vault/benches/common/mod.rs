//! The generated vault shared by the parse bench and the `gen_vault` example (which the index
//! benchmark script uses): deterministic notes of a few KB with the features real notes have.

use std::path::Path;

/// Notes in the generated vault (links point among this many notes).
pub const NOTES: usize = 10_000;

/// A deterministic note of a few KB with the features real notes have.
pub fn generated_note(i: usize) -> (String, String) {
    let topics = [
        "garden",
        "rust",
        "running",
        "sourdough",
        "tea",
        "kyoto",
        "reading",
        "sleep",
    ];
    let t = topics[i % topics.len()];
    let path = format!(
        "{}/{} note {i}.md",
        ["Areas", "Projects", "Resources", "Journal"][i % 4],
        t
    );
    let mut s = format!(
        "---\ntype: note\ntags: [{t}, generated]\ncreated: 2026-01-{:02}\n---\n# {t} {i}\n\n",
        i % 28 + 1
    );
    for sec in 0..(3 + i % 4) {
        s.push_str(&format!("## Section {sec} about {t}\n\n"));
        s.push_str(&format!(
            "Paragraph {sec} links [[{} note {}]] and [[{t} note {}|an alias]] with #{t}/sub tag. \
             It carries ordinary prose about {t}, written the way people write notes: short \
             sentences, a few facts, and a question at the end? Yes.\n\n",
            topics[(i + sec) % topics.len()],
            (i + 7 * sec) % NOTES,
            (i + 13) % NOTES
        ));
        s.push_str(
            "- first point\n  - a detail under it\n- [ ] an open task\n- [x] a done task ^blk\n\n",
        );
        if sec % 2 == 0 {
            s.push_str("```rust\n# not a heading\nfn main() { println!(\"hi\"); }\n```\n\n");
        }
        if sec == 1 {
            s.push_str("> [!note] A callout\n> with a body line %%and a comment%%\n\n");
        }
    }
    (path, s)
}

pub fn write_vault(dir: &Path, notes: &[(String, String)]) {
    for (path, text) in notes {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
}
