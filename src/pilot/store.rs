//! Where the browser pilot keeps things: the run in IndexedDB, API keys in memory (and, only on the
//! user's explicit opt-in, in `localStorage`).
//!
//! **Run state.** One record, key `current`, in the object store `runs` of the IndexedDB database
//! `audit-atlas-pilot` (through the `rexie` crate): a JSON string of [`SavedRun`] — the form as typed,
//! the design ([`atlas_pilot::PilotDesign`], which holds no key) and the run state
//! ([`atlas_pilot::RunState::to_json`], whose failure messages are scrubbed of the key). It is written
//! after every settled call; writes are coalesced so that the newest state always wins and never two
//! writes race ([`persist`]).
//!
//! **Judge coding of a loaded bundle** is kept the same way under two more keys of that store:
//! [`JUDGING_PLAN`] holds its plan ([`atlas_pilot::BundleJudgePlan`]: the judges, which hold no key, and
//! the chosen cells with their texts), written once when the run starts; [`JUDGING`] holds a
//! [`SavedJudging`] (the form as typed, the plan's fingerprint, the run state), written after every
//! settled call.
//!
//! **A clinical pilot** (seed 001's protocol, [`atlas_pilot::clinical`]) is kept under [`CLINICAL`]: a
//! [`SavedClinical`] (the form as typed, the [`atlas_pilot::clinical::ClinicalDesign`] with its MedQA
//! items, which holds no key, and the run state), written after every settled call.
//!
//! **Keys.** [`Keys`] holds one [`SecretKey`] per provider row (`m1`, `j1`, …) in memory. Only when
//! the user ticks "remember in this browser" are they written to `localStorage` under
//! [`KEYS_STORAGE`]; "forget keys" clears memory and that entry. No other place (URL, IndexedDB,
//! bundle, export, console) ever receives a key.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use atlas_pilot::SecretKey;
use futures_channel::oneshot;
use leptos::prelude::*;
use leptos::task::spawn_local;
use rexie::{ObjectStore, Rexie, TransactionMode};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;

/// IndexedDB database of the pilot.
pub const DB_NAME: &str = "audit-atlas-pilot";
/// Its object store.
pub const STORE: &str = "runs";
/// The key of the one saved run.
pub const CURRENT: &str = "current";
/// `localStorage` entry of remembered keys (only after the user's opt-in).
pub const KEYS_STORAGE: &str = "audit-atlas-pilot-keys";
/// `format` of a [`SavedRun`].
pub const SAVED_FORMAT: &str = "audit-atlas-pilot-saved";
/// The key of the saved judge coding of a loaded bundle ([`SavedJudging`]).
pub const JUDGING: &str = "judging";
/// The key of its plan ([`atlas_pilot::BundleJudgePlan`] as JSON).
pub const JUDGING_PLAN: &str = "judging-plan";
/// `format` of a [`SavedJudging`].
pub const JUDGING_FORMAT: &str = "audit-atlas-bundle-judging-saved";

/// The key of the saved clinical pilot ([`SavedClinical`]).
pub const CLINICAL: &str = "clinical";
/// `format` of a [`SavedClinical`].
pub const CLINICAL_FORMAT: &str = "audit-atlas-clinical-pilot-saved";

/// What is persisted of a clinical pilot: no key anywhere inside.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedClinical {
    /// Always [`CLINICAL_FORMAT`].
    pub format: String,
    /// The form as typed (provider rows, parameters), to show it again after a reload.
    pub form: serde_json::Value,
    /// The design the plan is rebuilt from (models, judge, MedQA items, parameters, seed).
    pub design: atlas_pilot::clinical::ClinicalDesign,
    /// [`atlas_pilot::RunState::to_json`].
    pub state: String,
    /// Whether the user cancelled the run (then it is not offered for resuming).
    pub cancelled: bool,
}

/// What is persisted of a run: no key anywhere inside.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedRun {
    /// Always [`SAVED_FORMAT`].
    pub format: String,
    /// The form as typed (provider rows, design fields), to show it again after a reload.
    pub form: serde_json::Value,
    /// The design the plan is rebuilt from.
    pub design: atlas_pilot::PilotDesign,
    /// [`atlas_pilot::RunState::to_json`].
    pub state: String,
    /// Whether the user cancelled the run (then it is not offered for resuming).
    pub cancelled: bool,
}

/// What is persisted of a judge coding of a loaded bundle (besides its plan): no key anywhere inside.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedJudging {
    /// Always [`JUDGING_FORMAT`].
    pub format: String,
    /// The form as typed (judge rows, scope, caps), to show it again after a reload.
    pub form: serde_json::Value,
    /// [`atlas_pilot::BundleJudgePlan::fingerprint`] of the plan saved under [`JUDGING_PLAN`].
    pub plan_fingerprint: String,
    /// [`atlas_pilot::RunState::to_json`].
    pub state: String,
    /// Whether the user cancelled the run (then it is not offered for resuming).
    pub cancelled: bool,
    /// Where the judged bundle came from (a URL or `file: NAME`), to tell the user which to open.
    pub source: String,
}

/// What went wrong with the pilot's records in IndexedDB (shown to the user; a record that cannot
/// be read is left in place).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The database could not be opened: the browser's message.
    #[error("IndexedDB could not be opened: {0}")]
    Open(String),
    /// A record could not be written: the browser's message.
    #[error("saving the run in IndexedDB failed: {0}")]
    Write(String),
    /// A record could not be read: the browser's message.
    #[error("reading the saved run from IndexedDB failed: {0}")]
    Read(String),
    /// A record could not be deleted: the browser's message.
    #[error("deleting the saved run failed: {0}")]
    Delete(String),
    /// A record could not be made into JSON: which record (`the run`, `the judge coding`, …).
    #[error("{what} could not be serialised: {message}")]
    Serialise {
        /// The record.
        what: &'static str,
        /// serde's message.
        message: String,
    },
    /// A saved record is not the JSON this build writes: which record (`run`, `judge coding`,
    /// `judge coding's plan`, `clinical pilot`).
    #[error("the saved {what} could not be read ({message}); it was left in place")]
    Unreadable {
        /// The record.
        what: &'static str,
        /// serde's message.
        message: String,
    },
    /// A saved judge coding without its plan.
    #[error("the saved judge coding has no saved plan; it was left in place")]
    NoJudgingPlan,
    /// A saved judge coding whose saved plan has another fingerprint.
    #[error(
        "the saved judge coding and its saved plan do not belong together; they were left in place"
    )]
    JudgingPlanMismatch,
}

impl From<StoreError> for String {
    fn from(e: StoreError) -> Self {
        e.to_string()
    }
}

thread_local! {
    static DB: RefCell<Option<Rc<Rexie>>> = const { RefCell::new(None) };
    /// Records waiting to be written, by key: the sequence number of the oldest state not yet
    /// written under that key, and the newest JSON (which holds everything older ones held).
    static QUEUED: RefCell<BTreeMap<&'static str, (u64, String)>> = const { RefCell::new(BTreeMap::new()) };
    static WRITING: Cell<bool> = const { Cell::new(false) };
    static WRITES: Cell<u32> = const { Cell::new(0) };
    /// The sequence number of the last queued state (the first is 1).
    static LAST_QUEUED: Cell<u64> = const { Cell::new(0) };
    /// The oldest sequence number inside the write in progress, if one is.
    static IN_WRITE: Cell<Option<u64>> = const { Cell::new(None) };
    /// Every state queued with a number up to this one has been written (or its failure reported).
    static DONE: Cell<u64> = const { Cell::new(0) };
    /// [`written`] calls waiting for their number.
    static WAITERS: RefCell<Vec<(u64, oneshot::Sender<()>)>> = const { RefCell::new(Vec::new()) };
}

async fn db() -> Result<Rc<Rexie>, StoreError> {
    if let Some(db) = DB.with_borrow(Clone::clone) {
        return Ok(db);
    }
    let db = Rexie::builder(DB_NAME)
        .version(1)
        .add_object_store(ObjectStore::new(STORE))
        .build()
        .await
        .map_err(|e| StoreError::Open(e.to_string()))?;
    let db = Rc::new(db);
    DB.with_borrow_mut(|slot| *slot = Some(db.clone()));
    Ok(db)
}

async fn put(key: &str, json: &str) -> Result<(), StoreError> {
    let db = db().await?;
    let fail = |e: rexie::Error| StoreError::Write(e.to_string());
    let tx = db
        .transaction(&[STORE], TransactionMode::ReadWrite)
        .map_err(fail)?;
    let store = tx.store(STORE).map_err(fail)?;
    store
        .put(&JsValue::from_str(json), Some(&JsValue::from_str(key)))
        .await
        .map_err(fail)?;
    tx.done().await.map_err(fail)?;
    Ok(())
}

/// Queues `saved` for writing: the newest queued state is written as soon as the previous write is
/// done (one writer, so writes never overtake each other). A failed write is reported in `error`.
///
/// Returns the state's sequence number for [`written`]; `None` when it could not be serialised
/// (reported in `error`).
pub fn persist(saved: &SavedRun, error: RwSignal<Option<String>>) -> Option<u64> {
    queue_json(CURRENT, serde_json::to_string(saved), "the run", error)
}

/// Queues a judge coding's record (as [`persist`]).
pub fn persist_judging(saved: &SavedJudging, error: RwSignal<Option<String>>) -> Option<u64> {
    queue_json(
        JUDGING,
        serde_json::to_string(saved),
        "the judge coding",
        error,
    )
}

/// Queues a judge coding's plan (written once, when the run starts; as [`persist`]).
pub fn persist_judging_plan(
    plan: &atlas_pilot::BundleJudgePlan,
    error: RwSignal<Option<String>>,
) -> Option<u64> {
    queue_json(
        JUDGING_PLAN,
        serde_json::to_string(plan),
        "the judge coding's plan",
        error,
    )
}

/// Queues a clinical pilot's record (as [`persist`]).
pub fn persist_clinical(saved: &SavedClinical, error: RwSignal<Option<String>>) -> Option<u64> {
    queue_json(
        CLINICAL,
        serde_json::to_string(saved),
        "the clinical pilot",
        error,
    )
}

fn queue_json(
    key: &'static str,
    json: serde_json::Result<String>,
    what: &'static str,
    error: RwSignal<Option<String>>,
) -> Option<u64> {
    match json {
        Ok(json) => Some(queue(key, json, error)),
        Err(e) => {
            let e = StoreError::Serialise {
                what,
                message: e.to_string(),
            };
            error.set(Some(e.to_string()));
            None
        }
    }
}

/// Waits until the state queued with sequence number `seq` (from [`persist`] and the like) has been
/// written to IndexedDB, alone or inside a newer state of the same record, or its write failed (the
/// failure is reported in the `error` signal given to `persist`). The runner holds a call's
/// concurrency slot until then, so a closed tab re-sends at most the calls that held slots.
pub async fn written(seq: u64) {
    if DONE.get() >= seq {
        return;
    }
    let (tx, rx) = oneshot::channel();
    WAITERS.with_borrow_mut(|w| w.push((seq, tx)));
    // A dropped sender (never: waiters are only removed when done) would also end the wait.
    let _ = rx.await;
}

/// Queues `json` under `key`; one writer drains the queue, the newest JSON of each key wins.
fn queue(key: &'static str, json: String, error: RwSignal<Option<String>>) -> u64 {
    let seq = LAST_QUEUED.get() + 1;
    LAST_QUEUED.set(seq);
    QUEUED.with_borrow_mut(|q| {
        // A state not yet written keeps its (older) number: the newer JSON replaces its text.
        let first = q.get(key).map_or(seq, |(first, _)| *first);
        q.insert(key, (first, json));
    });
    if !WRITING.get() {
        WRITING.set(true);
        spawn_local(async move {
            while let Some((key, (first, json))) = QUEUED.with_borrow_mut(BTreeMap::pop_first) {
                IN_WRITE.set(Some(first));
                let result = put(key, &json).await;
                IN_WRITE.set(None);
                match result {
                    Ok(()) => {
                        WRITES.set(WRITES.get() + 1);
                        publish_writes();
                    }
                    Err(e) => error.set(Some(e.to_string())),
                }
                mark_done();
            }
            WRITING.set(false);
        });
    }
    seq
}

/// Every number below the oldest still queued or being written is done; wakes their waiters.
fn mark_done() {
    let oldest_queued = QUEUED.with_borrow(|q| q.values().map(|(first, _)| *first).min());
    let oldest = match (oldest_queued, IN_WRITE.get()) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let done = oldest.map_or(LAST_QUEUED.get(), |first| first - 1);
    DONE.set(DONE.get().max(done));
    let ready: Vec<oneshot::Sender<()>> = WAITERS.with_borrow_mut(|w| {
        let (ready, waiting): (Vec<_>, Vec<_>) = w.drain(..).partition(|(seq, _)| *seq <= done);
        *w = waiting;
        ready.into_iter().map(|(_, tx)| tx).collect()
    });
    for tx in ready {
        let _ = tx.send(());
    }
}

/// `window.__atlasPilotWrites`: how many run states were written (read by the end-to-end test).
fn publish_writes() {
    if let Some(w) = web_sys::window() {
        let _ = js_sys::Reflect::set(
            &w,
            &JsValue::from_str("__atlasPilotWrites"),
            &JsValue::from_f64(f64::from(WRITES.get())),
        );
    }
}

async fn get(key: &str) -> Result<Option<String>, StoreError> {
    let db = db().await?;
    let fail = |e: rexie::Error| StoreError::Read(e.to_string());
    let tx = db
        .transaction(&[STORE], TransactionMode::ReadOnly)
        .map_err(fail)?;
    let store = tx.store(STORE).map_err(fail)?;
    let value = store.get(JsValue::from_str(key)).await.map_err(fail)?;
    Ok(value.and_then(|v| v.as_string()))
}

async fn delete(keys: &[&'static str]) -> Result<(), StoreError> {
    QUEUED.with_borrow_mut(|q| {
        for k in keys {
            q.remove(k);
        }
    });
    mark_done(); // states that will no longer be written keep nobody waiting
    let db = db().await?;
    let fail = |e: rexie::Error| StoreError::Delete(e.to_string());
    let tx = db
        .transaction(&[STORE], TransactionMode::ReadWrite)
        .map_err(fail)?;
    let store = tx.store(STORE).map_err(fail)?;
    for k in keys {
        store.delete(JsValue::from_str(k)).await.map_err(fail)?;
    }
    tx.done().await.map_err(fail)?;
    Ok(())
}

/// Saved record `what` read from its JSON `text`.
fn read_json<T: serde::de::DeserializeOwned>(
    text: &str,
    what: &'static str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Unreadable {
        what,
        message: e.to_string(),
    })
}

/// The saved run, if any.
///
/// # Errors
/// IndexedDB failures and a record that does not parse.
pub async fn load() -> Result<Option<SavedRun>, StoreError> {
    let Some(text) = get(CURRENT).await? else {
        return Ok(None);
    };
    let saved: SavedRun = read_json(&text, "run")?;
    Ok((saved.format == SAVED_FORMAT).then_some(saved))
}

/// Deletes the saved run (after "discard"), waiting for queued writes to be dropped first.
///
/// # Errors
/// IndexedDB failures.
pub async fn clear() -> Result<(), StoreError> {
    delete(&[CURRENT]).await
}

/// The saved judge coding of a loaded bundle with its plan, if any.
///
/// # Errors
/// IndexedDB failures and records that do not parse or do not belong together.
pub async fn load_judging(
) -> Result<Option<(SavedJudging, atlas_pilot::BundleJudgePlan)>, StoreError> {
    let Some(text) = get(JUDGING).await? else {
        return Ok(None);
    };
    let saved: SavedJudging = read_json(&text, "judge coding")?;
    if saved.format != JUDGING_FORMAT {
        return Ok(None);
    }
    let plan_text = get(JUDGING_PLAN).await?.ok_or(StoreError::NoJudgingPlan)?;
    let plan: atlas_pilot::BundleJudgePlan = read_json(&plan_text, "judge coding's plan")?;
    if plan.fingerprint != saved.plan_fingerprint {
        return Err(StoreError::JudgingPlanMismatch);
    }
    Ok(Some((saved, plan)))
}

/// Deletes the saved judge coding and its plan.
///
/// # Errors
/// IndexedDB failures.
pub async fn clear_judging() -> Result<(), StoreError> {
    delete(&[JUDGING, JUDGING_PLAN]).await
}

/// The saved clinical pilot, if any.
///
/// # Errors
/// IndexedDB failures and a record that does not parse.
pub async fn load_clinical() -> Result<Option<SavedClinical>, StoreError> {
    let Some(text) = get(CLINICAL).await? else {
        return Ok(None);
    };
    let saved: SavedClinical = read_json(&text, "clinical pilot")?;
    Ok((saved.format == CLINICAL_FORMAT).then_some(saved))
}

/// Deletes the saved clinical pilot.
///
/// # Errors
/// IndexedDB failures.
pub async fn clear_clinical() -> Result<(), StoreError> {
    delete(&[CLINICAL]).await
}

/// API keys by provider row id, in memory; masked copies for display in a signal.
#[derive(Clone, Copy)]
pub struct Keys {
    keys: StoredValue<BTreeMap<String, SecretKey>>,
    /// Row id → masked key (`••••` + last four), for display.
    pub masked: RwSignal<BTreeMap<String, String>>,
    /// Whether the user opted in to remembering keys in this browser.
    pub remember: RwSignal<bool>,
}

impl Keys {
    /// Empty, then filled from `localStorage` when the user opted in earlier.
    pub fn new() -> Self {
        let keys = Keys {
            keys: StoredValue::new(BTreeMap::new()),
            masked: RwSignal::new(BTreeMap::new()),
            remember: RwSignal::new(false),
        };
        if let Some(text) = storage().and_then(|s| s.get_item(KEYS_STORAGE).ok().flatten()) {
            if let Ok(map) = serde_json::from_str::<BTreeMap<String, String>>(&text) {
                for (id, key) in map {
                    keys.set(&id, &key);
                }
                keys.remember.set(true);
            }
        }
        keys
    }

    /// Sets (or, for an empty string, removes) the key of row `id`.
    pub fn set(self, id: &str, key: &str) {
        let key = SecretKey::new(key);
        let masked = (!key.is_empty()).then(|| key.masked());
        self.keys.update_value(|k| {
            if key.is_empty() {
                k.remove(id);
            } else {
                k.insert(id.to_string(), key);
            }
        });
        self.masked.update(|m| match masked {
            Some(mask) => {
                m.insert(id.to_string(), mask);
            }
            None => {
                m.remove(id);
            }
        });
        self.save();
    }

    /// The key of row `id` (empty when none was typed: fine for local servers).
    pub fn get(self, id: &str) -> SecretKey {
        self.keys
            .with_value(|k| k.get(id).cloned())
            .unwrap_or_default()
    }

    /// Turns "remember in this browser" on or off (off removes the stored copy).
    pub fn set_remember(self, on: bool) {
        self.remember.set(on);
        self.save();
    }

    /// Forgets every key: memory and `localStorage`; the opt-in is turned off.
    pub fn forget(self) {
        self.keys.update_value(BTreeMap::clear);
        self.masked.set(BTreeMap::new());
        self.remember.set(false);
        if let Some(s) = storage() {
            let _ = s.remove_item(KEYS_STORAGE);
        }
    }

    fn save(self) {
        let Some(s) = storage() else {
            return;
        };
        if !self.remember.get_untracked() {
            let _ = s.remove_item(KEYS_STORAGE);
            return;
        }
        let map: BTreeMap<String, String> = self.keys.with_value(|k| {
            k.iter()
                .map(|(id, key)| (id.clone(), key.expose().to_string()))
                .collect()
        });
        if let Ok(text) = serde_json::to_string(&map) {
            let _ = s.set_item(KEYS_STORAGE, &text);
        }
    }
}

impl Default for Keys {
    fn default() -> Self {
        Keys::new()
    }
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|w| w.local_storage().ok().flatten())
}
