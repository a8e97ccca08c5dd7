//! The Plan view (issue 17 §2): how large must an audit be, and spread how? The loaded bundle is the
//! finite reference ([`atlas_core::plan`], seed `000_…` §3.5, §5.3). The reader chooses designs,
//! the models, a budget per model (a slider and a typed field, 20 to 2,000) and targets; as the
//! slider moves, each design's predicted score MAE (mean, 95 % range, 95th percentile), RMSE, τ-b,
//! inversion rate and the chosen pair's probability are shown ([`Planner::estimate`], 2,000 draws,
//! seed 20260722 — the numbers of `atlas plan-audit --budget B --json`), with the curve over the
//! default budget grid and the smallest budget per design meeting the targets ([`Planner::plan`],
//! `atlas plan-audit --json`).
//!
//! Where it runs: on the page's main thread, from one [`Planner`] built per repeat policy. Slider
//! events are coalesced: a move only records the latest budget, and one timer tick computes that
//! budget (never a queue of stale ones). The settings live in the URL ([`PlanUrl`], written by the
//! loaded bundle's URL writer).

use std::sync::Arc;

use atlas_core::plan::{
    design_name, parse_design, EstimateOptions, PlanOptions, PlanReport, Planner, Targets,
    DEFAULT_BUDGETS, DEFAULT_DRAWS, FINITE_REFERENCE_NOTE,
};
use atlas_core::rq2::{Design, DEFAULT_SEED};
use atlas_core::tables::{Cell, Table};
use atlas_core::RepeatPolicy;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::state::nav::Navigator;
use crate::state::plan::PilotHandoff;
use crate::state::url::{AppView, CurrentView, PlanQuery, PlanUrl};
use crate::state::{AtlasState, Loaded};
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

/// The benchmark hook of `bench/plan_browser.mjs` (issue 17 Benchmark): `window.atlasPlanEstimate(design,
/// budget, draws)` runs one [`Planner::estimate`] on this page's planner (every model, seed 20260722,
/// the current repeat policy) and returns the [`atlas_core::plan::Estimate`] as JSON (the document
/// `atlas plan-audit --json` has under `designs[].estimates[]`), or `{"error": …}`. The caller times it.
fn install_bench_hook(planner: Memo<PlannerFor>) {
    let hook = wasm_bindgen::closure::Closure::<dyn Fn(String, u32, u32) -> String>::new(
        move |design: String, budget: u32, draws: u32| {
            let run = || -> Result<String, String> {
                let design = parse_design(&design)?;
                let PlannerFor(_, planner) = planner.get_untracked();
                let planner = planner?;
                let e = planner
                    .estimate(
                        design,
                        budget as usize,
                        &EstimateOptions {
                            draws: draws as usize,
                            ..EstimateOptions::default()
                        },
                    )
                    .map_err(|e| e.to_string())?;
                serde_json::to_string(&e).map_err(|e| e.to_string())
            };
            run().unwrap_or_else(|e| serde_json::json!({ "error": e }).to_string())
        },
    );
    if let Some(w) = web_sys::window() {
        let _ = js_sys::Reflect::set(&w, &"atlasPlanEstimate".into(), hook.as_ref());
    }
    // The page lives as long as the hook.
    hook.forget();
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

    install_bench_hook(planner);

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

    // Live estimates at the chosen budget: one per design.
    let elapsed = RwSignal::new(None::<f64>);
    let live = Memo::new(move |_| {
        if !active.get() {
            return Err(String::new());
        }
        let s = settings.get();
        let PlannerFor(policy, planner) = planner.get();
        let planner = planner?;
        let chosen = s.chosen();
        if chosen.is_empty() {
            return Err("Choose at least one model.".to_string());
        }
        let options = EstimateOptions {
            draws: DEFAULT_DRAWS,
            seed: DEFAULT_SEED,
            models: Some(chosen),
            pair: s.pair(),
            ..EstimateOptions::default()
        };
        let t0 = now_ms();
        let out: Vec<(Design, Result<atlas_core::plan::Estimate, String>)> = s
            .designs
            .iter()
            .map(|&d| {
                (
                    d,
                    planner
                        .estimate(d, s.budget, &options)
                        .map_err(|e| e.to_string()),
                )
            })
            .collect();
        let ms = now_ms() - t0;
        elapsed.set(Some(ms / s.designs.len().max(1) as f64));
        Ok((policy, s.budget, out))
    });

    // The curve and the answers over the default grid (recomputed when designs, models, pair or
    // targets change, not when the budget moves).
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
    let ids_for_plan = model_ids.clone();
    let report = Memo::new(move |_| -> Result<PlanReport, String> {
        if !active.get() {
            return Err(String::new());
        }
        let (designs, models, pair, mae, inv, pair_pct) = plan_inputs.get();
        let PlannerFor(policy, planner) = planner.get();
        let planner = planner?;
        let targets = Targets {
            mae_pp: target(&mae, "MAE target")?,
            inversion_pct: target(&inv, "inversion target")?,
            pair_pct: if pair.is_some() {
                target(&pair_pct, "pair target")?
            } else {
                None
            },
        };
        let chosen: Vec<String> = ids_for_plan
            .iter()
            .zip(&models)
            .filter(|(_, &on)| on)
            .map(|(m, _)| m.clone())
            .collect();
        let options = PlanOptions {
            designs,
            budgets: DEFAULT_BUDGETS.to_vec(),
            models: Some(chosen),
            policy,
            pair: pair.map(|(a, b)| (ids_for_plan[a].clone(), ids_for_plan[b].clone())),
            targets,
            ..PlanOptions::default()
        };
        planner.plan(&options).map_err(|e| e.to_string())
    });

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
        Ok((policy, budget, rows)) => {
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
                    "Bundle {bundle}; repeat policy {policy}; equal condition weights (Eq. 4); seed {DEFAULT_SEED}; {DEFAULT_DRAWS} simulated audits (draws) per design; ranges are the 2.5–97.5 percentiles of the draw-level MAE.",
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
                match d {
                    Design::Concentrated | Design::Srs | Design::Stratified => {
                        let id = format!("plan-use-{name}");
                        let budget = s.budget;
                        let go = move |_| {
                            if let Some(h) = handoff {
                                h.0.set(Some((name.clone(), budget.to_string())));
                            }
                            if let Some(n) = nav {
                                n.go(AppView::Pilot, true);
                            }
                        };
                        view! { <button type="button" id=id on:click=go>{format!("Use {} at {budget} responses per model in the pilot", design_name(d))}</button> }.into_any()
                    }
                    _ => view! { <span class="note">{format!("The pilot form has no {name} design.")}</span> }.into_any(),
                }
            })
            .collect_view()
    };
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
            <p id="plan-timing" class="note">{move || elapsed.get().map(|ms| format!("Computed in this page: {ms:.0} ms per design ({DEFAULT_DRAWS} draws)."))}</p>
            <div id="plan-curve-box">{curve_table}</div>
            <p id="plan-provenance" class="note">{move || format!("Bundle {bundle_id}; seed {DEFAULT_SEED}; {DEFAULT_DRAWS} draws per estimate; repeat policy {}; equal condition weights (Eq. 4). The same numbers as atlas plan-audit --json.", state.policy.get().key())}</p>
        </section>
    }
}
