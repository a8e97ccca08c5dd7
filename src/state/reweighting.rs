//! The re-weighting model (seed `000_…` Eq. 4): [`ExplorerModel`], the state behind the re-weighting
//! panel (`views::explorer`) and the evidence atlas (`views::atlas`), one per loaded bundle: the
//! [`ReweightBasis`] (built once per bundle and repeat policy, in a `Memo`), the weights as typed (preset,
//! one text per condition, one per sweep), the last valid [`ConditionWeights`] and their re-weighting
//! (recomputed on every input event; timed with `performance.now()` and published on
//! `window.__atlasReweight`), the statement-cluster bootstrap run in the analysis Web Worker
//! ([`atlas_worker::Request::Reweight`]) whose replicates give intervals for any weights at once, the
//! models and conditions shown, and the finished RQ1/RQ2 runs ([`AnalysisResults`]). Its state is
//! mirrored into the page URL (`state::url`).

use std::sync::Arc;

use atlas_core::cases::level_label;
use atlas_core::compare::{rank_bands as compare_rank_bands, RankBands};
use atlas_core::number::WholeRule;
use atlas_core::reweight::{
    format_weight, weights_from_entries, ConditionWeights, PresetKind, ReweightBasis,
    ReweightBootstrap, Reweighted, ScoreInterval, WeightEntry, WeightPreset, WeightSpecError,
    BOOTSTRAP_STREAM, DEFAULT_BOOTSTRAP_REPS, DEFAULT_SEED,
};
use atlas_core::tables::{reweight_csv, reweight_json, ReweightIntervals};
use atlas_core::RepeatPolicy;
use atlas_worker::{Outcome, Request, ReweightSettings};
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::{JsCast, JsValue};

use crate::browser::export::{file_part, sha256_hex};
use crate::browser::loader::now_ms;
use crate::browser::worker::{AnalysisRun, WorkerEvent};
use crate::state::url::{
    bundle_param, focus_view, replace_url, set_pending_writer, ClinicalCase, ComparePair,
    FocusedView, InitialView, RestoredEntry, ViewState,
};
use crate::state::{AtlasState, Loaded};

/// A finished RQ1 or RQ2 run: what was asked and what came back.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// The settings of the run.
    pub request: Request,
    /// What the worker answered.
    pub outcome: Arc<Outcome>,
}

/// The last finished RQ1 and RQ2 runs of the loaded bundle (context, set by the Analyses panels), for
/// the atlas panels they feed and the JSON export.
#[derive(Debug, Clone, Copy)]
pub struct AnalysisResults {
    /// The last finished RQ1 run.
    pub rq1: RwSignal<Option<Finished>>,
    /// The last finished RQ2 run.
    pub rq2: RwSignal<Option<Finished>>,
    /// The last finished comparison across task paradigms ([`Request::Across`]).
    pub across: RwSignal<Option<Finished>>,
}

impl AnalysisResults {
    /// Empty results.
    pub fn new() -> Self {
        AnalysisResults {
            rq1: RwSignal::new(None),
            rq2: RwSignal::new(None),
            across: RwSignal::new(None),
        }
    }

    /// Records a finished run (RQ1, RQ2 or across paradigms by its request; other requests are
    /// ignored).
    pub fn publish(&self, request: Request, outcome: Arc<Outcome>) {
        let finished = Some(Finished { request, outcome });
        match request {
            Request::Rq1(_) => self.rq1.set(finished),
            Request::Rq2(_) => self.rq2.set(finished),
            Request::Reweight(_) => {}
            Request::Compare(_) => {}
            Request::Across(_) => self.across.set(finished),
        }
    }
}

impl Default for AnalysisResults {
    fn default() -> Self {
        Self::new()
    }
}

/// A [`ReweightBasis`] shared by pointer (memos compare it by identity).
#[derive(Debug, Clone)]
pub struct BasisHandle(pub Arc<ReweightBasis>);

impl PartialEq for BasisHandle {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// One model's row of the re-weighting table.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRow {
    /// Model index (bundle order).
    pub m: usize,
    /// Model id.
    pub id: String,
    /// Model label (the level's `label`, else its id).
    pub label: String,
    /// Weighted score (fraction).
    pub score: Option<f64>,
    /// Equal-weight (Eq. 4) score (fraction).
    pub equal: Option<f64>,
    /// `100 · (score − equal)`, pp.
    pub delta_pp: Option<f64>,
    /// Rank under the weights (1 = best in the bundle's direction).
    pub rank: Option<f64>,
    /// Rank under equal weights.
    pub equal_rank: Option<f64>,
    /// The models whose order with this one is inverted against equal weights.
    pub inverted_with: Vec<usize>,
    /// The score as shown (`12.34%`).
    pub score_text: String,
    /// Δ as shown (`+1.23`).
    pub delta_text: String,
    /// The rank as shown.
    pub rank_text: String,
    /// The equal-weight rank as shown.
    pub equal_rank_text: String,
    /// Pooled Abstain share of the cells the score averages (fraction).
    pub abstain_share: Option<f64>,
    /// The high-Abstain flag as text (`⚠ Abstain 80.8 % (untargeted)`), empty when not flagged.
    pub abstain_flag: String,
}

/// The re-weighting of the last valid weights, with the table's rows.
#[derive(Debug, Clone, PartialEq)]
pub struct ReweightView {
    /// The weights re-weighted with.
    pub weights: ConditionWeights,
    /// Scores, ranks, τ-b and inverted pairs against equal weights.
    pub result: Reweighted,
    /// One row per model of the bundle.
    pub rows: Vec<ModelRow>,
    /// `ConditionWeights::describe`.
    pub description: String,
}

/// Where the statement-cluster bootstrap stands.
#[derive(Debug, Clone)]
pub enum BootState {
    /// Not started.
    Idle,
    /// `done` of `total` replicates in the worker.
    Running {
        /// Replicates done.
        done: usize,
        /// Replicates asked for.
        total: usize,
    },
    /// The replicates, for the repeat policy they were drawn under.
    Ready {
        /// The replicate condition means.
        boot: Arc<ReweightBootstrap>,
        /// The repeat policy of the unit values.
        policy: RepeatPolicy,
    },
    /// Why the run failed.
    Failed(String),
}

/// Bootstrap intervals of the current weights with the run's seed and replicates.
#[derive(Debug, Clone)]
pub struct IntervalInfo {
    /// Seed of the draws.
    pub seed: u64,
    /// Replicates.
    pub reps: usize,
    /// One per model (bundle order), fractions.
    pub intervals: Arc<Vec<Option<ScoreInterval>>>,
}

/// The explorer's state for one loaded bundle (context; see the module docs).
#[derive(Clone, Copy)]
pub struct ExplorerModel {
    /// The bundle.
    pub loaded: StoredValue<Arc<Loaded>>,
    /// Its condition means under the current repeat policy.
    pub basis: Memo<BasisHandle>,
    /// The preset chosen.
    pub preset: RwSignal<PresetKind>,
    /// The sweep of the "one sweep only" preset.
    pub sweep: RwSignal<String>,
    /// Custom weights as entered, one per condition (bundle order): the text typed into the field, or
    /// the number set by the slider or taken over from a preset.
    pub entries: RwSignal<Vec<WeightEntry>>,
    /// Per-sweep weights as entered, one per sweep.
    pub sweep_entries: RwSignal<Vec<WeightEntry>>,
    /// The weights of the current inputs ([`weights_from_entries`]), or why they are not valid.
    pub attempt: Memo<Result<ConditionWeights, WeightSpecError>>,
    /// The last valid weights (equal weights until any).
    pub valid: Memo<ConditionWeights>,
    /// Their re-weighting.
    pub view: Memo<Option<Arc<ReweightView>>>,
    /// The bootstrap seed as typed.
    pub seed_text: RwSignal<String>,
    /// The bootstrap replicates as typed.
    pub reps_text: RwSignal<String>,
    /// Seed and replicates as last applied (a change starts a new run).
    pub boot_settings: RwSignal<(u64, usize)>,
    /// Why the typed settings were not applied.
    pub boot_error: RwSignal<Option<String>>,
    /// The bootstrap run.
    pub boot: RwSignal<BootState>,
    /// 95% intervals of the current valid weights (when the bootstrap is ready for this policy).
    pub intervals: Memo<Option<Arc<Vec<Option<ScoreInterval>>>>>,
    /// 95% rank bands and tie groups of the current valid weights, from the same replicates as
    /// `intervals` ([`atlas_core::compare::rank_bands`]; `atlas compare` prints the same).
    pub rank_bands: Memo<Option<Arc<RankBands>>>,
    /// Models shown in the table, the charts and the exports (bundle order).
    pub shown_models: RwSignal<Vec<bool>>,
    /// Conditions shown (bundle order).
    pub shown_conditions: RwSignal<Vec<bool>>,
    /// The last RQ1 / RQ2 runs.
    pub results: AnalysisResults,
    /// The page URL as last written (for "Copy link").
    pub url: RwSignal<String>,
    /// Why the opening link's view was not applied, if it was not.
    pub link_notice: RwSignal<Option<String>>,
    /// Model labels (bundle order).
    pub labels: StoredValue<Vec<String>>,
}

/// The bootstrap seed field: any 64-bit whole number.
pub(crate) const BOOT_SEED: WholeRule = WholeRule::any();
/// The bootstrap replicates field: 1 to 100,000.
pub(crate) const BOOT_REPS: WholeRule = WholeRule::between(1, 100_000);

/// `window.__atlasReweightRepeat`: how many times to repeat each recompute inside one measurement
/// (the browser benchmark sets it, since `performance.now()` is coarse); 1 by default.
fn bench_repeat() -> usize {
    web_sys::window()
        .and_then(|w| js_sys::Reflect::get(&w, &JsValue::from_str("__atlasReweightRepeat")).ok())
        .and_then(|v| v.as_f64())
        .filter(|v| v.is_finite() && *v >= 1.0)
        .map_or(1, |v| v.min(100_000.0) as usize)
}

/// Appends one recompute time to `window.__atlasReweight` (`{count, last_ms, repeat, samples}`).
fn record_timing(ms: f64, repeat: usize) {
    use js_sys::{Array, Object, Reflect};
    let Some(window) = web_sys::window() else {
        return;
    };
    let key = JsValue::from_str("__atlasReweight");
    let record = Reflect::get(&window, &key)
        .ok()
        .filter(|v| v.is_object())
        .unwrap_or_else(|| {
            let o = Object::new();
            let _ = Reflect::set(&o, &JsValue::from_str("samples"), &Array::new());
            let _ = Reflect::set(&window, &key, &o);
            o.into()
        });
    let samples = Reflect::get(&record, &JsValue::from_str("samples"))
        .ok()
        .and_then(|s| s.dyn_into::<Array>().ok());
    if let Some(samples) = samples {
        if samples.length() < 100_000 {
            samples.push(&JsValue::from_f64(ms));
        }
        let _ = Reflect::set(
            &record,
            &JsValue::from_str("count"),
            &JsValue::from_f64(f64::from(samples.length())),
        );
    }
    let _ = Reflect::set(
        &record,
        &JsValue::from_str("last_ms"),
        &JsValue::from_f64(ms),
    );
    let _ = Reflect::set(
        &record,
        &JsValue::from_str("repeat"),
        &JsValue::from_f64(repeat as f64),
    );
}

pub(crate) fn pct(x: Option<f64>) -> String {
    x.map_or("—".to_string(), |v| format!("{:.2}%", 100.0 * v))
}

fn rank_text(x: Option<f64>) -> String {
    x.map_or("—".to_string(), |v| v.to_string())
}

/// Re-weights and builds the table rows (what one input event costs).
fn build_view(
    basis: &ReweightBasis,
    weights: &ConditionWeights,
    labels: &[String],
) -> Option<ReweightView> {
    let result = basis.reweight(weights).ok()?;
    let equal = basis.equal_scores();
    let equal_ranks = basis.equal_ranks();
    let rows = basis
        .models()
        .iter()
        .enumerate()
        .map(|(m, id)| {
            let score = result.scores.get(m).copied().flatten();
            let delta_pp = result.delta_pp.get(m).copied().flatten();
            let rank = result.ranks.get(m).copied().flatten();
            let equal_rank = equal_ranks.get(m).copied().flatten();
            ModelRow {
                m,
                id: id.clone(),
                label: labels.get(m).cloned().unwrap_or_else(|| id.clone()),
                score,
                equal: equal.get(m).copied().flatten(),
                delta_pp,
                rank,
                equal_rank,
                inverted_with: result
                    .inverted_pairs
                    .iter()
                    .filter_map(|&(a, b)| match (a == m, b == m) {
                        (true, _) => Some(b),
                        (_, true) => Some(a),
                        _ => None,
                    })
                    .collect(),
                score_text: pct(score),
                delta_text: delta_pp.map_or("—".to_string(), |d| format!("{d:+.2}")),
                rank_text: rank_text(rank),
                equal_rank_text: rank_text(equal_rank),
                abstain_share: result.abstain.get(m).and_then(|a| a.share),
                abstain_flag: result
                    .abstain
                    .get(m)
                    .map(|a| a.flag_text(basis.abstain_threshold()))
                    .unwrap_or_default(),
            }
        })
        .collect();
    Some(ReweightView {
        description: weights.describe(basis),
        weights: weights.clone(),
        result,
        rows,
    })
}

/// What a URL's [`ViewState`] sets in the re-weighting model, read the same way at a fresh page load
/// ([`ExplorerModel::new`]) and when back / forward restore a history entry
/// ([`ExplorerModel::apply_entry`]). What the URL does not say takes its default (equal weights, the
/// first sweep with Selection conditions, the default seed and replicates, everything shown).
struct ViewInputs {
    preset: PresetKind,
    sweep: String,
    entries: Vec<WeightEntry>,
    sweep_entries: Vec<WeightEntry>,
    seed: u64,
    reps: usize,
    shown_models: Vec<bool>,
    shown_conditions: Vec<bool>,
}

impl ViewInputs {
    fn read(v: &ViewState, basis: &ReweightBasis) -> Self {
        let conditions = basis.conditions();
        let sweeps = basis.sweeps();
        let equal = ConditionWeights::equal(basis);
        let preset_kind = v
            .preset
            .as_deref()
            .and_then(PresetKind::from_key)
            .unwrap_or(PresetKind::Equal);
        // The link's weights are text (the URL's); the equal weights stay numbers.
        let entries: Vec<WeightEntry> = conditions
            .iter()
            .enumerate()
            .map(|(c, cond)| {
                v.weights
                    .iter()
                    .find(|(id, _)| *id == cond.id)
                    .map(|(_, w)| WeightEntry::Text(w.clone()))
                    .unwrap_or(WeightEntry::Value(equal.as_slice()[c]))
            })
            .collect();
        let sweep_entries: Vec<WeightEntry> = sweeps
            .iter()
            .map(|s| {
                v.sweep_weights
                    .iter()
                    .find(|(name, _)| name == s.display_name())
                    .map_or(WeightEntry::Value(1.0), |(_, w)| {
                        WeightEntry::Text(w.clone())
                    })
            })
            .collect();
        let default_sweep = sweeps
            .iter()
            .find(|s| !s.selection_conditions.is_empty())
            .map(|s| s.display_name().to_string())
            .unwrap_or_default();
        let shown = |ids: Vec<&str>, list: &Option<Vec<String>>| -> Vec<bool> {
            match list {
                Some(list) if ids.iter().any(|i| list.iter().any(|l| l == i)) => {
                    ids.iter().map(|i| list.iter().any(|l| l == i)).collect()
                }
                _ => vec![true; ids.len()],
            }
        };
        let shown_models = shown(
            basis.models().iter().map(String::as_str).collect(),
            &v.models,
        );
        let shown_conditions = shown(
            conditions.iter().map(|c| c.id.as_str()).collect(),
            &v.conditions,
        );
        let seed = v.seed.unwrap_or(DEFAULT_SEED);
        let reps = v.reps.filter(|r| *r > 0).unwrap_or(DEFAULT_BOOTSTRAP_REPS);
        ViewInputs {
            preset: preset_kind,
            sweep: v.sweep.clone().unwrap_or(default_sweep),
            entries,
            sweep_entries,
            seed,
            reps,
            shown_models: if shown_models.len() == basis.models().len() {
                shown_models
            } else {
                vec![true; basis.models().len()]
            },
            shown_conditions,
        }
    }
}

impl ExplorerModel {
    /// The model for `loaded` (provided as context), restoring the opening URL's view when it belongs
    /// to this bundle, and mirroring the state into the URL from now on.
    pub fn new(loaded: Arc<Loaded>) -> Self {
        let state = expect_context::<AtlasState>();
        let audit = &loaded.audit;
        let id = audit.metadata().id.clone();
        let labels: Vec<String> = (0..audit.model_ids().len())
            .map(|m| level_label(audit, audit.model_facet, m))
            .collect();
        let for_basis = loaded.clone();
        let basis = Memo::new(move |_| {
            BasisHandle(Arc::new(ReweightBasis::from_audit(
                &for_basis.audit,
                state.policy.get(),
            )))
        });
        let first = basis.get_untracked().0;

        // The opening link's view, if it is for this bundle.
        let link_notice = RwSignal::new(None);
        let initial = match use_context::<InitialView>().map(|iv| iv.take_for(&id)) {
            Some(Ok(v)) => v,
            Some(Err(other)) => {
                link_notice.set(Some(format!(
                    "The link's view was made for bundle {other:?}; this is {id:?}, so its default view is shown. Open that bundle to restore the view."
                )));
                None
            }
            None => None,
        };
        let v = initial.clone().unwrap_or_default();
        let ViewInputs {
            preset,
            sweep,
            entries,
            sweep_entries,
            seed,
            reps,
            shown_models,
            shown_conditions,
        } = ViewInputs::read(&v, &first);

        let preset = RwSignal::new(preset);
        let sweep = RwSignal::new(sweep);
        let entries = RwSignal::new(entries);
        let sweep_entries = RwSignal::new(sweep_entries);
        let attempt = Memo::new(move |_| {
            let b = basis.get();
            entries.with(|entries| {
                sweep_entries.with(|sweep_entries| {
                    weights_from_entries(&b.0, preset.get(), &sweep.get(), entries, sweep_entries)
                })
            })
        });
        let valid = Memo::new(move |prev: Option<&ConditionWeights>| match attempt.get() {
            Ok(w) => w,
            Err(_) => prev
                .cloned()
                .unwrap_or_else(|| ConditionWeights::equal(&basis.get_untracked().0)),
        });
        let labels_store = StoredValue::new(labels.clone());
        let view = Memo::new(move |_| {
            let b = basis.get();
            let w = valid.get();
            let repeat = bench_repeat();
            let started = now_ms();
            let mut out = None;
            labels_store.with_value(|labels| {
                for _ in 0..repeat {
                    out = build_view(&b.0, &w, labels);
                }
            });
            record_timing((now_ms() - started) / repeat as f64, repeat);
            out.map(Arc::new)
        });
        let boot = RwSignal::new(BootState::Idle);
        let intervals = Memo::new(move |_| {
            let BootState::Ready { boot, policy } = boot.get() else {
                return None;
            };
            if policy != basis.get().0.policy() {
                return None;
            }
            boot.intervals(&valid.get(), 0.95).ok().map(Arc::new)
        });
        let rank_bands = Memo::new(move |_| {
            let BootState::Ready { boot, policy } = boot.get() else {
                return None;
            };
            let b = basis.get();
            if policy != b.0.policy() {
                return None;
            }
            compare_rank_bands(&b.0, &boot, &valid.get(), 0.95)
                .ok()
                .map(Arc::new)
        });
        let model = ExplorerModel {
            loaded: StoredValue::new(loaded.clone()),
            basis,
            preset,
            sweep,
            entries,
            sweep_entries,
            attempt,
            valid,
            view,
            seed_text: RwSignal::new(seed.to_string()),
            reps_text: RwSignal::new(reps.to_string()),
            boot_settings: RwSignal::new((seed, reps)),
            boot_error: RwSignal::new(None),
            boot,
            intervals,
            rank_bands,
            shown_models: RwSignal::new(shown_models),
            shown_conditions: RwSignal::new(shown_conditions),
            results: use_context::<AnalysisResults>().unwrap_or_default(),
            url: RwSignal::new(String::new()),
            link_notice,
            labels: labels_store,
        };
        provide_context(model);
        model.run_bootstrap_on_changes(state);
        model.mirror_into_url(state);
        model.follow_history(state, id);
        if let Some(view) = initial.and_then(|v| v.view) {
            focus_view(view);
        }
        model
    }

    /// Applies the history entry back / forward restored ([`RestoredEntry`]) when it is this
    /// bundle's (its `id=` is `id` or absent): its repeat policy (the default when it names none, as
    /// at a fresh page load) and everything [`ViewInputs`] reads — so the weights shown are the
    /// entry's, not those left from the entry before. An entry of another bundle leaves the state as
    /// it is and says so in [`ExplorerModel::link_notice`].
    fn follow_history(self, state: AtlasState, id: String) {
        let Some(restored) = use_context::<RestoredEntry>() else {
            return;
        };
        Effect::new(move |_| {
            let Some(entry) = restored.0.get() else {
                return;
            };
            restored.0.set(None);
            if entry.bundle_id.as_deref().is_some_and(|b| b != id) {
                self.link_notice.set(Some(format!(
                    "This history entry was made for bundle {:?}; this is {id:?}, so its weights are not applied. Open that bundle to see them.",
                    entry.bundle_id.unwrap_or_default()
                )));
                return;
            }
            self.apply_entry(state, &entry);
        });
    }

    /// Sets the policy and the inputs of `entry` (read by [`ViewInputs::read`], as at a page load).
    pub fn apply_entry(&self, state: AtlasState, entry: &ViewState) {
        let policy = entry.policy.unwrap_or_default();
        if state.policy.get_untracked() != policy {
            state.policy.set(policy);
        }
        let inputs = ViewInputs::read(entry, &self.basis.get_untracked().0);
        self.preset.set(inputs.preset);
        self.sweep.set(inputs.sweep);
        self.entries.set(inputs.entries);
        self.sweep_entries.set(inputs.sweep_entries);
        self.seed_text.set(inputs.seed.to_string());
        self.reps_text.set(inputs.reps.to_string());
        self.boot_error.set(None);
        if self.boot_settings.get_untracked() != (inputs.seed, inputs.reps) {
            self.boot_settings.set((inputs.seed, inputs.reps));
        }
        self.shown_models.set(inputs.shown_models);
        self.shown_conditions.set(inputs.shown_conditions);
    }

    /// Starts the bootstrap in the worker now and whenever the policy or the applied settings change.
    fn run_bootstrap_on_changes(self, state: AtlasState) {
        let run = StoredValue::new_local(None::<AnalysisRun>);
        on_cleanup(move || {
            run.try_update_value(|r| *r = None);
        });
        Effect::new(move |_| {
            let policy = state.policy.get();
            let (seed, reps) = self.boot_settings.get();
            let loaded = self.loaded.get_value();
            // A new run replaces (and terminates) the previous one.
            run.update_value(|r| *r = None);
            self.boot.set(BootState::Running {
                done: 0,
                total: reps,
            });
            let boot = self.boot;
            let finish = move || {
                spawn_local(async move {
                    run.try_update_value(|r| *r = None);
                })
            };
            let on_event = move |event| match event {
                WorkerEvent::Progress { done, total, .. } => {
                    boot.try_set(BootState::Running { done, total });
                }
                WorkerEvent::Done(outcome) => {
                    let outcome = *outcome;
                    let state = match outcome.replicates.map(|r| r.into_bootstrap()) {
                        Some(Ok(b)) => BootState::Ready {
                            boot: Arc::new(b),
                            policy,
                        },
                        Some(Err(e)) => BootState::Failed(e),
                        None => BootState::Failed("the worker sent no bootstrap replicates".into()),
                    };
                    boot.try_set(state);
                    finish();
                }
                WorkerEvent::Failed(message) => {
                    boot.try_set(BootState::Failed(message));
                    finish();
                }
            };
            let request = Request::Reweight(ReweightSettings { seed, policy, reps });
            match AnalysisRun::start(request, loaded.data.clone(), on_event) {
                Ok(handle) => run.set_value(Some(handle)),
                Err(message) => self.boot.set(BootState::Failed(format!(
                    "the analysis worker could not be started: {message}"
                ))),
            }
        });
    }

    /// Writes the view into the page URL whenever it changes — at most every 200 ms (the last state
    /// wins), since browsers throttle `History.replaceState` (Chromium: about 200 calls per 10 s) and a
    /// dragged slider changes the weights on every frame.
    fn mirror_into_url(self, state: AtlasState) {
        let pending = StoredValue::new_local(None::<ViewState>);
        let scheduled = StoredValue::new_local(false);
        let url = self.url;
        let flush = move || {
            scheduled.try_set_value(false);
            if let Some(Some(view)) = pending.try_update_value(Option::take) {
                if let Some(href) = replace_url(&view) {
                    url.try_set(href);
                }
            }
        };
        // A view switch writes the held-back state before it pushes a new entry.
        set_pending_writer(flush);
        let write_later = move |view: ViewState| {
            let first = url.get_untracked().is_empty();
            pending.set_value(Some(view));
            if first {
                return flush();
            }
            if scheduled.get_value() {
                return;
            }
            scheduled.set_value(true);
            let run = wasm_bindgen::closure::Closure::once_into_js(flush);
            let timer = web_sys::window().map(|w| {
                w.set_timeout_with_callback_and_timeout_and_arguments_0(run.unchecked_ref(), 200)
            });
            if !matches!(timer, Some(Ok(_))) {
                scheduled.set_value(false);
            }
        };
        let focused = use_context::<FocusedView>();
        let clinical_case = use_context::<ClinicalCase>();
        let compare_pair = use_context::<ComparePair>();
        let plan_url = use_context::<crate::state::url::PlanUrl>();
        let (bundle, id) = self
            .loaded
            .with_value(|l| (bundle_param(l), l.audit.metadata().id.clone()));
        Effect::new(move |_| {
            let basis = self.basis.get().0;
            let w = self.valid.get();
            let kind = w.preset().kind();
            let view = ViewState {
                bundle: bundle.clone(),
                bundle_id: Some(id.clone()),
                view: focused.and_then(|f| f.0.get()),
                case: None,
                ccase: clinical_case.as_ref().and_then(|c| c.0.get()),
                policy: Some(state.policy.get()),
                preset: Some(kind.key().to_string()),
                sweep: match w.preset() {
                    WeightPreset::SweepOnly { sweep } => Some(sweep.clone()),
                    _ => None,
                },
                weights: if kind == PresetKind::Custom {
                    basis
                        .conditions()
                        .iter()
                        .zip(w.as_slice())
                        .map(|(c, w)| (c.id.clone(), format_weight(*w)))
                        .collect()
                } else {
                    Vec::new()
                },
                sweep_weights: match w.preset() {
                    WeightPreset::PerSweep { weights } => basis
                        .sweeps()
                        .iter()
                        .zip(weights)
                        .map(|(s, w)| (s.display_name().to_string(), format_weight(*w)))
                        .collect(),
                    _ => Vec::new(),
                },
                seed: Some(self.boot_settings.get().0),
                reps: Some(self.boot_settings.get().1),
                models: shown_ids(basis.models().iter().cloned(), &self.shown_models.get()),
                conditions: shown_ids(
                    basis.conditions().iter().map(|c| c.id.clone()),
                    &self.shown_conditions.get(),
                ),
                compare_a: compare_pair.and_then(|p| p.0.get()).map(|(a, _)| a),
                compare_b: compare_pair.and_then(|p| p.0.get()).map(|(_, b)| b),
                plan: plan_url.map(|p| p.0.get()).unwrap_or_default(),
            };
            write_later(view);
        });
    }

    /// The value the field of condition `c` shows: the custom entry (a typed text as typed, a number
    /// formatted), else the preset's weight.
    pub fn condition_text(&self, c: usize) -> String {
        if self.preset.get() == PresetKind::Custom {
            return self
                .entries
                .with(|t| t.get(c).map(WeightEntry::text).unwrap_or_default());
        }
        match self.attempt.get() {
            Ok(w) => w
                .as_slice()
                .get(c)
                .map_or_else(String::new, |w| format_weight(*w)),
            Err(_) => String::new(),
        }
    }

    /// Switches to custom weights, starting from the weights in use as numbers: those of the current
    /// inputs, else the last valid ones. Nothing happens when the weights are custom already.
    pub fn start_custom(&self) {
        if self.preset.get_untracked() == PresetKind::Custom {
            return;
        }
        let n = self.basis.get_untracked().0.conditions().len();
        let weights = match self.attempt.get_untracked() {
            Ok(w) => w,
            Err(_) => self.valid.get_untracked(),
        };
        let shown: Vec<WeightEntry> = weights
            .as_slice()
            .iter()
            .map(|w| WeightEntry::Value(*w))
            .collect();
        self.entries.set(if shown.len() == n {
            shown
        } else {
            vec![WeightEntry::Value(0.0); n]
        });
        self.preset.set(PresetKind::Custom);
    }

    /// A weight entered for condition `c` (typed, or set by its slider): switches to custom weights
    /// ([`ExplorerModel::start_custom`]) and sets that condition's entry.
    pub fn set_condition_entry(&self, c: usize, entry: WeightEntry) {
        self.start_custom();
        self.entries.update(|t| {
            if let Some(slot) = t.get_mut(c) {
                *slot = entry;
            }
        });
    }

    /// A weight entered for sweep `g`: switches to per-sweep weights and sets that sweep's entry.
    pub fn set_sweep_entry(&self, g: usize, entry: WeightEntry) {
        self.sweep_entries.update(|t| {
            if let Some(slot) = t.get_mut(g) {
                *slot = entry;
            }
        });
        self.preset.set(PresetKind::PerSweep);
    }

    /// The intervals with their seed and size, when ready for the current policy.
    pub fn interval_info(&self) -> Option<IntervalInfo> {
        let intervals = self.intervals.get()?;
        match self.boot.get() {
            BootState::Ready { boot, .. } => Some(IntervalInfo {
                seed: boot.seed(),
                reps: boot.reps(),
                intervals,
            }),
            _ => None,
        }
    }

    /// 95% intervals of the **equal-weight** reference score (Eq. 4) from the worker's bootstrap, for
    /// the Overview's ranking: one per model (bundle order, fractions), with the run's seed and
    /// replicates; `None` until the bootstrap is ready for the current repeat policy. The same
    /// replicates and the same `ReweightBootstrap::intervals` as `atlas overview` computes natively.
    pub fn equal_weight_intervals(&self) -> Option<IntervalInfo> {
        let BootState::Ready { boot, policy } = self.boot.get() else {
            return None;
        };
        let basis = self.basis.get();
        if policy != basis.0.policy() {
            return None;
        }
        let intervals = boot
            .intervals(&ConditionWeights::equal(&basis.0), 0.95)
            .ok()?;
        Some(IntervalInfo {
            seed: boot.seed(),
            reps: boot.reps(),
            intervals: Arc::new(intervals),
        })
    }

    /// 95% rank bands and tie groups of the **equal-weight** reference score (Eq. 4), for the
    /// Overview's ranking: the same replicates as [`ExplorerModel::equal_weight_intervals`] and the
    /// same [`atlas_core::compare::rank_bands`] as `atlas compare` (bands in bundle order); `None`
    /// until the bootstrap is ready for the current repeat policy.
    pub fn equal_weight_rank_bands(&self) -> Option<Arc<RankBands>> {
        let BootState::Ready { boot, policy } = self.boot.get() else {
            return None;
        };
        let basis = self.basis.get();
        if policy != basis.0.policy() {
            return None;
        }
        compare_rank_bands(&basis.0, &boot, &ConditionWeights::equal(&basis.0), 0.95)
            .ok()
            .map(Arc::new)
    }

    /// File-name stem of this bundle's exports.
    pub fn file_stem(&self) -> String {
        self.loaded
            .with_value(|l| file_part(&l.audit.metadata().id))
    }

    /// The models shown, in bundle order.
    pub fn shown_model_indices(&self) -> Vec<usize> {
        self.shown_models
            .get()
            .iter()
            .enumerate()
            .filter(|(_, s)| **s)
            .map(|(m, _)| m)
            .collect()
    }

    /// The re-weighting table as CSV (the models shown; see `atlas_core::tables::reweight_csv`).
    pub fn csv(&self) -> Option<String> {
        let view = self.view.get_untracked()?;
        let basis = self.basis.get_untracked().0;
        let info = self.interval_info_untracked();
        let intervals = info.as_ref().map(|i| ReweightIntervals {
            seed: i.seed,
            reps: i.reps,
            intervals: &i.intervals,
        });
        let bundle = self.loaded.with_value(|l| l.audit.metadata().id.clone());
        let models: Vec<usize> = self
            .shown_models
            .get_untracked()
            .iter()
            .enumerate()
            .filter(|(_, s)| **s)
            .map(|(m, _)| m)
            .collect();
        Some(reweight_csv(
            &bundle,
            &basis,
            &view.weights,
            &view.result,
            intervals,
            &models,
        ))
    }

    fn interval_info_untracked(&self) -> Option<IntervalInfo> {
        let intervals = self.intervals.get_untracked()?;
        match self.boot.get_untracked() {
            BootState::Ready { boot, .. } => Some(IntervalInfo {
                seed: boot.seed(),
                reps: boot.reps(),
                intervals,
            }),
            _ => None,
        }
    }

    /// The analysis state and results as JSON: bundle (id, title, source, SHA-256 of its bytes, size),
    /// the page URL, the state (policy, weights, bootstrap seed and replicates, models and conditions
    /// shown, view), the re-weighting (`atlas_core::tables::reweight_json`), and the last RQ1 / RQ2 runs
    /// (settings, and the report exactly as the worker wrote it).
    pub fn state_json(&self, state: AtlasState) -> Result<String, String> {
        let view = self
            .view
            .get_untracked()
            .ok_or("there is no re-weighting to export")?;
        let basis = self.basis.get_untracked().0;
        let info = self.interval_info_untracked();
        let intervals = info.as_ref().map(|i| ReweightIntervals {
            seed: i.seed,
            reps: i.reps,
            intervals: &i.intervals,
        });
        let (bundle, sha, title, source, bytes) = self.loaded.with_value(|l| {
            (
                l.audit.metadata().id.clone(),
                sha256_hex(&l.data),
                l.audit.metadata().title.clone(),
                l.source.clone(),
                l.data.len(),
            )
        });
        let (seed, reps) = self.boot_settings.get_untracked();
        let shown_models: Vec<&String> = basis
            .models()
            .iter()
            .zip(self.shown_models.get_untracked())
            .filter(|(_, s)| *s)
            .map(|(m, _)| m)
            .collect();
        let shown_conditions: Vec<&String> = basis
            .conditions()
            .iter()
            .zip(self.shown_conditions.get_untracked())
            .filter(|(_, s)| *s)
            .map(|(c, _)| &c.id)
            .collect();
        let head = serde_json::json!({
            "generator": format!("Audit Atlas {}", env!("CARGO_PKG_VERSION")),
            "bundle": {
                "id": bundle,
                "title": title,
                "source": source,
                "sha256": sha,
                "bytes": bytes,
            },
            "url": self.url.get_untracked(),
            "state": {
                "policy": state.policy.get_untracked().key(),
                "weights": {
                    "preset": view.weights.preset(),
                    "description": view.description,
                    "values": view.weights.as_slice(),
                },
                "bootstrap": {"seed": seed, "reps": reps, "stream": BOOTSTRAP_STREAM, "level": 0.95},
                "shown_models": shown_models,
                "shown_conditions": shown_conditions,
                "view": use_context::<FocusedView>().and_then(|f| f.0.get_untracked()),
            },
            "reweighting": reweight_json(&bundle, &basis, &view.weights, &view.result, intervals),
        });
        let mut text = serde_json::to_string_pretty(&head).map_err(|e| e.to_string())?;
        // The reports go in as the worker wrote them (re-parsing could move a float by one ulp).
        for (key, finished) in [
            ("rq1", self.results.rq1.get_untracked()),
            ("rq2", self.results.rq2.get_untracked()),
        ] {
            let Some(f) = finished else { continue };
            let settings = serde_json::to_string(&f.request).map_err(|e| e.to_string())?;
            if text.ends_with('}') {
                text.pop();
                while text.ends_with(['\n', ' ']) {
                    text.pop();
                }
                text.push_str(&format!(
                    ",\n  \"{key}\": {{\"settings\": {settings}, \"report\": {}}}\n}}",
                    f.outcome.report
                ));
            }
        }
        text.push('\n');
        Ok(text)
    }
}

/// The ids whose `shown` flag is set, for a link's `model=` / `condition=` keys; `None` when every id
/// is shown (the link then leaves the key out).
fn shown_ids(ids: impl Iterator<Item = String>, shown: &[bool]) -> Option<Vec<String>> {
    (!shown.iter().all(|s| *s)).then(|| {
        ids.zip(shown)
            .filter(|(_, s)| **s)
            .map(|(id, _)| id)
            .collect()
    })
}
