//! The pilot panel's forms as data: the provider rows, the pilot's design form ([`FormState`]), the
//! judge-coding and clinical forms, which provider rows a list edits ([`Rows`]), and how a form reads into
//! settings, limits and a design (errors: [`FormError`]).

pub mod error;
pub mod paradigm;

pub use error::FormError;
pub use paradigm::{paradigm_design, plan_of, ParadigmForm, PARADIGM_FAMILY};

use atlas_core::Audit;
use atlas_pilot::judge::{Rubric, DEFAULT_RUBRIC_SYSTEM, DEFAULT_RUBRIC_USER};
use atlas_pilot::plan::{
    sample_statements, statements_from_audit, table6_conditions, table7_templates,
    templates_from_audit, Limits, ModelTarget, Prices, PromptTemplate, Statement,
};
use atlas_pilot::provider::ProviderKind;
use atlas_pilot::{AnswerSpace, JudgeConfig, Params, PilotDesign, Provider, Sampling};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use crate::pilot::runner::{clinical_row_id, judging_row_id, Settings, CLINICAL_JUDGE_ROW};

/// One provider row (audited model or judge). No key: keys live in [`Keys`](crate::pilot::store::Keys) under `id`.
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
    /// `stratified`, `srs`, `concentrated`, `balanced`, `coverage`, `full`.
    pub sampling: String,
    /// Cells per model.
    pub budget: String,
    /// The coverage design's `K`: conditions covered (read only when `sampling` is `coverage`).
    #[serde(default = "default_coverage_k")]
    pub coverage_k: String,
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
    /// The task-paradigm design (read when `family` is [`PARADIGM_FAMILY`]).
    #[serde(default)]
    pub paradigm: ParadigmForm,
}

/// The default `K` of the coverage design: 2 conditions.
pub(crate) fn default_coverage_k() -> String {
    "2".into()
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

impl FormState {
    /// Applies the Plan view's "use this design" ([`crate::state::plan::PilotHandoff`]): `design` is
    /// a design name of [`Sampling::from_name`] — `concentrated`, `srs`, `stratified`, `balanced`,
    /// `coverage:K` (the Plan view's [`atlas_core::plan::design_name`]) or `full` — and `budget` the
    /// budget as typed. Sets the sampling select, `K` for a coverage design, and the budget text (kept
    /// for `balanced` and `full`, which ignore it). A name the form has no design for changes only the
    /// budget; returns whether the design was set.
    pub(crate) fn apply_handoff(&mut self, design: &str, budget: &str) -> bool {
        self.budget = budget.to_string();
        let Ok(sampling) = Sampling::from_name(design, 0) else {
            return false;
        };
        if let Sampling::Coverage { conditions, .. } = sampling {
            self.coverage_k = conditions.to_string();
        }
        self.sampling = sampling.key().to_string();
        true
    }
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
            coverage_k: default_coverage_k(),
            max_calls: "1000".into(),
            max_cost: String::new(),
            concurrency: "4".into(),
            timeout_s: "60".into(),
            title: "My pilot audit".into(),
            max_wait_s: default_max_wait_s(),
            paradigm: ParadigmForm::default(),
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
    /// The coverage design's `K` (conditions covered; at most the conditions ticked, checked by
    /// the plan).
    pub const COVERAGE_K: WholeRule = WholeRule::between(1, u32::MAX as u64);
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
    let models = models_of(form)?;
    let judges = form
        .judges
        .iter()
        .map(|row| row.judge(row.id.clone()))
        .collect::<Result<Vec<_>, FormError>>()?;
    let budget: u32 = if matches!(form.sampling.as_str(), "full" | "balanced") {
        0
    } else {
        whole(&form.budget, rules::BUDGET, "budget")?
    };
    let sampling = match form.sampling.as_str() {
        "full" => Sampling::Full,
        "concentrated" => Sampling::Concentrated { budget },
        "srs" => Sampling::Srs { budget },
        "balanced" => Sampling::Balanced,
        "coverage" => Sampling::Coverage {
            conditions: whole(
                &form.coverage_k,
                rules::COVERAGE_K,
                "K (conditions covered)",
            )?,
            budget,
        },
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

/// The audited models of a form's provider rows.
///
/// # Errors
/// A row's provider or prices do not read (naming the row).
pub(crate) fn models_of(form: &FormState) -> Result<Vec<ModelTarget>, FormError> {
    form.models
        .iter()
        .map(|row| {
            Ok(ModelTarget {
                id: row.id.clone(),
                provider: row.provider()?,
                prices: row.prices()?,
            })
        })
        .collect()
}

/// Which provider rows a [`provider_row`] edits: the pilot's models or judges, or the judges of a judge
/// coding of a loaded bundle.
#[derive(Clone, Copy)]
pub(crate) enum Rows {
    Models(RwSignal<FormState>),
    Judges(RwSignal<FormState>),
    BundleJudges(RwSignal<crate::pilot::form::JudgingForm>),
    ClinicalModels(RwSignal<crate::pilot::form::ClinicalForm>),
    /// The clinical pilot's one judge row (any index).
    ClinicalJudge(RwSignal<crate::pilot::form::ClinicalForm>),
}

impl Rows {
    /// Row `i` (tracked).
    pub(crate) fn get(self, i: usize) -> Option<ProviderRow> {
        match self {
            Rows::Models(f) => f.with(|f| f.models.get(i).cloned()),
            Rows::Judges(f) => f.with(|f| f.judges.get(i).cloned()),
            Rows::BundleJudges(f) => f.with(|f| f.judges.get(i).cloned()),
            Rows::ClinicalModels(f) => f.with(|f| f.models.get(i).cloned()),
            Rows::ClinicalJudge(f) => f.with(|f| Some(f.judge.clone())),
        }
    }

    pub(crate) fn get_untracked(self, i: usize) -> Option<ProviderRow> {
        untrack(|| self.get(i))
    }

    pub(crate) fn update(self, i: usize, change: impl FnOnce(&mut ProviderRow)) {
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
    pub(crate) fn has_rubric(self) -> bool {
        matches!(self, Rows::Judges(_) | Rows::BundleJudges(_))
    }

    /// How many rows the list has (tracked).
    pub(crate) fn count(self) -> usize {
        match self {
            Rows::Models(f) => f.with(|f| f.models.len()),
            Rows::Judges(f) => f.with(|f| f.judges.len()),
            Rows::BundleJudges(f) => f.with(|f| f.judges.len()),
            Rows::ClinicalModels(f) => f.with(|f| f.models.len()),
            Rows::ClinicalJudge(_) => 1,
        }
    }

    /// Appends a new row with the next id (`m3`, `j2`, `bj2`, `cm2`).
    pub(crate) fn push(self) {
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
                let row = crate::pilot::form::judge_row(f.judges.len());
                f.judges.push(row);
            }),
            Rows::ClinicalModels(f) => f.update(|f| {
                let row = crate::pilot::form::model_row(f.models.len());
                f.models.push(row);
            }),
            Rows::ClinicalJudge(_) => {}
        }
    }

    /// Removes the last row.
    pub(crate) fn pop(self) {
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

/// Everything typed into the section (saved with the run; holds no key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgingForm {
    /// One to three judge rows, ids `bj1`…`bj3` (their keys' row ids), each with its new column id.
    pub judges: Vec<ProviderRow>,
    /// `all`, `first` or `sample`.
    pub scope: String,
    /// N of `first` / `sample`.
    pub n: String,
    /// Seed of `sample` and of the retry jitter.
    pub seed: String,
    /// Model level ids whose responses are judged; empty = every model.
    pub models: Vec<String>,
    /// Hard cap: calls.
    pub max_calls: String,
    /// Hard cap: cost (`""` = none).
    pub max_cost: String,
    /// Calls in flight.
    pub concurrency: String,
    /// Per-call timeout, seconds.
    pub timeout_s: String,
    /// The longest server wait (`Retry-After`) honoured without pausing, seconds.
    #[serde(default = "crate::pilot::form::default_max_wait_s")]
    pub max_wait_s: String,
}

/// A new judge row `bj{i + 1}` with the column id `judge-{i + 1}`.
pub(crate) fn judge_row(i: usize) -> ProviderRow {
    let mut row = ProviderRow::new(&judging_row_id(i));
    row.column = format!("judge-{}", i + 1);
    row
}

impl Default for JudgingForm {
    fn default() -> Self {
        JudgingForm {
            judges: vec![judge_row(0)],
            scope: "first".into(),
            n: "20".into(),
            seed: "1".into(),
            models: Vec::new(),
            max_calls: "1000".into(),
            max_cost: String::new(),
            concurrency: "4".into(),
            timeout_s: "60".into(),
            max_wait_s: crate::pilot::form::default_max_wait_s(),
        }
    }
}

/// Most audited models.
pub const MAX_MODELS: usize = 3;

/// Everything typed into the section (saved with the run; holds no key and no question text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClinicalForm {
    /// One to three audited models, key rows `cm1`…`cm3`; the bundle's model id is the model name
    /// made an id ([`model_level_id`]).
    pub models: Vec<ProviderRow>,
    /// Whether a separate judge (row `cj`) codes plausibility and stereotypes; else each model judges
    /// itself.
    pub separate_judge: bool,
    /// The judge row.
    pub judge: ProviderRow,
    /// `demo` (the shipped demo's 20 questions) or `file` (a MedQA JSON Lines file).
    pub items_source: String,
    /// Questions to draw.
    pub n: String,
    /// Seed of the draw and of the retry jitter (seed 001 §3.2 used 42).
    pub seed: String,
    /// Temperature of the audited model's calls (seed 001 §3.5: 0.7).
    pub temperature: String,
    /// Temperature of the judge calls (seed 001 §3.5: 0.0).
    pub judge_temperature: String,
    /// Most output tokens of an answer or re-answer.
    pub max_tokens: String,
    /// Most output tokens of a counterfactual (it rewrites the whole question).
    pub counterfactual_max_tokens: String,
    /// Most output tokens of a judge call.
    pub judge_max_tokens: String,
    /// Calls in flight.
    pub concurrency: String,
    /// Per-call timeout, seconds.
    pub timeout_s: String,
    /// The longest server wait (`Retry-After`) honoured without pausing, seconds.
    #[serde(default = "crate::pilot::form::default_max_wait_s")]
    pub max_wait_s: String,
    /// Hard cap: most calls (audited plus judge calls, 16 per model × question).
    #[serde(default = "default_max_calls")]
    pub max_calls: String,
    /// Hard cap: most estimated cost in the prices' currency (empty = none).
    #[serde(default)]
    pub max_cost: String,
    /// The bundle's title.
    pub title: String,
}

fn default_max_calls() -> String {
    Limits::default().max_calls.to_string()
}

/// A new audited model row `cm{i + 1}`.
pub(crate) fn model_row(i: usize) -> ProviderRow {
    ProviderRow::new(&clinical_row_id(i))
}

impl Default for ClinicalForm {
    fn default() -> Self {
        let mut model = model_row(0);
        model.model = "gpt-4o-mini".into();
        ClinicalForm {
            models: vec![model],
            separate_judge: false,
            judge: ProviderRow::new(CLINICAL_JUDGE_ROW),
            items_source: "demo".into(),
            n: "5".into(),
            seed: "42".into(),
            temperature: "0.7".into(),
            judge_temperature: "0".into(),
            max_tokens: "256".into(),
            counterfactual_max_tokens: "512".into(),
            judge_max_tokens: "256".into(),
            concurrency: "2".into(),
            timeout_s: "120".into(),
            max_wait_s: crate::pilot::form::default_max_wait_s(),
            max_calls: default_max_calls(),
            max_cost: String::new(),
            title: "My clinical pilot".into(),
        }
    }
}
