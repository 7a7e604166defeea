//! Daily notes: which notes are days, and which day.
//!
//! Obsidian's daily-notes plugin names notes with a moment.js format (`.obsidian/daily-notes.json`,
//! keys `folder` and `format`, default `YYYY-MM-DD`). We translate the common moment tokens into a
//! regular expression; nothing in a maintained crate parses moment formats, hence the hand-written
//! translation.

use chrono::NaiveDate;
use regex::Regex;
use serde::Deserialize;

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// The daily-notes settings of a vault.
#[derive(Debug, Clone)]
pub struct DailyNotes {
    folder: String,
    pattern: Regex,
    fields: Vec<Field>,
    default_pattern: Regex,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Field {
    Year4,
    Year2,
    MonthNum,
    MonthName,
    MonthShort,
    Day,
    Ignored,
}

#[derive(Debug, Deserialize, Default)]
struct Settings {
    #[serde(default)]
    folder: Option<String>,
    #[serde(default)]
    format: Option<String>,
}

impl Default for DailyNotes {
    fn default() -> Self {
        DailyNotes::new("", "YYYY-MM-DD")
    }
}

impl DailyNotes {
    /// Settings from the JSON of `.obsidian/daily-notes.json`; unreadable JSON gives the defaults.
    pub fn from_settings_json(json: &str) -> Self {
        let settings: Settings = serde_json::from_str(json).unwrap_or_default();
        let format = settings
            .format
            .filter(|f| !f.trim().is_empty())
            .unwrap_or_else(|| "YYYY-MM-DD".to_string());
        DailyNotes::new(settings.folder.as_deref().unwrap_or(""), &format)
    }

    /// Daily notes named by a moment.js `format` in `folder` (vault-relative, may be empty).
    pub fn new(folder: &str, format: &str) -> Self {
        let (pattern, fields) = compile(format);
        let (default_pattern, _) = compile("YYYY-MM-DD");
        DailyNotes {
            folder: folder.trim_matches('/').to_string(),
            pattern,
            fields,
            default_pattern,
        }
    }

    /// The date of the note at vault-relative `path`, if it is a daily note.
    pub fn date_of(&self, path: &str) -> Option<NaiveDate> {
        let stem_path = path.strip_suffix(".md").unwrap_or(path);
        let relative = if self.folder.is_empty() {
            Some(stem_path)
        } else {
            stem_path
                .strip_prefix(&self.folder)
                .and_then(|rest| rest.strip_prefix('/'))
        };
        if let Some(date) = relative.and_then(|r| self.match_format(&self.pattern, &self.fields, r))
        {
            return Some(date);
        }
        // Fallback: a file named by the ISO date anywhere in the vault.
        let stem = stem_path.rsplit('/').next().unwrap_or(stem_path);
        let iso = [Field::Year4, Field::MonthNum, Field::Day];
        self.match_format(&self.default_pattern, &iso, stem)
    }

    fn match_format(&self, pattern: &Regex, fields: &[Field], text: &str) -> Option<NaiveDate> {
        let caps = pattern.captures(text)?;
        let (mut year, mut month, mut day) = (None, None, None);
        for (i, field) in fields.iter().enumerate() {
            let value = caps.get(i + 1)?.as_str();
            match field {
                Field::Year4 => year = value.parse::<i32>().ok(),
                Field::Year2 => year = value.parse::<i32>().ok().map(|y| 2000 + y),
                Field::MonthNum => month = value.parse::<u32>().ok(),
                Field::MonthName | Field::MonthShort => {
                    let lower = value.to_lowercase();
                    month = MONTHS
                        .iter()
                        .position(|m| m.starts_with(&lower) && lower.len() >= 3)
                        .map(|i| i as u32 + 1);
                }
                Field::Day => {
                    let digits: String = value.chars().take_while(|c| c.is_ascii_digit()).collect();
                    day = digits.parse::<u32>().ok();
                }
                Field::Ignored => {}
            }
        }
        NaiveDate::from_ymd_opt(year?, month?, day?)
    }
}

/// Translates a moment.js format into an anchored regex with one group per token.
fn compile(format: &str) -> (Regex, Vec<Field>) {
    const TOKENS: [(&str, &str, Field); 12] = [
        ("YYYY", r"(\d{4})", Field::Year4),
        ("YY", r"(\d{2})", Field::Year2),
        ("MMMM", r"([A-Za-z]+)", Field::MonthName),
        ("MMM", r"([A-Za-z]{3})", Field::MonthShort),
        ("MM", r"(\d{2})", Field::MonthNum),
        ("M", r"(\d{1,2})", Field::MonthNum),
        ("Do", r"(\d{1,2}(?:st|nd|rd|th))", Field::Day),
        ("DD", r"(\d{2})", Field::Day),
        ("D", r"(\d{1,2})", Field::Day),
        ("dddd", r"([A-Za-z]+)", Field::Ignored),
        ("ddd", r"([A-Za-z]{3})", Field::Ignored),
        ("ww", r"(\d{2})", Field::Ignored),
    ];
    let mut regex = String::from("^");
    let mut fields = Vec::new();
    let mut rest = format;
    'outer: while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').unwrap_or(after.len());
            regex.push_str(&regex::escape(&after[..end]));
            rest = after.get(end + 1..).unwrap_or("");
            continue;
        }
        for (token, group, field) in TOKENS {
            if let Some(after) = rest.strip_prefix(token) {
                regex.push_str(group);
                fields.push(field);
                rest = after;
                continue 'outer;
            }
        }
        let ch = rest.chars().next().unwrap_or(' ');
        regex.push_str(&regex::escape(&ch.to_string()));
        rest = &rest[ch.len_utf8()..];
    }
    regex.push('$');
    // The pattern is built only from escaped literals and fixed groups, so it always compiles;
    // fall back to a never-matching pattern rather than panic if it somehow does not.
    let compiled =
        Regex::new(&regex).unwrap_or_else(|_| Regex::new(r"[^\s\S]").expect("static regex"));
    (compiled, fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> Option<NaiveDate> {
        NaiveDate::from_ymd_opt(y, m, day)
    }

    #[test]
    fn default_format_anywhere() {
        let daily = DailyNotes::default();
        assert_eq!(daily.date_of("Journal/2026-11-24.md"), d(2026, 11, 24));
        assert_eq!(daily.date_of("2026-02-30.md"), None);
        assert_eq!(daily.date_of("Notes/Meeting 2026-11-24.md"), None);
    }

    #[test]
    fn settings_with_folder_and_nested_format() {
        let daily =
            DailyNotes::from_settings_json(r#"{"folder":"Daily/","format":"YYYY/MM/DD MMM, ddd"}"#);
        assert_eq!(
            daily.date_of("Daily/2026/11/24 Nov, Tue.md"),
            d(2026, 11, 24)
        );
        assert_eq!(daily.date_of("Other/2026/11/24 Nov, Tue.md"), None);
        let daily = DailyNotes::from_settings_json(r#"{"format":"[Day] Do MMMM YYYY"}"#);
        assert_eq!(daily.date_of("Day 3rd March 2025.md"), d(2025, 3, 3));
        let broken = DailyNotes::from_settings_json("{not json");
        assert_eq!(broken.date_of("2026-01-05.md"), d(2026, 1, 5));
    }
}
