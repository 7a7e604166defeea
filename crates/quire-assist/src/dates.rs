//! Dates as people write them: ISO weeks and dates for `quire reflect`, and the date phrases of a
//! question ("last week", "on Jan 5", "вчера") that narrow `quire ask` to those daily notes.
//!
//! Pure: "today" is always an argument, never read from the clock here. Weeks are ISO 8601 weeks
//! (Monday to Sunday; week 1 holds the year's first Thursday), as chrono computes them.

use std::sync::LazyLock;

use chrono::{Datelike, Days, Months, NaiveDate, Weekday};
use regex::Regex;
use serde::Serialize;

use crate::error::AssistError;

/// Days from `from` to `to`, both included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DateRange {
    /// The first day.
    pub from: NaiveDate,
    /// The last day, included.
    pub to: NaiveDate,
}

impl DateRange {
    /// The days `from` to `to`; [`AssistError::BadDate`] when `from` is after `to`.
    pub fn new(from: NaiveDate, to: NaiveDate) -> Result<DateRange, AssistError> {
        if from > to {
            return Err(AssistError::BadDate(format!(
                "the range starts ({from}) after it ends ({to})"
            )));
        }
        Ok(DateRange { from, to })
    }

    /// The single day `day`.
    pub fn day(day: NaiveDate) -> DateRange {
        DateRange { from: day, to: day }
    }

    /// The ISO week (Monday to Sunday) that holds `day`.
    pub fn week_of(day: NaiveDate) -> DateRange {
        let monday = day - Days::new(u64::from(day.weekday().num_days_from_monday()));
        DateRange {
            from: monday,
            to: monday + Days::new(6),
        }
    }

    /// The `n` days that end with `last`.
    pub fn days_ending(last: NaiveDate, n: u64) -> DateRange {
        DateRange {
            from: last - Days::new(n.max(1) - 1),
            to: last,
        }
    }

    /// The calendar month that holds `day`.
    pub fn month_of(day: NaiveDate) -> DateRange {
        let first = day.with_day(1).unwrap_or(day);
        let last = (first + Months::new(1)).pred_opt().unwrap_or(day);
        DateRange {
            from: first,
            to: last,
        }
    }

    /// Whether `day` is in the range, ends included.
    pub fn contains(&self, day: NaiveDate) -> bool {
        self.from <= day && day <= self.to
    }
}

impl std::fmt::Display for DateRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.from == self.to {
            write!(f, "{}", self.from)
        } else {
            write!(f, "{} – {}", self.from, self.to)
        }
    }
}

/// A date written `YYYY-MM-DD`.
pub fn parse_date(text: &str) -> Result<NaiveDate, AssistError> {
    NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
        .map_err(|_| AssistError::BadDate(format!("`{text}` is not a date like 2026-11-24")))
}

/// An ISO week written `2026-W48` (also `2026W48`, `2026-w48`).
pub fn parse_iso_week(text: &str) -> Result<DateRange, AssistError> {
    static WEEK: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(\d{4})-?[Ww](\d{1,2})$").expect("static regex"));
    let bad = || AssistError::BadDate(format!("`{text}` is not an ISO week like 2026-W48"));
    let caps = WEEK.captures(text.trim()).ok_or_else(bad)?;
    let year: i32 = caps[1].parse().map_err(|_| bad())?;
    let week: u32 = caps[2].parse().map_err(|_| bad())?;
    let monday = NaiveDate::from_isoywd_opt(year, week, Weekday::Mon).ok_or_else(bad)?;
    Ok(DateRange::week_of(monday))
}

const MONTH: &str = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";
const MONTH_RU: &str =
    "(января|февраля|марта|апреля|мая|июня|июля|августа|сентября|октября|ноября|декабря)";

/// The month number of an English name or abbreviation, or a Russian genitive name.
fn month_number(name: &str) -> Option<u32> {
    const EN: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    const RU: [&str; 12] = [
        "январ",
        "феврал",
        "март",
        "апрел",
        "ма",
        "июн",
        "июл",
        "август",
        "сентябр",
        "октябр",
        "ноябр",
        "декабр",
    ];
    let lower = name.to_lowercase();
    EN.iter()
        .position(|m| lower.starts_with(m))
        .or_else(|| RU.iter().position(|m| lower.starts_with(m)))
        .map(|i| i as u32 + 1)
}

/// The most recent `month`/`day` on or before `today` when no year is given.
fn recent_date(today: NaiveDate, month: u32, day: u32, year: Option<i32>) -> Option<NaiveDate> {
    if let Some(year) = year {
        return NaiveDate::from_ymd_opt(year, month, day);
    }
    NaiveDate::from_ymd_opt(today.year(), month, day)
        .filter(|d| *d <= today)
        .or_else(|| NaiveDate::from_ymd_opt(today.year() - 1, month, day))
}

/// Whether a question is about the user's own days (what they did, wrote, felt on those days),
/// so that its date phrase should limit the answer to those days' daily notes. A question with
/// a date phrase that asks how something works ("What happens to tasks due today?", "How do I
/// list this week's tasks?") is not: it is answered from the whole vault.
///
/// The rule: a first-person subject or possessive (I, we, my, our; я, мы, мой…), or a word for
/// the journal itself (journal, diary, daily note; дневник), and not a how-to (how do I, how can
/// I, how to; как). English and Russian, like [`date_range_in`].
pub fn is_about_own_days(question: &str) -> bool {
    static HOW_TO: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\bhow\s+(?:do|can|could|should|would|to)\b|\bhow\s+(?:i|we)\b|^\s*как\b")
            .expect("static regex")
    });
    static OWN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"\b(?:i|i'm|i've|i'd|we|me|my|mine|our|us|myself)\b|\b(?:journal|diary|daily\s+notes?|logbook)\b|(?:^|[^\p{L}])(?:я|мы|мне|меня|мной|мой|моя|моё|мое|мои|моих|нас|наш|наша|наши|дневник\p{L}*)(?:[^\p{L}]|$)",
        )
        .expect("static regex")
    });
    let text = question.to_lowercase();
    OWN.is_match(&text) && !HOW_TO.is_match(&text)
}

/// The date range a question's date phrase names, relative to `today`, or `None` when it names
/// none. Understood (case-insensitive): ISO dates and weeks; today, yesterday; this/last week
/// (ISO weeks); the past week and the last N days (rolling, ending today); this/last month; on
/// Jan 5 / on 5 January (the most recent one unless a year follows); in November; and the Russian
/// сегодня, вчера, позавчера, на этой/прошлой неделе, в этом/прошлом месяце, 5 января.
pub fn date_range_in(text: &str, today: NaiveDate) -> Option<DateRange> {
    static ISO_WEEK: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\b(\d{4}-?w\d{1,2})\b").expect("static regex"));
    static ISO_DATE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\b(\d{4}-\d{2}-\d{2})\b").expect("static regex"));
    static MONTH_DAY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(
            r"\b{MONTH}\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}})\b)?"
        ))
        .expect("static regex")
    });
    static DAY_MONTH: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(
            r"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{MONTH}\b|{MONTH_RU})\.?(?:,?\s+(\d{{4}})\b)?"
        ))
        .expect("static regex")
    });
    static IN_MONTH: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(r"\bin\s+{MONTH}\b(?:\s+(\d{{4}})\b)?")).expect("static regex")
    });
    static LAST_DAYS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\b(?:last|past)\s+(\d{1,3})\s+days\b").expect("static regex")
    });

    let text = text.to_lowercase();
    if let Some(caps) = ISO_WEEK.captures(&text) {
        return parse_iso_week(&caps[1]).ok();
    }
    if let Some(caps) = ISO_DATE.captures(&text) {
        return parse_date(&caps[1]).ok().map(DateRange::day);
    }
    if let Some(caps) = MONTH_DAY.captures(&text) {
        let month = month_number(&caps[1])?;
        let day: u32 = caps[2].parse().ok()?;
        let year = caps.get(3).and_then(|y| y.as_str().parse().ok());
        return recent_date(today, month, day, year).map(DateRange::day);
    }
    if let Some(caps) = DAY_MONTH.captures(&text) {
        let name = caps.get(2).or_else(|| caps.get(3))?;
        let month = month_number(name.as_str())?;
        let day: u32 = caps[1].parse().ok()?;
        let year = caps.get(4).and_then(|y| y.as_str().parse().ok());
        return recent_date(today, month, day, year).map(DateRange::day);
    }
    if let Some(caps) = LAST_DAYS.captures(&text) {
        let n: u64 = caps[1].parse().ok()?;
        return Some(DateRange::days_ending(today, n));
    }
    let has = |phrases: &[&str]| phrases.iter().any(|p| text.contains(p));
    let week_before = today - Days::new(7);
    let month_before = today.with_day(1).and_then(|d| d.pred_opt())?;
    if has(&["day before yesterday", "позавчера"]) {
        return Some(DateRange::day(today - Days::new(2)));
    }
    if has(&["yesterday", "вчера"]) {
        return Some(DateRange::day(today - Days::new(1)));
    }
    if has(&["today", "сегодня"]) {
        return Some(DateRange::day(today));
    }
    if has(&["past week", "past seven days", "за последнюю неделю"]) {
        return Some(DateRange::days_ending(today, 7));
    }
    if has(&[
        "last week",
        "previous week",
        "прошлой неделе",
        "прошлая неделя",
    ]) {
        return Some(DateRange::week_of(week_before));
    }
    if has(&["this week", "этой неделе", "эта неделя"]) {
        return Some(DateRange::week_of(today));
    }
    if has(&[
        "last month",
        "previous month",
        "прошлом месяце",
        "прошлый месяц",
    ]) {
        return Some(DateRange::month_of(month_before));
    }
    if has(&["this month", "этом месяце", "этот месяц"]) {
        return Some(DateRange::month_of(today));
    }
    if let Some(caps) = IN_MONTH.captures(&text) {
        let month = month_number(&caps[1])?;
        let year = match caps.get(2).and_then(|y| y.as_str().parse().ok()) {
            Some(year) => year,
            None if month <= today.month() => today.year(),
            None => today.year() - 1,
        };
        return NaiveDate::from_ymd_opt(year, month, 1).map(DateRange::month_of);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_about_the_users_days_are_told_from_how_to_questions() {
        for own in [
            "What did I do last week?",
            "What did I write about sourdough on Nov 20?",
            "Summarize my week",
            "What was on my mind yesterday?",
            "What did we decide on 2026-11-20?",
            "What's in my journal this week?",
            "Show the daily notes of last week",
            "Что я делал вчера?",
            "О чём мой дневник на прошлой неделе?",
        ] {
            assert!(is_about_own_days(own), "{own}");
        }
        for docs in [
            "What happens to tasks that are due today?",
            "How do I list this week's tasks?",
            "How can I show tasks done yesterday?",
            "Which query shows tasks due this week?",
            "how to filter by today's date",
            "Как показать задачи на этой неделе?",
        ] {
            assert!(!is_about_own_days(docs), "{docs}");
        }
    }

    fn d(text: &str) -> NaiveDate {
        parse_date(text).unwrap()
    }

    fn range(from: &str, to: &str) -> Option<DateRange> {
        Some(DateRange::new(d(from), d(to)).unwrap())
    }

    #[test]
    fn iso_weeks_run_monday_to_sunday() {
        assert_eq!(
            parse_iso_week("2026-W48").ok(),
            range("2026-11-23", "2026-11-29")
        );
        // Week 1 of 2026 starts in 2025 (it holds the first Thursday).
        assert_eq!(
            parse_iso_week("2026w1").ok(),
            range("2025-12-29", "2026-01-04")
        );
        assert!(parse_iso_week("2026-W54").is_err());
        assert!(parse_iso_week("W48").is_err());
    }

    #[test]
    fn phrases_are_relative_to_today() {
        // A Tuesday.
        let today = d("2026-12-01");
        let phrase = |text| date_range_in(text, today);
        assert_eq!(
            phrase("What did I do last week?"),
            range("2026-11-23", "2026-11-29")
        );
        assert_eq!(phrase("this week"), range("2026-11-30", "2026-12-06"));
        assert_eq!(phrase("the past week"), range("2026-11-25", "2026-12-01"));
        assert_eq!(
            phrase("runs in the last 10 days"),
            range("2026-11-22", "2026-12-01")
        );
        assert_eq!(phrase("yesterday"), range("2026-11-30", "2026-11-30"));
        assert_eq!(phrase("last month"), range("2026-11-01", "2026-11-30"));
        assert_eq!(phrase("in November"), range("2026-11-01", "2026-11-30"));
        assert_eq!(
            phrase("in December 2025"),
            range("2025-12-01", "2025-12-31")
        );
        assert_eq!(
            phrase("Что я делал на прошлой неделе?"),
            phrase("last week")
        );
        assert_eq!(phrase("вчера"), phrase("yesterday"));
        assert_eq!(phrase("How was my sleep?"), None);
        assert_eq!(phrase("I may have run"), None);
    }

    #[test]
    fn month_days_take_the_most_recent_year_unless_one_is_given() {
        let today = d("2026-12-01");
        let phrase = |text| date_range_in(text, today);
        assert_eq!(phrase("on Nov 24"), range("2026-11-24", "2026-11-24"));
        assert_eq!(
            phrase("on January 5th, what happened?"),
            range("2026-01-05", "2026-01-05")
        );
        assert_eq!(phrase("on Dec 5"), range("2025-12-05", "2025-12-05"));
        assert_eq!(
            phrase("on 5 January 2025"),
            range("2025-01-05", "2025-01-05")
        );
        assert_eq!(phrase("24 ноября"), range("2026-11-24", "2026-11-24"));
        assert_eq!(phrase("see 2026-11-17"), range("2026-11-17", "2026-11-17"));
        assert_eq!(phrase("in 2026-W47"), range("2026-11-16", "2026-11-22"));
    }
}
