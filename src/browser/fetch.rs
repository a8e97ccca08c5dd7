//! One browser `fetch` with a timeout, shared by the pilot runner's calls ([`crate::pilot::runner`])
//! and the connection probes ([`crate::pilot::connection_test`]): builds the `RequestInit` (method, headers,
//! body, mode), aborts through the caller's `AbortController` when `timeout_ms` passes, and reads
//! status, headers and body. Key scrubbing is the caller's: the errors here are the browser's texts.

use std::cell::Cell;
use std::rc::Rc;

use atlas_pilot::connection::ProbeResult;
use atlas_pilot::provider::HttpRequest;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::browser::loader::js_message;

/// Sends `request` (method, headers, body) to `url` in `mode`, or a bare `GET` of `url` when
/// `request` is `None`; aborts through `controller` after `timeout_ms` (capped at `i32::MAX` ms).
/// In `no-cors` mode a reached server gives [`ProbeResult::Opaque`]; a `Failed` message is the
/// browser's text, not yet scrubbed of any key.
pub(crate) async fn fetch_within(
    url: &str,
    request: Option<&HttpRequest>,
    mode: web_sys::RequestMode,
    controller: &web_sys::AbortController,
    timeout_ms: u32,
) -> ProbeResult {
    let Some(window) = web_sys::window() else {
        return ProbeResult::Failed {
            message: "no window".into(),
        };
    };
    let init = web_sys::RequestInit::new();
    init.set_mode(mode);
    if let Some(req) = request {
        init.set_method(&req.method);
        let headers = match web_sys::Headers::new() {
            Ok(h) => h,
            Err(e) => {
                return ProbeResult::Failed {
                    message: js_message(&e),
                }
            }
        };
        for (name, value) in &req.headers {
            if let Err(e) = headers.set(name, value) {
                return ProbeResult::Failed {
                    message: js_message(&e),
                };
            }
        }
        init.set_headers(&headers);
        init.set_body(&JsValue::from_str(&req.body));
    } else {
        init.set_method("GET");
    }
    init.set_signal(Some(&controller.signal()));
    let timed_out = Rc::new(Cell::new(false));
    let timer = {
        let timed_out = timed_out.clone();
        let controller = controller.clone();
        let cb = Closure::once_into_js(move || {
            timed_out.set(true);
            controller.abort();
        });
        window
            .set_timeout_with_callback_and_timeout_and_arguments_0(
                cb.unchecked_ref(),
                timeout_ms.min(i32::MAX as u32) as i32,
            )
            .ok()
    };
    let opaque = mode == web_sys::RequestMode::NoCors;
    let result = async {
        let response = JsFuture::from(window.fetch_with_str_and_init(url, &init)).await?;
        if opaque {
            return Ok::<_, JsValue>(ProbeResult::Opaque);
        }
        let response: web_sys::Response = response
            .dyn_into()
            .map_err(|_| JsValue::from_str("fetch did not return a Response"))?;
        let status = response.status();
        let mut headers = Vec::new();
        if let Ok(Some(iter)) = js_sys::try_iter(response.headers().as_ref()) {
            for entry in iter.flatten() {
                let entry = js_sys::Array::from(&entry);
                if let (Some(k), Some(v)) = (entry.get(0).as_string(), entry.get(1).as_string()) {
                    headers.push((k, v));
                }
            }
        }
        let body = JsFuture::from(response.text()?).await?;
        Ok(ProbeResult::Response {
            status,
            headers,
            body: body.as_string().unwrap_or_default(),
        })
    }
    .await;
    if let Some(t) = timer {
        window.clear_timeout_with_handle(t);
    }
    match result {
        Ok(f) => f,
        Err(_) if timed_out.get() => ProbeResult::TimedOut,
        Err(e) => ProbeResult::Failed {
            message: js_message(&e),
        },
    }
}
