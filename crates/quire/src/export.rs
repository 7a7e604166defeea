//! `quire export-index`: write the reasoning index (tree, manifest, outlines) to a folder, or
//! check an earlier export against the vault.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use quire_app::vault::reasoning;
use serde_json::json;

use crate::Cli;
use crate::common::{open_vault, print_json};

/// Exit code of `--check` when notes differ from the export (also in docs/cli.md).
const EXIT_STALE: u8 = 3;

pub(crate) fn run(
    cli: &Cli,
    out_dir: &Path,
    check: bool,
    force: bool,
    out: &mut String,
) -> Result<ExitCode> {
    let vault = open_vault(cli)?;
    if check {
        return check_export(cli, &vault, out_dir, out);
    }
    let summary = reasoning::export(&vault, out_dir, force)?;
    if cli.json {
        print_json(out, &summary);
    } else {
        outln!(
            out,
            "wrote the reasoning index of {} notes to {} ({} files, {} stale outlines removed)",
            summary.notes,
            summary.out_dir.display(),
            summary.files_written,
            summary.outlines_removed
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn check_export(
    cli: &Cli,
    vault: &quire_app::vault::Vault,
    out_dir: &Path,
    out: &mut String,
) -> Result<ExitCode> {
    let stale = reasoning::check_export(vault, out_dir)?;
    if cli.json {
        print_json(
            out,
            &json!({ "up_to_date": stale.is_empty(), "stale": stale }),
        );
    } else if stale.is_empty() {
        outln!(
            out,
            "{}: up to date ({} notes)",
            out_dir.display(),
            vault.notes.len()
        );
    } else {
        for s in &stale {
            outln!(out, "{}\t{}", s.status, s.path);
        }
        eprintln!(
            "quire: {} notes differ from the export in {}",
            stale.len(),
            out_dir.display()
        );
    }
    Ok(if stale.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_STALE)
    })
}
