//! Embeddings from any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Ollama, llama.cpp's
//! server, vLLM…) through `quire-openai`, the client chat uses too: batched requests, its retry
//! policy (429, 5xx and dropped connections; `Retry-After` first), the API key read from its
//! variable at each request; vectors re-normalised and put back in input order.

use std::time::Duration;

use quire_openai::{CancelToken, Endpoint, HttpError, RetryPolicy};
use serde::Deserialize;
use serde_json::json;

use crate::{EmbedError, Embedder, EmbeddingSpace};

/// The variable the key of the embeddings endpoint is read from.
pub const ENV_API_KEY: &str = "QUIRE_EMBED_API_KEY";

/// Settings of a remote embedder.
#[derive(Debug, Clone)]
pub struct RemoteConfig {
    /// Base URL up to `/v1` (e.g. `http://127.0.0.1:11434/v1`).
    pub base_url: String,
    /// The model named in every request.
    pub model: String,
    /// The variable the API key is read from at each request (the key itself is never stored).
    pub api_key_env: Option<String>,
    /// Texts per request (0 counts as 1).
    pub batch_size: usize,
    /// When and how long to wait before trying a failed request again.
    pub retry: RetryPolicy,
    /// Put before every query (e.g. `query: ` for e5 models); part of the [`EmbeddingSpace`].
    pub query_prefix: String,
    /// Put before every passage (e.g. `passage: `); part of the [`EmbeddingSpace`].
    pub passage_prefix: String,
    /// The longest wait for a connection, and for each read of a response.
    pub timeout: Duration,
}

impl RemoteConfig {
    /// Settings for `model` at `base_url`: no key, 64 texts per request, 5 retries, no prefixes,
    /// 60 s timeouts.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        RemoteConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key_env: None,
            batch_size: 64,
            retry: RetryPolicy {
                max_retries: 5,
                ..RetryPolicy::default()
            },
            query_prefix: String::new(),
            passage_prefix: String::new(),
            timeout: Duration::from_secs(60),
        }
    }

    /// From `QUIRE_EMBED_BASE_URL` and `QUIRE_EMBED_MODEL`, if the first is set; the key comes
    /// from `QUIRE_EMBED_API_KEY` when a request is sent.
    pub fn from_env() -> Option<RemoteConfig> {
        let base = std::env::var("QUIRE_EMBED_BASE_URL")
            .ok()
            .filter(|s| !s.is_empty())?;
        let model =
            std::env::var("QUIRE_EMBED_MODEL").unwrap_or_else(|_| "text-embedding-3-small".into());
        let mut config = RemoteConfig::new(base, model);
        config.api_key_env = Some(ENV_API_KEY.to_string());
        Some(config)
    }

    fn endpoint(&self) -> Endpoint {
        Endpoint::new(self.base_url.clone(), self.api_key_env.clone())
    }
}

/// An embedder that calls an OpenAI-compatible server.
pub struct RemoteEmbedder {
    config: RemoteConfig,
    endpoint: Endpoint,
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
        let agent = quire_openai::agent(config.timeout, config.timeout);
        let mut embedder = RemoteEmbedder {
            endpoint: config.endpoint(),
            config,
            agent,
            dimension: 0,
        };
        let probe = embedder.request(&["dimension probe".to_string()])?;
        embedder.dimension = probe.first().map(|v| v.len()).unwrap_or(0);
        if embedder.dimension == 0 {
            return Err(EmbedError::Response(format!(
                "{}: the embeddings endpoint returned an empty vector",
                embedder.endpoint.url("embeddings")
            )));
        }
        Ok(embedder)
    }

    /// One batch, retried by the shared policy.
    fn request(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let body = json!({ "model": self.config.model, "input": texts });
        // Embedding calls are not cancelled midway: a sync stops between batches.
        let response: Response = quire_openai::post_json(
            &self.agent,
            &self.endpoint,
            "embeddings",
            &body,
            &self.config.retry,
            &CancelToken::new(),
        )
        .map_err(|e| match e {
            HttpError::Cancelled => EmbedError::Response("cancelled".into()),
            other => EmbedError::from(other),
        })?;
        let url = self.endpoint.url("embeddings");
        let vectors = order_and_normalise(response, texts.len(), &url)?;
        // Every vector must have the dimension learned at connection: one of another length
        // would be stored and then never compared (silently unsearchable).
        if self.dimension > 0
            && let Some(odd) = vectors.iter().find(|v| v.len() != self.dimension)
        {
            return Err(EmbedError::Response(format!(
                "{url}: returned a vector of {} values, where this model's have {}",
                odd.len(),
                self.dimension
            )));
        }
        Ok(vectors)
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
            v.ok_or_else(|| EmbedError::Response(format!("{url}: no embedding for input {i}")))
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
        v.pop().ok_or(EmbedError::NoVector)
    }
}
