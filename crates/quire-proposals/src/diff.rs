//! Unified diffs of a change, for people and for review tools (`git apply --check` reads them).

use similar::TextDiff;

/// The unified diff (3 lines of context) from `old` at `old_path` to `new` at `new_path`, with
/// `a/` and `b/` headers; `None` as a side means the file does not exist there (`/dev/null`).
/// Empty when nothing changes. Pure.
pub fn unified_diff(
    old_path: Option<&str>,
    old: &str,
    new_path: Option<&str>,
    new: &str,
) -> String {
    let from = old_path.map_or("/dev/null".to_string(), |p| format!("a/{p}"));
    let to = new_path.map_or("/dev/null".to_string(), |p| format!("b/{p}"));
    let diff = TextDiff::from_lines(old, new);
    let mut out = String::new();
    if old_path != new_path
        && let (Some(from), Some(to)) = (old_path, new_path)
    {
        out.push_str(&format!("rename from {from}\nrename to {to}\n"));
    }
    if old == new && old_path.is_some() && new_path.is_some() {
        return out;
    }
    out.push_str(
        &diff
            .unified_diff()
            .context_radius(3)
            .missing_newline_hint(true)
            .header(&from, &to)
            .to_string(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_shows_as_removed_and_added_with_context() {
        let diff = unified_diff(Some("N.md"), "a\nb\nc\n", Some("N.md"), "a\nB\nc\n");
        assert!(diff.starts_with("--- a/N.md\n+++ b/N.md\n@@ -1,3 +1,3 @@\n"));
        assert!(diff.contains("\n-b\n+B\n"));
        assert!(diff.contains("\n a\n"));
    }

    #[test]
    fn a_new_file_comes_from_dev_null_and_a_pure_rename_has_no_hunk() {
        let diff = unified_diff(None, "", Some("New.md"), "x\n");
        assert!(diff.starts_with("--- /dev/null\n+++ b/New.md\n@@ -0,0 +1 @@\n+x\n"));
        let rename = unified_diff(Some("A.md"), "same\n", Some("B.md"), "same\n");
        assert_eq!(rename, "rename from A.md\nrename to B.md\n");
    }
}
