//! Running an analysis in the `atlas-worker` Web Worker: start it, hand it the request and the bundle
//! bytes once it is ready, pass its replies on, and terminate it (cancel, or when the run is over).
//!
//! One worker per run: cancelling terminates it, even in the middle of a draw, and the next run starts
//! a fresh one. The first run may take the worker that the loading shell started for the early
//! Overview (`index.html`, [`atlas_worker::early`]) instead of starting one. The protocol is [`atlas_worker::Reply`] (JSON strings); a bootstrap's replicate means
//! arrive beside the JSON as a transferred `Float64Array` (`{reply, means}`) and are put back into
//! [`atlas_worker::Replicates::means`].

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use atlas_worker::{Outcome, Reply, Request, WORKER_SCRIPT};
use js_sys::{Array, Float64Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, MessageEvent, Worker};

use crate::browser::loader::js_message;

/// What a running analysis reports to the page.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkerEvent {
    /// `done` of `total` steps of `stage`.
    Progress {
        /// Steps done.
        done: usize,
        /// Steps in all.
        total: usize,
        /// What the steps are (e.g. `RQ2 draws`).
        stage: String,
    },
    /// The analysis finished with this outcome.
    Done(Box<Outcome>),
    /// The analysis failed, or the worker could not start or crashed.
    Failed(String),
}

/// A running analysis; dropping it (or [`AnalysisRun::cancel`]) terminates the worker.
pub struct AnalysisRun {
    worker: Worker,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(ErrorEvent)>,
}

impl std::fmt::Debug for AnalysisRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AnalysisRun")
    }
}

impl AnalysisRun {
    /// Starts a worker from [`WORKER_SCRIPT`] (relative to the page) and runs `request` on `bundle`;
    /// `on_event` receives its progress and its one final `Done` or `Failed`.
    ///
    /// # Errors
    /// The browser's message when the worker cannot be created.
    pub fn start(
        request: Request,
        bundle: Arc<[u8]>,
        on_event: impl FnMut(WorkerEvent) + 'static,
    ) -> Result<Self, String> {
        // The loading shell's worker, idle after the early Overview, is taken once; it has said
        // `ready` already, so the job goes out at once.
        let (worker, adopted) = match take_early_worker() {
            Some(worker) => (worker, true),
            None => (
                Worker::new(WORKER_SCRIPT).map_err(|e| js_message(&e))?,
                false,
            ),
        };
        let request = request.to_json();
        if adopted {
            // Its replies arrive as later tasks, after the handlers below are set in this one.
            post_job(&worker, &request, &bundle).inspect_err(|_| worker.terminate())?;
        }
        let on_event = Rc::new(RefCell::new(on_event));

        let target = worker.clone();
        let events = on_event.clone();
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let (text, means) = read_message(&event.data());
            let reply = match Reply::from_json(&text) {
                Ok(reply) => reply,
                Err(e) => Reply::Failed {
                    message: format!("the worker sent an unreadable message: {e}"),
                },
            };
            let event = match reply {
                // The worker listens now (a wasm worker drops messages sent before): send the job.
                Reply::Ready => match post_job(&target, &request, &bundle) {
                    Ok(()) => return,
                    Err(message) => WorkerEvent::Failed(message),
                },
                Reply::Progress { done, total, stage } => {
                    WorkerEvent::Progress { done, total, stage }
                }
                Reply::Done(mut outcome) => {
                    if let (Some(replicates), Some(means)) =
                        (outcome.replicates.as_mut(), means.clone())
                    {
                        replicates.means = means;
                    }
                    // A Compare job's paired BER replicates arrive the same way.
                    if let (Some(paired), Some(means)) = (outcome.paired.as_mut(), means) {
                        paired.ber_diffs = means;
                    }
                    WorkerEvent::Done(outcome)
                }
                Reply::Failed { message } => WorkerEvent::Failed(message),
                // Planner pool replies (`browser::plan_pool`) never answer an analysis job.
                Reply::PlanPart(_) | Reply::PlanFailed { .. } => WorkerEvent::Failed(
                    "the worker answered a planner job to an analysis".to_string(),
                ),
            };
            if let Ok(mut f) = events.try_borrow_mut() {
                f(event);
            }
        });
        let on_error = Closure::<dyn FnMut(ErrorEvent)>::new(move |event: ErrorEvent| {
            event.prevent_default();
            let message = event.message();
            let message = if message.is_empty() {
                format!("the analysis worker ({WORKER_SCRIPT}) could not be started or stopped with an error")
            } else {
                format!("the analysis worker failed: {message}")
            };
            if let Ok(mut f) = on_event.try_borrow_mut() {
                f(WorkerEvent::Failed(message));
            }
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Ok(AnalysisRun {
            worker,
            _on_message: on_message,
            _on_error: on_error,
        })
    }

    /// Stops the worker at once (it may be in the middle of a draw); no event follows.
    pub fn cancel(self) {}
}

impl Drop for AnalysisRun {
    fn drop(&mut self) {
        // Detach the handlers first: replies already queued must not reach dropped closures.
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.terminate();
    }
}

/// The analysis worker that `index.html` started for the loading shell's early Overview
/// (`window.__atlasEarlyWorker`, set once it has answered and is idle), taken at most once; `None`
/// when there is none (another bundle or view in the URL, no Worker, or taken already).
fn take_early_worker() -> Option<Worker> {
    let window = web_sys::window()?;
    let key = JsValue::from_str("__atlasEarlyWorker");
    let value = Reflect::get(&window, &key).ok()?;
    let worker = value.dyn_into::<Worker>().ok()?;
    let _ = Reflect::delete_property(&window, &key);
    Some(worker)
}

/// A worker message: the reply's JSON text, and the numbers that travel beside it as a transferred
/// `Float64Array` (`{reply, means}`: bootstrap replicates, paired BER replicates, a planner part).
pub(crate) fn read_message(data: &JsValue) -> (String, Option<Vec<f64>>) {
    match data.as_string() {
        Some(text) => (text, None),
        None => (
            Reflect::get(data, &JsValue::from_str("reply"))
                .ok()
                .and_then(|v| v.as_string())
                .unwrap_or_default(),
            Reflect::get(data, &JsValue::from_str("means"))
                .ok()
                .and_then(|v| v.dyn_into::<Float64Array>().ok())
                .map(|a| a.to_vec()),
        ),
    }
}

/// Posts `{request, bundle}`; the bundle's copy is transferred, not cloned again.
fn post_job(worker: &Worker, request: &str, bundle: &[u8]) -> Result<(), String> {
    let bytes = Uint8Array::from(bundle);
    let message = Object::new();
    let set = |k: &str, v: &JsValue| Reflect::set(&message, &JsValue::from_str(k), v);
    set("request", &JsValue::from_str(request)).map_err(|e| js_message(&e))?;
    set("bundle", &bytes).map_err(|e| js_message(&e))?;
    let transfer = Array::of1(&bytes.buffer());
    worker
        .post_message_with_transfer(&message, &transfer)
        .map_err(|e| {
            format!(
                "could not send the bundle to the worker: {}",
                js_message(&e)
            )
        })
}
