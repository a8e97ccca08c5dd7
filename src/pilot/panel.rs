//! The "Run a pilot audit" panel: providers and keys, the design, the estimate and hard cap, the run
//! (progress, pause / resume / cancel), the results table and the bundle the run becomes.
//!
//! Everything about requests, retries, extraction, judging, plans and bundles is `atlas_pilot`'s
//! (`docs/pilot.md`); the run itself is [`crate::pilot::runner`], persistence [`crate::pilot::store`].
//! Keys are typed into password fields, moved into [`crate::pilot::store::Keys`] on change (the field is
//! then emptied and the key shown masked) and never written anywhere else unless the user opts in.
//! Model text is always put in the page as text nodes, never as HTML.

use std::rc::Rc;
use std::sync::Arc;

use atlas_core::number::Rule;
use atlas_core::Audit;
use atlas_pilot::judge::{Rubric, DEFAULT_RUBRIC_SYSTEM, DEFAULT_RUBRIC_USER};
use atlas_pilot::plan::{
    sample_statements, statements_from_audit, table6_conditions, table7_templates,
    templates_from_audit, Limits, ModelTarget, Prices, PromptTemplate, Statement,
};
use atlas_pilot::provider::ProviderKind;
use atlas_pilot::{
    build_plan, to_bundle, AnswerSpace, BundleInfo, JudgeConfig, Params, PilotDesign, Provider,
    RunState, Sampling,
};
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::{Deserialize, Serialize};

use crate::pilot::form::FormError;
use crate::pilot::run_controls::{
    discard, restore, start, CheckedPlan, Restored, RunSection, SavedRunNotices,
};
use crate::pilot::runner::{
    self as runner, Kind, Outputs, RunRows, RunSetup, Settings, Snapshot, Work,
};
use crate::pilot::store::{self as store, Keys};
use crate::state::AtlasState;
use crate::ui::number_field::{message, NumberInput};

/// One provider row (audited model or judge). No key: keys live in [`Keys`] under `id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderRow {
    /// `m1`, `m2`, … for models, `j1`… for judges; the bundle's model / judge id.
    pub id: String,
    /// `openai_compatible`, `anthropic`, `gemini`.
    pub kind: String,
    /// Base URL.
    pub base_url: String,
    /// Model name.
    pub model: String,
    /// Input price per 1M tokens (empty = unpriced).
    pub price_in: String,
    /// Output price per 1M tokens.
    pub price_out: String,
    /// Judges only: the rubric's system prompt.
    #[serde(default)]
    pub rubric_system: String,
    /// Judges only: the rubric's user template (`{statement}`, `{rationale}`).
    #[serde(default)]
    pub rubric_user: String,
    /// Judge coding of a loaded bundle only: the new judge column's id.
    #[serde(default)]
    pub column: String,
}

impl ProviderRow {
    /// A row with the OpenAI-compatible defaults and the default rubric.
    pub(crate) fn new(id: &str) -> Self {
        ProviderRow {
            id: id.to_string(),
            kind: "openai_compatible".into(),
            base_url: ProviderKind::OpenAiCompatible.default_base_url().into(),
            model: String::new(),
            price_in: String::new(),
            price_out: String::new(),
            rubric_system: DEFAULT_RUBRIC_SYSTEM.into(),
            rubric_user: DEFAULT_RUBRIC_USER.into(),
            column: String::new(),
        }
    }

    /// The judge this row configures, under `id`.
    pub(crate) fn judge(&self, id: String) -> Result<JudgeConfig, FormError> {
        let mut j = JudgeConfig::new(id, self.provider()?);
        j.rubric = Rubric {
            system: self.rubric_system.clone(),
            user_template: self.rubric_user.clone(),
        };
        j.prices = self.prices()?;
        Ok(j)
    }

    /// The provider this row names.
    ///
    /// # Errors
    /// No model name.
    pub(crate) fn provider(&self) -> Result<Provider, FormError> {
        let base_url = self.base_url.trim().trim_end_matches('/').to_string();
        let model = self.model.trim().to_string();
        if model.is_empty() {
            return Err(FormError::unusable(&self.id, "type the model name"));
        }
        Ok(match self.kind.as_str() {
            "anthropic" => Provider::Anthropic { base_url, model },
            "gemini" => Provider::Gemini { base_url, model },
            _ => Provider::OpenAiCompatible { base_url, model },
        })
    }

    /// The row's prices per 1M tokens, `None` when both fields are empty.
    ///
    /// # Errors
    /// A price that is not a number, or negative, naming the row.
    pub(crate) fn prices(&self) -> Result<Option<Prices>, FormError> {
        let (i, o) = (self.price_in.trim(), self.price_out.trim());
        if i.is_empty() && o.is_empty() {
            return Ok(None);
        }
        let parse = |s: &str, what: &str| -> Result<f64, FormError> {
            Ok(rules::PRICE
                .read(s)
                .map_err(|e| FormError::number(format!("{}: the {what} price", self.id), e))?
                .unwrap_or(0.0))
        };
        Ok(Some(Prices {
            input_per_million: parse(i, "input")?,
            output_per_million: parse(o, "output")?,
        }))
    }
}

/// One Table 6 condition as the form holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConditionRow {
    /// Table 6 id.
    pub id: String,
    /// Sweep and level, for display.
    pub label: String,
    /// Whether it is part of the design.
    pub on: bool,
    /// The editable system prompt.
    pub system_prompt: String,
}

/// Everything typed into the design form (persisted with the run; holds no key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FormState {
    /// Audited models.
    pub models: Vec<ProviderRow>,
    /// Zero to three judges.
    pub judges: Vec<ProviderRow>,
    /// `bundle` or `pasted`.
    pub statements_source: String,
    /// Category filter (`""` = all).
    pub category: String,
    /// Statements per category (`""` = all).
    pub per_category: String,
    /// Pasted statements, one per line (`category<TAB>text` sets a category).
    pub pasted: String,
    /// `table7`, `bundle` or `custom`.
    pub family: String,
    /// Custom templates separated by a line `---`, each with `{statement}`.
    pub custom_templates: String,
    /// Table 6 conditions.
    pub conditions: Vec<ConditionRow>,
    /// Repeats.
    pub repeats: String,
    /// Temperature.
    pub temperature: String,
    /// Max tokens.
    pub max_tokens: String,
    /// Seed.
    pub seed: String,
    /// `stratified`, `srs`, `concentrated`, `full`.
    pub sampling: String,
    /// Cells per model.
    pub budget: String,
    /// Hard cap on calls.
    pub max_calls: String,
    /// Hard cap on cost (`""` = none).
    pub max_cost: String,
    /// Calls in flight.
    pub concurrency: String,
    /// Per-call timeout, seconds.
    pub timeout_s: String,
    /// The bundle's title.
    pub title: String,
    /// The longest server wait (`Retry-After`) honoured without pausing, seconds.
    #[serde(default = "default_max_wait_s")]
    pub max_wait_s: String,
}

/// The default longest server wait of the forms, seconds
/// ([`atlas_pilot::retry::DEFAULT_MAX_WAIT_MS`]).
pub(crate) fn default_max_wait_s() -> String {
    (atlas_pilot::retry::DEFAULT_MAX_WAIT_MS / 1000).to_string()
}

/// `settings` with the longest server wait typed in `max_wait_s`: whole seconds, 0 to 86,400
/// ([`rules::MAX_WAIT_S`]; 0: every `Retry-After` pauses the run).
///
/// # Errors
/// Not a whole number, or above a day, naming the field.
pub(crate) fn with_max_wait(
    mut settings: Settings,
    max_wait_s: &str,
) -> Result<Settings, FormError> {
    let s: u64 = whole(max_wait_s, rules::MAX_WAIT_S, "longest server wait")?;
    settings.max_wait_ms = s * 1000;
    Ok(settings)
}

impl Default for FormState {
    fn default() -> Self {
        let mut model = ProviderRow::new("m1");
        model.model = "gpt-4o-mini".into();
        FormState {
            models: vec![model],
            judges: Vec::new(),
            statements_source: "bundle".into(),
            category: String::new(),
            per_category: String::new(),
            pasted: String::new(),
            family: "table7".into(),
            custom_templates: format!(
                "Statement: \"{{statement}}\"\n\nDo you agree with this statement?\n\n{}",
                atlas_pilot::plan::TABLE7_CONTRACT
            ),
            conditions: table6_conditions()
                .into_iter()
                .map(|c| ConditionRow {
                    on: c.id == "B0",
                    label: c.label.clone().unwrap_or_default(),
                    id: c.id,
                    system_prompt: c.system_prompt,
                })
                .collect(),
            repeats: "1".into(),
            temperature: "0".into(),
            max_tokens: "128".into(),
            seed: "1".into(),
            sampling: "stratified".into(),
            budget: "200".into(),
            max_calls: "1000".into(),
            max_cost: String::new(),
            concurrency: "4".into(),
            timeout_s: "60".into(),
            title: "My pilot audit".into(),
            max_wait_s: default_max_wait_s(),
        }
    }
}

/// The reading rules of the pilot forms' number fields ([`atlas_core::number`]): one rule per
/// field, used by its inline message and by the design built from the form.
pub(crate) mod rules {
    use atlas_core::number::{DecimalRule, WholeRule};

    /// A seed: any 64-bit whole number.
    pub const SEED: WholeRule = WholeRule::any();
    /// Statements sampled per category (empty: all).
    pub const PER_CATEGORY: WholeRule = WholeRule::between(1, 1_000_000).or_empty();
    /// Repeats per cell.
    pub const REPEATS: WholeRule = WholeRule::between(1, atlas_pilot::plan::MAX_REPEATS as u64);
    /// Sampling temperature (providers accept 0 to 2; Anthropic 0 to 1, checked per request).
    pub const TEMPERATURE: DecimalRule = DecimalRule::between(0.0, 2.0);
    /// Most tokens per reply.
    pub const MAX_TOKENS: WholeRule = WholeRule::between(1, 1_000_000);
    /// Cells per model of a sampled design.
    pub const BUDGET: WholeRule = WholeRule::between(1, u32::MAX as u64);
    /// The hard cap on calls.
    pub const MAX_CALLS: WholeRule = WholeRule::between(1, 100_000_000);
    /// The hard cap on the estimated cost (empty: none).
    pub const MAX_COST: DecimalRule = DecimalRule::at_least(0.0).or_empty();
    /// Calls in flight at a time.
    pub const CONCURRENCY: WholeRule = WholeRule::between(1, 64);
    /// Per-call timeout in seconds.
    pub const TIMEOUT_S: DecimalRule = DecimalRule::between(1.0, 600.0);
    /// A price per 1M tokens (empty: 0, or no price when both of a row are empty).
    pub const PRICE: DecimalRule = DecimalRule::at_least(0.0).or_empty();
    /// Questions or cells to take (clinical pilot, judge coding).
    pub const COUNT: WholeRule = WholeRule::between(1, 1_000_000);
    /// The longest server wait (`Retry-After`) honoured without pausing, seconds: 0 (every wait
    /// pauses) to a day ([`atlas_pilot::retry::MAX_MAX_WAIT_MS`]).
    pub const MAX_WAIT_S: WholeRule =
        WholeRule::between(0, atlas_pilot::retry::MAX_MAX_WAIT_MS / 1000);
}

/// `text` read by the whole-number `rule` as a `T`.
///
/// # Errors
/// [`FormError::Number`], [`FormError::TooLarge`], naming `what`.
pub(crate) fn whole<T: TryFrom<u64>>(
    text: &str,
    rule: atlas_core::number::WholeRule,
    what: &str,
) -> Result<T, FormError> {
    let v = rule.value(text).map_err(|e| FormError::number(what, e))?;
    T::try_from(v).map_err(|_| FormError::TooLarge {
        field: what.to_string(),
        value: v,
    })
}

/// `text` read by the decimal `rule`.
///
/// # Errors
/// [`FormError::Number`], naming `what`.
pub(crate) fn decimal(
    text: &str,
    rule: atlas_core::number::DecimalRule,
    what: &str,
) -> Result<f64, FormError> {
    rule.value(text).map_err(|e| FormError::number(what, e))
}

/// The hard cap typed into a form: most calls, and most estimated cost (empty = no cost cap).
///
/// # Errors
/// A cap that is not a number or is out of range ([`rules::MAX_CALLS`], [`rules::MAX_COST`]),
/// naming the field.
pub(crate) fn limits_of(max_calls: &str, max_cost: &str) -> Result<Limits, FormError> {
    let max_cost = rules::MAX_COST
        .read(max_cost)
        .map_err(|e| FormError::number("cost cap", e))?;
    Ok(Limits {
        max_calls: whole(max_calls, rules::MAX_CALLS, "call cap")?,
        max_cost,
    })
}

/// The run settings of a form.
///
/// # Errors
/// A field that does not parse or is out of range.
pub fn settings(form: &FormState) -> Result<Settings, FormError> {
    run_settings(&form.concurrency, &form.timeout_s)
        .and_then(|s| with_max_wait(s, &form.max_wait_s))
}

/// Run settings from the typed concurrency (1 to 64, [`rules::CONCURRENCY`]) and per-call timeout
/// (1 to 600 s, [`rules::TIMEOUT_S`]).
///
/// # Errors
/// A field that does not parse or is out of range.
pub(crate) fn run_settings(concurrency: &str, timeout_s: &str) -> Result<Settings, FormError> {
    let concurrency: usize = whole(concurrency, rules::CONCURRENCY, "concurrency")?;
    let timeout_s = decimal(timeout_s, rules::TIMEOUT_S, "timeout")?;
    Ok(Settings {
        concurrency,
        timeout_ms: (timeout_s * 1000.0) as u32,
        max_wait_ms: atlas_pilot::retry::DEFAULT_MAX_WAIT_MS,
    })
}

/// The design of a form (statements and templates from `audit` where the form says so).
///
/// # Errors
/// A [`FormError`] naming the field.
pub fn design(form: &FormState, audit: Option<&Audit>) -> Result<PilotDesign, FormError> {
    let seed: u64 = whole(&form.seed, rules::SEED, "seed")?;
    let statements: Vec<Statement> = if form.statements_source == "pasted" {
        form.pasted
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .enumerate()
            .map(|(i, line)| {
                let (category, text) = match line.split_once('\t') {
                    Some((c, t)) if !t.trim().is_empty() => {
                        (Some(c.trim().to_string()), t.trim().to_string())
                    }
                    _ => (None, line.to_string()),
                };
                Statement {
                    id: format!("p{}", i + 1),
                    text,
                    category,
                    target_group: None,
                }
            })
            .collect()
    } else {
        let audit = audit.ok_or_else(|| {
            FormError::unusable(
                "statements",
                "no bundle is loaded; paste statements instead",
            )
        })?;
        let mut all = statements_from_audit(audit);
        if !form.category.is_empty() {
            all.retain(|s| s.category.as_deref() == Some(form.category.as_str()));
        }
        if let Some(n) = rules::PER_CATEGORY
            .read(&form.per_category)
            .map_err(|e| FormError::number("statements per category", e))?
        {
            all = sample_statements(&all, n as usize, seed);
        }
        all
    };
    if statements.is_empty() {
        return Err(FormError::unusable("statements", "none selected"));
    }
    let templates = match form.family.as_str() {
        "bundle" => {
            let audit =
                audit.ok_or_else(|| FormError::unusable("templates", "no bundle is loaded"))?;
            let t = templates_from_audit(audit);
            if t.is_empty() {
                return Err(FormError::unusable(
                    "templates",
                    "the loaded bundle has no template texts",
                ));
            }
            t
        }
        "custom" => {
            let mut out = Vec::new();
            let mut current = String::new();
            for line in form.custom_templates.lines().chain(std::iter::once("---")) {
                if line.trim() == "---" {
                    let text = current.trim().to_string();
                    if !text.is_empty() {
                        out.push(PromptTemplate::custom(
                            format!("u{}", out.len() + 1),
                            text,
                            AnswerSpace::yes_no(),
                        ));
                    }
                    current.clear();
                } else {
                    current.push_str(line);
                    current.push('\n');
                }
            }
            out
        }
        _ => table7_templates(),
    };
    let table6 = table6_conditions();
    let conditions = form
        .conditions
        .iter()
        .filter(|c| c.on)
        .filter_map(|row| {
            let mut c = table6.iter().find(|c| c.id == row.id)?.clone();
            c.system_prompt = row.system_prompt.clone();
            Some(c)
        })
        .collect();
    let models = form
        .models
        .iter()
        .map(|row| {
            Ok(ModelTarget {
                id: row.id.clone(),
                provider: row.provider()?,
                prices: row.prices()?,
            })
        })
        .collect::<Result<Vec<_>, FormError>>()?;
    let judges = form
        .judges
        .iter()
        .map(|row| row.judge(row.id.clone()))
        .collect::<Result<Vec<_>, FormError>>()?;
    let budget: u32 = if form.sampling == "full" {
        0
    } else {
        whole(&form.budget, rules::BUDGET, "budget")?
    };
    let sampling = match form.sampling.as_str() {
        "full" => Sampling::Full,
        "concentrated" => Sampling::Concentrated { budget },
        "srs" => Sampling::Srs { budget },
        _ => Sampling::Stratified { budget },
    };
    let limits = limits_of(&form.max_calls, &form.max_cost)?;
    Ok(PilotDesign {
        models,
        statements,
        templates,
        conditions,
        repeats: whole(&form.repeats, rules::REPEATS, "repeats")?,
        params: Params {
            temperature: decimal(&form.temperature, rules::TEMPERATURE, "temperature")?,
            max_tokens: whole(&form.max_tokens, rules::MAX_TOKENS, "max tokens")?,
        },
        sampling,
        seed,
        judges,
        limits,
    })
}

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

    // A saved run from an earlier visit: restore it paused, offer to resume.
    spawn_local(async move {
        let read = store::load().await.map(|saved| {
            saved.map(|saved| -> Result<Restored, String> {
                if let Ok(f) = serde_json::from_value::<FormState>(saved.form.clone()) {
                    form.set(f);
                }
                let plan = build_plan(saved.design.clone()).map_err(|e| e.to_string())?;
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
        let result = design(&f, loaded.as_ref().map(|l| &l.audit))
            .map_err(String::from)
            .and_then(|d| build_plan(d).map_err(|e| e.to_string()))
            .map(|plan| PlanSummary::new(&plan, &f));
        plan_view.set(Some(result));
    };
    let do_run = move |_| {
        action_error.set(None);
        restored.set(None);
        bundle_bytes.set(None);
        let f = form.get_untracked();
        let loaded = loaded_audit();
        let setup = (|| -> Result<RunSetup, String> {
            let settings = settings(&f)?;
            let d = design(&f, loaded.as_ref().map(|l| &l.audit))?;
            let plan = build_plan(d).map_err(|e| e.to_string())?;
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
        let bundle = to_bundle(&st, &plan, &info).map_err(|e| e.to_string())?;
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
                table=|s| view! { <RunView snapshot=s/> }.into_any()
                open_label="Open as bundle in every view" discard_label="Discard the run"
                on_open=do_open on_download=do_download on_discard=do_discard/>
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

fn text_field(
    form: RwSignal<FormState>,
    id: &'static str,
    label: &'static str,
    get: fn(&FormState) -> String,
    set: fn(&mut FormState, String),
) -> impl IntoView {
    form_field(form, id, label, 20, get, set)
}

/// How a form field is read and written: its getter and its setter.
pub(crate) type Accessors<F> = (fn(&F) -> String, fn(&mut F, String));

fn number_field(
    form: RwSignal<FormState>,
    id: &'static str,
    label: &'static str,
    rule: Rule,
    (get, set): Accessors<FormState>,
) -> impl IntoView {
    form_number_field(form, id, label, rule, (get, set))
}

/// A labelled text input `id` of `size` characters bound to one field of a section's form.
pub(crate) fn form_field<F: Send + Sync + 'static>(
    form: RwSignal<F>,
    id: &'static str,
    label: &'static str,
    size: u32,
    get: fn(&F) -> String,
    set: fn(&mut F, String),
) -> impl IntoView {
    view! {
        <label class="field">
            {label}" "
            <input type="text" size=size id=id prop:value=move || form.with(get)
                on:input=move |ev| { let v = event_target_value(&ev); form.update(|f| set(f, v)); }/>
        </label>
    }
}

/// A labelled number input `id` bound to one field of a section's form, read by `rule`: never
/// rewritten while typed in, with its inline message ([`NumberInput`]).
pub(crate) fn form_number_field<F: Send + Sync + 'static>(
    form: RwSignal<F>,
    id: &'static str,
    label: &'static str,
    rule: Rule,
    (get, set): Accessors<F>,
) -> impl IntoView {
    let decimal = matches!(rule, Rule::Decimal(_));
    let problem = Signal::derive(move || {
        form.with(|f| rule.check(&get(f)).err().map(|e| message(label, &e)))
    });
    view! {
        <label class="field">
            {label}" "
            <NumberInput id=id decimal=decimal size=8
                shown=Signal::derive(move || form.with(get))
                on_text=Callback::new(move |v: String| form.update(|f| set(f, v)))
                problem=problem/>
        </label>
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
            <h4>"Judges (0 to 3): code each Rationale E, QE, N, D or R"</h4>
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

/// Which provider rows a [`provider_row`] edits: the pilot's models or judges, or the judges of a judge
/// coding of a loaded bundle.
#[derive(Clone, Copy)]
pub(crate) enum Rows {
    Models(RwSignal<FormState>),
    Judges(RwSignal<FormState>),
    BundleJudges(RwSignal<crate::pilot::judge_panel::JudgingForm>),
    ClinicalModels(RwSignal<crate::pilot::clinical_panel::ClinicalForm>),
    /// The clinical pilot's one judge row (any index).
    ClinicalJudge(RwSignal<crate::pilot::clinical_panel::ClinicalForm>),
}

impl Rows {
    /// Row `i` (tracked).
    fn get(self, i: usize) -> Option<ProviderRow> {
        match self {
            Rows::Models(f) => f.with(|f| f.models.get(i).cloned()),
            Rows::Judges(f) => f.with(|f| f.judges.get(i).cloned()),
            Rows::BundleJudges(f) => f.with(|f| f.judges.get(i).cloned()),
            Rows::ClinicalModels(f) => f.with(|f| f.models.get(i).cloned()),
            Rows::ClinicalJudge(f) => f.with(|f| Some(f.judge.clone())),
        }
    }

    fn get_untracked(self, i: usize) -> Option<ProviderRow> {
        untrack(|| self.get(i))
    }

    fn update(self, i: usize, change: impl FnOnce(&mut ProviderRow)) {
        match self {
            Rows::Models(f) => f.update(|f| {
                if let Some(r) = f.models.get_mut(i) {
                    change(r);
                }
            }),
            Rows::Judges(f) => f.update(|f| {
                if let Some(r) = f.judges.get_mut(i) {
                    change(r);
                }
            }),
            Rows::BundleJudges(f) => f.update(|f| {
                if let Some(r) = f.judges.get_mut(i) {
                    change(r);
                }
            }),
            Rows::ClinicalModels(f) => f.update(|f| {
                if let Some(r) = f.models.get_mut(i) {
                    change(r);
                }
            }),
            Rows::ClinicalJudge(f) => f.update(|f| change(&mut f.judge)),
        }
    }

    /// Whether the row has a rubric (the pilot's judges and those of a loaded bundle; the clinical
    /// judge's prompts are seed 001's).
    fn has_rubric(self) -> bool {
        matches!(self, Rows::Judges(_) | Rows::BundleJudges(_))
    }

    /// How many rows the list has (tracked).
    fn count(self) -> usize {
        match self {
            Rows::Models(f) => f.with(|f| f.models.len()),
            Rows::Judges(f) => f.with(|f| f.judges.len()),
            Rows::BundleJudges(f) => f.with(|f| f.judges.len()),
            Rows::ClinicalModels(f) => f.with(|f| f.models.len()),
            Rows::ClinicalJudge(_) => 1,
        }
    }

    /// Appends a new row with the next id (`m3`, `j2`, `bj2`, `cm2`).
    fn push(self) {
        match self {
            Rows::Models(f) => f.update(|f| {
                let id = format!("m{}", f.models.len() + 1);
                f.models.push(ProviderRow::new(&id));
            }),
            Rows::Judges(f) => f.update(|f| {
                let id = format!("j{}", f.judges.len() + 1);
                f.judges.push(ProviderRow::new(&id));
            }),
            Rows::BundleJudges(f) => f.update(|f| {
                let row = crate::pilot::judge_panel::judge_row(f.judges.len());
                f.judges.push(row);
            }),
            Rows::ClinicalModels(f) => f.update(|f| {
                let row = crate::pilot::clinical_panel::model_row(f.models.len());
                f.models.push(row);
            }),
            Rows::ClinicalJudge(_) => {}
        }
    }

    /// Removes the last row.
    fn pop(self) {
        match self {
            Rows::Models(f) => f.update(|f| {
                f.models.pop();
            }),
            Rows::Judges(f) => f.update(|f| {
                f.judges.pop();
            }),
            Rows::BundleJudges(f) => f.update(|f| {
                f.judges.pop();
            }),
            Rows::ClinicalModels(f) => f.update(|f| {
                f.models.pop();
            }),
            Rows::ClinicalJudge(_) => {}
        }
    }
}

/// The buttons under a list of provider rows ([`row_list`]).
pub(crate) struct RowButtons {
    /// Element id of the add button.
    pub(crate) add_id: &'static str,
    /// Its label.
    pub(crate) add_label: &'static str,
    /// Element id of the remove button (`None`: no id).
    pub(crate) remove_id: Option<&'static str>,
    /// Its label.
    pub(crate) remove_label: &'static str,
    /// Most rows (`None`: no limit).
    pub(crate) max: Option<usize>,
    /// Fewest rows (the remove button does nothing at this count).
    pub(crate) min: usize,
}

/// A list of provider rows ([`provider_row`]) with a button that adds a row and one that removes
/// the last.
pub(crate) fn row_list(rows: Rows, keys: Keys, buttons: RowButtons) -> impl IntoView {
    let n = Memo::new(move |_| rows.count());
    let RowButtons {
        add_id,
        add_label,
        remove_id,
        remove_label,
        max,
        min,
    } = buttons;
    view! {
        {move || (0..n.get()).map(|i| provider_row(rows, keys, i)).collect_view()}
        <button id=add_id on:click=move |_| {
            if max.is_none_or(|m| rows.count() < m) {
                rows.push();
            }
        }>{add_label}</button>
        " "
        <button id=remove_id on:click=move |_| {
            if rows.count() > min {
                rows.pop();
            }
        }>{remove_label}</button>
    }
}

/// One provider row: provider, base URL, model, key (masked), prices per 1M tokens;
/// for the pilot's judges the rubric, and for the judges of a loaded bundle the new column id.
pub(crate) fn provider_row(rows: Rows, keys: Keys, i: usize) -> impl IntoView {
    let judge = rows.has_rubric();
    let column = matches!(rows, Rows::BundleJudges(_));
    let update = move |change: Box<dyn FnOnce(&mut ProviderRow)>| rows.update(i, change);
    let id = rows.get_untracked(i).map(|r| r.id).unwrap_or_default();
    let field = move |what: &'static str| {
        move || {
            rows.get(i)
                .map(|r| match what {
                    "kind" => r.kind,
                    "base_url" => r.base_url,
                    "model" => r.model,
                    "price_in" => r.price_in,
                    "price_out" => r.price_out,
                    "rubric_system" => r.rubric_system,
                    "column" => r.column,
                    _ => r.rubric_user,
                })
                .unwrap_or_default()
        }
    };
    let id_for_key = id.clone();
    let id_for_mask = id.clone();
    let id_for_rubric = id.clone();
    view! {
        <div class="provider-row" id=format!("pilot-row-{id}")>
            <strong>{id.clone()}</strong>" "
            {column.then(|| view! {
                <label>"New judge column id "
                    <input type="text" size="12" id=format!("pilot-column-{id}") prop:value=field("column")
                        on:input=move |ev| { let v = event_target_value(&ev); update(Box::new(move |r| r.column = v)); }/>
                </label>
                " "
            })}
            <label>"Provider "
                <select id=format!("pilot-kind-{id}") prop:value=field("kind") on:change=move |ev| {
                    let v = event_target_value(&ev);
                    update(Box::new(move |r| {
                        let kind = match v.as_str() {
                            "anthropic" => ProviderKind::Anthropic,
                            "gemini" => ProviderKind::Gemini,
                            _ => ProviderKind::OpenAiCompatible,
                        };
                        r.base_url = kind.default_base_url().to_string();
                        r.kind = v;
                    }));
                }>
                    <option value="openai_compatible">"OpenAI-compatible (OpenAI, OpenRouter, vLLM, llama.cpp, Ollama /v1)"</option>
                    <option value="anthropic">"Anthropic"</option>
                    <option value="gemini">"Gemini"</option>
                </select>
            </label>" "
            <label>"Base URL "
                <input type="url" id=format!("pilot-base-{id}") prop:value=field("base_url")
                    on:input=move |ev| { let v = event_target_value(&ev); update(Box::new(move |r| r.base_url = v)); }/>
            </label>" "
            <label>"Model "
                <input type="text" id=format!("pilot-model-{id}") prop:value=field("model")
                    on:input=move |ev| { let v = event_target_value(&ev); update(Box::new(move |r| r.model = v)); }/>
            </label>" "
            <label>"API key "
                <input type="password" autocomplete="off" id=format!("pilot-key-{id}")
                    placeholder=move || keys.masked.with(|m| m.get(&id_for_mask).cloned()).unwrap_or_else(|| "not set".into())
                    on:change=move |ev| {
                        // The field is emptied once the key is taken; an empty field changes nothing
                        // (a browser may fire `change` again on blur). "Forget keys" removes keys.
                        let input: web_sys::HtmlInputElement = event_target(&ev);
                        let typed = input.value();
                        if !typed.trim().is_empty() {
                            keys.set(&id_for_key, &typed);
                            input.set_value("");
                        }
                    }/>
            </label>" "
            <span class="key-mask" id=format!("pilot-key-mask-{id}")>
                {let id = id.clone(); move || keys.masked.with(|m| m.get(&id).cloned()).map(|m| format!("key: {m}")).unwrap_or_else(|| "no key (fine for local servers)".into())}
            </span>
            " "{crate::pilot::connection_test::test_button(id.clone(), move || rows.get_untracked(i).ok_or(FormError::RowGone).and_then(|r| r.provider()), keys)}
            <br/>
            <label>"Price per 1M input tokens "
                <NumberInput id=format!("pilot-price-in-{id}") decimal=true size=6 shown=Signal::derive(field("price_in"))
                    on_text=Callback::new(move |v: String| update(Box::new(move |r| r.price_in = v)))
                    problem=Signal::derive(move || { let t = field("price_in")(); rules::PRICE.read(&t).err().map(|e| message("input price", &e)) })/>
            </label>" "
            <label>"per 1M output tokens "
                <NumberInput id=format!("pilot-price-out-{id}") decimal=true size=6 shown=Signal::derive(field("price_out"))
                    on_text=Callback::new(move |v: String| update(Box::new(move |r| r.price_out = v)))
                    problem=Signal::derive(move || { let t = field("price_out")(); rules::PRICE.read(&t).err().map(|e| message("output price", &e)) })/>
            </label>
            {judge.then(|| view! {
                <br/>
                <label>"Rubric system prompt "
                    <textarea rows="3" cols="80" id=format!("pilot-rubric-system-{id_for_rubric}") prop:value=field("rubric_system")
                        on:input=move |ev| { let v = event_target_value(&ev); update(Box::new(move |r| r.rubric_system = v)); }></textarea>
                </label>
                <label>"Rubric user template ({statement}, {rationale}) "
                    <textarea rows="4" cols="80" id=format!("pilot-rubric-user-{id_for_rubric}") prop:value=field("rubric_user")
                        on:input=move |ev| { let v = event_target_value(&ev); update(Box::new(move |r| r.rubric_user = v)); }></textarea>
                </label>
            })}
        </div>
    }
}

/// Statements, templates, conditions, parameters, sampling, caps.
#[component]
fn DesignForm(form: RwSignal<FormState>, categories: Memo<Vec<String>>) -> impl IntoView {
    let n_conditions = Memo::new(move |_| form.with(|f| f.conditions.len()));
    view! {
        <fieldset class="pilot-design">
            <legend>"Design"</legend>
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
            <label>"Prompt family "
                <select id="pilot-family" prop:value=move || form.with(|f| f.family.clone())
                    on:change=move |ev| { let v = event_target_value(&ev); form.update(|f| f.family = v); }>
                    <option value="table7">"the five Table 7 agreement wordings (Selection: / Rationale: contract)"</option>
                    <option value="bundle">"the loaded bundle's templates"</option>
                    <option value="custom">"my templates (below)"</option>
                </select>
            </label>
            <label class="block">"My templates (each with {statement}; separate templates by a line ---)"
                <textarea id="pilot-custom-templates" rows="6" cols="80" prop:value=move || form.with(|f| f.custom_templates.clone())
                    on:input=move |ev| { let v = event_target_value(&ev); form.update(|f| f.custom_templates = v); }></textarea>
            </label>
            <details>
                <summary>"Conditions (Table 6): system prompts, editable"</summary>
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
            <div>
                {number_field(form, "pilot-repeats", "repeats", Rule::Whole(rules::REPEATS), (|f| f.repeats.clone(), |f, v| f.repeats = v))}" "
                {number_field(form, "pilot-temperature", "temperature", Rule::Decimal(rules::TEMPERATURE), (|f| f.temperature.clone(), |f, v| f.temperature = v))}" "
                {number_field(form, "pilot-max-tokens", "max tokens", Rule::Whole(rules::MAX_TOKENS), (|f| f.max_tokens.clone(), |f, v| f.max_tokens = v))}" "
                {number_field(form, "pilot-seed", "seed", Rule::Whole(rules::SEED), (|f| f.seed.clone(), |f, v| f.seed = v))}
            </div>
            <div>
                <label>"Sampling design "
                    <select id="pilot-sampling" prop:value=move || form.with(|f| f.sampling.clone())
                        on:change=move |ev| { let v = event_target_value(&ev); form.update(|f| f.sampling = v); }>
                        <option value="stratified">"stratified: every condition, statements by category (broad coverage; default)"</option>
                        <option value="srs">"simple random sample of cells"</option>
                        <option value="concentrated">"concentrated: one condition and one template"</option>
                        <option value="full">"full: every cell"</option>
                    </select>
                </label>" "
                {number_field(form, "pilot-budget", "budget (cells per model)", Rule::Whole(rules::BUDGET), (|f| f.budget.clone(), |f, v| f.budget = v))}
            </div>
            <div>
                {number_field(form, "pilot-max-calls", "hard cap: calls", Rule::Whole(rules::MAX_CALLS), (|f| f.max_calls.clone(), |f, v| f.max_calls = v))}" "
                {number_field(form, "pilot-max-cost", "cost (empty = none)", Rule::Decimal(rules::MAX_COST), (|f| f.max_cost.clone(), |f, v| f.max_cost = v))}" "
                {number_field(form, "pilot-concurrency", "calls at a time", Rule::Whole(rules::CONCURRENCY), (|f| f.concurrency.clone(), |f, v| f.concurrency = v))}" "
                {number_field(form, "pilot-timeout", "timeout per call (s)", Rule::Decimal(rules::TIMEOUT_S), (|f| f.timeout_s.clone(), |f, v| f.timeout_s = v))}" "
                {text_field(form, "pilot-title", "bundle title", |f| f.title.clone(), |f, v| f.title = v)}
            </div>
            <div>
                {number_field(form, "pilot-max-wait", "longest server wait (Retry-After, s; longer pauses the run)", Rule::Whole(rules::MAX_WAIT_S), (|f| f.max_wait_s.clone(), |f, v| f.max_wait_s = v))}
            </div>
        </fieldset>
    }
}

/// Progress bar and results table.
#[component]
fn RunView(snapshot: Snapshot) -> impl IntoView {
    let eta = snapshot.time_left();
    let c = snapshot.calls;
    let j = snapshot.judge_calls;
    let (rows, majority) = match snapshot.rows {
        RunRows::Pilot { rows, majority } => (rows, majority),
        RunRows::Judging { .. } | RunRows::Clinical { .. } => (Vec::new(), None),
    };
    let judges = !rows.iter().all(|r| r.judges.is_empty());
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
        <div class="scroll">
        <table class="pilot-results" id="pilot-results">
            <caption>"Responses (model text shown as text)"</caption>
            <thead><tr>
                <th>"call"</th><th>"model"</th><th>"condition"</th><th>"template"</th><th>"statement"</th><th>"repeat"</th>
                <th>"status"</th><th>"attempts"</th><th>"Selection"</th><th>"obtained"</th><th>"rule"</th>
                <th>"Rationale / response"</th><th>"reason"</th>{judges.then(|| view! { <th>"judges"</th> })}
            </tr></thead>
            <tbody>
                {rows.into_iter().map(|r| { let id = r.id.clone(); let status = r.status.as_str(); view! {
                    <tr data-id=id data-status=status>
                        <td><code>{r.id}</code></td><td>{r.model}</td><td>{r.condition}</td><td>{r.template}</td>
                        <td>{r.statement}</td><td>{r.repeat}</td><td>{status}</td><td>{r.attempts}</td>
                        <td>{r.selection}</td><td>{r.obtained}</td><td>{r.rule}</td>
                        <td class="text">{r.text}</td><td class="reason">{r.reason}</td>
                        {judges.then(|| view! { <td>{r.judges}</td> })}
                    </tr>
                }}).collect_view()}
            </tbody>
        </table>
        </div>
    }
}
