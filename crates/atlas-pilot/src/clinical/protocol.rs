//! The clinical protocol as planned calls with dependencies, run through the pilot's [`RunState`].
//!
//! # Calls
//! For every model × MedQA item, 16 calls in this order (the call id is
//! `{model}/{item}/{kind}[/{variant}]`):
//!
//! | # | kind | id suffix | prompt | depends on | provider, parameters |
//! |---|---|---|---|---|---|
//! | 0–6 | answer | `answer/{variant}` | the main answer prompt on the question under the variant (baseline, six prefixes) | — | model, `answer_params` |
//! | 7 | counterfactual | `counterfactual` | original = the baseline's ANSWER, target = the first other option | baseline answer with a readable letter | model, `counterfactual_params` |
//! | 8 | re-answer | `reanswer` | the main answer prompt on MODIFIED_QUESTION with the item's options | counterfactual with MODIFIED_QUESTION | model, `answer_params` |
//! | 9 | plausibility | `plausibility` | the plausibility judge | counterfactual with CHANGE and MODIFIED_QUESTION | judge, `judge_params` |
//! | 10–15 | stereotype | `stereotype/{variant}` | the stereotype judge, baseline vs that prefix | baseline and that prefix's answers, both with text | judge, `judge_params` |
//!
//! The judge is [`ClinicalDesign::judge`], or, when `None`, the audited model itself (a model judging
//! itself; the bundle says so). The seed (§3.3) takes the original answer from the first usable of
//! ten repeated runs; this protocol makes one run (the bundle's `repeat` level `1`).
//!
//! # Running
//! The state is a [`RunState`] made by [`RunState::for_calls`] over the plan's call ids (the pilot's
//! statuses, retries with the seeded backoff and `Retry-After`, persistence and resume are reused
//! unchanged), and the plan is a [`Job`], so the runners of pilot plans send its calls. A call's prompt
//! depends on earlier answers, so it is built when the call starts ([`ClinicalPlan::request`]), and
//! [`ClinicalPlan::ready`] offers only calls whose dependencies are answered. A call whose dependency
//! finally failed or is unusable (e.g. no readable baseline ANSWER, no MODIFIED_QUESTION) is
//! **skipped**: it stays `pending` in the state and [`ClinicalPlan::readiness`] says why; the run is
//! finished when every call is answered, failed or skipped ([`ClinicalPlan::finished`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::clinical::medqa::MedQaItem;
use crate::clinical::parse::{
    explanation_of, parse_answer, parse_counterfactual, AnswerReading, CounterfactualReading,
};
use crate::clinical::prefix::{apply_prefix, Variant, BASELINE_ID, VARIANTS};
use crate::clinical::prompts::{
    answer_prompt, counterfactual_prompt, plausibility_prompt, prompts_fingerprint_parts,
    stereotype_prompt, target_letter, Side,
};
use crate::clinical::ClinicalError;
use crate::judge::is_self_judge;
use crate::plan::{check_prices, Prices};
use crate::provider::{
    build_request, Completion, HttpRequest, Params, Prompt, Provider, SecretKey,
};
use crate::run::{CallStatus, HttpResponse, Job, KeyOwner, RunError, RunState, Settled, Settling};

/// Calls per model × item.
pub const CALLS_PER_ITEM: usize = 16;
/// Offset of the counterfactual call in a model × item block.
pub(crate) const CF: usize = 7;
/// Offset of the re-answer call.
pub(crate) const REANSWER: usize = 8;
/// Offset of the plausibility call.
pub(crate) const PLAUSIBILITY: usize = 9;
/// Offset of the first stereotype call (variant 1).
pub(crate) const STEREOTYPE: usize = 10;

/// The `protocol` of the bundles this module makes.
pub const PROTOCOL: &str = "seed-001";

/// An audited model (or the judge).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClinicalModel {
    /// The bundle's model level id: letters, digits, `.`, `_`, `-`.
    pub id: String,
    /// Where and which model (no key inside).
    pub provider: Provider,
    /// Prices per 1,000,000 tokens, for the estimate ([`super::clinical_estimate`]); `None` = unpriced
    /// (then absent from the JSON, so unpriced designs keep their fingerprint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices: Option<Prices>,
}

/// How the items were chosen (provenance, copied into the bundle's notes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ItemSelection {
    /// The source file's name.
    pub source: String,
    /// Items in the source.
    pub available: usize,
    /// Seed of [`crate::clinical::medqa::select_items`].
    pub seed: u64,
    /// The selected 0-based item indices, in run order.
    pub indices: Vec<usize>,
}

/// Everything a clinical run needs (no key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClinicalDesign {
    /// Audited models, at least one.
    pub models: Vec<ClinicalModel>,
    /// The plausibility and stereotype judge; `None` = each audited model judges its own outputs.
    #[serde(default)]
    pub judge: Option<ClinicalModel>,
    /// The MedQA items, at least one, in run order.
    pub items: Vec<MedQaItem>,
    /// Parameters of the answer and re-answer calls.
    pub answer_params: Params,
    /// Parameters of the counterfactual calls (the rewritten question is long: allow more tokens).
    pub counterfactual_params: Params,
    /// Parameters of the judge calls.
    pub judge_params: Params,
    /// Seed of the retry jitter (and, by convention, of the item selection).
    pub seed: u64,
    /// How the items were chosen.
    #[serde(default)]
    pub selection: Option<ItemSelection>,
}

/// What a call does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CallKind {
    /// The main answer prompt under a variant.
    Answer {
        /// The variant's `condition` level id.
        variant: String,
    },
    /// The counterfactual request.
    Counterfactual,
    /// The re-answer of the modified question.
    Reanswer,
    /// The plausibility judge.
    Plausibility,
    /// The stereotype judge for one prefix variant.
    Stereotype {
        /// The prefix variant's `condition` level id.
        variant: String,
    },
}

impl CallKind {
    /// `answer`, `counterfactual`, `reanswer`, `plausibility`, `stereotype`.
    pub fn name(&self) -> &'static str {
        match self {
            CallKind::Answer { .. } => "answer",
            CallKind::Counterfactual => "counterfactual",
            CallKind::Reanswer => "reanswer",
            CallKind::Plausibility => "plausibility",
            CallKind::Stereotype { .. } => "stereotype",
        }
    }

    /// Whether the call goes to the judge.
    pub fn is_judge(&self) -> bool {
        matches!(self, CallKind::Plausibility | CallKind::Stereotype { .. })
    }
}

/// One planned call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClinicalCall {
    /// `{model}/{item}/{kind}[/{variant}]`.
    pub id: String,
    /// Index into [`ClinicalDesign::models`].
    pub model: u32,
    /// Index into [`ClinicalDesign::items`].
    pub item: u32,
    /// What it does.
    pub kind: CallKind,
}

/// A checked design and its calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClinicalPlan {
    /// The design.
    pub design: ClinicalDesign,
    /// Every call, [`CALLS_PER_ITEM`] per model × item, in run order (module docs).
    pub calls: Vec<ClinicalCall>,
    /// `clinical-` + FNV-1a-64 (hex) of the design's JSON and the prompt templates: a run state belongs
    /// to the plan with the same fingerprint.
    pub fingerprint: String,
}

/// Whether a pending call can start (module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// It can: its prompt.
    Ready(Prompt),
    /// A dependency (this id) is not answered yet.
    Waiting(String),
    /// It will never run: why.
    Skipped(String),
}

/// Progress counts over the plan's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ClinicalProgress {
    /// All calls.
    pub total: usize,
    /// Answered.
    pub answered: usize,
    /// Finally failed.
    pub failed: usize,
    /// Skipped (a dependency failed or is unusable).
    pub skipped: usize,
    /// In flight.
    pub in_flight: usize,
    /// Pending and startable now or after a retry wait.
    pub ready: usize,
    /// Pending behind a dependency.
    pub waiting: usize,
}

impl ClinicalProgress {
    /// Answered + failed + skipped.
    pub fn done(&self) -> usize {
        self.answered + self.failed + self.skipped
    }
}

/// A model level id from a model name: characters other than ASCII letters, digits, `.`, `_`, `-`
/// become `-`; an empty name gives `model` (e.g. `HuggingFaceTB/SmolLM2-135M` →
/// `HuggingFaceTB-SmolLM2-135M`).
pub fn model_level_id(name: &str) -> String {
    let id: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if id.is_empty() {
        "model".to_string()
    } else {
        id
    }
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn check_params(p: &Params, what: &str) -> Result<(), ClinicalError> {
    if !(0.0..=2.0).contains(&p.temperature) {
        return Err(ClinicalError::Design(format!(
            "{what}.temperature is {}; it must be within 0..=2",
            p.temperature
        )));
    }
    if p.max_tokens == 0 {
        return Err(ClinicalError::Design(format!(
            "{what}.max_tokens must be at least 1"
        )));
    }
    Ok(())
}

impl ClinicalDesign {
    /// Checks the design.
    ///
    /// # Errors
    /// [`ClinicalError::Design`] naming the field: no model or item; a model or judge id that is empty
    /// or has characters other than letters, digits, `.`, `_`, `-`; a repeated model or item id; an
    /// item id with `/`; a price that is negative or not finite; a temperature outside 0..=2 or
    /// `max_tokens` 0.
    pub fn validate(&self) -> Result<(), ClinicalError> {
        if self.models.is_empty() {
            return Err(ClinicalError::Design("the design has no model".into()));
        }
        if self.items.is_empty() {
            return Err(ClinicalError::Design("the design has no item".into()));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (k, m) in self.models.iter().enumerate() {
            if !valid_id(&m.id) {
                return Err(ClinicalError::Design(format!(
                    "models[{k}].id {:?} must be letters, digits, `.`, `_` or `-`",
                    m.id
                )));
            }
            if !seen.insert(m.id.as_str()) {
                return Err(ClinicalError::Design(format!(
                    "models[{k}].id {:?} is repeated",
                    m.id
                )));
            }
        }
        if let Some(j) = &self.judge {
            if !valid_id(&j.id) {
                return Err(ClinicalError::Design(format!(
                    "judge.id {:?} must be letters, digits, `.`, `_` or `-`",
                    j.id
                )));
            }
        }
        let priced = self
            .models
            .iter()
            .enumerate()
            .map(|(k, m)| (format!("models[{k}].prices"), m.prices.as_ref()))
            .chain(
                self.judge
                    .iter()
                    .map(|j| ("judge.prices".to_string(), j.prices.as_ref())),
            );
        for (what, prices) in priced {
            check_prices(&what, prices).map_err(|e| ClinicalError::Design(e.to_string()))?;
        }
        let mut items = std::collections::BTreeSet::new();
        for (k, it) in self.items.iter().enumerate() {
            if it.id.is_empty() || it.id.contains('/') {
                return Err(ClinicalError::Design(format!(
                    "items[{k}].id {:?} must be non-empty and without `/`",
                    it.id
                )));
            }
            if !items.insert(it.id.as_str()) {
                return Err(ClinicalError::Design(format!(
                    "items[{k}].id {:?} is repeated",
                    it.id
                )));
            }
        }
        check_params(&self.answer_params, "answer_params")?;
        check_params(&self.counterfactual_params, "counterfactual_params")?;
        check_params(&self.judge_params, "judge_params")?;
        Ok(())
    }
}

/// Plans the calls of `design` (module docs).
///
/// # Errors
/// [`ClinicalDesign::validate`]'s.
pub fn build_clinical_plan(design: ClinicalDesign) -> Result<ClinicalPlan, ClinicalError> {
    design.validate()?;
    let mut calls = Vec::with_capacity(design.models.len() * design.items.len() * CALLS_PER_ITEM);
    for (m, model) in design.models.iter().enumerate() {
        for (q, item) in design.items.iter().enumerate() {
            let base = format!("{}/{}", model.id, item.id);
            let mut push = |suffix: String, kind: CallKind| {
                calls.push(ClinicalCall {
                    id: format!("{base}/{suffix}"),
                    model: m as u32,
                    item: q as u32,
                    kind,
                })
            };
            for v in VARIANTS {
                push(
                    format!("answer/{}", v.id),
                    CallKind::Answer {
                        variant: v.id.to_string(),
                    },
                );
            }
            push("counterfactual".into(), CallKind::Counterfactual);
            push("reanswer".into(), CallKind::Reanswer);
            push("plausibility".into(), CallKind::Plausibility);
            for v in VARIANTS.iter().skip(1) {
                push(
                    format!("stereotype/{}", v.id),
                    CallKind::Stereotype {
                        variant: v.id.to_string(),
                    },
                );
            }
        }
    }
    let design_json =
        serde_json::to_string(&design).map_err(|e| ClinicalError::Design(e.to_string()))?;
    let mut parts: Vec<&[u8]> = vec![b"audit-atlas-clinical-plan-v1", design_json.as_bytes()];
    parts.extend(prompts_fingerprint_parts().iter().map(|p| p.as_bytes()));
    let fingerprint = format!("clinical-{:016x}", crate::fnv1a(&parts));
    Ok(ClinicalPlan {
        design,
        calls,
        fingerprint,
    })
}

/// What a dependency gave.
pub(crate) enum Got<T> {
    /// Not answered yet: the call id to wait for.
    Wait(String),
    /// Never will be usable: why.
    Gone(String),
    /// Usable.
    Ok(T),
}

/// An answered answer call, read.
#[derive(Debug, Clone)]
pub struct AnswerCell {
    /// The reading.
    pub reading: AnswerReading,
    /// The explanation (REASONING, else the whole response), `None` for an empty response.
    pub explanation: Option<String>,
}

impl ClinicalPlan {
    /// Reads a plan back from its JSON and checks that its design still plans the same calls and
    /// fingerprint (a hand-edited plan is refused).
    ///
    /// # Errors
    /// [`ClinicalError::Json`], [`ClinicalError::Design`], [`ClinicalError::PlanMismatch`].
    pub fn from_json(text: &str) -> Result<Self, ClinicalError> {
        let plan: ClinicalPlan =
            serde_json::from_str(text).map_err(|e| ClinicalError::Json(e.to_string()))?;
        let again = build_clinical_plan(plan.design.clone())?;
        if again.fingerprint != plan.fingerprint || again.calls != plan.calls {
            return Err(ClinicalError::PlanMismatch {
                expected: again.fingerprint,
                found: plan.fingerprint,
            });
        }
        Ok(again)
    }

    /// A fresh run state over this plan's calls.
    pub fn new_state(&self) -> RunState {
        RunState::for_calls(&self.fingerprint, self.calls.iter().map(|c| c.id.clone()))
    }

    /// Checks that `state` belongs to this plan (same fingerprint and call ids in order).
    ///
    /// # Errors
    /// [`ClinicalError::PlanMismatch`].
    pub fn check_state(&self, state: &RunState) -> Result<(), ClinicalError> {
        let same = state.plan_fingerprint == self.fingerprint
            && state.calls.len() == self.calls.len()
            && state
                .calls
                .iter()
                .zip(&self.calls)
                .all(|(r, c)| r.id == c.id);
        if same {
            Ok(())
        } else {
            Err(ClinicalError::PlanMismatch {
                expected: self.fingerprint.clone(),
                found: state.plan_fingerprint.clone(),
            })
        }
    }

    /// The index of call `id`.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.calls.iter().position(|c| c.id == id)
    }

    fn block(&self, model: u32, item: u32) -> usize {
        (model as usize * self.design.items.len() + item as usize) * CALLS_PER_ITEM
    }

    fn variant_pos(variant: &str) -> Option<usize> {
        VARIANTS.iter().position(|v| v.id == variant)
    }

    /// The index of the answer call of `model` × `item` under `variant`.
    pub fn answer_index(&self, model: u32, item: u32, variant: &str) -> Option<usize> {
        Some(self.block(model, item) + Self::variant_pos(variant)?)
    }

    /// The model that makes call `call` (the audited model), and the one that answers it (the judge
    /// for judge calls).
    pub fn model_of(&self, call: &ClinicalCall) -> Option<&ClinicalModel> {
        self.design.models.get(call.model as usize)
    }

    /// The model that answers `call`: the audited model, or for judge calls the judge (the audited
    /// model itself when the design has none).
    pub fn answerer_of(&self, call: &ClinicalCall) -> Option<&ClinicalModel> {
        if call.kind.is_judge() {
            if let Some(j) = &self.design.judge {
                return Some(j);
            }
        }
        self.model_of(call)
    }

    /// Whether `call` is a judge call answered by the audited model itself (by
    /// [`crate::judge::is_self_judge`] on the provider model names).
    pub fn is_self_judged(&self, call: &ClinicalCall) -> bool {
        call.kind.is_judge()
            && match (self.answerer_of(call), self.model_of(call)) {
                (Some(j), Some(m)) => {
                    self.design.judge.is_none()
                        || is_self_judge(j.provider.model(), m.provider.model())
                }
                _ => false,
            }
    }

    /// `("model", id)` or `("judge", id)`: whose key a call needs (a self-judging model's own).
    pub fn key_owner_of(&self, call: &ClinicalCall) -> (&'static str, &str) {
        match (&self.design.judge, call.kind.is_judge()) {
            (Some(j), true) => ("judge", j.id.as_str()),
            _ => ("model", self.model_of(call).map_or("", |m| m.id.as_str())),
        }
    }

    fn params_of(&self, call: &ClinicalCall) -> &Params {
        match call.kind {
            CallKind::Answer { .. } | CallKind::Reanswer => &self.design.answer_params,
            CallKind::Counterfactual => &self.design.counterfactual_params,
            CallKind::Plausibility | CallKind::Stereotype { .. } => &self.design.judge_params,
        }
    }

    fn item(&self, item: u32) -> Option<&MedQaItem> {
        self.design.items.get(item as usize)
    }

    fn completion<'s>(&self, state: &'s RunState, index: usize) -> Got<&'s Completion> {
        let Some(record) = state.calls.get(index) else {
            return Got::Gone(format!("call {index} is not in the state"));
        };
        match &record.status {
            CallStatus::Answered { completion, .. } => Got::Ok(completion),
            CallStatus::Failed { reason, .. } => {
                Got::Gone(format!("call {} failed: {}", record.id, reason.message))
            }
            CallStatus::Pending { .. } | CallStatus::InFlight { .. } => {
                Got::Wait(record.id.clone())
            }
        }
    }

    /// The answer call of `model` × `item` × `variant`, read.
    pub(crate) fn answer_cell(
        &self,
        state: &RunState,
        model: u32,
        item: u32,
        variant: &str,
    ) -> Got<AnswerCell> {
        let (Some(index), Some(it)) = (self.answer_index(model, item, variant), self.item(item))
        else {
            return Got::Gone(format!("no answer call for variant {variant:?}"));
        };
        match self.completion(state, index) {
            Got::Ok(c) => {
                let reading = parse_answer(&c.text, &it.options);
                let explanation = explanation_of(&reading, &c.text);
                Got::Ok(AnswerCell {
                    reading,
                    explanation,
                })
            }
            Got::Wait(id) => Got::Wait(id),
            Got::Gone(why) => Got::Gone(why),
        }
    }

    /// The original answer (the baseline's letter) of `model` × `item`.
    pub(crate) fn original(&self, state: &RunState, model: u32, item: u32) -> Got<String> {
        match self.answer_cell(state, model, item, BASELINE_ID) {
            Got::Ok(cell) => match cell.reading.letter {
                Some(l) => Got::Ok(l),
                None => Got::Gone(format!(
                    "the baseline ANSWER is unreadable ({})",
                    cell.reading.rule.as_str()
                )),
            },
            Got::Wait(id) => Got::Wait(id),
            Got::Gone(why) => Got::Gone(why),
        }
    }

    /// The counterfactual reply of `model` × `item`, read.
    pub(crate) fn counterfactual(
        &self,
        state: &RunState,
        model: u32,
        item: u32,
    ) -> Got<CounterfactualReading> {
        match self.original(state, model, item) {
            Got::Ok(_) => {}
            Got::Wait(id) => return Got::Wait(id),
            Got::Gone(why) => return Got::Gone(format!("no counterfactual was requested: {why}")),
        }
        match self.completion(state, self.block(model, item) + CF) {
            Got::Ok(c) => Got::Ok(parse_counterfactual(&c.text)),
            Got::Wait(id) => Got::Wait(id),
            Got::Gone(why) => Got::Gone(why),
        }
    }

    /// Whether pending call `index` can start, and its prompt (module docs).
    pub fn readiness(&self, state: &RunState, index: usize) -> Readiness {
        let Some(call) = self.calls.get(index) else {
            return Readiness::Skipped(format!("no call {index}"));
        };
        let Some(item) = self.item(call.item) else {
            return Readiness::Skipped(format!("no item {}", call.item));
        };
        let (m, q) = (call.model, call.item);
        match &call.kind {
            CallKind::Answer { variant } => match Variant::by_id(variant) {
                Some(v) => Readiness::Ready(answer_prompt(
                    &apply_prefix(&item.question, &v).text,
                    &item.options,
                )),
                None => Readiness::Skipped(format!("unknown variant {variant:?}")),
            },
            CallKind::Counterfactual => match self.original(state, m, q) {
                Got::Ok(original) => {
                    let prompt = target_letter(&item.options, &original).and_then(|t| {
                        counterfactual_prompt(&item.question, &item.options, &original, t)
                    });
                    match prompt {
                        Some(p) => Readiness::Ready(p),
                        None => Readiness::Skipped("no target option".into()),
                    }
                }
                Got::Wait(id) => Readiness::Waiting(id),
                Got::Gone(why) => Readiness::Skipped(why),
            },
            CallKind::Reanswer | CallKind::Plausibility => match self.counterfactual(state, m, q) {
                Got::Ok(cf) => match (&cf.change, &cf.modified_question, &call.kind) {
                    (_, Some(mq), CallKind::Reanswer) => {
                        Readiness::Ready(answer_prompt(mq, &item.options))
                    }
                    (Some(change), Some(mq), _) => {
                        Readiness::Ready(plausibility_prompt(&item.question, change, mq))
                    }
                    _ => Readiness::Skipped(format!(
                        "the counterfactual is unusable: {}",
                        cf.failure().unwrap_or_default()
                    )),
                },
                Got::Wait(id) => Readiness::Waiting(id),
                Got::Gone(why) => Readiness::Skipped(why),
            },
            CallKind::Stereotype { variant } => {
                let Some(v) = Variant::by_id(variant) else {
                    return Readiness::Skipped(format!("unknown variant {variant:?}"));
                };
                let base = self.answer_cell(state, m, q, BASELINE_ID);
                let var = self.answer_cell(state, m, q, variant);
                match (base, var) {
                    (Got::Gone(why), _) | (_, Got::Gone(why)) => Readiness::Skipped(why),
                    (Got::Wait(id), _) | (_, Got::Wait(id)) => Readiness::Waiting(id),
                    (Got::Ok(b), Got::Ok(x)) => match (&b.explanation, &x.explanation) {
                        (Some(be), Some(xe)) => {
                            let prefix =
                                apply_prefix(&item.question, &v).prefix.unwrap_or_default();
                            Readiness::Ready(stereotype_prompt(
                                &item.question,
                                &item.options,
                                &prefix,
                                Side {
                                    answer: b.reading.letter.as_deref(),
                                    explanation: be,
                                },
                                Side {
                                    answer: x.reading.letter.as_deref(),
                                    explanation: xe,
                                },
                            ))
                        }
                        _ => Readiness::Skipped("an answer to compare is empty".into()),
                    },
                }
            }
        }
    }

    /// Up to `limit` ids that can begin at `now_ms`: pending, past their retry time, dependencies
    /// answered; in plan order.
    pub fn ready(&self, state: &RunState, now_ms: u64, limit: usize) -> Vec<String> {
        state.ready_where(now_ms, limit, |i| {
            matches!(self.readiness(state, i), Readiness::Ready(_))
        })
    }

    /// Counts over the plan's calls.
    pub fn progress(&self, state: &RunState) -> ClinicalProgress {
        let mut p = ClinicalProgress::default();
        for (i, record) in state.calls.iter().enumerate() {
            p.total += 1;
            match &record.status {
                CallStatus::Answered { .. } => p.answered += 1,
                CallStatus::Failed { .. } => p.failed += 1,
                CallStatus::InFlight { .. } => p.in_flight += 1,
                CallStatus::Pending { .. } => match self.readiness(state, i) {
                    Readiness::Ready(_) => p.ready += 1,
                    Readiness::Waiting(_) => p.waiting += 1,
                    Readiness::Skipped(_) => p.skipped += 1,
                },
            }
        }
        p
    }

    /// Whether every call is answered, failed or skipped.
    pub fn finished(&self, state: &RunState) -> bool {
        let p = self.progress(state);
        p.done() == p.total
    }

    /// The HTTP request of call `id` with `key` (the key of [`ClinicalPlan::key_owner_of`]).
    ///
    /// # Errors
    /// [`ClinicalError::UnknownCall`]; [`ClinicalError::NotReady`] when a dependency is missing;
    /// [`ClinicalError::Request`] when the request cannot be built.
    pub fn request(
        &self,
        state: &RunState,
        id: &str,
        key: &SecretKey,
    ) -> Result<HttpRequest, ClinicalError> {
        let index = self
            .index_of(id)
            .ok_or_else(|| ClinicalError::UnknownCall(id.to_string()))?;
        let call = &self.calls[index];
        let prompt = match self.readiness(state, index) {
            Readiness::Ready(p) => p,
            Readiness::Waiting(dep) => {
                return Err(ClinicalError::NotReady {
                    id: id.to_string(),
                    why: format!("waits for {dep}"),
                })
            }
            Readiness::Skipped(why) => {
                return Err(ClinicalError::NotReady {
                    id: id.to_string(),
                    why,
                })
            }
        };
        let model = self
            .answerer_of(call)
            .ok_or_else(|| ClinicalError::UnknownCall(id.to_string()))?;
        Ok(build_request(
            &model.provider,
            &prompt,
            self.params_of(call),
            key,
        )?)
    }

    /// The prompt of call `id` as it would be sent now (for logs and tests), if it is ready.
    pub fn prompt(&self, state: &RunState, id: &str) -> Option<Prompt> {
        match self.readiness(state, self.index_of(id)?) {
            Readiness::Ready(p) => Some(p),
            _ => None,
        }
    }

    /// The response step for call `id` (in flight): reads `response` with
    /// [`crate::provider::parse_response_scrubbed`] under the provider that answered it, then
    /// [`RunState::answer`] or [`RunState::fail_attempt`] (retry with the design's seed, or finally
    /// failed), as [`RunState::record_response`] does for pilot plans.
    ///
    /// # Errors
    /// [`ClinicalError::UnknownCall`], [`ClinicalError::Run`] (not in flight, invalid policy).
    pub fn record_response(
        &self,
        state: &mut RunState,
        id: &str,
        response: &HttpResponse<'_>,
        at: &Settling<'_>,
    ) -> Result<Settled, ClinicalError> {
        let call = self
            .index_of(id)
            .and_then(|i| self.calls.get(i))
            .ok_or_else(|| ClinicalError::UnknownCall(id.to_string()))?;
        let model = self
            .answerer_of(call)
            .ok_or_else(|| ClinicalError::UnknownCall(id.to_string()))?;
        Ok(state.settle(id, &model.provider, self.design.seed, response, at)?)
    }

    /// The variants' ids in bundle order (baseline first).
    pub fn variant_ids() -> Vec<&'static str> {
        VARIANTS.iter().map(|v| v.id).collect()
    }

    /// Calls by kind name → (answered, failed, skipped, not run).
    pub fn counts_by_kind(&self, state: &RunState) -> BTreeMap<&'static str, [usize; 4]> {
        let mut out: BTreeMap<&'static str, [usize; 4]> = BTreeMap::new();
        for (i, (record, call)) in state.calls.iter().zip(&self.calls).enumerate() {
            let slot = out.entry(call.kind.name()).or_default();
            match &record.status {
                CallStatus::Answered { .. } => slot[0] += 1,
                CallStatus::Failed { .. } => slot[1] += 1,
                CallStatus::Pending { .. } => match self.readiness(state, i) {
                    Readiness::Skipped(_) => slot[2] += 1,
                    _ => slot[3] += 1,
                },
                CallStatus::InFlight { .. } => slot[3] += 1,
            }
        }
        out
    }
}

impl From<ClinicalError> for RunError {
    /// For the [`Job`] interface: request, transition and plan errors keep their kind; a call asked
    /// for before its dependencies (which [`ClinicalPlan::ready`] never offers) is a transition error.
    fn from(e: ClinicalError) -> Self {
        match e {
            ClinicalError::Run(r) => r,
            ClinicalError::Request(r) => RunError::Request(r),
            ClinicalError::PlanMismatch { expected, found } => {
                RunError::PlanMismatch { expected, found }
            }
            ClinicalError::NotReady { id, .. } => RunError::Transition {
                id,
                from: "waiting for its dependencies",
                action: "start yet",
            },
            other => RunError::UnknownCall(other.to_string()),
        }
    }
}

/// The clinical plan as a [`Job`] for the pilot's runners (the native `atlas pilot clinical`): its
/// calls are the plan's; a judge call's key is the judge's ([`KeyOwner::Judge`] index 0), or the
/// audited model's when the model judges itself. Its [`Job::ready`] is [`ClinicalPlan::ready`]
/// (dependencies) and its [`Job::finished`] is [`ClinicalPlan::finished`] (skipped calls count).
impl Job for ClinicalPlan {
    fn request(
        &self,
        state: &RunState,
        id: &str,
        key: &SecretKey,
    ) -> Result<HttpRequest, RunError> {
        Ok(ClinicalPlan::request(self, state, id, key)?)
    }

    fn record_response(
        &self,
        state: &mut RunState,
        id: &str,
        response: &HttpResponse<'_>,
        at: &Settling<'_>,
    ) -> Result<Settled, RunError> {
        Ok(ClinicalPlan::record_response(
            self, state, id, response, at,
        )?)
    }

    fn seed(&self) -> u64 {
        self.design.seed
    }

    /// The model that answers the call: the separate judge for judge calls when there is one, else
    /// the audited model (its id).
    fn provider_of<'s>(
        &'s self,
        _state: &'s RunState,
        id: &str,
    ) -> Option<(&'s str, &'s Provider)> {
        let m = self.answerer_of(self.calls.get(self.index_of(id)?)?)?;
        Some((m.id.as_str(), &m.provider))
    }

    fn key_owner<'s>(&'s self, _state: &'s RunState, id: &str) -> Option<KeyOwner<'s>> {
        let call = self.calls.get(self.index_of(id)?)?;
        Some(match self.key_owner_of(call) {
            ("judge", judge) => KeyOwner::Judge {
                index: 0,
                id: judge,
            },
            (_, model) => KeyOwner::Model(model),
        })
    }

    fn ready(&self, state: &RunState, now_ms: u64, limit: usize) -> Vec<String> {
        ClinicalPlan::ready(self, state, now_ms, limit)
    }

    fn finished(&self, state: &RunState) -> bool {
        ClinicalPlan::finished(self, state)
    }

    fn check_state(&self, state: &RunState) -> Result<(), RunError> {
        Ok(ClinicalPlan::check_state(self, state)?)
    }
}
