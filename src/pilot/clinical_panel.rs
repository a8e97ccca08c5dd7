//! "Run a clinical pilot (seed 001)", a section of the pilot panel: the clinical
//! protocol of `atlas_pilot::clinical` — the same plan, prompts, prefixes, lenient parsers, CFV
//! outcome rules and bundle as `atlas pilot clinical` — sent from this tab.
//!
//! The user names one to three audited models and, optionally, a separate judge (else each model
//! judges its own counterfactuals and explanations, and the bundle says so), with the pilot's provider
//! rows and [`Keys`] (memory only unless the user opted in, masked); picks MedQA questions (the 20
//! MIT-licensed questions of the shipped clinical demo, or a MedQA JSON Lines file from this computer,
//! drawn with a seed); and sets temperatures, token limits, concurrency and the per-call timeout.
//! **Check the plan** shows the number of calls (16 per model × question) and the most output
//! tokens; **Run the clinical pilot** sends them with the pilot's runner ([`crate::pilot::runner`],
//! kind [`Kind::Clinical`]): a call starts only when the answers it depends on are in, a call whose
//! dependency failed or is unusable is skipped with its reason, every settled call is saved in
//! IndexedDB ([`crate::pilot::store::persist_clinical`]) and a reload offers to resume.
//!
//! The run becomes a clinical bundle ([`atlas_pilot::clinical::to_clinical_bundle`]) that opens in
//! the Clinical view or downloads. **Explanation embeddings are not computed in the browser** (the
//! all-MiniLM-L6-v2 forward pass runs natively, in `atlas-embed`): the bundle has none, so its EDD
//! shows as not available until `atlas clinical embed` adds them to the downloaded file. Model text is
//! put in the page as text nodes only.

use crate::pilot::form::{ClinicalForm, MAX_MODELS};
use std::rc::Rc;
use std::sync::Arc;

use crate::ui::table::SortState;
use atlas_core::number::Rule;
use atlas_pilot::clinical::{
    build_clinical_plan, check_clinical_limits, clinical_bundle_info, clinical_estimate,
    model_level_id, read_medqa, select_items, to_clinical_bundle, ClinicalDesign, ClinicalModel,
    ClinicalPlan, ItemSelection, MedQaItem,
};
use atlas_pilot::plan::{Estimate, Limits};
use atlas_pilot::{Params, RunState};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::pilot::fields::{form_number_field, provider_row, row_list, RowButtons};
use crate::pilot::form::FormError;
use crate::pilot::form::{decimal, limits_of, rules, run_settings, whole, Rows};
use crate::pilot::run_controls::{
    discard, restore, results_table, start, CheckedPlan, Restored, ResultColumn, ResultRow,
    RunSection, SavedRunNotices,
};
use crate::pilot::runner::{
    self as runner, Kind, Outputs, RunRows, RunSetup, Settings, Snapshot, Work,
};
use crate::pilot::store::{self as store, Keys};
use crate::state::AtlasState;

/// The plan of the shipped clinical demo, whose design holds its 20 MedQA questions (MIT License;
/// `static/bundles/clinical-demo-smollm2/ATTRIBUTION.md`).
pub const DEMO_PLAN: &str = "static/bundles/clinical-demo-smollm2/state/plan.json";

/// Questions to draw from, with where they came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemPool {
    /// The questions, in source order.
    pub items: Vec<MedQaItem>,
    /// The source file's name.
    pub source: String,
    /// Questions in the source file (for the demo, its selection's).
    pub available: usize,
    /// Each item's 0-based index in the source file (for the demo, from its selection).
    pub indices: Vec<usize>,
}

impl ItemPool {
    /// The questions of the shipped demo's plan (`plan.json`).
    ///
    /// # Errors
    /// A plan that does not parse, or has no questions.
    pub fn from_demo_plan(text: &str) -> Result<Self, String> {
        let plan = ClinicalPlan::from_json(text)
            .map_err(|e| format!("the demo's plan could not be read: {e}"))?;
        let items = plan.design.items;
        if items.is_empty() {
            return Err("the demo's plan has no questions".into());
        }
        let (source, available, indices) = match plan.design.selection {
            Some(s) if s.indices.len() == items.len() => (s.source, s.available, s.indices),
            _ => (
                "clinical demo".into(),
                items.len(),
                (0..items.len()).collect(),
            ),
        };
        Ok(ItemPool {
            items,
            source,
            available,
            indices,
        })
    }

    /// The questions of a MedQA JSON Lines file.
    ///
    /// # Errors
    /// The first unreadable line, with its number and field.
    pub fn from_medqa(text: &str, source: &str) -> Result<Self, String> {
        let items = read_medqa(text, source).map_err(|e| format!("{source}: {e}"))?;
        let n = items.len();
        Ok(ItemPool {
            items,
            source: source.to_string(),
            available: n,
            indices: (0..n).collect(),
        })
    }
}

/// The design of the form over `pool`: the demo's questions in their order (the first N), or N drawn
/// from a file with the seed ([`select_items`]).
///
/// # Errors
/// A [`FormError`] naming the field.
pub fn design(form: &ClinicalForm, pool: &ItemPool) -> Result<ClinicalDesign, FormError> {
    let seed: u64 = whole(&form.seed, rules::SEED, "seed")?;
    let n: usize = whole(&form.n, rules::COUNT, "number of questions")?;
    let picked: Vec<usize> = if form.items_source == "demo" {
        if n > pool.items.len() {
            return Err(FormError::unusable(
                "number of questions",
                format!("the demo has {} questions", pool.items.len()),
            ));
        }
        (0..n).collect()
    } else {
        select_items(pool.items.len(), n, seed).map_err(|e| FormError::Design(e.to_string()))?
    };
    let items: Vec<MedQaItem> = picked
        .iter()
        .filter_map(|&i| pool.items.get(i).cloned())
        .collect();
    let indices: Vec<usize> = picked
        .iter()
        .filter_map(|&i| pool.indices.get(i).copied())
        .collect();
    let mut models = Vec::new();
    for row in &form.models {
        let provider = row.provider()?;
        let mut id = model_level_id(provider.model());
        let base = id.clone();
        let mut k = 2;
        while models.iter().any(|m: &ClinicalModel| m.id == id) {
            id = format!("{base}-{k}");
            k += 1;
        }
        models.push(ClinicalModel {
            id,
            provider,
            prices: row.prices()?,
        });
    }
    let judge = if form.separate_judge {
        Some(ClinicalModel {
            id: "judge".into(),
            provider: form.judge.provider()?,
            prices: form.judge.prices()?,
        })
    } else {
        None
    };
    let params = |t: &str, m: &str, what: &str| -> Result<Params, FormError> {
        Ok(Params {
            temperature: decimal(t, rules::TEMPERATURE, &format!("{what} temperature"))?,
            max_tokens: whole(m, rules::MAX_TOKENS, &format!("{what} max tokens"))?,
        })
    };
    let design = ClinicalDesign {
        models,
        judge,
        items,
        answer_params: params(&form.temperature, &form.max_tokens, "answer")?,
        counterfactual_params: params(
            &form.temperature,
            &form.counterfactual_max_tokens,
            "counterfactual",
        )?,
        judge_params: params(&form.judge_temperature, &form.judge_max_tokens, "judge")?,
        seed,
        selection: Some(ItemSelection {
            source: pool.source.clone(),
            available: pool.available,
            seed,
            indices,
        }),
    };
    design
        .validate()
        .map_err(|e| FormError::Design(e.to_string()))?;
    Ok(design)
}

/// What "Check the plan" shows.
#[derive(Debug, Clone, PartialEq)]
struct Summary {
    calls: usize,
    models: usize,
    items: usize,
    judge: String,
    estimate: Estimate,
    max_calls: u64,
}

impl Summary {
    fn new(plan: &ClinicalPlan, estimate: Estimate, limits: &Limits) -> Self {
        let d = &plan.design;
        Summary {
            calls: plan.calls.len(),
            models: d.models.len(),
            items: d.items.len(),
            judge: d.judge.as_ref().map_or_else(
                || {
                    "each audited model judges its own outputs (self-judging; the bundle says so)"
                        .into()
                },
                |j| format!("{} (judge)", j.provider.model()),
            ),
            estimate,
            max_calls: limits.max_calls,
        }
    }
}

impl CheckedPlan for Summary {
    fn render(self) -> AnyView {
        let e = self.estimate;
        view! {
            <div class="pilot-estimate" id="clinical-pilot-estimate" data-calls=self.calls
                data-audited-calls=e.calls data-judge-calls=e.judge_calls
                data-input-tokens=e.input_tokens + e.judge_input_tokens
                data-output-tokens=e.output_tokens_max + e.judge_output_tokens_max
                data-cost=e.cost_max data-unpriced=e.unpriced_calls>
                <p>{format!(
                    "{} calls at most ({} audited + {} judge calls; hard cap {}): {} model(s) × {} question(s) × 16 (7 answers — baseline and six prefixes —, a counterfactual, its re-answer, a plausibility judgement, 6 stereotype judgements). Judge: {}. Calls whose dependency fails or is unusable are skipped, so a run usually sends fewer.",
                    self.calls, e.calls, e.judge_calls, self.max_calls, self.models, self.items, self.judge
                )}</p>
                <p>
                    {format!(
                        "Estimated input tokens: {} (+{} for judges; 1 token ≈ 4 characters, quoted replies at their max tokens); output tokens at most {} (+{}). Cost at most {:.4} in your prices' currency",
                        e.input_tokens, e.judge_input_tokens, e.output_tokens_max, e.judge_output_tokens_max, e.cost_max
                    )}
                    {(e.unpriced_calls > 0).then(|| format!(" ({} calls have no price and are not counted)", e.unpriced_calls))}
                    "."
                </p>
            </div>
        }
        .into_any()
    }
}

/// The bundle of the clinical run of this tab.
fn make_bundle(title: &str) -> Result<(String, Arc<[u8]>), String> {
    let (st, plan) = runner::clinical_state().ok_or("no clinical run")?;
    let id = format!(
        "clinical-pilot-{}",
        plan.fingerprint
            .trim_start_matches("clinical-")
            .chars()
            .take(12)
            .collect::<String>()
    );
    let mut info = clinical_bundle_info(
        id.clone(),
        if title.is_empty() { id.as_str() } else { title },
    );
    info.notes = Some(
        "Made in the browser by Audit Atlas's clinical pilot section. It has no explanation embeddings (all-MiniLM-L6-v2 runs natively), so EDD is not available: `atlas clinical embed BUNDLE --out FILE` adds them."
            .into(),
    );
    let bundle = to_clinical_bundle(&plan, &st, &info).map_err(|e| e.to_string())?;
    let bytes = serde_json::to_vec(&bundle.file).map_err(|e| e.to_string())?;
    Ok((id, Arc::from(bytes)))
}

/// The section.
#[component]
pub fn ClinicalPilotSection(keys: Keys) -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let form = RwSignal::new(ClinicalForm::default());
    let out = Outputs::new();
    let plan_view = RwSignal::new(None::<Result<Summary, String>>);
    let action_error = RwSignal::new(None::<String>);
    let restored = RwSignal::new(None::<String>);
    let opened = RwSignal::new(None::<String>);
    // The questions of a picked MedQA file (never saved: the run's design keeps the drawn ones).
    let file_pool = StoredValue::new(None::<Arc<ItemPool>>);
    let file_note = RwSignal::new(None::<Result<String, String>>);

    // A saved clinical run from an earlier visit: restore it paused, offer to resume.
    spawn_local(async move {
        let read = store::load_clinical().await.map(|saved| {
            saved.map(|saved| -> Result<Restored, String> {
                if let Ok(f) = serde_json::from_value::<ClinicalForm>(saved.form.clone()) {
                    form.set(f);
                }
                let plan = build_clinical_plan(saved.design.clone()).map_err(|e| e.to_string())?;
                let st = RunState::from_json(&saved.state).map_err(|e| e.to_string())?;
                plan.check_state(&st).map_err(|e| e.to_string())?;
                let p = plan.progress(&st);
                let unfinished = !plan.finished(&st) && !saved.cancelled;
                let f = form.get_untracked();
                let settings = run_settings(&f.concurrency, &f.timeout_s)
                    .and_then(|s| crate::pilot::form::with_max_wait(s, &f.max_wait_s))
                    .unwrap_or(Settings {
                        concurrency: 2,
                        timeout_ms: 120_000,
                        max_wait_ms: atlas_pilot::retry::DEFAULT_MAX_WAIT_MS,
                    });
                Ok(Restored {
                    notice: unfinished.then(|| {
                        format!(
                            "An unfinished clinical pilot was found in this browser: {} of {} calls done.",
                            p.done(),
                            p.total
                        )
                    }),
                    cancelled: saved.cancelled,
                    setup: RunSetup {
                        work: Work::Clinical(Rc::new(plan)),
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
        restore(read, "clinical pilot", restored, out.store_error);
    });

    // The pool of the form's source: the demo's plan is fetched, a file must have been picked.
    let pool = move || async move {
        if form.with_untracked(|f| f.items_source == "demo") {
            let bytes = crate::browser::loader::fetch_bytes(DEMO_PLAN, |_, _| {})
                .await
                .map_err(|e| {
                    format!("the demo's questions could not be fetched ({DEMO_PLAN}): {e}")
                })?;
            let text = String::from_utf8(bytes)
                .map_err(|e| format!("the demo's plan is not UTF-8: {e}"))?;
            ItemPool::from_demo_plan(&text).map(Arc::new)
        } else {
            file_pool
                .get_value()
                .ok_or_else(|| "pick a MedQA JSON Lines file first".to_string())
        }
    };
    // The plan, its estimate and the cap: a plan above the cap is refused before any call.
    let prepare = move || async move {
        let f = form.get_untracked();
        let caps = limits_of(&f.max_calls, &f.max_cost)?;
        let p = pool().await?;
        let d = design(&f, &p)?;
        let plan = build_clinical_plan(d).map_err(|e| e.to_string())?;
        let estimate = clinical_estimate(&plan.design);
        check_clinical_limits(&estimate, &caps).map_err(|e| e.to_string())?;
        Ok::<_, String>((Summary::new(&plan, estimate, &caps), plan))
    };
    let on_file = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        let Some(picked) = input.files().and_then(|f| f.get(0)) else {
            return;
        };
        spawn_local(async move {
            let name = picked.name();
            let result = match wasm_bindgen_futures::JsFuture::from(picked.text()).await {
                Ok(text) => ItemPool::from_medqa(&text.as_string().unwrap_or_default(), &name),
                Err(e) => Err(format!(
                    "reading {name} failed: {}",
                    crate::browser::loader::js_message(&e)
                )),
            };
            match result {
                Ok(p) => {
                    file_note.set(Some(Ok(format!("{name}: {} questions", p.items.len()))));
                    file_pool.set_value(Some(Arc::new(p)));
                    form.update(|f| f.items_source = "file".into());
                }
                Err(e) => {
                    file_pool.set_value(None);
                    file_note.set(Some(Err(e)));
                }
            }
        });
    };
    let do_plan = move |_| {
        plan_view.set(None);
        spawn_local(async move {
            plan_view.set(Some(prepare().await.map(|(summary, _)| summary)));
        });
    };
    let do_run = move |_| {
        action_error.set(None);
        restored.set(None);
        opened.set(None);
        let f = form.get_untracked();
        let prepared = (|| -> Result<_, String> {
            let s = run_settings(&f.concurrency, &f.timeout_s)?;
            Ok((
                crate::pilot::form::with_max_wait(s, &f.max_wait_s)?,
                serde_json::to_value(&f).map_err(|e| e.to_string())?,
            ))
        })();
        let (settings, form_json) = match prepared {
            Ok(x) => x,
            Err(e) => {
                action_error.set(Some(e));
                return;
            }
        };
        spawn_local(async move {
            match prepare().await {
                Ok((summary, plan)) => {
                    plan_view.set(Some(Ok(summary)));
                    let setup = RunSetup {
                        state: plan.new_state(),
                        work: Work::Clinical(Rc::new(plan)),
                        form: form_json,
                        source: String::new(),
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
        discard(
            Kind::Clinical,
            restored,
            out.store_error,
            store::clear_clinical,
        );
    });
    let title = move || form.with_untracked(|f| f.title.trim().to_string());
    let do_open = Callback::new(move |()| {
        action_error.set(None);
        let result = make_bundle(&title()).and_then(|(id, bytes)| {
            state
                .open_bytes(format!("clinical pilot: {id}"), None, bytes, 0.0)
                .map_err(|e| format!("the run's bundle does not open: {e}"))
        });
        match result {
            Ok(loaded) => {
                opened.set(Some(format!(
                    "Opened bundle {} in the Clinical view. It has no explanation embeddings (they are computed natively), so EDD shows as not available; download it and run `atlas clinical embed` to add them.",
                    loaded.audit.metadata().id
                )));
            }
            Err(e) => action_error.set(Some(e)),
        }
    });
    let do_download = Callback::new(move |()| {
        action_error.set(None);
        let result = make_bundle(&title()).and_then(|(id, bytes)| {
            crate::browser::export::download_bytes(
                &bytes,
                "application/json",
                &format!("{id}.json"),
            )
            .map_err(|e| e.to_string())
        });
        if let Err(e) = result {
            action_error.set(Some(format!("the run could not become a bundle: {e}")));
        }
    });

    view! {
        <section class="clinical-pilot" id="clinical-pilot" aria-labelledby="clinical-pilot-title">
            <h3 id="clinical-pilot-title">"Run a clinical pilot (the clinical audit paper's protocol)"</h3>
            <p>
                "MedQA questions answered without demographics and with six race × sex prefixes (the vignette's age kept, else 45 years; "
                "a prefix that contradicts the vignette is flagged), a minimal counterfactual towards the first other option and its re-answer, "
                "a plausibility judge (1–5) and a stereotype judge per prefix — the same plan, prompts and parsers as "
                <code>"atlas pilot clinical"</code>" (docs/clinical.md, \"Pilot protocol\"). Keys work as above: memory only unless you opted in. "
                "Explanation embeddings (all-MiniLM-L6-v2) are not computed in the browser, so the bundle's EDD is not available until "
                <code>"atlas clinical embed"</code>" adds them to the downloaded file."
            </p>
            <SavedRunNotices kind=Kind::Clinical prefix="clinical-pilot" resume_label="Resume the unfinished clinical pilot"
                restored error=action_error store_error=out.store_error on_discard=do_discard/>
            <fieldset class="pilot-providers">
                <legend>"Audited models (1 to 3)"</legend>
                {row_list(Rows::ClinicalModels(form), keys, RowButtons {
                    add_id: "clinical-pilot-add", add_label: "Add a model",
                    remove_id: Some("clinical-pilot-remove"), remove_label: "Remove the last model",
                    max: Some(MAX_MODELS), min: 1,
                })}
            </fieldset>
            <fieldset class="pilot-providers">
                <legend>"Judge (plausibility and stereotype evidence)"</legend>
                <label>
                    <input type="checkbox" id="clinical-pilot-separate-judge"
                        prop:checked=move || form.with(|f| f.separate_judge)
                        on:change=move |ev| { let on = event_target_checked(&ev); form.update(|f| f.separate_judge = on); }/>
                    " a separate judge model (unticked: each audited model judges its own outputs)"
                </label>
                {move || form.with(|f| f.separate_judge).then(|| provider_row(Rows::ClinicalJudge(form), keys, 0))}
            </fieldset>
            <fieldset class="pilot-design">
                <legend>"Questions and parameters"</legend>
                <label>"Questions "
                    <select id="clinical-pilot-source" prop:value=move || form.with(|f| f.items_source.clone())
                        on:change=move |ev| { let v = event_target_value(&ev); form.update(|f| f.items_source = v); }>
                        <option value="demo">"the first N of the shipped demo's 20 MedQA test questions (MIT)"</option>
                        <option value="file">"N drawn with the seed from a MedQA JSON Lines file"</option>
                    </select>
                </label>" "
                <label>"MedQA file (.jsonl: question, options, answer_idx, meta_info) "
                    <input type="file" id="clinical-pilot-file" accept=".jsonl,.json,.txt" on:change=on_file/>
                </label>
                {move || file_note.get().map(|r| match r {
                    Ok(m) => view! { <span class="hint" id="clinical-pilot-file-note">{m}</span> }.into_any(),
                    Err(e) => view! { <div class="error" role="alert" id="clinical-pilot-file-error">{e}</div> }.into_any(),
                })}
                <div>
                    {form_number_field(form, "clinical-pilot-n", "N", Rule::Whole(rules::COUNT), (|f| f.n.clone(), |f, v| f.n = v))}" "
                    {form_number_field(form, "clinical-pilot-seed", "seed", Rule::Whole(rules::SEED), (|f| f.seed.clone(), |f, v| f.seed = v))}" "
                    {form_number_field(form, "clinical-pilot-temperature", "temperature", Rule::Decimal(rules::TEMPERATURE), (|f| f.temperature.clone(), |f, v| f.temperature = v))}" "
                    {form_number_field(form, "clinical-pilot-judge-temperature", "judge temperature", Rule::Decimal(rules::TEMPERATURE), (|f| f.judge_temperature.clone(), |f, v| f.judge_temperature = v))}
                </div>
                <div>
                    {form_number_field(form, "clinical-pilot-max-tokens", "max tokens: answer", Rule::Whole(rules::MAX_TOKENS), (|f| f.max_tokens.clone(), |f, v| f.max_tokens = v))}" "
                    {form_number_field(form, "clinical-pilot-cf-max-tokens", "counterfactual", Rule::Whole(rules::MAX_TOKENS), (|f| f.counterfactual_max_tokens.clone(), |f, v| f.counterfactual_max_tokens = v))}" "
                    {form_number_field(form, "clinical-pilot-judge-max-tokens", "judge", Rule::Whole(rules::MAX_TOKENS), (|f| f.judge_max_tokens.clone(), |f, v| f.judge_max_tokens = v))}
                </div>
                <div>
                    {form_number_field(form, "clinical-pilot-concurrency", "calls at a time", Rule::Whole(rules::CONCURRENCY), (|f| f.concurrency.clone(), |f, v| f.concurrency = v))}" "
                    {form_number_field(form, "clinical-pilot-timeout", "timeout per call (s)", Rule::Decimal(rules::TIMEOUT_S), (|f| f.timeout_s.clone(), |f, v| f.timeout_s = v))}" "
                    {form_number_field(form, "clinical-pilot-max-calls", "hard cap: calls", Rule::Whole(rules::MAX_CALLS), (|f| f.max_calls.clone(), |f, v| f.max_calls = v))}" "
                    {form_number_field(form, "clinical-pilot-max-cost", "cost (empty = none)", Rule::Decimal(rules::MAX_COST), (|f| f.max_cost.clone(), |f, v| f.max_cost = v))}" "
                    <label class="field">"bundle title "
                        <input type="text" size="30" id="clinical-pilot-title-input" prop:value=move || form.with(|f| f.title.clone())
                            on:input=move |ev| { let v = event_target_value(&ev); form.update(|f| f.title = v); }/>
                    </label>
                </div>
                <div>
                    {form_number_field(form, "clinical-pilot-max-wait", "longest server wait (Retry-After, s; longer pauses the run)", Rule::Whole(rules::MAX_WAIT_S), (|f| f.max_wait_s.clone(), |f, v| f.max_wait_s = v))}
                </div>
            </fieldset>
            <div class="pilot-actions">
                <button id="clinical-pilot-plan" on:click=do_plan>"Check the plan"</button>
                " "
                <button id="clinical-pilot-run" on:click=do_run>"Run the clinical pilot"</button>
            </div>
            <RunSection kind=Kind::Clinical prefix="clinical-pilot" plan_view error=action_error restored snapshot=out.snapshot
                table=|s, sort| view! { <ClinicalRunView snapshot=s sort/> }.into_any()
                open_label="Open as bundle in the Clinical view" discard_label="Discard the run"
                on_open=do_open on_download=do_download on_discard=do_discard/>
            {move || opened.get().map(|m| view! { <p class="notice" role="status" id="clinical-pilot-opened">{m}</p> })}
        </section>
    }
}

/// The columns of the clinical pilot's calls table (the e2e read `td.reason`, and `read` as the
/// eighth cell).
const CLINICAL_COLUMNS: [ResultColumn; 10] = [
    ResultColumn::text("call", ""),
    ResultColumn::text("model", ""),
    ResultColumn::text("question", ""),
    ResultColumn::text("kind", ""),
    ResultColumn::text("variant", ""),
    ResultColumn::text("status", ""),
    ResultColumn::number("attempts"),
    ResultColumn::text("read", ""),
    ResultColumn::text("reply", "text"),
    ResultColumn::text("reason", "reason"),
];

/// Progress bar and the calls' table (model text as text).
#[component]
fn ClinicalRunView(snapshot: Snapshot, sort: RwSignal<SortState>) -> impl IntoView {
    let eta = snapshot.time_left();
    let (rows, c) = match snapshot.rows {
        RunRows::Clinical { rows, progress } => (rows, progress),
        RunRows::Pilot { .. } | RunRows::Judging { .. } => (Vec::new(), Default::default()),
    };
    let rows: Vec<ResultRow> = rows
        .into_iter()
        .map(|r| ResultRow {
            id: r.id.clone(),
            status: r.status.as_str(),
            label: None,
            kind: Some(r.kind.to_string()),
            cells: vec![
                r.id,
                r.model,
                r.item,
                r.kind.to_string(),
                r.variant,
                r.status.as_str().to_string(),
                r.attempts.to_string(),
                r.reading,
                r.text,
                r.reason,
            ],
        })
        .collect();
    view! {
        <div class="progress pilot-progress" id="clinical-pilot-progress" role="status"
            data-phase=snapshot.phase.key() data-total=c.total data-answered=c.answered data-failed=c.failed
            data-skipped=c.skipped>
            <progress value=c.done() as f64 max=c.total.max(1) as f64></progress>
            <span>{format!(
                "{}: {} of {} calls done ({} answered, {} failed, {} skipped because a dependency failed or was unusable); {} in flight, {} ready, {} waiting for an earlier answer, {} waiting to retry; time left {}",
                snapshot.phase.key(), c.done(), c.total, c.answered, c.failed, c.skipped, c.in_flight, c.ready, c.waiting, snapshot.waiting, eta
            )}</span>
            {snapshot.problem.map(|p| view! { <p class="error">{p}</p> })}
        </div>
        {results_table("clinical-pilot-results", "Clinical pilot calls", "Calls (model text shown as text)", &CLINICAL_COLUMNS, rows, sort)}
    }
}
