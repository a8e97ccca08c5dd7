//! The likelihood step of a task-paradigm pilot (issue 18 item 3; seed `000_…` §4.3, C.2): after the
//! run, the StereoSet- and CrowS-style items are scored by teacher-forced log-probability — for each
//! model and item, both candidates (a shared prefix, then the candidate) sent to an OpenAI-compatible
//! `/completions` endpoint with `echo` ([`atlas_pilot::paradigm::likelihood::scoring_request`]), one
//! call at a time; [`atlas_pilot::paradigm::likelihood::score_lines`] reads the answers (refusing a
//! server whose echo is shifted by one token) into per-model SS, LMS, ICAT and CrowS preference and
//! the readouts the run's bundle then carries (`responses.likelihood`, kept apart from the
//! Selections). The same code as `atlas paradigms score`.
//!
//! The scores live in memory with the run's plan fingerprint: they go into the bundle only while the
//! run is the one they were scored for; after a reload, score again (a few calls per item). Keys are
//! the model rows' keys, in memory; a failed call's message is scrubbed of its key.

use std::sync::Arc;

use atlas_core::tables::{Cell, Table};
use atlas_pilot::connection::ProbeResult;
use atlas_pilot::paradigm::build_paradigm_plan;
use atlas_pilot::paradigm::likelihood::{
    items, score_lines, scoring_request, ModelLikelihood, Readout, ScoringLine,
};
use atlas_pilot::provider::Provider;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::browser::fetch::fetch_within;
use crate::pilot::form::{paradigm_design, FormState};
use crate::pilot::runner;
use crate::pilot::store::Keys;

/// Per-call timeout of a scoring request, milliseconds.
const TIMEOUT_MS: u32 = 60_000;

/// Likelihood scores of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// The plan fingerprint of the run they were scored for.
    pub fingerprint: String,
    /// One readout per model × item (for the bundle).
    pub readouts: Arc<Vec<Readout>>,
    /// Per model: SS, LMS, ICAT, CrowS preference.
    pub summary: Vec<ModelLikelihood>,
}

/// Where the step stands.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Idle,
    Running { done: usize, total: usize },
    Failed(String),
}

/// The per-model scores as a table of the app's one table layout (`pilot-likelihood-table`):
/// percentages with two decimals; SS and the CrowS preference read against 50 (no preference).
fn summary_table(s: &Scored) -> Table {
    let pct = |v: Option<f64>| v.map_or_else(|| "—".to_string(), |v| format!("{v:.2}"));
    Table {
        id: "pilot-likelihood-table".into(),
        title: "Likelihood scores per model (kept apart from the Selections)".into(),
        caption: format!(
            "run {} · mean log-probability per continuation token (the BiAxisBias paper §C.2) · SS and CrowS preference: 50 = no preference",
            s.fingerprint
        ),
        header: [
            "Model",
            "StereoSet SS",
            "LMS",
            "ICAT",
            "StereoSet items",
            "CrowS preference (%)",
            "CrowS items",
            "Items not scored",
        ]
        .map(String::from)
        .to_vec(),
        rows: s
            .summary
            .iter()
            .map(|m| {
                let ss = m.stereoset;
                vec![
                    Cell::text(m.model.clone()),
                    Cell::number(
                        pct(ss.and_then(|s| s.ss)),
                        format!("ss/{}", m.model),
                        ss.and_then(|s| s.ss),
                    ),
                    Cell::number(
                        pct(ss.map(|s| s.lms)),
                        format!("lms/{}", m.model),
                        ss.map(|s| s.lms),
                    ),
                    Cell::number(
                        pct(ss.and_then(|s| s.icat)),
                        format!("icat/{}", m.model),
                        ss.and_then(|s| s.icat),
                    ),
                    Cell::count(
                        format!("stereoset_items/{}", m.model),
                        ss.map_or(0, |s| s.items as usize),
                    ),
                    Cell::number(
                        pct(m.crows_preference),
                        format!("crows_preference/{}", m.model),
                        m.crows_preference,
                    ),
                    Cell::count(format!("crows_items/{}", m.model), m.crows_items as usize),
                    Cell::count(
                        format!("missing/{}", m.model),
                        m.stereoset_missing + m.crows_missing as usize,
                    ),
                ]
            })
            .collect(),
        notes: s
            .summary
            .iter()
            .flat_map(|m| m.errors.iter().map(move |e| format!("{}: {e}", m.model)))
            .collect(),
    }
}

/// The step's section: the scoring server, the button, progress, the per-model table.
#[component]
pub fn LikelihoodStep(
    form: RwSignal<FormState>,
    keys: Keys,
    scored: RwSignal<Option<Scored>>,
) -> impl IntoView {
    let step = RwSignal::new(Step::Idle);
    let run = move |_| {
        let f = form.get_untracked();
        let prepared = (|| -> Result<_, String> {
            let (_, plan) = runner::state_and_plan()
                .ok_or("Run the pilot first: the scores belong to a run.")?;
            let d = paradigm_design(&f)?;
            let again = build_paradigm_plan(&d).map_err(|e| e.to_string())?;
            if again.fingerprint != plan.fingerprint {
                return Err("The form has changed since the run; score the run as it was planned (undo the change) or run again.".into());
            }
            let its = items(&d.propositions, &d.procedures, d.seed);
            if its.is_empty() {
                return Err(
                    "The design has no StereoSet- or CrowS-style procedure to score.".into(),
                );
            }
            let base = f.paradigm.likelihood_base.trim().to_string();
            let mut calls = Vec::new();
            for m in &d.models {
                let provider = match (&m.provider, base.is_empty()) {
                    (Provider::OpenAiCompatible { model, .. }, false) => {
                        Provider::OpenAiCompatible {
                            base_url: base.clone(),
                            model: model.clone(),
                        }
                    }
                    (p, _) => p.clone(),
                };
                let key = keys.get(&m.id);
                for item in &its {
                    for k in 0..2 {
                        let (text, start) = item.scored_text(k);
                        let end = text.chars().count();
                        let req = scoring_request(&provider, &text, &key)
                            .map_err(|e| format!("model {}: {e}", m.id))?;
                        calls.push((
                            m.id.clone(),
                            item.clone(),
                            k,
                            text,
                            start,
                            end,
                            req,
                            key.clone(),
                        ));
                    }
                }
            }
            let ids: Vec<String> = d.models.iter().map(|m| m.id.clone()).collect();
            Ok((plan.fingerprint.clone(), ids, calls))
        })();
        let (fingerprint, ids, calls) = match prepared {
            Ok(p) => p,
            Err(e) => return step.set(Step::Failed(e)),
        };
        scored.set(None);
        let total = calls.len();
        step.set(Step::Running { done: 0, total });
        spawn_local(async move {
            let mut lines = Vec::with_capacity(total);
            for (i, (model, item, candidate, text, start, end, req, key)) in
                calls.into_iter().enumerate()
            {
                let Ok(controller) = web_sys::AbortController::new() else {
                    return step.set(Step::Failed("the browser has no AbortController".into()));
                };
                let (status, body) = match fetch_within(
                    &req.url,
                    Some(&req),
                    web_sys::RequestMode::Cors,
                    &controller,
                    TIMEOUT_MS,
                )
                .await
                {
                    ProbeResult::Response { status, body, .. } => (Some(status), body),
                    ProbeResult::TimedOut => (None, "timed out".to_string()),
                    ProbeResult::Failed { message } => (None, key.scrub(&message)),
                    ProbeResult::Opaque => (None, "an opaque response".to_string()),
                };
                lines.push(ScoringLine {
                    model,
                    item,
                    candidate,
                    text,
                    start,
                    end,
                    status,
                    body,
                });
                step.set(Step::Running { done: i + 1, total });
            }
            match score_lines(&ids, &lines) {
                Ok((readouts, summary)) => {
                    scored.set(Some(Scored {
                        fingerprint,
                        readouts: Arc::new(readouts),
                        summary,
                    }));
                    step.set(Step::Idle);
                }
                Err(e) => step.set(Step::Failed(e.to_string())),
            }
        });
    };
    let running = move || matches!(step.get(), Step::Running { .. });
    view! {
        <fieldset class="pilot-likelihood" id="pilot-likelihood">
            <legend>"Likelihood scores (StereoSet- and CrowS-style items; the BiAxisBias paper §C.2)"</legend>
            <p>
                "After the run, score each StereoSet- and CrowS-style item by how likely the model finds each option: "
                "the mean log-probability per token of each option after a shared beginning, from a server that echoes prompt log-probabilities "
                "(an OpenAI-compatible "<code>"/completions"</code>" with "<code>"echo"</code>"; vLLM does, llama-cpp-python's own server is refused as shifted by one token — "
                <code>"scripts/llm-echo.sh"</code>" is a correct local one; see "<code>"docs/paradigms.md"</code>"). "
                "The scores go into the run's bundle, kept apart from the Selections."
            </p>
            <label>"Scoring server (empty = each model's own base URL) "
                <input type="text" size="40" id="pilot-likelihood-base" placeholder="http://127.0.0.1:8790/v1"
                    prop:value=move || form.with(|f| f.paradigm.likelihood_base.clone())
                    on:input=move |ev| { let v = event_target_value(&ev); form.update(|f| f.paradigm.likelihood_base = v); }/>
            </label>" "
            <button id="pilot-likelihood-run" on:click=run prop:disabled=running>"Score the run's items"</button>
            {move || match step.get() {
                Step::Idle => None,
                Step::Running { done, total } => Some(view! {
                    <div class="progress" role="status" id="pilot-likelihood-progress" data-done=done data-total=total>
                        <progress value=done as f64 max=total.max(1) as f64></progress>
                        <span>{format!("Scoring: {done} of {total} calls")}</span>
                    </div>
                }.into_any()),
                Step::Failed(e) => Some(view! {
                    <p class="error" role="alert" id="pilot-likelihood-error">{e}</p>
                }.into_any()),
            }}
            {move || scored.get().map(|s| view! {
                <div id="pilot-likelihood-result">
                    {crate::ui::table::table_view(&summary_table(&s), "pilot", 4)}
                    <p>{format!("{} readouts; \"Open as bundle\" and \"Download\" above now include them.", s.readouts.len())}</p>
                </div>
            })}
        </fieldset>
    }
}
