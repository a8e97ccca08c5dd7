//! "Judge a loaded bundle's Rationales", a section of the pilot panel ("Judge coding
//! can also run over an already loaded bundle's Rationales").
//!
//! The user picks one to three judges — the pilot's provider rows (provider, base URL, model, key,
//! prices, rubric) with a new judge column id each; keys are the pilot's [`Keys`] (memory only unless
//! the user opted in, shown masked) — and the scope: every cell with a response and a stored Rationale
//! text, the first N of them, or a seeded sample of N, optionally of some models only. **Check the
//! plan** shows the number of calls, the estimated tokens and cost and refuses a plan over the hard
//! cap; **Judge the Rationales** runs the calls with the pilot's runner ([`crate::pilot::runner`], kind
//! [`Kind::Judging`]): concurrency limit, per-call timeout, retries with backoff honouring
//! `Retry-After`, pause / resume / cancel, a progress bar, every settled call saved in IndexedDB
//! ([`crate::pilot::store::persist_judging`]) so that a reload offers to resume, and a call that
//! finally fails kept with its reason. Texts in shards are fetched first, with the inspector's
//! [`crate::state::shards::fetch_shard`].
//!
//! The result is the judged bundle plus the new judge columns and a paragraph in
//! `metadata.produced_by.notes` ([`atlas_pilot::merge_judge_columns`], the same as `atlas pilot judge`):
//! **Open the bundle with the new columns in every view** makes it the loaded bundle (its text shards
//! still load from where the judged bundle came from), **Download bundle** saves it. Model text is put
//! in the page as text nodes only.

use crate::pilot::form::JudgingForm;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use crate::ui::table::SortState;
use atlas_core::bundle::BundleFile;
use atlas_core::number::Rule;
use atlas_core::TextShard;
use atlas_pilot::bundle_judge::{lookup_text, BundleRef, Planned};
use atlas_pilot::{
    merge_judge_columns, plan_bundle_judging, BundleJudgeDesign, BundleJudgePlan, JudgeScope,
    RunState,
};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::pilot::fields::{form_number_field, row_list, RowButtons};
use crate::pilot::form::FormError;
use crate::pilot::form::{limits_of, rules, run_settings, whole, Rows};
use crate::pilot::run_controls::{
    discard, restore, results_table, start, CheckedPlan, Restored, ResultColumn, ResultRow,
    RunSection, SavedRunNotices,
};
use crate::pilot::runner::{self as runner, Kind, Outputs, RunRows, RunSetup, Snapshot, Work};
use crate::pilot::store::{self as store, Keys};
use crate::state::{AtlasState, Loaded};
use crate::ui::format::thousands;

/// The design of the form.
///
/// # Errors
/// A [`FormError`] naming the field.
pub fn design(form: &JudgingForm) -> Result<BundleJudgeDesign, FormError> {
    let seed: u64 = whole(&form.seed, rules::SEED, "seed")?;
    let judges = form
        .judges
        .iter()
        .map(|row| {
            let column = row.column.trim();
            if column.is_empty() {
                return Err(FormError::unusable(&row.id, "type the new judge column id"));
            }
            row.judge(column.to_string())
        })
        .collect::<Result<Vec<_>, FormError>>()?;
    let scope = match form.scope.as_str() {
        "all" => JudgeScope::All,
        "sample" => JudgeScope::Sample {
            n: whole(&form.n, rules::COUNT, "number of cells")?,
            seed,
        },
        _ => JudgeScope::First {
            n: whole(&form.n, rules::COUNT, "number of cells")?,
        },
    };
    Ok(BundleJudgeDesign {
        judges,
        scope,
        models: form.models.clone(),
        seed,
        limits: limits_of(&form.max_calls, &form.max_cost)?,
    })
}

/// Plans the judge coding of `loaded`, fetching the text shards it needs first (`status` tells which).
///
/// # Errors
/// The plan's refusal, or a shard that cannot be loaded.
pub async fn plan_for(
    loaded: Arc<Loaded>,
    design: BundleJudgeDesign,
    status: RwSignal<Option<String>>,
) -> Result<BundleJudgePlan, String> {
    let mut shards: BTreeMap<usize, TextShard> = BTreeMap::new();
    loop {
        let planned = plan_bundle_judging(&loaded.audit, design.clone(), |c| {
            lookup_text(&loaded.audit, &shards, c)
        })
        .map_err(|e| e.to_string())?;
        match planned {
            Planned::Ready(plan) => {
                status.set(None);
                return Ok(*plan);
            }
            Planned::NeedShards(ks) => {
                for (n, k) in ks.iter().enumerate() {
                    if shards.contains_key(k) {
                        return Err(format!("text shard {k} was loaded but is asked for again"));
                    }
                    status.set(Some(format!(
                        "Loading the Rationale texts: shard {} of {}…",
                        n + 1,
                        ks.len()
                    )));
                    let shard = crate::state::shards::fetch_shard(&loaded, *k)
                        .await
                        .map_err(|e| {
                            status.set(None);
                            format!("a text shard could not be loaded: {e}")
                        })?;
                    shards.insert(*k, shard);
                }
            }
        }
    }
}

/// What the estimate shows.
#[derive(Debug, Clone, PartialEq)]
struct Summary {
    bundle: String,
    described: String,
    cells: usize,
    candidates: u64,
    judges: usize,
    estimate: atlas_pilot::plan::Estimate,
    max_calls: u64,
    self_judges: Vec<String>,
}

impl Summary {
    fn new(plan: &BundleJudgePlan) -> Self {
        let self_judges = plan
            .design
            .judges
            .iter()
            .enumerate()
            .filter_map(|(j, judge)| {
                let n = plan.self_judge_calls(j);
                (n > 0).then(|| {
                    format!(
                        "Judge {} ({}) is the model that produced {n} of the responses it judges: those are marked as self-judged (RQ3's no-self-judge rule leaves this judge out for them).",
                        judge.id,
                        judge.provider.model()
                    )
                })
            })
            .collect();
        Summary {
            bundle: plan.bundle.id.clone(),
            described: plan.describe_cells(),
            cells: plan.items.len(),
            candidates: plan.candidates,
            judges: plan.design.judges.len(),
            estimate: plan.estimate,
            max_calls: plan.design.limits.max_calls,
            self_judges,
        }
    }
}

impl CheckedPlan for Summary {
    fn render(self) -> AnyView {
        let e = self.estimate;
        view! {
            <div class="pilot-estimate" id="bundle-judge-estimate" data-calls=e.total_calls data-cells=self.cells data-candidates=self.candidates>
                <p>
                    {format!(
                        "{} judge calls ({} of bundle {} × {} judge{}; hard cap {}). Estimated input tokens: {}; output tokens at most {}. Cost at most {:.4} in your prices' currency",
                        e.total_calls, self.described, self.bundle, self.judges, if self.judges == 1 { "" } else { "s" },
                        self.max_calls,
                        e.judge_input_tokens, e.judge_output_tokens_max, e.cost_max
                    )}
                    {(e.unpriced_calls > 0).then(|| format!(" ({} calls have no price and are not counted)", e.unpriced_calls))}
                    "."
                </p>
                {self.self_judges.into_iter().map(|l| view! { <p class="self-judge">{l}</p> }).collect_view()}
            </div>
        }
        .into_any()
    }
}

/// The section.
#[component]
pub fn BundleJudgeSection(keys: Keys) -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let form = RwSignal::new(JudgingForm::default());
    let out = Outputs::new();
    let plan_view = RwSignal::new(None::<Result<Summary, String>>);
    let status = RwSignal::new(None::<String>);
    let action_error = RwSignal::new(None::<String>);
    let restored = RwSignal::new(None::<String>);
    let opened = RwSignal::new(None::<String>);
    // The bundle that was judged, while this tab has it (after "Open", the loaded bundle is the result).
    let judged = StoredValue::new(None::<Arc<Loaded>>);
    let source = StoredValue::new(String::new());

    // A saved judge coding from an earlier visit: restore it paused, offer to resume.
    spawn_local(async move {
        let read = store::load_judging().await.map(|saved| {
            saved.map(|(saved, plan)| -> Result<Restored, String> {
                if let Ok(f) = serde_json::from_value::<JudgingForm>(saved.form.clone()) {
                    form.set(f);
                }
                let st = RunState::from_json(&saved.state).map_err(|e| e.to_string())?;
                atlas_pilot::Job::check_state(&plan, &st).map_err(|e| e.to_string())?;
                let p = st.progress().calls;
                let unfinished = !st.finished() && !saved.cancelled;
                let f = form.get_untracked();
                let settings = run_settings(&f.concurrency, &f.timeout_s)
                    .and_then(|s| crate::pilot::form::with_max_wait(s, &f.max_wait_s))
                    .unwrap_or(runner::Settings {
                        concurrency: 4,
                        timeout_ms: 60_000,
                        max_wait_ms: atlas_pilot::retry::DEFAULT_MAX_WAIT_MS,
                    });
                let bundle = plan.bundle.id.clone();
                source.set_value(saved.source.clone());
                Ok(Restored {
                    notice: unfinished.then(|| {
                        format!(
                            "An unfinished judge coding of bundle {bundle} ({}) was found in this browser: {} of {} calls done.",
                            saved.source,
                            p.done(),
                            p.total
                        )
                    }),
                    cancelled: saved.cancelled,
                    setup: RunSetup {
                        work: Work::Judging(Rc::new(plan)),
                        state: st,
                        form: saved.form,
                        source: saved.source,
                        settings,
                        keys,
                        out,
                    },
                })
            })
        });
        restore(read, "judge coding", restored, out.store_error);
    });

    let loaded_now = move || state.loaded.get_untracked();
    let do_plan = move |_| {
        plan_view.set(None);
        let Some(loaded) = loaded_now() else {
            plan_view.set(Some(Err("load a bundle with Rationale texts first".into())));
            return;
        };
        let d = match design(&form.get_untracked()) {
            Ok(d) => d,
            Err(e) => {
                plan_view.set(Some(Err(e.to_string())));
                return;
            }
        };
        spawn_local(async move {
            let result = plan_for(loaded, d, status).await.map(|p| Summary::new(&p));
            plan_view.set(Some(result));
        });
    };
    let do_run = move |_| {
        action_error.set(None);
        restored.set(None);
        opened.set(None);
        let Some(loaded) = loaded_now() else {
            action_error.set(Some("load a bundle with Rationale texts first".into()));
            return;
        };
        let f = form.get_untracked();
        let prepared = (|| -> Result<_, String> {
            let s = run_settings(&f.concurrency, &f.timeout_s)?;
            Ok((
                crate::pilot::form::with_max_wait(s, &f.max_wait_s)?,
                design(&f)?,
                serde_json::to_value(&f).map_err(|e| e.to_string())?,
            ))
        })();
        let (settings, d, form_json) = match prepared {
            Ok(x) => x,
            Err(e) => {
                action_error.set(Some(e));
                return;
            }
        };
        spawn_local(async move {
            match plan_for(loaded.clone(), d, status).await {
                Ok(plan) => {
                    plan_view.set(Some(Ok(Summary::new(&plan))));
                    judged.set_value(Some(loaded.clone()));
                    source.set_value(loaded.source.clone());
                    let setup = RunSetup {
                        state: plan.new_state(),
                        work: Work::Judging(Rc::new(plan)),
                        form: form_json,
                        source: loaded.source.clone(),
                        settings,
                        keys,
                        out,
                    };
                    start(setup, action_error);
                }
                Err(e) => action_error.set(Some(e)),
            }
        });
    };
    let do_discard = Callback::new(move |()| {
        opened.set(None);
        judged.set_value(None);
        discard(
            Kind::Judging,
            restored,
            out.store_error,
            store::clear_judging,
        );
    });
    // The judged bundle plus the new columns: from the bundle judged in this tab, else the loaded one
    // when it is the judged bundle (after a reload).
    let make_result = move || -> Result<(Arc<Loaded>, BundleFile), String> {
        let (st, plan) = runner::judging_state().ok_or("no judge coding in this tab")?;
        let base = [judged.get_value(), loaded_now()]
            .into_iter()
            .flatten()
            .find(|l| BundleRef::of(&l.audit) == plan.bundle)
            .ok_or_else(|| {
                format!(
                    "open the bundle that was judged first: {} ({} cells, from {}); the labels go into that bundle only",
                    plan.bundle.id,
                    thousands(plan.bundle.cells as usize),
                    source.get_value()
                )
            })?;
        let text = std::str::from_utf8(&base.data)
            .map_err(|e| format!("the judged bundle is not UTF-8: {e}"))?
            .trim_start_matches('\u{feff}');
        let file: BundleFile = serde_json::from_str(text)
            .map_err(|e| format!("the judged bundle could not be read again: {e}"))?;
        let merged = merge_judge_columns(
            file,
            &plan,
            &st,
            Some("Judge columns added in the browser by Audit Atlas's pilot panel (judge a loaded bundle's Rationales)."),
        )
        .map_err(|e| e.to_string())?;
        Ok((base, merged))
    };
    let do_open = Callback::new(move |()| {
        action_error.set(None);
        let result = make_result().and_then(|(base, merged)| {
            let bytes = serde_json::to_vec(&merged).map_err(|e| e.to_string())?;
            let source = format!("judged: {}", base.source);
            let loaded = state
                .open_bytes(source, base.base_url.clone(), Arc::from(bytes), 0.0)
                .map_err(|e| format!("the bundle with the new columns does not open: {e}"))?;
            judged.set_value(Some(base));
            Ok(loaded)
        });
        match result {
            Ok(loaded) => {
                let n = loaded.audit.file.responses.judges.len();
                opened.set(Some(format!(
                    "Opened bundle {} with {n} judge columns in every view above.",
                    loaded.audit.metadata().id
                )));
            }
            Err(e) => action_error.set(Some(e)),
        }
    });
    let do_download = Callback::new(move |()| {
        action_error.set(None);
        let result = make_result().and_then(|(_, merged)| {
            let bytes = serde_json::to_vec(&merged).map_err(|e| e.to_string())?;
            crate::browser::export::download_bytes(
                &bytes,
                "application/json",
                &format!("{}-judged.json", merged.metadata.id),
            )
            .map_err(|e| e.to_string())
        });
        if let Err(e) = result {
            action_error.set(Some(e));
        }
    });

    let models = Memo::new(move |_| {
        state.loaded.with(|l| {
            l.as_ref()
                .map(|l| {
                    l.audit
                        .model_ids()
                        .into_iter()
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
    });
    let about = move || {
        state.loaded.with(|l| match l {
            None => "No bundle is loaded.".to_string(),
            Some(l) => {
                let n = crate::state::shards::texts_in_bundle(&l.audit);
                let judges: Vec<&str> = l
                    .audit
                    .file
                    .responses
                    .judges
                    .iter()
                    .map(|j| j.id.as_str())
                    .collect();
                format!(
                    "Loaded bundle {}: {} Rationale texts stored{}; judge columns now: {}.",
                    l.audit.metadata().id,
                    thousands(n),
                    if n == 0 { " — nothing to judge" } else { "" },
                    if judges.is_empty() {
                        "none".to_string()
                    } else {
                        judges.join(", ")
                    }
                )
            }
        })
    };

    view! {
        <section class="bundle-judge" id="bundle-judge" aria-labelledby="bundle-judge-title">
            <h3 id="bundle-judge-title">"Judge a loaded bundle's Rationales"</h3>
            <p>
                "One to three judges code the Rationale texts stored in the loaded bundle E, QE, N, D or R (endorses, endorses with qualifications, neutral, denies, refuses: the BiAxisBias paper §3.3, §B.3); "
                "their labels become new judge columns of that bundle, which then opens in every view (RQ3, the atlas panels g and h, the inspector) "
                "or downloads as a file. Keys work as above: memory only unless you opted in. Same cells, prompts and columns as "
                <code>"atlas pilot judge"</code>"."
            </p>
            <p class="hint" id="bundle-judge-about">{about}</p>
            <SavedRunNotices kind=Kind::Judging prefix="bundle-judge" resume_label="Resume the unfinished judge coding"
                restored error=action_error store_error=out.store_error on_discard=do_discard/>
            <fieldset class="pilot-providers">
                <legend>"Judges (1 to 3)"</legend>
                {row_list(Rows::BundleJudges(form), keys, RowButtons {
                    add_id: "bundle-judge-add", add_label: "Add a judge",
                    remove_id: Some("bundle-judge-remove"), remove_label: "Remove the last judge",
                    max: Some(atlas_pilot::judge::MAX_JUDGES), min: 1,
                })}
            </fieldset>
            <fieldset class="pilot-design">
                <legend>"Which cells"</legend>
                <label>"Scope "
                    <select id="bundle-judge-scope" prop:value=move || form.with(|f| f.scope.clone())
                        on:change=move |ev| { let v = event_target_value(&ev); form.update(|f| f.scope = v); }>
                        <option value="first">"the first N cells with a Rationale text"</option>
                        <option value="sample">"a random sample of N cells with a Rationale text (fixed by the random seed)"</option>
                        <option value="all">"all cells with a Rationale text"</option>
                    </select>
                </label>" "
                {form_number_field(form, "bundle-judge-n", "N", Rule::Whole(rules::COUNT), (|f| f.n.clone(), |f, v| f.n = v))}" "
                {form_number_field(form, "bundle-judge-seed", "seed", Rule::Whole(rules::SEED), (|f| f.seed.clone(), |f, v| f.seed = v))}
                <div>
                    "Models (none ticked = every model): "
                    {move || models.get().into_iter().enumerate().map(|(i, m)| {
                        let id = m.clone();
                        let id_for_change = m.clone();
                        view! {
                            <label class="model-option">
                                <input type="checkbox" id=format!("bundle-judge-model-{i}")
                                    prop:checked=move || form.with(|f| f.models.contains(&id))
                                    on:change=move |ev| {
                                        let on = event_target_checked(&ev);
                                        let m = id_for_change.clone();
                                        form.update(|f| {
                                            f.models.retain(|x| x != &m);
                                            if on { f.models.push(m); }
                                        });
                                    }/>
                                {format!(" {m} ")}
                            </label>
                        }
                    }).collect_view()}
                </div>
                <div>
                    {form_number_field(form, "bundle-judge-max-calls", "hard cap: calls", Rule::Whole(rules::MAX_CALLS), (|f| f.max_calls.clone(), |f, v| f.max_calls = v))}" "
                    {form_number_field(form, "bundle-judge-max-cost", "cost (empty = none)", Rule::Decimal(rules::MAX_COST), (|f| f.max_cost.clone(), |f, v| f.max_cost = v))}" "
                    {form_number_field(form, "bundle-judge-concurrency", "calls at a time", Rule::Whole(rules::CONCURRENCY), (|f| f.concurrency.clone(), |f, v| f.concurrency = v))}" "
                    {form_number_field(form, "bundle-judge-timeout", "timeout per call (s)", Rule::Decimal(rules::TIMEOUT_S), (|f| f.timeout_s.clone(), |f, v| f.timeout_s = v))}
                </div>
                <div>
                    {form_number_field(form, "bundle-judge-max-wait", "longest server wait (Retry-After, s; longer pauses the run)", Rule::Whole(rules::MAX_WAIT_S), (|f| f.max_wait_s.clone(), |f, v| f.max_wait_s = v))}
                </div>
            </fieldset>
            <div class="pilot-actions">
                <button id="bundle-judge-plan" on:click=do_plan>"Check the plan"</button>
                " "
                <button id="bundle-judge-run" on:click=do_run>"Judge the Rationales"</button>
            </div>
            {move || status.get().map(|m| view! { <p class="progress" role="status" id="bundle-judge-status">{m}</p> })}
            <RunSection kind=Kind::Judging prefix="bundle-judge" plan_view error=action_error restored snapshot=out.snapshot
                table=|s, sort| view! { <JudgingRunView snapshot=s sort/> }.into_any()
                open_label="Open the bundle with the new columns in every view" discard_label="Discard the judge coding"
                on_open=do_open on_download=do_download on_discard=do_discard/>
            {move || opened.get().map(|m| view! { <p class="notice" role="status" id="bundle-judge-opened">{m}</p> })}
        </section>
    }
}

/// The columns of the judge calls' table (the e2e read `td.text`, `td.answer`, `td.reason`).
const JUDGE_COLUMNS: [ResultColumn; 11] = [
    ResultColumn::text("call", ""),
    ResultColumn::number("cell"),
    ResultColumn::text("model", ""),
    ResultColumn::text("judge", ""),
    ResultColumn::text("self-judge", ""),
    ResultColumn::text("status", ""),
    ResultColumn::number("attempts"),
    ResultColumn::text("label", ""),
    ResultColumn::text("Rationale", "text"),
    ResultColumn::text("judge's answer", "answer"),
    ResultColumn::text("reason", "reason"),
];

/// Progress bar and the judge calls' table (model text as text).
#[component]
fn JudgingRunView(snapshot: Snapshot, sort: RwSignal<SortState>) -> impl IntoView {
    let eta = snapshot.time_left();
    let (rows, majority) = match snapshot.rows {
        RunRows::Judging { rows, majority } => (rows, Some(majority)),
        RunRows::Pilot { .. } | RunRows::Clinical { .. } => (Vec::new(), None),
    };
    let c = snapshot.calls;
    let rows: Vec<ResultRow> = rows
        .into_iter()
        .map(|r| ResultRow {
            id: r.id.clone(),
            status: r.status.as_str(),
            label: Some(r.label.clone()),
            kind: None,
            cells: vec![
                r.id,
                r.cell.to_string(),
                r.model,
                r.judge,
                if r.self_judge { "yes" } else { "" }.to_string(),
                r.status.as_str().to_string(),
                r.attempts.to_string(),
                r.label,
                r.text,
                r.answer,
                r.reason,
            ],
        })
        .collect();
    view! {
        <div class="progress pilot-progress" id="bundle-judge-progress" role="status"
            data-phase=snapshot.phase.key() data-total=c.total data-answered=c.answered data-failed=c.failed
            data-remaining=c.remaining()>
            <progress value=c.done() as f64 max=c.total.max(1) as f64></progress>
            <span>{format!(
                "{}: {} of {} judge calls done ({} answered, {} failed), {} remaining ({} in flight, {} waiting to retry); time left {}",
                snapshot.phase.key(), c.done(), c.total, c.answered, c.failed, c.remaining(), c.in_flight, snapshot.waiting, eta
            )}</span>
            {snapshot.problem.map(|p| view! { <p class="error">{p}</p> })}
        </div>
        {majority.map(|m| view! { <p class="pilot-majority" id="bundle-judge-majority" data-coded=m.coded() data-ties=m.ties data-too-few-votes=m.too_few_votes>{format!("New judges' panel: {}.", m.describe())}</p> })}
        {results_table("bundle-judge-results", "Judge calls", "Judge calls (model text shown as text)", &JUDGE_COLUMNS, rows, sort)}
    }
}
