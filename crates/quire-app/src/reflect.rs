//! The reflect flow, once for every face: which days a request names, and the daily notes of
//! those days. The reflection itself is written by [`quire_assist::reflect::reflect`].

use chrono::NaiveDate;
use quire_assist::context::SourceReader;
pub use quire_assist::dates::parse_date;
use quire_assist::dates::{DateRange, parse_iso_week};
use quire_assist::reflect::{Day, daily_notes_in};
use quire_vault::Skipped;

use crate::error::AppError;

/// Writes the reflection from the days' notes (streamed to the face's sink); the same call for
/// every face.
pub use quire_assist::reflect::reflect as write_reflection;

/// The days a reflection covers, as a face receives them: an ISO week, or a first and last day,
/// or (neither) the seven days ending today.
#[derive(Debug, Clone, Default)]
pub struct DaysAsked<'a> {
    /// `2026-W48`.
    pub week: Option<&'a str>,
    /// `YYYY-MM-DD`, with `to`.
    pub from: Option<&'a str>,
    /// `YYYY-MM-DD`, the last day (inclusive), with `from`.
    pub to: Option<&'a str>,
}

impl DaysAsked<'_> {
    /// The range named: the week, else `from`–`to`, else the seven days ending `today`.
    pub fn range(&self, today: NaiveDate) -> Result<DateRange, AppError> {
        let bad = |e: quire_assist::AssistError| AppError::bad_arguments("reflect", e.to_string());
        match (self.week, self.from, self.to) {
            (Some(_), Some(_), _) | (Some(_), _, Some(_)) => Err(AppError::bad_arguments(
                "reflect",
                "give either a week or a first and last day, not both",
            )),
            (Some(week), None, None) => parse_iso_week(week).map_err(bad),
            (None, Some(from), Some(to)) => {
                DateRange::new(parse_date(from).map_err(bad)?, parse_date(to).map_err(bad)?)
                    .map_err(bad)
            }
            (None, Some(_), None) | (None, None, Some(_)) => Err(AppError::bad_arguments(
                "reflect",
                "give both the first and the last day",
            )),
            (None, None, None) => Ok(DateRange::days_ending(today, 7)),
        }
    }
}

/// The daily notes of `range` (oldest first) and the files of the range that could not be read.
pub fn days_of(
    reader: &SourceReader,
    range: DateRange,
) -> Result<(Vec<Day>, Vec<Skipped>), AppError> {
    Ok(daily_notes_in(reader, range)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        parse_date(text).unwrap()
    }

    #[test]
    fn the_days_asked_name_one_range() {
        let today = day("2026-12-03");
        let none = DaysAsked::default().range(today).unwrap();
        assert_eq!((none.from, none.to), (day("2026-11-27"), today));
        let week = DaysAsked {
            week: Some("2026-W48"),
            ..Default::default()
        };
        let week = week.range(today).unwrap();
        assert_eq!((week.from, week.to), (day("2026-11-23"), day("2026-11-29")));
        let span = DaysAsked {
            from: Some("2026-11-01"),
            to: Some("2026-11-03"),
            ..Default::default()
        };
        let span = span.range(today).unwrap();
        assert_eq!((span.from, span.to), (day("2026-11-01"), day("2026-11-03")));
        for wrong in [
            DaysAsked {
                week: Some("2026-W48"),
                from: Some("2026-11-01"),
                to: None,
            },
            DaysAsked {
                from: Some("2026-11-01"),
                ..Default::default()
            },
            DaysAsked {
                week: Some("48"),
                ..Default::default()
            },
            DaysAsked {
                from: Some("2026-11-05"),
                to: Some("2026-11-01"),
                week: None,
            },
        ] {
            let error = wrong.range(today).unwrap_err();
            assert!(
                matches!(error, AppError::BadArguments { .. }),
                "{wrong:?}: {error}"
            );
        }
    }
}
