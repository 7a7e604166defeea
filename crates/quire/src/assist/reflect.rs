//! `quire reflect`: a reflection on a range of daily notes.

use std::process::ExitCode;

use anyhow::Result;
use quire_app::reflect::write_reflection as reflect;
use quire_app::types::{DateRange, SourceReader};

use super::streaming::Streaming;
use super::{EXIT_CANCELLED, chat_model};
use crate::Cli;
use crate::common::{open_options, print_json, vault_root};

pub(super) fn reflect_range(
    cli: &Cli,
    range: DateRange,
    budget: usize,
    out: &mut String,
) -> Result<ExitCode> {
    let reader = SourceReader::open(&vault_root(cli)?, &open_options(cli))?;
    let (days, skipped) = quire_app::reflect::days_of(&reader, range)?;
    for s in &skipped {
        eprintln!("quire: skipped {}: {}", s.path, s.message);
    }
    // The same limit as `/api/reflect` (`quire_app::limits`).
    let budget = quire_app::limits::check_count(
        "budget",
        budget as u64,
        quire_app::limits::MAX_REFLECT_BUDGET,
    )
    .map_err(anyhow::Error::msg)?;
    let model = chat_model()?;
    let mut streaming = Streaming::new(cli);
    let written = streaming
        .run(|token, on_text| reflect(model.as_deref(), range, &days, budget, token, on_text))?;
    let Some(reflection) = written else {
        return Ok(ExitCode::from(EXIT_CANCELLED));
    };
    if cli.json {
        print_json(out, &reflection);
        return Ok(ExitCode::SUCCESS);
    }
    streaming.printer.end_line();
    let mut text = String::new();
    if !reflection.days.is_empty() {
        text.push_str("\nDays:\n");
        for day in &reflection.days {
            text.push_str(&format!(
                "  [{}] {}  {}{}\n",
                day.id,
                day.date,
                day.path,
                if day.cited { "  (cited)" } else { "" }
            ));
        }
    }
    for warning in &reflection.warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    streaming.text(&text);
    Ok(ExitCode::SUCCESS)
}
