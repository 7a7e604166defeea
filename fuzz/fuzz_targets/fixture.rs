//! The vault every server fuzz target answers from: a copy of `examples/vault` in a temporary
//! directory, indexed BM25-only once per process (the copy is what a request could change).

use std::path::{Path, PathBuf};

pub struct Fixture {
    pub _dir: tempfile::TempDir,
    pub vault: PathBuf,
    pub index: quire_index::IndexLocation,
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the vault copy");
    for entry in std::fs::read_dir(from).expect("read the sample vault") {
        let entry = entry.expect("sample vault entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a note");
        }
    }
}

pub fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temporary directory");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/vault");
    let vault = dir.path().join("vault");
    copy_tree(&sample, &vault);
    // A note with a very long line and one with odd headings, so reads get cut.
    std::fs::write(
        vault.join("Long.md"),
        format!("# Long\n\n{}\n", "word ".repeat(40_000)),
    )
    .expect("write Long.md");
    std::fs::write(vault.join("Odd.md"), "# A\n\n# A\n\n## #2\n\ntext [S7]\n").expect("Odd.md");
    let index = quire_index::IndexLocation::new(dir.path().join("index"));
    quire_index::sync(&vault, &index, &quire_index::SyncOptions::default(), &())
        .expect("index the fixture vault");
    Fixture {
        _dir: dir,
        vault,
        index,
    }
}
