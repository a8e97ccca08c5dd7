//! Downloads: charts as PNG (the canvas' `toBlob`) and SVG (the same draw function on plotters' SVG
//! backend), tables as CSV, the analysis state and results as JSON — each handed to the browser as a
//! Blob URL on a temporary `<a download>` with a file name that says what it holds.

use js_sys::{Array, Uint8Array};
use sha2::{Digest, Sha256};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, BlobPropertyBag, HtmlAnchorElement, HtmlCanvasElement, Url};

use crate::browser::loader::js_message;

/// Why a download could not be offered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DownloadError {
    /// The page has no window, document or body to put the link in (not a browser page).
    #[error("this page has no {0} to start a download from")]
    NoPage(&'static str),
    /// The browser refused to make the Blob, its URL or the link (its message).
    #[error("{0}")]
    Browser(String),
    /// The canvas could not be encoded as PNG.
    #[error("the browser could not encode the chart as PNG")]
    NotEncoded,
}

fn browser(e: JsValue) -> DownloadError {
    DownloadError::Browser(js_message(&e))
}

/// Lower-case hex SHA-256 of `bytes` (the content hash of a bundle in the JSON export).
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A file-name part from free text: letters, digits, `-`, `_` and `.` stay, runs of anything else
/// become one `-`; at most 80 characters; `bundle` when nothing is left.
pub fn file_part(s: &str) -> String {
    let mut out = String::new();
    for ch in s.chars() {
        if ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_' | '.') {
            out.push(ch);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_matches('-').chars().take(80).collect();
    if out.is_empty() {
        "bundle".into()
    } else {
        out
    }
}

/// Offers `blob` as a download named `file_name` (a Blob URL on a temporary link, revoked a minute
/// later).
///
/// # Errors
/// [`DownloadError::NoPage`] outside a page, [`DownloadError::Browser`] with the browser's message when
/// the URL or the link cannot be made.
pub fn download_blob(blob: &Blob, file_name: &str) -> Result<(), DownloadError> {
    let window = web_sys::window().ok_or(DownloadError::NoPage("window"))?;
    let document = window.document().ok_or(DownloadError::NoPage("document"))?;
    let url = Url::create_object_url_with_blob(blob).map_err(browser)?;
    let link: HtmlAnchorElement = document
        .create_element("a")
        .map_err(browser)?
        .dyn_into()
        .map_err(|_| DownloadError::Browser("could not create a link".into()))?;
    link.set_href(&url);
    link.set_download(file_name);
    link.set_hidden(true);
    let body = document.body().ok_or(DownloadError::NoPage("body"))?;
    body.append_child(&link).map_err(browser)?;
    link.click();
    link.remove();
    let revoke = Closure::once_into_js(move || {
        let _ = Url::revoke_object_url(&url);
    });
    let _ = window
        .set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 60_000);
    Ok(())
}

/// Offers `text` as a download of type `mime` (UTF-8).
///
/// # Errors
/// As [`download_blob`].
pub fn download_text(text: &str, mime: &str, file_name: &str) -> Result<(), DownloadError> {
    let parts = Array::of1(&JsValue::from_str(text));
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    let blob = Blob::new_with_str_sequence_and_options(&parts, &options).map_err(browser)?;
    download_blob(&blob, file_name)
}

/// Offers `bytes` as a download of type `mime`.
///
/// # Errors
/// As [`download_blob`].
pub fn download_bytes(bytes: &[u8], mime: &str, file_name: &str) -> Result<(), DownloadError> {
    let parts = Array::of1(&Uint8Array::from(bytes));
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    let blob = Blob::new_with_u8_array_sequence_and_options(&parts, &options).map_err(browser)?;
    download_blob(&blob, file_name)
}

/// Offers the canvas' pixels as a PNG download (`toBlob`; the download starts when the browser has
/// encoded it). `on_error` hears about a failure that happens after this returns.
///
/// # Errors
/// [`DownloadError::Browser`] when `toBlob` cannot start (e.g. a tainted canvas).
pub fn download_canvas_png(
    canvas: &HtmlCanvasElement,
    file_name: String,
    on_error: impl FnOnce(DownloadError) + 'static,
) -> Result<(), DownloadError> {
    let callback = Closure::once_into_js(move |blob: JsValue| {
        let result = match blob.dyn_into::<Blob>() {
            Ok(blob) => download_blob(&blob, &file_name),
            Err(_) => Err(DownloadError::NotEncoded),
        };
        if let Err(e) = result {
            on_error(e);
        }
    });
    canvas.to_blob(callback.unchecked_ref()).map_err(browser)
}
