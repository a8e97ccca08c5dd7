//! The "Analyses" section: RQ1 (wording sensitivity, rank stability, reversals; Tables 8, 9, 11) and
//! RQ2 (equal-budget audits; Tables 13, 14, 15) on the loaded bundle. Each panel runs its analysis in a
//! Web Worker ([`crate::browser::worker`]) with a progress bar and a Cancel button, so the page stays responsive;
//! the worker runs the same `atlas-core` code as `atlas analyze-rq1` / `analyze-rq2` and lays the tables
//! out like the CLI's text ([`atlas_worker::tables`]). The evidence-atlas panels that draw a run — (a), (b)
//! for RQ1, (e), (f) and the coverage curve for RQ2 — come right after that run's results
//! (`rq1_atlas`, `rq2_atlas`: the app composes them, `crate::views::atlas`).
//!
//! A task-paradigm bundle ([`atlas_core::across::is_paradigm_bundle`]: its conditions are the
//! procedures of seed Table 10) gets a third panel first, "Does the task format reorder models?"
//! (§5.2, Table 11 with the procedures as conditions; [`atlas_worker::Request::Across`], the same code
//! as `atlas paradigms across`), with the atlas panels (c) and (d) across procedures after its results
//! (`across_atlas`).

use crate::ui::table::table_view;
use std::sync::Arc;

use crate::ui::glossary::Term;
use atlas_core::across::AcrossOptions;
use atlas_core::number::WholeRule;
use atlas_worker::{Outcome, Request, Rq1Settings, Rq2Settings};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::browser::loader::now_ms;
use crate::browser::worker::{AnalysisRun, WorkerEvent};
use crate::state::{AtlasState, Loaded};
use crate::ui::format::thousands;
use crate::ui::number_field::{message, NumberInput};

/// Which analysis a panel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Analysis {
    /// RQ1: wording sensitivity, rank stability, reversals (Tables 8, 9, 11).
    Rq1,
    /// RQ2: equal-budget audits (Tables 13, 14, 15).
    Rq2,
    /// Across task paradigms (§5.2, Table 11 with the procedures as conditions); only for a
    /// task-paradigm bundle ([`atlas_core::across::is_paradigm_bundle`]).
    Across,
}

impl Analysis {
    /// Element id prefix (`rq1`, `rq2`).
    fn key(self) -> &'static str {
        match self {
            Analysis::Rq1 => "rq1",
            Analysis::Rq2 => "rq2",
            Analysis::Across => "across",
        }
    }
}

/// One setting of a panel: its id suffix, label, help text, reading rule and current text.
#[derive(Clone, Copy)]
struct Field {
    id: &'static str,
    label: &'static str,
    help: &'static str,
    rule: WholeRule,
    value: RwSignal<String>,
}

/// Bootstrap sizes and draws: 1 to 10 million (a run of that size takes minutes in the worker).
const COUNT: WholeRule = WholeRule::between(1, 10_000_000);

impl Field {
    fn new(
        id: &'static str,
        label: &'static str,
        help: &'static str,
        rule: WholeRule,
        value: impl ToString,
    ) -> Self {
        Field {
            id,
            label,
            help,
            rule,
            value: RwSignal::new(value.to_string()),
        }
    }

    /// The random-seed field every panel has (any whole number), with its help text.
    fn seed(help: &'static str, seed: u64) -> Self {
        Field::new("seed", "Random seed", help, WholeRule::any(), seed)
    }

    /// Why the text cannot be used, as the inline message shows it.
    fn problem(&self) -> Option<String> {
        let rule = self.rule;
        self.value
            .with(|t| rule.read(t).err())
            .map(|e| message(self.label, &e))
    }

    /// The field's value.
    fn parse(&self) -> Result<u64, String> {
        self.rule
            .value(&self.value.get_untracked())
            .map_err(|e| message(self.label, &e))
    }

    /// The field's value as a count.
    fn count(&self) -> Result<usize, String> {
        let v = self.parse()?;
        usize::try_from(v).map_err(|_| format!("{}: {v} is too large", self.label))
    }
}

/// Where a panel's run stands.
#[derive(Debug, Clone, PartialEq)]
enum RunState {
    Idle,
    Running {
        done: usize,
        total: usize,
        stage: String,
    },
    Done {
        outcome: Arc<Outcome>,
        seconds: f64,
    },
    Failed(String),
    Cancelled,
}

/// The section with the RQ1 and RQ2 panels; `rq1_atlas` / `rq2_atlas` (the atlas panels of each
/// run) are drawn inside each panel, right after its results.
#[component]
pub fn Analyses(
    loaded: Arc<Loaded>,
    #[prop(optional, into)] rq1_atlas: Option<ViewFn>,
    #[prop(optional, into)] rq2_atlas: Option<ViewFn>,
    #[prop(optional, into)] across_atlas: Option<ViewFn>,
) -> impl IntoView {
    // A task-paradigm bundle (its conditions are the procedures of seed Table 10) gets the
    // across-paradigm comparison first: it is what such a bundle is for.
    let across = atlas_core::across::is_paradigm_bundle(&loaded.audit)
        .then(|| view! { <AnalysisPanel analysis=Analysis::Across loaded=loaded.clone() charts=across_atlas/> });
    view! {
        <section class="analyses" id="analyses" aria-labelledby="analyses-title">
            <h2 id="analyses-title">"Does the score depend on how you ask? "<Term id="template">"Wording"</Term>" and "<Term id="audit-design">"audit size"</Term>" "<span class="paper-ref">"RQ1 and RQ2 · BiAxisBias paper §3.4–3.5"</span></h2>
            <p>
                "RQ1 and RQ2 of the BiAxisBias paper on this bundle, computed in a background thread (a Web Worker) by the same code as "
                <code>"atlas analyze-rq1"</code> " and " <code>"atlas analyze-rq2"</code>
                ": the same bundle, random seed and settings give the same numbers. The page stays usable while they run. "
                "Repeat policy: the one chosen above."
            </p>
            {across}
            <AnalysisPanel analysis=Analysis::Rq1 loaded=loaded.clone() charts=rq1_atlas/>
            <AnalysisPanel analysis=Analysis::Rq2 loaded charts=rq2_atlas/>
        </section>
    }
}

#[component]
fn AnalysisPanel(analysis: Analysis, loaded: Arc<Loaded>, charts: Option<ViewFn>) -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let key = analysis.key();
    let fields: Vec<Field> = match analysis {
        Analysis::Rq1 => {
            let d = Rq1Settings::default();
            vec![
                Field::seed("fixes every bootstrap draw", d.seed),
                Field::new(
                    "unit-reps",
                    "Unit-bootstrap resamples",
                    "paired wording difference (the BiAxisBias paper §C.1 uses 20,000)",
                    COUNT,
                    d.unit_bootstrap_reps,
                ),
                Field::new(
                    "cluster-reps",
                    "Statement-cluster draws",
                    "intervals over statements, Tables 8 and 11 (the paper uses 10,000)",
                    COUNT,
                    d.cluster_bootstrap_reps,
                ),
            ]
        }
        Analysis::Across => {
            let d = AcrossOptions::default();
            vec![
                Field::seed("fixes every bootstrap draw", d.seed),
                Field::new(
                    "draws",
                    "Statement-cluster draws",
                    "paired bootstrap over the propositions, one interval per pair and procedure (the paper's Table 11 uses 10,000)",
                    COUNT,
                    d.draws,
                ),
            ]
        }
        Analysis::Rq2 => {
            let d = Rq2Settings::default();
            vec![
                Field::seed(
                    "fixes every audit draw (the BiAxisBias paper §D.2 uses 20260722)",
                    d.seed,
                ),
                Field::new(
                    "draws",
                    "Draws per design",
                    "simulated audits per design (the paper §D.2: 10,000)",
                    COUNT,
                    d.draws,
                ),
                Field::new(
                    "budget",
                    "Budget B",
                    "responses per model per audit (the paper §3.5: 200)",
                    COUNT,
                    d.budget,
                ),
                Field::new(
                    "bootstrap",
                    "Contrast bootstrap",
                    "replicates (the paper §D.2: 2,000)",
                    COUNT,
                    d.bootstrap_reps,
                ),
            ]
        }
    };
    let run_state = RwSignal::new(RunState::Idle);
    let run = StoredValue::new_local(None::<AnalysisRun>);
    on_cleanup(move || {
        // Leaving the bundle (or the page) stops its analyses.
        run.try_update_value(|r| *r = None);
    });

    let request = {
        let fields = fields.clone();
        move || -> Result<Request, String> {
            let policy = state.policy.get_untracked();
            let field = |i: usize| fields.get(i).ok_or("a setting is missing");
            let seed = field(0)?.parse()?;
            Ok(match analysis {
                Analysis::Rq1 => Request::Rq1(Rq1Settings {
                    seed,
                    policy,
                    unit_bootstrap_reps: field(1)?.count()?,
                    cluster_bootstrap_reps: field(2)?.count()?,
                }),
                Analysis::Across => Request::Across(AcrossOptions {
                    seed,
                    policy,
                    draws: field(1)?.count()?,
                }),
                Analysis::Rq2 => Request::Rq2(Rq2Settings {
                    seed,
                    policy,
                    draws: field(1)?.count()?,
                    budget: field(2)?.count()?,
                    bootstrap_reps: field(3)?.count()?,
                }),
            })
        }
    };
    let results = use_context::<crate::state::reweighting::AnalysisResults>();
    // Settings that cannot be used stop a Run with a message; the last results stay.
    let settings_error = RwSignal::new(None::<String>);
    let start = move |_| {
        let request = match request() {
            Ok(r) => r,
            Err(message) => return settings_error.set(Some(message)),
        };
        settings_error.set(None);
        let started = now_ms();
        // Drop the finished run a moment later, never from inside its own message handler.
        let finish = move || {
            spawn_local(async move {
                run.try_update_value(|r| *r = None);
            })
        };
        let on_event = move |event| match event {
            WorkerEvent::Progress { done, total, stage } => {
                run_state.set(RunState::Running { done, total, stage })
            }
            WorkerEvent::Done(outcome) => {
                let outcome = Arc::new(*outcome);
                if let Some(results) = results {
                    results.publish(request, outcome.clone());
                }
                run_state.set(RunState::Done {
                    outcome,
                    seconds: (now_ms() - started) / 1000.0,
                });
                finish();
            }
            WorkerEvent::Failed(message) => {
                run_state.set(RunState::Failed(message));
                finish();
            }
        };
        run_state.set(RunState::Running {
            done: 0,
            total: 0,
            stage: "starting the worker…".into(),
        });
        match AnalysisRun::start(request, loaded.data.clone(), on_event) {
            Ok(handle) => run.set_value(Some(handle)),
            Err(message) => run_state.set(RunState::Failed(format!(
                "the analysis worker could not be started: {message}"
            ))),
        }
    };
    let cancel = move |_| {
        run.update_value(|r| {
            if let Some(handle) = r.take() {
                handle.cancel();
            }
        });
        run_state.set(RunState::Cancelled);
    };
    let running = move || matches!(run_state.get(), RunState::Running { .. });

    let (title, paper_ref, what) = match analysis {
        Analysis::Rq1 => (
            "Does wording change the answer?",
            "RQ1 · BiAxisBias paper §3.4, §5.1–5.2, Tables 8, 9, 11",
            "How much answers and scores move when only the wording changes (Table 8), model scores and ranks across wordings (Table 9), and model pairs whose order reverses across conditions (Table 11), with unit and statement-cluster bootstrap intervals.",
        ),
        Analysis::Across => (
            "Does the task format reorder models?",
            "Task paradigms · BiAxisBias paper §5.2, C.2, Tables 10 and 11",
            "This bundle asks the same propositions in several task formats (procedures: CLEAR-, BBQ-, StereoSet- and CrowS-style). Per procedure: each model's score (share of valid Selections choosing the stereotyped option, one value per proposition) and rank; then every model pair, with the difference under each procedure and a paired 95% interval over propositions, and whether the pair's order reverses — also beyond 1- and 2-percentage-point tie zones (Table 11). The same code as atlas paradigms across.",
        ),
        Analysis::Rq2 => (
            "Equal-budget audits: how wrong is a small audit?",
            "RQ2 · BiAxisBias paper §3.5, §5.3, Tables 13–15",
            "Concentrated, SRS, stratified and balanced audit designs with the same budget per model, against the reference score (Eq. 4): errors, rank agreement and repeatability (Table 13), the condition-coverage curve (Table 14) and per-model errors (Table 15).",
        ),
    };
    let inputs = fields
        .iter()
        .map(|f| {
            let id = format!("{key}-{}", f.id);
            let value = f.value;
            let f = *f;
            view! {
                <label class="setting">
                    <span class="name">{f.label}</span>
                    <NumberInput
                        id=id
                        shown=value
                        on_text=Callback::new(move |v| value.set(v))
                        problem=Signal::derive(move || f.problem())
                        disabled=Signal::derive(running)
                    />
                    <span class="hint">{f.help}</span>
                </label>
            }
        })
        .collect_view();
    view! {
        <div class="analysis-panel" id=key aria-labelledby=format!("{key}-title")>
            <h3 id=format!("{key}-title")>{title}" "<span class="paper-ref">{paper_ref}</span></h3>
            <p>{what}</p>
            <div class="settings">
                {inputs}
                <p class="setting-policy">
                    "Repeat policy: " <code>{move || state.policy.get().key()}</code>
                </p>
            </div>
            <div class="run-controls">
                <button id=format!("{key}-run") on:click=start prop:disabled=running>
                    {move || if matches!(run_state.get(), RunState::Done { .. }) { "Run again" } else { "Run" }}
                </button>
                {move || settings_error.get().map(|message| view! {
                    <p class="error" role="alert" id=format!("{key}-settings-error")>
                        <strong>"Not run: "</strong>{message}
                        {matches!(run_state.get_untracked(), RunState::Done { .. }).then_some(". The results below are those of the last run.")}
                    </p>
                })}
                {move || match run_state.get() {
                    RunState::Idle => None,
                    RunState::Running { done, total, stage } => {
                        let text = if total == 0 {
                            format!("Running: {stage}")
                        } else {
                            format!("Running: {} of {} {stage}", thousands(done), thousands(total))
                        };
                        let bar = if total == 0 {
                            view! { <progress></progress> }.into_any()
                        } else {
                            view! { <progress value=done as f64 max=total as f64></progress> }.into_any()
                        };
                        Some(view! {
                            <div class="progress" role="status" id=format!("{key}-progress") data-done=done.to_string() data-total=total.to_string()>
                                {bar}
                                <span>{text}</span>
                                <button id=format!("{key}-cancel") on:click=cancel>"Cancel"</button>
                            </div>
                        }.into_any())
                    }
                    RunState::Cancelled => Some(view! {
                        <p class="status" role="status" id=format!("{key}-status")>"Cancelled: the worker was stopped. Nothing was computed."</p>
                    }.into_any()),
                    RunState::Failed(message) => Some(view! {
                        <p class="error" role="alert" id=format!("{key}-error")>{message}</p>
                    }.into_any()),
                    RunState::Done { seconds, .. } => Some(view! {
                        <p class="status" role="status" id=format!("{key}-status")>
                            {format!("Computed in {seconds:.1} s in a Web Worker.")}
                        </p>
                    }.into_any()),
                }}
            </div>
            {move || match run_state.get() {
                RunState::Done { outcome, .. } => Some(view! { <Results analysis outcome/> }),
                _ => None,
            }}
            {charts.map(|c| c.run())}
        </div>
    }
}

/// A finished run: summary lines, the tables, and the report as JSON.
#[component]
fn Results(analysis: Analysis, outcome: Arc<Outcome>) -> impl IntoView {
    let key = analysis.key();
    let href = format!(
        "data:application/json;charset=utf-8,{}",
        String::from(js_sys::encode_uri_component(&outcome.report))
    );
    let summary = outcome
        .summary
        .iter()
        .map(|line| view! { <p class="summary">{line.clone()}</p> })
        .collect_view();
    let tables = outcome
        .tables
        .iter()
        .map(|t| table_view(t, key, 4))
        .collect_view();
    view! {
        <div class="results" id=format!("{key}-result")>
            {summary}
            {tables}
            <p>
                <a id=format!("{key}-json") href=href download=format!("{key}-report.json")>
                    "Download the report (JSON, as the CLI writes it)"
                </a>
            </p>
        </div>
    }
}
