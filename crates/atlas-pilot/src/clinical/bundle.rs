//! A clinical run as a format-v1 bundle with the `clinical` object (`docs/clinical.md`), and its counts.
//!
//! * Facets (axes in this order): `model` (id, `label` = the provider's model name, `provider`,
//!   `base_url`), `statement` (label "MedQA question": `text`, `options`, `answer`, `step`,
//!   `difficulty` null, `source_id`), `condition` (label "Demographic variant": the baseline and the six
//!   prefixes with `label`, `has_selection` true, `in_reference` false for the baseline, `race`, `sex`,
//!   `prefix` and `sweep` "demographic prefix" for the prefixes), `repeat` (label "Run", level `1`).
//! * Selection per cell = the ANSWER letter read by [`crate::clinical::parse::parse_answer`] (`raw` the
//!   letter, or `""` with `parser_failure` / `refusal`), `obtained` as read; **evidence = answer change**:
//!   1 when the letter differs from the same model × question baseline letter, 0 when equal (the
//!   baseline cell itself 0), null when either is unreadable. A failed or not-run answer call is `-`.
//! * `texts.rationale`: the explanation of every answered cell with text (REASONING, else the whole
//!   response).
//! * `clinical`: `protocol` `seed-001`, `baseline` `baseline`; `prefix_conflicts` (per question ×
//!   prefix, [`crate::clinical::prefix`]); one `counterfactuals` record per model × question, classified
//!   by [`crate::clinical::cfv::classify`]; one `stereotype` record per answered stereotype-judge call
//!   (found null when STEREOTYPE_FOUND is unreadable; a failed or skipped judge call has none and is
//!   counted in the notes); `directions` for every prefix cell whose readable answer differs from the
//!   readable baseline answer — the stereotype judge's DIRECTION, `unknown` when it gave none or did not
//!   run. `embeddings` is left to the caller (the native embedder, `atlas-embed`), over
//!   [`ClinicalBundle::explanations`].

use std::collections::BTreeMap;

use atlas_core::bundle::{
    BundleFile, Facet, Level, Obtained, Responses, SelectionColumn, SelectionValue, TextCells,
    TextField, Texts, CODE_ALPHABET, FORMAT_NAME, FORMAT_VERSION, NO_RESPONSE,
};
use atlas_core::clinical::{
    CfvOutcome, Clinical, Counterfactual, Direction, DirectionRecord, Plausibility, PrefixConflict,
    StereotypeJudgement,
};
use atlas_core::Audit;
use serde::Serialize;
use serde_json::{json, Value};

use crate::clinical::cfv::{classify, CfvInput};
use crate::clinical::parse::{parse_answer, parse_plausibility, parse_stereotype};
use crate::clinical::prefix::{apply_prefix, BASELINE_ID, VARIANTS};
use crate::clinical::prompts::target_letter;
use crate::clinical::protocol::{
    ClinicalPlan, Got, Readiness, CALLS_PER_ITEM, CF, PLAUSIBILITY, PROTOCOL, REANSWER, STEREOTYPE,
};
use crate::clinical::ClinicalError;
use crate::normalise::Normalisation;
use crate::run::{model_attributes, BundleInfo, CallStatus, RunState, TOOL};

/// The bundle and the texts to embed.
#[derive(Debug, Clone)]
pub struct ClinicalBundle {
    /// The bundle, validated.
    pub file: BundleFile,
    /// `(cell, explanation)` of every cell with an explanation, cells increasing — the same texts as
    /// `texts.rationale`, for `clinical.embeddings`.
    pub explanations: Vec<(u64, String)>,
}

/// Counts of a clinical run (the bundle's notes and `atlas pilot clinical-summary`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClinicalSummary {
    /// Planned calls.
    pub calls: usize,
    /// By call kind: `[answered, failed, skipped, not run]`.
    pub by_kind: BTreeMap<String, [usize; 4]>,
    /// Finally failed calls by failure kind.
    pub failed_by_reason: BTreeMap<String, usize>,
    /// Attempts beyond the first, over settled calls.
    pub retries: u64,
    /// Per prompt type: `[answered, required fields missing]` (answer and re-answer: no readable
    /// ANSWER; counterfactual: CHANGE or MODIFIED_QUESTION missing; plausibility: no SCORE 1–5;
    /// stereotype: no STEREOTYPE_FOUND).
    pub parse_failures: BTreeMap<String, [usize; 2]>,
    /// Answer calls (the seven variants) by how the ANSWER was obtained.
    pub answer_obtained: BTreeMap<String, usize>,
    /// Answer calls by the rule that read the ANSWER.
    pub answer_rules: BTreeMap<String, usize>,
    /// Readings that needed the normaliser (`crate::normalise`), by `prompt type/normalisation`
    /// (`answer/markup`, `stereotype/invisible_characters`, …).
    pub normalised: BTreeMap<String, usize>,
    /// Counterfactual attempts by outcome.
    pub cfv_outcomes: BTreeMap<String, usize>,
    /// Stereotype records: `found` true / false / null.
    pub stereotype_found: BTreeMap<String, usize>,
    /// Prefix cells whose readable answer differs from the readable baseline, and comparisons with
    /// both readable.
    pub answer_changes: [usize; 2],
    /// Prefix conflicts by kind.
    pub prefix_conflicts: BTreeMap<String, usize>,
    /// Whether the judge calls were answered by the audited model itself.
    pub self_judged: bool,
}

fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

fn level(id: &str, attrs: Vec<(&str, Value)>) -> Level {
    Level {
        id: id.to_string(),
        attributes: attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
    }
}

fn obtained_name(o: Obtained) -> &'static str {
    match o {
        Obtained::Regex => "regex",
        Obtained::Fallback => "fallback",
        Obtained::ParserFailure => "parser_failure",
        Obtained::Refusal => "refusal",
    }
}

/// The counts of a run (see [`ClinicalSummary`]).
///
/// # Errors
/// [`ClinicalError::PlanMismatch`] for a state of another plan.
pub fn summarize(plan: &ClinicalPlan, state: &RunState) -> Result<ClinicalSummary, ClinicalError> {
    Ok(build(plan, state, None)?.1)
}

/// The run as a bundle (module docs), validated by [`Audit::from_file`].
///
/// # Errors
/// [`ClinicalError::PlanMismatch`] for a state of another plan; [`ClinicalError::TooManySelectionValues`];
/// [`ClinicalError::Bundle`] when the result does not validate (e.g. an empty `info.id`).
pub fn to_clinical_bundle(
    plan: &ClinicalPlan,
    state: &RunState,
    info: &BundleInfo,
) -> Result<ClinicalBundle, ClinicalError> {
    let (bundle, _) = build(plan, state, Some(info))?;
    bundle.ok_or_else(|| ClinicalError::Design("no bundle info".into()))
}

#[allow(clippy::too_many_lines)]
fn build(
    plan: &ClinicalPlan,
    state: &RunState,
    info: Option<&BundleInfo>,
) -> Result<(Option<ClinicalBundle>, ClinicalSummary), ClinicalError> {
    plan.check_state(state)?;
    let d = &plan.design;
    let (m_n, q_n, v_n) = (d.models.len(), d.items.len(), VARIANTS.len());
    let cells = m_n * q_n * v_n;
    let cell_of = |m: usize, q: usize, v: usize| ((m * q_n + q) * v_n + v) as u64;

    let mut sum = ClinicalSummary {
        calls: plan.calls.len(),
        self_judged: plan.calls.iter().any(|c| plan.is_self_judged(c)),
        ..ClinicalSummary::default()
    };
    for (k, counts) in plan.counts_by_kind(state) {
        sum.by_kind.insert(k.to_string(), counts);
    }
    for record in &state.calls {
        match &record.status {
            CallStatus::Failed { reason, attempts } => {
                *sum.failed_by_reason
                    .entry(reason.kind.as_str().to_string())
                    .or_default() += 1;
                sum.retries += u64::from(attempts.saturating_sub(1));
            }
            CallStatus::Answered { attempts, .. } => {
                sum.retries += u64::from(attempts.saturating_sub(1));
            }
            _ => {}
        }
    }
    let mut parse_failures: BTreeMap<String, [usize; 2]> = BTreeMap::new();
    let mut normalised: BTreeMap<String, usize> = BTreeMap::new();
    let mut count_parse = |kind: &str, failed: bool, needed: &[Normalisation]| {
        let slot = parse_failures.entry(kind.to_string()).or_default();
        slot[0] += 1;
        if failed {
            slot[1] += 1;
        }
        for n in needed {
            *normalised
                .entry(format!("{kind}/{}", n.as_str()))
                .or_default() += 1;
        }
    };

    let mut codes = vec![NO_RESPONSE; cells];
    let mut values: Vec<SelectionValue> = Vec::new();
    let mut explanations: Vec<(u64, String)> = Vec::new();
    let mut clinical = Clinical::new(PROTOCOL, Some(BASELINE_ID));

    for item in &d.items {
        for v in VARIANTS.iter().skip(1) {
            if let Some(c) = apply_prefix(&item.question, v).conflict {
                *sum.prefix_conflicts
                    .entry(
                        serde_json::to_value(c.kind)
                            .ok()
                            .and_then(|x| x.as_str().map(str::to_string))
                            .unwrap_or_default(),
                    )
                    .or_default() += 1;
                clinical.prefix_conflicts.push(PrefixConflict {
                    statement: item.id.clone(),
                    condition: v.id.to_string(),
                    kind: c.kind,
                    detail: Some(c.detail),
                });
            }
        }
    }

    for (m, model) in d.models.iter().enumerate() {
        for (q, item) in d.items.iter().enumerate() {
            let (mu, qu) = (m as u32, q as u32);
            let block = (m * q_n + q) * CALLS_PER_ITEM;
            let judge_name = plan
                .calls
                .get(block + CALLS_PER_ITEM - 1)
                .and_then(|c| plan.answerer_of(c))
                .map(|j| j.provider.model().to_string());
            // The seven answer cells.
            let mut letters: Vec<Option<String>> = Vec::with_capacity(v_n);
            for (vi, v) in VARIANTS.iter().enumerate() {
                let cell = cell_of(m, q, vi);
                let got = plan.answer_cell(state, mu, qu, v.id);
                let Got::Ok(a) = got else {
                    letters.push(None);
                    continue;
                };
                count_parse("answer", a.reading.letter.is_none(), &a.reading.normalised);
                *sum.answer_obtained
                    .entry(obtained_name(a.reading.obtained).to_string())
                    .or_default() += 1;
                *sum.answer_rules
                    .entry(a.reading.rule.as_str().to_string())
                    .or_default() += 1;
                letters.push(a.reading.letter.clone());
                let evidence = match (&a.reading.letter, letters.first().cloned().flatten()) {
                    (Some(l), Some(b)) => Some(u8::from(*l != b)),
                    _ => None,
                };
                let value = SelectionValue {
                    raw: a.reading.letter.clone().unwrap_or_default(),
                    evidence: if a.reading.letter.is_some() {
                        evidence
                    } else {
                        None
                    },
                    obtained: a.reading.obtained,
                };
                let k = match values.iter().position(|x| *x == value) {
                    Some(k) => k,
                    None => {
                        values.push(value);
                        values.len() - 1
                    }
                };
                let code = CODE_ALPHABET
                    .get(k)
                    .ok_or(ClinicalError::TooManySelectionValues)?;
                if let Some(slot) = codes.get_mut(cell as usize) {
                    *slot = char::from(*code);
                }
                if let Some(e) = a.explanation {
                    explanations.push((cell, e));
                }
            }
            let base_letter = letters.first().cloned().flatten();

            // Stereotype judgements and directions.
            for (vi, v) in VARIANTS.iter().enumerate().skip(1) {
                let index = block + STEREOTYPE - 1 + vi;
                let reading = match state.calls.get(index).map(|r| &r.status) {
                    Some(CallStatus::Answered { completion, .. }) => {
                        let r = parse_stereotype(&completion.text);
                        count_parse("stereotype", r.found.is_none(), &r.normalised);
                        *sum.stereotype_found
                            .entry(match r.found {
                                Some(true) => "true".into(),
                                Some(false) => "false".into(),
                                None => "null".into(),
                            })
                            .or_default() += 1;
                        clinical.stereotype.push(StereotypeJudgement {
                            model: model.id.clone(),
                            statement: item.id.clone(),
                            condition: v.id.to_string(),
                            repeat: Some("1".into()),
                            found: r.found,
                            severity: r.severity,
                            category: r.category.clone(),
                            description: r.description.clone(),
                            judge: judge_name.clone(),
                        });
                        Some(r)
                    }
                    _ => None,
                };
                if let (Some(b), Some(Some(x))) = (&base_letter, letters.get(vi)) {
                    sum.answer_changes[1] += 1;
                    if b != x {
                        sum.answer_changes[0] += 1;
                        clinical.directions.push(DirectionRecord {
                            model: model.id.clone(),
                            statement: item.id.clone(),
                            condition: v.id.to_string(),
                            repeat: Some("1".into()),
                            direction: reading
                                .and_then(|r| r.direction)
                                .unwrap_or(Direction::Unknown),
                        });
                    }
                }
            }

            // The counterfactual attempt.
            let original = plan.original(state, mu, qu);
            let original_letter = match &original {
                Got::Ok(l) => Some(l.clone()),
                _ => None,
            };
            let target = original_letter
                .as_deref()
                .and_then(|o| target_letter(&item.options, o))
                .map(str::to_string);
            let status_of = |offset: usize| state.calls.get(block + offset).map(|r| &r.status);
            let why_not = |offset: usize| -> String {
                if let Some(CallStatus::Failed { reason, .. }) = status_of(offset) {
                    return format!("the call failed: {}", reason.message);
                }
                match plan.readiness(state, block + offset) {
                    Readiness::Skipped(why) => format!("not requested: {why}"),
                    _ => "not run".to_string(),
                }
            };
            let cf = match status_of(CF) {
                Some(CallStatus::Answered { completion, .. }) => {
                    let r = crate::clinical::parse::parse_counterfactual(&completion.text);
                    count_parse("counterfactual", r.failure().is_some(), &r.normalised);
                    Ok(r)
                }
                _ => Err(why_not(CF)),
            };
            let reanswer: Result<String, String> = match status_of(REANSWER) {
                Some(CallStatus::Answered { completion, .. }) => {
                    let r = parse_answer(&completion.text, &item.options);
                    count_parse("reanswer", r.letter.is_none(), &r.normalised);
                    r.letter.ok_or_else(|| {
                        format!("the re-answer's ANSWER is unreadable ({})", r.rule.as_str())
                    })
                }
                _ => Err(why_not(REANSWER)),
            };
            let plaus = match status_of(PLAUSIBILITY) {
                Some(CallStatus::Answered { completion, .. }) => {
                    let r = parse_plausibility(&completion.text);
                    count_parse("plausibility", r.score.is_none(), &r.normalised);
                    Some(r)
                }
                _ => None,
            };
            let plaus_score: Result<u8, String> = match &plaus {
                Some(r) => r.score.ok_or_else(|| {
                    format!("the judge's {}", r.failure.clone().unwrap_or_default())
                }),
                None => Err(why_not(PLAUSIBILITY)),
            };
            let original_why = match &original {
                Got::Gone(why) => why.clone(),
                Got::Wait(id) => format!("{id} not run"),
                Got::Ok(_) => String::new(),
            };
            let (outcome, note) = classify(&CfvInput {
                question: &item.question,
                options: &item.options,
                original: original_letter.as_deref().ok_or(original_why.as_str()),
                target: target.as_deref(),
                counterfactual: cf.as_ref().map_err(String::as_str),
                reanswer: reanswer.as_deref().map_err(String::as_str),
                plausibility: plaus_score.as_ref().copied().map_err(String::as_str),
            });
            *sum.cfv_outcomes
                .entry(outcome.as_str().to_string())
                .or_default() += 1;
            let cf_ok = cf.as_ref().ok();
            clinical.counterfactuals.push(Counterfactual {
                model: model.id.clone(),
                statement: item.id.clone(),
                repeat: Some("1".into()),
                original: original_letter.clone(),
                target: target.clone(),
                change: cf_ok.and_then(|c| c.change.clone()),
                modified_question: cf_ok.and_then(|c| c.modified_question.clone()),
                explanation: cf_ok.and_then(|c| c.explanation.clone()),
                reanswer: reanswer.ok(),
                plausibility: plaus.as_ref().and_then(|r| {
                    r.score.map(|score| Plausibility {
                        score,
                        justification: r.justification.clone(),
                        judge: judge_name.clone(),
                    })
                }),
                outcome,
                note: Some(note),
            });
        }
    }
    sum.parse_failures = parse_failures;
    sum.normalised = normalised;
    // Every outcome named, zero or not, so the notes list the whole taxonomy.
    for o in CfvOutcome::ALL {
        sum.cfv_outcomes.entry(o.as_str().to_string()).or_default();
    }

    let Some(info) = info else {
        return Ok((None, sum));
    };

    let fmt = |m: &BTreeMap<String, usize>| {
        if m.is_empty() {
            "none".to_string()
        } else {
            m.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let mut notes = Vec::new();
    if let Some(user) = info.notes.as_deref().filter(|n| !n.trim().is_empty()) {
        notes.push(user.trim().to_string());
    }
    let selection = d
        .selection
        .as_ref()
        .map(|s| {
            format!(
                " Items: {} of the {} of {}, drawn with seed {} (atlas-pilot clinical::medqa::select_items), in run order.",
                s.indices.len(),
                s.available,
                s.source,
                s.seed
            )
        })
        .unwrap_or_default();
    notes.push(format!(
        "Clinical protocol (seed 001 §3.3–3.5) run by {TOOL}: {} model(s) × {} question(s) × (7 answers + counterfactual + re-answer + plausibility judge + 6 stereotype judges) = {} planned calls; one run per question; answers at temperature {} with at most {} tokens, counterfactuals at temperature {} with at most {} tokens, judges at temperature {} with at most {} tokens; retry seed {}.{selection} Calls by kind [answered, failed, skipped, not run]: {}.",
        m_n,
        q_n,
        plan.calls.len(),
        d.answer_params.temperature,
        d.answer_params.max_tokens,
        d.counterfactual_params.temperature,
        d.counterfactual_params.max_tokens,
        d.judge_params.temperature,
        d.judge_params.max_tokens,
        d.seed,
        sum.by_kind
            .iter()
            .map(|(k, v)| format!("{k} {v:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    notes.push(format!(
        "Required fields missing, per prompt type [answered, missing]: {}. ANSWER obtained (answer calls): {}; rules: {}. Readings that needed normalising (docs/pilot.md: math / LaTeX markup, invisible characters), by prompt type: {}. Evidence = answer change against the same model × question baseline (null when either answer is unreadable).",
        sum.parse_failures
            .iter()
            .map(|(k, v)| format!("{k} {v:?}"))
            .collect::<Vec<_>>()
            .join(", "),
        fmt(&sum.answer_obtained),
        fmt(&sum.answer_rules),
        fmt(&sum.normalised)
    ));
    notes.push(format!(
        "CFV outcomes (docs/clinical.md, Pilot protocol): {}. Stereotype judgements found: {}. Answer changes: {} of {} comparisons with both answers readable. Prefix conflicts: {}.",
        fmt(&sum.cfv_outcomes),
        fmt(&sum.stereotype_found),
        sum.answer_changes[0],
        sum.answer_changes[1],
        fmt(&sum.prefix_conflicts)
    ));
    notes.push(match &d.judge {
        None => "Judges: every plausibility and stereotype judgement was made by the audited model itself (a model judging its own outputs).".to_string(),
        Some(j) if sum.self_judged => format!(
            "Judges: {} ({}), the same model as an audited one (a model judging itself).",
            j.id,
            j.provider.model()
        ),
        Some(j) => format!("Judges: {} ({}).", j.id, j.provider.model()),
    });

    let condition_levels = VARIANTS
        .iter()
        .map(|v| {
            let mut attrs = vec![
                ("label", s(&v.label())),
                ("has_selection", Value::Bool(true)),
                ("in_reference", Value::Bool(!v.is_baseline())),
                ("race", v.race.map_or(Value::Null, s)),
                ("sex", v.sex.map_or(Value::Null, s)),
                (
                    "prefix",
                    v.prefix_template().map_or(Value::Null, Value::String),
                ),
            ];
            if !v.is_baseline() {
                attrs.push(("sweep", s("demographic prefix")));
            }
            level(v.id, attrs)
        })
        .collect();
    let (text_cells, text_values): (Vec<u64>, Vec<String>) = explanations.iter().cloned().unzip();
    let file = BundleFile {
        schema: None,
        format: FORMAT_NAME.to_string(),
        version: FORMAT_VERSION,
        metadata: info.metadata(&notes),
        facets: vec![
            Facet {
                id: "model".into(),
                label: Some("Model".into()),
                levels: d
                    .models
                    .iter()
                    .map(|m| level(&m.id, model_attributes(&m.provider).to_vec()))
                    .collect(),
            },
            Facet {
                id: "statement".into(),
                label: Some("MedQA question".into()),
                levels: d
                    .items
                    .iter()
                    .map(|it| {
                        level(
                            &it.id,
                            vec![
                                ("text", s(&it.question)),
                                ("options", json!(it.options)),
                                ("answer", it.answer.as_deref().map_or(Value::Null, s)),
                                ("step", it.step.as_deref().map_or(Value::Null, s)),
                                ("difficulty", Value::Null),
                                ("source_id", s(&it.source_id)),
                            ],
                        )
                    })
                    .collect(),
            },
            Facet {
                id: "condition".into(),
                label: Some("Demographic variant".into()),
                levels: condition_levels,
            },
            Facet {
                id: "repeat".into(),
                label: Some("Run".into()),
                levels: vec![level("1", Vec::new())],
            },
        ],
        responses: Responses {
            axes: ["model", "statement", "condition", "repeat"]
                .into_iter()
                .map(str::to_string)
                .collect(),
            selection: SelectionColumn {
                direction: None,
                values,
                codes: codes.into_iter().collect(),
            },
            judges: Vec::new(),
            human: Vec::new(),
            likelihood: None,
        },
        texts: (!text_cells.is_empty()).then(|| Texts {
            rationale: Some(TextField {
                description: Some(
                    "The explanation of each answered cell: the REASONING field, else the whole response. Model output: render as text."
                        .into(),
                ),
                shards: Vec::new(),
                inline: Some(TextCells {
                    cells: text_cells,
                    texts: text_values,
                }),
            }),
        }),
        clinical: Some(clinical),
    };
    Audit::from_file(file.clone())?;
    Ok((Some(ClinicalBundle { file, explanations }), sum))
}

/// Default descriptive fields of a clinical pilot bundle (CC0-1.0; MedQA content is the user's to
/// attribute: set `source` and `license` for the items used).
pub fn clinical_bundle_info(id: impl Into<String>, title: impl Into<String>) -> BundleInfo {
    let mut info = BundleInfo::new(id, title);
    info.description = "A clinical perturbation audit run with Audit Atlas (seed 001 protocol): MedQA questions answered without and with six demographic prefixes, a counterfactual request per question, and plausibility and stereotype judges. Selection = the ANSWER letter; evidence = answer change against the baseline.".into();
    info.content_warning = Some(
        "Contains medical exam vignettes with demographic descriptions and language-model explanations that may contain stereotypes about race and sex."
            .into(),
    );
    info
}
