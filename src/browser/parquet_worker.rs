//! Reading Parquet in the `atlas-parquet-worker` Web Worker: start it (its wasm is fetched then, not
//! with the page), post it a [`ParquetJob`] with the chosen `File`s, wait for its one
//! [`ParquetReply`], terminate it. The app's own wasm has no Parquet reader
//! ([`atlas_import::logs::parquet_job`]).

use std::cell::RefCell;
use std::rc::Rc;

use atlas_import::logs::parquet_job::{ParquetJob, ParquetReply, PARQUET_WORKER_SCRIPT};
use js_sys::{Array, Function, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ErrorEvent, File, MessageEvent, Worker};

use crate::browser::loader::js_message;

/// Runs `job` on `files` in a fresh Parquet worker and returns its reply.
///
/// # Errors
/// The browser's message when the worker cannot start, fails to load its wasm or crashes, or the
/// reply is not one the protocol knows. A reader error is `Ok(ParquetReply::Failed { .. })`.
pub async fn ask(job: &ParquetJob, files: &[File]) -> Result<ParquetReply, String> {
    let worker = Worker::new(PARQUET_WORKER_SCRIPT).map_err(|e| js_message(&e))?;
    let message = Object::new();
    let list = Array::new();
    for f in files {
        list.push(f);
    }
    Reflect::set(&message, &"job".into(), &JsValue::from_str(&job.to_json()))
        .and_then(|_| Reflect::set(&message, &"files".into(), &list))
        .map_err(|e| js_message(&e))?;
    // The promise's resolve and reject, called by the handlers: resolved with the first reply that
    // is not `ready` (the job is posted on `ready`), rejected with the worker's error.
    let settle: Rc<RefCell<Option<(Function, Function)>>> = Rc::new(RefCell::new(None));
    let promise = Promise::new(&mut |resolve, reject| {
        *settle.borrow_mut() = Some((resolve, reject));
    });
    let fail = {
        let settle = settle.clone();
        move |message: String| {
            if let Some((_, reject)) = settle.borrow_mut().take() {
                let _ = reject.call1(&JsValue::NULL, &JsValue::from_str(&message));
            }
        }
    };
    let post_to = worker.clone();
    let on_message = {
        let settle = settle.clone();
        let fail = fail.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let text = event.data().as_string().unwrap_or_default();
            if text.contains(r#""reply":"ready""#) {
                if let Err(e) = post_to.post_message(&message) {
                    fail(format!(
                        "could not send the files to the Parquet worker: {}",
                        js_message(&e)
                    ));
                }
                return;
            }
            if let Some((resolve, _)) = settle.borrow_mut().take() {
                let _ = resolve.call1(&JsValue::NULL, &JsValue::from_str(&text));
            }
        })
    };
    let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |event: ErrorEvent| {
        fail(format!(
            "the Parquet worker failed: {}",
            if event.message().is_empty() {
                "its script or wasm could not be loaded".to_string()
            } else {
                event.message()
            }
        ));
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    let settled = JsFuture::from(promise).await;
    worker.set_onmessage(None);
    worker.set_onerror(None);
    worker.terminate();
    drop((on_message, on_error));
    let text = settled
        .map_err(|e| e.as_string().unwrap_or_else(|| js_message(&e)))?
        .as_string()
        .unwrap_or_default();
    serde_json::from_str(&text).map_err(|e| format!("the Parquet worker's reply is malformed: {e}"))
}
