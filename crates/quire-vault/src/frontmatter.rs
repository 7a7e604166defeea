//! YAML frontmatter ("properties" in Obsidian): finding it, parsing it tolerantly, and reading the
//! keys that have meaning to Obsidian (`tags`, `aliases`).

use std::collections::BTreeMap;

use serde_json::Value as Json;

/// Where the frontmatter sits in a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterSpan {
    /// The YAML text between the delimiters.
    pub yaml: std::ops::Range<usize>,
    /// The line of the closing delimiter (the opening one is line 1).
    pub end_line: usize,
    /// Byte offset just past the closing delimiter's line.
    pub body_start: usize,
}

/// Finds a frontmatter block: `---` alone on the first line, closed by `---` or `...` alone on a line.
/// An unclosed block is not frontmatter (as in Obsidian).
pub fn find_frontmatter(text: &str) -> Option<FrontmatterSpan> {
    let mut lines = line_slices(text);
    let (_, first) = lines.next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let yaml_start = lines
        .clone()
        .next()
        .map(|(off, _)| off)
        .unwrap_or(text.len());
    for (n, (offset, line)) in lines.enumerate() {
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed == "..." {
            let after = offset + line.len();
            let body_start = skip_one_break(text, after);
            return Some(FrontmatterSpan {
                yaml: yaml_start..offset,
                end_line: n + 2,
                body_start,
            });
        }
    }
    None
}

fn skip_one_break(text: &str, at: usize) -> usize {
    let rest = &text.as_bytes()[at..];
    if rest.starts_with(b"\r\n") {
        at + 2
    } else if rest.starts_with(b"\n") || rest.starts_with(b"\r") {
        at + 1
    } else {
        at
    }
}

/// Lines with their byte offsets, without their line breaks.
fn line_slices(text: &str) -> impl Iterator<Item = (usize, &str)> + Clone {
    let index = crate::lines::LineIndex::new(text);
    (1..=index.line_count()).map(move |n| {
        let start = index.line_start(n);
        let end = index.line_end(text, n);
        (start, &text[start..end])
    })
}

/// Parsed properties, or why they could not be read.
#[derive(Debug, Clone, Default)]
pub struct Properties {
    /// Every property as JSON, by key.
    pub values: BTreeMap<String, Json>,
    /// The `tags` (or `tag`) property's entries, split at commas and spaces, without `#`.
    pub tags: Vec<String>,
    /// The `aliases` (or `alias`) property's entries, trimmed, empty ones left out.
    pub aliases: Vec<String>,
    /// A message and the 1-based line within the note, for YAML that could not be read.
    pub error: Option<(usize, String)>,
}

/// Parses frontmatter YAML. Broken YAML yields an error message, never a panic; the note body is
/// parsed regardless by the caller. `first_line` is the note line where the YAML starts.
pub fn parse_properties(yaml: &str, first_line: usize) -> Properties {
    if yaml.trim().is_empty() {
        return Properties::default();
    }
    let value: yaml_serde::Value = match yaml_serde::from_str(yaml) {
        Ok(v) => v,
        Err(e) => {
            let line = e.location().map(|l| l.line()).unwrap_or(1);
            return Properties {
                error: Some((
                    first_line + line.saturating_sub(1),
                    format!("broken YAML frontmatter: {e}"),
                )),
                ..Properties::default()
            };
        }
    };
    let map = match yaml_to_json(value) {
        Json::Object(map) => map,
        Json::Null => return Properties::default(),
        _ => {
            return Properties {
                error: Some((
                    first_line,
                    "frontmatter is not a key: value mapping".to_string(),
                )),
                ..Properties::default()
            };
        }
    };
    let values: BTreeMap<String, Json> = map.into_iter().collect();
    let tags = string_list(values.get("tags").or_else(|| values.get("tag")))
        .into_iter()
        .flat_map(|t| {
            t.split([',', ' '])
                .map(|s| s.trim().trim_start_matches('#').to_string())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
        })
        .collect();
    let aliases = string_list(values.get("aliases").or_else(|| values.get("alias")))
        .into_iter()
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty())
        .collect();
    Properties {
        values,
        tags,
        aliases,
        error: None,
    }
}

/// A property that may be one string or a list of strings (numbers are taken as text).
fn string_list(value: Option<&Json>) -> Vec<String> {
    fn scalar(v: &Json) -> Option<String> {
        match v {
            Json::String(s) => Some(s.clone()),
            Json::Number(n) => Some(n.to_string()),
            Json::Bool(b) => Some(b.to_string()),
            _ => None,
        }
    }
    match value {
        Some(Json::Array(items)) => items.iter().filter_map(scalar).collect(),
        Some(v) => scalar(v).into_iter().collect(),
        None => Vec::new(),
    }
}

/// Converts YAML to JSON by hand: YAML allows non-string keys, tags and non-finite floats, which
/// JSON does not, and the conversion must never fail on a user's file.
fn yaml_to_json(value: yaml_serde::Value) -> Json {
    use yaml_serde::Value as Y;
    match value {
        Y::Null => Json::Null,
        Y::Bool(b) => Json::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Json::from(i)
            } else if let Some(u) = n.as_u64() {
                Json::from(u)
            } else {
                n.as_f64()
                    .and_then(serde_json::Number::from_f64)
                    .map(Json::Number)
                    .unwrap_or_else(|| Json::String(n.to_string()))
            }
        }
        // YAML's `\0` escape: a NUL in a property becomes U+FFFD, as nothing downstream (the
        // database index first) may hold one.
        Y::String(s) if s.contains('\0') => Json::String(s.replace('\0', "\u{FFFD}")),
        Y::String(s) => Json::String(s),
        Y::Sequence(items) => Json::Array(items.into_iter().map(yaml_to_json).collect()),
        Y::Mapping(map) => Json::Object(
            map.into_iter()
                .map(|(k, v)| (yaml_key(k), yaml_to_json(v)))
                .collect(),
        ),
        Y::Tagged(tagged) => yaml_to_json(tagged.value),
    }
}

fn yaml_key(key: yaml_serde::Value) -> String {
    match yaml_to_json(key) {
        Json::String(s) => s,
        Json::Null => "null".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_frontmatter_and_body_start() {
        let text = "---\ntitle: x\ntags: [a, b]\n---\n# Body\n";
        let span = find_frontmatter(text).unwrap();
        assert_eq!(&text[span.yaml.clone()], "title: x\ntags: [a, b]\n");
        assert_eq!(span.end_line, 4);
        assert_eq!(&text[span.body_start..], "# Body\n");
    }

    #[test]
    fn unclosed_frontmatter_is_body() {
        assert!(find_frontmatter("---\ntitle: x\n# Body\n").is_none());
        assert!(find_frontmatter("# x\n---\n").is_none());
    }

    #[test]
    fn tags_and_aliases_as_string_or_list() {
        let p = parse_properties("tags: \"rust, #cli\"\naliases: RS\n", 2);
        assert_eq!(p.tags, vec!["rust", "cli"]);
        assert_eq!(p.aliases, vec!["RS"]);
        let p = parse_properties("tags:\n  - a/b\n  - c\naliases: [One, Two]\n", 2);
        assert_eq!(p.tags, vec!["a/b", "c"]);
        assert_eq!(p.aliases, vec!["One", "Two"]);
    }

    #[test]
    fn broken_yaml_is_a_located_error() {
        let p = parse_properties("title: ok\ntags: [a, b\n", 2);
        let (line, msg) = p.error.unwrap();
        assert!(msg.contains("broken YAML"), "{msg}");
        assert!((2..=4).contains(&line), "line {line}");
        assert!(p.values.is_empty());
    }

    #[test]
    fn odd_yaml_values_become_json() {
        let p = parse_properties("1: one\nn: .nan\ndate: 2026-11-24\nx: !custom 5\n", 2);
        assert_eq!(p.values["1"], Json::String("one".into()));
        assert_eq!(p.values["n"], Json::String(".nan".into()));
        assert_eq!(p.values["date"], Json::String("2026-11-24".into()));
        assert_eq!(p.values["x"], Json::from(5));
    }
}
