//! Running a pilot in the browser: `fetch` with a concurrency limit, a per-call timeout
//! (`AbortController`), retries scheduled by `atlas_pilot` (429 / 5xx / network / timeout, honouring
//! `Retry-After`), pause, resume and cancel, and the run state persisted after every settled call
//! ([`crate::pilot::store::persist`]). A settled call keeps its concurrency slot until that state is
//! written ([`crate::pilot::store::written`]), so a closed tab or a crash sends again at most
//! `concurrency` calls: those in flight or not yet on disk.
//!
//! All the bookkeeping is `atlas_pilot::RunState`'s; this module only sends what the run's
//! [`atlas_pilot::Job`] offers ([`atlas_pilot::Job::ready`]) and reports back what came in: a pilot
//! plan, judge coding of a loaded bundle's Rationales ([`atlas_pilot::BundleJudgePlan`]), or a clinical
//! pilot ([`atlas_pilot::clinical::ClinicalPlan`], whose calls wait for the answers they depend on and
//! whose run is over when every call is answered, failed or skipped, [`atlas_pilot::Job::finished`]).
//! Each [`Kind`] has at most one run in the tab, in a thread-local [`Runner`]; the UI reads a
//! [`Snapshot`] signal that is refreshed after every change. Nothing here
//! logs: no request, header or key reaches the console.
//!
//! Every attempt is settled by [`atlas_pilot::Job::settle_attempt`], as `atlas pilot run` does: a
//! provider whose first calls all fail the same way is stopped early (for network failures the
//! runner then runs the two key-less probes of [`crate::pilot::connection_test`] and shows their diagnosis
//! with the stop), and a `Retry-After` longer than the run's longest wait
//! ([`Settings::max_wait_ms`]) pauses the run: nothing new starts, the calls in flight settle, and
//! [`resume`] goes on (the call the server asked to hold waits until the server's time).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use atlas_core::rq3::MajorityCounts;
use atlas_pilot::clinical::{ClinicalCallRow, ClinicalPlan, ClinicalProgress, ClinicalRows};
use atlas_pilot::connection::{Diagnosis, ProbeResult};
use atlas_pilot::provider::HttpRequest;
use atlas_pilot::retry::server_wait_message;
use atlas_pilot::run::{CallStatus, FailureGroup, RunError};
use atlas_pilot::{
    AttemptOutcome, BackoffPolicy, BundleJudgePlan, FailureKind, Job, JudgedRow, JudgedRows,
    KeyOwner, Next, PilotRow, PilotRows, Plan, RunState, SecretKey, Settled, Settling,
};
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use crate::browser::fetch::fetch_within;
use crate::pilot::store::{
    persist, persist_clinical, persist_judging, persist_judging_plan, written, Keys, SavedClinical,
    SavedJudging, SavedRun, CLINICAL_FORMAT, JUDGING_FORMAT, SAVED_FORMAT,
};

/// Which run of the tab: the pilot, judge coding of a loaded bundle, or a clinical pilot. Each has its
/// own runner, saved records and signals, and all three can run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A pilot audit ([`Plan`]).
    Pilot,
    /// Judge coding of a loaded bundle's Rationales ([`BundleJudgePlan`]).
    Judging,
    /// A clinical pilot ([`ClinicalPlan`]).
    Clinical,
}

/// What a run sends.
#[derive(Debug, Clone)]
pub enum Work {
    /// A pilot's audited calls, then its judge calls.
    Pilot(Rc<Plan>),
    /// Judge calls over a loaded bundle's Rationale texts.
    Judging(Rc<BundleJudgePlan>),
    /// The clinical protocol's calls (answers, counterfactual, re-answer, judges).
    Clinical(Rc<ClinicalPlan>),
}

impl Work {
    fn job(&self) -> &dyn Job {
        match self {
            Work::Pilot(p) => p.as_ref(),
            Work::Judging(p) => p.as_ref(),
            Work::Clinical(p) => p.as_ref(),
        }
    }

    /// Which kind of run sends it.
    pub fn kind(&self) -> Kind {
        match self {
            Work::Pilot(_) => Kind::Pilot,
            Work::Judging(_) => Kind::Judging,
            Work::Clinical(_) => Kind::Clinical,
        }
    }
}

/// The key row of judge `index` (from 0) of a judge coding of a loaded bundle: `bj1`, `bj2`, `bj3`.
pub fn judging_row_id(index: usize) -> String {
    format!("bj{}", index + 1)
}

/// The key row of a clinical pilot's audited model `index` (from 0): `cm1`, `cm2`, …; the judge's is
/// [`CLINICAL_JUDGE_ROW`].
pub fn clinical_row_id(index: usize) -> String {
    format!("cm{}", index + 1)
}

/// The key row of a clinical pilot's judge.
pub const CLINICAL_JUDGE_ROW: &str = "cj";

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Sending calls.
    Running,
    /// Stopped by the user (or restored after a reload); resumable.
    Paused,
    /// Stopped by the user for good; the results so far stay.
    Cancelled,
    /// Every call answered or failed.
    Finished,
}

impl Phase {
    /// Lower-case name, also the `data-phase` attribute the tests read.
    pub fn key(self) -> &'static str {
        match self {
            Phase::Running => "running",
            Phase::Paused => "paused",
            Phase::Cancelled => "cancelled",
            Phase::Finished => "finished",
        }
    }
}

/// The rows of a run's results table, by kind of run (model text as plain strings: rendered as
/// text, never HTML), kept current call by call ([`atlas_pilot::rows`]).
#[derive(Debug, Clone, PartialEq)]
pub enum RunRows {
    /// A pilot: one row per audited call, in plan order.
    Pilot {
        /// The rows.
        rows: Vec<PilotRow>,
        /// The judge panel's binary majority with its ties and too few readable votes (a design
        /// with judges).
        majority: Option<MajorityCounts>,
    },
    /// Judge coding of a loaded bundle: one row per judge call, in plan order.
    Judging {
        /// The rows.
        rows: Vec<JudgedRow>,
        /// The new judges' binary majority.
        majority: MajorityCounts,
    },
    /// A clinical pilot: one row per call, in plan order.
    Clinical {
        /// The rows.
        rows: Vec<ClinicalCallRow>,
        /// The counts of the rows (skipped and waiting calls included).
        progress: ClinicalProgress,
    },
}

/// A run's results table kept current: brought up to date for each call that changes, rebuilt
/// when many change at once (a new or restored run, pause, cancel, retry, an early stop).
#[derive(Debug, Clone)]
enum Table {
    Pilot(PilotRows),
    Judging(JudgedRows),
    Clinical(ClinicalRows),
}

impl Table {
    fn new(work: &Work, state: &RunState) -> Self {
        match work {
            Work::Pilot(plan) => Table::Pilot(PilotRows::new(plan, state)),
            Work::Judging(plan) => Table::Judging(JudgedRows::new(plan, state)),
            Work::Clinical(plan) => Table::Clinical(ClinicalRows::new(plan, state)),
        }
    }

    /// After call (or judge call) `id` changed.
    fn update(&mut self, work: &Work, state: &RunState, id: &str) {
        match (self, work) {
            (Table::Pilot(t), Work::Pilot(plan)) => t.update(plan, state, id),
            (Table::Judging(t), Work::Judging(plan)) => t.update(plan, state, id),
            (Table::Clinical(t), Work::Clinical(plan)) => t.update(plan, state, id),
            (table, work) => *table = Table::new(work, state),
        }
    }

    /// After the job added due calls (a pilot's judge calls).
    fn add_due_calls(&mut self, work: &Work, state: &RunState) {
        if let (Table::Pilot(t), Work::Pilot(plan)) = (self, work) {
            t.add_judge_calls(plan, state);
        }
    }

    fn rows(&self) -> RunRows {
        match self {
            Table::Pilot(t) => RunRows::Pilot {
                rows: t.rows().to_vec(),
                majority: t.majority(),
            },
            Table::Judging(t) => RunRows::Judging {
                rows: t.rows().to_vec(),
                majority: t.majority(),
            },
            Table::Clinical(t) => RunRows::Clinical {
                rows: t.rows().to_vec(),
                progress: t.progress(),
            },
        }
    }
}

/// What the UI shows of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Phase.
    pub phase: Phase,
    /// Audited calls: total, answered, failed, in flight, pending.
    pub calls: atlas_pilot::run::StatusCounts,
    /// Judge calls.
    pub judge_calls: atlas_pilot::run::StatusCounts,
    /// Estimated time left, ms.
    pub eta_ms: Option<u64>,
    /// Pending calls waiting for a retry time.
    pub waiting: usize,
    /// The results table.
    pub rows: RunRows,
    /// The last problem of the scheduler itself (not of a call).
    pub problem: Option<String>,
    /// Providers stopped early: the crate's message, with the browser's diagnosis once it is in.
    pub stops: Vec<StopNote>,
    /// Finally failed calls grouped by reason (count, first example), largest first.
    pub failure_groups: Vec<FailureGroup>,
    /// Why the run paused itself (a server asked for a longer wait than allowed), until resumed.
    pub server_wait: Option<String>,
}

/// A provider stopped early, as shown.
#[derive(Debug, Clone, PartialEq)]
pub struct StopNote {
    /// The provider's id.
    pub provider: String,
    /// [`atlas_pilot::run::EarlyStop::message`].
    pub message: String,
    /// What the probes found, for a stop by network errors (`None` until they are back, or for
    /// other reasons).
    pub diagnosis: Option<Diagnosis>,
}

/// How a run is sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Calls in flight at most.
    pub concurrency: usize,
    /// Per-call timeout, ms.
    pub timeout_ms: u32,
    /// The longest `Retry-After` honoured without pausing, ms
    /// ([`atlas_pilot::retry::BackoffPolicy::max_wait_ms`]).
    pub max_wait_ms: u64,
}

/// The run of one [`Kind`].
pub struct Runner {
    work: Work,
    state: RunState,
    /// The results table, kept current with `state`.
    table: Table,
    phase: Phase,
    settings: Settings,
    policy: BackoffPolicy,
    /// A fresh number ([`next_generation`]) at the start and on pause / cancel: answers of an older
    /// generation are dropped (their calls were interrupted and will run again).
    generation: u64,
    controllers: HashMap<String, web_sys::AbortController>,
    /// Settled calls whose saved state is not yet written ([`written`]). Each holds its
    /// concurrency slot until then, so a closed tab re-sends at most `concurrency` calls.
    saving: usize,
    wake_timer: Option<i32>,
    form: serde_json::Value,
    /// Where the judged bundle came from (judge coding only; for the saved record).
    source: String,
    keys: Keys,
    snapshot: RwSignal<Option<Snapshot>>,
    store_error: RwSignal<Option<String>>,
    problem: Option<String>,
    /// The pause a server's long `Retry-After` asked for (cleared on resume).
    server_wait: Option<String>,
    /// Diagnoses of providers stopped early by network errors, by provider id (`None` while the
    /// probes run).
    diagnoses: HashMap<String, Option<Diagnosis>>,
}

thread_local! {
    static PILOT: RefCell<Option<Runner>> = const { RefCell::new(None) };
    static JUDGING: RefCell<Option<Runner>> = const { RefCell::new(None) };
    static CLINICAL: RefCell<Option<Runner>> = const { RefCell::new(None) };
}

/// The signals a run reports into.
#[derive(Clone, Copy)]
pub struct Outputs {
    /// The UI's view of the run.
    pub snapshot: RwSignal<Option<Snapshot>>,
    /// Persistence problems.
    pub store_error: RwSignal<Option<String>>,
}

impl Outputs {
    /// Empty signals: no run shown, no problem.
    pub fn new() -> Self {
        Outputs {
            snapshot: RwSignal::new(None),
            store_error: RwSignal::new(None),
        }
    }
}

impl Default for Outputs {
    fn default() -> Self {
        Outputs::new()
    }
}

impl Snapshot {
    /// The estimated time left in words (`3 min 5 s`), `unknown` before the first answer.
    pub fn time_left(&self) -> String {
        self.eta_ms.map_or_else(|| "unknown".to_string(), duration)
    }
}

/// `42 s`, `3 min 5 s`, `1 h 2 min`.
fn duration(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{} h {} min", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{} min {} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

/// A run to install ([`install`]): what it sends, its state, what is saved with it, how it is sent
/// and where it reports.
pub struct RunSetup {
    /// What the run sends.
    pub work: Work,
    /// Its state: new, or read back after a reload (its in-flight calls become pending again).
    pub state: RunState,
    /// The form it was made from, saved with the run (holds no key).
    pub form: serde_json::Value,
    /// Where a judged bundle came from, saved with a judge coding (empty for the other runs).
    pub source: String,
    /// How it is sent.
    pub settings: Settings,
    /// The keys of its provider rows.
    pub keys: Keys,
    /// The signals it reports into.
    pub out: Outputs,
}

/// Installs a run in `phase` and shows it. Replaces any previous run of the same [`Kind`], aborting
/// its calls. A judge coding's plan is saved here, once.
pub fn install(setup: RunSetup, phase: Phase) {
    let RunSetup {
        work,
        mut state,
        form,
        source,
        settings,
        keys,
        out,
    } = setup;
    let kind = work.kind();
    stop_current(kind);
    state.interrupt();
    let finished = work.job().finished(&state);
    if let Work::Judging(plan) = &work {
        persist_judging_plan(plan, out.store_error);
    }
    let runner = Runner {
        table: Table::new(&work, &state),
        work,
        state,
        phase: if finished && phase != Phase::Cancelled {
            Phase::Finished
        } else {
            phase
        },
        settings,
        policy: BackoffPolicy {
            max_wait_ms: settings.max_wait_ms,
            ..BackoffPolicy::default()
        },
        generation: next_generation(),
        controllers: HashMap::new(),
        saving: 0,
        wake_timer: None,
        form,
        source,
        keys,
        snapshot: out.snapshot,
        store_error: out.store_error,
        problem: None,
        server_wait: None,
        diagnoses: HashMap::new(),
    };
    slot(kind).with_borrow_mut(|r| *r = Some(runner));
    with_runner(kind, |r| {
        let _ = r.save(false);
        r.publish();
    });
    pump(kind);
}

fn slot(kind: Kind) -> &'static std::thread::LocalKey<RefCell<Option<Runner>>> {
    match kind {
        Kind::Pilot => &PILOT,
        Kind::Judging => &JUDGING,
        Kind::Clinical => &CLINICAL,
    }
}

fn stop_current(kind: Kind) {
    with_runner(kind, |r| {
        r.abort_all();
        r.interrupt();
    });
}

thread_local! {
    static GENERATION: Cell<u64> = const { Cell::new(0) };
}

/// A generation number never used before in this tab (by any runner), so that an answer of a
/// replaced or interrupted run is never taken for one of the current run.
fn next_generation() -> u64 {
    GENERATION.with(|g| {
        g.set(g.get() + 1);
        g.get()
    })
}

fn with_runner<T>(kind: Kind, f: impl FnOnce(&mut Runner) -> T) -> Option<T> {
    slot(kind).with_borrow_mut(|r| r.as_mut().map(f))
}

/// The pilot run's state as a bundle-ready copy, with its plan.
pub fn state_and_plan() -> Option<(RunState, Rc<Plan>)> {
    with_runner(Kind::Pilot, |r| match &r.work {
        Work::Pilot(plan) => Some((r.state.clone(), plan.clone())),
        Work::Judging(_) | Work::Clinical(_) => None,
    })
    .flatten()
}

/// The judge coding's state, with its plan.
pub fn judging_state() -> Option<(RunState, Rc<BundleJudgePlan>)> {
    with_runner(Kind::Judging, |r| match &r.work {
        Work::Judging(plan) => Some((r.state.clone(), plan.clone())),
        Work::Pilot(_) | Work::Clinical(_) => None,
    })
    .flatten()
}

/// The clinical pilot's state, with its plan.
pub fn clinical_state() -> Option<(RunState, Rc<ClinicalPlan>)> {
    with_runner(Kind::Clinical, |r| match &r.work {
        Work::Clinical(plan) => Some((r.state.clone(), plan.clone())),
        Work::Pilot(_) | Work::Judging(_) => None,
    })
    .flatten()
}

/// Pauses: in-flight calls are aborted and become pending (their attempt counts).
pub fn pause(kind: Kind) {
    with_runner(kind, |r| {
        if r.phase == Phase::Running {
            r.abort_all();
            r.interrupt();
            r.phase = Phase::Paused;
            let _ = r.save(false);
            r.publish();
        }
    });
}

/// Why a run cannot resume.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResumeError {
    /// Provider rows whose provider needs a key that is not typed (`m1`, `bj2 (judge j-b)`,
    /// `cm1 (model-a)`, `cj (judge)`).
    #[error("type the API key of {} first (keys are not saved with the run)", .0.join(", "))]
    MissingKeys(Vec<String>),
}

impl From<ResumeError> for String {
    fn from(e: ResumeError) -> Self {
        e.to_string()
    }
}

/// Resumes a paused run (after a reload too). Calls whose provider needs a key must have one.
///
/// # Errors
/// [`ResumeError::MissingKeys`].
pub fn resume(kind: Kind) -> Result<(), ResumeError> {
    let missing = with_runner(kind, |r| {
        let mut missing: Vec<String> = Vec::new();
        match &r.work {
            Work::Pilot(plan) => {
                let design = &plan.design;
                missing.extend(
                    design
                        .models
                        .iter()
                        .filter(|m| m.provider.requires_key() && r.keys.get(&m.id).is_empty())
                        .map(|m| m.id.clone()),
                );
                missing.extend(
                    design
                        .judges
                        .iter()
                        .filter(|j| j.provider.requires_key() && r.keys.get(&j.id).is_empty())
                        .map(|j| j.id.clone()),
                );
            }
            Work::Judging(plan) => missing.extend(
                plan.design
                    .judges
                    .iter()
                    .enumerate()
                    .filter(|(i, j)| {
                        j.provider.requires_key() && r.keys.get(&judging_row_id(*i)).is_empty()
                    })
                    .map(|(i, j)| format!("{} (judge {})", judging_row_id(i), j.id)),
            ),
            Work::Clinical(plan) => {
                let design = &plan.design;
                missing.extend(
                    design
                        .models
                        .iter()
                        .enumerate()
                        .filter(|(i, m)| {
                            m.provider.requires_key() && r.keys.get(&clinical_row_id(*i)).is_empty()
                        })
                        .map(|(i, m)| format!("{} ({})", clinical_row_id(i), m.id)),
                );
                if let Some(j) = &design.judge {
                    if j.provider.requires_key() && r.keys.get(CLINICAL_JUDGE_ROW).is_empty() {
                        missing.push(format!("{CLINICAL_JUDGE_ROW} (judge)"));
                    }
                }
            }
        }
        missing
    })
    .unwrap_or_default();
    if !missing.is_empty() {
        return Err(ResumeError::MissingKeys(missing));
    }
    with_runner(kind, |r| {
        r.server_wait = None;
        if matches!(r.phase, Phase::Paused | Phase::Cancelled | Phase::Finished) {
            r.phase = Phase::Running;
            r.publish();
        }
    });
    pump(kind);
    Ok(())
}

/// Cancels: in-flight calls are aborted; the run ends with what it has (not offered for resuming).
pub fn cancel(kind: Kind) {
    with_runner(kind, |r| {
        r.abort_all();
        r.interrupt();
        r.phase = Phase::Cancelled;
        let _ = r.save(true);
        r.publish();
    });
}

/// Failed calls back to pending, then resume.
///
/// # Errors
/// As [`resume`].
pub fn retry_failed(kind: Kind) -> Result<(), ResumeError> {
    with_runner(kind, |r| {
        r.state.retry_failed();
        r.table = Table::new(&r.work, &r.state);
        r.diagnoses.clear();
        r.phase = Phase::Paused;
    });
    resume(kind)
}

/// Forgets the run of `kind` in this tab (the caller deletes the saved copy).
pub fn discard(kind: Kind) {
    stop_current(kind);
    slot(kind).with_borrow_mut(|r| {
        if let Some(r) = r.as_ref() {
            r.snapshot.set(None);
        }
        *r = None;
    });
}

impl Runner {
    /// Every in-flight call back to pending ([`RunState::interrupt`]), the table rebuilt.
    fn interrupt(&mut self) {
        if self.state.interrupt() > 0 {
            self.table = Table::new(&self.work, &self.state);
        }
    }

    fn abort_all(&mut self) {
        // Answers of the old generation are dropped, and so are their pending writes' slots.
        self.generation = next_generation();
        self.saving = 0;
        for (_, c) in self.controllers.drain() {
            c.abort();
        }
        if let (Some(t), Some(w)) = (self.wake_timer.take(), web_sys::window()) {
            w.clear_timeout_with_handle(t);
        }
    }

    /// Queues the run's record for writing; its sequence number for [`written`].
    fn save(&self, cancelled: bool) -> Option<u64> {
        let state = match self.state.to_json() {
            Ok(s) => s,
            Err(e) => {
                self.store_error
                    .set(Some(format!("the run state could not be serialised: {e}")));
                return None;
            }
        };
        let cancelled = cancelled || self.phase == Phase::Cancelled;
        match &self.work {
            Work::Pilot(plan) => persist(
                &SavedRun {
                    format: SAVED_FORMAT.to_string(),
                    form: self.form.clone(),
                    design: plan.design.clone(),
                    state,
                    cancelled,
                },
                self.store_error,
            ),
            Work::Judging(plan) => persist_judging(
                &SavedJudging {
                    format: JUDGING_FORMAT.to_string(),
                    form: self.form.clone(),
                    plan_fingerprint: plan.fingerprint.clone(),
                    state,
                    cancelled,
                    source: self.source.clone(),
                },
                self.store_error,
            ),
            Work::Clinical(plan) => persist_clinical(
                &SavedClinical {
                    format: CLINICAL_FORMAT.to_string(),
                    form: self.form.clone(),
                    design: plan.design.clone(),
                    state,
                    cancelled,
                },
                self.store_error,
            ),
        }
    }

    /// For each provider newly stopped early by network errors, runs the two key-less probes of
    /// [`crate::pilot::connection_test::diagnose_network_failure`] once and shows the diagnosis with the
    /// stop.
    fn diagnose_new_stops(&mut self, kind: Kind) {
        let work = self.work.clone();
        let job = work.job();
        let stops: Vec<(String, String, String)> = self
            .state
            .early_stops()
            .into_iter()
            .filter(|s| {
                s.reason.kind == FailureKind::Network && !self.diagnoses.contains_key(&s.provider)
            })
            .map(|s| (s.provider.clone(), s.url.clone(), s.reason.message.clone()))
            .collect();
        for (provider, url, message) in stops {
            // A call of that provider gives its Provider and key.
            let ids = self
                .state
                .calls
                .iter()
                .map(|c| c.id.as_str())
                .chain(self.state.judge_calls.iter().map(|j| j.id.as_str()));
            let Some((p, id)) = ids
                .filter_map(|id| {
                    job.provider_of(&self.state, id)
                        .filter(|(name, _)| *name == provider)
                        .map(|(_, p)| (p.clone(), id.to_string()))
                })
                .next()
            else {
                continue;
            };
            let key = self.key_for(&id);
            self.diagnoses.insert(provider.clone(), None);
            let generation = self.generation;
            spawn_local(async move {
                let d = crate::pilot::connection_test::diagnose_network_failure(
                    &p, &url, message, &key,
                )
                .await;
                with_runner(kind, |r| {
                    // Not after "Retry failed calls" (it clears the diagnoses) or a new run.
                    if r.generation == generation && r.diagnoses.contains_key(&provider) {
                        r.diagnoses.insert(provider, Some(d));
                        r.publish();
                    }
                });
            });
        }
    }

    fn key_for(&self, id: &str) -> SecretKey {
        let row = match (&self.work, self.work.job().key_owner(&self.state, id)) {
            (Work::Judging(_), Some(KeyOwner::Judge { index, .. })) => judging_row_id(index),
            (Work::Clinical(_), Some(KeyOwner::Judge { .. })) => CLINICAL_JUDGE_ROW.to_string(),
            (Work::Clinical(plan), Some(KeyOwner::Model(model))) => {
                match plan.design.models.iter().position(|m| m.id == model) {
                    Some(i) => clinical_row_id(i),
                    None => return SecretKey::default(),
                }
            }
            (_, Some(KeyOwner::Model(id) | KeyOwner::Judge { id, .. })) => id.to_string(),
            (_, None) => return SecretKey::default(),
        };
        self.keys.get(&row)
    }

    fn publish(&self) {
        let progress = self.state.progress();
        let waiting = self
            .state
            .calls
            .iter()
            .map(|c| &c.status)
            .chain(self.state.judge_calls.iter().map(|j| &j.status))
            .filter(|s| {
                matches!(
                    s,
                    CallStatus::Pending {
                        not_before_ms: Some(_),
                        ..
                    }
                )
            })
            .count();
        let rows = self.table.rows();
        let skipped = match &rows {
            RunRows::Clinical { progress, .. } => Some(progress.skipped),
            RunRows::Pilot { .. } | RunRows::Judging { .. } => None,
        };
        let stops = self
            .state
            .early_stops()
            .into_iter()
            .map(|s| StopNote {
                provider: s.provider.clone(),
                message: s.message.clone(),
                diagnosis: self.diagnoses.get(&s.provider).cloned().flatten(),
            })
            .collect();
        let snapshot = Snapshot {
            phase: self.phase,
            calls: progress.calls,
            judge_calls: progress.judge_calls,
            eta_ms: progress.eta_ms(self.settings.concurrency),
            waiting,
            rows,
            problem: self.problem.clone(),
            stops,
            failure_groups: self.state.failure_groups(),
            server_wait: self.server_wait.clone(),
        };
        self.snapshot.set(Some(snapshot));
        publish_counts(
            match self.work.kind() {
                Kind::Pilot => "__atlasPilot",
                Kind::Judging => "__atlasJudging",
                Kind::Clinical => "__atlasClinical",
            },
            &progress,
            skipped,
            self.phase,
        );
    }
}

/// `window.__atlasPilot` (a pilot), `window.__atlasJudging` (judge coding of a loaded bundle) or
/// `window.__atlasClinical` (a clinical pilot, with `skipped`: calls that will never run): phase and
/// counts, read by the end-to-end tests.
fn publish_counts(
    name: &str,
    p: &atlas_pilot::run::Progress,
    skipped: Option<usize>,
    phase: Phase,
) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let o = js_sys::Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = js_sys::Reflect::set(&o, &JsValue::from_str(k), &v);
    };
    set("phase", JsValue::from_str(phase.key()));
    set("total", JsValue::from_f64(p.calls.total as f64));
    set("answered", JsValue::from_f64(p.calls.answered as f64));
    set("failed", JsValue::from_f64(p.calls.failed as f64));
    set("in_flight", JsValue::from_f64(p.calls.in_flight as f64));
    set("pending", JsValue::from_f64(p.calls.pending as f64));
    set("judge_total", JsValue::from_f64(p.judge_calls.total as f64));
    set("judge_done", JsValue::from_f64(p.judge_calls.done() as f64));
    if let Some(n) = skipped {
        set("skipped", JsValue::from_f64(n as f64));
    }
    let _ = js_sys::Reflect::set(&window, &JsValue::from_str(name), &o);
}

fn now() -> u64 {
    js_sys::Date::now() as u64
}

/// One call on its way.
struct Launch {
    id: String,
    generation: u64,
    request: HttpRequest,
    key: SecretKey,
    controller: web_sys::AbortController,
    timeout_ms: u32,
}

/// Starts whatever may start now, schedules the next retry wake-up, adds due calls (a pilot's judge
/// calls) once the audited calls are done, and notices the end of the run.
fn pump(kind: Kind) {
    let launches = with_runner(kind, |r| {
        let mut launches = Vec::new();
        if r.phase != Phase::Running {
            return launches;
        }
        let work = r.work.clone();
        let job = work.job();
        loop {
            let now = now();
            let free = r
                .settings
                .concurrency
                .saturating_sub(r.controllers.len() + r.saving);
            let ready = job.ready(&r.state, now, free);
            for id in ready {
                let key = r.key_for(&id);
                let request = job.request(&r.state, &id, &key);
                if let Err(e) = r.state.begin(&id, now) {
                    r.problem = Some(e.to_string());
                    continue;
                }
                r.table.update(&work, &r.state, &id);
                match request {
                    Ok(request) => {
                        let Ok(controller) = web_sys::AbortController::new() else {
                            let _ = r.state.fail_now(
                                &id,
                                FailureKind::Request,
                                "the browser could not create an AbortController",
                                &key,
                            );
                            r.table.update(&work, &r.state, &id);
                            continue;
                        };
                        r.controllers.insert(id.clone(), controller.clone());
                        launches.push(Launch {
                            id,
                            generation: r.generation,
                            request,
                            key,
                            controller,
                            timeout_ms: r.settings.timeout_ms,
                        });
                    }
                    Err(e) => {
                        let _ = r
                            .state
                            .fail_now(&id, FailureKind::Request, &e.to_string(), &key);
                        r.table.update(&work, &r.state, &id);
                    }
                }
            }
            // Due calls (a pilot's judge calls) once every audited call is settled.
            if r.controllers.is_empty()
                && launches.is_empty()
                && r.state.progress().calls.remaining() == 0
                && job.add_due_calls(&mut r.state) > 0
            {
                r.table.add_due_calls(&work, &r.state);
                continue;
            }
            break;
        }
        if let (Some(t), Some(w)) = (r.wake_timer.take(), web_sys::window()) {
            w.clear_timeout_with_handle(t);
        }
        if r.controllers.is_empty()
            && r.saving == 0
            && launches.is_empty()
            && job.finished(&r.state)
        {
            r.phase = Phase::Finished;
        }
        // A retry wake-up is needed only when a slot is free (else the next settled call pumps).
        let free = r.settings.concurrency > r.controllers.len() + r.saving;
        if r.phase == Phase::Running && free {
            if let Some(at) = r.state.next_wake_ms() {
                let delay = at.saturating_sub(now()).clamp(50, i32::MAX as u64 - 1) as i32;
                let cb = Closure::once_into_js(move || pump(kind));
                r.wake_timer = web_sys::window().and_then(|w| {
                    w.set_timeout_with_callback_and_timeout_and_arguments_0(
                        cb.unchecked_ref(),
                        delay,
                    )
                    .ok()
                });
            }
        }
        if !launches.is_empty() || r.phase == Phase::Finished {
            let _ = r.save(false);
        }
        r.publish();
        launches
    })
    .unwrap_or_default();
    for launch in launches {
        spawn_local(send(kind, launch));
    }
}

async fn send(kind: Kind, launch: Launch) {
    let outcome = fetch(&launch).await;
    let saved = with_runner(kind, |r| {
        if r.generation != launch.generation {
            return None; // paused or cancelled meanwhile: the call was interrupted and runs again
        }
        r.controllers.remove(&launch.id);
        let now = now();
        let work = r.work.clone();
        let job = work.job();
        let stops_before = r.state.early_stops().len();
        let at = Settling {
            key: &launch.key,
            policy: &r.policy,
            now_ms: now,
        };
        let result: Result<Settled, RunError> =
            job.settle_attempt(&mut r.state, &launch.id, outcome, &at);
        r.table.update(&work, &r.state, &launch.id);
        match result {
            Ok(Settled::Error {
                next: Next::Pause {
                    wait_ms, limit_ms, ..
                },
                ..
            }) => {
                // Nothing new starts; the calls in flight settle; resume goes on.
                if r.phase == Phase::Running {
                    r.phase = Phase::Paused;
                }
                if r.server_wait.is_none() {
                    r.server_wait = Some(server_wait_message(&launch.id, wait_ms, limit_ms));
                }
            }
            Ok(_) => {}
            Err(e) => r.problem = Some(launch.key.scrub(&e.to_string())),
        }
        if r.state.early_stops().len() > stops_before {
            // The stopped provider's pending calls failed at once.
            r.table = Table::new(&work, &r.state);
            r.diagnose_new_stops(kind);
        }
        let seq = r.save(false);
        if seq.is_some() {
            r.saving += 1;
        }
        r.publish();
        seq
    })
    .flatten();
    // The call keeps its slot until its settled state is on disk.
    if let Some(seq) = saved {
        written(seq).await;
        with_runner(kind, |r| {
            if r.generation == launch.generation {
                r.saving = r.saving.saturating_sub(1);
            }
        });
    }
    pump(kind);
}

async fn fetch(launch: &Launch) -> AttemptOutcome {
    let url = &launch.request.url;
    let cors = web_sys::RequestMode::Cors;
    match fetch_within(
        url,
        Some(&launch.request),
        cors,
        &launch.controller,
        launch.timeout_ms,
    )
    .await
    {
        ProbeResult::Response {
            status,
            headers,
            body,
        } => AttemptOutcome::Response {
            status,
            headers,
            body,
        },
        ProbeResult::TimedOut => AttemptOutcome::TimedOut,
        ProbeResult::Failed { message } => AttemptOutcome::Network {
            message: launch.key.scrub(&message),
        },
        // Only a `no-cors` request is opaque; the calls are `cors`.
        ProbeResult::Opaque => AttemptOutcome::Network {
            message: "the browser gave an opaque response to a cors request".into(),
        },
    }
}
