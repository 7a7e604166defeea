//! What every command needs: the vault and index the global flags name, the embedding model,
//! note arguments, and the JSON printer.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use quire_app::types::Searcher;
use quire_app::types::{Embedder, IndexLocation};
use quire_app::vault::reasoning::to_canonical_json;
use quire_app::vault::{OpenOptions, Vault, VaultError};

use crate::Cli;

pub(crate) fn open_vault(cli: &Cli) -> Result<Vault> {
    let root = match &cli.vault {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    Ok(Vault::open(&root, &open_options(cli))?)
}
/// The scan settings given by flags (added to the vault's config file).
pub(crate) fn open_options(cli: &Cli) -> OpenOptions {
    OpenOptions {
        include: cli.include.clone(),
        exclude: cli.exclude.clone(),
        // Checked by clap (`parse_size_cap`): finite and positive.
        max_file_bytes: cli.max_file_mb.map(|mb| (mb * 1024.0 * 1024.0) as u64),
        skip_dirs: Vec::new(),
    }
}
pub(crate) fn vault_root(cli: &Cli) -> Result<PathBuf> {
    let root = match &cli.vault {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    root.canonicalize()
        .with_context(|| format!("cannot open vault {}", root.display()))
}
pub(crate) fn index_location(cli: &Cli) -> Result<IndexLocation> {
    Ok(match &cli.index_dir {
        Some(dir) => IndexLocation::new(dir.clone()),
        None => IndexLocation::default_for(&vault_root(cli)?),
    })
}
/// A NOTE argument: a vault-relative path or a name resolved like a wikilink, else a path to a
/// file inside the vault (relative to the current directory, or absolute). Anything that leads
/// outside the vault is refused.
pub(crate) fn find_note(vault: &Vault, arg: &str) -> Result<usize> {
    let as_path = Path::new(arg);
    // A name or path that is a note of the vault wins over a file of the same name in the
    // current directory (`quire --vault V outline README.md` run beside another README.md).
    if !as_path.is_absolute()
        && let Ok(i) = vault.find_note(arg)
    {
        return Ok(i);
    }
    if (as_path.is_absolute() || as_path.exists())
        && let Ok(canonical) = as_path.canonicalize()
    {
        let Ok(rel) = canonical.strip_prefix(&vault.root) else {
            return Err(VaultError::OutsideVault(arg.to_string()).into());
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        return vault.index_of(&rel).ok_or_else(|| {
            anyhow::anyhow!(
                "`{arg}` is in the vault but is not a note that was read (see `quire scan`)"
            )
        });
    }
    Ok(vault.find_note(arg)?)
}
pub(crate) fn print_json(out: &mut String, value: &impl serde::Serialize) {
    out.push_str(&to_canonical_json(value));
}
/// The embedding model, if one is available (a missing default model is not an error: quire
/// then works with BM25 alone and says so). The choice is the core's
/// ([`quire_app::models::load_embedder`]); the flags and the note on stderr are the CLI's.
pub(crate) fn load_embedder(cli: &Cli) -> Result<Option<Arc<dyn Embedder>>> {
    let model = cli.model.as_ref().map(|m| m.to_string_lossy().into_owned());
    let root = vault_root(cli).ok();
    let loaded = quire_app::models::load_embedder(&quire_app::models::EmbedderChoice {
        disabled: cli.no_embeddings,
        model: model.as_deref(),
        vault_root: root.as_deref(),
    })?;
    if let Some(note) = &loaded.note {
        eprintln!("quire: {note}");
    }
    Ok(loaded.embedder)
}
/// What similar notes and duplicates say when they cannot run without vectors: with
/// `--no-embeddings` that the flag is why, not that a model must be fetched.
pub(crate) fn needs_vectors(cli: &Cli, err: quire_app::types::SearchError) -> anyhow::Error {
    match err {
        quire_app::types::SearchError::NoEmbeddings(_) if cli.no_embeddings => anyhow::anyhow!(
            "this command compares the notes' vectors, and --no-embeddings loads no model: run it without --no-embeddings"
        ),
        other => other.into(),
    }
}
pub(crate) fn open_searcher(cli: &Cli, embedder: Option<Arc<dyn Embedder>>) -> Result<Searcher> {
    let location = index_location(cli)?;
    let searcher = quire_app::live::open_searcher(&location, "quire")?;
    Ok(match embedder {
        Some(e) => searcher.with_embedder(e),
        None => searcher,
    })
}
/// The searcher of `--backend` when given, else of the local index.
pub(crate) fn open_backend(
    cli: &Cli,
    embedder: Option<Arc<dyn Embedder>>,
) -> Result<quire_app::backend::SearchBackend> {
    Ok(quire_app::backend::SearchBackend::open(
        cli.backend.as_deref(),
        &index_location(cli)?,
        embedder,
        "quire",
    )?)
}
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

/// The filters `search` and `ask` share.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct FilterArgs {
    /// Only notes in this folder (any depth).
    #[arg(long)]
    pub(crate) folder: Option<String>,
    /// Only notes with this tag (or a tag below it).
    #[arg(long)]
    pub(crate) tag: Option<String>,
    /// Only notes whose frontmatter passes this condition (repeatable): `status=done`,
    /// `rating>=7`, `created<2024-01-01`, `tags~travel` (`=`, `!=`, `<`, `<=`, `>`, `>=`,
    /// `~` contains; dates and numbers compare as such; a list matches by any item).
    #[arg(long = "where", value_name = "KEY OP VALUE")]
    pub(crate) conditions: Vec<String>,
    /// Only notes dated on or after this day (YYYY-MM-DD): the `date` or `created` property,
    /// or a daily note's file name.
    #[arg(long)]
    pub(crate) since: Option<String>,
    /// Only notes dated on or before this day (YYYY-MM-DD).
    #[arg(long)]
    pub(crate) until: Option<String>,
}

impl FilterArgs {
    /// The index filter these flags name (checked: conditions, days).
    pub(crate) fn filter(&self) -> Result<quire_app::types::Filter> {
        quire_app::ops::search_filter(
            self.folder.clone(),
            self.tag.clone(),
            &self.conditions,
            self.since.clone(),
            self.until.clone(),
        )
        .map_err(|message| anyhow::anyhow!(message))
    }
}
