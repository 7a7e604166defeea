//! Progress bars for long work, shown only on a terminal and never with `--json`.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};

/// A bar over the notes a sync reads.
pub struct SyncBar {
    bar: Option<ProgressBar>,
}

impl SyncBar {
    pub fn new(json: bool) -> Self {
        let bar = (!json && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} reading notes {bar:30} {pos}/{len} ({eta} left)",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        SyncBar { bar }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl quire_app::types::SyncProgress for SyncBar {
    fn reading(&self, done: usize, total: usize) {
        if let Some(bar) = &self.bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    }
}

/// A bar over the notes a long command works through (`batch`).
pub struct NoteBar {
    bar: Option<ProgressBar>,
}

impl NoteBar {
    pub fn new(json: bool, what: &str) -> Self {
        let bar = (!json && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{{spinner}} {what} {{bar:30}} {{pos}}/{{len}} ({{eta}} left)"
                ))
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        NoteBar { bar }
    }

    pub fn set(&self, done: usize, total: usize) {
        if let Some(bar) = &self.bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
