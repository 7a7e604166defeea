//! `reflect`: the daily notes of a week (or any range) → what happened, recurring themes, open
//! loops and a plan for next week, every point linked to its day.
//!
//! Daily notes are found as the index finds them: by the vault's daily-notes settings
//! (`.obsidian/daily-notes.json`), else by an ISO-dated file name. They are read from disk, not
//! from the index, so the reflection sees today's edits. Each day is one source (`S1` = the
//! first day); the model cites `[S3]` and the text shows `[[2026-11-24]]`.
//!
//! Without a model the reflection is assembled from the notes themselves: each day's first
//! points, the tags and links that recur on several days, and the open tasks.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use quire_llm::{CancelToken, ChatModel, ChatRequest};
use quire_vault::scan::{read_note_file, scan_vault};
use quire_vault::{Note, Skipped, parse_note};
use serde::Serialize;

use crate::ask::{AnswerKind, shorten};
use crate::cite::{removed_warning, stream_wikilinked};
use crate::context::{Passage, Source, SourceReader, link_target};
use crate::dates::DateRange;
use crate::error::AssistError;
use crate::prompt;

/// One daily note.
#[derive(Debug, Clone)]
pub struct Day {
    /// The day the note is for, read from its path by the daily-notes settings.
    pub date: NaiveDate,
    /// The note as parsed when read.
    pub note: Note,
    /// Its wikilink target (`2026-11-24`).
    pub link: String,
}

/// The daily notes dated within `range`, oldest first, and the files that could not be read.
pub fn daily_notes_in(
    reader: &SourceReader,
    range: DateRange,
) -> Result<(Vec<Day>, Vec<Skipped>), AssistError> {
    let settings = reader.settings();
    let report = scan_vault(&settings.root, &settings.scan)?;
    let daily = &settings.parse.daily_notes;
    let mut days = Vec::new();
    let mut skipped = Vec::new();
    for file in report
        .notes
        .iter()
        .filter(|f| f.kind == quire_vault::DocumentKind::Markdown)
    {
        let Some(date) = daily.date_of(&file.path).filter(|d| range.contains(*d)) else {
            continue;
        };
        match read_note_file(file, settings.scan.max_file_bytes) {
            Ok(text) => days.push(Day {
                date,
                note: parse_note(&file.path, &text, &settings.parse),
                link: link_target(&file.path, report.notes.iter().map(|n| n.path.as_str())),
            }),
            Err(reason) => skipped.push(Skipped::new(file.path.clone(), reason)),
        }
    }
    days.sort_by(|a, b| (a.date, &a.note.path).cmp(&(b.date, &b.note.path)));
    Ok((days, skipped))
}

/// The paths of the daily notes dated within `range`, oldest first (the filter of a date phrase
/// in `ask`); `paths` are the index's note paths.
pub fn daily_paths_in<'a>(
    reader: &SourceReader,
    paths: impl IntoIterator<Item = &'a str>,
    range: DateRange,
) -> Vec<String> {
    let daily = &reader.settings().parse.daily_notes;
    let mut dated: Vec<(NaiveDate, &str)> = paths
        .into_iter()
        .filter_map(|p| {
            daily
                .date_of(p)
                .filter(|d| range.contains(*d))
                .map(|d| (d, p))
        })
        .collect();
    dated.sort();
    dated.into_iter().map(|(_, p)| p.to_string()).collect()
}

/// Each day as a source, its body (frontmatter left out) cut to an equal share of `budget` code
/// points.
pub fn day_sources(days: &[Day], budget: usize) -> Vec<Source> {
    let share = budget / days.len().max(1);
    days.iter()
        .enumerate()
        .map(|(i, day)| {
            let note = &day.note;
            let start = note.body_start_line.max(1);
            let body = note.lines(start, note.line_count).unwrap_or(&note.source);
            Source {
                id: format!("S{}", i + 1),
                passage: Passage {
                    path: note.path.clone(),
                    title: note.title.clone(),
                    link: day.link.clone(),
                    chunk_id: String::new(),
                    content_hash: note.sha256.clone(),
                    heading_path: vec![format!("{} ({})", day.date, day.date.format("%A"))],
                    start_line: start,
                    end_line: note.line_count.max(start),
                    text: shorten(body, share.max(200)),
                    score: 0.0,
                },
            }
        })
        .collect()
}

/// A day in a reflection's report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReflectedDay {
    /// The id the model saw (`S1` is the first day).
    pub id: String,
    /// The day.
    pub date: NaiveDate,
    /// Vault-relative path of its daily note.
    pub path: String,
    /// The note's wikilink target.
    pub link: String,
    /// Whether the reflection cites the day (always, offline).
    pub cited: bool,
}

/// A reflection: the `--json` output of `quire reflect`.
#[derive(Debug, Clone, Serialize)]
pub struct Reflection {
    /// Generated, extractive (offline) or nothing found (no daily note in the range).
    pub kind: AnswerKind,
    /// The range asked about.
    pub range: DateRange,
    /// The reflection as shown, citations as wikilinks.
    pub reflection: String,
    /// Each day given, in the order given (oldest first from [`daily_notes_in`]); empty when
    /// there is none.
    pub days: Vec<ReflectedDay>,
    /// Ids it cites that no day has; they were removed from `reflection`.
    pub invalid_citations: Vec<String>,
    /// Things the reader should know (points that cite no day, citations removed).
    pub warnings: Vec<String>,
    /// The model that wrote the reflection; `None` offline.
    pub model: Option<String>,
}

/// Writes the reflection on `days` (the daily notes of `range`), streaming the shown text.
pub fn reflect(
    model: Option<&dyn ChatModel>,
    range: DateRange,
    days: &[Day],
    budget: usize,
    cancel: &CancelToken,
    on_text: &mut dyn FnMut(&str),
) -> Result<Reflection, AssistError> {
    let sources = day_sources(days, budget);
    let mut reflection = Reflection {
        kind: AnswerKind::Generated,
        range,
        reflection: String::new(),
        days: Vec::new(),
        invalid_citations: Vec::new(),
        warnings: Vec::new(),
        model: None,
    };
    let report_days = |cited: &dyn Fn(&str) -> bool| -> Vec<ReflectedDay> {
        sources
            .iter()
            .zip(days)
            .map(|(s, d)| ReflectedDay {
                id: s.id.clone(),
                date: d.date,
                path: d.note.path.clone(),
                link: d.link.clone(),
                cited: cited(&s.id),
            })
            .collect()
    };
    if days.is_empty() {
        reflection.kind = AnswerKind::NothingFound;
        reflection.reflection =
            format!("No daily notes between {} and {}.\n", range.from, range.to);
        on_text(&reflection.reflection);
        return Ok(reflection);
    }
    let Some(model) = model else {
        reflection.kind = AnswerKind::Extractive;
        reflection.reflection = offline_reflection(range, days);
        on_text(&reflection.reflection);
        reflection.days = report_days(&|_| true);
        return Ok(reflection);
    };
    let mut request = ChatRequest::new(prompt::reflect_messages(&range.to_string(), &sources));
    request.temperature = Some(0.3);
    let cited = stream_wikilinked(model, &request, &sources, cancel, on_text)?;
    reflection.model = Some(model.name());
    reflection.days = report_days(&|id| cited.citations.valid.iter().any(|v| v == id));
    let known: Vec<&str> = sources.iter().map(|s| s.id.as_str()).collect();
    let uncited = uncited_points(&cited.raw, &known);
    if uncited > 0 {
        reflection.warnings.push(format!(
            "{uncited} points cite no day: check them against the daily notes"
        ));
    }
    reflection
        .warnings
        .extend(removed_warning("days", &cited.citations.invalid));
    reflection.invalid_citations = cited.citations.invalid;
    reflection.reflection = cited.text;
    Ok(reflection)
}

/// Bullet points of `text` that cite no known day.
fn uncited_points(text: &str, known: &[&str]) -> usize {
    text.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("- ") || l.starts_with("* "))
        .filter(|l| quire_llm::parse_citations(l, known).valid.is_empty())
        .count()
}

/// The tasks still open at the end of the range, each with the last day it is written on open: a
/// task ticked on a later day (the same text, ignoring case and spacing) is no open loop, and a
/// task carried from day to day is listed once.
fn open_loops(days: &[Day]) -> Vec<(&quire_vault::Task, &Day)> {
    let key = |text: &str| {
        text.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let mut ordered: Vec<&Day> = days.iter().collect();
    ordered.sort_by_key(|d| d.date);
    // Walk from the last day back: the first sighting of a task decides whether it is open.
    let mut decided: std::collections::HashSet<String> = Default::default();
    let mut open = Vec::new();
    for day in ordered.iter().rev() {
        for task in &day.note.tasks {
            // Done (`x`) and cancelled (`-`, Obsidian Tasks' status) items close a loop.
            if decided.insert(key(&task.text)) && !task.done && task.status != '-' {
                open.push((task, *day));
            }
        }
    }
    open.sort_by_key(|(task, day)| (day.date, task.line));
    open
}

/// The reflection without a model: the notes' own points, recurring tags and links, open tasks.
pub fn offline_reflection(range: DateRange, days: &[Day]) -> String {
    let mut text = format!(
        "Reflection on {range} (no language model is configured: these are the daily notes' own points, nothing here is generated)\n"
    );
    text.push_str("\n## What happened\n\n");
    for day in days {
        let points = first_points(&day.note, 2);
        if points.is_empty() {
            continue;
        }
        text.push_str(&format!(
            "- {}: {} [[{}]]\n",
            day.date,
            points.join("; "),
            day.link
        ));
    }
    // A theme is a tag or a link that appears on two days or more.
    let mut themes: BTreeMap<String, Vec<&Day>> = BTreeMap::new();
    for day in days {
        let mut seen: Vec<String> = day
            .note
            .tags
            .iter()
            .map(|t| format!("#{}", t.name))
            .filter(|t| t != "#daily")
            .chain(day.note.links.iter().map(|l| format!("[[{}]]", l.target)))
            .collect();
        seen.sort();
        seen.dedup();
        for theme in seen {
            themes.entry(theme).or_default().push(day);
        }
    }
    let mut recurring: Vec<(String, Vec<&Day>)> =
        themes.into_iter().filter(|(_, d)| d.len() >= 2).collect();
    recurring.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    text.push_str("\n## Themes\n\n");
    if recurring.is_empty() {
        text.push_str("- No tag or link recurs on two days.\n");
    }
    for (theme, on) in recurring.iter().take(8) {
        let links: Vec<String> = on.iter().map(|d| format!("[[{}]]", d.link)).collect();
        text.push_str(&format!(
            "- {theme}: {} days ({})\n",
            on.len(),
            links.join(", ")
        ));
    }
    text.push_str("\n## Open loops\n\n");
    let open_loops = open_loops(days);
    let open = open_loops.len();
    for (task, day) in open_loops {
        text.push_str(&format!("- [ ] {} [[{}]]\n", task.text.trim(), day.link));
    }
    if open == 0 {
        text.push_str("- No open tasks.\n");
    }
    text.push_str(
        "\n## Next week\n\n- Planning needs a language model; start with the open loops above.\n",
    );
    text
}

/// The first list items of a note that are not tasks, on one line each.
fn first_points(note: &Note, n: usize) -> Vec<String> {
    let start = note.body_start_line.max(1);
    let body = note.lines(start, note.line_count).unwrap_or_default();
    body.lines()
        .filter_map(|l| l.strip_prefix("- ").or_else(|| l.strip_prefix("* ")))
        .filter(|l| !l.starts_with('['))
        .take(n)
        .map(|l| shorten(l, 140).trim_end_matches('.').to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(date: &str, text: &str) -> Day {
        Day {
            date: date.parse().unwrap(),
            note: quire_vault::parse_note(&format!("{date}.md"), text, &Default::default()),
            link: date.to_string(),
        }
    }

    #[test]
    fn a_task_ticked_on_a_later_day_is_no_open_loop() {
        let days = [
            day(
                "2026-11-24",
                "- [ ] call  the plumber\n- [ ] buy rye flour\n- [ ] book train\n",
            ),
            day("2026-11-25", "- [x] Call the plumber\n- [ ] book train\n"),
            day(
                "2026-11-26",
                "- [ ] write report\n- [-] renew the gym pass\n",
            ),
        ];
        let range = DateRange::days_ending("2026-11-26".parse().unwrap(), 3);
        let text = offline_reflection(range, &days);
        let loops = text.split("## Open loops").nth(1).unwrap();
        assert!(!loops.contains("plumber"), "{loops}");
        assert!(
            loops.contains("- [ ] buy rye flour [[2026-11-24]]"),
            "{loops}"
        );
        assert!(
            !loops.contains("gym pass"),
            "a cancelled task is no open loop: {loops}"
        );
        // Carried from day to day: listed once, at the last day it is written.
        assert_eq!(loops.matches("book train").count(), 1, "{loops}");
        assert!(loops.contains("- [ ] book train [[2026-11-25]]"), "{loops}");
        assert!(
            loops.contains("- [ ] write report [[2026-11-26]]"),
            "{loops}"
        );
    }

    #[test]
    fn points_without_a_day_are_counted() {
        let text = "## What happened\n- ran [S1]\n- baked\n  - rye [S2]\n* slept [S9]\n";
        assert_eq!(uncited_points(text, &["S1", "S2"]), 2);
    }
}
