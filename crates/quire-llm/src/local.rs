//! [`LocalLlama`]: a chat model that runs in this process, from a GGUF file, through llama.cpp
//! (the `llama-cpp-2` bindings). Built only with the cargo feature `local-llm`.
//!
//! Nothing leaves the machine and nothing is downloaded at run time: `scripts/fetch-llm.sh` puts
//! a model where [`default_local_model_path`] looks. The prompt is the model's own chat template
//! (read from the GGUF metadata, interpreted by llama.cpp), or ChatML when the file has none
//! that llama.cpp knows.
//!
//! One thread by default. ggml's threads meet at a barrier after every step of the model, so a
//! second thread pays only while another core is free: on an idle 2-core machine it made SmolLM2
//! 1.5 to 1.7 times faster, but with the other core busy (an index build, a compile) generation
//! fell to a fiftieth of the 1-thread speed (`benches/local.rs`). `QUIRE_LLM_THREADS` or
//! [`LocalOptions::threads`] change it.
//!
//! llama.cpp's own log lines are kept off stdout (which may carry JSON or a protocol): they are
//! dropped, except errors, which end up in the [`LlmError`] of the call that caused them. Set
//! `QUIRE_LLM_LOG=1` to see every line on stderr.

use std::ffi::{CStr, c_char, c_void};
use std::fmt;
use std::fs::File;
use std::io::{Read, Write};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

use crate::{CancelToken, ChatModel, ChatRequest, Completion, LlmError, Message, Role, Usage};

/// The file `scripts/fetch-llm.sh smollm2` installs: SmolLM2-135M-Instruct, Q4_1.
pub const DEFAULT_LOCAL_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// How many prompt tokens go to llama.cpp in one decode: small enough that a cancel is noticed
/// within a fraction of a second while a long prompt is read, large enough to keep the matrix
/// code efficient.
const PROMPT_CHUNK: usize = 128;

/// Where the local model is looked for: `$QUIRE_LLM_MODEL_PATH` if set, else
/// `<data dir>/quire/models/SmolLM2-135M-Instruct.Q4_1.gguf`, where `scripts/fetch-llm.sh` puts it.
pub fn default_local_model_path() -> PathBuf {
    if let Some(path) = std::env::var_os("QUIRE_LLM_MODEL_PATH") {
        return PathBuf::from(path);
    }
    dirs::data_local_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("quire")
        .join("models")
        .join(DEFAULT_LOCAL_MODEL_FILE)
}

/// How a [`LocalLlama`] runs. The defaults work on a small machine and make answers repeatable.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalOptions {
    /// CPU threads for reading the prompt and for generating.
    pub threads: u32,
    /// The largest context (prompt and answer) in tokens. The context of each call is sized to
    /// what it needs, up to this and up to what the model was trained for.
    pub context_tokens: u32,
    /// New tokens at most, when the request does not say.
    pub max_tokens: u32,
    /// Sampling temperature when the request does not say; 0 picks the likeliest token (greedy).
    pub temperature: f32,
    /// The sampler's seed when the temperature is above 0: the same seed gives the same answer.
    pub seed: u32,
    /// How much a token already among the last [`REPEAT_WINDOW`] tokens is held back (1 turns
    /// it off). Small models decoding greedily otherwise repeat one sentence until the limit.
    pub repeat_penalty: f32,
}

/// The tokens that [`LocalOptions::repeat_penalty`] looks back over.
pub const REPEAT_WINDOW: i32 = 64;

impl Default for LocalOptions {
    fn default() -> LocalOptions {
        LocalOptions {
            threads: 1,
            context_tokens: 4096,
            max_tokens: 512,
            // Answers grounded in notes should be faithful, not creative.
            temperature: 0.0,
            seed: 42,
            repeat_penalty: 1.2,
        }
    }
}

impl LocalOptions {
    /// The defaults with `QUIRE_LLM_THREADS` applied.
    pub fn from_env() -> Result<LocalOptions, LlmError> {
        let mut options = LocalOptions::default();
        if let Ok(value) = std::env::var("QUIRE_LLM_THREADS") {
            options.threads = value
                .trim()
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    LlmError::Config(format!(
                        "QUIRE_LLM_THREADS must be a positive whole number, not `{value}`"
                    ))
                })?;
        }
        Ok(options)
    }
}

/// Where the time of one generation went, for benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LocalTimings {
    /// Tokens of the prompt, chat template included.
    pub prompt_tokens: usize,
    /// Reading the prompt (every decode up to the first sampled token).
    pub prompt_seconds: f64,
    /// Tokens decoded after the prompt.
    pub generated_tokens: usize,
    /// Sampling, detokenizing and decoding those tokens.
    pub generation_seconds: f64,
}

impl LocalTimings {
    /// Prompt tokens read per second (0 when no time was measured).
    pub fn prompt_tokens_per_second(&self) -> f64 {
        per_second(self.prompt_tokens, self.prompt_seconds)
    }

    /// Tokens generated per second (0 when no time was measured).
    pub fn generation_tokens_per_second(&self) -> f64 {
        per_second(self.generated_tokens, self.generation_seconds)
    }
}

fn per_second(count: usize, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// A GGUF chat model run in-process by llama.cpp.
///
/// ```no_run
/// use quire_llm::{CancelToken, ChatModel, ChatRequest, Message};
/// use quire_llm::local::{LocalLlama, LocalOptions, default_local_model_path};
///
/// let model = LocalLlama::load(default_local_model_path(), LocalOptions::from_env()?)?;
/// let request = ChatRequest::new(vec![Message::user("Name a colour.")]);
/// let answer = model.stream(&request, &CancelToken::new(), &mut |piece| print!("{piece}"))?;
/// println!("\n{:?}", answer.usage);
/// # Ok::<(), quire_llm::LlmError>(())
/// ```
pub struct LocalLlama {
    model: LlamaModel,
    path: PathBuf,
    options: LocalOptions,
    template: LlamaChatTemplate,
    /// llama.cpp may write to the model while it creates a context, so contexts are created one
    /// at a time; generations themselves may run side by side.
    creating_context: Mutex<()>,
}

impl fmt::Debug for LocalLlama {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalLlama")
            .field("path", &self.path)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl LocalLlama {
    /// Loads the GGUF model at `path` (memory-mapped: loading is quick and the pages are shared).
    pub fn load(path: impl AsRef<Path>, options: LocalOptions) -> Result<LocalLlama, LlmError> {
        let path = path.as_ref().to_path_buf();
        check_gguf(&path)?;
        let backend = backend()?;
        take_llama_errors();
        let model = LlamaModel::load_from_file(backend, &path, &LlamaModelParams::default())
            .map_err(|error| {
                local_error(
                    &path,
                    format!(
                        "llama.cpp could not load the model: {}",
                        llama_reason(error)
                    ),
                )
            })?;
        let template = chat_template(&model)
            .map_err(|error| local_error(&path, format!("unusable chat template: {error}")))?;
        Ok(LocalLlama {
            model,
            path,
            options,
            template,
            creating_context: Mutex::new(()),
        })
    }

    /// The GGUF file the model was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How this model runs.
    pub fn options(&self) -> &LocalOptions {
        &self.options
    }

    /// The prompt the model reads for `messages`: its chat template applied, ending where the
    /// assistant's answer begins.
    pub fn render_prompt(&self, messages: &[Message]) -> Result<String, LlmError> {
        let chat = messages
            .iter()
            .map(|message| {
                // A NUL cannot cross into C; it carries no meaning in a chat.
                let content = message.content.replace('\0', "");
                LlamaChatMessage::new(role_name(message.role).to_owned(), content)
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| self.error(format!("unusable message: {error}")))?;
        self.model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|error| self.error(format!("cannot apply the chat template: {error}")))
    }

    /// How many tokens `text` is for this model (special tokens such as `<|im_start|>` count as
    /// one each).
    pub fn count_tokens(&self, text: &str) -> usize {
        self.tokenize(text).len()
    }

    fn tokenize(&self, text: &str) -> Vec<LlamaToken> {
        self.model.vocab().tokenize(text.as_bytes(), true, true)
    }

    /// [`ChatModel::stream`], with the time spent reading the prompt and generating.
    pub fn stream_with_timings(
        &self,
        request: &ChatRequest,
        cancel: &CancelToken,
        on_token: &mut dyn FnMut(&str),
    ) -> Result<(Completion, LocalTimings), LlmError> {
        let started = Instant::now();
        let cancelled = |partial: String| LlmError::Cancelled { partial };
        if cancel.is_cancelled() {
            return Err(cancelled(String::new()));
        }
        let prompt = self.tokenize(&self.render_prompt(&request.messages)?);
        let limit = self.options.context_tokens.min(self.model.n_ctx_train()) as usize;
        if prompt.len() >= limit {
            return Err(self.error(format!(
                "the prompt is {} tokens, more than the context of {limit} tokens allows",
                prompt.len()
            )));
        }
        let wanted = request.max_tokens.unwrap_or(self.options.max_tokens) as usize;
        let max_new = wanted.min(limit - prompt.len());
        let mut context = self.new_context(prompt.len() + max_new)?;
        let mut sampler = self.sampler(request);
        let mut timings = LocalTimings {
            prompt_tokens: prompt.len(),
            ..LocalTimings::default()
        };

        let reading = Instant::now();
        let mut batch = LlamaBatch::new(PROMPT_CHUNK, 1);
        let mut position = 0;
        for chunk in prompt.chunks(PROMPT_CHUNK) {
            if cancel.is_cancelled() {
                return Err(cancelled(String::new()));
            }
            batch.clear();
            for &token in chunk {
                let last = position + 1 == prompt.len();
                self.add(&mut batch, token, position, last)?;
                position += 1;
            }
            self.decode(&mut context, &mut batch)?;
        }
        timings.prompt_seconds = reading.elapsed().as_secs_f64();

        let generating = Instant::now();
        let vocab = self.model.vocab();
        let mut text = String::new();
        let mut pieces = Utf8Pieces::default();
        let mut piece = Vec::new();
        let mut logits_at = batch.n_tokens() - 1;
        let finish_reason = loop {
            if max_new == 0 {
                break "length";
            }
            let token = sampler.sample(&context, logits_at);
            if vocab.is_eog(token) {
                break "stop";
            }
            timings.generated_tokens += 1;
            piece.clear();
            // `special: false`: control tokens are not text for the reader.
            vocab.token_to_piece_into(token, &mut piece, false, None);
            let ready = pieces.push(&piece);
            if !ready.is_empty() {
                on_token(&ready);
                text.push_str(&ready);
            }
            if cancel.is_cancelled() {
                return Err(cancelled(text));
            }
            if timings.generated_tokens == max_new {
                // Nothing will follow this token: no need to decode it.
                break "length";
            }
            batch.clear();
            self.add(&mut batch, token, position, true)?;
            position += 1;
            self.decode(&mut context, &mut batch)?;
            logits_at = 0;
        };
        let rest = pieces.finish();
        if !rest.is_empty() {
            on_token(&rest);
            text.push_str(&rest);
        }
        timings.generation_seconds = generating.elapsed().as_secs_f64();
        let completion = Completion {
            text,
            usage: Some(Usage {
                prompt_tokens: prompt.len() as u64,
                completion_tokens: timings.generated_tokens as u64,
            }),
            finish_reason: Some(finish_reason.to_owned()),
            seconds: started.elapsed().as_secs_f64(),
        };
        Ok((completion, timings))
    }

    /// A context that holds `tokens` tokens.
    fn new_context(&self, tokens: usize) -> Result<LlamaContext<'_>, LlmError> {
        let n_ctx = u32::try_from(tokens)
            .ok()
            .and_then(NonZeroU32::new)
            .unwrap_or(NonZeroU32::MIN);
        let threads = i32::try_from(self.options.threads.max(1)).unwrap_or(1);
        let params = LlamaContextParams::default()
            .with_n_ctx(Some(n_ctx))
            .with_n_batch(PROMPT_CHUNK as u32)
            .with_n_ubatch(PROMPT_CHUNK as u32)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let _one_at_a_time = self
            .creating_context
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        take_llama_errors();
        self.model.new_context(backend()?, params).map_err(|error| {
            self.error(format!("cannot create a context: {}", llama_reason(error)))
        })
    }

    fn sampler(&self, request: &ChatRequest) -> LlamaSampler {
        let temperature = request.temperature.unwrap_or(self.options.temperature);
        let penalty = self.options.repeat_penalty;
        let mut chain = Vec::new();
        // A structured answer: only tokens that keep the text valid JSON (the caller validates
        // the schema). A grammar llama.cpp cannot parse is a bug of ours: answer without it.
        if request.response_format.is_some()
            && let Ok(grammar) = LlamaSampler::grammar(&self.model, JSON_GRAMMAR, "root")
        {
            chain.push(grammar);
        }
        if penalty.is_finite() && penalty > 0.0 && penalty != 1.0 {
            chain.push(LlamaSampler::penalties(
                self.model.n_vocab(),
                REPEAT_WINDOW,
                penalty,
                0.0,
                0.0,
            ));
        }
        if temperature.is_nan() || temperature <= 0.0 {
            chain.push(LlamaSampler::greedy());
        } else {
            // llama.cpp's usual chain: keep the likely tokens, then draw with a fixed seed.
            chain.extend([
                LlamaSampler::top_k(40),
                LlamaSampler::top_p(0.95, 1),
                LlamaSampler::temp(temperature),
                LlamaSampler::dist(self.options.seed),
            ]);
        }
        LlamaSampler::chain_simple(chain)
    }

    fn add(
        &self,
        batch: &mut LlamaBatch,
        token: LlamaToken,
        position: usize,
        logits: bool,
    ) -> Result<(), LlmError> {
        let position = i32::try_from(position)
            .map_err(|_| self.error("the context is longer than llama.cpp can address"))?;
        batch
            .add(token, position, &[0], logits)
            .map_err(|error| self.error(format!("cannot queue a token: {error}")))
    }

    fn decode(&self, context: &mut LlamaContext, batch: &mut LlamaBatch) -> Result<(), LlmError> {
        take_llama_errors();
        context
            .decode(batch)
            .map_err(|error| self.error(format!("decoding failed: {}", llama_reason(error))))
    }

    fn error(&self, reason: impl Into<String>) -> LlmError {
        local_error(&self.path, reason)
    }
}

/// JSON as a llama.cpp (GBNF) grammar: an object at the top, whitespace bounded so a small
/// model cannot loop on it. Written here because the `common` feature of llama-cpp-2 (its
/// schema-to-grammar converter) would pull in more of llama.cpp's build.
const JSON_GRAMMAR: &str = r#"
root   ::= object
value  ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( member ( "," ws member )* )? "}" ws
member ::= string ":" ws value
array  ::= "[" ws ( value ( "," ws value )* )? "]" ws
string ::= "\"" char* "\"" ws
char   ::= [^"\\\x00-\x1f] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] )
number ::= "-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )? ws
ws     ::= [ \t\n]{0,20}
"#;

impl ChatModel for LocalLlama {
    fn name(&self) -> String {
        let file = self.path.file_name().unwrap_or(self.path.as_os_str());
        format!("{} (local)", file.to_string_lossy())
    }

    fn context_tokens(&self) -> Option<usize> {
        Some(self.options.context_tokens.min(self.model.n_ctx_train()) as usize)
    }

    fn stream(
        &self,
        request: &ChatRequest,
        cancel: &CancelToken,
        on_token: &mut dyn FnMut(&str),
    ) -> Result<Completion, LlmError> {
        self.stream_with_timings(request, cancel, on_token)
            .map(|(completion, _)| completion)
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

fn local_error(path: &Path, reason: impl Into<String>) -> LlmError {
    LlmError::Local {
        model: path.display().to_string(),
        reason: reason.into(),
    }
}

/// Fails with a readable reason unless `path` is a readable GGUF file (llama.cpp would only
/// say that loading failed).
fn check_gguf(path: &Path) -> Result<(), LlmError> {
    let mut magic = [0u8; 4];
    let read = File::open(path).and_then(|mut file| file.read_exact(&mut magic));
    match read {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(local_error(
            path,
            "no such file (fetch the default model with `scripts/fetch-llm.sh`, or set \
             QUIRE_LLM_MODEL_PATH to a GGUF file)",
        )),
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => Err(local_error(
            path,
            "not a GGUF model (the file is too short)",
        )),
        Err(error) => Err(local_error(path, format!("cannot read: {error}"))),
        Ok(()) if &magic != b"GGUF" => Err(local_error(
            path,
            "not a GGUF model (the file does not start with `GGUF`)",
        )),
        Ok(()) => Ok(()),
    }
}

/// The GGUF's own chat template when llama.cpp can apply it, else ChatML (what SmolLM2 and
/// Qwen2.5 use anyway).
fn chat_template(model: &LlamaModel) -> Result<LlamaChatTemplate, std::ffi::NulError> {
    let probe = LlamaChatMessage::new("user".to_owned(), "hi".to_owned());
    if let (Ok(template), Ok(probe)) = (model.chat_template(None), probe)
        && model
            .apply_chat_template(&template, std::slice::from_ref(&probe), true)
            .is_ok()
    {
        return Ok(template);
    }
    LlamaChatTemplate::new("chatml")
}

/// Turns token bytes into text as they come. A token may end in the middle of a UTF-8
/// character (byte-level BPE splits emoji and CJK characters across tokens); those bytes wait
/// for the next token instead of becoming U+FFFD. Bytes that can never be UTF-8 become U+FFFD.
#[derive(Debug, Default)]
struct Utf8Pieces {
    pending: Vec<u8>,
}

impl Utf8Pieces {
    /// Adds `bytes` and returns the text that is now complete.
    fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut text = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(complete) => {
                    text.push_str(complete);
                    self.pending.clear();
                    return text;
                }
                Err(error) => {
                    let valid = error.valid_up_to();
                    text.push_str(&String::from_utf8_lossy(&self.pending[..valid]));
                    match error.error_len() {
                        // An unfinished character at the end: keep it for the next token.
                        None => {
                            self.pending.drain(..valid);
                            return text;
                        }
                        Some(invalid) => {
                            text.push(char::REPLACEMENT_CHARACTER);
                            self.pending.drain(..valid + invalid);
                        }
                    }
                }
            }
        }
    }

    /// What is left when the answer ends (an unfinished character becomes U+FFFD).
    fn finish(&mut self) -> String {
        let rest = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        rest
    }
}

/// llama.cpp's backend, initialised once per process (a second `init` is an error).
fn backend() -> Result<&'static LlamaBackend, LlmError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            LOG_EVERYTHING.store(
                std::env::var_os("QUIRE_LLM_LOG").is_some_and(|v| !v.is_empty() && v != "0"),
                Ordering::Relaxed,
            );
            // SAFETY: the callback is a plain function that lives as long as the process and
            // ignores its user-data pointer. llama.cpp passes the callback on to ggml.
            unsafe { llama_cpp_sys_2::llama_log_set(Some(on_llama_log), std::ptr::null_mut()) };
            LlamaBackend::init().map_err(|error| error.to_string())
        })
        .as_ref()
        .map_err(|reason| LlmError::Local {
            model: "llama.cpp".to_owned(),
            reason: format!("cannot initialise the backend: {reason}"),
        })
}

/// `QUIRE_LLM_LOG` is set: every llama.cpp log line goes to stderr.
static LOG_EVERYTHING: AtomicBool = AtomicBool::new(false);
/// The level of the last line, which continuation pieces (`GGML_LOG_LEVEL_CONT`) inherit.
static LAST_LEVEL: AtomicU32 = AtomicU32::new(0);
/// llama.cpp's error lines since the last [`take_llama_errors`].
static LLAMA_ERRORS: Mutex<String> = Mutex::new(String::new());
/// Enough for a few error lines; a flood of them is cut.
const MAX_LLAMA_ERRORS: usize = 4096;

unsafe extern "C" fn on_llama_log(
    level: llama_cpp_sys_2::ggml_log_level,
    text: *const c_char,
    _user_data: *mut c_void,
) {
    if text.is_null() {
        return;
    }
    // SAFETY: llama.cpp passes a NUL-terminated string that lives for this call.
    let text = unsafe { CStr::from_ptr(text) }.to_string_lossy();
    let level = if level == llama_cpp_sys_2::GGML_LOG_LEVEL_CONT {
        LAST_LEVEL.load(Ordering::Relaxed)
    } else {
        LAST_LEVEL.store(level, Ordering::Relaxed);
        level
    };
    if LOG_EVERYTHING.load(Ordering::Relaxed) {
        // Nothing to do if stderr is gone; never panic across the C boundary.
        let _ = std::io::stderr().write_all(text.as_bytes());
    }
    if level == llama_cpp_sys_2::GGML_LOG_LEVEL_ERROR
        && let Ok(mut errors) = LLAMA_ERRORS.lock()
        && errors.len() < MAX_LLAMA_ERRORS
    {
        errors.push_str(&text);
    }
}

/// Empties and returns what llama.cpp logged as errors since the last call.
fn take_llama_errors() -> String {
    match LLAMA_ERRORS.lock() {
        Ok(mut errors) => std::mem::take(&mut *errors),
        Err(_) => String::new(),
    }
}

/// A llama.cpp failure with the reason llama.cpp logged, when it logged one.
fn llama_reason(error: impl fmt::Display) -> String {
    let logged = take_llama_errors();
    let logged = logged.split_whitespace().collect::<Vec<_>>().join(" ");
    if logged.is_empty() {
        error.to_string()
    } else {
        format!("{error} ({logged})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream_pieces(chunks: &[&[u8]]) -> Vec<String> {
        let mut pieces = Utf8Pieces::default();
        let mut out: Vec<String> = chunks.iter().map(|c| pieces.push(c)).collect();
        out.push(pieces.finish());
        out
    }

    #[test]
    fn a_character_split_across_tokens_waits_for_its_last_byte() {
        let crab = "🦀".as_bytes(); // four bytes
        let out = stream_pieces(&[b"a ", &crab[..1], &crab[1..3], &crab[3..], b"!"]);
        assert_eq!(out, ["a ", "", "", "🦀", "!", ""]);
    }

    #[test]
    fn bytes_that_are_never_utf8_become_replacement_characters() {
        let out = stream_pieces(&[b"x\xffy", b"\xe2\x82"]);
        assert_eq!(out, ["x\u{FFFD}y", "", "\u{FFFD}"]);
    }
}
