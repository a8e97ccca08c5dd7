//! The "Run a pilot audit" panel: providers and keys, the design, the estimate and hard cap, the run
//! (progress, pause / resume / cancel), the results table and the bundle the run becomes.
//!
//! Everything about requests, retries, extraction, judging, plans and bundles is `atlas_pilot`'s
//! (`docs/pilot.md`); the run itself is [`crate::pilot::runner`], persistence [`crate::pilot::store`].
//! Keys are typed into password fields, moved into [`crate::pilot::store::Keys`] on change (the field is
//! then emptied and the key shown masked) and never written anywhere else unless the user opts in.
//! Model text is always put in the page as text nodes, never as HTML.

use crate::pilot::fields::{number_field, row_list, text_field, RowButtons};
use crate::pilot::form::{plan_of, rules, settings, FormState, Rows, PARADIGM_FAMILY};
use std::rc::Rc;
use std::sync::Arc;

use crate::ui::glossary::Term;
use crate::ui::table::SortState;
use atlas_core::number::Rule;
use atlas_pilot::{build_plan, to_bundle, BundleInfo, RunState};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::pilot::run_controls::{
    discard, restore, results_table, start, CheckedPlan, Restored, ResultColumn, ResultRow,
    RunSection, SavedRunNotices,
};
use crate::pilot::runner::{
    self as runner, Kind, Outputs, RunRows, RunSetup, Settings, Snapshot, Work,
};
use crate::pilot::store::{self as store, Keys};
use crate::state::AtlasState;

/// The pilot panel.
#[component]
pub fn PilotPanel() -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let keys = Keys::new();
    let form = RwSignal::new(FormState::default());
    let plan_view = RwSignal::new(None::<Result<PlanSummary, String>>);
    let out = Outputs::new();
    let action_error = RwSignal::new(None::<String>);
    let restored = RwSignal::new(None::<String>);
    let bundle_bytes = RwSignal::new(None::<(String, Arc<[u8]>)>);
    // The likelihood step's scores of the current run (task-paradigm pilots only).
    let scored = RwSignal::new(None::<crate::pilot::likelihood_step::Scored>);
    let paradigm = Memo::new(move |_| form.with(|f| f.family == PARADIGM_FAMILY));
    // "Use this design" in the Plan view: its design and budget go into this form's state.
    if let Some(handoff) = use_context::<crate::state::plan::PilotHandoff>() {
        Effect::new(move |_| {
            if let Some((design, budget)) = handoff.0.get() {
                form.update(|f| {
                    f.apply_handoff(&design, &budget);
                });
                handoff.0.set(None);
            }
        });
    }

    // A saved run from an earlier visit: restore it paused, offer to resume.
    spawn_local(async move {
        let read = store::load().await.map(|saved| {
            saved.map(|saved| -> Result<Restored, String> {
                if let Ok(f) = serde_json::from_value::<FormState>(saved.form.clone()) {
                    form.set(f);
                }
                // A task-paradigm run is rebuilt from its saved form (propositions and wordings are
                // in it); any other from its saved design.
                let paradigm =
                    saved.form.get("family").and_then(|v| v.as_str()) == Some(PARADIGM_FAMILY);
                let plan = if paradigm {
                    let f = serde_json::from_value::<FormState>(saved.form.clone())
                        .map_err(|e| e.to_string())?;
                    plan_of(&f, None)?
                } else {
                    build_plan(saved.design.clone()).map_err(|e| e.to_string())?
                };
                let st = RunState::from_json(&saved.state).map_err(|e| e.to_string())?;
                st.check_plan(&plan).map_err(|e| e.to_string())?;
                let unfinished = !st.finished() && !saved.cancelled;
                let p = st.progress().calls;
                let settings = settings(&form.get_untracked()).unwrap_or(Settings {
                    concurrency: 4,
                    timeout_ms: 60_000,
                    max_wait_ms: atlas_pilot::retry::DEFAULT_MAX_WAIT_MS,
                });
                Ok(Restored {
                    notice: unfinished.then(|| {
                        format!(
                            "An unfinished run was found in this browser: {} of {} calls done.",
                            p.done(),
                            p.total
                        )
                    }),
                    cancelled: saved.cancelled,
                    setup: RunSetup {
                        work: Work::Pilot(Rc::new(plan)),
                        state: st,
                        form: saved.form,
                        source: String::new(),
                        settings,
                        keys,
                        out,
                    },
                })
            })
        });
        restore(read, "run", restored, out.store_error);
    });

    let loaded_audit = move || state.loaded.get_untracked();
    let do_plan = move |_| {
        bundle_bytes.set(None);
        let loaded = loaded_audit();
        let f = form.get_untracked();
        let result =
            plan_of(&f, loaded.as_ref().map(|l| &l.audit)).map(|plan| PlanSummary::new(&plan, &f));
        plan_view.set(Some(result));
    };
    let do_run = move |_| {
        action_error.set(None);
        restored.set(None);
        bundle_bytes.set(None);
        // A new run has no likelihood scores yet (the step scores a run, not a form).
        scored.set(None);
        let f = form.get_untracked();
        let loaded = loaded_audit();
        let setup = (|| -> Result<RunSetup, String> {
            let settings = settings(&f)?;
            let plan = plan_of(&f, loaded.as_ref().map(|l| &l.audit))?;
            plan_view.set(Some(Ok(PlanSummary::new(&plan, &f))));
            Ok(RunSetup {
                state: RunState::new(&plan),
                work: Work::Pilot(Rc::new(plan)),
                form: serde_json::to_value(&f).map_err(|e| e.to_string())?,
                source: String::new(),
                settings,
                keys,
                out,
            })
        })();
        match setup {
            Ok(setup) => start(setup, action_error),
            Err(e) => action_error.set(Some(e)),
        }
    };
    let do_discard = Callback::new(move |()| {
        bundle_bytes.set(None);
        scored.set(None);
        discard(Kind::Pilot, restored, out.store_error, store::clear);
    });
    let make_bundle = move || -> Result<(String, Arc<[u8]>), String> {
        let (st, plan) = runner::state_and_plan().ok_or("no run")?;
        let title = form.with_untracked(|f| f.title.trim().to_string());
        let id = format!(
            "pilot-{}",
            &plan.fingerprint.chars().take(12).collect::<String>()
        );
        let mut info = BundleInfo::new(
            id.clone(),
            if title.is_empty() { id.clone() } else { title },
        );
        info.notes = Some("Made in the browser by Audit Atlas's pilot panel.".into());
        let mut bundle = to_bundle(&st, &plan, &info).map_err(|e| e.to_string())?;
        // A task-paradigm run: its propositions go whole into the statement levels (when the form
        // still plans this run), so the bundle can seed another paradigm pilot.
        let f = form.get_untracked();
        if f.family == PARADIGM_FAMILY {
            if let Ok(d) = crate::pilot::form::paradigm_design(&f) {
                let same = atlas_pilot::paradigm::build_paradigm_plan(&d)
                    .is_ok_and(|p| p.fingerprint == plan.fingerprint);
                if same {
                    atlas_pilot::proposition::annotate_statements(&mut bundle, &d.propositions);
                }
            }
        }
        // Likelihood scores of this very run (a task-paradigm pilot's likelihood step), if any.
        if let Some(s) = scored
            .get_untracked()
            .filter(|s| s.fingerprint == plan.fingerprint)
        {
            atlas_pilot::paradigm::likelihood::attach(
                &mut bundle,
                &s.readouts,
                &format!(
                    "Audit Atlas pilot panel: {}",
                    atlas_pilot::paradigm::likelihood::SCORED_DESCRIPTION
                ),
            );
        }
        let bytes = serde_json::to_vec(&bundle).map_err(|e| e.to_string())?;
        Ok((id, Arc::from(bytes)))
    };
    let do_open = Callback::new(move |()| match make_bundle() {
        Ok((id, bytes)) => match state.open_bytes(format!("pilot: {id}"), None, bytes.clone(), 0.0)
        {
            Ok(_) => bundle_bytes.set(Some((id, bytes))),
            Err(e) => action_error.set(Some(format!("the run's bundle does not open: {e}"))),
        },
        Err(e) => action_error.set(Some(format!("the run could not become a bundle: {e}"))),
    });
    let do_download = Callback::new(move |()| match make_bundle() {
        Ok((id, bytes)) => {
            if let Err(e) = crate::browser::export::download_bytes(
                &bytes,
                "application/json",
                &format!("{id}.json"),
            ) {
                action_error.set(Some(e.to_string()));
            }
        }
        Err(e) => action_error.set(Some(format!("the run could not become a bundle: {e}"))),
    });

    let categories = Memo::new(move |_| {
        state.loaded.with(|l| {
            let mut cats: Vec<String> = l
                .as_ref()
                .map(|l| {
                    l.audit
                        .statements
                        .iter()
                        .filter_map(|s| s.category.clone())
                        .collect()
                })
                .unwrap_or_default();
            cats.sort();
            cats.dedup();
            cats
        })
    });

    view! {
        <section class="pilot" id="pilot" aria-labelledby="pilot-title">
            <h2 id="pilot-title">"Run a pilot audit with your own API keys"</h2>
            <p>
                "Calls go from this tab straight to the provider you name; nothing passes through Audit Atlas. "
                "Keys stay in this tab's memory unless you tick \"remember\". The run is saved in this browser "
                "(IndexedDB) after every call, so a reload resumes it. See "
                <code>"docs/pilot.md"</code>" for the rules."
            </p>
            <SavedRunNotices kind=Kind::Pilot prefix="pilot" resume_label="Resume the unfinished run"
                restored error=action_error store_error=out.store_error on_discard=do_discard/>
            <ProvidersForm form keys/>
            <DesignForm form categories/>
            <div class="pilot-actions">
                <button id="pilot-plan" on:click=do_plan>"Check the plan"</button>
                " "
                <button id="pilot-run" on:click=do_run>"Run the pilot"</button>
            </div>
            <RunSection kind=Kind::Pilot prefix="pilot" plan_view error=action_error restored snapshot=out.snapshot
                table=|s, sort| view! { <RunView snapshot=s sort/> }.into_any()
                open_label="Open as bundle in every view" discard_label="Discard the run"
                on_open=do_open on_download=do_download on_discard=do_discard/>
            {move || paradigm.get().then(|| view! { <crate::pilot::likelihood_step::LikelihoodStep form keys scored/> })}
            <crate::pilot::judge_panel::BundleJudgeSection keys/>
            <crate::pilot::clinical_panel::ClinicalPilotSection keys/>
        </section>
    }
}

/// The estimate of a plan, for display.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanSummary {
    estimate: atlas_pilot::plan::Estimate,
    max_calls: u64,
    currency_note: bool,
}

impl PlanSummary {
    fn new(plan: &atlas_pilot::Plan, _form: &FormState) -> Self {
        PlanSummary {
            estimate: plan.estimate,
            max_calls: plan.design.limits.max_calls,
            currency_note: plan.estimate.unpriced_calls > 0,
        }
    }
}

impl CheckedPlan for PlanSummary {
    fn render(self) -> AnyView {
        let e = self.estimate;
        view! {
            <div class="pilot-estimate" id="pilot-estimate" data-calls=e.calls data-judge-calls=e.judge_calls data-total-calls=e.total_calls>
                <p>
                    {format!(
                        "{} calls ({} audited + {} judge calls at most; hard cap {}). Estimated input tokens: {} (+{} for judges); output tokens at most {} (+{}). Cost at most {:.4} in your prices' currency",
                        e.total_calls, e.calls, e.judge_calls, self.max_calls, e.input_tokens,
                        e.judge_input_tokens, e.output_tokens_max, e.judge_output_tokens_max, e.cost_max
                    )}
                    {self.currency_note.then(|| format!(" ({} calls have no price and are not counted)", e.unpriced_calls))}
                    "."
                </p>
            </div>
        }
        .into_any()
    }
}

/// Provider rows, keys and the "remember" opt-in.
#[component]
fn ProvidersForm(form: RwSignal<FormState>, keys: Keys) -> impl IntoView {
    view! {
        <fieldset class="pilot-providers">
            <legend>"Models and keys"</legend>
            {row_list(Rows::Models(form), keys, RowButtons {
                add_id: "pilot-add-model", add_label: "Add a model",
                remove_id: Some("pilot-remove-model"), remove_label: "Remove the last model",
                max: None, min: 1,
            })}
            <h4>"Judges (0 to 3): code each "<Term id="rationale">"Rationale"</Term>" "<Term id="judge-codes">"E, QE, N, D or R"</Term></h4>
            {row_list(Rows::Judges(form), keys, RowButtons {
                add_id: "pilot-add-judge", add_label: "Add a judge",
                remove_id: None, remove_label: "Remove the last judge",
                max: Some(atlas_pilot::judge::MAX_JUDGES), min: 0,
            })}
            <p class="keys-note">
                <label>
                    <input type="checkbox" id="pilot-remember"
                        prop:checked=move || keys.remember.get()
                        on:change=move |ev| keys.set_remember(event_target_checked(&ev))/>
                    " Remember keys in this browser"
                </label>
                {move || keys.remember.get().then(|| view! {
                    <span class="warning" role="note">
                        " Warning: remembered keys are stored unencrypted in this browser's localStorage, readable by anyone using this browser profile and by any script on this page's origin."
                    </span>
                })}
                " "
                <button id="pilot-forget-keys" on:click=move |_| keys.forget()>"Forget keys"</button>
            </p>
        </fieldset>
    }
}

/// Statements, templates, conditions, parameters, sampling, caps.
#[component]
fn DesignForm(form: RwSignal<FormState>, categories: Memo<Vec<String>>) -> impl IntoView {
    let n_conditions = Memo::new(move |_| form.with(|f| f.conditions.len()));
    // The task-paradigm family replaces statements, templates, conditions and sampling.
    // A memo: the fields below re-render only when the family changes, not on every keystroke.
    let paradigm_memo = Memo::new(move |_| form.with(|f| f.family == PARADIGM_FAMILY));
    let paradigm = move || paradigm_memo.get();
    view! {
        <fieldset class="pilot-design">
            <legend>"Design"</legend>
            <div id="pilot-statements-fields" hidden=paradigm>
            <label>"Statements "
                <select id="pilot-statements-source" prop:value=move || form.with(|f| f.statements_source.clone())
                    on:change=move |ev| { let v = event_target_value(&ev); form.update(|f| f.statements_source = v); }>
                    <option value="bundle">"from the loaded bundle"</option>
                    <option value="pasted">"pasted below"</option>
                </select>
            </label>" "
            <label>"category "
                <select id="pilot-category" prop:value=move || form.with(|f| f.category.clone())
                    on:change=move |ev| { let v = event_target_value(&ev); form.update(|f| f.category = v); }>
                    <option value="">"all"</option>
                    {move || categories.get().into_iter().map(|c| view! { <option value=c.clone()>{c.clone()}</option> }).collect_view()}
                </select>
            </label>" "
            {number_field(form, "pilot-per-category", "sample per category (empty = all)", Rule::Whole(rules::PER_CATEGORY), (|f| f.per_category.clone(), |f, v| f.per_category = v))}
            <label class="block">"Pasted statements (one per line; \"category<TAB>statement\" sets a category)"
                <textarea id="pilot-pasted" rows="3" cols="80" prop:value=move || form.with(|f| f.pasted.clone())
                    on:input=move |ev| { let v = event_target_value(&ev); form.update(|f| f.pasted = v); }></textarea>
            </label>
            </div>
            <label>"Prompt family "
                <select id="pilot-family" prop:value=move || form.with(|f| f.family.clone())
                    on:change=move |ev| { let v = event_target_value(&ev); form.update(|f| f.family = v); }>
                    <option value="table7">"the five agreement wordings of the BiAxisBias paper's Table 7 (Selection: / Rationale: contract)"</option>
                    <option value="bundle">"the loaded bundle's templates"</option>
                    <option value="custom">"my templates (below)"</option>
                    <option value="paradigm">"task paradigms: each proposition as CLEAR-, BBQ-, StereoSet- and CrowS-style questions (the BiAxisBias paper's Table 10)"</option>
                </select>
            </label>
            {move || paradigm().then(|| view! { <crate::pilot::paradigm_form::ParadigmFields form/> })}
            <div id="pilot-agreement-fields" hidden=paradigm>
            <label class="block">"My templates (each with {statement}; separate templates by a line ---)"
                <textarea id="pilot-custom-templates" rows="6" cols="80" prop:value=move || form.with(|f| f.custom_templates.clone())
                    on:input=move |ev| { let v = event_target_value(&ev); form.update(|f| f.custom_templates = v); }></textarea>
            </label>
            <details>
                <summary>"Conditions: the system prompts (as in the BiAxisBias paper's Table 6), editable"</summary>
                {move || (0..n_conditions.get()).map(|i| {
                    let cid = form.with_untracked(|f| f.conditions.get(i).map(|c| c.id.clone()).unwrap_or_default());
                    let label = form.with_untracked(|f| f.conditions.get(i).map(|c| c.label.clone()).unwrap_or_default());
                    view! {
                        <div class="condition-row">
                            <label>
                                <input type="checkbox" id=format!("pilot-cond-{cid}")
                                    prop:checked=move || form.with(|f| f.conditions.get(i).is_some_and(|c| c.on))
                                    on:change=move |ev| { let on = event_target_checked(&ev); form.update(|f| if let Some(c) = f.conditions.get_mut(i) { c.on = on; }); }/>
                                {format!(" {cid} ({label}) ")}
                            </label>
                            <input type="text" size="70" prop:value=move || form.with(|f| f.conditions.get(i).map(|c| c.system_prompt.clone()).unwrap_or_default())
                                on:input=move |ev| { let v = event_target_value(&ev); form.update(|f| if let Some(c) = f.conditions.get_mut(i) { c.system_prompt = v; }); }/>
                        </div>
                    }
                }).collect_view()}
            </details>
            </div>
            <div>
                {number_field(form, "pilot-repeats", "repeats", Rule::Whole(rules::REPEATS), (|f| f.repeats.clone(), |f, v| f.repeats = v))}" "
                {number_field(form, "pilot-temperature", "temperature", Rule::Decimal(rules::TEMPERATURE), (|f| f.temperature.clone(), |f, v| f.temperature = v))}" "
                {number_field(form, "pilot-max-tokens", "max tokens", Rule::Whole(rules::MAX_TOKENS), (|f| f.max_tokens.clone(), |f, v| f.max_tokens = v))}" "
                {number_field(form, "pilot-seed", "seed", Rule::Whole(rules::SEED), (|f| f.seed.clone(), |f, v| f.seed = v))}
            </div>
            <div hidden=paradigm>
                <label>"Sampling design "
                    <select id="pilot-sampling" prop:value=move || form.with(|f| f.sampling.clone())
                        on:change=move |ev| { let v = event_target_value(&ev); form.update(|f| f.sampling = v); }>
                        <option value="stratified">"stratified: every condition, statements by category (broad coverage; default)"</option>
                        <option value="srs">"simple random sample of cells"</option>
                        <option value="concentrated">"concentrated: one condition and one template"</option>
                        <option value="coverage">"coverage: K conditions, one template each"</option>
                        <option value="balanced">"balanced: one statement per category and condition (budget fixed by the design)"</option>
                        <option value="full">"full: every cell"</option>
                    </select>
                </label>" "
                {number_field(form, "pilot-budget", "budget (cells per model)", Rule::Whole(rules::BUDGET), (|f| f.budget.clone(), |f, v| f.budget = v))}" "
                <span id="pilot-coverage-k-field" hidden=move || form.with(|f| f.sampling != "coverage")>
                    {number_field(form, "pilot-coverage-k", "K (conditions covered)", Rule::Whole(rules::COVERAGE_K), (|f| f.coverage_k.clone(), |f, v| f.coverage_k = v))}
                </span>
            </div>
            <div>
                {number_field(form, "pilot-max-calls", "hard cap: calls", Rule::Whole(rules::MAX_CALLS), (|f| f.max_calls.clone(), |f, v| f.max_calls = v))}" "
                {number_field(form, "pilot-max-cost", "cost (empty = none)", Rule::Decimal(rules::MAX_COST), (|f| f.max_cost.clone(), |f, v| f.max_cost = v))}" "
                {number_field(form, "pilot-concurrency", "calls at a time", Rule::Whole(rules::CONCURRENCY), (|f| f.concurrency.clone(), |f, v| f.concurrency = v))}" "
                {number_field(form, "pilot-timeout", "timeout per call (s)", Rule::Decimal(rules::TIMEOUT_S), (|f| f.timeout_s.clone(), |f, v| f.timeout_s = v))}" "
                {text_field(form, "pilot-bundle-title", "bundle title", |f| f.title.clone(), |f, v| f.title = v)}
            </div>
            <div>
                {number_field(form, "pilot-max-wait", "longest server wait (Retry-After, s; longer pauses the run)", Rule::Whole(rules::MAX_WAIT_S), (|f| f.max_wait_s.clone(), |f, v| f.max_wait_s = v))}
            </div>
        </fieldset>
    }
}

/// Progress bar and results table.
#[component]
fn RunView(snapshot: Snapshot, sort: RwSignal<SortState>) -> impl IntoView {
    let eta = snapshot.time_left();
    let c = snapshot.calls;
    let j = snapshot.judge_calls;
    let (rows, majority) = match snapshot.rows {
        RunRows::Pilot { rows, majority } => (rows, majority),
        RunRows::Judging { .. } | RunRows::Clinical { .. } => (Vec::new(), None),
    };
    let judges = !rows.iter().all(|r| r.judges.is_empty());
    let mut columns = vec![
        ResultColumn::text("call", ""),
        ResultColumn::text("model", ""),
        ResultColumn::text("condition", ""),
        ResultColumn::text("template", ""),
        ResultColumn::text("statement", ""),
        ResultColumn::number("repeat"),
        ResultColumn::text("status", ""),
        ResultColumn::number("attempts"),
        ResultColumn::text("Selection", ""),
        ResultColumn::text("obtained", ""),
        ResultColumn::text("rule", ""),
        ResultColumn::text("Rationale / response", "text"),
        ResultColumn::text("reason", "reason"),
    ];
    if judges {
        columns.push(ResultColumn::text("judges", ""));
    }
    let rows: Vec<ResultRow> = rows
        .into_iter()
        .map(|r| {
            let mut cells = vec![
                r.id.clone(),
                r.model,
                r.condition,
                r.template,
                r.statement,
                r.repeat.to_string(),
                r.status.as_str().to_string(),
                r.attempts.to_string(),
                r.selection,
                r.obtained,
                r.rule,
                r.text,
                r.reason,
            ];
            if judges {
                cells.push(r.judges);
            }
            ResultRow {
                id: r.id,
                status: r.status.as_str(),
                cells,
                ..ResultRow::default()
            }
        })
        .collect();
    view! {
        <div class="progress pilot-progress" id="pilot-progress" role="status"
            data-phase=snapshot.phase.key() data-total=c.total data-answered=c.answered data-failed=c.failed
            data-remaining=c.remaining() data-judge-total=j.total data-judge-done=j.done()>
            <progress value=c.done() as f64 max=c.total.max(1) as f64></progress>
            <span>{format!(
                "{}: {} of {} done ({} answered, {} failed), {} remaining ({} in flight, {} waiting to retry); time left {}",
                snapshot.phase.key(), c.done(), c.total, c.answered, c.failed, c.remaining(), c.in_flight, snapshot.waiting, eta
            )}</span>
            {(j.total > 0).then(|| view! { <span>{format!("; judge calls {} of {} done ({} failed)", j.done(), j.total, j.failed)}</span> })}
            {snapshot.problem.map(|p| view! { <p class="error">{p}</p> })}
        </div>
        {majority.map(|m| view! { <p class="pilot-majority" id="pilot-majority" data-coded=m.coded() data-ties=m.ties data-too-few-votes=m.too_few_votes>{format!("Judge panel: {}.", m.describe())}</p> })}
        {results_table("pilot-results", "Pilot responses", "Responses (model text shown as text)", &columns, rows, sort)}
    }
}
