//! The Web Worker that runs the app's RQ1/RQ2 analyses off the page's main thread.
//!
//! Trunk builds this binary for wasm32 (`data-type="worker"`, `no-modules` bindings, loader shim
//! `atlas-worker_loader.js`; see `index.html`). On start it listens for messages and posts
//! `{"type":"ready"}`; each message is `{request: "<Request JSON>", bundle: Uint8Array}` and is answered
//! by `progress` messages and one `done` or `failed` ([`atlas_worker::Reply`], as JSON strings). A
//! `done` with bootstrap replicates (or a Compare job's paired BER replicates) is posted as `{reply:
//! "<Reply JSON>", means: Float64Array}`, the array's buffer transferred. The page cancels a run by terminating the worker.
//! The Plan view's pool keeps its workers instead: they get `{plan: "<PlanJob JSON>", bundle?}`
//! messages and keep the bundle and planner between jobs (`atlas_worker::planner`). The loading
//! shell of `index.html` sends `{early: "<EarlyJob JSON>", bundle}` and gets `{early: "<EarlyOverview
//! JSON>"}` or `{early_failed: "<message>"}` (`atlas_worker::early`). Natively the
//! binary only says what it is.

#[cfg(target_arch = "wasm32")]
fn main() {
    web::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!(
        "atlas-worker is the app's Web Worker: Trunk builds it for wasm32 (see index.html). \
         Natively, use `atlas analyze-rq1` / `atlas analyze-rq2`."
    );
    std::process::exit(2);
}

#[cfg(target_arch = "wasm32")]
mod web {
    use std::cell::RefCell;

    use atlas_worker::early::{early_overview, EarlyJob};
    use atlas_worker::planner::{PlanJob, PlanWorker};
    use atlas_worker::{run, Reply, Request};
    use js_sys::{Array, Float64Array, Object, Reflect, Uint8Array};
    use wasm_bindgen::prelude::*;
    use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

    fn post(scope: &DedicatedWorkerGlobalScope, reply: &Reply) {
        // Posting a string cannot fail (it is always cloneable).
        let _ = scope.post_message(&JsValue::from_str(&reply.to_json()));
    }

    /// Posts `{reply, means}` with the means' buffer transferred; a plain reply if that fails.
    fn post_with_means(scope: &DedicatedWorkerGlobalScope, reply: &Reply, means: &[f64]) {
        let array = Float64Array::from(means);
        let message = Object::new();
        let ok = Reflect::set(
            &message,
            &JsValue::from_str("reply"),
            &JsValue::from_str(&reply.to_json()),
        )
        .and_then(|_| Reflect::set(&message, &JsValue::from_str("means"), &array))
        .and_then(|_| scope.post_message_with_transfer(&message, &Array::of1(&array.buffer())));
        if let Err(e) = ok {
            post(
                scope,
                &Reply::Failed {
                    message: format!("could not send the bootstrap replicates: {e:?}"),
                },
            );
        }
    }

    /// Reads one request message: its settings (JSON) and the bundle bytes.
    fn read(data: &JsValue) -> Result<(Request, Vec<u8>), String> {
        let text = Reflect::get(data, &JsValue::from_str("request"))
            .ok()
            .and_then(|v| v.as_string())
            .ok_or("the message has no request")?;
        let request: Request =
            serde_json::from_str(&text).map_err(|e| format!("the request is malformed: {e}"))?;
        let bundle = Reflect::get(data, &JsValue::from_str("bundle"))
            .ok()
            .and_then(|v| v.dyn_into::<Uint8Array>().ok())
            .ok_or("the message has no bundle bytes")?;
        Ok((request, bundle.to_vec()))
    }

    /// A planner pool job (`{plan, bundle?}`, see `atlas_worker::planner`): computed on the worker's
    /// kept planner and answered with its packed part, or `plan_failed` naming the ticket.
    fn plan_job(
        scope: &DedicatedWorkerGlobalScope,
        state: &RefCell<PlanWorker>,
        data: &JsValue,
        text: &str,
    ) {
        let job: PlanJob = match serde_json::from_str(text) {
            Ok(job) => job,
            Err(e) => {
                post(
                    scope,
                    &Reply::Failed {
                        message: format!("the planner job is malformed: {e}"),
                    },
                );
                return;
            }
        };
        let bundle = Reflect::get(data, &JsValue::from_str("bundle"))
            .ok()
            .and_then(|v| v.dyn_into::<Uint8Array>().ok())
            .map(|b| b.to_vec());
        let result = match state.try_borrow_mut() {
            Ok(mut worker) => worker.part(&job, bundle.as_deref()),
            Err(_) => Err("the planner worker is busy".to_string()),
        };
        match result {
            Ok((part, values)) => post_with_means(scope, &Reply::PlanPart(part), &values),
            Err(message) => post(
                scope,
                &Reply::PlanFailed {
                    ticket: job.ticket,
                    message,
                },
            ),
        }
    }

    /// The loading shell's early Overview (`{early, bundle}`): answered with `{early: "<JSON>"}` or
    /// `{early_failed: "<message>"}`, never with a [`Reply`].
    fn early_job(scope: &DedicatedWorkerGlobalScope, data: &JsValue, text: &str) {
        let answer = serde_json::from_str::<EarlyJob>(text)
            .map_err(|e| format!("the early job is malformed: {e}"))
            .and_then(|job| {
                let bundle = Reflect::get(data, &JsValue::from_str("bundle"))
                    .ok()
                    .and_then(|v| v.dyn_into::<Uint8Array>().ok())
                    .ok_or("the message has no bundle bytes")?;
                early_overview(&bundle.to_vec(), &job)
            })
            .and_then(|early| {
                serde_json::to_string(&early)
                    .map_err(|e| format!("could not write the answer: {e}"))
            });
        let (key, value) = match answer {
            Ok(json) => ("early", json),
            Err(message) => ("early_failed", message),
        };
        let message = Object::new();
        if Reflect::set(
            &message,
            &JsValue::from_str(key),
            &JsValue::from_str(&value),
        )
        .is_ok()
        {
            let _ = scope.post_message(&message);
        }
    }

    pub fn start() {
        console_error_panic_hook::set_once();
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let replies = scope.clone();
        let planner = RefCell::new(PlanWorker::default());
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let data = event.data();
            if let Some(text) = Reflect::get(&data, &JsValue::from_str("plan"))
                .ok()
                .and_then(|v| v.as_string())
            {
                plan_job(&replies, &planner, &data, &text);
                return;
            }
            if let Some(text) = Reflect::get(&data, &JsValue::from_str("early"))
                .ok()
                .and_then(|v| v.as_string())
            {
                early_job(&replies, &data, &text);
                return;
            }
            let reply = match read(&data) {
                Err(message) => Reply::Failed { message },
                Ok((request, bundle)) => {
                    let mut progress = |done: usize, total: usize, stage: &str| {
                        post(
                            &replies,
                            &Reply::Progress {
                                done,
                                total,
                                stage: stage.to_string(),
                            },
                        )
                    };
                    match run(&bundle, &request, &mut progress) {
                        Ok(mut outcome) => {
                            if let Some(replicates) = outcome.replicates.as_mut() {
                                let means = std::mem::take(&mut replicates.means);
                                post_with_means(&replies, &Reply::Done(Box::new(outcome)), &means);
                                return;
                            }
                            // A Compare job's BER replicates travel the same way (`means`).
                            if let Some(paired) = outcome.paired.as_mut() {
                                let means = std::mem::take(&mut paired.ber_diffs);
                                post_with_means(&replies, &Reply::Done(Box::new(outcome)), &means);
                                return;
                            }
                            Reply::Done(Box::new(outcome))
                        }
                        Err(message) => Reply::Failed { message },
                    }
                }
            };
            post(&replies, &reply);
        });
        scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        // The handler lives as long as the worker (which the page terminates).
        on_message.forget();
        post(&scope, &Reply::Ready);
    }
}
