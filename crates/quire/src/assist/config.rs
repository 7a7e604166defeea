//! `quire config`: the effective configuration. The API key is never shown, only the variable
//! that holds it and whether it is set.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use quire_app::types::{EffectiveProvider, ProviderConfig};
use serde::Serialize;

use super::ENV_PRESET;
use crate::Cli;
use crate::common::{index_location, print_json, vault_root};

/// What `quire config --json` prints.
#[derive(Debug, Serialize)]
struct Config {
    vault: Option<PathBuf>,
    index_dir: Option<PathBuf>,
    index_exists: bool,
    embeddings: Embeddings,
    llm: Option<EffectiveProvider>,
    /// The in-process model used when no provider is configured (`local-llm` builds).
    local_llm: Option<PathBuf>,
}

/// Where query and chunk vectors come from.
#[derive(Debug, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Embeddings {
    None { reason: &'static str },
    Remote { base_url: String, model: String },
    Local { path: PathBuf, present: bool },
}

fn embeddings(cli: &Cli) -> Embeddings {
    if cli.no_embeddings {
        return Embeddings::None {
            reason: "--no-embeddings",
        };
    }
    if let Some(remote) = quire_app::models::remote_embeddings() {
        return Embeddings::Remote {
            base_url: remote.base_url,
            model: remote.model,
        };
    }
    let model = cli.model.as_ref().map(|m| m.to_string_lossy().into_owned());
    let root = vault_root(cli).ok();
    let (path, _) = quire_app::models::model_path(&quire_app::models::EmbedderChoice {
        disabled: false,
        model: model.as_deref(),
        vault_root: root.as_deref(),
    });
    let present = path.exists();
    Embeddings::Local { path, present }
}

pub(super) fn config(cli: &Cli, out: &mut String) -> Result<ExitCode> {
    let index = index_location(cli).ok();
    let llm = ProviderConfig::from_env()?.map(|p| p.effective());
    let config = Config {
        vault: vault_root(cli).ok(),
        index_exists: index.as_ref().is_some_and(|i| i.store_path().exists()),
        index_dir: index.map(|i| i.dir),
        embeddings: embeddings(cli),
        local_llm: if llm.is_none() {
            quire_app::models::local_model_path()
        } else {
            None
        },
        llm,
    };
    if cli.json {
        print_json(out, &config);
    } else {
        render(out, &config);
    }
    Ok(ExitCode::SUCCESS)
}

fn render(out: &mut String, config: &Config) {
    let show = |p: Option<&PathBuf>| p.map_or("(none)".to_string(), |p| p.display().to_string());
    outln!(out, "vault        {}", show(config.vault.as_ref()));
    outln!(
        out,
        "index        {}{}",
        show(config.index_dir.as_ref()),
        if config.index_exists {
            ""
        } else {
            "  (not built yet: run `quire index`)"
        }
    );
    let embeddings = match &config.embeddings {
        Embeddings::Remote { base_url, model } => format!("remote {base_url} (model {model})"),
        Embeddings::Local {
            path,
            present: true,
        } => format!("local model {}", path.display()),
        Embeddings::Local { path, .. } => format!(
            "none: no model at {} (scripts/fetch-model.sh); search is BM25-only",
            path.display()
        ),
        Embeddings::None { .. } => "none (--no-embeddings)".to_string(),
    };
    outln!(out, "embeddings   {embeddings}");
    match (&config.llm, &config.local_llm) {
        (Some(p), _) => {
            let key = match &p.api_key_env {
                Some(var) if p.api_key_set => format!("key from ${var} (set)"),
                Some(var) => format!("key from ${var} (NOT set)"),
                None => "no key".to_string(),
            };
            outln!(
                out,
                "llm          {} at {}, model {}; {key}",
                p.provider,
                p.base_url,
                p.model
            );
        }
        (None, Some(local)) => outln!(
            out,
            "llm          local model {} (in-process, llama.cpp); set {ENV_PRESET} or QUIRE_LLM_BASE_URL and QUIRE_LLM_MODEL to use a server instead",
            local.display()
        ),
        (None, None) => outln!(
            out,
            "llm          none: ask, draft, reflect and questions work offline (extractive); set {ENV_PRESET} or QUIRE_LLM_BASE_URL and QUIRE_LLM_MODEL (and QUIRE_LLM_API_KEY) to use a model"
        ),
    }
}
