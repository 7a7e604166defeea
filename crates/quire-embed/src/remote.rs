//! Embeddings from any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, llama.cpp's
//! server, vLLM…): batched requests, retries with backoff on 429 and 5xx (honouring
//! `Retry-After`), vectors re-normalised and put back in input order.

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use crate::{EmbedError, Embedder, EmbeddingSpace};

/// Settings of a remote embedder.
#[derive(Debug, Clone)]
pub struct RemoteConfig {
    /// Base URL up to `/v1` (e.g. `http://127.0.0.1:11434/v1`).
    pub base_url: String,
    pub model: String,
    /// The API key (read from the environment by the caller; never stored in config files).
    pub api_key: Option<String>,
    pub batch_size: usize,
    pub max_retries: u32,
    pub query_prefix: String,
    pub passage_prefix: String,
    pub timeout: Duration,
}

impl RemoteConfig {
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        RemoteConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            batch_size: 64,
            max_retries: 5,
            query_prefix: String::new(),
            passage_prefix: String::new(),
            timeout: Duration::from_secs(60),
        }
    }

    /// From `QUIRE_EMBED_BASE_URL`, `QUIRE_EMBED_MODEL` and `QUIRE_EMBED_API_KEY`, if the first is set.
    pub fn from_env() -> Option<RemoteConfig> {
        let base = std::env::var("QUIRE_EMBED_BASE_URL")
            .ok()
            .filter(|s| !s.is_empty())?;
        let model =
            std::env::var("QUIRE_EMBED_MODEL").unwrap_or_else(|_| "text-embedding-3-small".into());
        let mut config = RemoteConfig::new(base, model);
        config.api_key = std::env::var("QUIRE_EMBED_API_KEY")
            .ok()
            .filter(|s| !s.is_empty());
        Some(config)
    }
}

/// An embedder that calls an OpenAI-compatible server.
pub struct RemoteEmbedder {
    config: RemoteConfig,
    agent: ureq::Agent,
    dimension: usize,
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: usize,
    embedding: Vec<f32>,
}

impl RemoteEmbedder {
    /// Connects and learns the vector dimension with one small request.
    pub fn connect(config: RemoteConfig) -> Result<RemoteEmbedder, EmbedError> {
        let agent = ureq::Agent::new_with_config(
            ureq::Agent::config_builder()
                .timeout_global(Some(config.timeout))
                .http_status_as_error(false)
                .build(),
        );
        let mut embedder = RemoteEmbedder {
            config,
            agent,
            dimension: 0,
        };
        let probe = embedder.request(&["dimension probe".to_string()])?;
        embedder.dimension = probe.first().map(|v| v.len()).unwrap_or(0);
        if embedder.dimension == 0 {
            return Err(EmbedError::Model(
                "the embeddings endpoint returned an empty vector".into(),
            ));
        }
        Ok(embedder)
    }

    /// One batch, with retries on 429 and 5xx.
    fn request(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let url = format!("{}/embeddings", self.config.base_url.trim_end_matches('/'));
        let body = json!({ "model": self.config.model, "input": texts });
        let mut attempt = 0;
        loop {
            let mut request = self
                .agent
                .post(&url)
                .header("Content-Type", "application/json");
            if let Some(key) = &self.config.api_key {
                request = request.header("Authorization", &format!("Bearer {key}"));
            }
            let result = request.send_json(&body);
            let retry_after = match result {
                Ok(mut response) => {
                    let status = response.status().as_u16();
                    if status == 200 {
                        let parsed: Response = response.body_mut().read_json().map_err(|e| {
                            EmbedError::Model(format!("{url}: unreadable response: {e}"))
                        })?;
                        return order_and_normalise(parsed, texts.len(), &url);
                    }
                    let retryable = status == 429 || status >= 500;
                    if !retryable || attempt >= self.config.max_retries {
                        let text = response.body_mut().read_to_string().unwrap_or_default();
                        return Err(EmbedError::Model(format!(
                            "{url}: HTTP {status}: {}",
                            text.chars().take(300).collect::<String>()
                        )));
                    }
                    response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<f64>().ok())
                        .map(|s| Duration::from_secs_f64(s.clamp(0.0, 60.0)))
                }
                Err(e) => {
                    if attempt >= self.config.max_retries {
                        return Err(EmbedError::Model(format!("{url}: {e}")));
                    }
                    None
                }
            };
            let backoff = retry_after
                .unwrap_or_else(|| Duration::from_millis(250 * 2u64.pow(attempt.min(6))));
            std::thread::sleep(backoff);
            attempt += 1;
        }
    }

    fn embed_all(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.config.batch_size.max(1)) {
            out.extend(self.request(batch)?);
        }
        Ok(out)
    }
}

fn order_and_normalise(
    response: Response,
    expected: usize,
    url: &str,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; expected];
    for item in response.data {
        if let Some(slot) = slots.get_mut(item.index) {
            let norm = item
                .embedding
                .iter()
                .map(|x| x * x)
                .sum::<f32>()
                .sqrt()
                .max(1e-12);
            *slot = Some(item.embedding.into_iter().map(|x| x / norm).collect());
        }
    }
    slots
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            v.ok_or_else(|| EmbedError::Model(format!("{url}: no embedding for input {i}")))
        })
        .collect()
}

impl Embedder for RemoteEmbedder {
    fn space(&self) -> EmbeddingSpace {
        EmbeddingSpace {
            provider: format!("openai-compatible {}", self.config.base_url),
            model: self.config.model.clone(),
            dimension: self.dimension,
            query_prefix: self.config.query_prefix.clone(),
            passage_prefix: self.config.passage_prefix.clone(),
        }
    }

    fn embed_passages(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_all(
            texts
                .iter()
                .map(|t| format!("{}{t}", self.config.passage_prefix))
                .collect(),
        )
    }

    fn embed_query(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut v = self.embed_all(vec![format!("{}{text}", self.config.query_prefix)])?;
        v.pop().ok_or_else(|| EmbedError::Model("no vector".into()))
    }
}
