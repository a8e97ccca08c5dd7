//! The clipboard: `navigator.clipboard.writeText`, awaited, so that a view says "copied" only when the
//! browser has written the text, and says why not when it refused (no clipboard on an insecure page, a
//! denied permission, a page without focus).

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Why the text is not on the clipboard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClipboardError {
    /// Not a browser page.
    #[error("no window")]
    NoWindow,
    /// `navigator.clipboard` is missing (e.g. a page served over plain HTTP from another host).
    #[error("this browser gives the page no clipboard")]
    NoClipboard,
    /// `navigator.clipboard` has no `writeText`.
    #[error("this browser has no clipboard.writeText")]
    NoWriteText,
    /// `writeText` threw (the thrown value, as the console shows it).
    #[error("{0}")]
    Threw(String),
    /// `writeText` returned something other than a promise.
    #[error("writeText returned no promise")]
    NoPromise,
    /// The browser rejected the write (its message, else "the browser refused").
    #[error("{0}")]
    Refused(String),
}

/// Writes `text` to the clipboard and waits for the browser's answer.
///
/// # Errors
/// [`ClipboardError`]: no clipboard in this page, or the browser refused the write.
pub async fn copy_text(text: &str) -> Result<(), ClipboardError> {
    let window = web_sys::window().ok_or(ClipboardError::NoWindow)?;
    let clipboard = Reflect::get(&window.navigator(), &JsValue::from_str("clipboard"))
        .ok()
        .filter(|c| !c.is_undefined() && !c.is_null())
        .ok_or(ClipboardError::NoClipboard)?;
    let write = Reflect::get(&clipboard, &JsValue::from_str("writeText"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .ok_or(ClipboardError::NoWriteText)?;
    let promise = write
        .call1(&clipboard, &JsValue::from_str(text))
        .map_err(|e| ClipboardError::Threw(format!("{e:?}")))?;
    let promise: Promise = promise.dyn_into().map_err(|_| ClipboardError::NoPromise)?;
    JsFuture::from(promise).await.map(|_| ()).map_err(|e| {
        ClipboardError::Refused(
            Reflect::get(&e, &JsValue::from_str("message"))
                .ok()
                .and_then(|m| m.as_string())
                .unwrap_or_else(|| "the browser refused".to_string()),
        )
    })
}

/// Starts [`copy_text`] and calls `done` with its outcome once the browser has answered (a click
/// handler's way to show "copied" or why not).
pub fn copy_then(text: String, done: impl FnOnce(Result<(), ClipboardError>) + 'static) {
    leptos::task::spawn_local(async move { done(copy_text(&text).await) });
}
