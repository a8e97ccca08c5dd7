//! Providers: requests built as data and response bodies parsed, following each provider's public API
//! reference. The app sends the [`HttpRequest`] with `fetch` and hands status, headers and body text to
//! [`parse_response`]; nothing here touches the network.
//!
//! | provider | endpoint | key header | reference |
//! |---|---|---|---|
//! | [`Provider::OpenAiCompatible`] | `POST {base_url}/chat/completions` (base URL ends in `/v1`) | `Authorization: Bearer KEY` (omitted when the key is empty, for local servers) | <https://platform.openai.com/docs/api-reference/chat/create> |
//! | [`Provider::Anthropic`] | `POST {base_url}/v1/messages` | `x-api-key: KEY`, `anthropic-version: 2023-06-01`, `anthropic-dangerous-direct-browser-access: true` | <https://docs.anthropic.com/en/api/messages> |
//! | [`Provider::Gemini`] | `POST {base_url}/v1beta/models/{model}:generateContent` | `x-goog-api-key: KEY` (never in the URL) | <https://ai.google.dev/api/generate-content> |
//!
//! The OpenAI-compatible shape also covers OpenRouter (`https://openrouter.ai/api/v1`), Together
//! (`https://api.together.xyz/v1`), vLLM and llama.cpp servers (`http://127.0.0.1:8000/v1`) and Ollama
//! (`http://localhost:11434/v1`). It sends `max_tokens`, the field those servers read (OpenAI documents
//! it as deprecated in favour of `max_completion_tokens` but still accepts it for chat models).
//!
//! Error bodies (each provider's documented shape; the provider's message is kept and shown):
//! OpenAI `{"error": {"message", "type", "param", "code"}}`
//! (<https://platform.openai.com/docs/guides/error-codes>), Anthropic
//! `{"type": "error", "error": {"type", "message"}}` (<https://docs.anthropic.com/en/api/errors>),
//! Gemini `{"error": {"code", "message", "status", "details"}}`
//! (<https://ai.google.dev/gemini-api/docs/troubleshooting>, Google's AIP-193 error model). vLLM's
//! `{"object": "error", "message", "type", "code"}` and FastAPI's `{"detail": …}` are read too.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clip;
use crate::http_date::parse_http_date;

/// Default base URL of [`Provider::OpenAiCompatible`] (OpenAI itself; the `/v1` is part of it).
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// Default base URL of [`Provider::Anthropic`] (without `/v1`, as in Anthropic's SDKs).
pub const ANTHROPIC_DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// Default base URL of [`Provider::Gemini`] (without the API version).
pub const GEMINI_DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com";
/// The `anthropic-version` header value sent to Anthropic (<https://docs.anthropic.com/en/api/versioning>).
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Header names whose values are credentials: masked in `Debug` of [`HttpRequest`] and in
/// [`HttpRequest::redacted`]. Compared without regard to case.
pub const SECRET_HEADERS: [&str; 3] = ["authorization", "x-api-key", "x-goog-api-key"];
/// Longest provider message kept in a [`ProviderError`], in characters (longer ones end in `…`).
pub const MAX_MESSAGE_CHARS: usize = 1_000;

/// An API key. `Debug` and `Display` print `***`; it implements no serde trait, so no serialised form
/// of any type can contain it. Its bytes are overwritten when it is dropped (best effort: copies the
/// browser made, e.g. inside `fetch`, are outside Rust's reach).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct SecretKey(String);

impl SecretKey {
    /// Wraps a key as typed by the user (surrounding whitespace removed).
    pub fn new(key: impl Into<String>) -> Self {
        let key: String = key.into();
        let trimmed = key.trim();
        if trimmed.len() == key.len() {
            SecretKey(key)
        } else {
            SecretKey(trimmed.to_string())
        }
    }

    /// The key itself, for the one place that needs it: the request header ([`build_request`]).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether no key was given (local OpenAI-compatible servers need none).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A masked form for the UI: `••••` plus the last four characters when the key has at least 16
    /// characters (as provider dashboards show keys), else `••••`; `(none)` for an empty key.
    pub fn masked(&self) -> String {
        let n = self.0.chars().count();
        if n == 0 {
            "(none)".to_string()
        } else if n >= 16 {
            let tail: String = self.0.chars().skip(n - 4).collect();
            format!("••••{tail}")
        } else {
            "••••".to_string()
        }
    }

    /// `text` with every occurrence of the key replaced by `***` (for provider messages that echo it).
    pub fn scrub(&self, text: &str) -> String {
        if self.0.len() < 4 || !text.contains(self.0.as_str()) {
            text.to_string()
        } else {
            text.replace(self.0.as_str(), "***")
        }
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl Drop for SecretKey {
    fn drop(&mut self) {
        let mut bytes = std::mem::take(&mut self.0).into_bytes();
        bytes.iter_mut().for_each(|b| *b = 0);
        std::hint::black_box(&bytes);
    }
}

/// The three request/response shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI Chat Completions and servers that copy it.
    #[serde(rename = "openai_compatible")]
    OpenAiCompatible,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini `generateContent`.
    Gemini,
}

impl ProviderKind {
    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::OpenAiCompatible => "OpenAI-compatible",
            ProviderKind::Anthropic => "Anthropic",
            ProviderKind::Gemini => "Gemini",
        }
    }

    /// The provider's default base URL.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAiCompatible => OPENAI_DEFAULT_BASE_URL,
            ProviderKind::Anthropic => ANTHROPIC_DEFAULT_BASE_URL,
            ProviderKind::Gemini => GEMINI_DEFAULT_BASE_URL,
        }
    }
}

/// A provider endpoint: its shape, base URL and model name. Holds no key (keys are passed to
/// [`build_request`] separately), so it may be persisted and exported. JSON:
/// `{"kind": "openai_compatible" | "anthropic" | "gemini", "base_url": "…", "model": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", deny_unknown_fields)]
pub enum Provider {
    /// OpenAI Chat Completions. `base_url` includes the version path, e.g. `https://api.openai.com/v1`
    /// or `http://127.0.0.1:8000/v1`; the request goes to `{base_url}/chat/completions`.
    #[serde(rename = "openai_compatible")]
    OpenAiCompatible {
        /// E.g. `https://api.openai.com/v1`.
        base_url: String,
        /// The `model` field of the body.
        model: String,
    },
    /// Anthropic Messages. `base_url` without `/v1`, e.g. `https://api.anthropic.com`.
    #[serde(rename = "anthropic")]
    Anthropic {
        /// E.g. `https://api.anthropic.com`.
        base_url: String,
        /// The `model` field of the body.
        model: String,
    },
    /// Google Gemini. `base_url` without the API version, e.g.
    /// `https://generativelanguage.googleapis.com`; `model` with or without the `models/` prefix.
    #[serde(rename = "gemini")]
    Gemini {
        /// E.g. `https://generativelanguage.googleapis.com`.
        base_url: String,
        /// The model in the URL path, e.g. `gemini-2.0-flash`.
        model: String,
    },
}

impl Provider {
    /// OpenAI itself ([`OPENAI_DEFAULT_BASE_URL`]) with `model`.
    pub fn openai(model: impl Into<String>) -> Self {
        Provider::OpenAiCompatible {
            base_url: OPENAI_DEFAULT_BASE_URL.into(),
            model: model.into(),
        }
    }

    /// Anthropic ([`ANTHROPIC_DEFAULT_BASE_URL`]) with `model`.
    pub fn anthropic(model: impl Into<String>) -> Self {
        Provider::Anthropic {
            base_url: ANTHROPIC_DEFAULT_BASE_URL.into(),
            model: model.into(),
        }
    }

    /// Gemini ([`GEMINI_DEFAULT_BASE_URL`]) with `model`.
    pub fn gemini(model: impl Into<String>) -> Self {
        Provider::Gemini {
            base_url: GEMINI_DEFAULT_BASE_URL.into(),
            model: model.into(),
        }
    }

    /// Which request/response shape.
    pub fn kind(&self) -> ProviderKind {
        match self {
            Provider::OpenAiCompatible { .. } => ProviderKind::OpenAiCompatible,
            Provider::Anthropic { .. } => ProviderKind::Anthropic,
            Provider::Gemini { .. } => ProviderKind::Gemini,
        }
    }

    /// The configured base URL.
    pub fn base_url(&self) -> &str {
        match self {
            Provider::OpenAiCompatible { base_url, .. }
            | Provider::Anthropic { base_url, .. }
            | Provider::Gemini { base_url, .. } => base_url,
        }
    }

    /// The model name sent to the provider.
    pub fn model(&self) -> &str {
        match self {
            Provider::OpenAiCompatible { model, .. }
            | Provider::Anthropic { model, .. }
            | Provider::Gemini { model, .. } => model,
        }
    }

    /// Whether a call without a key is refused before it is sent (Anthropic and Gemini always need one;
    /// OpenAI-compatible local servers do not).
    pub fn requires_key(&self) -> bool {
        !matches!(self, Provider::OpenAiCompatible { .. })
    }

    /// `Kind · model`, for tables and level labels.
    pub fn label(&self) -> String {
        format!("{} · {}", self.kind().name(), self.model())
    }

    /// The full request URL (no key in it, for any provider).
    ///
    /// # Errors
    /// [`RequestError::EmptyModel`], [`RequestError::BadBaseUrl`].
    pub fn endpoint(&self) -> Result<String, RequestError> {
        let model = self.model().trim();
        if model.is_empty() {
            return Err(RequestError::EmptyModel);
        }
        let base = checked_base_url(self.base_url())?;
        Ok(match self {
            Provider::OpenAiCompatible { .. } => format!("{base}/chat/completions"),
            Provider::Anthropic { .. } => format!("{base}/v1/messages"),
            Provider::Gemini { .. } => {
                let name = model.strip_prefix("models/").unwrap_or(model);
                format!(
                    "{base}/v1beta/models/{}:generateContent",
                    percent_encode_segment(name)
                )
            }
        })
    }
}

/// The two messages of one call. `system` may be empty (then no system message is sent).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Prompt {
    /// System prompt (the condition, seed Table 6); empty = none.
    pub system: String,
    /// The user message (the template with the statement filled in).
    pub user: String,
}

/// Sampling parameters of a call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Sampling temperature, `0 ≤ t ≤ 2` (Anthropic: `≤ 1`). Seed `000_…` §4.3 evaluates "at
    /// temperature zero", the default.
    pub temperature: f64,
    /// Upper bound on generated tokens, at least 1 (OpenAI `max_tokens`, Anthropic `max_tokens`,
    /// Gemini `generationConfig.maxOutputTokens`).
    pub max_tokens: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            temperature: 0.0,
            max_tokens: 256,
        }
    }
}

/// One HTTP request, ready for `fetch`. Its `Debug` masks the values of [`SECRET_HEADERS`]; it has no
/// serde impl (it carries the key). Persist [`HttpRequest::redacted`] instead, or nothing: the plan
/// rebuilds every request.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// Always `POST`.
    pub method: String,
    /// Full URL; never contains the key.
    pub url: String,
    /// Header name (lower case) and value, in the order sent.
    pub headers: Vec<(String, String)>,
    /// JSON body text.
    pub body: String,
}

impl HttpRequest {
    /// A copy without credentials: the values of [`SECRET_HEADERS`] become `***`.
    pub fn redacted(&self) -> RedactedRequest {
        RedactedRequest {
            method: self.method.clone(),
            url: self.url.clone(),
            headers: self
                .headers
                .iter()
                .map(|(name, value)| {
                    let value = if is_secret_header(name) {
                        "***".to_string()
                    } else {
                        value.clone()
                    };
                    (name.clone(), value)
                })
                .collect(),
            body: self.body.clone(),
        }
    }

    /// The value of header `name` (case ignored).
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.redacted();
        f.debug_struct("HttpRequest")
            .field("method", &r.method)
            .field("url", &r.url)
            .field("headers", &r.headers)
            .field("body", &r.body)
            .finish()
    }
}

/// [`HttpRequest`] with credential header values replaced by `***`; safe to log and persist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RedactedRequest {
    /// Always `POST`.
    pub method: String,
    /// Full URL; never contains the key.
    pub url: String,
    /// Header name and value, credentials replaced by `***`.
    pub headers: Vec<(String, String)>,
    /// JSON body text.
    pub body: String,
}

fn is_secret_header(name: &str) -> bool {
    SECRET_HEADERS.iter().any(|s| s.eq_ignore_ascii_case(name))
}

/// Why a request could not be built. Messages never contain the key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestError {
    #[error("the model name is empty")]
    /// The model name is empty.
    EmptyModel,
    #[error("base URL {base_url:?}: {reason}")]
    /// The base URL is not `http(s)://host…`, or has a query, fragment or whitespace.
    BadBaseUrl {
        /// The base URL given.
        base_url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    #[error("{provider} needs an API key, and none was given")]
    /// Anthropic or Gemini without a key.
    MissingKey {
        /// The provider's name.
        provider: &'static str,
    },
    #[error("the API key contains a character that cannot be sent in an HTTP header (a space, a control character or a non-ASCII character); paste it again")]
    /// The key cannot travel in a header.
    KeyNotHeaderSafe,
    #[error("temperature {value} is outside 0..={max} for {provider}")]
    /// Temperature outside the provider's range.
    BadTemperature {
        /// The temperature given.
        value: f64,
        /// The provider's largest temperature.
        max: f64,
        /// The provider's name.
        provider: &'static str,
    },
    #[error("max_tokens must be at least 1")]
    /// `max_tokens` is 0.
    ZeroMaxTokens,
    #[error("the user prompt is empty")]
    /// The user prompt is empty.
    EmptyUserPrompt,
}

/// Builds the request of one call (module docs: endpoint, headers). Body shapes, keys in this order:
///
/// * OpenAI-compatible: `{"model", "messages": [{"role": "system", "content"}?, {"role": "user",
///   "content"}], "temperature", "max_tokens"}`
/// * Anthropic: `{"model", "max_tokens", "system"?, "messages": [{"role": "user", "content"}],
///   "temperature"}`
/// * Gemini: `{"systemInstruction": {"parts": [{"text"}]}?, "contents": [{"role": "user", "parts":
///   [{"text"}]}], "generationConfig": {"temperature", "maxOutputTokens"}}`
///
/// (`?` = only when the system prompt is not empty.) Every request also sends
/// `content-type: application/json`.
///
/// # Errors
/// [`RequestError`]: empty model or user prompt, a base URL that is not `http(s)://…` (or has a query,
/// a fragment or whitespace), a missing key where one is required, a key that is not a valid header
/// value, a temperature outside the provider's range, `max_tokens` 0.
pub fn build_request(
    provider: &Provider,
    prompt: &Prompt,
    params: &Params,
    key: &SecretKey,
) -> Result<HttpRequest, RequestError> {
    build_conversation_request(
        provider,
        &prompt.system,
        &[Turn::user(prompt.user.clone())],
        params,
        key,
    )
}

/// Who speaks a [`Turn`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user (the auditor's prompt).
    User,
    /// The model (an earlier answer replayed as context).
    Assistant,
}

/// One message of a conversation (a follow-up turn replays the earlier prompt and answer).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub text: String,
}

impl Turn {
    /// A user turn.
    pub fn user(text: impl Into<String>) -> Self {
        Turn {
            role: Role::User,
            text: text.into(),
        }
    }

    /// An assistant turn.
    pub fn assistant(text: impl Into<String>) -> Self {
        Turn {
            role: Role::Assistant,
            text: text.into(),
        }
    }
}

/// The HTTP request of a multi-turn conversation: [`build_request`] with `turns` in place of the one
/// user message. Roles per provider: OpenAI-compatible `user` / `assistant` messages, Anthropic
/// `user` / `assistant` messages, Gemini `user` / `model` contents; `system` as in
/// [`build_request`]. A one-user-turn conversation gives exactly [`build_request`]'s body.
///
/// # Errors
/// As [`build_request`]; [`RequestError::EmptyUserPrompt`] also when `turns` is empty, does not end
/// with a user turn, or that last user turn is blank.
pub fn build_conversation_request(
    provider: &Provider,
    system: &str,
    turns: &[Turn],
    params: &Params,
    key: &SecretKey,
) -> Result<HttpRequest, RequestError> {
    let url = provider.endpoint()?;
    let kind = provider.kind();
    match turns.last() {
        Some(t) if t.role == Role::User && !t.text.trim().is_empty() => {}
        _ => return Err(RequestError::EmptyUserPrompt),
    }
    if params.max_tokens == 0 {
        return Err(RequestError::ZeroMaxTokens);
    }
    let max_t = if kind == ProviderKind::Anthropic {
        1.0
    } else {
        2.0
    };
    if !params.temperature.is_finite() || params.temperature < 0.0 || params.temperature > max_t {
        return Err(RequestError::BadTemperature {
            value: params.temperature,
            max: max_t,
            provider: kind.name(),
        });
    }
    if key.is_empty() && provider.requires_key() {
        return Err(RequestError::MissingKey {
            provider: kind.name(),
        });
    }
    if !key.expose().bytes().all(|b| b.is_ascii_graphic()) {
        return Err(RequestError::KeyNotHeaderSafe);
    }
    let model = provider.model().trim();
    let system_text = system;
    let system = system.trim();
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    let body = match kind {
        ProviderKind::OpenAiCompatible => {
            if !key.is_empty() {
                headers.push((
                    "authorization".to_string(),
                    format!("Bearer {}", key.expose()),
                ));
            }
            let mut messages = Vec::with_capacity(turns.len() + 1);
            if !system.is_empty() {
                messages.push(OpenAiMessage {
                    role: "system",
                    content: system_text,
                });
            }
            messages.extend(turns.iter().map(|t| OpenAiMessage {
                role: match t.role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                },
                content: &t.text,
            }));
            to_json(&OpenAiBody {
                model,
                messages,
                temperature: params.temperature,
                max_tokens: params.max_tokens,
            })
        }
        ProviderKind::Anthropic => {
            headers.push(("x-api-key".to_string(), key.expose().to_string()));
            headers.push((
                "anthropic-version".to_string(),
                ANTHROPIC_VERSION.to_string(),
            ));
            headers.push((
                "anthropic-dangerous-direct-browser-access".to_string(),
                "true".to_string(),
            ));
            to_json(&AnthropicBody {
                model,
                max_tokens: params.max_tokens,
                system: (!system.is_empty()).then_some(system_text),
                messages: turns
                    .iter()
                    .map(|t| AnthropicMessage {
                        role: match t.role {
                            Role::User => "user",
                            Role::Assistant => "assistant",
                        },
                        content: &t.text,
                    })
                    .collect(),
                temperature: params.temperature,
            })
        }
        ProviderKind::Gemini => {
            headers.push(("x-goog-api-key".to_string(), key.expose().to_string()));
            to_json(&GeminiBody {
                system_instruction: (!system.is_empty()).then(|| GeminiSystem {
                    parts: vec![GeminiPart { text: system_text }],
                }),
                contents: turns
                    .iter()
                    .map(|t| GeminiContent {
                        role: match t.role {
                            Role::User => "user",
                            Role::Assistant => "model",
                        },
                        parts: vec![GeminiPart { text: &t.text }],
                    })
                    .collect(),
                generation_config: GeminiConfig {
                    temperature: params.temperature,
                    max_output_tokens: params.max_tokens,
                },
            })
        }
    };
    Ok(HttpRequest {
        method: "POST".to_string(),
        url,
        headers,
        body,
    })
}

/// Serialises a body struct. These structs hold only strings and numbers (finite: checked above), for
/// which serde_json cannot fail; the fallback keeps the function total without a panic.
fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "{}".to_string())
}

#[derive(Serialize)]
struct OpenAiMessage<'a> {
    role: &'static str,
    content: &'a str,
}

#[derive(Serialize)]
struct OpenAiBody<'a> {
    model: &'a str,
    messages: Vec<OpenAiMessage<'a>>,
    temperature: f64,
    max_tokens: u32,
}

#[derive(Serialize)]
struct AnthropicMessage<'a> {
    role: &'static str,
    content: &'a str,
}

#[derive(Serialize)]
struct AnthropicBody<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<&'a str>,
    messages: Vec<AnthropicMessage<'a>>,
    temperature: f64,
}

#[derive(Serialize)]
struct GeminiPart<'a> {
    text: &'a str,
}

#[derive(Serialize)]
struct GeminiSystem<'a> {
    parts: Vec<GeminiPart<'a>>,
}

#[derive(Serialize)]
struct GeminiContent<'a> {
    role: &'static str,
    parts: Vec<GeminiPart<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GeminiConfig {
    temperature: f64,
    max_output_tokens: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GeminiBody<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<GeminiSystem<'a>>,
    contents: Vec<GeminiContent<'a>>,
    generation_config: GeminiConfig,
}

fn checked_base_url(base: &str) -> Result<&str, RequestError> {
    let bad = |reason| RequestError::BadBaseUrl {
        base_url: base.to_string(),
        reason,
    };
    let trimmed = base.trim().trim_end_matches('/');
    let rest = trimmed
        .strip_prefix("https://")
        .or_else(|| trimmed.strip_prefix("http://"))
        .ok_or_else(|| bad("must start with https:// or http://"))?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err(bad("has no host"));
    }
    if trimmed.contains(['?', '#']) {
        return Err(bad("must not contain a query (?) or a fragment (#)"));
    }
    if trimmed.chars().any(char::is_whitespace) {
        return Err(bad("must not contain whitespace"));
    }
    Ok(trimmed)
}

/// Percent-encodes a URL path segment: everything except ASCII letters, digits and `-._~` (RFC 3986
/// unreserved characters).
fn percent_encode_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The value of header `name` in `headers` (case ignored), the first when repeated.
pub fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Token counts reported by the provider (OpenAI `usage.prompt_tokens` / `completion_tokens`,
/// Anthropic `usage.input_tokens` / `output_tokens`, Gemini `usageMetadata.promptTokenCount` /
/// `candidatesTokenCount`); `None` when not reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// Input (prompt) tokens.
    pub input_tokens: Option<u64>,
    /// Output (generated) tokens.
    pub output_tokens: Option<u64>,
}

/// A successful response: the generated text and what the provider said about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Completion {
    /// The text: OpenAI `choices[0].message.content` (or its `refusal` when `content` is null);
    /// Anthropic the `text` blocks of `content`, concatenated; Gemini the `text` parts of
    /// `candidates[0].content` (thought parts left out), concatenated. Empty when the provider returned
    /// none (e.g. a blocked prompt).
    pub text: String,
    /// OpenAI `finish_reason` (`stop`, `length`, `content_filter`, …), Anthropic `stop_reason`
    /// (`end_turn`, `max_tokens`, `refusal`, …), Gemini `finishReason` (`STOP`, `MAX_TOKENS`, `SAFETY`,
    /// …), or `prompt_blocked:REASON` when Gemini blocked the prompt (`promptFeedback.blockReason`).
    pub finish_reason: Option<String>,
    /// Token counts the provider reported.
    pub usage: Usage,
    /// The model (version) the provider says answered: OpenAI/Anthropic `model`, Gemini `modelVersion`.
    pub model: Option<String>,
}

/// A `Retry-After` instruction: a delay, or a moment (from an HTTP-date).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryAfter {
    /// Wait this many milliseconds from when the response arrived.
    Delay {
        /// Milliseconds.
        ms: u64,
    },
    /// Wait until this moment (milliseconds since 1970-01-01 UTC), on the server's clock.
    At {
        /// Milliseconds since 1970-01-01 UTC.
        unix_ms: u64,
        /// The response's `Date` header (RFC 9110 §6.6.1: the moment the server made the response,
        /// on the same clock as `unix_ms`), in ms since 1970, when it was sent and readable. The wait
        /// is then measured from it, so a client clock that is off does not shorten or lengthen it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        date_unix_ms: Option<u64>,
    },
}

impl RetryAfter {
    /// Milliseconds to wait from now: a delay as given; a moment minus the response's `Date` when the
    /// server sent one (both on the server's clock), else minus `now_unix_ms` (the client's clock).
    /// 0 for a moment already past.
    pub fn delay_ms(self, now_unix_ms: u64) -> u64 {
        match self {
            RetryAfter::Delay { ms } => ms,
            RetryAfter::At {
                unix_ms,
                date_unix_ms,
            } => unix_ms.saturating_sub(date_unix_ms.unwrap_or(now_unix_ms)),
        }
    }
}

/// The server's wait instruction from the response headers: `retry-after-ms` (milliseconds, as sent by
/// OpenAI and honoured by its SDKs) first, then `Retry-After` (RFC 9110 §10.2.3: delay-seconds or an
/// HTTP-date, [`parse_http_date`]; an HTTP-date keeps the response's `Date` header beside it, to be
/// measured against). `None` when absent or unreadable.
pub fn parse_retry_after(headers: &[(String, String)]) -> Option<RetryAfter> {
    if let Some(ms) = header(headers, "retry-after-ms")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v >= 0.0)
    {
        return Some(RetryAfter::Delay {
            ms: ms.ceil() as u64,
        });
    }
    let value = header(headers, "retry-after")?.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        let secs: u64 = value.parse().unwrap_or(u64::MAX);
        return Some(RetryAfter::Delay {
            ms: secs.saturating_mul(1000),
        });
    }
    parse_http_date(value).map(|secs| RetryAfter::At {
        unix_ms: secs.saturating_mul(1000),
        date_unix_ms: header(headers, "date")
            .and_then(parse_http_date)
            .map(|d| d.saturating_mul(1000)),
    })
}

/// Why a call did not give a [`Completion`]. [`ProviderError::is_retryable`] classifies it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderError {
    /// HTTP 429: too many requests or quota. Retryable.
    #[error(
        "rate limited by the provider (HTTP {status}): {message}{}",
        retry_note(retry_after)
    )]
    RateLimited {
        /// The HTTP status (429).
        status: u16,
        /// The provider's message.
        message: String,
        /// The provider's wait instruction, if any.
        retry_after: Option<RetryAfter>,
    },
    /// HTTP 5xx (including Anthropic's 529 "overloaded"). Retryable.
    #[error(
        "provider server error (HTTP {status}{}): {message}{}",
        kind_note(kind),
        retry_note(retry_after)
    )]
    Server {
        /// The HTTP status (5xx).
        status: u16,
        /// The provider's error type (`overloaded_error`, `UNAVAILABLE`, …), if given.
        kind: Option<String>,
        /// The provider's message, or the start of a non-JSON body.
        message: String,
        /// The provider's wait instruction, if any.
        retry_after: Option<RetryAfter>,
    },
    /// HTTP 408, or the app's per-call timeout (`status: None`). Retryable.
    #[error("the call timed out{}", status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
    Timeout {
        /// 408, or `None` for the app's own timeout.
        status: Option<u16>,
    },
    /// The request never got a response: `fetch` rejected (offline, DNS, CORS, dropped connection).
    /// Built by the app. Retryable.
    #[error("network error: {message}")]
    Network {
        /// What `fetch` said.
        message: String,
    },
    /// Any other HTTP status outside 2xx (400 bad request, 401 bad key, 403, 404 unknown model, …). Not
    /// retryable: the same request would fail again.
    #[error(
        "request refused by the provider (HTTP {status}{}): {message}",
        kind_note(kind)
    )]
    Client {
        /// The HTTP status.
        status: u16,
        /// The provider's error type (`invalid_request_error`, `INVALID_ARGUMENT`, …), if given.
        kind: Option<String>,
        /// The provider's message, or the start of a non-JSON body.
        message: String,
    },
    /// A 2xx response whose body is not JSON (e.g. cut off by a dropped connection). Retryable.
    #[error("the provider's response (HTTP {status}) is not valid JSON: {detail}")]
    Malformed {
        /// The HTTP status (2xx).
        status: u16,
        /// The JSON parser's complaint.
        detail: String,
    },
    /// A 2xx JSON body without the documented fields (no `choices[0]`, `content`, `candidates`). Not
    /// retryable.
    #[error("the provider's response (HTTP {status}) lacks the documented fields: {detail}")]
    UnexpectedShape {
        /// The HTTP status (2xx).
        status: u16,
        /// Which documented field is missing.
        detail: String,
    },
}

fn retry_note(retry_after: &Option<RetryAfter>) -> String {
    match retry_after {
        Some(RetryAfter::Delay { ms }) => format!(" (retry after {} s)", ms.div_ceil(1000)),
        Some(RetryAfter::At {
            unix_ms,
            date_unix_ms: Some(date),
        }) => format!(
            " (retry after {} s by the server's clock)",
            unix_ms.saturating_sub(*date).div_ceil(1000)
        ),
        Some(RetryAfter::At { .. }) => " (retry after the time the provider gave)".to_string(),
        None => String::new(),
    }
}

fn kind_note(kind: &Option<String>) -> String {
    kind.as_deref()
        .map(|k| format!(", {k}"))
        .unwrap_or_default()
}

impl ProviderError {
    /// Whether trying the same request again may succeed: rate limits, server errors, timeouts,
    /// network errors and malformed (cut-off) bodies are; refusals of the request (4xx other than 408
    /// and 429) and bodies of the wrong shape are not.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ProviderError::RateLimited { .. }
                | ProviderError::Server { .. }
                | ProviderError::Timeout { .. }
                | ProviderError::Network { .. }
                | ProviderError::Malformed { .. }
        )
    }

    /// The server's wait instruction, if it gave one.
    pub fn retry_after(&self) -> Option<RetryAfter> {
        match self {
            ProviderError::RateLimited { retry_after, .. }
            | ProviderError::Server { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The HTTP status, when there was a response.
    pub fn status(&self) -> Option<u16> {
        match self {
            ProviderError::RateLimited { status, .. }
            | ProviderError::Server { status, .. }
            | ProviderError::Client { status, .. }
            | ProviderError::Malformed { status, .. }
            | ProviderError::UnexpectedShape { status, .. } => Some(*status),
            ProviderError::Timeout { status } => *status,
            ProviderError::Network { .. } => None,
        }
    }

    /// Short machine name: `rate_limited`, `server`, `timeout`, `network`, `client`, `malformed`,
    /// `unexpected_shape`.
    pub fn kind_key(&self) -> &'static str {
        match self {
            ProviderError::RateLimited { .. } => "rate_limited",
            ProviderError::Server { .. } => "server",
            ProviderError::Timeout { .. } => "timeout",
            ProviderError::Network { .. } => "network",
            ProviderError::Client { .. } => "client",
            ProviderError::Malformed { .. } => "malformed",
            ProviderError::UnexpectedShape { .. } => "unexpected_shape",
        }
    }

    /// The same error with every occurrence of `key` in its texts replaced by `***` (some providers
    /// echo part or all of a wrong key in their message, or in a string error `code` read as the kind).
    pub fn scrubbed(&self, key: &SecretKey) -> ProviderError {
        let mut e = self.clone();
        match &mut e {
            ProviderError::Server { message, kind, .. }
            | ProviderError::Client { message, kind, .. } => {
                *message = key.scrub(message);
                if let Some(k) = kind {
                    *k = key.scrub(k);
                }
            }
            ProviderError::RateLimited { message, .. } | ProviderError::Network { message } => {
                *message = key.scrub(message)
            }
            ProviderError::Malformed { detail, .. }
            | ProviderError::UnexpectedShape { detail, .. } => *detail = key.scrub(detail),
            ProviderError::Timeout { .. } => {}
        }
        e
    }
}

/// Reads one response (module docs: shapes). `status` is the HTTP status, `headers` the response
/// headers (only `retry-after` and `retry-after-ms` are read), `body` the body text.
///
/// # Errors
/// A [`ProviderError`]: non-2xx statuses are classified by status (429 → rate limited, 408 → timeout,
/// 5xx → server, other → client) with the provider's message from its error body (or the start of a
/// non-JSON body) and the `Retry-After` instruction (headers, or Gemini's `google.rpc.RetryInfo`
/// `retryDelay` in the body); a 2xx body that is not JSON is [`ProviderError::Malformed`]; a 2xx JSON
/// error object is classified by its `code` when that is an HTTP status; other 2xx bodies without the
/// documented fields are [`ProviderError::UnexpectedShape`]. The provider's message is kept as sent,
/// so it may echo the key: see [`parse_response_scrubbed`].
pub fn parse_response(
    provider: &Provider,
    status: u16,
    headers: &[(String, String)],
    body: &str,
) -> Result<Completion, ProviderError> {
    let parsed: Result<Value, _> = serde_json::from_str(body);
    if !(200..300).contains(&status) {
        return Err(error_from_body(status, headers, parsed.ok().as_ref(), body));
    }
    let value = match parsed {
        Ok(v) => v,
        Err(e) => {
            let what = if body.trim().is_empty() {
                "the body is empty".to_string()
            } else if e.is_eof() {
                format!("the JSON ends early ({e})")
            } else {
                e.to_string()
            };
            return Err(ProviderError::Malformed {
                status,
                detail: what,
            });
        }
    };
    let completion = match provider.kind() {
        ProviderKind::OpenAiCompatible => openai_completion(&value),
        ProviderKind::Anthropic => anthropic_completion(&value),
        ProviderKind::Gemini => gemini_completion(&value),
    };
    completion.map_err(|detail| {
        // A JSON error object with a 2xx status (some proxies do this): classify by its code.
        let code = value
            .get("error")
            .and_then(|e| e.get("code"))
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok())
            .filter(|c| !(200..300).contains(c));
        match code {
            Some(code) => error_from_body(code, headers, Some(&value), body),
            None => match error_message(&value) {
                Some((message, _)) => ProviderError::UnexpectedShape {
                    status,
                    detail: format!("{detail}; the body holds an error: {message}"),
                },
                None => ProviderError::UnexpectedShape { status, detail },
            },
        }
    })
}

/// [`parse_response`] with every occurrence of `key` in an error's texts replaced by `***`
/// ([`ProviderError::scrubbed`]). Some providers echo a wrong key in their message (Anthropic:
/// `invalid x-api-key: …`), so an error from plain [`parse_response`] may contain the key: the app
/// should use this function (or [`crate::run::RunState::record_response`], which does) so that no
/// error it shows, logs or stores can hold the key.
///
/// # Errors
/// As [`parse_response`], scrubbed.
pub fn parse_response_scrubbed(
    provider: &Provider,
    status: u16,
    headers: &[(String, String)],
    body: &str,
    key: &SecretKey,
) -> Result<Completion, ProviderError> {
    parse_response(provider, status, headers, body).map_err(|e| e.scrubbed(key))
}

fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn u64_field(v: Option<&Value>, key: &str) -> Option<u64> {
    v.and_then(|v| v.get(key)).and_then(Value::as_u64)
}

/// OpenAI Chat Completions response (<https://platform.openai.com/docs/api-reference/chat/object>).
fn openai_completion(v: &Value) -> Result<Completion, String> {
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or("no `choices[0]`")?;
    let message = choice.get("message").ok_or("no `choices[0].message`")?;
    let text = match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        // Content parts (some compatible servers): concatenate their text.
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        Some(Value::Null) | None => str_field(message, "refusal").unwrap_or_default(),
        Some(other) => return Err(format!("`choices[0].message.content` is {other}")),
    };
    let usage = v.get("usage");
    Ok(Completion {
        text,
        finish_reason: str_field(choice, "finish_reason"),
        usage: Usage {
            input_tokens: u64_field(usage, "prompt_tokens"),
            output_tokens: u64_field(usage, "completion_tokens"),
        },
        model: str_field(v, "model"),
    })
}

/// Anthropic Messages response (<https://docs.anthropic.com/en/api/messages>).
fn anthropic_completion(v: &Value) -> Result<Completion, String> {
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or("no `content` array")?;
    let text = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    let usage = v.get("usage");
    Ok(Completion {
        text,
        finish_reason: str_field(v, "stop_reason"),
        usage: Usage {
            input_tokens: u64_field(usage, "input_tokens"),
            output_tokens: u64_field(usage, "output_tokens"),
        },
        model: str_field(v, "model"),
    })
}

/// Gemini `GenerateContentResponse` (<https://ai.google.dev/api/generate-content#v1beta.GenerateContentResponse>).
fn gemini_completion(v: &Value) -> Result<Completion, String> {
    let usage = v.get("usageMetadata");
    let usage = Usage {
        input_tokens: u64_field(usage, "promptTokenCount"),
        output_tokens: u64_field(usage, "candidatesTokenCount"),
    };
    let model = str_field(v, "modelVersion");
    let candidate = v
        .get("candidates")
        .and_then(Value::as_array)
        .and_then(|c| c.first());
    let Some(candidate) = candidate else {
        let blocked = v
            .get("promptFeedback")
            .and_then(|p| p.get("blockReason"))
            .and_then(Value::as_str);
        return match blocked {
            Some(reason) => Ok(Completion {
                text: String::new(),
                finish_reason: Some(format!("prompt_blocked:{reason}")),
                usage,
                model,
            }),
            None => Err("no `candidates[0]` and no `promptFeedback.blockReason`".to_string()),
        };
    };
    let text = candidate
        .get("content")
        .and_then(|c| c.get("parts"))
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    Ok(Completion {
        text,
        finish_reason: str_field(candidate, "finishReason"),
        usage,
        model,
    })
}

/// The provider's message and error kind from an error body, in any of the documented shapes.
fn error_message(v: &Value) -> Option<(String, Option<String>)> {
    // Gemini may wrap the error in a one-element array.
    let v = match v {
        Value::Array(items) => items.first()?,
        other => other,
    };
    if let Some(err) = v.get("error") {
        if let Some(s) = err.as_str() {
            return Some((s.to_string(), None));
        }
        let message = str_field(err, "message")?;
        // OpenAI/Anthropic `type`, Gemini `status`, else a string `code`.
        let kind = str_field(err, "type")
            .or_else(|| str_field(err, "status"))
            .or_else(|| str_field(err, "code"));
        return Some((message, kind));
    }
    if let Some(message) = str_field(v, "message") {
        return Some((message, str_field(v, "type")));
    }
    match v.get("detail") {
        Some(Value::String(s)) => Some((s.clone(), None)),
        Some(other @ (Value::Array(_) | Value::Object(_))) => Some((other.to_string(), None)),
        _ => None,
    }
}

/// Gemini's `google.rpc.RetryInfo` detail: `{"@type": "type.googleapis.com/google.rpc.RetryInfo",
/// "retryDelay": "34s"}` (a protobuf Duration in JSON: decimal seconds with an `s` suffix).
fn gemini_retry_delay(v: &Value) -> Option<RetryAfter> {
    let details = v.get("error")?.get("details")?.as_array()?;
    details.iter().find_map(|d| {
        let ty = d.get("@type")?.as_str()?;
        if !ty.ends_with("google.rpc.RetryInfo") {
            return None;
        }
        let secs: f64 = d
            .get("retryDelay")?
            .as_str()?
            .strip_suffix('s')?
            .parse()
            .ok()?;
        (secs.is_finite() && secs >= 0.0).then(|| RetryAfter::Delay {
            ms: (secs * 1000.0).ceil() as u64,
        })
    })
}

fn error_from_body(
    status: u16,
    headers: &[(String, String)],
    parsed: Option<&Value>,
    body: &str,
) -> ProviderError {
    let (message, kind) = match parsed.and_then(error_message) {
        Some((m, k)) => (clip(m.trim(), MAX_MESSAGE_CHARS), k),
        None => {
            let collapsed: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
            if collapsed.is_empty() {
                ("(empty body)".to_string(), None)
            } else {
                (clip(&collapsed, 200), None)
            }
        }
    };
    let retry_after = parse_retry_after(headers).or_else(|| parsed.and_then(gemini_retry_delay));
    match status {
        429 => ProviderError::RateLimited {
            status,
            message,
            retry_after,
        },
        408 => ProviderError::Timeout {
            status: Some(status),
        },
        500..=599 => ProviderError::Server {
            status,
            kind,
            message,
            retry_after,
        },
        _ => ProviderError::Client {
            status,
            kind,
            message,
        },
    }
}

/// Prices per 1,000,000 tokens of a provider's model, in the user's currency (for the estimates of
/// [`crate::plan`], [`crate::judge`] and [`crate::clinical`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    /// Price of 1,000,000 input tokens.
    pub input_per_million: f64,
    /// Price of 1,000,000 output tokens.
    pub output_per_million: f64,
}
