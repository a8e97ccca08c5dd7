//! The Compare view's state (issue 17 item 1): [`CompareModel`], one per loaded bundle.
//!
//! A comparison ([`atlas_core::compare::Comparison`], the code behind `atlas compare`) has a
//! weight-free part that is slow — the matched units of every model pair and the paired
//! statement-cluster bootstrap of each pair's BER difference: about 0.3 s natively on the default
//! bundle with 2,000 replicates, more in wasm — and a weight-dependent part that is fast
//! ([`Comparison::report`]). So:
//!
//! - the slow part runs in the analysis Web Worker ([`atlas_worker::Request::Compare`], answered with
//!   [`PairedReplicates`]), started the first time the Compare view is shown and again when the
//!   repeat policy or the bootstrap's seed or replicates change (with a progress state meanwhile);
//! - the re-weighting bootstrap is **not** recomputed: the page already holds it
//!   ([`ExplorerModel::boot`], the same seed, stream and replicates), and
//!   [`Comparison::from_parts`] joins the two — the numbers are those of `Comparison::new`, i.e. of
//!   `atlas compare` with the same policy, weights, seed and replicates;
//! - the report follows the page's current condition weights ([`ExplorerModel::valid`]) on the main
//!   thread while the view is shown (tens of milliseconds on the default bundle; its time is kept in
//!   [`ReportHandle::ms`]); a weight changed in the Scores view is applied when the view is shown again.
//!
//! The chosen pair is [`ComparePair`] (the URL's `a=` / `b=`, written by the one URL writer).

use std::sync::Arc;

use atlas_core::compare::{
    CompareOptions, CompareReport, Comparison, PairComparison, PairedReplicates, DEFAULT_ALPHA,
};
use atlas_core::format::{percent, thousands_u64};
use atlas_core::Direction;
use atlas_worker::{CompareSettings, Request};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::browser::loader::now_ms;
use crate::browser::worker::{AnalysisRun, WorkerEvent};
use crate::state::nav::Navigator;
use crate::state::reweighting::{BootState, ExplorerModel};
use crate::state::url::{AppView, ComparePair};
use crate::state::AtlasState;

/// Where the worker's paired part stands.
#[derive(Debug, Clone)]
pub enum PairedState {
    /// Not started (the Compare view was not shown yet).
    Idle,
    /// `done` of `total` replicates in the worker.
    Running {
        /// Replicates done.
        done: usize,
        /// Replicates asked for.
        total: usize,
    },
    /// The paired replicates, with the milliseconds from the request to the answer (worker start,
    /// bundle parse and computation).
    Ready(Arc<PairedReplicates>, f64),
    /// Why the run failed.
    Failed(String),
}

/// A [`Comparison`] shared by pointer (memos compare it by identity), with the milliseconds
/// [`Comparison::from_parts`] took on the page.
#[derive(Debug, Clone)]
pub struct ComparisonHandle(pub Arc<Comparison>, pub f64);

impl PartialEq for ComparisonHandle {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A report of the current weights with the milliseconds [`Comparison::report`] took.
#[derive(Debug, Clone)]
pub struct ReportHandle {
    /// The report (every pair, the separable matrix, the rank bands).
    pub report: Arc<CompareReport>,
    /// Milliseconds of `report` on the page.
    pub ms: f64,
}

impl PartialEq for ReportHandle {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.report, &other.report)
    }
}

/// The Compare view's state (context; see the module docs).
#[derive(Clone, Copy)]
pub struct CompareModel {
    /// The worker's paired part.
    pub paired: RwSignal<PairedState>,
    /// The comparison of the current policy, seed and replicates, once both parts are ready (`Err`:
    /// why the parts could not be joined).
    pub comparison: Memo<Option<Result<ComparisonHandle, String>>>,
    /// The report under the page's current valid weights.
    pub report: Memo<Option<Result<ReportHandle, String>>>,
    /// The pair asked for (URL or pickers), `None` for the default pair.
    pub pair: RwSignal<Option<(String, String)>>,
}

impl CompareModel {
    /// The model of the loaded bundle (provided as context); its worker job starts the first time the
    /// Compare view is shown.
    pub fn new() -> Self {
        let state = expect_context::<AtlasState>();
        let explorer = expect_context::<ExplorerModel>();
        let pair = use_context::<ComparePair>().map_or_else(|| RwSignal::new(None), |p| p.0);
        let paired = RwSignal::new(PairedState::Idle);
        let comparison = Memo::new(move |_| {
            let PairedState::Ready(p, _) = paired.get() else {
                return None;
            };
            let BootState::Ready { boot, policy } = explorer.boot.get() else {
                return None;
            };
            let basis = explorer.basis.get().0;
            let (seed, reps) = explorer.boot_settings.get();
            // Wait while a part is still that of an earlier policy or setting (a new run is under way).
            if policy != basis.policy()
                || p.policy != basis.policy()
                || (p.seed, p.reps) != (seed, reps)
                || (boot.seed(), boot.reps()) != (seed, reps)
            {
                return None;
            }
            let options = CompareOptions {
                policy: basis.policy(),
                reps,
                seed,
                alpha: DEFAULT_ALPHA,
            };
            let t0 = now_ms();
            let joined = explorer.loaded.with_value(|l| {
                Comparison::from_parts(
                    &l.audit,
                    options,
                    (*basis).clone(),
                    (*boot).clone(),
                    (*p).clone(),
                )
            });
            Some(
                joined
                    .map(|c| ComparisonHandle(Arc::new(c), now_ms() - t0))
                    .map_err(|e| e.to_string()),
            )
        });
        // Only while the view is shown: the report costs tens of milliseconds, and a weight dragged in
        // the Scores view must not pay for a view nobody looks at (it catches up when shown again).
        let nav = Navigator::from_context();
        let report = Memo::new(move |prev: Option<&Option<Result<ReportHandle, String>>>| {
            if nav.current.get() != AppView::Compare {
                return prev.cloned().flatten();
            }
            let handle = comparison.get()?;
            let weights = explorer.valid.get();
            Some(handle.and_then(|c| {
                let t0 = now_ms();
                c.0.report(&weights)
                    .map(|r| ReportHandle {
                        report: Arc::new(r),
                        ms: now_ms() - t0,
                    })
                    .map_err(|e| e.to_string())
            }))
        });
        let model = CompareModel {
            paired,
            comparison,
            report,
            pair,
        };
        provide_context(model);
        model.run_when_shown(state, explorer);
        model.measure_on_request(explorer);
        model
    }

    /// The benchmark hook: when `window.__atlasCompareMeasure` is true as the first report is ready,
    /// times `Comparison::new` + `report` — everything on the page's main thread, as a page without
    /// the worker would run it — once, and stores the milliseconds in `window.__atlasCompareFullMs`
    /// (`tests/e2e/compare.mjs` records it; the reason this work runs in the worker).
    fn measure_on_request(self, explorer: ExplorerModel) {
        use wasm_bindgen::JsValue;
        let done = StoredValue::new(false);
        Effect::new(move |_| {
            if done.get_value() || !matches!(self.report.get(), Some(Ok(_))) {
                return;
            }
            let Some(window) = web_sys::window() else {
                return;
            };
            let asked = js_sys::Reflect::get(&window, &JsValue::from_str("__atlasCompareMeasure"))
                .ok()
                .and_then(|v| v.as_bool())
                .unwrap_or(false);
            if !asked {
                return;
            }
            done.set_value(true);
            let basis = explorer.basis.get_untracked().0;
            let (seed, reps) = explorer.boot_settings.get_untracked();
            let options = CompareOptions {
                policy: basis.policy(),
                reps,
                seed,
                alpha: DEFAULT_ALPHA,
            };
            let weights = explorer.valid.get_untracked();
            let t0 = now_ms();
            let ok = explorer.loaded.with_value(|l| {
                Comparison::new(&l.audit, options)
                    .and_then(|c| c.report(&weights))
                    .is_ok()
            });
            let ms = now_ms() - t0;
            let value = if ok {
                JsValue::from_f64(ms)
            } else {
                JsValue::NULL
            };
            let _ =
                js_sys::Reflect::set(&window, &JsValue::from_str("__atlasCompareFullMs"), &value);
        });
    }

    /// Starts the worker job once the Compare view is shown, and again whenever the policy or the
    /// bootstrap settings change after that.
    fn run_when_shown(self, state: AtlasState, explorer: ExplorerModel) {
        let nav = Navigator::from_context();
        let wanted = RwSignal::new(false);
        Effect::new(move |_| {
            if nav.current.get() == AppView::Compare && !wanted.get_untracked() {
                wanted.set(true);
            }
        });
        let run = StoredValue::new_local(None::<AnalysisRun>);
        on_cleanup(move || {
            run.try_update_value(|r| *r = None);
        });
        let paired = self.paired;
        Effect::new(move |_| {
            if !wanted.get() {
                return;
            }
            let policy = state.policy.get();
            let (seed, reps) = explorer.boot_settings.get();
            let loaded = explorer.loaded.get_value();
            // A new run replaces (and terminates) the previous one.
            run.update_value(|r| *r = None);
            paired.set(PairedState::Running {
                done: 0,
                total: reps,
            });
            let started = now_ms();
            let finish = move || {
                spawn_local(async move {
                    run.try_update_value(|r| *r = None);
                })
            };
            let on_event = move |event| match event {
                WorkerEvent::Progress { done, total, .. } => {
                    paired.try_set(PairedState::Running { done, total });
                }
                WorkerEvent::Done(outcome) => {
                    paired.try_set(match outcome.paired {
                        Some(p) => PairedState::Ready(Arc::new(p), now_ms() - started),
                        None => PairedState::Failed("the worker sent no paired replicates".into()),
                    });
                    finish();
                }
                WorkerEvent::Failed(message) => {
                    paired.try_set(PairedState::Failed(message));
                    finish();
                }
            };
            let request = Request::Compare(CompareSettings { seed, policy, reps });
            match AnalysisRun::start(request, loaded.data.clone(), on_event) {
                Ok(handle) => run.set_value(Some(handle)),
                Err(message) => paired.set(PairedState::Failed(format!(
                    "the analysis worker could not be started: {message}"
                ))),
            }
        });
    }
}

impl Default for CompareModel {
    fn default() -> Self {
        Self::new()
    }
}

/// The default pair: the two models at the top of the equal-weight ranking (Eq. 4, the Overview's
/// ranking; ties in bundle order), or the first two models when fewer than two have a rank. Model
/// indices in bundle order of preference (A first).
pub fn default_pair(ranks: &[Option<f64>]) -> Option<(usize, usize)> {
    let mut ranked: Vec<(usize, f64)> = ranks
        .iter()
        .enumerate()
        .filter_map(|(m, r)| r.map(|r| (m, r)))
        .collect();
    ranked.sort_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(&y.0)));
    match ranked[..] {
        [(a, _), (b, _), ..] => Some((a, b)),
        _ => (ranks.len() >= 2).then_some((0, 1)),
    }
}

/// One pair of a report in the reader's orientation (A = the model picked as A): the report keeps
/// every pair in bundle order, so a pair picked the other way round has `b` ↔ `c`, A ↔ B and the
/// differences' signs swapped (an interval `[lo, hi]` becomes `[−hi, −lo]`).
#[derive(Debug, Clone, PartialEq)]
pub struct OrientedPair {
    /// The pair as the report holds it.
    pub pair: PairComparison,
    /// Whether A and B are swapped against the report.
    pub flipped: bool,
}

impl OrientedPair {
    /// The pair `a` (A), `b` (B) of `report`; `None` when the report has no such pair.
    pub fn of(report: &CompareReport, a: &str, b: &str) -> Option<Self> {
        let pair = report.pair(a, b)?.clone();
        let flipped = pair.model_a != a;
        Some(OrientedPair { pair, flipped })
    }

    fn sign(&self) -> f64 {
        if self.flipped {
            -1.0
        } else {
            1.0
        }
    }

    /// Model A's id.
    pub fn a(&self) -> &str {
        if self.flipped {
            &self.pair.model_b
        } else {
            &self.pair.model_a
        }
    }

    /// Model B's id.
    pub fn b(&self) -> &str {
        if self.flipped {
            &self.pair.model_a
        } else {
            &self.pair.model_b
        }
    }

    /// `(n11, b, c, n00)`: both show evidence, only A, only B, neither.
    pub fn cells(&self) -> (u64, u64, u64, u64) {
        let t = &self.pair.table;
        if self.flipped {
            (t.both, t.b_only, t.a_only, t.neither)
        } else {
            (t.both, t.a_only, t.b_only, t.neither)
        }
    }

    /// `(invalid for A only, for B only, for both)`.
    pub fn exclusions(&self) -> (u64, u64, u64) {
        let e = &self.pair.table.excluded;
        if self.flipped {
            (e.invalid_b_only, e.invalid_a_only, e.invalid_both)
        } else {
            (e.invalid_a_only, e.invalid_b_only, e.invalid_both)
        }
    }

    /// Selection BER of A and of B on the matched units (fractions).
    pub fn bers(&self) -> (Option<f64>, Option<f64>) {
        let (x, y) = (self.pair.ber_a, self.pair.ber_b);
        if self.flipped {
            (y, x)
        } else {
            (x, y)
        }
    }

    /// Reference scores (Eq. 4, current weights) of A and of B (fractions).
    pub fn scores(&self) -> (Option<f64>, Option<f64>) {
        let (x, y) = (self.pair.score_a, self.pair.score_b);
        if self.flipped {
            (y, x)
        } else {
            (x, y)
        }
    }

    /// A difference A − B in pp.
    pub fn diff(&self, d: Option<f64>) -> Option<f64> {
        d.map(|v| self.sign() * v)
    }

    /// An interval of A − B in pp.
    pub fn interval(&self, i: Option<(f64, f64)>) -> Option<(f64, f64)> {
        i.map(|(lo, hi)| if self.flipped { (-hi, -lo) } else { (lo, hi) })
    }
}

/// A p-value as the page and `atlas compare` print it: `< 1e-300` when it underflowed to 0, two
/// significant digits in scientific notation below 0.0001 (`2.30e-5`), else four decimals.
pub fn p_text(p: f64) -> String {
    if p == 0.0 {
        "< 1e-300".to_string()
    } else if p < 1e-4 {
        format!("{p:.2e}")
    } else {
        format!("{p:.4}")
    }
}

/// A p-value in the plain sentence: `p < 0.001`, else `p = 0.023` (three decimals).
pub fn p_phrase(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_string()
    } else {
        format!("p = {p:.3}")
    }
}

/// A difference in pp with two decimals and its sign (`−13.68 pp`; the minus is U+2212).
pub fn pp_text(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map_or("—".to_string(), |x| signed(x, 2) + " pp")
}

/// An interval in pp: `[−14.92, −12.43]`.
pub fn ci_text(v: Option<(f64, f64)>) -> String {
    v.map_or("—".to_string(), |(lo, hi)| {
        format!("[{}, {}]", signed(lo, 2), signed(hi, 2))
    })
}

/// `x` with `decimals` decimals and a sign: `+1.20`, `−0.40` (U+2212 minus, as typeset).
pub fn signed(x: f64, decimals: usize) -> String {
    let t = format!("{:.decimals$}", x.abs());
    let zero = t.chars().all(|c| c == '0' || c == '.');
    if x < 0.0 && !zero {
        format!("−{t}")
    } else {
        format!("+{t}")
    }
}

/// The one plain sentence on top of the Compare view: what the matched units say about A against B,
/// with the numbers and the verdict (separable or not at FDR α over all pairs). `label` turns a model
/// id into its label.
pub fn sentence(
    report: &CompareReport,
    pair: &OrientedPair,
    label: &dyn Fn(&str) -> String,
) -> String {
    let (a, b) = (label(pair.a()), label(pair.b()));
    let (n11, nb, nc, n00) = pair.cells();
    let n = n11 + nb + nc + n00;
    if n == 0 {
        return format!(
            "{a} and {b} have no matched {} with a valid Selection from both: there is nothing to compare.",
            unit_word(report, 1)
        );
    }
    let (ber_a, ber_b) = pair.bers();
    let diff = pair.diff(pair.pair.ber_diff_pp);
    let lower_is_better = report.direction.direction == Direction::Lower;
    let verb = match diff {
        Some(d) if d < 0.0 && lower_is_better => format!("{a} is less biased than {b}"),
        Some(d) if d > 0.0 && lower_is_better => format!("{a} is more biased than {b}"),
        Some(d) if d < 0.0 => {
            format!("{a} gives stereotype-consistent Selections less often than {b}")
        }
        Some(d) if d > 0.0 => {
            format!("{a} gives stereotype-consistent Selections more often than {b}")
        }
        _ => format!("{a} and {b} give stereotype-consistent Selections equally often"),
    };
    let numbers = format!(
        "BER {} vs {}, difference {} {}",
        percent(ber_a, 1),
        percent(ber_b, 1),
        pp_text(diff),
        ci_text(pair.interval(pair.pair.ber_diff_ci_pp))
    );
    let test = if nb + nc == 0 {
        "no matched unit tells them apart (b + c = 0), so McNemar's test has no information (p = 1)"
            .to_string()
    } else {
        format!("McNemar exact {}", p_phrase(pair.pair.mcnemar.p_exact))
    };
    let verdict = if pair.pair.separable {
        format!(
            "The audit separates them (Benjamini–Hochberg adjusted p ≤ {} over all {} pairs).",
            report.alpha,
            report.pairs.len()
        )
    } else {
        format!(
            "The audit cannot separate them: the difference is within its noise (Benjamini–Hochberg adjusted p {} > {} over all {} pairs).",
            p_text(pair.pair.p_bh),
            report.alpha,
            report.pairs.len()
        )
    };
    format!(
        "On these {} matched {}, {verb}: {numbers}; {test}. {verdict}",
        thousands_u64(n),
        unit_word(report, n)
    )
}

/// `responses` / `units` (singular for one) as the repeat policy counts them.
pub fn unit_word(report: &CompareReport, n: u64) -> String {
    let word = if report.count_unit == "responses" {
        "response"
    } else {
        "unit"
    };
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}
