//! Conditions on a note's frontmatter and date, for `search --where` / `--since` / `--until`.
//! Pure: parsing and matching, no I/O.
//!
//! A condition is `KEY OP VALUE` with `OP` one of `=`, `!=`, `<`, `<=`, `>`, `>=` or `~`
//! (contains, ignoring case): `status=done`, `rating>=7`, `last<2024-01-01`, `tags~travel`. The
//! comparison follows the values: two dates (`YYYY-MM-DD`, a time after it ignored) compare as
//! dates, two numbers as numbers, anything else as text ignoring case. A list property matches
//! when one of its items does (`!=`: when none equals). A link value (`"[[Board games]]"`)
//! compares by its target's name. A note without the property matches only `!=`.

use std::cmp::Ordering;

use serde_json::Value;

/// How a property is compared with a condition's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `~`: contains, ignoring case.
    Contains,
}

/// One `KEY OP VALUE` condition on a note's properties.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// The property name, matched ignoring case.
    pub key: String,
    /// The comparison.
    pub op: Op,
    /// The value compared with, as written.
    pub value: String,
}

impl Condition {
    /// Parses `KEY OP VALUE` (spaces around `OP` allowed).
    pub fn parse(text: &str) -> Result<Condition, String> {
        let at = text
            .find(['=', '!', '<', '>', '~'])
            .ok_or_else(|| format!("`{text}`: expected KEY=VALUE, KEY!=VALUE, KEY<VALUE, KEY<=VALUE, KEY>VALUE, KEY>=VALUE or KEY~TEXT"))?;
        let (key, rest) = text.split_at(at);
        let (op, value) = [
            ("!=", Op::Ne),
            ("<=", Op::Le),
            (">=", Op::Ge),
            ("=", Op::Eq),
            ("<", Op::Lt),
            (">", Op::Gt),
            ("~", Op::Contains),
        ]
        .into_iter()
        .find_map(|(sign, op)| rest.strip_prefix(sign).map(|v| (op, v)))
        .ok_or_else(|| format!("`{text}`: `!` must be followed by `=`"))?;
        let key = key.trim();
        let value = value.trim();
        if key.is_empty() || value.is_empty() {
            return Err(format!(
                "`{text}`: both a property name and a value are needed"
            ));
        }
        Ok(Condition {
            key: key.to_string(),
            op,
            value: value.to_string(),
        })
    }

    /// Whether a note with `properties` (its frontmatter as a JSON object) passes.
    pub fn matches(&self, properties: &Value) -> bool {
        let found = properties.as_object().and_then(|fields| {
            fields
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(&self.key))
                .map(|(_, v)| v)
        });
        let items: Vec<String> = match found {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) => list.iter().filter_map(scalar).collect(),
            Some(other) => scalar(other).into_iter().collect(),
        };
        match self.op {
            Op::Ne => !items
                .iter()
                .any(|item| compare(item, &self.value) == Some(Ordering::Equal)),
            Op::Contains => {
                let wanted = self.value.to_lowercase();
                items
                    .iter()
                    .any(|item| item.to_lowercase().contains(&wanted))
            }
            op => items.iter().any(|item| {
                compare(item, &self.value).is_some_and(|order| match op {
                    Op::Eq => order == Ordering::Equal,
                    Op::Lt => order == Ordering::Less,
                    Op::Le => order != Ordering::Greater,
                    Op::Gt => order == Ordering::Greater,
                    Op::Ge => order != Ordering::Less,
                    Op::Ne | Op::Contains => false,
                })
            }),
        }
    }
}

/// A scalar property value as text; a link by its target's name.
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(link_target(s)),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `[[Folder/Target#Heading|label]]` → `Target`; other text as it is.
fn link_target(text: &str) -> String {
    let trimmed = text.trim();
    match trimmed
        .strip_prefix("[[")
        .and_then(|rest| rest.strip_suffix("]]"))
    {
        Some(inner) => {
            let target = inner.split(['|', '#', '^']).next().unwrap_or(inner).trim();
            target.rsplit('/').next().unwrap_or(target).to_string()
        }
        None => trimmed.to_string(),
    }
}

/// `YYYY-MM-DD` at the start of `text` (a time after it is ignored).
pub fn date_prefix(text: &str) -> Option<&str> {
    let head = text.get(..10)?;
    let bytes = head.as_bytes();
    let digits = |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
    let shaped =
        digits(0..4) && bytes[4] == b'-' && digits(5..7) && bytes[7] == b'-' && digits(8..10);
    (shaped && (text.len() == 10 || !text.as_bytes()[10].is_ascii_digit())).then_some(head)
}

/// Compares a property value with a condition's value: as dates, as numbers, else as text
/// ignoring case.
fn compare(item: &str, wanted: &str) -> Option<Ordering> {
    if let (Some(a), Some(b)) = (date_prefix(item), date_prefix(wanted)) {
        return Some(a.cmp(b));
    }
    if let (Ok(a), Ok(b)) = (item.trim().parse::<f64>(), wanted.trim().parse::<f64>()) {
        return a.partial_cmp(&b);
    }
    Some(item.to_lowercase().cmp(&wanted.to_lowercase()))
}

/// The date a note is about: its `date`, `day` or `created` property, else a `YYYY-MM-DD` file
/// name (a daily note). `None` when it has none of them.
pub fn note_date<'a>(path: &'a str, properties: &'a Value) -> Option<&'a str> {
    for key in ["date", "day", "created"] {
        let found = properties.as_object().and_then(|fields| {
            fields
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .and_then(|(_, v)| v.as_str())
        });
        if let Some(date) = found.and_then(date_prefix) {
            return Some(date);
        }
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    date_prefix(name.strip_suffix(".md").unwrap_or(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(condition: &str, properties: Value) -> bool {
        Condition::parse(condition).unwrap().matches(&properties)
    }

    #[test]
    fn conditions_parse_with_every_operator() {
        let c = Condition::parse("rating >= 7").unwrap();
        assert_eq!(
            (c.key.as_str(), c.op, c.value.as_str()),
            ("rating", Op::Ge, "7")
        );
        assert_eq!(Condition::parse("status!=done").unwrap().op, Op::Ne);
        assert_eq!(Condition::parse("tags~trav").unwrap().op, Op::Contains);
        for bad in ["status", "=done", "status=", "a!b"] {
            assert!(Condition::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn values_compare_as_dates_numbers_or_text() {
        assert!(check("status=Done", json!({"status": "done"})));
        assert!(!check("status=done", json!({"status": "doing"})));
        assert!(check("rating>=7", json!({"rating": 7})));
        assert!(!check("rating>7", json!({"rating": 7})));
        assert!(check("rating<10", json!({"rating": 9.5})));
        assert!(check("last<2024-01-01", json!({"last": "2023-09-01"})));
        assert!(check(
            "created>=2026-11-01",
            json!({"created": "2026-11-03T10:00"})
        ));
        assert!(check("tags=travel", json!({"tags": ["food", "travel"]})));
        assert!(check(
            "categories=Board games",
            json!({"categories": ["[[Board games]]"]})
        ));
        assert!(check("title~INARI", json!({"title": "Fushimi Inari"})));
        // A missing property passes only `!=`.
        assert!(check("status!=done", json!({})));
        assert!(!check("status=done", json!({})));
        assert!(!check("tags!=travel", json!({"tags": ["travel"]})));
    }

    #[test]
    fn a_notes_date_comes_from_its_properties_or_its_file_name() {
        assert_eq!(
            note_date("x.md", &json!({"created": "2026-11-02"})),
            Some("2026-11-02")
        );
        assert_eq!(
            note_date("Journal/2026-11-20.md", &json!({})),
            Some("2026-11-20")
        );
        assert_eq!(
            note_date("Notes/Idea.md", &json!({"created": "soon"})),
            None
        );
        assert_eq!(date_prefix("2026-11-2"), None);
        assert_eq!(date_prefix("20261-11-20"), None);
    }
}
