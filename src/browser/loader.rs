//! Getting bundle bytes into the tab: `fetch` of a URL or a picked/dropped `File`, read as a stream so
//! the UI can show progress, then handed to [`atlas_core::Audit::from_bytes`].
//!
//! Each read takes an optional `AbortSignal`: the state's load gate (`state::load_gate`) aborts the
//! read of an open that a later open superseded.

use std::fmt;

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, ReadableStream, ReadableStreamDefaultReader, Response};

/// Why bytes could not be read (the parse errors of the bundle itself are [`atlas_core::BundleError`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// The request failed before a response (offline, blocked, bad URL).
    Network(String),
    /// The server answered with an HTTP error status.
    Http {
        /// The status code (404, 500, …).
        status: u16,
        /// The server's reason phrase.
        status_text: String,
    },
    /// Reading the body or the file failed midway.
    Read(String),
    /// A later open superseded this load and aborted it (its result is discarded, never shown).
    Aborted,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Network(m) => write!(f, "the request failed: {m}"),
            LoadError::Http {
                status,
                status_text,
            } => write!(f, "the server answered HTTP {status} {status_text}"),
            LoadError::Read(m) => write!(f, "reading the data failed: {m}"),
            LoadError::Aborted => write!(f, "a later open replaced this load"),
        }
    }
}

impl std::error::Error for LoadError {}

/// Text of a JS error value, for messages.
pub fn js_message(value: &JsValue) -> String {
    if let Some(err) = value.dyn_ref::<js_sys::Error>() {
        return String::from(err.message());
    }
    value.as_string().unwrap_or_else(|| format!("{value:?}"))
}

/// Fetches `url` and returns its body, calling `progress(received, total)` after every chunk (`total`
/// from `Content-Length` when the server sends it).
///
/// # Errors
/// [`LoadError`] for network failures, HTTP error statuses and interrupted bodies.
pub async fn fetch_bytes(
    url: &str,
    progress: impl Fn(u64, Option<u64>),
) -> Result<Vec<u8>, LoadError> {
    fetch_bytes_with_signal(url, None, progress).await
}

/// [`fetch_bytes`] that stops when `signal` aborts: the request (or its body, when the response has
/// begun) is cancelled by the browser and the result is `Err(LoadError::Aborted)`.
///
/// # Errors
/// As [`fetch_bytes`], and `Aborted` once `signal` has aborted.
pub async fn fetch_bytes_with_signal(
    url: &str,
    signal: Option<&AbortSignal>,
    progress: impl Fn(u64, Option<u64>),
) -> Result<Vec<u8>, LoadError> {
    let window = web_sys::window().ok_or_else(|| LoadError::Network("no window".into()))?;
    if is_aborted(signal) {
        return Err(LoadError::Aborted);
    }
    // The default bundle may already be on its way: index.html starts its fetch in parallel with the
    // wasm download. Take that response (once) instead of asking again; if that request failed, ask
    // the network once more below.
    let prefetched = match take_prefetched(url) {
        Some(promise) => JsFuture::from(promise).await.ok(),
        None => None,
    };
    let response = match prefetched {
        Some(response) => response,
        None => {
            let init = web_sys::RequestInit::new();
            if let Some(signal) = signal {
                init.set_signal(Some(signal));
            }
            JsFuture::from(window.fetch_with_str_and_init(url, &init))
                .await
                .map_err(|e| {
                    if is_aborted(signal) {
                        LoadError::Aborted
                    } else {
                        LoadError::Network(js_message(&e))
                    }
                })?
        }
    };
    if is_aborted(signal) {
        return Err(LoadError::Aborted);
    }
    let response: Response = response
        .dyn_into()
        .map_err(|_| LoadError::Network("fetch did not return a Response".into()))?;
    read_response(&response, signal, progress).await
}

/// Name of the global that `index.html` sets when it starts the default bundle's fetch early:
/// `{ url: <absolute URL>, response: <Promise<Response>> }`.
pub const PREFETCH_GLOBAL: &str = "__atlasPrefetch";

/// The response promise of the fetch that `index.html` started for `url` (absolute) before the wasm
/// had loaded, if there is one and it is for this very URL. The global is deleted when taken, so the
/// response is used at most once; a later open of the same URL fetches again.
pub fn take_prefetched(url: &str) -> Option<js_sys::Promise> {
    let window = web_sys::window()?;
    let key = JsValue::from_str(PREFETCH_GLOBAL);
    let record = Reflect::get(&window, &key).ok()?;
    if record.is_undefined() || record.is_null() {
        return None;
    }
    let same = Reflect::get(&record, &JsValue::from_str("url"))
        .ok()
        .and_then(|u| u.as_string())
        .is_some_and(|u| u == url);
    if !same {
        return None;
    }
    let _ = Reflect::delete_property(window.as_ref(), &key);
    Reflect::get(&record, &JsValue::from_str("response"))
        .ok()?
        .dyn_into::<js_sys::Promise>()
        .ok()
}

/// A promise that resolves when `signal` aborts (the promise's own resolve function is the listener,
/// so nothing on the Rust side has to outlive the load).
fn abort_promise(signal: &AbortSignal) -> js_sys::Promise {
    js_sys::Promise::new(&mut |resolve, _reject| {
        let _ = signal.add_event_listener_with_callback("abort", &resolve);
    })
}

/// Whether `signal` is present and has aborted.
fn is_aborted(signal: Option<&AbortSignal>) -> bool {
    signal.is_some_and(AbortSignal::aborted)
}

/// Reads the body of `response` chunk by chunk, stopping when `signal` aborts.
///
/// # Errors
/// `Http` when the status is not 2xx; `Read` when the body stream fails; `Aborted` once `signal` has
/// aborted.
pub async fn read_response(
    response: &Response,
    signal: Option<&AbortSignal>,
    progress: impl Fn(u64, Option<u64>),
) -> Result<Vec<u8>, LoadError> {
    if !response.ok() {
        return Err(LoadError::Http {
            status: response.status(),
            status_text: response.status_text(),
        });
    }
    let total = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.parse::<u64>().ok());
    match response.body() {
        Some(stream) => read_stream(&stream, total, signal, progress).await,
        None => Ok(Vec::new()),
    }
}

/// Reads a `File` (or any `Blob`) as a stream, stopping when `signal` aborts.
///
/// # Errors
/// `Read` when the browser fails to read the file; `Aborted` once `signal` has aborted.
pub async fn read_blob(
    blob: &web_sys::Blob,
    signal: Option<&AbortSignal>,
    progress: impl Fn(u64, Option<u64>),
) -> Result<Vec<u8>, LoadError> {
    let total = blob.size() as u64;
    read_stream(&blob.stream(), Some(total), signal, progress).await
}

/// Drains a byte `ReadableStream`, reporting progress after every chunk. While the first chunk is in
/// flight it runs [`prime_decoder_once`]. It stops as soon as `signal` aborts, also while a chunk is
/// awaited: the stream is cancelled and the bytes read so far are dropped (a fetch's own stream fails
/// by itself when its request's signal aborts; a file's stream, or one built by hand, does not).
///
/// # Errors
/// `Read` with the browser's message when a chunk fails or is not bytes; `Aborted` once `signal` has
/// aborted.
pub async fn read_stream(
    stream: &ReadableStream,
    total: Option<u64>,
    signal: Option<&AbortSignal>,
    progress: impl Fn(u64, Option<u64>),
) -> Result<Vec<u8>, LoadError> {
    if is_aborted(signal) {
        return Err(LoadError::Aborted);
    }
    let reader: ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
    let aborted = signal.map(abort_promise);
    let capacity = total.unwrap_or(0).min(1 << 30) as usize;
    let mut bytes = Vec::with_capacity(capacity);
    progress(0, total);
    let mut pending = Some(reader.read());
    loop {
        let mut read = pending.take().unwrap_or_else(|| reader.read());
        // A chunk or the abort, whichever comes first (a stream the signal does not stop, like a
        // file's, must not keep a superseded load waiting).
        if let Some(aborted) = &aborted {
            read = js_sys::Promise::race(&js_sys::Array::of2(&read, aborted));
        }
        // The first chunk is on its way: compile and warm up the decoder meanwhile (once per page).
        prime_decoder_once();
        let chunk = JsFuture::from(read).await.map_err(|e| {
            if is_aborted(signal) {
                LoadError::Aborted
            } else {
                LoadError::Read(js_message(&e))
            }
        })?;
        if is_aborted(signal) {
            // Cancel without waiting; awaiting its promise in a task handles a rejection (the stream of
            // an aborted fetch is already errored), which would otherwise be an unhandled one.
            let cancelled = JsFuture::from(reader.cancel());
            wasm_bindgen_futures::spawn_local(async move {
                let _ = cancelled.await;
            });
            return Err(LoadError::Aborted);
        }
        let done = Reflect::get(&chunk, &JsValue::from_str("done"))
            .map_err(|e| LoadError::Read(js_message(&e)))?
            .as_bool()
            .unwrap_or(true);
        if done {
            break;
        }
        let value = Reflect::get(&chunk, &JsValue::from_str("value"))
            .map_err(|e| LoadError::Read(js_message(&e)))?;
        let array = value
            .dyn_into::<Uint8Array>()
            .map_err(|_| LoadError::Read("a chunk of the stream is not bytes".into()))?;
        let start = bytes.len();
        bytes.resize(start + array.length() as usize, 0);
        array.copy_to(&mut bytes[start..]);
        progress(bytes.len() as u64, total);
    }
    Ok(bytes)
}

thread_local! {
    /// Milliseconds [`prime_decoder_once`] took on this page; `None` before it ran.
    static PRIME_MS: std::cell::Cell<Option<f64>> = const { std::cell::Cell::new(None) };
}

/// Runs [`atlas_core::decode::prime_decoder`] the first time it is called on this page (later calls
/// return at once), so that the wasm engine has compiled the decoder and optimised its hot loops before
/// the first real bundle is parsed. Called by [`read_stream`] while the first chunk is still arriving.
pub fn prime_decoder_once() {
    if PRIME_MS.with(|p| p.get().is_some()) {
        return;
    }
    let started = now_ms();
    atlas_core::decode::prime_decoder();
    PRIME_MS.with(|p| p.set(Some(now_ms() - started)));
}

/// Milliseconds the decoder warm-up took on this page (0 before it ran).
pub fn prime_ms() -> f64 {
    PRIME_MS.with(|p| p.get().unwrap_or(0.0))
}

/// Reads a byte stream chunk by chunk without keeping it, calling `f(chunk, bytes_read_so_far)` on
/// each; after every chunk it yields to the browser (a zero-delay timer) so progress is painted and the
/// page stays responsive on a file of hundreds of megabytes.
///
/// # Errors
/// The browser's message when a chunk fails or is not bytes, or the first error `f` returns.
pub async fn for_each_chunk(
    stream: &ReadableStream,
    mut f: impl FnMut(&[u8], u64) -> Result<(), String>,
) -> Result<(), String> {
    let reader: ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
    let mut read = 0u64;
    let mut buffer = Vec::new();
    loop {
        let chunk = JsFuture::from(reader.read())
            .await
            .map_err(|e| format!("reading the file failed: {}", js_message(&e)))?;
        let done = Reflect::get(&chunk, &JsValue::from_str("done"))
            .ok()
            .and_then(|d| d.as_bool())
            .unwrap_or(true);
        if done {
            return Ok(());
        }
        let array = Reflect::get(&chunk, &JsValue::from_str("value"))
            .ok()
            .and_then(|v| v.dyn_into::<Uint8Array>().ok())
            .ok_or_else(|| "a chunk of the file is not bytes".to_string())?;
        buffer.resize(array.length() as usize, 0);
        array.copy_to(&mut buffer);
        read += buffer.len() as u64;
        f(&buffer, read)?;
        yield_to_browser().await;
    }
}

/// Resolves after a zero-delay `setTimeout`, letting the browser paint and handle input.
pub async fn yield_to_browser() {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        if let Some(window) = web_sys::window() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
        }
    });
    let _ = JsFuture::from(promise).await;
}

/// Milliseconds since page start (`performance.now()`), 0 where unavailable.
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Resolves `path` against `base` (a page or bundle URL).
pub fn resolve_url(path: &str, base: &str) -> Option<String> {
    web_sys::Url::new_with_base(path, base)
        .ok()
        .map(|u| u.href())
}
