//! The Plan view (issue 17 §2): how large must an audit be, and spread how? The loaded bundle is the
//! finite reference ([`atlas_core::plan`], seed `000_…` §3.5, §5.3). The reader chooses designs,
//! the models, a budget per model (a slider and a typed field, 20 to 2,000) and targets; as the
//! slider moves, each design's predicted score MAE (mean, 95 % range, 95th percentile), RMSE, τ-b,
//! inversion rate and the chosen pair's probability are shown ([`Planner::estimate`], 2,000 draws,
//! seed 20260722 — the numbers of `atlas plan-audit --budget B --json`), with the curve over the
//! default budget grid and the smallest budget per design meeting the targets ([`Planner::plan`],
//! `atlas plan-audit --json`).
//!
//! Where it runs: in a pool of persistent planner Web Workers ([`PlanPool`], one per logical core
//! up to 4), each estimate split by draw ranges across them and merged on the page with the page's
//! [`Planner`] (one per repeat policy) — the same numbers, bit for bit, for any number of workers.
//! Work is latest-wins: slider events are coalesced (a move only records the latest budget; one
//! timer tick applies it), and the [`Runner`] computes only the latest live settings, one estimate at
//! a time, before the curve over the budget grid (whose estimates it interleaves with newer live
//! requests and drops when its inputs change). Where no Web Worker can start, the same estimates
//! run on the page. The settings live in the URL ([`PlanUrl`], written by the loaded bundle's URL
//! writer); back / forward restore them ([`PlanRestore`]).

use std::rc::Rc;
use std::sync::Arc;

use atlas_charts::plan_curve::PlanCurve;
use atlas_charts::spec::ChartSpec;
use atlas_core::plan::{
    design_name, parse_design, Estimate, EstimateOptions, PlanOptions, PlanReport, Planner,
    Targets, DEFAULT_BUDGETS, DEFAULT_DRAWS, FINITE_REFERENCE_NOTE,
};
use atlas_core::rq2::{Design, DEFAULT_SEED};
use atlas_core::tables::{Cell, Table};
use atlas_core::RepeatPolicy;
use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::JsCast;

use crate::browser::plan_pool::{default_workers, PlanPool};
use crate::state::nav::Navigator;
use crate::state::plan::PilotHandoff;
use crate::state::url::{AppView, CurrentView, PlanQuery, PlanRestore, PlanUrl};
use crate::state::{AtlasState, Loaded};
use crate::ui::chart::ChartPanel;
use crate::ui::glossary::Term;
use crate::ui::number_field::NumberInput;
use crate::ui::table::table_view;

/// Smallest and largest budget of the slider (responses per model).
pub const BUDGET_RANGE: (usize, usize) = (20, 2_000);

/// The default budget of the view (seed `000_…` §3.5: 200).
pub const DEFAULT_BUDGET: usize = 200;

/// A planner for one repeat policy (compared by policy only: one per policy).
#[derive(Clone)]
struct PlannerFor(RepeatPolicy, Result<Arc<Planner>, String>);

impl PartialEq for PlannerFor {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

/// The settings of the view, read from the URL's [`PlanQuery`].
#[derive(Debug, Clone, PartialEq)]
struct Settings {
    designs: Vec<Design>,
    budget: usize,
    models: Vec<bool>,
    mae: String,
    inversions: String,
    pair: (Option<usize>, Option<usize>),
    pair_pct: String,
}

impl Settings {
    fn from_query(q: &PlanQuery, model_ids: &[String], k_all: usize) -> Self {
        let mut designs: Vec<Design> = q
            .designs
            .iter()
            .filter_map(|d| parse_design(d).ok())
            .filter(|d| !matches!(d, Design::Coverage(k) if *k == 0 || *k > k_all))
            .collect();
        designs.dedup();
        if designs.is_empty() {
            designs = vec![Design::Concentrated, Design::Srs, Design::Stratified];
        }
        let models = match &q.models {
            Some(ids) => model_ids.iter().map(|m| ids.contains(m)).collect(),
            None => vec![true; model_ids.len()],
        };
        let pair = q
            .pair
            .as_deref()
            .and_then(|p| p.split_once(','))
            .map(|(a, b)| {
                let find = |x: &str| model_ids.iter().position(|m| m == x.trim());
                (find(a), find(b))
            })
            .unwrap_or((None, None));
        Settings {
            designs,
            budget: q
                .budget
                .unwrap_or(DEFAULT_BUDGET)
                .clamp(BUDGET_RANGE.0, BUDGET_RANGE.1),
            models,
            mae: q.mae.clone().unwrap_or_else(|| "2".to_string()),
            inversions: q.inversions.clone().unwrap_or_default(),
            pair,
            pair_pct: q.pair_pct.clone().unwrap_or_default(),
        }
    }

    fn to_query(&self, model_ids: &[String]) -> PlanQuery {
        PlanQuery {
            designs: self.designs.iter().map(|&d| design_name(d)).collect(),
            budget: Some(self.budget),
            models: (!self.models.iter().all(|&b| b)).then(|| {
                model_ids
                    .iter()
                    .zip(&self.models)
                    .filter(|(_, &on)| on)
                    .map(|(m, _)| m.clone())
                    .collect()
            }),
            mae: (!self.mae.trim().is_empty()).then(|| self.mae.trim().to_string()),
            inversions: (!self.inversions.trim().is_empty())
                .then(|| self.inversions.trim().to_string()),
            pair: match self.pair {
                (Some(a), Some(b)) => Some(format!("{},{}", model_ids[a], model_ids[b])),
                _ => None,
            },
            pair_pct: (!self.pair_pct.trim().is_empty()).then(|| self.pair_pct.trim().to_string()),
        }
    }

    fn chosen(&self) -> Vec<usize> {
        (0..self.models.len()).filter(|&m| self.models[m]).collect()
    }

    fn pair(&self) -> Option<(usize, usize)> {
        match self.pair {
            (Some(a), Some(b)) if a != b => Some((a, b)),
            _ => None,
        }
    }
}

/// A target text: empty = no target; else a number in 0..=100.
fn target(text: &str, what: &str) -> Result<Option<f64>, String> {
    atlas_core::number::DecimalRule::between(0.0, 100.0)
        .or_empty()
        .read(text)
        .map_err(|e| crate::ui::number_field::message(what, &e))
}

fn pp(v: Option<f64>) -> String {
    v.map_or("—".to_string(), |v| format!("{v:.2}"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or("—".to_string(), |v| format!("{:.1}", 100.0 * v))
}

/// Schedules `f` once after `ms` milliseconds.
fn later(ms: i32, f: impl FnOnce() + 'static) {
    let run = wasm_bindgen::closure::Closure::once_into_js(f);
    if let Some(w) = web_sys::window() {
        let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(run.unchecked_ref(), ms);
    }
}

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// What the live table shows: the repeat policy and budget it was computed for, each design's
/// estimate (or why there is none), and how it was computed (e.g. `2 Web Workers`).
type LiveRows = (
    RepeatPolicy,
    usize,
    Vec<(Design, Result<Estimate, String>)>,
    String,
);

/// The plan options of the curve and the answers: `s`'s designs, models, pair and targets over the
/// default budget grid.
fn plan_options(s: &Settings, ids: &[String], policy: RepeatPolicy) -> Result<PlanOptions, String> {
    let pair = s.pair();
    let targets = Targets {
        mae_pp: target(&s.mae, "MAE target")?,
        inversion_pct: target(&s.inversions, "inversion target")?,
        pair_pct: if pair.is_some() {
            target(&s.pair_pct, "pair target")?
        } else {
            None
        },
    };
    Ok(PlanOptions {
        designs: s.designs.clone(),
        budgets: DEFAULT_BUDGETS.to_vec(),
        models: Some(s.chosen().into_iter().map(|m| ids[m].clone()).collect()),
        policy,
        pair: pair.map(|(a, b)| (ids[a].clone(), ids[b].clone())),
        targets,
        ..PlanOptions::default()
    })
}

/// One estimate, on the pool when there is one, else on the page (the same numbers either way).
async fn estimate_on(
    pool: Option<Rc<PlanPool>>,
    planner: &Planner,
    policy: RepeatPolicy,
    design: Design,
    budget: usize,
    options: &EstimateOptions,
) -> Result<Estimate, String> {
    match pool {
        Some(pool) => {
            pool.estimate(planner, policy, design, budget, options)
                .await
        }
        None => planner
            .estimate(design, budget, options)
            .map_err(|e| e.to_string()),
    }
}

/// Computes what the view shows, latest-wins: a change of the live settings or of the curve's
/// inputs bumps a generation ([`Runner::want_live`], [`Runner::want_report`]); one task at a time
/// computes the latest live estimates first, then the curve, one estimate after another, checking
/// between estimates for newer live settings (computed first) or newer curve inputs (the old curve is
/// dropped). Nothing stale is ever queued in the workers.
#[derive(Clone, Copy)]
struct Runner {
    active: RwSignal<bool>,
    settings: RwSignal<Settings>,
    planner: Memo<PlannerFor>,
    ids: StoredValue<Vec<String>>,
    bundle: StoredValue<Arc<[u8]>>,
    pool: StoredValue<Option<Rc<PlanPool>>, LocalStorage>,
    pool_problem: StoredValue<Option<String>>,
    /// The pool was started for the estimate being computed (its time includes the start).
    pool_started: StoredValue<bool>,
    live: RwSignal<Result<LiveRows, String>>,
    report: RwSignal<Result<PlanReport, String>>,
    elapsed: RwSignal<Option<(f64, String)>>,
    live_gen: StoredValue<(u64, u64)>,
    report_gen: StoredValue<(u64, u64)>,
    running: StoredValue<bool>,
}

impl Runner {
    /// The pool, started on first use; `None` (computing on the page) when no worker can start.
    fn pool(self) -> Option<Rc<PlanPool>> {
        if let Some(pool) = self.pool.try_get_value().flatten() {
            return Some(pool);
        }
        if self.pool_problem.try_get_value().flatten().is_some() {
            return None;
        }
        let bundle = self.bundle.try_get_value()?;
        match PlanPool::new(bundle, default_workers()) {
            Ok(pool) => {
                let pool = Rc::new(pool);
                self.pool.try_set_value(Some(pool.clone()));
                self.pool_started.try_set_value(true);
                Some(pool)
            }
            Err(e) => {
                self.pool_problem.try_set_value(Some(format!(
                    "no Web Worker could start ({e}); computing on the page"
                )));
                None
            }
        }
    }

    fn where_computed(self, pool: &Option<Rc<PlanPool>>) -> String {
        match pool {
            Some(p) if p.size() == 1 => "in 1 Web Worker".to_string(),
            Some(p) => format!("in {} Web Workers", p.size()),
            None => "on the page".to_string(),
        }
    }

    fn want_live(self) {
        self.live_gen.update_value(|(wanted, _)| *wanted += 1);
        self.kick();
    }

    fn want_report(self) {
        self.report_gen.update_value(|(wanted, _)| *wanted += 1);
        self.kick();
    }

    fn live_pending(self) -> bool {
        self.live_gen
            .try_get_value()
            .is_some_and(|(wanted, done)| wanted != done)
    }

    fn kick(self) {
        if self.running.get_value() {
            return;
        }
        self.running.set_value(true);
        spawn_local(async move {
            self.run().await;
            self.running.try_set_value(false);
        });
    }

    async fn run(self) {
        loop {
            if !self.active.try_get_untracked().unwrap_or(false) {
                return;
            }
            if self.live_pending() {
                self.run_live().await;
                continue;
            }
            match self.report_gen.try_get_value() {
                Some((wanted, done)) if wanted != done => self.run_report(wanted).await,
                _ => return,
            }
        }
    }

    /// The live estimates at the chosen budget, one per design.
    async fn run_live(self) {
        let Some((generation, _)) = self.live_gen.try_get_value() else {
            return;
        };
        let Some(s) = self.settings.try_get_untracked() else {
            return;
        };
        let Some(PlannerFor(policy, planner)) = self.planner.try_get_untracked() else {
            return;
        };
        let result = match planner {
            Err(e) => Err(e),
            Ok(_) if s.chosen().is_empty() => Err("Choose at least one model.".to_string()),
            Ok(planner) => {
                let options = EstimateOptions {
                    draws: DEFAULT_DRAWS,
                    seed: DEFAULT_SEED,
                    models: Some(s.chosen()),
                    pair: s.pair(),
                    ..EstimateOptions::default()
                };
                let pool = self.pool();
                let how = self.where_computed(&pool);
                let t0 = now_ms();
                let mut rows = Vec::with_capacity(s.designs.len());
                for &d in &s.designs {
                    let e =
                        estimate_on(pool.clone(), &planner, policy, d, s.budget, &options).await;
                    rows.push((d, e));
                }
                let ms = (now_ms() - t0) / s.designs.len().max(1) as f64;
                let timed = if self.pool_started.try_get_value().unwrap_or(false) {
                    self.pool_started.try_set_value(false);
                    format!("{how}, starting them included")
                } else {
                    how.clone()
                };
                self.elapsed.try_set(Some((ms, timed)));
                Ok((policy, s.budget, rows, how))
            }
        };
        self.live.try_set(result);
        self.live_gen
            .try_update_value(|(_, done)| *done = generation);
    }

    /// The curve and the answers over the default grid, for the curve inputs of `generation`.
    async fn run_report(self, generation: u64) {
        let finish = |result: Result<PlanReport, String>| {
            self.report.try_set(result);
            self.report_gen
                .try_update_value(|(_, done)| *done = generation);
        };
        let (Some(s), Some(PlannerFor(policy, planner)), Some(ids)) = (
            self.settings.try_get_untracked(),
            self.planner.try_get_untracked(),
            self.ids.try_get_value(),
        ) else {
            return;
        };
        let planner = match planner {
            Ok(p) => p,
            Err(e) => return finish(Err(e)),
        };
        let options = match plan_options(&s, &ids, policy) {
            Ok(o) => o,
            Err(e) => return finish(Err(e)),
        };
        let request = match planner.plan_request(&options) {
            Ok(r) => r,
            Err(e) => return finish(Err(e.to_string())),
        };
        let mut estimates = Vec::with_capacity(request.jobs.len());
        for &(design, budget) in &request.jobs {
            if self.live_pending() {
                self.run_live().await;
            }
            if self.report_gen.try_get_value().map(|(w, _)| w) != Some(generation)
                || !self.active.try_get_untracked().unwrap_or(false)
            {
                return; // newer curve inputs: this curve is dropped, the loop starts the new one
            }
            let pool = self.pool();
            match estimate_on(
                pool,
                &planner,
                policy,
                design,
                budget,
                &request.estimate_options,
            )
            .await
            {
                Ok(e) => estimates.push(e),
                Err(e) => return finish(Err(e)),
            }
        }
        finish(
            planner
                .plan_report(&options, &request, estimates)
                .map_err(|e| e.to_string()),
        );
    }
}

thread_local! {
    /// The pools of the benchmark hook, by size (replaced with the hook, so a new bundle's hook
    /// terminates the old bundle's workers).
    static HOOK_POOLS: std::cell::RefCell<Vec<(usize, Rc<PlanPool>)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The benchmark and test hooks of `bench/plan_browser.mjs` and `tests/e2e/plan.mjs` (issue 17
/// Benchmark and Tests), on this page's planner (every model, seed 20260722, the current repeat
/// policy):
/// - `window.atlasPlanEstimate(design, budget, draws)` runs one [`Planner::estimate`] on the page's
///   main thread and returns the [`Estimate`] as JSON (the document `atlas plan-audit --json` has
///   under `designs[].estimates[]`), or `{"error": …}`;
/// - `window.atlasPlanEstimateWorkers(design, budget, draws, workers)` returns a Promise of the same
///   JSON, computed by a pool of `workers` planner Web Workers as the view computes (started on
///   first use and kept for the next calls).
///
/// The caller times them.
fn install_bench_hook(planner: Memo<PlannerFor>, bundle: Arc<[u8]>) {
    HOOK_POOLS.with_borrow_mut(Vec::clear);
    let options = |draws: u32| EstimateOptions {
        draws: draws as usize,
        ..EstimateOptions::default()
    };
    let error = |e: String| serde_json::json!({ "error": e }).to_string();
    let hook = wasm_bindgen::closure::Closure::<dyn Fn(String, u32, u32) -> String>::new(
        move |design: String, budget: u32, draws: u32| {
            let run = || -> Result<String, String> {
                let design = parse_design(&design)?;
                let PlannerFor(_, planner) = planner.get_untracked();
                let e = planner?
                    .estimate(design, budget as usize, &options(draws))
                    .map_err(|e| e.to_string())?;
                serde_json::to_string(&e).map_err(|e| e.to_string())
            };
            run().unwrap_or_else(error)
        },
    );
    let pooled =
        wasm_bindgen::closure::Closure::<dyn Fn(String, u32, u32, u32) -> js_sys::Promise>::new(
            move |design: String, budget: u32, draws: u32, workers: u32| {
                let bundle = bundle.clone();
                wasm_bindgen_futures::future_to_promise(async move {
                    let run = async {
                        let design = parse_design(&design)?;
                        let PlannerFor(policy, planner) = planner.get_untracked();
                        let planner = planner?;
                        let workers = (workers as usize).max(1);
                        let pool = match HOOK_POOLS.with_borrow(|p| {
                            p.iter()
                                .find(|(n, _)| *n == workers)
                                .map(|(_, p)| p.clone())
                        }) {
                            Some(pool) => pool,
                            None => {
                                let pool = Rc::new(PlanPool::new(bundle, workers)?);
                                HOOK_POOLS.with_borrow_mut(|p| p.push((workers, pool.clone())));
                                pool
                            }
                        };
                        let e = pool
                            .estimate(&planner, policy, design, budget as usize, &options(draws))
                            .await?;
                        serde_json::to_string(&e).map_err(|e| e.to_string())
                    };
                    Ok(wasm_bindgen::JsValue::from_str(
                        &run.await.unwrap_or_else(error),
                    ))
                })
            },
        );
    if let Some(w) = web_sys::window() {
        js_sys::Reflect::set(&w, &"atlasPlanEstimate".into(), hook.as_ref()).ok();
        js_sys::Reflect::set(&w, &"atlasPlanEstimateWorkers".into(), pooled.as_ref()).ok();
    }
    // The page lives as long as the hooks.
    hook.forget();
    pooled.forget();
}

/// The Plan view of `loaded`.
#[component]
pub fn PlanView(loaded: Arc<Loaded>) -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let plan_url = use_context::<PlanUrl>().unwrap_or(PlanUrl(RwSignal::new(PlanQuery::default())));
    let model_ids: Vec<String> = loaded
        .audit
        .model_ids()
        .iter()
        .map(|s| s.to_string())
        .collect();
    let bundle_id = loaded.audit.metadata().id.clone();
    let planner_audit = loaded.clone();
    let planner = Memo::new(move |_| {
        let policy = state.policy.get();
        PlannerFor(
            policy,
            Planner::new(&planner_audit.audit, policy, None)
                .map(Arc::new)
                .map_err(|e| e.to_string()),
        )
    });
    // Reference conditions K (the coverage designs' range), read off the bundle without a planner.
    let k_all = loaded
        .audit
        .conditions
        .iter()
        .filter(|c| c.in_reference)
        .count();
    // Nothing is computed until the view is first shown (every view is mounted at load).
    let active = RwSignal::new(false);
    if let Some(current) = use_context::<CurrentView>() {
        Effect::new(move |_| {
            if current.0.get() == AppView::Plan && !active.get_untracked() {
                active.set(true);
            }
        });
    }
    let settings = RwSignal::new(Settings::from_query(
        &plan_url.0.get_untracked(),
        &model_ids,
        k_all,
    ));
    // The settings go to the URL (its writer coalesces) once the view has been shown: a page that
    // never opened the Plan view carries no plan keys.
    let ids_for_url = model_ids.clone();
    Effect::new(move |_| {
        if !active.get() {
            return;
        }
        let q = settings.with(|s| s.to_query(&ids_for_url));
        if plan_url.0.get_untracked() != q {
            plan_url.0.set(q);
        }
    });

    install_bench_hook(planner, loaded.data.clone());

    // Coalesced budget: the slider and the field record the latest wish; one tick applies it.
    let wanted = StoredValue::new(None::<usize>);
    let scheduled = StoredValue::new(false);
    let request_budget = move |b: usize| {
        wanted.set_value(Some(b.clamp(BUDGET_RANGE.0, BUDGET_RANGE.1)));
        if scheduled.get_value() {
            return;
        }
        scheduled.set_value(true);
        later(0, move || {
            scheduled.try_set_value(false);
            if let Some(Some(b)) = wanted.try_update_value(Option::take) {
                settings.try_update(|s| s.budget = b);
            }
        });
    };
    let budget_text = RwSignal::new(settings.get_untracked().budget.to_string());
    let budget_problem = RwSignal::new(None::<String>);

    // Live estimates at the chosen budget (one per design) and the curve over the default grid,
    // computed by the Runner (latest-wins, in the pool of planner workers).
    let elapsed = RwSignal::new(None::<(f64, String)>);
    let plan_inputs = Memo::new(move |_| {
        settings.with(|s| {
            (
                s.designs.clone(),
                s.models.clone(),
                s.pair(),
                s.mae.clone(),
                s.inversions.clone(),
                s.pair_pct.clone(),
            )
        })
    });
    let runner = Runner {
        active,
        settings,
        planner,
        ids: StoredValue::new(model_ids.clone()),
        bundle: StoredValue::new(loaded.data.clone()),
        pool: StoredValue::new_local(None),
        pool_problem: StoredValue::new(None),
        pool_started: StoredValue::new(false),
        live: RwSignal::new(Err(String::new())),
        report: RwSignal::new(Err(String::new())),
        elapsed,
        live_gen: StoredValue::new((0, 0)),
        report_gen: StoredValue::new((0, 0)),
        running: StoredValue::new(false),
    };
    // The live table follows every setting (the budget included) and the repeat policy.
    Effect::new(move |_| {
        if !active.get() {
            return;
        }
        // Read, not only tracked: a memo that is never read never computes, so it would never
        // learn of its own sources' changes.
        settings.track();
        planner.with(|_| ());
        runner.want_live();
    });
    // The curve follows designs, models, pair and targets, not the budget.
    Effect::new(move |_| {
        if !active.get() {
            return;
        }
        plan_inputs.with(|_| ());
        planner.with(|_| ());
        runner.want_report();
    });
    // The workers end with the view (a new bundle mounts a new view).
    on_cleanup(move || {
        runner.pool.try_set_value(None);
    });
    // Back / forward: the restored entry's settings replace the form's.
    if let Some(restore) = use_context::<PlanRestore>() {
        let ids = model_ids.clone();
        Effect::new(move |_| {
            let Some(q) = restore.0.get() else {
                return;
            };
            restore.0.set(None);
            let s = Settings::from_query(&q, &ids, k_all);
            budget_text.set(s.budget.to_string());
            budget_problem.set(None);
            if settings.get_untracked() != s {
                settings.set(s);
            }
        });
    }
    let live = runner.live;
    let report = runner.report;

    // Controls.
    let design_choices: Vec<Design> = {
        let mut v = vec![
            Design::Concentrated,
            Design::Srs,
            Design::Stratified,
            Design::Balanced,
        ];
        v.extend((1..=k_all).map(Design::Coverage));
        v
    };
    let design_boxes = design_choices
        .into_iter()
        .map(|d| {
            let name = design_name(d);
            let id = format!("plan-design-{}", name.replace(':', "-"));
            let label = match d {
                Design::Concentrated => "concentrated (one condition, one template)".to_string(),
                Design::Srs => "SRS (simple random sample of cells)".to_string(),
                Design::Stratified => "stratified (every condition, by category)".to_string(),
                Design::Balanced => {
                    "balanced (one statement per category and condition)".to_string()
                }
                Design::Coverage(k) => format!("coverage: {k} of the {k_all} conditions"),
            };
            let id2 = id.clone();
            view! {
                <label class="check" for=id>
                    <input type="checkbox" id=id2
                        prop:checked=move || settings.with(|s| s.designs.contains(&d))
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            settings.update(|s| {
                                s.designs.retain(|&x| x != d);
                                if on {
                                    s.designs.push(d);
                                    let order = |x: &Design| match x {
                                        Design::Concentrated => 0,
                                        Design::Srs => 1,
                                        Design::Stratified => 2,
                                        Design::Balanced => 3,
                                        Design::Coverage(k) => 3 + k,
                                    };
                                    s.designs.sort_by_key(order);
                                }
                            });
                        }/>
                    " " {label}
                </label>
            }
        })
        .collect_view();
    let model_boxes = model_ids
        .iter()
        .enumerate()
        .map(|(m, id)| {
            let box_id = format!("plan-model-{m}");
            let for_id = box_id.clone();
            view! {
                <label class="check" for=for_id>
                    <input type="checkbox" id=box_id
                        prop:checked=move || settings.with(|s| s.models.get(m).copied().unwrap_or(false))
                        on:change=move |ev| {
                            let on = event_target_checked(&ev);
                            settings.update(|s| s.models[m] = on);
                        }/>
                    " " {id.clone()}
                </label>
            }
        })
        .collect_view();
    let pair_select = move |which: usize, id: &'static str| {
        let options = model_ids
            .iter()
            .enumerate()
            .map(|(m, name)| {
                let selected = move || {
                    settings.with(|s| if which == 0 { s.pair.0 } else { s.pair.1 }) == Some(m)
                };
                view! { <option value=m.to_string() selected=selected>{name.clone()}</option> }
            })
            .collect_view();
        view! {
            <select id=id on:change=move |ev| {
                let v = event_target_value(&ev).parse::<usize>().ok();
                settings.update(|s| if which == 0 { s.pair.0 = v } else { s.pair.1 = v });
            }>
                <option value="" selected=move || settings.with(|s| if which == 0 { s.pair.0 } else { s.pair.1 }).is_none()>"(none)"</option>
                {options}
            </select>
        }
    };
    let pair_a = pair_select(0, "plan-pair-a");
    let pair_b = pair_select(1, "plan-pair-b");

    // Outputs.
    let bundle_id_live = {
        let id = bundle_id.clone();
        move || id.clone()
    };
    let live_table = move || match live.get() {
        Err(message) if message.is_empty() => ().into_any(),
        Err(message) => {
            view! { <p class="field-error" id="plan-error" role="alert">{message}</p> }.into_any()
        }
        Ok((policy, budget, rows, how)) => {
            let mut header = vec![
                "Design".to_string(),
                "Responses per model".to_string(),
                "Score MAE, pp".to_string(),
                "MAE 95 % range, pp".to_string(),
                "MAE in 95 % of audits at most, pp".to_string(),
                "RMSE, pp".to_string(),
                "τ-b".to_string(),
                "Inversions, % of pairs".to_string(),
            ];
            let pair = settings.with_untracked(Settings::pair);
            if pair.is_some() {
                header.push("Pair order right, % of audits".to_string());
            }
            let mut notes = Vec::new();
            let table_rows = rows
                .iter()
                .map(|(d, r)| {
                    let name = design_name(*d);
                    match r {
                        Err(e) => {
                            notes.push(format!("{name}: {e}"));
                            let mut row = vec![Cell::text(name.clone())];
                            row.extend((1..header.len()).map(|_| Cell::none()));
                            row
                        }
                        Ok(e) => {
                            let mut row = vec![
                                Cell::text(name.clone()),
                                Cell::count(format!("{name}/budget"), e.budget),
                                Cell::number(
                                    pp(e.mae_pp.mean),
                                    format!("{name}/mae_pp"),
                                    e.mae_pp.mean,
                                ),
                                Cell::text(
                                    e.mae_pp.range.map_or("—".to_string(), |[a, b]| {
                                        format!("{a:.2}–{b:.2}")
                                    }),
                                ),
                                Cell::number(
                                    pp(e.mae_pp_p95),
                                    format!("{name}/mae_pp_p95"),
                                    e.mae_pp_p95,
                                ),
                                Cell::number(
                                    pp(e.rmse_pp.mean),
                                    format!("{name}/rmse_pp"),
                                    e.rmse_pp.mean,
                                ),
                                Cell::number(
                                    e.tau_b.mean.map_or("—".to_string(), |v| format!("{v:.3}")),
                                    format!("{name}/tau_b"),
                                    e.tau_b.mean,
                                ),
                                Cell::number(
                                    pct(e.inversion_rate.mean),
                                    format!("{name}/inversion_rate"),
                                    e.inversion_rate.mean,
                                ),
                            ];
                            if pair.is_some() {
                                let p = e.pair.as_ref().and_then(|p| p.probability);
                                row.push(Cell::number(pct(p), format!("{name}/pair"), p));
                            }
                            row
                        }
                    }
                })
                .collect();
            let t = Table {
                id: "plan-table".to_string(),
                title: format!("Predicted error of one audit of {budget} responses per model"),
                caption: format!(
                    "Bundle {bundle}; repeat policy {policy}; equal condition weights (Eq. 4); seed {DEFAULT_SEED}; {DEFAULT_DRAWS} simulated audits (draws) per design, computed {how}; ranges are the 2.5–97.5 percentiles of the draw-level MAE.",
                    bundle = bundle_id_live(),
                    policy = policy.key(),
                ),
                header,
                rows: table_rows,
                notes,
            };
            table_view(&t, "plan", 3).into_any()
        }
    };
    // "Use this design": the pilot form's sampling design and budget, then the Pilot view.
    let handoff = use_context::<PilotHandoff>();
    let nav = use_context::<Navigator>();
    let use_buttons = move || {
        let s = settings.get();
        s.designs
            .iter()
            .map(|&d| {
                let name = design_name(d);
                let id = format!("plan-use-{}", name.replace(':', "-"));
                let budget = s.budget;
                let label = match d {
                    Design::Balanced => "Use balanced (its budget is one statement per category and condition) in the pilot".to_string(),
                    _ => format!("Use {name} at {budget} responses per model in the pilot"),
                };
                let go = move |_| {
                    if let Some(h) = handoff {
                        h.0.set(Some((name.clone(), budget.to_string())));
                    }
                    if let Some(n) = nav {
                        n.go(AppView::Pilot, true);
                    }
                };
                view! { <button type="button" id=id on:click=go>{label}</button> }
            })
            .collect_view()
    };
    // The drawn curve (chart panel: hover, keyboard, PNG/SVG/CSV, table alternative) of the chosen
    // metric; the table below keeps the MAE column per design.
    let curve_metric = RwSignal::new("mae".to_string());
    let curve_spec = Memo::new(move |_| {
        let metric = curve_metric.get();
        report.with(|r| match r {
            Ok(r) => Ok(ChartSpec::PlanCurve(match metric.as_str() {
                "inversions" => PlanCurve::inversions(r, r.targets.inversion_pct),
                "pair" if r.pair.is_some() => PlanCurve::pair_order(r, r.targets.pair_pct),
                "pair" => {
                    return Err(
                        "Choose a pair of models to draw how often their order is right."
                            .to_string(),
                    )
                }
                _ => PlanCurve::mae_p95(r, r.targets.mae_pp),
            })),
            Err(e) if e.is_empty() => Err("The curve is being computed.".to_string()),
            Err(e) => Err(e.clone()),
        })
    });
    let curve_table = move || match report.get() {
        Err(message) if message.is_empty() => ().into_any(),
        Err(message) => {
            view! { <p class="field-error" id="plan-report-error" role="alert">{message}</p> }
                .into_any()
        }
        Ok(r) => {
            let mut header = vec!["Responses per model".to_string()];
            header.extend(
                r.designs
                    .iter()
                    .map(|d| format!("{}: MAE in 95 % of audits at most, pp", d.design)),
            );
            let rows = r
                .budgets
                .iter()
                .map(|&b| {
                    let mut row = vec![Cell::count(format!("budget/{b}"), b)];
                    for d in &r.designs {
                        let e = d.estimates.iter().find(|e| e.requested_budget == b);
                        let v = e.and_then(|e| e.mae_pp_p95);
                        row.push(Cell::number(
                            pp(v),
                            format!("{}/{b}/mae_pp_p95", d.design),
                            v,
                        ));
                    }
                    row
                })
                .collect();
            let t = Table {
                id: "plan-curve".to_string(),
                title: "Score MAE in 95 % of audits against the budget, per design".to_string(),
                caption: format!(
                    "Bundle {}; repeat policy {}; seed {}; {} draws per point; the default budget grid of atlas plan-audit.",
                    r.bundle, r.policy.key(), r.seed, r.draws
                ),
                header,
                rows,
                notes: r.designs.iter().flat_map(|d| d.skipped.iter().map(move |s| format!("{} at {}: {}", d.design, s.budget, s.reason))).collect(),
            };
            table_view(&t, "plan", 3).into_any()
        }
    };
    let answers = move || {
        report.get().ok().map(|r| {
            let items = r
                .answers
                .iter()
                .map(|a| {
                    let per = a
                        .per_design
                        .iter()
                        .map(|d| {
                            let text = match d.smallest_budget {
                                Some(b) => format!("{}: {b} responses per model", d.design),
                                None => format!("{}: not reached within {}", d.design, d.largest_budget.unwrap_or(BUDGET_RANGE.1)),
                            };
                            view! { <li data-design=d.design.clone() data-target=a.target data-smallest=d.smallest_budget.map(|b| b.to_string()).unwrap_or_default()>{text}</li> }
                        })
                        .collect_view();
                    view! {
                        <p>"Smallest budget per design for " <strong>{a.description.clone()}</strong> " (holding there and at every larger budget of the grid):"</p>
                        <ul>{per}</ul>
                    }
                })
                .collect_view();
            view! { <div id="plan-answer" aria-live="polite">{items}</div> }
        })
    };

    view! {
        <section id="plan" class="plan-view" aria-labelledby="plan-title">
            <h2 id="plan-title">"Plan an audit"</h2>
            <p id="plan-note" class="note"><Term id="finite-reference">"Finite reference"</Term>": " {FINITE_REFERENCE_NOTE}</p>
            <p class="note">"Choose how the audit spreads its responses ("<Term id="audit-design">"design"</Term>"), its "<Term id="budget">"budget"</Term>" per model and a target; the table follows the slider."</p>
            <fieldset id="plan-designs">
                <legend>"Designs (how the audit spreads its responses)"</legend>
                {design_boxes}
            </fieldset>
            <fieldset id="plan-models">
                <legend>"Models scored"</legend>
                {model_boxes}
            </fieldset>
            <div class="plan-budget">
                <label for="plan-budget-slider">"Budget: responses per model"</label>
                <input type="range" id="plan-budget-slider"
                    min=BUDGET_RANGE.0.to_string() max=BUDGET_RANGE.1.to_string() step="1"
                    prop:value=move || settings.with(|s| s.budget.to_string())
                    on:input=move |ev| {
                        if let Ok(b) = event_target_value(&ev).parse::<usize>() {
                            budget_text.set(b.to_string());
                            budget_problem.set(None);
                            request_budget(b);
                        }
                    }/>
                <label for="plan-budget" class="visually-hidden">"Budget (typed)"</label>
                <NumberInput id="plan-budget" shown=Signal::derive(move || settings.with(|s| s.budget.to_string()))
                    on_text=Callback::new(move |text: String| {
                        budget_text.set(text.clone());
                        match text.trim().parse::<usize>() {
                            Ok(b) if (BUDGET_RANGE.0..=BUDGET_RANGE.1).contains(&b) => {
                                budget_problem.set(None);
                                request_budget(b);
                            }
                            _ => budget_problem.set(Some(format!(
                                "Budget: a whole number from {} to {}", BUDGET_RANGE.0, BUDGET_RANGE.1
                            ))),
                        }
                    })
                    problem=budget_problem size=6/>
            </div>
            <fieldset id="plan-targets">
                <legend>"Targets"</legend>
                <label for="plan-target-mae">"Score MAE at most (pp) in 95 % of audits"</label>
                <NumberInput id="plan-target-mae" decimal=true size=6
                    shown=Signal::derive(move || settings.with(|s| s.mae.clone()))
                    on_text=Callback::new(move |t: String| settings.update(|s| s.mae = t))
                    problem=Signal::derive(move || settings.with(|s| target(&s.mae, "MAE target").err()))/>
                <label for="plan-target-inv">"Inversions at most (% of model pairs)"</label>
                <NumberInput id="plan-target-inv" decimal=true size=6
                    shown=Signal::derive(move || settings.with(|s| s.inversions.clone()))
                    on_text=Callback::new(move |t: String| settings.update(|s| s.inversions = t))
                    problem=Signal::derive(move || settings.with(|s| target(&s.inversions, "inversion target").err()))/>
                <span>"Pair: "</span>
                <label for="plan-pair-a" class="visually-hidden">"First model of the pair"</label>
                {pair_a}
                <label for="plan-pair-b" class="visually-hidden">"Second model of the pair"</label>
                {pair_b}
                <label for="plan-target-pair">"order right in at least (% of audits)"</label>
                <NumberInput id="plan-target-pair" decimal=true size=6
                    shown=Signal::derive(move || settings.with(|s| s.pair_pct.clone()))
                    on_text=Callback::new(move |t: String| settings.update(|s| s.pair_pct = t))
                    problem=Signal::derive(move || settings.with(|s| target(&s.pair_pct, "pair target").err()))/>
            </fieldset>
            {answers}
            <div id="plan-live" aria-live="polite">{live_table}</div>
            <div id="plan-use" class="plan-use">{use_buttons}</div>
            <p id="plan-timing" class="note">{move || elapsed.get().map(|(ms, how)| format!("Computed {how}: {ms:.0} ms per design ({DEFAULT_DRAWS} draws)."))}</p>
            <div class="plan-curve-metric">
                <label for="plan-curve-metric">"Curve of "</label>
                <select id="plan-curve-metric" on:change=move |ev| curve_metric.set(event_target_value(&ev))>
                    <option value="mae" selected=move || curve_metric.get() == "mae">"score MAE in 95 % of audits (pp)"</option>
                    <option value="inversions" selected=move || curve_metric.get() == "inversions">"inversion rate (% of model pairs)"</option>
                    <option value="pair" selected=move || curve_metric.get() == "pair">"pair order right (% of audits)"</option>
                </select>
            </div>
            <ChartPanel panel="plan-curve-chart" title="Predicted error against the budget, per design" what="Line chart: one line per audit design, the chosen metric at each budget of the grid (responses per model, logarithmic axis); the dashed line is the target." spec=curve_spec/>
            <div id="plan-curve-box">{curve_table}</div>
            <p id="plan-provenance" class="note">{move || format!("Bundle {bundle_id}; seed {DEFAULT_SEED}; {DEFAULT_DRAWS} draws per estimate; repeat policy {}; equal condition weights (Eq. 4). The same numbers as atlas plan-audit --json.", state.policy.get().key())}</p>
        </section>
    }
}
