//! Which chat endpoint to talk to: the presets for well-known servers, the `[llm]` settings a
//! user writes, the `QUIRE_LLM_*` environment overrides, and the secret-free description that
//! `quire config` prints.
//!
//! API keys are never part of a configuration: the configuration names the environment variable
//! that holds the key, and the key is read from the environment when a request is sent.

use serde::{Deserialize, Serialize};

use crate::LlmError;

/// Overrides the base URL (for scripts and tests).
pub const ENV_BASE_URL: &str = "QUIRE_LLM_BASE_URL";
/// Overrides the model.
pub const ENV_MODEL: &str = "QUIRE_LLM_MODEL";
/// When set, the API key is taken from this variable instead of the configured one.
pub const ENV_API_KEY: &str = "QUIRE_LLM_API_KEY";
/// Names a preset (`openai`, `openrouter`, `groq`, `ollama`, `llamacpp`).
pub const ENV_PRESET: &str = "QUIRE_LLM_PRESET";

/// A known OpenAI-compatible server: where it listens and where its key usually lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// The name a configuration uses (`openai`, `ollama`, …), lowercase.
    pub name: &'static str,
    /// The server's base URL, up to and including `/v1`.
    pub base_url: &'static str,
    /// The conventional variable of its API key; `None` for local servers that need no key.
    pub api_key_env: Option<&'static str>,
}

/// Every known preset: `openai`, `openrouter`, `groq`, and the local servers `ollama` and
/// `llamacpp` at their default ports.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "openai",
        base_url: "https://api.openai.com/v1",
        api_key_env: Some("OPENAI_API_KEY"),
    },
    Preset {
        name: "openrouter",
        base_url: "https://openrouter.ai/api/v1",
        api_key_env: Some("OPENROUTER_API_KEY"),
    },
    Preset {
        name: "groq",
        base_url: "https://api.groq.com/openai/v1",
        api_key_env: Some("GROQ_API_KEY"),
    },
    Preset {
        name: "ollama",
        base_url: "http://127.0.0.1:11434/v1",
        api_key_env: None,
    },
    Preset {
        name: "llamacpp",
        base_url: "http://127.0.0.1:8080/v1",
        api_key_env: None,
    },
];

/// The preset of that name (case-insensitive).
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}

/// The provider settings as a user writes them (the `[llm]` table of the config file). Every
/// field is optional: a preset fills in the base URL and the key variable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// One of [`PRESETS`] by name.
    pub preset: Option<String>,
    /// Base URL up to `/v1`; overrides the preset's.
    pub base_url: Option<String>,
    /// The model the server should run (e.g. `llama3.2`); required, here or in `QUIRE_LLM_MODEL`.
    pub model: Option<String>,
    /// The name of the environment variable that holds the API key; overrides the preset's.
    pub api_key_env: Option<String>,
}

/// A resolved provider: everything the client needs except the key itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provider {
    /// The preset's name, or `openai-compatible` for a bare base URL.
    pub name: String,
    /// Base URL without a trailing `/`.
    pub base_url: String,
    /// The model the server runs, trimmed, never empty.
    pub model: String,
    /// The variable the API key is read from at each request; `None`: no key is sent.
    pub api_key_env: Option<String>,
}

/// What `quire config` shows about the provider: no secret, only whether the key is set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EffectiveProvider {
    /// [`Provider::name`].
    pub provider: String,
    /// [`Provider::base_url`].
    pub base_url: String,
    /// [`Provider::model`].
    pub model: String,
    /// The name of the key's variable, never its value.
    pub api_key_env: Option<String>,
    /// Whether that variable holds a key now (a blank value is none).
    pub api_key_set: bool,
}

impl ProviderConfig {
    /// The settings of `config` (from the config file) with the `QUIRE_LLM_*` environment
    /// overrides applied. `Ok(None)` when no provider is configured at all, which callers take
    /// as "answer offline".
    pub fn from_env_and(config: Option<ProviderConfig>) -> Result<Option<Provider>, LlmError> {
        ProviderConfig::resolve(config, |name| std::env::var(name).ok())
    }

    /// The provider the environment alone configures: the preset named by `QUIRE_LLM_PRESET`,
    /// then the other `QUIRE_LLM_*` overrides, as [`from_env_and`](Self::from_env_and) applies
    /// them. `Ok(None)`: nothing is configured (answer offline).
    pub fn from_env() -> Result<Option<Provider>, LlmError> {
        let config = std::env::var(ENV_PRESET)
            .ok()
            .filter(|p| !p.trim().is_empty())
            .map(|preset| ProviderConfig {
                preset: Some(preset.trim().to_string()),
                ..ProviderConfig::default()
            });
        ProviderConfig::from_env_and(config)
    }

    /// [`from_env_and`](Self::from_env_and) with the environment given as a lookup function.
    pub fn resolve(
        config: Option<ProviderConfig>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Provider>, LlmError> {
        let env = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let mut config = config.unwrap_or_default();
        if let Some(url) = env(ENV_BASE_URL) {
            config.base_url = Some(url);
        }
        if let Some(model) = env(ENV_MODEL) {
            config.model = Some(model);
        }
        if config.preset.is_none() && config.base_url.is_none() && config.model.is_none() {
            // A key alone says nothing about where to send requests.
            return Ok(None);
        }
        if env(ENV_API_KEY).is_some() {
            // Store the variable's name, not its value: the key is read again at request time.
            config.api_key_env = Some(ENV_API_KEY.to_string());
        }
        config.into_provider().map(Some)
    }

    fn into_provider(self) -> Result<Provider, LlmError> {
        let preset = match &self.preset {
            Some(name) => Some(preset(name).ok_or_else(|| {
                LlmError::UnknownPreset {
                    name: name.clone(),
                    known: PRESETS
                        .iter()
                        .map(|p| p.name)
                        .collect::<Vec<_>>()
                        .join(", "),
                }
            })?),
            None => None,
        };
        let base_url = self
            .base_url
            .or_else(|| preset.map(|p| p.base_url.to_string()))
            .ok_or_else(|| {
                LlmError::Config(format!(
                    "no base URL: set `preset` or `base_url` under [llm], or {ENV_BASE_URL}"
                ))
            })?;
        let base_url = base_url.trim().trim_end_matches('/').to_string();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(LlmError::Config(format!(
                "the base URL `{base_url}` must start with http:// or https://"
            )));
        }
        let model = self
            .model
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
            .ok_or_else(|| {
                LlmError::Config(format!("no model: set `model` under [llm], or {ENV_MODEL}"))
            })?;
        Ok(Provider {
            name: preset.map_or("openai-compatible", |p| p.name).to_string(),
            base_url,
            model,
            api_key_env: self
                .api_key_env
                .or_else(|| preset.and_then(|p| p.api_key_env).map(str::to_string)),
        })
    }
}

impl Provider {
    /// A provider at `base_url` without a preset or key.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Provider {
        Provider {
            name: "openai-compatible".to_string(),
            base_url: base_url.into().trim_end_matches('/').to_string(),
            model: model.into(),
            api_key_env: None,
        }
    }

    /// Where requests go, and the variable the key is read from at each request.
    pub fn endpoint(&self) -> quire_openai::Endpoint {
        quire_openai::Endpoint::new(self.base_url.clone(), self.api_key_env.clone())
    }

    /// The API key, read now from the variable named by `api_key_env` (an empty value is no key).
    pub fn api_key(&self) -> Option<String> {
        self.endpoint().api_key()
    }

    /// The description `quire config` prints.
    pub fn effective(&self) -> EffectiveProvider {
        EffectiveProvider {
            provider: self.name.clone(),
            base_url: self.base_url.clone(),
            model: self.model.clone(),
            api_key_env: self.api_key_env.clone(),
            api_key_set: self.api_key().is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn resolve(
        config: Option<ProviderConfig>,
        env: &[(&str, &str)],
    ) -> Result<Option<Provider>, LlmError> {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ProviderConfig::resolve(config, |name| env.get(name).cloned())
    }

    fn preset_config(name: &str, model: &str) -> ProviderConfig {
        ProviderConfig {
            preset: Some(name.into()),
            model: Some(model.into()),
            ..ProviderConfig::default()
        }
    }

    #[test]
    fn nothing_configured_is_no_provider() {
        assert_eq!(resolve(None, &[]).unwrap(), None);
        assert_eq!(resolve(None, &[(ENV_API_KEY, "sk-1")]).unwrap(), None);
        assert_eq!(resolve(None, &[(ENV_BASE_URL, "  ")]).unwrap(), None);
    }

    #[test]
    fn presets_fill_in_the_url_and_the_key_variable() {
        let groq = resolve(Some(preset_config("Groq", "llama-3.1-8b-instant")), &[])
            .unwrap()
            .unwrap();
        assert_eq!(groq.name, "groq");
        assert_eq!(groq.base_url, "https://api.groq.com/openai/v1");
        assert_eq!(groq.api_key_env.as_deref(), Some("GROQ_API_KEY"));
        let ollama = resolve(Some(preset_config("ollama", "llama3.2")), &[])
            .unwrap()
            .unwrap();
        assert_eq!(ollama.base_url, "http://127.0.0.1:11434/v1");
        assert_eq!(ollama.api_key_env, None);
    }

    #[test]
    fn environment_overrides_win_and_the_key_override_is_a_variable_name() {
        let provider = resolve(
            Some(preset_config("openai", "gpt-4o-mini")),
            &[
                (ENV_BASE_URL, "http://127.0.0.1:9/v1/"),
                (ENV_MODEL, "tiny"),
                (ENV_API_KEY, "sk-secret"),
            ],
        )
        .unwrap()
        .unwrap();
        assert_eq!(provider.name, "openai");
        assert_eq!(provider.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(provider.model, "tiny");
        assert_eq!(provider.api_key_env.as_deref(), Some(ENV_API_KEY));
        assert!(!format!("{provider:?}").contains("sk-secret"));
    }

    #[test]
    fn the_environment_alone_configures_a_provider() {
        let provider = resolve(
            None,
            &[(ENV_BASE_URL, "http://127.0.0.1:8080/v1"), (ENV_MODEL, "m")],
        )
        .unwrap()
        .unwrap();
        assert_eq!(provider, Provider::new("http://127.0.0.1:8080/v1", "m"));
    }

    #[test]
    fn incomplete_or_wrong_settings_say_what_to_fix() {
        let unknown = resolve(Some(preset_config("openia", "m")), &[]).unwrap_err();
        assert!(
            unknown.to_string().contains("openai, openrouter"),
            "{unknown}"
        );
        let no_model = ProviderConfig {
            preset: Some("ollama".into()),
            ..ProviderConfig::default()
        };
        let err = resolve(Some(no_model), &[]).unwrap_err();
        assert!(err.to_string().contains(ENV_MODEL), "{err}");
        let no_url = ProviderConfig {
            model: Some("m".into()),
            ..ProviderConfig::default()
        };
        let err = resolve(Some(no_url), &[]).unwrap_err();
        assert!(err.to_string().contains("base_url"), "{err}");
        let err = resolve(None, &[(ENV_BASE_URL, "localhost:1"), (ENV_MODEL, "m")]).unwrap_err();
        assert!(err.to_string().contains("http://"), "{err}");
    }

    #[test]
    #[allow(unsafe_code)] // std::env::set_var: this test alone uses the variable
    fn the_effective_description_has_no_secret() {
        let name = "QUIRE_LLM_TEST_EFFECTIVE_KEY";
        // SAFETY: this variable name is used by this test only.
        unsafe { std::env::set_var(name, "sk-effective") };
        let mut provider = Provider::new("https://example.invalid/v1", "m");
        provider.api_key_env = Some(name.into());
        let json = serde_json::to_value(provider.effective()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "provider": "openai-compatible",
                "base_url": "https://example.invalid/v1",
                "model": "m",
                "api_key_env": name,
                "api_key_set": true,
            })
        );
        provider.api_key_env = Some("QUIRE_LLM_TEST_UNSET_KEY".into());
        assert!(!provider.effective().api_key_set);
    }

    #[test]
    fn the_config_table_rejects_unknown_keys() {
        let err = serde_json::from_str::<ProviderConfig>(r#"{"preset":"groq","api_key":"x"}"#);
        assert!(err.is_err());
    }
}
