//! The Plan view's pool of planner Web Workers (issue 17 §3, "fast enough to be live").
//!
//! `n` persistent `atlas-worker` workers (by default one per logical core, at most 4) each get the
//! bundle bytes once, with their first job, and keep the parsed bundle and a planner per repeat
//! policy ([`atlas_worker::planner::PlanWorker`]). [`PlanPool::estimate`] splits an estimate's draws
//! into `n` contiguous ranges ([`split_draws`]), sends one [`PlanJob`] to each worker, and merges
//! the parts on the page with [`Planner::merge`]: the result equals [`Planner::estimate`] (and the
//! CLI's `atlas plan-audit`) bit for bit for any number of workers, because every draw reads its
//! own random stream. The parts' numbers come back as transferred `Float64Array`s, not JSON text.
//!
//! Dropping the pool terminates its workers; a job still out then never answers (its future is
//! dropped with the view that awaited it).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use atlas_core::plan::{
    design_name, split_draws, Estimate, EstimateOptions, EstimatePart, Planner,
};
use atlas_core::rq2::Design;
use atlas_core::RepeatPolicy;
use atlas_worker::planner::{unpack_part, PlanJob};
use atlas_worker::{Reply, WORKER_SCRIPT};
use futures_channel::oneshot;
use js_sys::{Array, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::{ErrorEvent, MessageEvent, Worker};

use crate::browser::loader::js_message;
use crate::browser::worker::read_message;

/// Most workers a pool starts by default (more rarely helps: an estimate of 2,000 draws is split
/// into as many ranges, and each range's fixed costs grow in share).
pub const MAX_DEFAULT_WORKERS: usize = 4;

/// The pool size used when none is asked for: the browser's logical cores
/// (`navigator.hardwareConcurrency`), at least 1 and at most [`MAX_DEFAULT_WORKERS`].
pub fn default_workers() -> usize {
    let cores = web_sys::window()
        .map(|w| w.navigator().hardware_concurrency())
        .filter(|c| c.is_finite() && *c >= 1.0)
        .unwrap_or(1.0);
    (cores as usize).clamp(1, MAX_DEFAULT_WORKERS)
}

type Answer = Result<EstimatePart, String>;

/// Jobs out, by ticket: which worker has it and where its answer goes.
type Pending = Rc<RefCell<HashMap<u64, (usize, oneshot::Sender<Answer>)>>>;

/// One worker's side of the start-up: messages wait until it says it is ready (a wasm worker drops
/// messages posted before), and the bundle goes with its first job only.
#[derive(Default)]
struct Link {
    ready: bool,
    bundle_sent: bool,
    queue: Vec<String>,
    broken: Option<String>,
}

struct PoolWorker {
    worker: Worker,
    link: Rc<RefCell<Link>>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(ErrorEvent)>,
}

/// A pool of planner workers over one bundle (see the module docs).
pub struct PlanPool {
    workers: Vec<PoolWorker>,
    bundle: Arc<[u8]>,
    pending: Pending,
    next_ticket: Cell<u64>,
}

impl std::fmt::Debug for PlanPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PlanPool({} workers)", self.workers.len())
    }
}

/// Fails every job of worker `index` with `message`.
fn fail_jobs_of(pending: &Pending, index: usize, message: &str) {
    let senders: Vec<oneshot::Sender<Answer>> = {
        let Ok(mut map) = pending.try_borrow_mut() else {
            return;
        };
        let tickets: Vec<u64> = map
            .iter()
            .filter(|(_, (w, _))| *w == index)
            .map(|(t, _)| *t)
            .collect();
        tickets
            .into_iter()
            .filter_map(|t| map.remove(&t).map(|(_, s)| s))
            .collect()
    };
    for s in senders {
        s.send(Err(message.to_string())).ok();
    }
}

fn answer(pending: &Pending, ticket: u64, result: Answer) {
    let sender = pending
        .try_borrow_mut()
        .ok()
        .and_then(|mut map| map.remove(&ticket));
    if let Some((_, s)) = sender {
        s.send(result).ok();
    }
}

/// Posts `{plan, bundle?}`; the bundle's copy is transferred.
fn post(worker: &Worker, job: &str, bundle: Option<&[u8]>) -> Result<(), String> {
    let message = Object::new();
    Reflect::set(
        &message,
        &JsValue::from_str("plan"),
        &JsValue::from_str(job),
    )
    .map_err(|e| js_message(&e))?;
    let transfer = Array::new();
    if let Some(bytes) = bundle {
        let array = Uint8Array::from(bytes);
        Reflect::set(&message, &JsValue::from_str("bundle"), &array).map_err(|e| js_message(&e))?;
        transfer.push(&array.buffer());
    }
    worker
        .post_message_with_transfer(&message, &transfer)
        .map_err(|e| {
            format!(
                "could not send a job to a planner worker: {}",
                js_message(&e)
            )
        })
}

impl PlanPool {
    /// Starts `workers` planner workers (at least 1) for `bundle`.
    ///
    /// # Errors
    /// The browser's message when a worker cannot be created (the view then computes on the page).
    pub fn new(bundle: Arc<[u8]>, workers: usize) -> Result<Self, String> {
        let pending: Pending = Rc::new(RefCell::new(HashMap::new()));
        let mut list = Vec::with_capacity(workers.max(1));
        for index in 0..workers.max(1) {
            let worker = Worker::new(WORKER_SCRIPT).map_err(|e| js_message(&e))?;
            let link = Rc::new(RefCell::new(Link::default()));
            let on_message = {
                let (pending, link, target, bundle) = (
                    pending.clone(),
                    link.clone(),
                    worker.clone(),
                    bundle.clone(),
                );
                Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
                    let (text, values) = read_message(&event.data());
                    match Reply::from_json(&text) {
                        Ok(Reply::Ready) => {
                            let queued = match link.try_borrow_mut() {
                                Ok(mut l) => {
                                    l.ready = true;
                                    std::mem::take(&mut l.queue)
                                }
                                Err(_) => Vec::new(),
                            };
                            for job in queued {
                                let first = link
                                    .try_borrow_mut()
                                    .map(|mut l| !std::mem::replace(&mut l.bundle_sent, true))
                                    .unwrap_or(false);
                                let sent = post(&target, &job, first.then_some(&bundle[..]));
                                if let Err(message) = sent {
                                    fail_jobs_of(&pending, index, &message);
                                }
                            }
                        }
                        Ok(Reply::PlanPart(reply)) => {
                            let result = unpack_part(&reply, values.as_deref().unwrap_or(&[]));
                            answer(&pending, reply.ticket, result);
                        }
                        Ok(Reply::PlanFailed { ticket, message }) => {
                            answer(&pending, ticket, Err(message));
                        }
                        Ok(Reply::Failed { message }) => fail_jobs_of(&pending, index, &message),
                        Ok(_) => {}
                        Err(e) => fail_jobs_of(
                            &pending,
                            index,
                            &format!("a planner worker sent an unreadable message: {e}"),
                        ),
                    }
                })
            };
            let on_error = {
                let (pending, link) = (pending.clone(), link.clone());
                Closure::<dyn FnMut(ErrorEvent)>::new(move |event: ErrorEvent| {
                    event.prevent_default();
                    let message = if event.message().is_empty() {
                        format!("a planner worker ({WORKER_SCRIPT}) could not be started")
                    } else {
                        format!("a planner worker failed: {}", event.message())
                    };
                    if let Ok(mut l) = link.try_borrow_mut() {
                        l.broken = Some(message.clone());
                    }
                    fail_jobs_of(&pending, index, &message);
                })
            };
            worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
            worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
            list.push(PoolWorker {
                worker,
                link,
                _on_message: on_message,
                _on_error: on_error,
            });
        }
        Ok(PlanPool {
            workers: list,
            bundle,
            pending,
            next_ticket: Cell::new(1),
        })
    }

    /// Workers in the pool.
    pub fn size(&self) -> usize {
        self.workers.len()
    }

    /// Sends `job` to worker `index`, or queues it until the worker is ready; the receiver gets
    /// the worker's part or why there is none.
    fn send(&self, index: usize, job: &PlanJob) -> oneshot::Receiver<Answer> {
        let (tx, rx) = oneshot::channel();
        let w = &self.workers[index];
        if let Ok(mut map) = self.pending.try_borrow_mut() {
            map.insert(job.ticket, (index, tx));
        }
        let text = job.to_json();
        let outcome = match w.link.try_borrow_mut() {
            Err(_) => Err("a planner worker is busy".to_string()),
            Ok(mut l) => match (&l.broken, l.ready) {
                (Some(message), _) => Err(message.clone()),
                (None, false) => {
                    l.queue.push(text);
                    Ok(())
                }
                (None, true) => {
                    let first = !std::mem::replace(&mut l.bundle_sent, true);
                    drop(l);
                    post(&w.worker, &text, first.then_some(&self.bundle[..]))
                }
            },
        };
        if let Err(message) = outcome {
            answer(&self.pending, job.ticket, Err(message));
        }
        rx
    }

    /// One estimate (`options.draws` draws of `design` at `budget` under `policy`), split across the
    /// pool's workers and merged with `planner` — which must be the page's planner of the same
    /// bundle and `policy`. Equal to `planner.estimate(design, budget, options)` bit for bit.
    ///
    /// # Errors
    /// A worker's message (the planner refused the job, a worker failed or could not be reached), or
    /// the merge's.
    pub async fn estimate(
        &self,
        planner: &Planner,
        policy: RepeatPolicy,
        design: Design,
        budget: usize,
        options: &EstimateOptions,
    ) -> Result<Estimate, String> {
        let name = design_name(design);
        let receivers: Vec<_> = split_draws(options.draws, self.workers.len())
            .into_iter()
            .enumerate()
            .map(|(index, range)| {
                let ticket = self.next_ticket.get();
                self.next_ticket.set(ticket + 1);
                let job = PlanJob::new(ticket, policy, &name, budget, options, range);
                self.send(index, &job)
            })
            .collect();
        let mut parts = Vec::with_capacity(receivers.len());
        for rx in receivers {
            let part = rx
                .await
                .map_err(|_| "a planner worker stopped before answering".to_string())??;
            parts.push(part);
        }
        planner
            .merge(design, budget, options, &parts)
            .map_err(|e| e.to_string())
    }
}

impl Drop for PlanPool {
    fn drop(&mut self) {
        for w in &self.workers {
            // Detach the handlers first: replies already queued must not reach dropped closures.
            w.worker.set_onmessage(None);
            w.worker.set_onerror(None);
            w.worker.terminate();
        }
    }
}
